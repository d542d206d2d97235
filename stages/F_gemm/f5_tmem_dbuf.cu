// Stage F5: double-buffered TMEM accumulators (blocks/accum_pipe.cuh): one persistent CTA computes T tiles of
// D_t = A . B_t^T (128 x 32, NVFP4, K = 256 per tile: one K block, 4 MMAs of N = 32) into accumulator t % 2 while the
// epilogue warps read tile t-1 out of the other one.
//   warp 0 producer: per tile, A (the same 128 rows every tile) + B_t (rows 32t..) + SFA + SFB (the 128-row block of
//     tile t, rows (t % 4)*32.. of it used) by TMA into a 2-slot ring (full / empty barriers);
//   warp 1 MMA lane: accpipe acquire, cps, 4 MMAs into D[t % 2], commit empty[s], commit acc_full[t % 2];
//   warps 2..5 epilogue: accpipe acquire, tcgen05.ld.32x32b.x32 of its lane quarter, wait::ld, release, store the 32
//     fp32 words of its row to out[t].
// BROKEN (f5.py BROKEN): 1 the MMA lane waits acc_empty with the consumer's parity (a fresh barrier never passes);
// 2 one accumulator for every tile (the barriers still alternate); 3 the epilogue waits acc_full with the wrong
// parity; 4 the epilogue reads the other buffer. (A missing acc_empty wait or a release before tcgen05.wait::ld are
// races the emulator's schedule does not show: its epilogue always reads before the MMA lane refills the buffer.)
#include "blocks/common.cuh"
#include "blocks/mbarrier.cuh"
#include "blocks/tma.cuh"
#include "blocks/tmem.cuh"
#include "blocks/scales.cuh"
#include "blocks/mma.cuh"
#include "blocks/accum_pipe.cuh"
#include "f_tile.cuh"

#ifndef BROKEN
#define BROKEN 0
#endif

using namespace ptxlab;

using fstage::BN;
using fstage::A_BYTES;
using fstage::B_BYTES;
using fstage::SF_BYTES;
using fstage::STAGE;
constexpr u32 S = 2;
constexpr u32 SFA_COL = 2 * BN, SFB_COL = SFA_COL + 16 * S, NCOLS = 128;

extern "C" __global__ void __launch_bounds__(192, 1)
f5_tmem_dbuf(const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b,
             const __grid_constant__ TmaDesc tm_sfa, const __grid_constant__ TmaDesc tm_sfb, u32* out, u32 tiles) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full_bar[S], empty_bar[S], acc_full[2], acc_empty[2];
  __shared__ u32 tmem_slot;
  const u32 base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const u32 warp = warp_idx_sync();
  if (threadIdx.x == 0) {
    for (u32 s = 0; s < S; ++s) { mbar_init(smem_u32(&full_bar[s]), 1u); mbar_init(smem_u32(&empty_bar[s]), 1u); }
    for (u32 b = 0; b < 2; ++b) { mbar_init(smem_u32(&acc_full[b]), 1u); mbar_init(smem_u32(&acc_empty[b]), 4u); }
    fence_mbarrier_init();
  }
  const u32 tmem = tmem_alloc_cta(smem_u32(&tmem_slot), NCOLS, 1u, true);
  if (warp == 0) {
    if (elect_one_sync()) {
      PipeState<S> ps;
      for (u32 t = 0; t < tiles; ++t, ps.advance()) {       // one K block (256) per tile
        const u32 full = smem_u32(&full_bar[ps.stage]);
        mbar_wait(smem_u32(&empty_bar[ps.stage]), ps.phase ^ 1u);
        mbar_arrive_expect_tx(full, STAGE);
        const u32 dst = base + ps.stage * STAGE;
        tma_load_3d(dst, &tm_a, full, 0, 0, 0);
        tma_load_3d(dst + A_BYTES, &tm_b, full, 0, (int)(t * BN), 0);
        tma_load_2d(dst + A_BYTES + B_BYTES, &tm_sfa, full, 0, 0);
        tma_load_2d(dst + A_BYTES + B_BYTES + SF_BYTES, &tm_sfb, full, 0, (int)(16u * (t / 4u)));
      }
    }
    __syncwarp();
  } else if (warp == 1) {
    if (elect_one_sync()) {
      PipeState<S> ps;
      for (u32 t = 0; t < tiles; ++t, ps.advance()) {
        const accpipe::Slot a = accpipe::slot_of(t);
#if BROKEN == 1
        accpipe::acquire_for_mma(smem_u32(&acc_empty[a.buf]), accpipe::Slot{a.buf, a.phase ^ 1u});
#else
        accpipe::acquire_for_mma(smem_u32(&acc_empty[a.buf]), a);
#endif
#if BROKEN == 2
        const u32 d = tmem;
#else
        const u32 d = tmem + a.buf * BN;
#endif
        const u32 s = ps.stage;
        mbar_wait(smem_u32(&full_bar[s]), ps.phase);
        tmem_fence_after_sync();
        fstage::k_block_n32(d, base + s * STAGE, tmem + SFA_COL + 16u * s, tmem + SFB_COL + 16u * s, t % 4u, false);
        mma::commit_arrive(smem_u32(&empty_bar[s]));
        mma::commit_arrive(smem_u32(&acc_full[a.buf]));
      }
    }
    __syncwarp();
  } else {
    const u32 row = 32u * (warp & 3u) + (threadIdx.x & 31u);
    for (u32 t = 0; t < tiles; ++t) {
      const accpipe::Slot a = accpipe::slot_of(t);
#if BROKEN == 3
      accpipe::acquire_for_epilogue(smem_u32(&acc_full[a.buf]), accpipe::Slot{a.buf, a.phase ^ 1u});
#else
      accpipe::acquire_for_epilogue(smem_u32(&acc_full[a.buf]), a);
#endif
      u32 r[32];
#if BROKEN == 2
      tmem_ld_32x32b<32>(tmem_warp_lane_base(tmem), r);
#elif BROKEN == 4
      tmem_ld_32x32b<32>(tmem_warp_lane_base(tmem) + (a.buf ^ 1u) * BN, r);
#else
      tmem_ld_32x32b<32>(tmem_warp_lane_base(tmem) + a.buf * BN, r);
#endif
      tmem_wait_ld();
      accpipe::release_from_epilogue(smem_u32(&acc_empty[a.buf]));
      u32* o = out + ((u64)t * 128u + row) * BN;
      for (u32 j = 0; j < BN; ++j) o[j] = r[j];
    }
  }
  tmem_dealloc_cta(tmem, NCOLS, 1u);
}
