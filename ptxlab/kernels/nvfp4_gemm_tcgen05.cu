// ptxlab/kernels/nvfp4_gemm_tcgen05.cu -- fused NVFP4 block-scaled GEMM for sm_100a (tcgen05 + TMA + TMEM).
//
// c[m, n, l] = fp16( sum_k e2m1(a[m,k]) * ue4m3(sfa[m,k/16]) * e2m1(b[n,k]) * ue4m3(sfb[n,k/16]) )   (gpu-mode nvfp4_gemm)
//
// Built only from the graduated building blocks in blocks/*.cuh (common, mbarrier, tma, tmem, scales, mma, epilogue);
// this file adds the schedule (roles, pipeline, TMEM plan) and no PTX of its own.
//
// CTA = one 128 x BN output tile (blockIdx.x = m tile, blockIdx.y = n tile, blockIdx.z = batch l); 192 threads:
//   warp 0      producer: one elected lane issues, per K block of 256 (128 B of packed fp4), into stage s:
//                 A box {128 B, 128 rows, 1}, B box {128 B, BN rows, 1} (3-D UINT8 maps, SWIZZLE_128B),
//                 SFA box {128 B, 16 rows} = 4 x 512-B SF blocks, SFB: BN/128 such boxes (one per 128 N rows),
//               all completing on full[s] (arrive.expect_tx with the sum of the box bytes).
//   warp 1      MMA: one elected lane waits full[s], tcgen05.cp's the SF blocks of the stage into the stage's own
//                 TMEM SF columns, issues 4 x tcgen05.mma.kind::mxf4nvf4.block_scale.block16 (128 x BN x 64),
//                 tcgen05.commit -> empty[s]; after the last K block tcgen05.commit -> acc_full.
//               Warp 1 also allocates / frees TMEM.
//   warps 2..5  epilogue: wait acc_full (parity 0), tcgen05.ld 32x32b over their lane quarter (warp % 4), fp32 ->
//                 fp16, store c in gpu-mode order (L, M, N): c[(l*M + m)*N + n].
//
// Pipeline (STAGES-deep ring, blocks/mbarrier.cuh PipeState): full[s] count 1 (+ tx bytes), empty[s] count 1
// (tcgen05.commit). Producer waits empty[s] with parity phase^1 (fresh barriers pass), MMA waits full[s] with
// parity phase.
//
// TMEM plan (columns; lanes 0..127 = tile rows):
//   D (fp32 accumulator)     [0, BN)
//   SFA of stage s, chunk j  BN + 16 s + 4 j                    (4 columns: rows 32c + lane)
//   SFB of stage s, chunk j  BN + 16 STAGES + SFB_CH * (4 s + j) (SFB_CH = 4 * BN/128 columns, 4 per 128 N rows)
// SF columns are per stage slot: a slot's columns are rewritten (tcgen05.cp) only after the producer saw empty[s]
// for the MMAs that read them (producer wait empty -> TMA -> full -> MMA thread's wait), since mma -> cp is not a
// PTX-pipelined pair.
//
// Requirements (host checks them): M % 128 == 0, N % BN == 0, K % 256 == 0.
//
// Split-K (opt-in, -DGEMM_SPLITS=S with S >= 2; default 1 compiles exactly the code above, no extra parameters):
//   grid z = L * S, blockIdx.z = l * S + split; split s runs K blocks [floor(s KB / S), floor((s+1) KB / S)) of the
//   KB = K/256 (uneven splits allowed; host requires S <= KB so every split has at least one block). The kernel
//   takes two more parameters: ws, the fp32 workspace, and counters, one u32 per output tile
//   ((l * M/128 + m_tile) * N/BN + n_tile), zero before the first launch and left zero by every launch (each resets
//   itself: atom.inc wraps on the last arrival). Two reductions (blocks/splitk.cuh; memory ordering there):
//   * ordered (default, DETERMINISTIC): ws holds S slots of L*M*N fp32 (split s's partial tile in slot s, chunk-major
//     [BN/4][128][4] per tile); every split stores its partial, arrives on the counter; the CTA that arrives last sums
//     the S partials in split order (its own from TMEM) and writes c. No zeroing needed.
//   * atomic (-DGEMM_SPLITK_ATOMIC=1, opt-in, NON-DETERMINISTIC: fp32 adds in arrival order): ws is one zeroed
//     L*M*N fp32 tile image; red.add.v4.f32 of every partial, then the last arriver reads the sum, writes c (fp16)
//     and zeroes its tile.

