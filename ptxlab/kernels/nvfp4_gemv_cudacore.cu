// NVFP4 GEMV on CUDA cores (no tensor cores), one source for sm_90a and sm_100a.  c = A . b  (gpu-mode nvfp4_gemv)
//
// Kernel: nvfp4_gemv_cudacore(a, b, sfa, sfb, c, M, K, L), grid (ceil(M / GEMV_ROWS_PER_CTA), L), block GEMV_THREADS.
// Layouts consumed (gpu-mode tensors as they are, no repacking):
//   a   : [M, K/2, L] fp4x2 bytes, physically (L, M, K/2), element 2i in the low nibble of byte i
//   b   : [128, K/2, L] fp4x2 bytes, physically (L, 128, K/2); only row 0 of each batch is read
//   sfa : [M, K/16, L] UE4M3 bytes, physically (L, M, K/16)   (the REFERENCE layout, not sfa_permuted: a row's
//         scales are contiguous, so one 2-byte load per lane matches its 16-byte chunk of A; the permuted layout
//         interleaves 128 rows x 4 scales per 512 B and would need a gather per lane)
//   sfb : [128, K/16, L] UE4M3 bytes, physically (L, 128, K/16); row 0 used
//   c   : [M, 1, L] fp16, physically (L, M)
// Requirements (checked by the host wrapper): K % 32 == 0 (16-byte chunks of A), a/b 16-byte aligned, sf 2-byte aligned.
//
// Design (memory bound: A and SFA are read once, ~0.56 B per element):
//   * one warp per GEMV_ROWS_PER_WARP rows; lane j owns 16-byte chunks j, j+32, ... of the K range (32 elements =
//     two 16-element scale blocks per chunk), so each warp-wide load is 512 contiguous bytes of a row (coalesced);
//   * GEMV_UNROLL chunks per lane are loaded before any math (several 16-byte loads in flight per thread);
//   * A and SFA: ld.global.nc.L1::no_allocate (streamed once); b and sfb: ld.global.nc (re-read by every warp of
//     the batch, stays in L1/L2), decoded once per chunk and reused for GEMV_ROWS_PER_WARP rows;
//   * decode e2m1 -> f16x2: sm_100a `cvt.rn.f16x2.e2m1x2` (exact); sm_90 (no such cvt) integer bit placement:
//     magnitude bits -> fp16 bits 11..9, sign -> bit 15 (bytewise shifts/masks, then PRMT into f16x2), which is the
//     value times 2^-14 (exact, fp16 subnormals included); b's decode is multiplied by 2^14 (exact), so products are a*b*2^-14, and 2^14 is folded into the
//     block scale.  The pairing of elements inside f16x2 differs between the two decodes but is the same for a
//     and b, which is all a dot product needs;
//   * per 16-element block: 8 x fma.rn.f16x2 from zero.  Exact for ANY e2m1 data: each half sums 8 products that
//     are multiples of 1/4 (x2^-14 on sm_90) with |sum| <= 288 < 512, which fp16 holds exactly;
//   * the two halves -> fp32 (exact), times sfa*sfb decoded with cvt.rn.f16x2.e4m3x2 (exact) and multiplied in fp32
//     (exact: 4-bit x 4-bit significands), accumulated in fp32 (exact for gpu-mode's GEMV data);
//   * butterfly warp-shuffle reduction, lane 0 converts to fp16 (cvt.rn.f16.f32) and stores.
// No headers and no CUDA intrinsics beyond fmaf: fp16 work and the shuffle are inline PTX, so the kernel compiles with
// bare NVRTC (no include paths) and with nvcc.

#ifndef GEMV_ROWS_PER_WARP
#define GEMV_ROWS_PER_WARP 4
#endif
#ifndef GEMV_WARPS
#define GEMV_WARPS 2
#endif
#ifndef GEMV_UNROLL
#define GEMV_UNROLL 2
#endif
#define GEMV_THREADS (32 * GEMV_WARPS)
#define GEMV_ROWS_PER_CTA (GEMV_ROWS_PER_WARP * GEMV_WARPS)

struct u4x { unsigned x, y, z, w; };

