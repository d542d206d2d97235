// ptxlab/kernels/nvfp4_gemm_cluster.cu -- NVFP4 block-scaled GEMM for sm_100a with narrow N tiles, the A operand
// multicast over a cluster of CTAs along N, and a TMA-store epilogue (the small-M design: gpu-mode's benchmark shapes
// have M = 128, so c is a stream of B and every CTA needs all 128 rows of A).
//
// c[m, n, l] = fp16( sum_k e2m1(a[m,k]) * ue4m3(sfa[m,k/16]) * e2m1(b[n,k]) * ue4m3(sfb[n,k/16]) )   (gpu-mode nvfp4_gemm)
//
// Built from the graduated blocks (common, mbarrier, tma, tmem, scales, mma, cluster, tma_store); no PTX of its own.
//
// Geometry: CTA = one 128 x BN output tile over the whole K (BN = 32, 64, 128 or 256), grid (M/128, N/BN, L); clusters
// of C CTAs along N (cluster dims (1, C, 1), C = 1, 2, 4, 8 or 16; rank r = n_tile % C), all with the same m tile.
// Per K block of 256 (128 B of packed fp4 per row), every CTA of the cluster receives in its stage s:
//   A   128 rows x 128 B (SW128)  -- rank r loads rows [r*128/C, (r+1)*128/C) and MULTICASTS them to the C CTAs;
//   SFA 4 x 512-B SF blocks         -- rank r loads 128-B rows [r*16/C, (r+1)*16/C) of the box, multicast to the C CTAs;
//   B   BN rows x 128 B (SW128)   -- its own rows n_tile*BN .. (no sharing);
//   SFB BN < 128: the 128-row SF block of its N rows is shared by P = 128/BN consecutive n tiles: rank r loads
//       128-B rows [(r%P)*16/P, ...) of that box and multicasts them to its P-group (when C >= P; else it loads the
//       whole box itself); BN >= 128: its own BN/128 boxes.
// So the L2 -> SM traffic of A is paid once per cluster instead of once per CTA (ptx_docs/production_gemm.md).
//
// Roles (192 threads): warp 0 producer (one lane), warp 1 MMA issuer (one lane; TMEM alloc/free), warps 2..5 epilogue.
// Barriers per stage: full[s] (count 1: the own producer's arrive.expect_tx of the stage's bytes; complete_tx from the
// own and the peers' copies), empty[s] (count C: every CTA's MMA lane commits with .multicast::cluster to all C CTAs,
// since every CTA's stage s is written by all C producers). Producer waits empty[s] parity phase^1, MMA waits full[s]
// parity phase. After its loop the producer drains: it waits the last min(S, KB) empty phases, so no peer signals a
// barrier of this CTA after it exits. Start: mbarrier.init + fence.mbarrier_init.release.cluster, then a cluster
// barrier (C > 1), before any peer may multicast into this CTA.
//
// MMA: per K block 4 x tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16, M = 128, N = BN, K = 64. The SFB
// TMEM copy of a shared 128-row block holds rows 32c + i at column c (ptx_facts §6), so an n tile that is the p-th
// BN-row part of its block points the MMA's scale-B address (4/P)*p columns further (CUTLASS's N = 64 tiles do this:
// +2 columns for odd tiles).
// TMEM plan (columns): D [0, BN); SFA of stage s, chunk j: BN + 16 s + 4 j; SFB of stage s, chunk j:
// BN + 16 S + SFB_STAGE_COLS s + SFB_CH j (+ 4 h for the h-th 128 rows when BN = 256).
// Epilogue: warps 2..5 wait acc_full, then blocks/tma_store.cuh (TMEM -> fp16 -> SWIZZLE_64B SMEM sub-tiles -> TMA
// stores of {32, 32, 1} boxes of the fp16 (L, M, N) output map). The C tile overlays the stage memory, which is dead
// once acc_full completed: every MMA (the last reader of the stages) has finished and no copy into them is left.
//
// Split-K over the cluster (-DGEMM_SPLITS=KS >= 2, blocks/cluster_splitk.cuh): grid (M/128, N/BN, L * KS), cluster
// dims (1, C, KS): the KS CTAs of one output tile (blockIdx.z = l * KS + split) are in one cluster, each runs K blocks
// [floor(s KB / KS), floor((s+1) KB / KS)); the A multicast goes to the C CTAs of the same split (ranks
// [split * C, split * C + C): %cluster_ctarank = x + y * 1 + z * C for cluster dims (1, C, KS), PTX ISA 10.12); after
// the main loop each split sends the parts of the tile it does not own through an fp32 workspace (argument ws), then
// each owner sums its BN / KS columns in split order and stores them (deterministic). The exchange is signalled
// (GEMM_XCHG 1, the default; stage F7): after a named barrier of the epilogue warps one lane per owner arrives
// (release.cluster) on that owner's xchg mbarrier and each owner waits (acquire.cluster) for its KS-1 peers only; the start-up cluster barrier
// (every cluster launch) orders xchg's init before any peer's arrive. GEMM_XCHG 0 (opt-in, stage F6): one cluster
// barrier of every thread of the cluster between the stores and the loads.
//
// Requirements (host checks): M % 128 == 0, N % BN == 0, (N / BN) % C == 0, K % 256 == 0, K / 256 >= KS,
// (BN / KS) % 32 == 0.
#include "blocks/common.cuh"
#include "blocks/mbarrier.cuh"
#include "blocks/tma.cuh"
#include "blocks/tmem.cuh"
#include "blocks/scales.cuh"
#include "blocks/mma.cuh"
#include "blocks/cluster.cuh"
#include "blocks/tma_store.cuh"
#include "blocks/splitk.cuh"
#include "blocks/cluster_splitk.cuh"

