// corpus_numeric.cu — fidelity-corpus kernels: integer and float edge cases written as plain CUDA C++, so the
// instruction sequences are NVRTC's own (software 64-bit division, magic-number division, prec-div/prec-sqrt,
// contraction, C casts).  tests/corpus/kernels_new.py holds the launches and references.  Bare NVRTC, sm_90a.
//
// corpus_int_edge(const unsigned* a, const unsigned* b, unsigned* out, unsigned n): out[i*NI + k], NI = 28
//   (b[i] is never 0: the divisors are non-zero and the signed divisor is never -1).
// corpus_float_edge(const unsigned* a, const unsigned* b, const unsigned* c, const unsigned long long* d,
//   unsigned* out, unsigned n): out[i*NF + k], NF = 30; f32 bit patterns with NaN/Inf/denormals.
//   k = 28: a plain mul.f32 whose product is also stored (k = 29) followed by add.f32: NVRTC does not contract it,
//   ptxas MAY fuse it into an FFMA on hardware (PTX ISA 9.7.3.3); the emulator rounds twice (mode "contraction").
typedef unsigned long long u64;
#define NI 28
#define NF 30

extern "C" __global__ void corpus_int_edge(const unsigned* a, const unsigned* b, unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  int sx = (int)x, sy = (int)y;
  int d = (int)((y >> 1) | 1u);
  if (y & 0x80000000u) d = -d;
  u64 X = ((u64)x << 32) | y, Y = ((u64)(y >> (x & 31u)) << (y & 15u)) | 1ull;
  long long SX = (long long)X, SY = (long long)(Y >> 1) * ((x & 4u) ? -1 : 1);
  if (SY == 0 || SY == -1) SY = 3;
  unsigned* o = out + (size_t)i * NI;
  o[0] = x / y;
  o[1] = x % y;
  o[2] = (unsigned)(sx / d);
  o[3] = (unsigned)(sx % d);
  o[4] = x / 7u;
  o[5] = (unsigned)(sx / -3);
  o[6] = x % 10u;
  u64 q = X / Y, r = X % Y;
  o[7] = (unsigned)q; o[8] = (unsigned)(q >> 32);
  o[9] = (unsigned)r; o[10] = (unsigned)(r >> 32);
  long long sq = SX / SY, sr = SX % SY;
  o[11] = (unsigned)sq; o[12] = (unsigned)((u64)sq >> 32);
  o[13] = (unsigned)sr; o[14] = (unsigned)((u64)sr >> 32);
  o[15] = __clz(sx);
  o[16] = __popc(x);
  o[17] = __brev(x);
  o[18] = __ffs(sx);
  o[19] = __byte_perm(x, y, y & 0x7777u);
  o[20] = __funnelshift_l(x, y, y >> 27);
  o[21] = __funnelshift_rc(x, y, y >> 26);
  o[22] = (unsigned)__mulhi(sx, sy);
  o[23] = __umulhi(x, y);
  u64 h = __umul64hi(X, Y);
  o[24] = (unsigned)h ^ (unsigned)(h >> 32);
  o[25] = __sad(sx, sy, x >> 8);
  o[26] = (unsigned)__hadd(sx, sy) ^ __urhadd(x, y);
  o[27] = (unsigned)(sx >> (y & 31u));
}

extern "C" __global__ void corpus_float_edge(const unsigned* a, const unsigned* b, const unsigned* c,
                                             const u64* dd, unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = __uint_as_float(a[i]), y = __uint_as_float(b[i]), z = __uint_as_float(c[i]);
  double w = __longlong_as_double(dd[i]);
  unsigned* o = out + (size_t)i * NF;
  o[0] = __float_as_uint(x / y);
  o[1] = __float_as_uint(sqrtf(x));
  o[2] = __float_as_uint(x * y + z);
  o[3] = __float_as_uint(fminf(x, y));
  o[4] = __float_as_uint(fmaxf(x, y));
  o[5] = __float_as_uint(rintf(x));
  o[6] = __float_as_uint(floorf(x));
  o[7] = __float_as_uint(ceilf(x));
  o[8] = __float_as_uint(truncf(x));
  o[9] = (unsigned)__float2int_rz(x);
  o[10] = __float2uint_rz(x);
  o[11] = __float_as_uint((float)(int)a[i]);
  o[12] = __float_as_uint((float)b[i]);
  o[13] = __float_as_uint((float)w);
  double wx = (double)x;
  o[14] = (unsigned)__double_as_longlong(wx);
  o[15] = (unsigned)((u64)__double_as_longlong(wx) >> 32);
  unsigned short hh;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(hh) : "f"(x));
  o[16] = hh;
  float hf;
  asm("{ .reg .f16 t; mov.b16 t, %1; cvt.f32.f16 %0, t; }" : "=f"(hf) : "h"((unsigned short)a[i]));
  o[17] = __float_as_uint(hf);
  o[18] = __float_as_uint(__fadd_rz(x, y));
  o[19] = __float_as_uint(__fmul_ru(x, y));
  o[20] = __float_as_uint(__saturatef(x));
  o[21] = __float_as_uint(copysignf(x, y));
  o[22] = __float_as_uint(fabsf(x));
  o[23] = __float_as_uint(-x);
  o[24] = __float_as_uint(x - y);
  o[25] = __float_as_uint(__fmul_rn(x, y));
  o[26] = __float_as_uint(__fdiv_rz(x, y));
  o[27] = (x != x) | ((y == y) << 1) | ((x < y) << 2) | ((x >= z) << 3) | (((int)(x == z)) << 4);
  float p = x * z;
  o[28] = __float_as_uint(p + y);
  o[29] = __float_as_uint(p);
}
