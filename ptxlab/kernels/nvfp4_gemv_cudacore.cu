// NVFP4 GEMV on CUDA cores (no tensor cores), one source for sm_90a and sm_100a.  c = A . b  (gpu-mode nvfp4_gemv)
//
// Kernel: nvfp4_gemv_cudacore(a, b, sfa, sfb, c, M, K, L); two variants of it, chosen by #defines (the host picks
// a config per shape: ptxlab/production/submission_gemv.py pick_config):
//   * flat variant (GEMV_FLAT=1; K % 1024 == 0): persistent CTAs read whole rows as contiguous blocks, grid
//     (CTAs resident on the GPU per batch, L), block 32 * GEMV_WARPS; see "Flat variant" below;
//   * register variant (default; any K % 32 == 0): grid (ceil(M / GEMV_ROWS_PER_CTA), L), block GEMV_THREADS.
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
// Register-variant configuration (#defines, overridable by prepending #defines):
//   GEMV_ROWS_PER_WARP R (power of two <= 32), GEMV_WARPS W, GEMV_UNROLL U (16-byte chunks per lane per round),
//   GEMV_KSPLIT S (warps sharing one group of R rows, splitting K; W % S == 0), GEMV_PREFETCH P (0/1: load round
//   j+1 into a second register buffer before computing round j).  Rows per CTA = R * W / S.
// Flat-variant configuration: GEMV_WARPS, GEMV_FLAT_R (rows per thread per round), GEMV_PREFETCH, GEMV_FLAT_RR
//   (1: row blocks round-robin, 0: balanced ranges), GEMV_FLAT_BUF (floats of shared memory for the warp partials
//   not yet summed); both variants take
//   GEMV_MIN_CTAS (__launch_bounds__ min CTAs per SM: a register cap for occupancy).
//
// Design (memory bound: A and SFA are read once, ~0.56 B per element); the arithmetic is shared by both variants:
//   * (register variant) a group of S warps owns R consecutive rows; a "round" is 32*U consecutive 16-byte chunks
//     of the K range (32 elements = two 16-element scale blocks per chunk); warp s of the group takes rounds s,
//     s+S, ...; lane j owns chunks j, j+32, ... of the round, so each warp-wide load is 512 contiguous bytes of a
//     row (coalesced);
//   * (register variant) every load of a round (R*U 16-byte A loads + 2-byte SF loads per lane) precedes its math;
//     with GEMV_PREFETCH the next round's loads are issued before this round's math (two register buffers);
//   * A and SFA: ld.global.nc.L1::no_allocate (streamed once); b and sfb: ld.global.nc (re-read by every warp of
//     the batch, stays in L1/L2), decoded once per chunk and reused for the warp's R rows (the flat variant decodes
//     each thread's one chunk of b once for the whole kernel);
//   * sm_100a: e2m1 -> f16x2 with `cvt.rn.f16x2.e2m1x2` (exact), per 16-element block 8 x fma.rn.f16x2 from zero
//     (exact for ANY e2m1 data: each half sums 8 products, multiples of 1/4, |sum| <= 288 < 512), halves -> fp32;
//   * sm_90a (no e2m1 cvt): integer dot products.  A nibble (sign s, magnitude code g) is looked up with PRMT in
//     an 8-byte table of 2|v| = {0,1,2,3,4,6,8,12}: PRMT's selector nibble is the fp4 code itself, and its bit 3
//     (the fp4 sign) makes PRMT replicate the table byte's sign bit (0), so prmt(T, w) = 2|v| for positive codes and
//     0 for negative ones ("pos"); prmt(T reversed, ~w) gives the negative codes' 2|v| ("neg").  4 codes per PRMT.
//     b (decoded once per chunk, shared by the R rows) becomes signed bytes 2b and -2b, and
//     dp4a(pos, 2b) + dp4a(neg, -2b) = sum of 4 * a_i * b_i, exact in int32 for ANY e2m1 data (|16-block| <= 2304).
//     The block's int32 accumulator starts at 0x4B400000 (= 1.5 * 2^23 as fp32), so its bits read as a float are
//     1.5 * 2^23 + sum exactly; one FADD recovers the sum as fp32 (no I2F).  The final fp32 sum is scaled by 1/4.
//     11 instructions per 8 elements of A (4 PRMT, 4 IDP, 3 shifts/nots) against 15 for a PRMT decode + HFMA2;
//   * sm_100a block sums lo + hi by cvt.f32.f16 + add.rn.f32.f16 (mixed precision, PTX ISA 9.7.5.1), block scales
//     by fma.rn.f32.f16 of the two f16 scales (9.7.5.3; exact); elsewhere:
//   * block scales: sfa*sfb decoded with cvt.rn.f16x2.e4m3x2 (exact) and multiplied in fp32 (exact: 4-bit x 4-bit
//     significands), block sums scaled and accumulated in fp32 (exact for gpu-mode's GEMV data);
//   * reduction: "transposing" shuffle reduction (R values per lane: log2 R halving steps exchange half of the
//     values, then plain butterflies), R + 5 - log2 R shuffles instead of 5 R; with S > 1 the S warps' row sums
//     are added in shared memory; one lane per row converts to fp16 (cvt.rn.f16.f32) and stores.
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
#ifndef GEMV_KSPLIT
#define GEMV_KSPLIT 1
#endif
#ifndef GEMV_PREFETCH
#define GEMV_PREFETCH 0
#endif
#ifndef GEMV_FLAT
#define GEMV_FLAT 0  // 1: the flat variant below (whole rows as contiguous blocks, b decoded once per thread)
#endif
#ifndef GEMV_MIN_CTAS
#define GEMV_MIN_CTAS 1  // __launch_bounds__ minBlocksPerMultiprocessor (a register cap for occupancy)
#endif
#ifndef GEMV_L2_PREFETCH
#define GEMV_L2_PREFETCH 0  // 1: A loads carry .L2::256B (the L2 fetches 256-byte blocks)
#endif
#define GEMV_THREADS (32 * GEMV_WARPS)
#define GEMV_GROUPS (GEMV_WARPS / GEMV_KSPLIT)
#define GEMV_ROWS_PER_CTA (GEMV_ROWS_PER_WARP * GEMV_GROUPS)

