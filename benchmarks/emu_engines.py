"""The emulator's engines side by side: interpreter (the reference) vs native, same workloads, one process, bit-exact.

    python benchmarks/emu_engines.py                      # every workload once per engine
    python benchmarks/emu_engines.py --only tutorial_02,w1 --repeat 3
    python benchmarks/emu_engines.py --list

Each workload runs on a fresh device per engine (compile caches warm: the first round per engine is discarded as a
warm-up unless --repeat 1), alternating engines so both see the same machine load; it prints the best wall time per
engine, the ratio interp/native, and whether both produced the same bits.  Workloads: the CuTe Blackwell tutorials
02-05 and CUTLASS examples 72a-c (device kernel launch only: ``ExampleResult.seconds['kernel']``, and the example's
host program on the emulator), the production tcgen05 GEMM at 128 x 7168 x 16384 (``--big``, whole grid), the W1 fp32
GEMV (benchmarks/w1_gemv.py, M = K = 4096) and the production CUDA-core NVFP4 GEMV at 7168 x 16384 x 1.
"""
from __future__ import annotations

import argparse
import gc
import platform
import time

import numpy as np

import ptxlab

CUTLASS = ("tutorial_02", "tutorial_03", "tutorial_04", "tutorial_05", "example_72a", "example_72b", "example_72c")


def _cutlass(name):
    def run(dev):
        from ptxlab.cutlass import runners
        r = runners.run(name, dev)
        out = np.concatenate([np.ascontiguousarray(v).view(np.uint8).reshape(-1) for v in r.outputs.values()])
        return {"kernel": r.seconds["kernel"], "host program": r.seconds["host"]}, out, r.exact
    return run


def _w1(dev):
    from w1_gemv import run_w1
    t, out, exact = run_w1(dev, 4096, 4096, seed=1)
    return {"kernel": t}, out, exact


def _gemv_prod(m, k):
    def run(dev):
        from ptxlab import gpumode
        from ptxlab.production.gemv import run_gemv
        p = gpumode.generate_gemv(m, k, 1, seed=1)
        t = time.perf_counter()
        out = run_gemv(p, device=dev)
        t = time.perf_counter() - t
        ref = gpumode.reference_gemv(p)
        return {"kernel": t}, np.asarray(out).view(np.uint8).reshape(-1), None if ref is None else True
    return run


def _gemm_prod(m, n, k):
    def run(dev):
        from ptxlab import gpumode
        from ptxlab.production import gemm as G
        p = gpumode.generate_gemm(m, n, k, 1, seed=1)
        t = time.perf_counter()
        out = G.nvfp4_gemm(dev, p)
        return {"kernel": time.perf_counter() - t}, np.asarray(out).view(np.uint8).reshape(-1), None
    return run


WORKLOADS = {**{n: _cutlass(n) for n in CUTLASS}, "w1": _w1, "gemv_7168x16384": _gemv_prod(7168, 16384),
             "gemm_128x7168x16384": _gemm_prod(128, 7168, 16384)}
BIG = ("gemm_128x7168x16384", "gemv_7168x16384")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated workload names (--list)")
    ap.add_argument("--big", action="store_true", help="also the long production shapes " + ", ".join(BIG))
    ap.add_argument("--repeat", type=int, default=2, help="timed rounds per engine (best is reported)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(WORKLOADS))
        return 0
    names = [x for x in args.only.split(",") if x] or [n for n in WORKLOADS if args.big or n not in BIG]
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}")
    rows, ok = [], True
    for name in names:
        fn = WORKLOADS[name]
        best: dict = {}
        outs = {}
        for rnd in range(args.repeat + (1 if args.repeat > 1 else 0)):
            for engine in ("interp", "native"):
                dev = ptxlab.open_device("emu", engine=engine)
                gc.collect()       # the other engine's garbage (a parsed module per device) is not this one's time
                times, out, exact = fn(dev)
                outs[engine] = out
                if exact is False:
                    ok = False
                if rnd == 0 and args.repeat > 1:
                    continue                     # warm-up round (compile and decode caches, the engine library)
                for what, t in times.items():
                    key = (what, engine)
                    best[key] = min(best.get(key, t), t)
        same = np.array_equal(outs["interp"], outs["native"])
        ok &= same
        for what in sorted({w for w, _ in best}):
            ti, tn = best[(what, "interp")], best[(what, "native")]
            rows.append((name, what, ti, tn, ti / tn, same))
            print(f"{name:24s} {what:13s} interp {ti:8.3f} s  native {tn:8.3f} s  x{ti / tn:6.2f}  "
                  f"{'bit-identical' if same else 'DIFFERENT'}", flush=True)
    print("\nworkload                 part          interp/native")
    for name, what, ti, tn, r, same in rows:
        print(f"{name:24s} {what:13s} x{r:6.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
