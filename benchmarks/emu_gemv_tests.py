"""Run every gpu-mode nvfp4_gemv test shape (ptxlab.gpumode.GEMV_TESTS) through the CUDA-core GEMV on the emulator.

    PYTHONPATH=. python3 benchmarks/emu_gemv_tests.py [--arch sm_90a,sm_100a] [--seed N] [--benchmarks]

Fresh inputs per shape (random seed unless --seed), output poisoned with NaN, exact (bitwise) comparison with the
float64 reference rounded to fp16 plus gpu-mode's rtol/atol check. Prints per-shape and total emulator time (the
compile is excluded and shown separately). --benchmarks also runs the three benchmark shapes (GEMV_BENCHMARKS, with
each arch's pick_config: on sm_100a the B200 table's configs), every CTA; sm_100a's flat grids are sized for 148 SMs
(a B200), sm_90a's for 132 (an H100). Exit code 1 on any mismatch.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    import ptxlab
    from ptxlab import gpumode as gm
    from ptxlab.production.gemv import compile_gemv, run_gemv
    from ptxlab.progress import track

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_90a,sm_100a", help="comma-separated archs whose PTX runs on the emulator")
    ap.add_argument("--seed", type=int, default=None, help="base seed (default: random)")
    ap.add_argument("--benchmarks", action="store_true", help="also the GEMV_BENCHMARKS shapes (every CTA)")
    args = ap.parse_args(argv)
    seed0 = int(np.random.SeedSequence().entropy % (1 << 31)) if args.seed is None else args.seed
    dev = ptxlab.open_device("emu")
    failures = 0
    grand = 0.0
    shapes = list(gm.GEMV_TESTS) + (list(gm.GEMV_BENCHMARKS) if args.benchmarks else [])
    for arch in [a.strip() for a in args.arch.split(",") if a.strip()]:
        t0 = time.perf_counter()
        compile_gemv(arch)
        print(f"[{arch}] compile {time.perf_counter() - t0:.2f} s; base seed {seed0}")
        total = 0.0
        for i, kw in track(list(enumerate(shapes)), f"GEMV shapes {arch}",
                           label=lambda ikw: f"m={ikw[1]['m']} k={ikw[1]['k']} l={ikw[1]['l']}"):
            p = gm.generate_gemv(kw["m"], kw["k"], kw["l"], seed=seed0 + i)
            ref = gm.reference_gemv(p)
            t = time.perf_counter()
            # sm_100a: the grid a B200 (148 SMs) gets; sm_90a: an H100's (132)
            out = run_gemv(p, dev, arch, sms=148 if arch.startswith("sm_10") else 132)
            dt = time.perf_counter() - t
            total += dt
            exact = np.array_equal(out.view(np.uint16), ref.view(np.uint16))
            bad = gm.check_close(out, ref)
            ok = exact and not bad
            failures += not ok
            print(f"  m={kw['m']:5d} k={kw['k']:5d} l={kw['l']}  {dt:7.2f} s  {'exact' if ok else 'MISMATCH'}"
                  + ("" if ok else f"  {bad[:3]}"))
        grand += total
        print(f"[{arch}] total emulator time for {len(shapes)} shapes: {total:.2f} s")
    print(f"all archs: {grand:.2f} s; {'all exact' if not failures else f'{failures} FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