#if (GEMV_ROWS_PER_WARP & (GEMV_ROWS_PER_WARP - 1)) || GEMV_ROWS_PER_WARP > 32 || GEMV_ROWS_PER_WARP < 1
#error "GEMV_ROWS_PER_WARP must be a power of two in 1..32"
#endif
#if GEMV_WARPS % GEMV_KSPLIT
#error "GEMV_WARPS must be a multiple of GEMV_KSPLIT"
#endif

struct u4x { unsigned x, y, z, w; };

__device__ __forceinline__ u4x ld_stream16(const unsigned char* p) {
  u4x v;
#if GEMV_L2_PREFETCH
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#else
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#endif
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

// cvt.rn.f16x2.e2m1x2 is an arch-specific feature (sm_100a/sm_103a/sm_120a... not plain sm_100/sm_120), so the test
// is on the feature macros rather than on __CUDA_ARCH__ >= 1000 alone; every other target takes the integer path.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000 && \
    (defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL) || defined(__CUDA_ARCH_FEAT_SM110_ALL) || \
     defined(__CUDA_ARCH_FEAT_SM120_ALL) || defined(__CUDA_ARCH_FEAT_SM121_ALL) || defined(__CUDA_ARCH_FAMILY_SPECIFIC__))
#define GEMV_HW_E2M1 1
#define GEMV_FINAL_SCALE 1.0f
struct Tabs {};
// one 32-bit word of fp4 codes (8 elements) -> 4 f16x2 (element pairs (0,1), (2,3), (4,5), (6,7))
__device__ __forceinline__ void decode8(unsigned w, unsigned* h) {
  asm("{\n\t.reg .b8 b0, b1, b2, b3;\n\t"
      "mov.b32 {b0, b1, b2, b3}, %4;\n\t"
      "cvt.rn.f16x2.e2m1x2 %0, b0;\n\t"
      "cvt.rn.f16x2.e2m1x2 %1, b1;\n\t"
      "cvt.rn.f16x2.e2m1x2 %2, b2;\n\t"
      "cvt.rn.f16x2.e2m1x2 %3, b3;\n\t}"
      : "=r"(h[0]), "=r"(h[1]), "=r"(h[2]), "=r"(h[3]) : "r"(w));
}
// b's 16-byte chunk -> 16 f16x2 (block 0 in bq[0..7], block 1 in bq[8..15])
__device__ __forceinline__ void decode_b(const u4x& v, unsigned (&bq)[16], const Tabs&) {
  decode8(v.x, bq + 0);
  decode8(v.y, bq + 4);
  decode8(v.z, bq + 8);
  decode8(v.w, bq + 12);
}
// one 16-element block: 2 words of a against 8 f16x2 of b -> fp32 (exact)
__device__ __forceinline__ float block16(unsigned a0, unsigned a1, const unsigned* bh) {
  unsigned ah[8];
  decode8(a0, ah);
  decode8(a1, ah + 4);
  unsigned acc = 0u;
#pragma unroll
  for (int i = 0; i < 8; ++i) asm("fma.rn.f16x2 %0, %1, %2, %0;" : "+r"(acc) : "r"(ah[i]), "r"(bh[i]));
  // lo + hi in fp32 (exact: two multiples of 1/4 of magnitude <= 288): cvt of the low half, then the
  // mixed-precision add.f32.f16 of the high half (PTX ISA 9.7.5.1; one FHADD instead of a second cvt + FADD)
  float s;
  asm("{\n\t.reg .b16 l16, h16;\n\tmov.b32 {l16, h16}, %1;\n\tcvt.f32.f16 %0, l16;\n\t"
      "add.rn.f32.f16 %0, h16, %0;\n\t}"
      : "=f"(s) : "r"(acc));
  return s;
}
// sfb's two UE4M3 codes, kept as f16x2 (exact); the block scales sa * sb come from the mixed-precision
// fma.rn.f32.f16 (PTX ISA 9.7.5.3): the product of two 4-bit significands is exact in fp32
struct Sb { unsigned h2; };
__device__ __forceinline__ Sb sb_decode(unsigned code2) {
  Sb r;
  asm("{\n\t.reg .b16 s16;\n\tcvt.u16.u32 s16, %1;\n\tcvt.rn.f16x2.e4m3x2 %0, s16;\n\t}" : "=r"(r.h2) : "r"(code2));
  return r;
}
__device__ __forceinline__ void scale_pair(unsigned sa_code2, const Sb& sb, float& s0, float& s1) {
  asm("{\n\t.reg .b16 s16, a0, a1, b0, b1;\n\t.reg .b32 h2;\n\t"
      "cvt.u16.u32 s16, %2;\n\t"
      "cvt.rn.f16x2.e4m3x2 h2, s16;\n\t"
      "mov.b32 {a0, a1}, h2;\n\t"
      "mov.b32 {b0, b1}, %3;\n\t"
      "fma.rn.f32.f16 %0, a0, b0, 0f00000000;\n\t"
      "fma.rn.f32.f16 %1, a1, b1, 0f00000000;\n\t}"
      : "=f"(s0), "=f"(s1) : "r"(sa_code2), "r"(sb.h2));
}
// acc + sum over the chunk's two blocks of (block dot) * scale
__device__ __forceinline__ float chunk_dot(const u4x& a, float s0, float s1, const unsigned (&bq)[16], float acc,
                                           const Tabs&) {
  acc = fmaf(block16(a.x, a.y, bq + 0), s0, acc);
  return fmaf(block16(a.z, a.w, bq + 8), s1, acc);
}
#else
#define GEMV_HW_E2M1 0
#define GEMV_FINAL_SCALE 0.25f  // the integer path sums (2a) * (2b)
// PRMT tables: byte i = 2|e2m1(i)| (T_POS), and 2|e2m1(7 - i)| (T_REV, indexed by the complemented code)
#define GEMV_T_POS_LO 0x03020100u
#define GEMV_T_POS_HI 0x0C080604u
#define GEMV_T_REV_LO 0x0406080Cu
#define GEMV_T_REV_HI 0x00010203u
#define GEMV_MAGIC 0x4B400000  // 1.5 * 2^23 as fp32 bits
// the two tables' low words are PRMT's register operand; ptxas re-materializes a constant there before every PRMT
// (one IMAD.U32 each), so the kernel passes them as values it cannot fold (see nvfp4_gemv_cudacore)
// k16 = 2^16 rides along the same way: w >> 16 as mul.hi(w, k16) runs on the IMAD pipe (an opaque multiplier is not
// strength-reduced to a shift), which balances the ALU pipe (PRMT, LOP3) against the IMAD pipe (IDP, IMAD.HI)
struct Tabs { unsigned pos_lo, rev_lo, k16; };
#ifndef GEMV_IMAD_SHIFT
#define GEMV_IMAD_SHIFT 1
#endif
__device__ __forceinline__ unsigned hi16(unsigned w, const Tabs& t) {
#if GEMV_IMAD_SHIFT
  unsigned d;
  asm("mul.hi.u32 %0, %1, %2;" : "=r"(d) : "r"(w), "r"(t.k16));
  return d;
#else
  return w >> 16;
#endif
}
__device__ __forceinline__ unsigned prmt(unsigned lo, unsigned hi, unsigned sel) {
  unsigned d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(lo), "r"(hi), "r"(sel));
  return d;
}
__device__ __forceinline__ int dp4a(unsigned a, unsigned b, int c) {
  int d;
  asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
// bytes x in [0, 128] -> (-x) mod 256 bytewise: (0x80 - x) never borrows, and ^0x80 adds 0x80 unless x == 0
__device__ __forceinline__ unsigned neg_bytes(unsigned x) { return (0x80808080u - x) ^ 0x80808080u; }
// b's 16-byte chunk -> signed bytes 2b (bq[0..7]: word i's elements 0-3, 4-7 in bq[2i], bq[2i+1]) and -2b (bq[8..15])
__device__ __forceinline__ void decode_b(const u4x& v, unsigned (&bq)[16], const Tabs& t) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const unsigned sel = h ? hi16(w[i], t) : w[i];
      const unsigned p = prmt(t.pos_lo, GEMV_T_POS_HI, sel);   // 2|b| where b >= 0, else 0
      const unsigned n = prmt(t.rev_lo, GEMV_T_REV_HI, ~sel);  // 2|b| where b < 0, else 0
      bq[2 * i + h] = p | neg_bytes(n);
      bq[8 + 2 * i + h] = n | neg_bytes(p);
    }
  }
}
// 4 * (word of a . matching 8 elements of b), added to acc (int32, exact)
__device__ __forceinline__ int word_dot(unsigned w, const unsigned* bp, const unsigned* bn, int acc, const Tabs& t) {
  const unsigned hi = hi16(w, t), nw = ~w, nhi = hi16(nw, t);
  acc = dp4a(prmt(t.pos_lo, GEMV_T_POS_HI, w), bp[0], acc);
  acc = dp4a(prmt(t.pos_lo, GEMV_T_POS_HI, hi), bp[1], acc);
  acc = dp4a(prmt(t.rev_lo, GEMV_T_REV_HI, nw), bn[0], acc);
  acc = dp4a(prmt(t.rev_lo, GEMV_T_REV_HI, nhi), bn[1], acc);
  return acc;
}
// sfb's two UE4M3 codes as floats; the block scales sa * sb in fp32 (exact: 4-bit x 4-bit significands)
struct Sb { float s0, s1; };
__device__ __forceinline__ Sb sb_decode(unsigned code2) {
  Sb r;
  ue4m3x2_to_f32(code2, r.s0, r.s1);
  return r;
}
__device__ __forceinline__ void scale_pair(unsigned sa_code2, const Sb& sb, float& s0, float& s1) {
  float sa0, sa1;
  ue4m3x2_to_f32(sa_code2, sa0, sa1);
  s0 = sa0 * sb.s0;
  s1 = sa1 * sb.s1;
}
__device__ __forceinline__ float chunk_dot(const u4x& a, float s0, float s1, const unsigned (&bq)[16], float acc,
                                           const Tabs& t) {
  int i0 = word_dot(a.x, bq + 0, bq + 8, GEMV_MAGIC, t);
  i0 = word_dot(a.y, bq + 2, bq + 10, i0, t);
  int i1 = word_dot(a.z, bq + 4, bq + 12, GEMV_MAGIC, t);
  i1 = word_dot(a.w, bq + 6, bq + 14, i1, t);
  acc = fmaf(__int_as_float(i0) - 12582912.0f, s0, acc);
  return fmaf(__int_as_float(i1) - 12582912.0f, s1, acc);
}
#endif