__device__ __forceinline__ u4x ld_stream16(const unsigned char* p) {
  u4x v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ u4x ld_keep16(const unsigned char* p) {
  u4x v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ unsigned ld_stream2(const unsigned char* p) {
  unsigned short v;
  asm volatile("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ unsigned ld_keep2(const unsigned char* p) {
  unsigned short v;
  asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}

// two UE4M3 codes (low byte = first block) -> two floats, exact (e4m3 with sign 0 fits fp16 exactly)
__device__ __forceinline__ void ue4m3x2_to_f32(unsigned s, float& lo, float& hi) {
  asm("{\n\t.reg .b16 s16, l16, h16;\n\t.reg .b32 h2;\n\t"
      "cvt.u16.u32 s16, %2;\n\t"
      "cvt.rn.f16x2.e4m3x2 h2, s16;\n\t"
      "mov.b32 {l16, h16}, h2;\n\t"
      "cvt.f32.f16 %0, l16;\n\t"
      "cvt.f32.f16 %1, h16;\n\t}"
      : "=f"(lo), "=f"(hi) : "r"(s));
}

// one 32-bit word of fp4 codes (8 elements) -> 4 f16x2 (order: any fixed permutation, identical for a and b)
// cvt.rn.f16x2.e2m1x2 is an arch-specific feature (sm_100a/sm_103a/sm_120a... not plain sm_100/sm_120), so the test
// is on the feature macros rather than on __CUDA_ARCH__ >= 1000 alone; every other target takes the integer decode.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000 && \
    (defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL) || defined(__CUDA_ARCH_FEAT_SM110_ALL) || \
     defined(__CUDA_ARCH_FEAT_SM120_ALL) || defined(__CUDA_ARCH_FEAT_SM121_ALL) || defined(__CUDA_ARCH_FAMILY_SPECIFIC__))
#define GEMV_HW_E2M1 1
#define GEMV_SCALE_BIAS 1.0f
__device__ __forceinline__ void decode8(unsigned w, unsigned (&h)[4]) {
  asm("{\n\t.reg .b8 b0, b1, b2, b3;\n\t"
      "mov.b32 {b0, b1, b2, b3}, %4;\n\t"
      "cvt.rn.f16x2.e2m1x2 %0, b0;\n\t"
      "cvt.rn.f16x2.e2m1x2 %1, b1;\n\t"
      "cvt.rn.f16x2.e2m1x2 %2, b2;\n\t"
      "cvt.rn.f16x2.e2m1x2 %3, b3;\n\t}"
      : "=r"(h[0]), "=r"(h[1]), "=r"(h[2]), "=r"(h[3]) : "r"(w));
}
__device__ __forceinline__ void decode8_b(unsigned w, unsigned (&h)[4]) { decode8(w, h); }
#else
#define GEMV_HW_E2M1 0
#define GEMV_SCALE_BIAS 16384.0f
// H(c) = fp16 high byte of code c = sign << 7 | magnitude << 1 (low byte 0). Bytewise for the 4 even (low-nibble)
// and the 4 odd (high-nibble) elements of the word, then PRMT with a zero register spreads them into f16x2:
// h = {(e0,e2), (e4,e6), (e1,e3), (e5,e7)} (low half first). 3 SHF + 4 LOP3 + 4 PRMT per 8 elements.
__device__ __forceinline__ unsigned prmt0(unsigned x, unsigned sel) {
  unsigned d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(0u), "r"(sel));
  return d;
}
__device__ __forceinline__ void decode8(unsigned w, unsigned (&h)[4]) {
  const unsigned lo = ((w << 1) & 0x0E0E0E0Eu) | ((w << 4) & 0x80808080u);
  const unsigned hi = ((w >> 3) & 0x0E0E0E0Eu) | (w & 0x80808080u);
  h[0] = prmt0(lo, 0x1404u);
  h[1] = prmt0(lo, 0x3424u);
  h[2] = prmt0(hi, 0x1404u);
  h[3] = prmt0(hi, 0x3424u);
}
// b's decode times 2^14 (0x7400 = 16384.0 in fp16), exact
__device__ __forceinline__ void decode8_b(unsigned w, unsigned (&h)[4]) {
  decode8(w, h);
#pragma unroll
  for (int i = 0; i < 4; ++i) asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(h[i]) : "r"(0x74007400u));
}
#endif

// sum over one 16-element block: 2 words of a (decoded here) against 8 decoded f16x2 of b -> float (exact)
__device__ __forceinline__ float block16(unsigned a0, unsigned a1, const unsigned (&bh)[8]) {
  unsigned ah[4], ah2[4];
  decode8(a0, ah);
  decode8(a1, ah2);
  unsigned acc = 0u;
#pragma unroll
  for (int i = 0; i < 4; ++i) asm("fma.rn.f16x2 %0, %1, %2, %0;" : "+r"(acc) : "r"(ah[i]), "r"(bh[i]));
#pragma unroll
  for (int i = 0; i < 4; ++i) asm("fma.rn.f16x2 %0, %1, %2, %0;" : "+r"(acc) : "r"(ah2[i]), "r"(bh[4 + i]));
  float lo, hi;
  asm("{\n\t.reg .b16 l16, h16;\n\tmov.b32 {l16, h16}, %2;\n\tcvt.f32.f16 %0, l16;\n\tcvt.f32.f16 %1, h16;\n\t}"
      : "=f"(lo), "=f"(hi) : "r"(acc));
  return lo + hi;
}