#ifndef GEMM_BN
#define GEMM_BN 64
#endif
#ifndef GEMM_CLUSTER
#define GEMM_CLUSTER 8
#endif
#ifndef GEMM_STAGES
#define GEMM_STAGES 6
#endif
#ifndef GEMM_SPLITS
#define GEMM_SPLITS 1
#endif
#ifndef GEMM_XCHG
#define GEMM_XCHG 1
#endif

using namespace ptxlab;

namespace gemmc {

constexpr u32 BM = 128;
constexpr u32 BK_BYTES = 128;                 // 256 fp4 per K block = 4 MMA chunks of 64
constexpr u32 SF_BOX_BYTES = 2048;            // 4 x 512-B SF blocks (128 rows x 256 K) = 16 rows of the 128-B SF map
constexpr u32 SF_BOX_ROWS = 16;
constexpr u32 NUM_THREADS = 192;

template <u32 BN, u32 C> struct Cfg {
  static_assert(BN == 32 || BN == 64 || BN == 128 || BN == 256, "BN: 32, 64, 128 or 256");
  static_assert(C == 1 || C == 2 || C == 4 || C == 8 || C == 16, "cluster size: 1, 2, 4, 8 or 16");
  static constexpr u32 P = BN < 128 ? 128 / BN : 1;              // n tiles sharing one 128-row SFB block
  static constexpr u32 SFB_SHARE = (C >= P) ? P : 1;             // CTAs that split (and multicast) that block's box
  static constexpr u32 NB = BN < 128 ? 1 : BN / 128;             // SFB boxes (128-row blocks) per stage
  static constexpr u32 A_BYTES = BM * BK_BYTES;
  static constexpr u32 B_BYTES = BN * BK_BYTES;
  static constexpr u32 SFA_BYTES = SF_BOX_BYTES;
  static constexpr u32 SFB_BYTES = SF_BOX_BYTES * NB;
  static constexpr u32 STAGE_BYTES = A_BYTES + B_BYTES + SFA_BYTES + SFB_BYTES;
  static constexpr u32 A_ROWS = BM / C;                          // rows of A each rank loads
  static constexpr u32 SFA_ROWS = SF_BOX_ROWS / C;               // 128-B SF-map rows of the SFA box each rank loads
  static constexpr u32 SFB_ROWS = SF_BOX_ROWS / SFB_SHARE;
  static constexpr u32 SFB_CH = 4 * NB;                          // SFB TMEM columns per MMA chunk
  static constexpr u32 SFB_SHIFT = 4 / P;                        // scale-B column shift per n tile inside a block
  static constexpr u32 C_BYTES = BM * BN * 2;                    // fp16 output tile (SMEM for the TMA stores)
  static_assert(STAGE_BYTES % 1024 == 0, "stages must stay 1024-B aligned for SWIZZLE_128B");
};

template <u32 BN, u32 S> struct Tmem {
  static constexpr u32 D_COL = 0;
  static constexpr u32 SFA_COL = BN;
  static constexpr u32 SFB_COL = BN + 16 * S;
  static constexpr u32 USED = SFB_COL + S * 4 * Cfg<BN, 1>::SFB_CH;
  static constexpr u32 NCOLS = USED <= 32 ? 32 : USED <= 64 ? 64 : USED <= 128 ? 128 : USED <= 256 ? 256 : 512;
  static_assert(USED <= 512, "TMEM plan exceeds 512 columns: fewer stages");
};

// Barrier wait: blocks/mbarrier.cuh mbar_wait_or_trap (unbounded, or trapping with -DPTXLAB_WAIT_PROBES=n).
__device__ __forceinline__ void wait(u32 bar, u32 parity) { mbar_wait_or_trap(bar, parity); }

template <u32 BN, u32 C, u32 S, u32 KS>
__device__ __forceinline__ void run(const TmaDesc* tm_a, const TmaDesc* tm_b, const TmaDesc* tm_sfa,
                                    const TmaDesc* tm_sfb, const TmaDesc* tm_c, u32 M, u32 N, u32 K, u32 warm,
                                    float* ws) {
  static_assert(KS == 1 || (KS <= 8 && (BN / KS) % 32 == 0), "split-K: BN / KS must be a multiple of 32");
  typedef Cfg<BN, C> G;
  typedef Tmem<BN, S> T;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full_bar[S], empty_bar[S], acc_full, xchg_bar;
  constexpr bool CL = C * KS > 1;                   // a cluster launch: start-up cluster barrier
  constexpr bool SIGNAL = KS > 1 && GEMM_XCHG != 0;  // split-K's signalled exchange (blocks/cluster_splitk.cuh 2')
  __shared__ u32 tmem_slot;

  const u32 base = (smem_u32(smem_raw) + 1023u) & ~1023u;   // host adds 1024 B of slack
  const u32 warp = warp_idx_sync();
  const u32 m_tile = blockIdx.x, n_tile = blockIdx.y, l = blockIdx.z / KS, split = blockIdx.z % KS;
  const u32 crank = C * KS > 1 ? cluster::ctarank() : 0u;
  const u32 rank = crank % C;                        // rank among the C CTAs of this split (they are consecutive)
  const u32 first = crank - rank;                    // cluster rank of this split's rank 0 (split * C)
  // this split's K blocks [kb0, kb0 + num_kb) (model_c_splitk's split); the loops count i = kb - kb0
  const u32 kb0 = split * (K / 256u) / KS;
  const u32 num_kb = (split + 1u) * (K / 256u) / KS - kb0, rest_k = K / 64u;
  const u32 rest_m = M / 128u, rest_n = (N + 127u) / 128u;
  // K blocks loaded without multicast (no peer needed): at most one round of the ring, whose empty barriers then get
  // all C arrivals (the MMA lane commits those stages to the cluster only after its cluster wait)
  if (C == 1) warm = 0;
  if (warm > S) warm = S;
  const u32 warm_kb = warm < num_kb ? warm : num_kb;

  if (threadIdx.x == 0) {
    for (u32 s = 0; s < S; ++s) {
      mbar_init(smem_u32(&full_bar[s]), 1u);
      mbar_init(smem_u32(&empty_bar[s]), C);
    }
    mbar_init(smem_u32(&acc_full), 1u);
    if (SIGNAL) mbar_init(smem_u32(&xchg_bar), csplit::xchg_arrivals(KS));
    fence_mbarrier_init();
  }
  if (warp == 0 && elect_one_sync()) {
    tma_prefetch_desc(tm_a); tma_prefetch_desc(tm_b); tma_prefetch_desc(tm_sfa); tma_prefetch_desc(tm_sfb);
    tma_prefetch_desc(tm_c);
  }
  __syncwarp();
  // warp 1 allocates (and relinquishes); contains __syncthreads + tcgen05 fences, so the barrier inits are visible
  // in the CTA; then every thread arrives on the cluster barrier (its phase completes once every CTA's barriers are
  // initialised) and waits for it only where it needs its peers: the producer before its first multicast, the MMA
  // lane before its first multicast commit, everyone else right away.
  const u32 tmem = tmem_alloc_cta(smem_u32(&tmem_slot), T::NCOLS, 1u, true);
  if (CL) cluster::arrive();

  if (warp == 0) {
    // ------------------------------------------------------------------ producer (TMA)
    if (elect_one_sync()) {
      const unsigned short all = cluster::rank_mask(first, C);
      const unsigned short group = cluster::rank_mask(first + rank / G::SFB_SHARE * G::SFB_SHARE, G::SFB_SHARE);
      PipeState<S> ps;
      for (u32 i = 0; i < num_kb; ++i, ps.advance()) {
        const u32 kb = kb0 + i;
        if (C > 1 && i == warm_kb) cluster::wait();
        const u32 full = smem_u32(&full_bar[ps.stage]);
        wait(smem_u32(&empty_bar[ps.stage]), ps.phase ^ 1u);
        mbar_arrive_expect_tx(full, G::STAGE_BYTES);
        const u32 dst = base + ps.stage * G::STAGE_BYTES;
        const u32 d_b = dst + G::A_BYTES, d_sfa = d_b + G::B_BYTES, d_sfb = d_sfa + G::SFA_BYTES;
        // SF block (l, mn_blk, k_blk) starts at 128-B row 4 * ((l * rest_mn + mn_blk) * rest_k + k_blk)
        const u32 sfa_row = 4u * ((l * rest_m + m_tile) * rest_k + 4u * kb);
        const u32 sfb_row = 4u * ((l * rest_n + n_tile / G::P) * rest_k + 4u * kb);   // BN < 128
        const bool mc = C > 1 && i >= warm_kb;
        if (mc) {
          cluster::tma_load_3d_multicast(dst + rank * G::A_ROWS * BK_BYTES, tm_a, full, (int)(kb * BK_BYTES),
                                         (int)(m_tile * BM + rank * G::A_ROWS), (int)l, all);
          cluster::tma_load_2d_multicast(d_sfa + rank * G::SFA_ROWS * 128u, tm_sfa, full, 0,
                                         (int)(sfa_row + rank * G::SFA_ROWS), all);
        } else {   // the whole A box / SFA box by slices of the multicast box (the tensor maps' boxes are the slices)
          for (u32 r = 0; r < C; ++r) {
            tma_load_3d(dst + r * G::A_ROWS * BK_BYTES, tm_a, full, (int)(kb * BK_BYTES),
                        (int)(m_tile * BM + r * G::A_ROWS), (int)l);
            tma_load_2d(d_sfa + r * G::SFA_ROWS * 128u, tm_sfa, full, 0, (int)(sfa_row + r * G::SFA_ROWS));
          }
        }
        tma_load_3d(d_b, tm_b, full, (int)(kb * BK_BYTES), (int)(n_tile * BN), (int)l);
        if (BN < 128) {
          if (mc && G::SFB_SHARE > 1) {
            const u32 part = rank % G::SFB_SHARE;
            cluster::tma_load_2d_multicast(d_sfb + part * G::SFB_ROWS * 128u, tm_sfb, full, 0,
                                           (int)(sfb_row + part * G::SFB_ROWS), group);
          } else {
            for (u32 part = 0; part < G::SFB_SHARE; ++part)
              tma_load_2d(d_sfb + part * G::SFB_ROWS * 128u, tm_sfb, full, 0, (int)(sfb_row + part * G::SFB_ROWS));
          }
        } else {
#pragma unroll
          for (u32 h = 0; h < G::NB; ++h)
            tma_load_2d(d_sfb + h * SF_BOX_BYTES, tm_sfb, full, 0,
                        (int)(4u * ((l * rest_n + n_tile * G::NB + h) * rest_k + 4u * kb)));
        }
      }
      if (CL && (C == 1 || warm_kb >= num_kb)) cluster::wait();   // every thread waits once
      if (C > 1) {
        // drain: every peer's commit for our last stages has arrived before this CTA may exit
        for (u32 i = 0; i < (num_kb < S ? num_kb : S); ++i, ps.advance())
          wait(smem_u32(&empty_bar[ps.stage]), ps.phase ^ 1u);
      }
    } else if (CL) {
      cluster::wait();
    }
    __syncwarp();
  } else if (warp == 1) {
    // ------------------------------------------------------------------ MMA issuer
    if (elect_one_sync()) {
      const u32 idesc = mma::idesc_nvfp4(BN);
      const u32 sfb_shift = BN < 128 ? (n_tile % G::P) * G::SFB_SHIFT : 0u;
      const unsigned short all = cluster::rank_mask(first, C);
      // descriptors of the stage-0 operands; a stage s adds (s * STAGE_BYTES) >> 4 to the start-address field (every
      // SMEM address is < 2^18, so the 14-bit field never carries: blocks/mma.cuh smem_desc)
      const u64 sf0 = sf_block_desc(base + G::A_BYTES + G::B_BYTES);
      const u64 a0 = mma::smem_desc_sw128(base), b0 = mma::smem_desc_sw128(base + G::A_BYTES);
      if (C > 1 && warm_kb == 0) cluster::wait();
      PipeState<S> ps;
      for (u32 kb = 0; kb < num_kb; ++kb, ps.advance()) {   // kb counts this split's K blocks from 0
        const u32 s = ps.stage;
        wait(smem_u32(&full_bar[s]), ps.phase);
        tmem_fence_after_sync();
        const u64 so = (u64)((s * G::STAGE_BYTES) >> 4);
        const u32 sfa_t = tmem + T::SFA_COL + 16u * s;
        const u32 sfb_t = tmem + T::SFB_COL + 4u * G::SFB_CH * s;
#pragma unroll
        for (u32 j = 0; j < 4; ++j) {
          sf_copy_32x128b_warpx4(sfa_t + 4u * j, sf0 + so + (512u * j >> 4));
#pragma unroll
          for (u32 h = 0; h < G::NB; ++h)
            sf_copy_32x128b_warpx4(sfb_t + G::SFB_CH * j + 4u * h,
                                   sf0 + so + ((G::SFA_BYTES + h * SF_BOX_BYTES + 512u * j) >> 4));
        }
#pragma unroll
        for (u32 j = 0; j < 4; ++j)
          mma::mma_nvfp4(tmem + T::D_COL, mma::desc_advance_k(a0 + so, j), mma::desc_advance_k(b0 + so, j), idesc,
                         sfa_t + 4u * j, sfb_t + G::SFB_CH * j + sfb_shift, (kb | j) != 0u);
        if (C == 1) {
          mma::commit_arrive(smem_u32(&empty_bar[s]));
        } else if (kb >= warm_kb) {
          cluster::commit_multicast(smem_u32(&empty_bar[s]), all);   // stage s free in every CTA, as far as we go
        } else if (kb + 1 == warm_kb) {
          // the warm-up stages' releases go to the peers too, so only after the peers' barriers exist
          cluster::wait();
          for (u32 i = 0; i < warm_kb; ++i) cluster::commit_multicast(smem_u32(&empty_bar[i]), all);
        }
      }
      mma::commit_arrive(smem_u32(&acc_full));
      if (CL && C == 1) cluster::wait();   // (C > 1: waited before the first multicast commit)
    } else if (CL) {
      cluster::wait();
    }
    __syncwarp();
  } else {
    // ------------------------------------------------------------------ epilogue (warps 2..5 -> lane quarters 2,3,0,1)
    if (CL) cluster::wait();
    wait(smem_u32(&acc_full), 0u);
    const u32 q = warp & 3u;
    const u32 ctile = base + q * (G::C_BYTES / KS / 4u);   // stage memory is dead: every MMA completed (acc_full)
    if (KS == 1) {
      tstore::store_accum_tma(tmem, T::D_COL, BN, ctile, tm_c, n_tile * BN, m_tile * BM, l);
    } else {
      const u32 tile = (l * (M / BM) + m_tile) * (N / BN) + n_tile;
      csplit::put_partials<BN, KS>(tmem, T::D_COL, ws, tile, split);
      __syncwarp();
      if (SIGNAL) {        // the exchange: signal the owners stored for, wait for this CTA's peers
        csplit::signal_owners<KS>(smem_u32(&xchg_bar), split, rank, C);
        csplit::wait_peers(smem_u32(&xchg_bar));
      } else {
        cluster::arrive();   // the exchange: every thread of the cluster, release / acquire (blocks/cluster_splitk.cuh)
        cluster::wait();
      }
      csplit::reduce_store_tma<BN, KS>(tmem, T::D_COL, ws, tile, split, ctile, tm_c, n_tile * BN, m_tile * BM, l);
    }
  }
  if (KS > 1 && !SIGNAL && warp < 2) {   // producer and MMA warps take part in the exchange's cluster barrier phase
    cluster::arrive();
    cluster::wait();
  }

  tmem_dealloc_cta(tmem, T::NCOLS, 1u);
}

}  // namespace gemmc

extern "C" __global__ void __launch_bounds__(gemmc::NUM_THREADS, 1)
nvfp4_gemm_cluster(const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b,
                   const __grid_constant__ TmaDesc tm_sfa, const __grid_constant__ TmaDesc tm_sfb,
                   const __grid_constant__ TmaDesc tm_c, u32 M, u32 N, u32 K, u32 warm, float* ws) {
  gemmc::run<GEMM_BN, GEMM_CLUSTER, GEMM_STAGES, GEMM_SPLITS>(&tm_a, &tm_b, &tm_sfa, &tm_sfb, &tm_c, M, N, K, warm,
                                                             ws);
}