struct Round {
  u4x a[GEMV_UNROLL][GEMV_ROWS_PER_WARP];
  unsigned sa[GEMV_UNROLL][GEMV_ROWS_PER_WARP];
  u4x b[GEMV_UNROLL];
  unsigned sb[GEMV_UNROLL];
};

// loads of round j (chunks 32 * U * j + 32 * u + lane); chunks past the row are zero (scale 0: contribute 0)
__device__ __forceinline__ void load_round(Round& rd, int j, int lane, int nchunk, const unsigned char* arow,
                                           const unsigned char* srow, const unsigned (&roff)[GEMV_ROWS_PER_WARP],
                                           const unsigned char* brow, const unsigned char* sbrow) {
#pragma unroll
  for (int u = 0; u < GEMV_UNROLL; ++u) {
    const int ch = (j * GEMV_UNROLL + u) * 32 + lane;
    if (ch < nchunk) {
      rd.b[u] = ld_keep16(brow + 16 * ch);
      rd.sb[u] = ld_keep2(sbrow + 2 * ch);
#pragma unroll
      for (int r = 0; r < GEMV_ROWS_PER_WARP; ++r) {
        rd.a[u][r] = ld_stream16(arow + (size_t)roff[r] * 8 + 16 * ch);
        rd.sa[u][r] = ld_stream2(srow + roff[r] + 2 * ch);
      }
    } else {
      rd.b[u] = u4x{0u, 0u, 0u, 0u};
      rd.sb[u] = 0u;
#pragma unroll
      for (int r = 0; r < GEMV_ROWS_PER_WARP; ++r) {
        rd.a[u][r] = u4x{0u, 0u, 0u, 0u};
        rd.sa[u][r] = 0u;
      }
    }
  }
}