extern "C" __global__ void __launch_bounds__(GEMV_THREADS)
nvfp4_gemv_cudacore(const unsigned char* __restrict__ a, const unsigned char* __restrict__ b,
                    const unsigned char* __restrict__ sfa, const unsigned char* __restrict__ sfb,
                    unsigned short* __restrict__ c, int M, int K, int L) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int l = blockIdx.y;
  const int row0 = (blockIdx.x * GEMV_WARPS + warp) * GEMV_ROWS_PER_WARP;
  if (row0 >= M) return;  // whole warp leaves together (no later barrier)
  const int kb2 = K >> 1, kb16 = K >> 4;
  const int nchunk = K >> 5;  // 16-byte chunks per row
  const unsigned char* arow[GEMV_ROWS_PER_WARP];
  const unsigned char* srow[GEMV_ROWS_PER_WARP];
#pragma unroll
  for (int r = 0; r < GEMV_ROWS_PER_WARP; ++r) {
    const int m = row0 + r < M ? row0 + r : M - 1;  // clamp: a tail row recomputes row M-1 and is not stored
    arow[r] = a + ((size_t)l * M + m) * kb2;
    srow[r] = sfa + ((size_t)l * M + m) * kb16;
  }
  const unsigned char* brow = b + (size_t)l * 128 * kb2;
  const unsigned char* sbrow = sfb + (size_t)l * 128 * kb16;
  float acc[GEMV_ROWS_PER_WARP];
#pragma unroll
  for (int r = 0; r < GEMV_ROWS_PER_WARP; ++r) acc[r] = 0.0f;

  for (int c0 = lane; c0 < nchunk; c0 += 32 * GEMV_UNROLL) {
    u4x av[GEMV_UNROLL][GEMV_ROWS_PER_WARP], bv[GEMV_UNROLL];
    unsigned sa[GEMV_UNROLL][GEMV_ROWS_PER_WARP], sb[GEMV_UNROLL];
    // issue every load of this round first
#pragma unroll
    for (int u = 0; u < GEMV_UNROLL; ++u) {
      const int ch = c0 + 32 * u;
      if (ch < nchunk) {
        bv[u] = ld_keep16(brow + 16 * ch);
        sb[u] = ld_keep2(sbrow + 2 * ch);
#pragma unroll
        for (int r = 0; r < GEMV_ROWS_PER_WARP; ++r) {
          av[u][r] = ld_stream16(arow[r] + 16 * ch);
          sa[u][r] = ld_stream2(srow[r] + 2 * ch);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < GEMV_UNROLL; ++u) {
      const int ch = c0 + 32 * u;
      if (ch < nchunk) {
        unsigned bh0[8], bh1[8];
        {
          unsigned t[4];
          decode8_b(bv[u].x, t);
#pragma unroll
          for (int i = 0; i < 4; ++i) bh0[i] = t[i];
          decode8_b(bv[u].y, t);
#pragma unroll
          for (int i = 0; i < 4; ++i) bh0[4 + i] = t[i];
          decode8_b(bv[u].z, t);
#pragma unroll
          for (int i = 0; i < 4; ++i) bh1[i] = t[i];
          decode8_b(bv[u].w, t);
#pragma unroll
          for (int i = 0; i < 4; ++i) bh1[4 + i] = t[i];
        }
        float sb0, sb1;
        ue4m3x2_to_f32(sb[u], sb0, sb1);
#pragma unroll
        for (int r = 0; r < GEMV_ROWS_PER_WARP; ++r) {
          float sa0, sa1;
          ue4m3x2_to_f32(sa[u][r], sa0, sa1);
          const float p0 = block16(av[u][r].x, av[u][r].y, bh0);
          const float p1 = block16(av[u][r].z, av[u][r].w, bh1);
          acc[r] = fmaf(p0, sa0 * sb0, acc[r]);
          acc[r] = fmaf(p1, sa1 * sb1, acc[r]);
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < GEMV_ROWS_PER_WARP; ++r) {
    float v = acc[r];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      float o;
      asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(o) : "f"(v), "r"(off));
      v += o;
    }
    acc[r] = v;
  }
  if (lane == 0) {
#pragma unroll
    for (int r = 0; r < GEMV_ROWS_PER_WARP; ++r) {
      if (row0 + r < M) {
        unsigned short h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(acc[r] * GEMV_SCALE_BIAS));
        c[(size_t)l * M + row0 + r] = h;
      }
    }
  }
}
