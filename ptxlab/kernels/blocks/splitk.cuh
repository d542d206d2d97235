// blocks/splitk.cuh -- split-K "serial fixup" of fp32 tiles through global memory (sm_90+ PTX; used by the 1sm NVFP4
// GEMM only when it is built with -DGEMM_SPLITS=S, S >= 2; in the default build nothing here is instantiated, so it
// adds no PTX). Verified by stage F3 (stages/F_gemm: the ordered fixup, on sm_100a and sm_90a builds).
//
// Two reductions share the arrival protocol (tile_arrive, below):
//   * ORDERED (deterministic, the default): every split stores its partial tile into its own workspace slot (plain
//     16-B stores, "chunk-major" so a warp's 32 rows write 512 contiguous bytes: slot_v4), arrives; the last arriver
//     sums the S partials in split order 0, 1, .., S-1 (its own from its registers at its position), so c has the
//     same bits whatever order the CTAs finish in. Slots need no zeroing (each is written before it is read in the
//     same launch); the counter resets itself.
//   * ATOMIC (opt-in, NON-DETERMINISTIC: fp32 red.add in arrival order), steps 1-3 below.
//
// Protocol of the atomic reduction for one output tile that S CTAs ("splits") each hold a partial fp32 sum of:
//   1. every thread of the epilogue warp group adds its partial values into the fp32 workspace tile with
//      red.relaxed.gpu.global.add.v4.f32 (morally strong at gpu scope; PTX ISA 9.7.12.4 red, vector f32 add sm_90+);
//   2. tile_arrive(): each thread fence.acq_rel.gpu (PTX ISA 9.7.13.4; a "release pattern" prefix), named barrier
//      over the group (bar.sync id, nthreads: PTX ISA 9.7.13.1, barriers synchronize, so every thread's reds
//      precede the next step in causality order, PTX ISA 8.9.x "Base causality order"), then ONE thread
//      atom.acq_rel.gpu.global.inc.u32 on the tile's counter with bound S-1: it returns the old count and stores
//      (old >= S-1 ? 0 : old+1), i.e. the last arriver (old == S-1) resets the counter to 0 itself (PTX ISA
//      9.7.12.3 atom .inc). The acq_rel atom is both the release of this CTA's reds and the acquire of every earlier
//      arriver's release (they synchronize through the counter's modification order / release sequence, PTX ISA 8.9
//      "Synchronizes-with"); the result is broadcast through shared memory and a second barrier, and the acquire
//      side is completed by a fence.acq_rel.gpu in every thread (the same fence-barrier-fence pattern as CUDA's
//      threadFenceReduction sample: __threadfence, __syncthreads, atomicInc);
//   3. the last arriver reads the tile with ld.relaxed.gpu.global (strong reads, never served by a stale L1 line),
//      writes the result, and stores 0 back (st.relaxed.gpu.global) so the next launch starts from a zero tile; no
//      other CTA of this launch touches the tile after the last arrival, and the kernel boundary orders the zeroes
//      before the next launch's reds.
// Causality chain for a value v added by thread T of an early CTA and read by thread U of the last CTA:
//   red(v) -po-> fence -po-> bar(T) -sync-> atom.release(early CTA) -sw-> atom.acquire(last CTA) -po-> smem st
//   -po-> bar -sync-> fence(U) -po-> ld(U)   => ld observes v (coherence order of the address, PTX ISA 8.9 axioms).
#pragma once