__device__ __forceinline__ void compute_round(const Round& rd, int j, int nchunk, float (&acc)[GEMV_ROWS_PER_WARP],
                                              const Tabs& t) {
#pragma unroll
  for (int u = 0; u < GEMV_UNROLL; ++u) {
    if ((j * GEMV_UNROLL + u) * 32 < nchunk) {  // warp-uniform: skip slots wholly past the row
      unsigned bq[16];
      decode_b(rd.b[u], bq, t);
      const Sb sb = sb_decode(rd.sb[u]);
#pragma unroll
      for (int r = 0; r < GEMV_ROWS_PER_WARP; ++r) {
        float s0, s1;
        scale_pair(rd.sa[u][r], sb, s0, s1);
        acc[r] = chunk_dot(rd.a[u][r], s0, s1, bq, acc[r], t);
      }
    }
  }
}

__device__ __forceinline__ float shfl_xor(float v, int off) {
  float o;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(o) : "f"(v), "r"(off));
  return o;
}

// Transposing warp reduction of N per-lane row partials (N a power of two <= 32; acc is consumed): after step s
// (offset 16 >> s) a lane keeps the half of its values picked by its lane bit and adds its partner's copy of that
// half; after log2 N steps lane i holds row ridx(i), then plain butterflies finish the sums. Returns the row sum;
// ridx = the row it belongs to; lanes with (lane & (32 / N - 1)) == 0 are one owner per row.
template <int N>
__device__ __forceinline__ float reduce_rows(float (&acc)[N], int lane, int& ridx) {
  ridx = 0;
#pragma unroll
  for (int n = N, off = 16; n > 1; n >>= 1, off >>= 1) {
    const bool up = (lane & off) != 0;
    if (up) ridx += n >> 1;
#pragma unroll
    for (int i = 0; i < n / 2; ++i) {
      const float send = up ? acc[i] : acc[i + n / 2];
      const float keep = up ? acc[i + n / 2] : acc[i];
      acc[i] = keep + shfl_xor(send, off);
    }
  }
  float v = acc[0];
#pragma unroll
  for (int off = 16 / N; off > 0; off >>= 1) v += shfl_xor(v, off);
  return v;
}

