"""W1: a plain fp32 GEMV, y = A x (A row-major M x K), one warp per row -- the SIMT workload the emulator's engines and
its peers (benchmarks/emu_vs_peers.py: PoCL, numba's CUDA simulator, Triton's interpreter) are compared on.

Each lane accumulates a strided slice of the row with fmaf, a shuffle tree adds the 32 partial sums, lane 0 stores.
The OpenCL source is the same algorithm (work-group of 32 = one warp; the tree through local memory).

    python benchmarks/w1_gemv.py [--m 4096] [--k 4096] [--engine native|interp]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ptxlab

CUDA = r'''
extern "C" __global__ void w1_gemv(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y,
                                   int m, int k) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x & 31;
  if (row >= m) return;
  const float* r = a + (size_t)row * k;
  float acc = 0.0f;
  for (int j = lane; j < k; j += 32) acc = fmaf(r[j], x[j], acc);
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) y[row] = acc;
}'''

OPENCL = r'''
__kernel void w1_gemv(__global const float* a, __global const float* x, __global float* y, int m, int k) {
  __local float part[32];
  int row = get_group_id(0);
  int lane = get_local_id(0);
  __global const float* r = a + (size_t)row * k;
  float acc = 0.0f;
  for (int j = lane; j < k; j += 32) acc = fma(r[j], x[j], acc);
  part[lane] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int o = 16; o > 0; o >>= 1) {
    float v = part[lane ^ o];
    barrier(CLK_LOCAL_MEM_FENCE);
    part[lane] += v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0) y[row] = part[0];
}'''

ROWS_PER_BLOCK = 8          # 256 threads per CTA


def inputs(m: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal(k, dtype=np.float32)


def reference(a, x) -> np.ndarray:
    return (a.astype(np.float64) @ x.astype(np.float64)).astype(np.float32)


def close(y, ref, k) -> bool:
    return bool(np.allclose(y, ref, rtol=1e-4, atol=1e-4 * np.sqrt(k)))


def run_w1(dev, m: int, k: int, seed: int = 0):
    """(launch seconds, y bytes, close to the float64 reference) on an emulator device."""
    a, x = inputs(m, k, seed)
    mod = ptxlab.compile(CUDA, arch="sm_90a", name="w1_gemv.cu")
    da, dx, dy = dev.to_device(a), dev.to_device(x), dev.empty(4 * m)
    dev.memset(dy, 0xFF)
    t = time.perf_counter()
    dev.launch(mod, "w1_gemv", grid=((m + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK, 1, 1), block=(32 * ROWS_PER_BLOCK, 1, 1),
               args=[da, dx, dy, np.int32(m), np.int32(k)])
    t = time.perf_counter() - t
    y = dev.to_host(dy, np.float32)
    return t, y.view(np.uint8), close(y, reference(a, x), k)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--engine", default=None)
    args = ap.parse_args()
    dev = ptxlab.open_device("emu", engine=args.engine)
    t, _, ok = run_w1(dev, args.m, args.k)
    print(f"W1 fp32 GEMV {args.m}x{args.k} on the {dev.engine} engine: {t:.3f} s, "
          f"{'matches' if ok else 'DIFFERS FROM'} the float64 reference")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
