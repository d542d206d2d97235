// Scalar NVFP4 GEMV: one thread per output row, 128 threads per CTA, CUDA cores only (runs on sm_90a and sm_100a).
// Signature: nvfp4_gemv_scalar(a, b, sfa, sfb, c, M, K, L), grid (ceil(M/128), L), block 128.
//   a   : [M, K/2, L] fp4x2 bytes, physically (L, M, K/2)      (gpu-mode layout; element 2i in the low nibble)
//   b   : [128, K/2, L] fp4x2 bytes, physically (L, 128, K/2); only row 0 is used (gpu-mode pads N to 128)
//   sfa : [M, K/16, L] UE4M3 bytes, physically (L, M, K/16)   (reference layout, not the permuted one)
//   sfb : [128, K/16, L] UE4M3 bytes, physically (L, 128, K/16)
//   c   : [M, 1, L] fp16, physically (L, M)
// Products of e2m1 codes and UE4M3 scales are exact in fp32; with gpu-mode's GEMV data every partial sum is a
// small dyadic number, so the fp32 accumulation is exact and c equals the float64 reference rounded to fp16.
// No headers: the fp16 conversion is inline PTX so the kernel compiles with bare NVRTC anywhere.

__constant__ float kE2M1[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                                -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

__device__ __forceinline__ float ue4m3_to_float(unsigned s) {
  unsigned e = (s >> 3) & 15u, m = s & 7u;          // UE4M3: 4-bit exponent (bias 7), 3-bit mantissa, no sign
  return e ? __uint_as_float(((e + 120u) << 23) | (m << 20)) : (float)m * 0.001953125f;  // subnormal: m * 2^-9
}

extern "C" __global__ void __launch_bounds__(128)
nvfp4_gemv_scalar(const unsigned char* __restrict__ a, const unsigned char* __restrict__ b,
                  const unsigned char* __restrict__ sfa, const unsigned char* __restrict__ sfb,
                  unsigned short* __restrict__ c, int M, int K, int L) {
  const int m = blockIdx.x * 128 + threadIdx.x;
  const int l = blockIdx.y;
  if (m >= M) return;
  const int kb2 = K / 2, kb16 = K / 16;
  const unsigned char* arow = a + ((size_t)l * M + m) * kb2;
  const unsigned char* brow = b + (size_t)l * 128 * kb2;
  const unsigned char* sa = sfa + ((size_t)l * M + m) * kb16;
  const unsigned char* sb = sfb + (size_t)l * 128 * kb16;
  float acc = 0.0f;
  for (int kb = 0; kb < kb16; ++kb) {
    const uint2 av = *reinterpret_cast<const uint2*>(arow + 8 * kb);
    const uint2 bv = *reinterpret_cast<const uint2*>(brow + 8 * kb);
    float part = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const unsigned aw = j < 4 ? av.x : av.y, bw = j < 4 ? bv.x : bv.y;
      const unsigned ab = (aw >> (8 * (j & 3))) & 0xFFu, bb = (bw >> (8 * (j & 3))) & 0xFFu;
      part += kE2M1[ab & 15u] * kE2M1[bb & 15u];
      part += kE2M1[ab >> 4] * kE2M1[bb >> 4];
    }
    acc += part * (ue4m3_to_float(sa[kb]) * ue4m3_to_float(sb[kb]));
  }
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(acc));
  c[(size_t)l * M + m] = h;
}