__device__ __forceinline__ void store_c(unsigned short* p, float v) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v * GEMV_FINAL_SCALE));
  *p = h;
}

#if GEMV_FLAT
// ---------------------------------------------------------------------------------------------------------------
// Flat variant (GEMV_FLAT=1): the CTA's threads read whole consecutive rows as one contiguous block. Measured on the
// H100 (2026-11-22) for the 7168x16384 shape's 66 MB: a grid-stride read of A and SFA 25.3 us; the register
// variant's pattern (each warp sweeps its own rows, all warps in lockstep) with no arithmetic 27.9 us; this variant,
// arithmetic included, 27.2 us against 29.0 us for the register variant (then with row blocks dealt round-robin and
// a barrier per round; the balanced ranges and deferred sums below are 2026-11-28, not yet measured on a GPU).
//   * nch = K/32 16-byte chunks per row must divide the CTA's threads T = 32 * GEMV_WARPS: P = T / nch rows are
//     read side by side, thread t owns chunk c = t % nch of row slot p = t / nch -- for EVERY row it reads, so its
//     chunk of b (and sfb) is decoded once, into registers, for the whole kernel;
//   * persistent CTAs (grid sized by the host to the GPU), each owning a balanced contiguous range of rows: CTA x of
//     G takes M / G rows, the first M % G CTAs one more, so no CTA (and no SM) carries a whole extra round of rows;
//   * a round covers GEMV_FLAT_R * P consecutive rows of the range: thread t reads rows p + P*k - skip (k = round *
//     R + i, i < R); the first round is the partial one (skip = rounds * R * P - rows: rows before the range
//     re-read its first row and are not stored), so a CTA's last round is whole; with
//     GEMV_PREFETCH the next round's loads are issued before this round's math;
//   * per round each warp (all of one row slot, since nch % 32 == 0) reduces its R row partials with the
//     transposing shuffle reduction and the owner lanes put them in shared memory; no barrier per round: the
//     buffer holds GEMV_FLAT_BUF / (GEMV_WARPS * R) rounds, and only when it is full (or the range ends) one
//     __syncthreads lets the CTA's threads add each row's nch/32 warp partials in warp order and store c.
// Host requirements: K % 1024 == 0, 32 * GEMV_WARPS % (K/32) == 0, M * K / 2 < 2^31 (32-bit row offsets within a
// batch), 16-byte aligned a/b, 2-byte aligned sf.
#ifndef GEMV_FLAT_R
#define GEMV_FLAT_R 2
#endif
#ifndef GEMV_FLAT_RR
#define GEMV_FLAT_RR 0  // 1: row blocks dealt round-robin over the CTAs instead of balanced contiguous ranges
#endif
#ifndef GEMV_FLAT_BUF
#define GEMV_FLAT_BUF 2048  // floats of shared memory for the warp partials of the rounds not yet summed (8 KiB)
#endif
#if (GEMV_FLAT_R & (GEMV_FLAT_R - 1)) || GEMV_FLAT_R > 32
#error "GEMV_FLAT_R must be a power of two <= 32"
#endif
#define GEMV_FLAT_CAP (GEMV_FLAT_BUF / (GEMV_WARPS * GEMV_FLAT_R))  // rounds the partial buffer holds
#if GEMV_FLAT_CAP < 1
#error "GEMV_FLAT_BUF must hold at least one round (GEMV_WARPS * GEMV_FLAT_R floats)"
#endif