// 2-SM (opt-in, -DGEMM_PAIR=1; not with split-K): CTA pairs in (2,1,1) clusters run one tcgen05.mma.cta_group::2 of
// M = 256 per K chunk over a 256 x BN tile; schedule and data split in gemm::run_pair below. Same kernel parameters;
// grid (2 * ceil(M/256), N/BN, L); the B tensor map's box is {128 B, BN/2 rows}.
#include "blocks/common.cuh"
#include "blocks/mbarrier.cuh"
#include "blocks/tma.cuh"
#include "blocks/tmem.cuh"
#include "blocks/scales.cuh"
#include "blocks/mma.cuh"
#include "blocks/epilogue.cuh"
#include "blocks/splitk.cuh"
#include "blocks/pair.cuh"

#ifndef GEMM_BN
#define GEMM_BN 256
#endif
#ifndef GEMM_STAGES
#define GEMM_STAGES 4
#endif
#ifndef GEMM_SPLITS
#define GEMM_SPLITS 1
#endif
#ifndef GEMM_PAIR
#define GEMM_PAIR 0
#endif
#ifndef GEMM_SPLITK_ATOMIC
#define GEMM_SPLITK_ATOMIC 0
#endif
#if GEMM_PAIR && GEMM_SPLITS > 1
#error "GEMM_PAIR (2-SM) and GEMM_SPLITS (split-K) cannot be combined"
#endif
#if GEMM_SPLITS < 1
#error "GEMM_SPLITS must be >= 1"
#endif

using namespace ptxlab;

