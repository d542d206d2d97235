"""The emulator's best-case rate: thread-instructions per second of a tight integer loop in full 8192-thread waves.

    python benchmarks/emu_peak_rate.py [--iters 1000] [--repeat 3]

This is the rate ``ptxlab/emu/checks/watchdog.py`` (PEAK_RATE, rounded up) uses to turn the lower bound of a launch's
thread-instructions into a lower bound of its emulation time when it refuses a hopeless launch.  Real kernels run
slower (memory, shuffles, tensor-core models): benchmarks/emu_throughput.py measures a GEMV.
"""
from __future__ import annotations

import argparse
import platform

import numpy as np

import ptxlab

SRC = r'''
extern "C" __global__ void work(const unsigned* x, unsigned* y, unsigned iters) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned a = x[i];
  for (unsigned k = 0; k < iters; ++k) a = a * 1664525u + 1013904223u;
  y[i] = a;
}'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    mod = ptxlab.compile(SRC, arch="sm_90a", name="peak.cu")
    dev = ptxlab.open_device("emu")
    n = 64 * 1024
    xs = np.random.default_rng().integers(1, 2**32, n, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * n)
    rates = []
    for _ in range(args.repeat):
        dev.launch(mod, "work", grid=(64, 1, 1), block=(1024, 1, 1), args=[x, y, np.uint32(args.iters)])
        s = dev.last_stats
        rates.append(s["thread_instrs"] / s["seconds"])
    a = xs.astype(np.uint64)
    for _ in range(args.iters):
        a = (a * 1664525 + 1013904223) & 0xFFFFFFFF
    ok = bool((dev.to_host(y, np.uint32) == a.astype(np.uint32)).all())
    print(f"machine        : {platform.processor() or platform.machine()}, {platform.system()}")
    print(f"thread-instrs  : {dev.last_stats['thread_instrs']:,} per launch ({dev.last_stats['waves']} waves)")
    print(f"peak rate      : best {max(rates) / 1e9:.2f} G, median {np.median(rates) / 1e9:.2f} G "
          f"thread-instructions/s; result {'exact' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