struct FlatRound {
  u4x a[GEMV_FLAT_R];
  unsigned sa[GEMV_FLAT_R];
};

extern "C" __global__ void __launch_bounds__(GEMV_THREADS, GEMV_MIN_CTAS)
nvfp4_gemv_cudacore(const unsigned char* __restrict__ a, const unsigned char* __restrict__ b,
                    const unsigned char* __restrict__ sfa, const unsigned char* __restrict__ sfb,
                    unsigned short* __restrict__ c, int M, int K, int L) {
  constexpr int R = GEMV_FLAT_R, CAP = GEMV_FLAT_CAP;
  __shared__ float red[CAP][GEMV_WARPS][R];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int l = blockIdx.y;
  const int nch = K >> 5, kb2 = K >> 1, kb16 = K >> 4;
  const int P = GEMV_THREADS / nch;  // row slots
  const int ch = t % nch, p = t / nch;
  const int wpr = nch >> 5;          // warps per row slot
  const int rows_round = P * R;
  const int G = gridDim.x, x = blockIdx.x;
#if GEMV_FLAT_RR
  // opt-in: row blocks of rows_round rows dealt round-robin (block x + j * G in round j), the order measured on the
  // H100 in 2026-11-22; the matrix's last block may be partial (its rows past M re-read row M - 1, not stored)
  const int r0 = 0, n = M;
  const int nround = ((M + rows_round - 1) / rows_round - x + G - 1) / G;
  const int skip = 0;
#else
  // this CTA's rows: [r0, r0 + n), balanced over the grid
  const int per = M / G, extra = M % G;
  const int r0 = x * per + (x < extra ? x : extra);
  const int n = per + (x < extra ? 1 : 0);
  const int nround = (n + rows_round - 1) / rows_round;
  // the range's first round is the partial one: it starts `skip` rows before the range, so every later round is
  // whole; local row of (round j, i) = p + P * (j * R + i) - skip
  const int skip = nround * rows_round - n;
#endif
  // first local row of round j (row slot 0, i = 0)
  auto round_row = [&](int j) { return GEMV_FLAT_RR ? (x + j * G) * rows_round : P * R * j - skip; };
  const unsigned char* abase = a + ((size_t)l * M + r0) * (size_t)kb2 + 16 * ch;
  const unsigned char* sbase = sfa + ((size_t)l * M + r0) * (size_t)kb16 + 2 * ch;
  unsigned short* cbase = c + (size_t)l * M + r0;
#if GEMV_HW_E2M1
  const Tabs tabs{};
#else
  const unsigned opaque0 = (unsigned)(t + (int)blockIdx.x) >> 31;  // 0 (see the register variant)
  const Tabs tabs{GEMV_T_POS_LO | opaque0, GEMV_T_REV_LO | opaque0, 0x10000u | opaque0};
#endif
  unsigned bq[16];
  decode_b(ld_keep16(b + (size_t)l * 128 * kb2 + 16 * ch), bq, tabs);
  const Sb sb = sb_decode(ld_keep2(sfb + (size_t)l * 128 * kb16 + 2 * ch));

  auto load = [&](FlatRound& fr, int j) {
    const int k0 = round_row(j) + p;
#pragma unroll
    for (int i = 0; i < R; ++i) {
      // rows outside the range (the first round; with GEMV_FLAT_RR the matrix's last block) re-read its first
      // (last) row and are not stored: straight-line code, no branch or predicate (the timing model's PTX-SASS join
      // loses loads that ptxas if-converts)
#if GEMV_FLAT_RR
      const int rl = min(k0 + P * i, n - 1);
#else
      const int rl = max(k0 + P * i, 0);
#endif
      const unsigned off = (unsigned)rl * (unsigned)kb2;
      fr.a[i] = ld_stream16(abase + off);
      fr.sa[i] = ld_stream2(sbase + (off >> 3));  // kb16 = kb2 / 8
    }
  };
  // the partials of rounds [j0, j1) (all in the buffer): each row's wpr warp partials added in warp order, stored
  auto flush = [&](int j0, int j1) {
    __syncthreads();
    const int nrow = (j1 - j0) * rows_round;
    for (int q = t; q < nrow; q += GEMV_THREADS) {
      const int jj = q / rows_round, rem = q - jj * rows_round;
      const int pp = rem / R, ii = rem - pp * R;
      const int rl = round_row(j0 + jj) + pp + P * ii;
      const int slot = (j0 + jj) % CAP;
      float s = 0.0f;
      for (int w = pp * wpr; w < (pp + 1) * wpr; ++w) s += red[slot][w][ii];
#if GEMV_FLAT_RR
      if (rl < n) store_c(cbase + rl, s);
#else
      if (rl >= 0) store_c(cbase + rl, s);
#endif
    }
    if (j1 < nround) __syncthreads();  // the buffer is rewritten by the next rounds
  };
  int j_flushed = 0;
  auto finish = [&](const FlatRound& fr, int j) {
    float acc[R];
#pragma unroll
    for (int i = 0; i < R; ++i) {
      float s0, s1;
      scale_pair(fr.sa[i], sb, s0, s1);
      acc[i] = chunk_dot(fr.a[i], s0, s1, bq, 0.0f, tabs);
    }
    int ridx;
    const float v = reduce_rows<R>(acc, lane, ridx);
    if ((lane & (32 / R - 1)) == 0) red[j % CAP][warp][ridx] = v;
    if (j + 1 == nround || j + 1 - j_flushed == CAP) {
      flush(j_flushed, j + 1);
      j_flushed = j + 1;
    }
  };

#if GEMV_PREFETCH
  FlatRound f0, f1;
  load(f0, 0);  // nround >= 1: every CTA has a row (the host launches at most M CTAs per batch)
  for (int j = 0; j < nround; j += 2) {
    if (j + 1 < nround) load(f1, j + 1);
    finish(f0, j);
    if (j + 1 >= nround) break;
    if (j + 2 < nround) load(f0, j + 2);
    finish(f1, j + 1);
  }
#else
  for (int j = 0; j < nround; ++j) {
    FlatRound fr;
    load(fr, j);
    finish(fr, j);
  }
#endif
}
#else  // GEMV_FLAT
extern "C" __global__ void __launch_bounds__(GEMV_THREADS, GEMV_MIN_CTAS)
nvfp4_gemv_cudacore(const unsigned char* __restrict__ a, const unsigned char* __restrict__ b,
                    const unsigned char* __restrict__ sfa, const unsigned char* __restrict__ sfb,
                    unsigned short* __restrict__ c, int M, int K, int L) {
  constexpr int R = GEMV_ROWS_PER_WARP;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int ks = warp % GEMV_KSPLIT;   // which rounds of K this warp takes
  const int grp = warp / GEMV_KSPLIT;  // which row group of the CTA
  const int l = blockIdx.y;
  const int row0 = (blockIdx.x * GEMV_GROUPS + grp) * R;
  const int kb16 = K >> 4;
  const int nchunk = K >> 5;  // 16-byte chunks per row
  const int nround = (nchunk + 32 * GEMV_UNROLL - 1) / (32 * GEMV_UNROLL);
  // rows past M (tail CTA) re-read row M-1 (or row0 when row0 >= M) and are not stored; offsets in units of K/16
  const int rbase = row0 < M ? row0 : M - 1;
  unsigned roff[R];
#pragma unroll
  for (int r = 0; r < R; ++r) roff[r] = (unsigned)((row0 + r < M ? row0 + r : M - 1) - rbase) * (unsigned)kb16;
  const unsigned char* arow = a + ((size_t)l * M + rbase) * (size_t)(K >> 1);
  const unsigned char* srow = sfa + ((size_t)l * M + rbase) * (size_t)kb16;
  const unsigned char* brow = b + (size_t)l * 128 * (size_t)(K >> 1);
  const unsigned char* sbrow = sfb + (size_t)l * 128 * (size_t)kb16;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
#if GEMV_HW_E2M1
  const Tabs tabs{};
#else
  // row0 + lane < 2^31, so this is 0: the tables are unchanged, but ptxas cannot fold them into a uniform register
  // (from which it would re-materialize them before every PRMT) and keeps them in two ordinary registers
  const unsigned opaque0 = (unsigned)(row0 + lane) >> 31;
  const Tabs tabs{GEMV_T_POS_LO | opaque0, GEMV_T_REV_LO | opaque0, 0x10000u | opaque0};
#endif

#if GEMV_PREFETCH
  Round r0, r1;
  int j = ks;
  if (j < nround) load_round(r0, j, lane, nchunk, arow, srow, roff, brow, sbrow);
  for (; j < nround; j += 2 * GEMV_KSPLIT) {
    if (j + GEMV_KSPLIT < nround) load_round(r1, j + GEMV_KSPLIT, lane, nchunk, arow, srow, roff, brow, sbrow);
    compute_round(r0, j, nchunk, acc, tabs);
    if (j + GEMV_KSPLIT >= nround) break;
    if (j + 2 * GEMV_KSPLIT < nround)
      load_round(r0, j + 2 * GEMV_KSPLIT, lane, nchunk, arow, srow, roff, brow, sbrow);
    compute_round(r1, j + GEMV_KSPLIT, nchunk, acc, tabs);
  }
#else
  for (int j = ks; j < nround; j += GEMV_KSPLIT) {
    Round rd;
    load_round(rd, j, lane, nchunk, arow, srow, roff, brow, sbrow);
    compute_round(rd, j, nchunk, acc, tabs);
  }
#endif

  int ridx;
  float v = reduce_rows<R>(acc, lane, ridx);
  const bool owner = (lane & (32 / R - 1)) == 0;  // one lane per row
#if GEMV_KSPLIT > 1
  __shared__ float red[GEMV_GROUPS][GEMV_KSPLIT][R];
  if (owner) red[grp][ks][ridx] = v;
  __syncthreads();
  if (ks != 0) return;
  if (owner) {
    v = red[grp][0][ridx];
#pragma unroll
    for (int s = 1; s < GEMV_KSPLIT; ++s) v += red[grp][s][ridx];
  }
#endif
  if (owner && row0 + ridx < M) store_c(c + (size_t)l * M + row0 + ridx, v);
}
#endif  // GEMV_FLAT
