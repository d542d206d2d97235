#!/usr/bin/env python
"""Run the task.yml nvfp4_gemm test shapes (ptxlab.gpumode.GEMM_TESTS) through the production sm_100a GEMM
(ptxlab/production/gemm.py) on the CPU emulator and check each against reference_gemm (rtol = atol = 1e-3).

The cost of a shape is proportional to its "work" W = (M/128) * (N/BN) * (K/256) (K blocks of 256 per 128xBN CTA,
4 MMAs of 128x256x64 each): about 0.03-0.05 s/W on 2 shared cores with the fast exact MMA path
(ptxlab/mma/fast.py). The whole list is W = 11597 (about 10 min), 9072 of it the 2304x4608x7168 shape.
By default the shapes with W <= --max-work (default 1000: every shape but that one, about 2 min) run; the others
are listed with an estimate from the measured rate. `--all` runs every shape; `--only 2,5` picks shapes by index.

Data: fresh gpu-mode data (generate_gemm with a random seed, printed; task.yml's seed 1111 is torch's RNG and does
not carry over to numpy). c is poisoned before every launch.

    python benchmarks/emu_gemm_tests.py                 # cheap shapes, estimates for the rest
    python benchmarks/emu_gemm_tests.py --all           # everything (about 10 min on 2 cores)
    python benchmarks/emu_gemm_tests.py --only 5        # one shape
    python benchmarks/emu_gemm_tests.py --all --variant 2sm --exact   # the 2-SM build, bit-exact vs the model

`--variant 2sm` runs the CTA-pair build (tcgen05 cta_group::2 on 256 x BN tiles, cluster (2,1,1)); `--exact` also
compares c bit for bit with fp16(RNE) of the tensor-core model ptxlab.mma.mma over the full K (the kernel's
chained 64-wide MMAs), the check tests/test_production_gemm*.py make (the model costs host time too).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import ptxlab
from ptxlab import gpumode
from ptxlab.production import gemm as G
from ptxlab.progress import track


def work(t: dict) -> int:
    bn = G.choose_bn(t["n"])
    return (t["m"] // 128) * (t["n"] // bn) * (t["k"] // 256) * t["l"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="run every GEMM_TESTS shape (about 10 min on 2 cores)")
    ap.add_argument("--max-work", type=int, default=1000, help="default selection: shapes with W <= this")
    ap.add_argument("--only", default="", help="comma-separated indices into GEMM_TESTS")
    ap.add_argument("--seed", type=int, default=None, help="base seed (default: fresh); shape i uses seed + i")
    ap.add_argument("--stages", type=int, default=None, help="pipeline depth (default: the wrapper's)")
    ap.add_argument("--variant", default="1sm", choices=("1sm", "2sm"), help="1sm (default) or 2sm (CTA pairs)")
    ap.add_argument("--exact", action="store_true", help="also require c == fp16(tensor-core model) bit for bit")
    args = ap.parse_args(argv)

    tests = list(gpumode.GEMM_TESTS)
    if args.only:
        sel = [int(x) for x in args.only.split(",") if x.strip()]
    elif args.all:
        sel = list(range(len(tests)))
    else:
        sel = [i for i, t in enumerate(tests) if work(t) <= args.max_work]
    base = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % (2**62))
    print(f"GEMM_TESTS on the emulator (sm_100a {args.variant} build), base seed {base}; running {len(sel)} of "
          f"{len(tests)} shapes{' (exact vs the tensor-core model)' if args.exact else ''}")
    dev = ptxlab.open_device("emu")
    total_emu = total_work = 0.0
    fails = 0
    rows = []
    try:
        for i in track(sel, "GEMM_TESTS", label=lambda i: f"[{i}] m={tests[i]['m']} n={tests[i]['n']} "
                       f"k={tests[i]['k']} l={tests[i]['l']} W={work(tests[i])}"):
            t = tests[i]
            m, n, k, l = t["m"], t["n"], t["k"], t["l"]
            p = gpumode.generate_gemm(m, n, k, l, base + i)
            rep: dict = {}
            t0 = time.perf_counter()
            c = G.nvfp4_gemm(dev, p, stages=args.stages, report=rep, variant=args.variant)
            wall = time.perf_counter() - t0
            emu = float(getattr(dev, "last_stats", {}).get("seconds", wall))
            errs = gpumode.check_close(c, gpumode.reference_gemm(p), rtol=1e-3, atol=1e-3)
            if args.exact:
                nbad = int((c.view(np.uint16) != G.model_c(p).view(np.uint16)).sum())
                if nbad:
                    errs = list(errs) + [f"{nbad} of {c.size} values differ from fp16(tensor-core model)"]
            ok = not errs and not np.isnan(c).any()
            fails += not ok
            total_emu += emu
            total_work += work(t)
            rows.append(i)
            print(f"[{i}] m={m:5d} n={n:5d} k={k:5d} l={l}  {rep['variant']} BN={rep['bn']} stages={rep['stages']} "
                  f"grid={rep['grid']} "
                  f"W={work(t):5d}  emu {emu:8.1f} s ({emu / work(t):.2f} s/W)  {'PASS' if ok else 'FAIL'}"
                  + ("" if ok else "  " + "; ".join(errs[:3])), flush=True)
    finally:
        dev.close()
    rate = total_emu / total_work if total_work else None
    skipped = [i for i in range(len(tests)) if i not in rows]
    for i in skipped:
        t = tests[i]
        est = f"~{work(t) * rate / 60:.1f} min at {rate:.2f} s/W" if rate else "n/a"
        print(f"[{i}] m={t['m']:5d} n={t['n']:5d} k={t['k']:5d} l={t['l']}  W={work(t):5d}  not run (estimate {est}; "
              f"--only {i} or --all)")
    print(f"total emulator time {total_emu:.1f} s for {len(rows)} shapes; {fails} failed")
    if blocks := G.blocks_report():
        grad = {b: s for b, s in blocks.items() if s}
        print("graduated blocks used: " + (", ".join(f"{b} ({'/'.join(s)})" for b, s in grad.items()) or
                                            "none (no graduated stage in the lab state)"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
