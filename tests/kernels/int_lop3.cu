// int_lop3.cu — lop3.b32 for all 256 immLut values (PTX ISA 9.7.8.6).
// Signature: extern "C" __global__ void int_lop3(const unsigned* a, const unsigned* b, const unsigned* c,
//                                                unsigned* out, unsigned n)
//   out[lut * n + i] = lop3.b32(a[i], b[i], c[i], lut) for lut = 0..255.  Launch: block (128,1,1), grid ceil(n/128).
template <int L> __device__ __forceinline__ void lop(unsigned x, unsigned y, unsigned z, unsigned* o) {
  unsigned r;
  asm volatile("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(x), "r"(y), "r"(z), "n"(L));
  *o = r;
}
#define L1(b) lop<(b)>(x, y, z, out + (b) * n + i);
#define L4(b) L1(b) L1(b + 1) L1(b + 2) L1(b + 3)
#define L16(b) L4(b) L4(b + 4) L4(b + 8) L4(b + 12)
#define L64(b) L16(b) L16(b + 16) L16(b + 32) L16(b + 48)
extern "C" __global__ void int_lop3(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out,
                                    unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], z = c[i];
  L64(0) L64(64) L64(128) L64(192)
}
