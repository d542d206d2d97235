// blocks/scheduler.cuh -- dynamic tile scheduler for persistent CTAs (sm_90+ PTX; no tcgen05).
//
// Verified by stage F4 (stages/F_gemm, sm_100a and sm_90a builds; H100 GPU test). A persistent CTA loops: claim a
// tile from a global u32 counter (one atom.relaxed.gpu.global.add by a leader thread, PTX ISA 9.7.12.3), hand it to
// the whole CTA (or warp group) through shared memory between two named barriers, process it while it is < the tile
// count, then finish(). The counter is reset for the next launch by the LAST CTA to finish: every CTA, after its
// final (failed) claim, increments `done` with atom.acq_rel.gpu.inc bound nctas-1 (wraps to 0 on the last arrival);
// the one that sees nctas-1 stores 0 into the claim counter. Every claim of every CTA precedes its done increment in
// program order, and the increments are ordered by the acq_rel atomics on `done`, so the reset comes after every
// claim in the counter's modification order (PTX ISA 8.9 release / acquire patterns): no CTA claims after it.
// Counter and done must be 0 before the first launch; every launch leaves them 0.
#pragma once

namespace ptxlab {
namespace sched {

__device__ __forceinline__ unsigned atom_add_relaxed(unsigned* p, unsigned v) {
  unsigned old;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}

__device__ __forceinline__ void named_bar(unsigned id, unsigned nthreads) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(nthreads) : "memory");
}

// The next tile for the `nthreads` threads of named barrier `bar_id` (all of them call it; `leader` is one of them):
// the value the counter had (tiles >= the tile count mean "no more work").
__device__ __forceinline__ unsigned claim(unsigned* counter, unsigned* slot, bool leader, unsigned bar_id,
                                          unsigned nthreads) {
  if (leader) *slot = atom_add_relaxed(counter, 1u);
  named_bar(bar_id, nthreads);
  const unsigned t = *slot;
  named_bar(bar_id, nthreads);     // the slot is not rewritten before every thread has read it
  return t;
}

// After the CTA's final claim, by one thread: the last of nctas CTAs resets the claim counter (done wraps itself).
__device__ __forceinline__ void finish(unsigned* counter, unsigned* done, unsigned nctas) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(done), "r"(nctas - 1u) : "memory");
  if (old == nctas - 1u) asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(counter), "r"(0u) : "memory");
}

}  // namespace sched
}  // namespace ptxlab
