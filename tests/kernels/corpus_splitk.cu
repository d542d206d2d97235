// corpus_splitk.cu -- the split-K "serial fixup" protocol of ptxlab/kernels/blocks/splitk.cuh (used by the fused
// NVFP4 GEMM with -DGEMM_SPLITS=S) run as a fidelity probe on any sm_90+ GPU: red.relaxed.gpu.global.add.v4.f32,
// fence.acq_rel.gpu + named barrier + atom.acq_rel.gpu.global.inc.u32 (last arriver resets the counter),
// ld.relaxed.gpu / st.relaxed.gpu of the workspace. On hardware this exercises the memory ordering that the emulator
// (sequentially consistent, fences no-ops) cannot test.
// Signature: splitk_fixup(parts, ws, cnt, out, arrive_old, S), grid (T, S), block 64:
//   parts (S, T, 256) f32 partial tiles (small integers: every summation order gives the same exact sum),
//   ws (T, 256) f32 workspace and cnt (T) u32 counters, zero before the first launch and left zero by the kernel,
//   out (T, 256) f32 = sum over splits, written by the last arriver of each tile,
//   arrive_old (T, S) u32 = the counter value each split saw (a permutation of 0..S-1 per tile).
#include "blocks/splitk.cuh"

extern "C" __global__ void splitk_fixup(const float* __restrict__ parts, float* ws, unsigned* cnt, float* out,
                                        unsigned* arrive_old, unsigned S) {
  __shared__ unsigned slot;
  const unsigned t = blockIdx.x, s = blockIdx.y, T = gridDim.x, tid = threadIdx.x;
  const float* p = parts + ((size_t)s * T + t) * 256 + 4 * tid;
  float* w = ws + (size_t)t * 256 + 4 * tid;
  ptxlab::splitk::red_add_v4_f32(w, __float_as_uint(p[0]), __float_as_uint(p[1]), __float_as_uint(p[2]),
                                 __float_as_uint(p[3]));
  const bool last = ptxlab::splitk::tile_arrive(cnt + t, S, &slot, tid == 0, 1, 64);
  if (tid == 0) arrive_old[t * S + s] = slot;
  if (last) {
    unsigned r[4];
    ptxlab::splitk::ld_relaxed_v4(w, r);
    float* o = out + (size_t)t * 256 + 4 * tid;
    o[0] = __uint_as_float(r[0]); o[1] = __uint_as_float(r[1]); o[2] = __uint_as_float(r[2]); o[3] = __uint_as_float(r[3]);
    ptxlab::splitk::st_zero_v4(w);
  }
}
