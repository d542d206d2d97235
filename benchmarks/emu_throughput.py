"""Emulator throughput: thread-instructions per second on the scalar NVFP4 GEMV (128 threads per CTA).

    python benchmarks/emu_throughput.py [--m 512] [--k 4096] [--repeat 3] [--proxy-ratio]

Runs tests/kernels/nvfp4_gemv_scalar.cu on gpu-mode GEMV data (M=512, K=4096, L=1 by default), checks the result
against the float64 reference (exact for this data), and prints the thread-instructions executed, the wall time of the
run and the rate.  --proxy-ratio interleaves runs with the generic->async proxy SMEM check (ptxlab/emu/hw/proxy.py) off and
forced on and prints the wall-time ratio (this kernel has no async-proxy reader, so by default it is not shadowed;
it has no shared memory either, so the ratio only shows the cost of the check's hooks — the tcgen05 kernels'
cost shows in `PTXLAB_EMU_PROXYCHECK=0|1 PTXLAB_E2_FULL=1 python lab.py --stage E2`).
Issue 3 target: >= 10 million thread-instructions/s on a 2-core machine (goal 20 million+).
"""
from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

import ptxlab
from ptxlab import gpumode

KERNEL = Path(__file__).resolve().parents[1] / "tests" / "kernels" / "nvfp4_gemv_scalar.cu"


def physical(x: np.ndarray) -> np.ndarray:
    """gpu-mode tensors are [rows, cols, L] views of (L, rows, cols) storage: return that storage."""
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=512)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--l", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--proxy-ratio", action="store_true")
    args = ap.parse_args()
    m, k, l = args.m, args.k, args.l
    mod = ptxlab.compile(KERNEL.read_text(), arch="sm_90a", name=KERNEL.name)
    dev = ptxlab.open_device("emu")
    seed = int(np.random.SeedSequence().entropy % 2**31)
    p = gpumode.generate_gemv(m, k, l, seed=seed)
    bufs = [dev.to_device(physical(x)) for x in (p.a, p.b, p.sfa, p.sfb)]
    c = dev.empty(2 * m * l)
    rates, walls = [], []
    from ptxlab.emu.hw import proxy
    modes = [(True, False), (True, True)] if args.proxy_ratio else [(proxy.ENABLED, proxy.FORCE)]
    mode_walls: dict = {m: [] for m in modes}
    for i in range(args.repeat * len(modes)):
        mode = modes[i % len(modes)]
        proxy.ENABLED, proxy.FORCE = mode
        dev.memset(c, 0xFF)
        t0 = time.perf_counter()
        dev.launch(mod, "nvfp4_gemv_scalar", grid=((m + 127) // 128, l, 1), block=(128, 1, 1),
                   args=[*bufs, c, np.int32(m), np.int32(k), np.int32(l)])
        wall = time.perf_counter() - t0
        mode_walls[mode].append(wall)
        walls.append(wall)
        rates.append(dev.last_stats["thread_instrs"] / wall)
    out = dev.to_host(c, np.float16, (l, m))
    ref = gpumode.reference_gemv(p)[:, 0, :].T
    exact = bool(np.array_equal(out.view(np.uint16), ref.view(np.uint16)))
    n = dev.last_stats["thread_instrs"]
    print(f"machine        : {platform.processor() or platform.machine()}, python {platform.python_version()}")
    print(f"kernel         : nvfp4_gemv_scalar  M={m} K={k} L={l}  grid={(m + 127) // 128}x{l}  block=128  seed={seed}")
    print(f"thread-instrs  : {n:,}")
    print(f"wall time      : best {min(walls):.3f} s, median {np.median(walls):.3f} s over {args.repeat} runs")
    print(f"throughput     : best {max(rates) / 1e6:.1f} M, median {np.median(rates) / 1e6:.1f} M thread-instructions/s")
    if args.proxy_ratio:
        off, on = (float(np.median(mode_walls[m])) for m in modes)
        print(f"proxy check    : shadow forced on / off median wall = {on:.3f} / {off:.3f} s = {on / off:.3f}x")
    print(f"result         : {'bit-exact vs float64 reference' if exact else 'MISMATCH vs reference'}")
    return 0 if exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
