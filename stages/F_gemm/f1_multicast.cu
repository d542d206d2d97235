// Stage F1: the A operand of a cluster of C CTAs along N loaded once and multicast (blocks/cluster.cuh).
//
// Each CTA computes D (128 x 32, fp32, TMEM) = A (128 x K) . B_tile^T over K with one tcgen05.mma (kind::mxf4nvf4
// block16, N = 32) per 64-wide K chunk, through a 2-slot TMA ring:
//   * rank r loads rows [r*128/C, (r+1)*128/C) of A and rows [r*16/C, ...) of its SFA box and MULTICASTS them to the
//     C CTAs (cluster::tma_load_*_multicast); the 4 CTAs whose 32 B rows share one 128-row SFB block each load a
//     quarter of that box and multicast it to the four; every CTA loads its own 32 B rows;
//   * full[s] (count 1, own producer's arrive.expect_tx of the whole stage), empty[s] (count C: every CTA's MMA lane
//     releases the slot in all C CTAs with tcgen05.commit .multicast::cluster);
//   * a cluster barrier after mbarrier.init (peers may only signal initialised barriers), a drain of the last
//     empty phases before exit (no peer signals an exited CTA);
//   * the MMA's scale-B address points 4/P = 1 column further per 32-row part of the shared SF block.
// The readback: every thread stores its row's 32 fp32 accumulator words (tcgen05.ld.32x32b.x32) to d.
// BROKEN (stage variants, f1.py BROKEN): 1 no cluster barrier; 2 commit without multicast; 3 A multicast to the lower
// half of the cluster only; 4 every rank writes its A slice at offset 0; 6 no scale-B shift. (5, no drain, is kept
// out of the list: the emulator completes every commit before the CTA's exit, so it cannot show the race.)
#include "blocks/common.cuh"
#include "blocks/mbarrier.cuh"
#include "blocks/tma.cuh"
#include "blocks/tmem.cuh"
#include "blocks/scales.cuh"
#include "blocks/mma.cuh"
#include "blocks/cluster.cuh"
#include "f_tile.cuh"

#ifndef NC
#define NC 4
#endif
#ifndef BROKEN
#define BROKEN 0
#endif

using namespace ptxlab;

using fstage::BN;
using fstage::A_BYTES;
using fstage::B_BYTES;
using fstage::SF_BYTES;
using fstage::STAGE;                                         // 24 KiB: f_tile.cuh
constexpr u32 S = 2, P = 4;                                  // P: 32-row tiles per 128-row SF block
constexpr u32 SFA_COL = 32, SFB_COL = 32 + 16 * S, NCOLS = 128;

extern "C" __global__ void __launch_bounds__(128, 1)
f1_multicast(const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b,
             const __grid_constant__ TmaDesc tm_sfa, const __grid_constant__ TmaDesc tm_sfb, u32* d, u32 K, u32 N) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full_bar[S], empty_bar[S], acc_full;
  __shared__ u32 tmem_slot;
  const u32 base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const u32 warp = warp_idx_sync(), n_tile = blockIdx.y, rank = cluster::ctarank();
  const u32 num_kb = K / 256u, rest_k = K / 64u, rest_n = (N + 127u) / 128u;
  if (threadIdx.x == 0) {
    for (u32 s = 0; s < S; ++s) { mbar_init(smem_u32(&full_bar[s]), 1u); mbar_init(smem_u32(&empty_bar[s]), NC); }
    mbar_init(smem_u32(&acc_full), 1u);
    fence_mbarrier_init();
  }
  const u32 tmem = tmem_alloc_cta(smem_u32(&tmem_slot), NCOLS, 1u, true);
#if BROKEN != 1
  cluster::sync();
#endif
  const unsigned short all = cluster::rank_mask(0u, NC);
  if (warp == 0) {
    if (elect_one_sync()) {
#if BROKEN == 3
      const unsigned short a_mask = cluster::rank_mask(0u, NC / 2);
#else
      const unsigned short a_mask = all;
#endif
      PipeState<S> ps;
      for (u32 kb = 0; kb < num_kb; ++kb, ps.advance()) {
        const u32 full = smem_u32(&full_bar[ps.stage]);
        mbar_wait(smem_u32(&empty_bar[ps.stage]), ps.phase ^ 1u);
        mbar_arrive_expect_tx(full, STAGE);
        const u32 dst = base + ps.stage * STAGE, d_b = dst + A_BYTES, d_sfa = d_b + B_BYTES, d_sfb = d_sfa + SF_BYTES;
#if BROKEN == 4
        const u32 a_off = 0;
#else
        const u32 a_off = rank * (128u / NC) * 128u;
#endif
        cluster::tma_load_3d_multicast(dst + a_off, &tm_a, full, (int)(kb * 128u), (int)(rank * (128u / NC)), 0,
                                       a_mask);
        cluster::tma_load_2d_multicast(d_sfa + rank * (16u / NC) * 128u, &tm_sfa, full, 0,
                                       (int)(4u * (4u * kb) + rank * (16u / NC)), all);
        tma_load_3d(d_b, &tm_b, full, (int)(kb * 128u), (int)(n_tile * BN), 0);
        const u32 part = rank % P;
        cluster::tma_load_2d_multicast(d_sfb + part * (16u / P) * 128u, &tm_sfb, full, 0,
                                       (int)(4u * ((n_tile / P) * rest_k + 4u * kb) + part * (16u / P)),
                                       cluster::rank_mask(rank / P * P, P));
      }
#if BROKEN != 5
      for (u32 i = 0; i < (num_kb < S ? num_kb : S); ++i, ps.advance())
        mbar_wait(smem_u32(&empty_bar[ps.stage]), ps.phase ^ 1u);
#endif
    }
    __syncwarp();
  } else if (warp == 1) {
    if (elect_one_sync()) {
#if BROKEN == 6
      const u32 shift = 0;
#else
      const u32 shift = (n_tile % P) * (4u / P);
#endif
      PipeState<S> ps;
      for (u32 kb = 0; kb < num_kb; ++kb, ps.advance()) {
        const u32 s = ps.stage;
        mbar_wait(smem_u32(&full_bar[s]), ps.phase);
        tmem_fence_after_sync();
        fstage::k_block_n32(tmem, base + s * STAGE, tmem + SFA_COL + 16u * s, tmem + SFB_COL + 16u * s, shift,
                            kb != 0u);
#if BROKEN == 2
        mma::commit_arrive(smem_u32(&empty_bar[s]));
#else
        cluster::commit_multicast(smem_u32(&empty_bar[s]), all);
#endif
      }
      mma::commit_arrive(smem_u32(&acc_full));
    }
    __syncwarp();
  } else {
    mbar_wait(smem_u32(&acc_full), 0u);
  }
  // readback by all 4 warps (lane quarter = warp % 4): row 32 (warp % 4) + lane, 32 columns
  __syncthreads();
  tmem_fence_after_sync();
  u32 r[32];
  tmem_ld_32x32b<32>(tmem_warp_lane_base(tmem), r);
  tmem_wait_ld();
  const u32 row = 32u * (warp & 3u) + (threadIdx.x & 31u);
  u32* out = d + ((u64)n_tile * 128u + row) * BN;
  for (u32 j = 0; j < 32; ++j) out[j] = r[j];
  tmem_dealloc_cta(tmem, NCOLS, 1u);
}