namespace ptxlab {
namespace splitk {

// [p] += {a, b, c, d} (fp32, 16-B aligned p; f32 global adds flush subnormals: PTX ISA 9.7.12.4).
__device__ __forceinline__ void red_add_v4_f32(float* p, unsigned a, unsigned b, unsigned c, unsigned d) {
  asm volatile("red.relaxed.gpu.global.add.v4.f32 [%0], {%1, %2, %3, %4};"
               :: "l"(p), "f"(__uint_as_float(a)), "f"(__uint_as_float(b)), "f"(__uint_as_float(c)),
                  "f"(__uint_as_float(d))
               : "memory");
}

// Strong (relaxed, gpu scope) 16-B read of fp32 bits.
__device__ __forceinline__ void ld_relaxed_v4(const float* p, unsigned (&r)[4]) {
  asm volatile("ld.relaxed.gpu.global.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "l"(p) : "memory");
}

// Ordered reduction: the 16 B of columns 4*n4 .. 4*n4+3 of row `row` (0..127) in a 128-row tile slot that is
// chunk-major: [n4][row][4] fp32 (a warp's 32 consecutive rows are 512 contiguous bytes).
__device__ __forceinline__ float* slot_v4(float* slot, unsigned n4, unsigned row) {
  return slot + ((unsigned long long)n4 * 128u + row) * 4u;
}

// Plain 16-B store of a partial (ordered by the release in tile_arrive).
__device__ __forceinline__ void st_v4(float* p, unsigned a, unsigned b, unsigned c, unsigned d) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

// acc[i] = acc[i] + v[i], fp32 round-to-nearest (add.rn.f32: never contracted into an FMA) [PTX ISA 9.7.3.1].
__device__ __forceinline__ void add_v4(unsigned (&acc)[4], const unsigned (&v)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float r;
    asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(__uint_as_float(acc[i])), "f"(__uint_as_float(v[i])));
    acc[i] = __float_as_uint(r);
  }
}

// The last arriver's ordered sum of 16 columns (4 chunks from chunk n4_0) of its row: ((p_0 + p_1) + p_2) + ..
// + p_{S-1}, where p_s is the slot of split s (ld.relaxed.gpu: not a stale L1 line) and p_own = mine (this CTA's
// registers, never stored and re-read). All 4 (S-1) loads are issued before the first add, so a batch costs one
// memory latency, not S-1 of them (splits <= MAXS, a compile-time bound of the register array).
template <unsigned MAXS>
__device__ __forceinline__ void ordered_sum_16(float* ws_tile0, unsigned long long slot_stride, unsigned splits,
                                               unsigned own, unsigned n4_0, unsigned row, const unsigned (&mine)[16],
                                               unsigned (&acc)[16]) {
  unsigned v[MAXS][16];
#pragma unroll
  for (unsigned s = 0; s < MAXS; ++s)
    if (s < splits && s != own) {
#pragma unroll
      for (unsigned q = 0; q < 4; ++q) {
        unsigned r[4];
        ld_relaxed_v4(slot_v4(ws_tile0 + s * slot_stride, n4_0 + q, row), r);
        v[s][4 * q] = r[0]; v[s][4 * q + 1] = r[1]; v[s][4 * q + 2] = r[2]; v[s][4 * q + 3] = r[3];
      }
    }
#pragma unroll
  for (unsigned s = 0; s < MAXS; ++s) {
    if (s >= splits) break;
#pragma unroll
    for (unsigned q = 0; q < 4; ++q) {
      unsigned x[4];
#pragma unroll
      for (unsigned i = 0; i < 4; ++i) x[i] = s == own ? mine[4 * q + i] : v[s][4 * q + i];
      if (s == 0) {
        acc[4 * q] = x[0]; acc[4 * q + 1] = x[1]; acc[4 * q + 2] = x[2]; acc[4 * q + 3] = x[3];
      } else {
        unsigned a4[4] = {acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]};
        add_v4(a4, x);
        acc[4 * q] = a4[0]; acc[4 * q + 1] = a4[1]; acc[4 * q + 2] = a4[2]; acc[4 * q + 3] = a4[3];
      }
    }
  }
}

// Strong 16-B store of zeroes (workspace reset).
__device__ __forceinline__ void st_zero_v4(float* p) {
  asm volatile("st.relaxed.gpu.global.v4.b32 [%0], {%1, %1, %1, %1};" :: "l"(p), "r"(0u) : "memory");
}

__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// Named barrier `id` (1..15) over `nthreads` threads (a multiple of 32) of the CTA.
__device__ __forceinline__ void bar_sync(unsigned id, unsigned nthreads) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(nthreads) : "memory");
}

// old = *counter; *counter = (old >= bound) ? 0 : old + 1   (acquire + release, gpu scope).
__device__ __forceinline__ unsigned atom_inc_acq_rel(unsigned* counter, unsigned bound) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(bound) : "memory");
  return old;
}

// Step 2 of the protocol, executed by all `nthreads` threads of the group (named barrier `bar_id`); `leader` is the
// one thread that performs the atomic; `slot` a shared word. Returns true in every thread of the group iff this CTA
// is the last of `splits` arrivals on *counter (which it has then reset to 0).
__device__ __forceinline__ bool tile_arrive(unsigned* counter, unsigned splits, unsigned* slot, bool leader,
                                           unsigned bar_id, unsigned nthreads) {
  fence_acq_rel_gpu();                 // release side: this thread's reds before the barrier / the counter update
  bar_sync(bar_id, nthreads);
  if (leader) *slot = atom_inc_acq_rel(counter, splits - 1u);
  bar_sync(bar_id, nthreads);
  const bool last = *slot == splits - 1u;
  if (last) fence_acq_rel_gpu();       // acquire side: the other CTAs' reds before this thread's workspace reads
  return last;
}

}  // namespace splitk
}  // namespace ptxlab
