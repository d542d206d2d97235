"""Cost of the emulator's default-on sanitizer checks (racecheck, global initcheck): wall-time ratio checks on / off.

    python benchmarks/emu_checks_cost.py [--repeat 3]

Two kernels, each launched alternately with ``open_device("emu")`` (defaults: racecheck on shared memory, initcheck
on global memory) and ``open_device("emu", racecheck=False, initcheck=False)``, same data, outputs compared:

* ``gemv``: the scalar NVFP4 GEMV of benchmarks/emu_throughput.py (global loads, no shared memory: global initcheck);
* ``smem_tile``: a 64x64-tile fp32 matrix product through shared memory, two ``__syncthreads()`` per K step (every
  operand read is a shared load: racecheck's worst case among ordinary kernels).

Prints the median wall time of each mode and the ratio (ptx_docs/emulator_checks.md records the measured numbers).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import ptxlab
from ptxlab import gpumode

ROOT = Path(__file__).resolve().parents[1]
GEMV = ROOT / "tests" / "kernels" / "nvfp4_gemv_scalar.cu"
TILE = r"""
extern "C" __global__ void smem_tile(const float* a, const float* b, float* c, int n) {
  __shared__ float as[16][64], bs[16][64];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;          // 256 threads: 16 x 16, 4 x 4 outputs each
  const int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < n; k0 += 16) {
    for (int i = threadIdx.x; i < 16 * 64; i += 256) {
      const int kk = i / 64, mm = i % 64;
      as[kk][mm] = a[(row0 + mm) * n + k0 + kk];
      bs[kk][mm] = b[(k0 + kk) * n + col0 + mm];
    }
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += as[kk][ty * 4 + i] * bs[kk][tx * 4 + j];
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) c[(row0 + ty * 4 + i) * n + col0 + tx * 4 + j] = acc[i][j];
}
"""


def _gemv(dev, mod, p, m, k):
    bufs = [dev.to_device(np.ascontiguousarray(x.transpose(2, 0, 1))) for x in (p.a, p.b, p.sfa, p.sfb)]
    c = dev.empty(2 * m)
    dev.memset(c, 0xFF)
    dev.launch(mod, "nvfp4_gemv_scalar", grid=((m + 127) // 128, 1, 1), block=(128, 1, 1),
               args=[*bufs, c, np.int32(m), np.int32(k), np.int32(1)])
    return dev.to_host(c, np.uint16)


def _tile(dev, mod, a, b, n):
    c = dev.empty(4 * n * n)
    dev.memset(c, 0xFF)
    dev.launch(mod, "smem_tile", grid=(n // 64, n // 64, 1), block=256,
               args=[dev.to_device(a), dev.to_device(b), c, np.int32(n)])
    return dev.to_host(c, np.float32)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not 1 <= args.repeat <= 100:
        ap.error("--repeat must be in 1..100")
    rng = np.random.default_rng()
    m, k, n = 512, 2048, 128
    p = gpumode.generate_gemv(m, k, 1, seed=int(rng.integers(2**31)))
    a = rng.integers(-4, 5, (n, n)).astype(np.float32)
    b = rng.integers(-4, 5, (n, n)).astype(np.float32)
    cases = {"gemv": (ptxlab.compile(GEMV.read_text(), arch="sm_90a", name=GEMV.name),
                      lambda dev, mod: _gemv(dev, mod, p, m, k)),
             "smem_tile": (ptxlab.compile(TILE, arch="sm_90a", name="smem_tile.cu"),
                           lambda dev, mod: _tile(dev, mod, a, b, n))}
    devs = {"on": ptxlab.open_device("emu"), "off": ptxlab.open_device("emu", racecheck=False, initcheck=False)}
    print(f"{'kernel':<10} {'checks off (s)':>15} {'checks on (s)':>14} {'ratio':>7}")
    for name, (mod, run) in cases.items():
        walls = {"on": [], "off": []}
        outs = {mode: run(dev, mod) for mode, dev in devs.items()}      # warm-up: program decode, first waves
        for i in range(2 * args.repeat):
            mode = ("off", "on")[i % 2]
            t0 = time.perf_counter()
            outs[mode] = run(devs[mode], mod)
            walls[mode].append(time.perf_counter() - t0)
        assert np.array_equal(outs["on"], outs["off"]), name
        off, on = (float(np.median(walls[x])) for x in ("off", "on"))
        print(f"{name:<10} {off:>15.3f} {on:>14.3f} {on / off:>7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
