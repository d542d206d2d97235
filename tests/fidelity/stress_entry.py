#!/usr/bin/env python3
"""Run one corpus entry many times with fresh inputs on one backend and check every run against its reference and
validator: a stress test for order- and timing-dependent kernels (atomics, split-K fixup) on real hardware, where
one run that happens to pass proves little.

    PYTHONPATH=. python3 tests/fidelity/stress_entry.py splitk_fixup --backend cuda --runs 50 --seed 1
    PYTHONPATH=. python3 tests/fidelity/stress_entry.py splitk_fixup --backend emu --runs 3

Exit status 0 iff every run matched (exact outputs bit for bit, "serialization" outputs accepted by the validator).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/ (the corpus package)

from corpus import all_entries, compile_entry, entry_rng  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("entry")
    ap.add_argument("--backend", choices=("cuda", "emu"), default="emu")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=None, help="base seed (default: fresh); run i uses seed + i")
    args = ap.parse_args(argv)
    import ptxlab

    by_name = {e.name: e for e in all_entries()}
    if args.entry not in by_name:
        print(f"unknown entry {args.entry!r}; known: {', '.join(sorted(by_name))}")
        return 2
    e = by_name[args.entry]
    base = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    dev = ptxlab.open_device(args.backend, arch=e.arch)
    mod = compile_entry(e)
    bad = 0
    t0 = time.perf_counter()
    for i in range(args.runs):
        ins = e.make_inputs(entry_rng(base + i, e.name))
        outs = e.run(dev, mod, ins)
        probs = []
        ref = e.expected(ins) if e.expected else {}
        for k, v in ref.items():
            if e.mode(k) == "exact" and not np.array_equal(np.asarray(outs[k]), np.asarray(v)):
                n = int((np.asarray(outs[k]) != np.asarray(v)).sum())
                probs.append(f"{k}: {n} elements differ")
        if e.validate:
            probs += e.validate(ins, outs)
        if probs:
            bad += 1
            print(f"run {i} (seed {base + i}): " + "; ".join(probs[:4]))
    dt = time.perf_counter() - t0
    print(f"{args.entry} on {args.backend}: {args.runs - bad} of {args.runs} runs match (base seed {base}, {dt:.1f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
