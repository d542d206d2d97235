// blocks/accum_pipe.cuh -- double-buffered TMEM accumulators: the epilogue of tile t overlaps the main loop of tile
// t+1 (sm_100a, cta_group::1).
//
// Verified by stage F5 (stages/F_gemm). Two accumulators in TMEM (buffer b = t % 2) and two barrier pairs:
//   acc_full[b]  (count 1)          the MMA lane's tcgen05.commit after the last MMA of a tile into buffer b;
//   acc_empty[b] (count = epilogue warps)  each epilogue warp, after its tcgen05.ld's of buffer b have completed
//                                   (tcgen05.wait::ld), orders them before the arrive (tcgen05.fence::before_thread_sync)
//                                   and one lane arrives.
// MMA lane, tile t: wait acc_empty[b] with parity phase ^ 1 (phase = (t / 2) & 1: the first use of each buffer passes
// on the fresh barrier), tcgen05.fence::after_thread_sync, the MMAs (the first overwrites D), commit acc_full[b].
// Epilogue, tile t: wait acc_full[b] with parity phase, fence::after_thread_sync, tcgen05.ld + wait::ld, release
// (acc_release), then the stores: they run while the MMA lane already fills buffer b for tile t+2... and tile t+1's
// buffer is the other one. [PTX ISA 9.7.16.6.4 (fences around thread syncs), 9.7.16.8.5 (wait::ld)]
#pragma once
#include "common.cuh"
#include "mbarrier.cuh"
#include "tmem.cuh"

namespace ptxlab {
namespace accpipe {

struct Slot {
  u32 buf;      // accumulator buffer 0 / 1
  u32 phase;    // parity of this tile's phase of that buffer's barriers
};

__device__ __forceinline__ Slot slot_of(u32 tile_iter) { return Slot{tile_iter & 1u, (tile_iter >> 1) & 1u}; }

// MMA lane, before the first MMA of tile t into buffer s.buf.
__device__ __forceinline__ void acquire_for_mma(u32 acc_empty_bar, Slot s) {
  mbar_wait(acc_empty_bar, s.phase ^ 1u);
  tmem_fence_after_sync();
}

// Epilogue thread, before its first tcgen05.ld of tile t.
__device__ __forceinline__ void acquire_for_epilogue(u32 acc_full_bar, Slot s) {
  mbar_wait(acc_full_bar, s.phase);
  tmem_fence_after_sync();
}

// Epilogue warp (all lanes), after tcgen05.wait::ld of its last load from the buffer: the buffer may be refilled.
__device__ __forceinline__ void release_from_epilogue(u32 acc_empty_bar) {
  tmem_fence_before_sync();
  __syncwarp();
  if ((threadIdx.x & 31u) == 0) mbar_arrive(acc_empty_bar);
}

}  // namespace accpipe
}  // namespace ptxlab
