// Stage D1: tile restructure with scalar (CUDA-core) math. CTA = one 128-row tile of one batch (grid (M/128, L)),
// thread = one row, K loop in 64-wide chunks exactly as the MMA stages will walk it: per chunk, the 4 scale
// factors come from the gpu-mode PERMUTED (blocked) SF tensors at the 512-B block of (m-tile, chunk) -- the block
// one tcgen05.cp will copy -- and the 32 packed bytes of the row from a (K-major). Only row 0 of b is used (GEMV).
// Outputs: acc[l*M + m] (fp32 accumulator bits) and c[l*M + m] (fp16, gpu-mode c (M, 1, L)).

__device__ __forceinline__ float e2m1(unsigned code) {  // code 0..15, sign = bit 3
  const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = mag[code & 7u];
  return (code & 8u) ? -v : v;
}
__device__ __forceinline__ float ue4m3(unsigned code) {  // code 0..126 (0x7F NaN not produced by gpu-mode data)
  const unsigned e = (code >> 3) & 15u, m = code & 7u;
  if (e == 0) return (float)m * 0.001953125f;          // m/8 * 2^-6
  return __uint_as_float(((e + 120u) << 23) | (m << 20));  // (1 + m/8) * 2^(e-7)
}

extern "C" __global__ void __launch_bounds__(128)
d1_scalar(const unsigned char* a, const unsigned char* b, const unsigned char* sfa_p, const unsigned char* sfb_p,
          unsigned* acc_out, unsigned short* c, unsigned M, unsigned K, unsigned b_rows) {
  const unsigned r = threadIdx.x, mt = blockIdx.x, l = blockIdx.y, m = mt * 128u + r;
  const unsigned kbytes = K / 2u, nchunks = K / 64u;
  const unsigned rest_m = (M + 127u) / 128u, rest_k = (K / 16u + 3u) / 4u;
  const unsigned char* arow = a + ((unsigned long long)l * M + m) * kbytes;
  const unsigned char* brow = b + ((unsigned long long)l * b_rows) * kbytes;  // row n = 0
  const unsigned char* sfa_row = sfa_p + ((unsigned long long)l * rest_m + mt) * rest_k * 512u + (r % 32u) * 16u +
                                 (r / 32u) * 4u;
  const unsigned char* sfb_row = sfb_p + (unsigned long long)l * ((b_rows + 127u) / 128u) * rest_k * 512u;
  float acc = 0.0f;
  for (unsigned kc = 0; kc < nchunks; ++kc) {
    for (unsigned j = 0; j < 4u; ++j) {  // 16-element scale block j of the chunk
      const float sa = ue4m3(sfa_row[kc * 512u + j]), sb = ue4m3(sfb_row[kc * 512u + j]);
      float blk = 0.0f;
      for (unsigned i = 0; i < 8u; ++i) {
        const unsigned kb = kc * 32u + j * 8u + i;
        const unsigned xa = arow[kb], xb = brow[kb];
        blk += e2m1(xa & 15u) * e2m1(xb & 15u) + e2m1(xa >> 4) * e2m1(xb >> 4);
      }
      acc += blk * sa * sb;
    }
  }
  if (m < M) {
    acc_out[(unsigned long long)l * M + m] = __float_as_uint(acc);
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(acc));
    c[(unsigned long long)l * M + m] = h;
  }
}