namespace gemm {

constexpr u32 BM = 128;
constexpr u32 BK_BYTES = 128;                 // 256 fp4 per K block = 4 MMA chunks of 64
constexpr u32 SF_BOX_BYTES = 2048;            // 4 x 512-B SF blocks (128 rows x 256 K)
constexpr u32 NUM_THREADS = 192;
constexpr u32 EPI_WARP0 = 2;
constexpr u32 EPI_COLS = 16;                  // columns per epilogue tcgen05.ld (blocks/epilogue.cuh ld_32x32b<16>)
#if GEMM_SPLITS > 1
constexpr u32 EPI_THREADS = 128;
constexpr u32 EPI_BAR = 1;                    // named barrier of the epilogue warps (split-K fixup); 0 = __syncthreads
#endif

// Barrier wait: blocks/mbarrier.cuh mbar_wait_or_trap (unbounded, or trapping with -DPTXLAB_WAIT_PROBES=n).
__device__ __forceinline__ void wait(u32 bar, u32 parity) { mbar_wait_or_trap(bar, parity); }

template <u32 BN> struct Cfg {
  static_assert(BN % 128 == 0 && BN <= 256, "BN: 128 or 256 (SFB blocks cover 128 N rows; UMMA N <= 256)");
  static constexpr u32 A_BYTES = BM * BK_BYTES;                  // 16 KiB
  static constexpr u32 B_BYTES = BN * BK_BYTES;                  // 16 / 32 KiB
  static constexpr u32 SFA_BYTES = SF_BOX_BYTES;
  static constexpr u32 SFB_BYTES = SF_BOX_BYTES * (BN / 128);
  static constexpr u32 STAGE_BYTES = A_BYTES + B_BYTES + SFA_BYTES + SFB_BYTES;
  static constexpr u32 TX_BYTES = STAGE_BYTES;                   // every byte of the stage comes from one TMA box
  static constexpr u32 SFB_CH = 4 * (BN / 128);                  // SFB TMEM columns per MMA chunk
  static_assert(STAGE_BYTES % 1024 == 0, "stages must stay 1024-B aligned for SWIZZLE_128B");
};

template <u32 BN, u32 S> struct Tmem {
  static constexpr u32 D_COL = 0;
  static constexpr u32 SFA_COL = BN;
  static constexpr u32 SFB_COL = BN + 16 * S;
  static constexpr u32 USED = SFB_COL + S * 4 * Cfg<BN>::SFB_CH;
  static constexpr u32 NCOLS = USED <= 32 ? 32 : USED <= 64 ? 64 : USED <= 128 ? 128 : USED <= 256 ? 256 : 512;
  static_assert(USED <= 512, "TMEM plan exceeds 512 columns: fewer stages");
};

template <u32 BN, u32 S>
__device__ __forceinline__ void run(const TmaDesc* tm_a, const TmaDesc* tm_b, const TmaDesc* tm_sfa,
                                    const TmaDesc* tm_sfb, unsigned short* c, u32 M, u32 N, u32 K
#if GEMM_SPLITS > 1
                                    , float* ws, u32* counters
#endif
                                    ) {
  typedef Cfg<BN> C;
  typedef Tmem<BN, S> T;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full_bar[S], empty_bar[S], acc_full;
  __shared__ u32 tmem_slot;
#if GEMM_SPLITS > 1
  __shared__ u32 split_slot;
#endif

  // hardware does not promise 1024-B alignment of dynamic SMEM: round up (host adds 1024 B of slack)
  const u32 raw = smem_u32(smem_raw);
  const u32 base = (raw + 1023u) & ~1023u;
  const u32 warp = warp_idx_sync();
#if GEMM_SPLITS > 1
  const u32 m_tile = blockIdx.x, n_tile = blockIdx.y, l = blockIdx.z / GEMM_SPLITS;
  const u32 split = blockIdx.z % GEMM_SPLITS;
  const u32 kb_begin = (u32)((u64)split * (K / 256u) / GEMM_SPLITS);        // this split's K blocks: [kb_begin,
  const u32 num_kb = (u32)((u64)(split + 1u) * (K / 256u) / GEMM_SPLITS);   //  num_kb)
#else
  const u32 m_tile = blockIdx.x, n_tile = blockIdx.y, l = blockIdx.z;
  const u32 kb_begin = 0;
  const u32 num_kb = K / 256u;
#endif
  const u32 rest_k = K / 64u;                                   // 512-B SF blocks per 128 rows
  const u32 rest_m = M / 128u, rest_n = N / 128u;

  if (threadIdx.x == 0) {
    for (u32 s = 0; s < S; ++s) {
      mbar_init(smem_u32(&full_bar[s]), 1u);
      mbar_init(smem_u32(&empty_bar[s]), 1u);
    }
    mbar_init(smem_u32(&acc_full), 1u);
    fence_mbarrier_init();
  }
  if (warp == 0 && elect_one_sync()) {
    tma_prefetch_desc(tm_a); tma_prefetch_desc(tm_b); tma_prefetch_desc(tm_sfa); tma_prefetch_desc(tm_sfb);
  }
  __syncwarp();
  // warp 1 allocates (and relinquishes); contains __syncthreads + tcgen05 fences, so barrier inits are visible too
  const u32 tmem = tmem_alloc_cta(smem_u32(&tmem_slot), T::NCOLS, 1u, true);

  if (warp == 0) {
    // ------------------------------------------------------------------ producer (TMA)
    if (elect_one_sync()) {
      PipeState<S> ps;
      for (u32 kb = kb_begin; kb < num_kb; ++kb, ps.advance()) {
        const u32 full = smem_u32(&full_bar[ps.stage]);
        wait(smem_u32(&empty_bar[ps.stage]), ps.phase ^ 1u);
        mbar_arrive_expect_tx(full, C::TX_BYTES);
        const u32 dst = base + ps.stage * C::STAGE_BYTES;
        tma_load_3d(dst, tm_a, full, (int)(kb * BK_BYTES), (int)(m_tile * BM), (int)l);
        tma_load_3d(dst + C::A_BYTES, tm_b, full, (int)(kb * BK_BYTES), (int)(n_tile * BN), (int)l);
        // SF block (l, mn_blk, k_blk) starts at 128-B row 4 * ((l * rest_mn + mn_blk) * rest_k + k_blk)
        tma_load_2d(dst + C::A_BYTES + C::B_BYTES, tm_sfa, full, 0,
                    (int)(4u * ((l * rest_m + m_tile) * rest_k + 4u * kb)));
#pragma unroll
        for (u32 h = 0; h < BN / 128; ++h)
          tma_load_2d(dst + C::A_BYTES + C::B_BYTES + C::SFA_BYTES + h * SF_BOX_BYTES, tm_sfb, full, 0,
                      (int)(4u * ((l * rest_n + n_tile * (BN / 128) + h) * rest_k + 4u * kb)));
      }
    }
    __syncwarp();
  } else if (warp == 1) {
    // ------------------------------------------------------------------ MMA issuer
    if (elect_one_sync()) {
      const u32 idesc = mma::idesc_nvfp4(BN);
      PipeState<S> ps;
      for (u32 kb = kb_begin; kb < num_kb; ++kb, ps.advance()) {
        const u32 s = ps.stage;
        wait(smem_u32(&full_bar[s]), ps.phase);
        tmem_fence_after_sync();
        const u32 sa = base + s * C::STAGE_BYTES, sb = sa + C::A_BYTES;
        const u32 ssfa = sb + C::B_BYTES, ssfb = ssfa + C::SFA_BYTES;
        const u32 sfa_t = tmem + T::SFA_COL + 16u * s;
        const u32 sfb_t = tmem + T::SFB_COL + 4u * C::SFB_CH * s;
#pragma unroll
        for (u32 j = 0; j < 4; ++j) {
          sf_copy_32x128b_warpx4(sfa_t + 4u * j, sf_block_desc(ssfa + 512u * j));
#pragma unroll
          for (u32 h = 0; h < BN / 128; ++h)
            sf_copy_32x128b_warpx4(sfb_t + C::SFB_CH * j + 4u * h, sf_block_desc(ssfb + h * SF_BOX_BYTES + 512u * j));
        }
        const u64 da = mma::smem_desc_sw128(sa), db = mma::smem_desc_sw128(sb);
#pragma unroll
        for (u32 j = 0; j < 4; ++j)
          mma::mma_nvfp4(tmem + T::D_COL, mma::desc_advance_k(da, j), mma::desc_advance_k(db, j), idesc,
                         sfa_t + 4u * j, sfb_t + C::SFB_CH * j, ((kb - kb_begin) | j) != 0u);
        mma::commit_arrive(smem_u32(&empty_bar[s]));       // stage s free once these MMAs (and cps) completed
      }
      mma::commit_arrive(smem_u32(&acc_full));              // accumulator complete
    }
    __syncwarp();
  } else {
    // ------------------------------------------------------------------ epilogue (warps 2..5 -> lane quarters 2,3,0,1)
    wait(smem_u32(&acc_full), 0u);
#if GEMM_SPLITS > 1
    // split-K: the tile's S partials are reduced through ws by the last arriving split (blocks/splitk.cuh)
    const u32 row_in_tile = 32u * (warp & 3u) + (threadIdx.x & 31u);
    const u32 row = m_tile * BM + row_in_tile;                               // M % 128 == 0: always < M
    const u64 off = ((u64)l * M + row) * N + n_tile * BN;
    const u32 tile = (l * (M / BM) + m_tile) * (N / BN) + n_tile;
    unsigned short* c_row = c + off;
#if GEMM_SPLITK_ATOMIC
    float* ws_row = ws + off;
#pragma unroll 1
    for (u32 n0 = 0; n0 < BN; n0 += EPI_COLS) {
      u32 r[EPI_COLS];
      epi::load_accum<EPI_COLS>(tmem, T::D_COL + n0, r);
#pragma unroll
      for (u32 q = 0; q < EPI_COLS; q += 4)
        splitk::red_add_v4_f32(ws_row + n0 + q, r[q], r[q + 1], r[q + 2], r[q + 3]);
    }
    if (splitk::tile_arrive(counters + tile, GEMM_SPLITS, &split_slot, threadIdx.x == EPI_WARP0 * 32u, EPI_BAR,
                            EPI_THREADS)) {
#pragma unroll 1
      for (u32 n0 = 0; n0 < BN; n0 += EPI_COLS) {                          // 4 loads in flight per batch
        u32 v[EPI_COLS / 4][4];
#pragma unroll
        for (u32 q = 0; q < EPI_COLS / 4; ++q) splitk::ld_relaxed_v4(ws_row + n0 + 4 * q, v[q]);
#pragma unroll
        for (u32 q = 0; q < EPI_COLS / 4; ++q) {
          splitk::st_zero_v4(ws_row + n0 + 4 * q);
          *reinterpret_cast<u64*>(c_row + n0 + 4 * q) = epi::f16x4_bits(v[q]);   // 8-B aligned: N % 128 == 0
        }
      }
    }
#else
    const u64 slot_stride = (u64)(gridDim.z / GEMM_SPLITS) * M * N;         // floats per slot: L * M * N
    float* ws_tile0 = ws + (u64)tile * BM * BN;                              // this tile in slot 0
#pragma unroll 1
    for (u32 n0 = 0; n0 < BN; n0 += EPI_COLS) {
      u32 r[EPI_COLS];
      epi::load_accum<EPI_COLS>(tmem, T::D_COL + n0, r);
#pragma unroll
      for (u32 q = 0; q < EPI_COLS; q += 4)
        splitk::st_v4(splitk::slot_v4(ws_tile0 + split * slot_stride, (n0 + q) / 4u, row_in_tile), r[q], r[q + 1],
                      r[q + 2], r[q + 3]);
    }
    if (splitk::tile_arrive(counters + tile, GEMM_SPLITS, &split_slot, threadIdx.x == EPI_WARP0 * 32u, EPI_BAR,
                            EPI_THREADS)) {
#pragma unroll 1
      for (u32 n0 = 0; n0 < BN; n0 += EPI_COLS) {
        u32 r[EPI_COLS];
        epi::load_accum<EPI_COLS>(tmem, T::D_COL + n0, r);                   // this split's partial, still in TMEM
        u32 acc[EPI_COLS];
        splitk::ordered_sum_16<GEMM_SPLITS>(ws_tile0, slot_stride, GEMM_SPLITS, split, n0 / 4u, row_in_tile, r, acc);
#pragma unroll
        for (u32 q = 0; q < EPI_COLS; q += 4) {
          const u32 a4[4] = {acc[q], acc[q + 1], acc[q + 2], acc[q + 3]};
          *reinterpret_cast<u64*>(c_row + n0 + q) = epi::f16x4_bits(a4);
        }
      }
    }
#endif
#else
    unsigned short* c_tile = c + n_tile * BN;
#pragma unroll 1
    for (u32 n0 = 0; n0 < BN; n0 += EPI_COLS)
      epi::store_tile_f16<EPI_COLS>(tmem, T::D_COL + n0, c_tile + n0, m_tile * BM, M, N, EPI_COLS, l);
#endif
  }

  tmem_dealloc_cta(tmem, T::NCOLS, 1u);
}

#if GEMM_PAIR
// ------------------------------------------------------------------ 2-SM schedule (built with -DGEMM_PAIR=1)
// Every .cta_group::2 instruction comes from blocks/pair.cuh (operand placement over the pair:
// ptx_docs/tcgen05_cta_pair.md).
//
// Launch: cluster (2,1,1), grid (2 * ceil(M/256), N/BN, L), 192 threads. CTA pair p = blockIdx.x / 2 computes output
// rows 256p .. 256p+255 (x BN columns) with one tcgen05.mma.cta_group::2 (M = 256, N = BN, K = 64) per K chunk;
// CTA v = %cluster_ctarank & 1 owns rows 256p + 128v .. (its 128-row m tile = blockIdx.x). Per K block of 256 each CTA
// loads, into its own SMEM stage s:
//   A  box {128 B, 128 rows}        its own 128 rows,
//   B  box {128 B, BN/2 rows}       B rows n_tile*BN + v*BN/2 .. (the pair loads the B tile ONCE, split by N),
//   SFA                             its own 4 x 512-B SF blocks,
//   SFB                             all BN/128 boxes of the tile; with BN = 256 CTA v loads box v and multicasts it
//                                   to both CTAs of the pair (one L2 read per box), with BN = 128 the even CTA does;
// every load completes (.cta_group::2) on the EVEN CTA's full[s], which expects the bytes of both CTAs.
//   warp 0      producer (both CTAs): waits its own empty[s], issues the loads (the even CTA also arrive.expect_tx).
//   warp 1      TMEM: pair alloc / dealloc in both CTAs. Even CTA only: waits full[s], copies the SF blocks of the
//               stage into both CTAs' TMEM (tcgen05.cp.cta_group::2: each CTA its own SMEM), issues 4 pair MMAs,
//               tcgen05.commit.cta_group::2 .multicast::cluster -> empty[s] of both CTAs; at the end -> acc_full of
//               both CTAs.
//   warps 2..5  epilogue (both CTAs): wait their own acc_full, tcgen05.ld their own TMEM, fp16 store of rows
//               m_tile*128 + .. (rows >= M are not stored: with M % 256 == 128 the last pair's odd CTA only helps
//               with B; its A rows are out of bounds, zero-filled by TMA).
// TMEM plan: gemm::Tmem<BN, S> in both CTAs (same columns: the pair allocates collectively).
template <u32 BN> struct PairCfg {
  static_assert(BN % 128 == 0 && BN <= 256, "BN: 128 or 256");
  static constexpr u32 A_BYTES = BM * BK_BYTES;                  // 16 KiB: this CTA's 128 rows
  static constexpr u32 B_BYTES = (BN / 2) * BK_BYTES;            // 8 / 16 KiB: this CTA's half of the N tile
  static constexpr u32 SFA_BYTES = SF_BOX_BYTES;
  static constexpr u32 SFB_BYTES = SF_BOX_BYTES * (BN / 128);
  static constexpr u32 STAGE_BYTES = A_BYTES + B_BYTES + SFA_BYTES + SFB_BYTES;
  static constexpr u32 TX_BYTES = 2 * STAGE_BYTES;               // the even CTA's full[s] counts both CTAs' bytes
  static constexpr u32 SFB_CH = 4 * (BN / 128);
  static_assert(STAGE_BYTES % 1024 == 0, "stages must stay 1024-B aligned for SWIZZLE_128B");
};

template <u32 BN, u32 S>
__device__ __forceinline__ void run_pair(const TmaDesc* tm_a, const TmaDesc* tm_b, const TmaDesc* tm_sfa,
                                         const TmaDesc* tm_sfb, unsigned short* c, u32 M, u32 N, u32 K) {
  typedef PairCfg<BN> C;
  typedef Tmem<BN, S> T;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full_bar[S], empty_bar[S], acc_full;
  __shared__ u32 tmem_slot;

  const u32 raw = smem_u32(smem_raw);
  const u32 base = (raw + 1023u) & ~1023u;
  const u32 warp = warp_idx_sync();
  const u32 rank = pair::cluster_ctarank(), v = rank & 1u, even = rank & ~1u;
  const unsigned short pair_mask = (unsigned short)(3u << even);
  const u32 m_tile = blockIdx.x, n_tile = blockIdx.y, l = blockIdx.z;   // m_tile = 2p + v
  const u32 num_kb = K / 256u, rest_k = K / 64u, rest_m = M / 128u, rest_n = N / 128u;

  if (threadIdx.x == 0) {
    for (u32 s = 0; s < S; ++s) {
      mbar_init(smem_u32(&full_bar[s]), 1u);
      mbar_init(smem_u32(&empty_bar[s]), 1u);
    }
    mbar_init(smem_u32(&acc_full), 1u);
    fence_mbarrier_init();                                     // .release.cluster: the peer signals these barriers
  }
  if (warp == 0 && elect_one_sync()) {
    tma_prefetch_desc(tm_a); tma_prefetch_desc(tm_b); tma_prefetch_desc(tm_sfa); tma_prefetch_desc(tm_sfb);
  }
  __syncwarp();
  // warp 1 of each CTA allocates the pair's TMEM; the cluster barrier inside also publishes both CTAs' barriers
  const u32 tmem = pair::tmem_alloc_cluster(smem_u32(&tmem_slot), T::NCOLS, 1u);

  if (warp == 0) {
    // ------------------------------------------------------------------ producer (both CTAs)
    if (elect_one_sync()) {
      PipeState<S> ps;
      for (u32 kb = 0; kb < num_kb; ++kb, ps.advance()) {
        const u32 full = pair::mapa(smem_u32(&full_bar[ps.stage]), even);   // the even CTA's full[s]
        wait(smem_u32(&empty_bar[ps.stage]), ps.phase ^ 1u);
        if (v == 0) mbar_arrive_expect_tx(smem_u32(&full_bar[ps.stage]), C::TX_BYTES);
        const u32 dst = base + ps.stage * C::STAGE_BYTES;
        pair::tma_load_3d(dst, tm_a, full, (int)(kb * BK_BYTES), (int)(m_tile * BM), (int)l);
        pair::tma_load_3d(dst + C::A_BYTES, tm_b, full, (int)(kb * BK_BYTES), (int)(n_tile * BN + v * (BN / 2)),
                          (int)l);
        pair::tma_load_2d(dst + C::A_BYTES + C::B_BYTES, tm_sfa, full, 0,
                          (int)(4u * ((l * rest_m + m_tile) * rest_k + 4u * kb)));
#pragma unroll
        for (u32 h = 0; h < BN / 128; ++h)
          if ((BN / 128 == 2 && h == v) || (BN / 128 == 1 && v == 0))
            pair::tma_load_2d_multicast(dst + C::A_BYTES + C::B_BYTES + C::SFA_BYTES + h * SF_BOX_BYTES, tm_sfb, full,
                                        0, (int)(4u * ((l * rest_n + n_tile * (BN / 128) + h) * rest_k + 4u * kb)),
                                        pair_mask);
      }
    }
    __syncwarp();
  } else if (warp == 1) {
    // ------------------------------------------------------------------ MMA issuer (the even CTA of the pair)
    if (v == 0 && elect_one_sync()) {
      const u32 idesc = pair::idesc_nvfp4_m256(BN);
      PipeState<S> ps;
      for (u32 kb = 0; kb < num_kb; ++kb, ps.advance()) {
        const u32 s = ps.stage;
        wait(smem_u32(&full_bar[s]), ps.phase);
        tmem_fence_after_sync();
        const u32 sa = base + s * C::STAGE_BYTES, sb = sa + C::A_BYTES;
        const u32 ssfa = sb + C::B_BYTES, ssfb = ssfa + C::SFA_BYTES;
        const u32 sfa_t = tmem + T::SFA_COL + 16u * s;
        const u32 sfb_t = tmem + T::SFB_COL + 4u * C::SFB_CH * s;
#pragma unroll
        for (u32 j = 0; j < 4; ++j) {
          pair::sf_copy_32x128b_warpx4(sfa_t + 4u * j, sf_block_desc(ssfa + 512u * j));
#pragma unroll
          for (u32 h = 0; h < BN / 128; ++h)
            pair::sf_copy_32x128b_warpx4(sfb_t + C::SFB_CH * j + 4u * h,
                                         sf_block_desc(ssfb + h * SF_BOX_BYTES + 512u * j));
        }
        const u64 da = mma::smem_desc_sw128(sa), db = mma::smem_desc_sw128(sb);
#pragma unroll
        for (u32 j = 0; j < 4; ++j)
          pair::mma_nvfp4(tmem + T::D_COL, mma::desc_advance_k(da, j), mma::desc_advance_k(db, j), idesc,
                          sfa_t + 4u * j, sfb_t + C::SFB_CH * j, (kb | j) != 0u);
        pair::commit_multicast(smem_u32(&empty_bar[s]), pair_mask);   // stage s free in both CTAs
      }
      pair::commit_multicast(smem_u32(&acc_full), pair_mask);         // both CTAs' accumulators complete
    }
    __syncwarp();
  } else {
    // ------------------------------------------------------------------ epilogue (both CTAs, own TMEM)
    wait(smem_u32(&acc_full), 0u);
    unsigned short* c_tile = c + n_tile * BN;
#pragma unroll 1
    for (u32 n0 = 0; n0 < BN; n0 += EPI_COLS)
      epi::store_tile_f16<EPI_COLS>(tmem, T::D_COL + n0, c_tile + n0, m_tile * BM, M, N, EPI_COLS, l);
  }

  pair::tmem_dealloc_cluster(tmem, T::NCOLS, 1u);             // every TMEM / peer access of the pair is over
}
#endif  // GEMM_PAIR

}  // namespace gemm

extern "C" __global__ void __launch_bounds__(gemm::NUM_THREADS, 1)
nvfp4_gemm_tcgen05(const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b,
                   const __grid_constant__ TmaDesc tm_sfa, const __grid_constant__ TmaDesc tm_sfb,
                   unsigned short* __restrict__ c, u32 M, u32 N, u32 K
#if GEMM_SPLITS > 1
                   , float* __restrict__ ws, u32* __restrict__ counters
#endif
                   ) {
#if GEMM_PAIR
  gemm::run_pair<GEMM_BN, GEMM_STAGES>(&tm_a, &tm_b, &tm_sfa, &tm_sfb, c, M, N, K);
#elif GEMM_SPLITS > 1
  gemm::run<GEMM_BN, GEMM_STAGES>(&tm_a, &tm_b, &tm_sfa, &tm_sfb, c, M, N, K, ws, counters);
#else
  gemm::run<GEMM_BN, GEMM_STAGES>(&tm_a, &tm_b, &tm_sfa, &tm_sfb, c, M, N, K);
#endif
}
