// Stage F4: the persistent tile scheduler of blocks/scheduler.cuh on its own: G persistent CTAs (128 threads) claim
// tiles from a global counter until there are none left; tile t's row r (thread r) sums x[t][r][0..K) (u32) into
// out[t][r], and the leader counts the tile in seen[t] (must end at exactly 1 per tile). Plain CUDA + PTX of sm_90.
// BROKEN (f4.py BROKEN): 1 each warp claims its own tile (the tile is not shared by the CTA); 2 no finish() (the
// counter is never reset); 3 the FIRST CTA to finish resets the counter; 4 tiles are processed while tile <= count.
#include "blocks/scheduler.cuh"

#ifndef BROKEN
#define BROKEN 0
#endif

using namespace ptxlab;

extern "C" __global__ void __launch_bounds__(128, 1)
f4_scheduler(const unsigned* x, unsigned* out, unsigned* seen, unsigned* counter, unsigned* done, unsigned tiles,
             unsigned k) {
  __shared__ unsigned slot[4];
  const unsigned row = threadIdx.x, warp = threadIdx.x / 32u;
  for (;;) {
#if BROKEN == 1
    if ((row & 31u) == 0) slot[warp] = sched::atom_add_relaxed(counter, 1u);
    __syncwarp();
    const unsigned t = slot[warp];
    __syncwarp();
#else
    const unsigned t = sched::claim(counter, &slot[0], row == 0, 1, 128);
#endif
#if BROKEN == 4
    if (t > tiles) break;
#else
    if (t >= tiles) break;
#endif
    const unsigned* src = x + ((unsigned long long)t * 128u + row) * k;
    unsigned acc = 0;
    for (unsigned i = 0; i < k; ++i) acc += src[i];
    out[(unsigned long long)t * 128u + row] = acc;
    if ((row & 31u) == 0) atomicAdd(seen + t, 1u);     // 4 per processed tile (one per warp)
  }
  __syncthreads();
#if BROKEN == 3
  if (row == 0) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;"
                 : "=r"(old) : "l"(done), "r"(gridDim.x - 1u) : "memory");
    if (old == 0u) asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(counter), "r"(0u) : "memory");
  }
#elif BROKEN != 2
  if (row == 0) sched::finish(counter, done, gridDim.x);
#endif
}
