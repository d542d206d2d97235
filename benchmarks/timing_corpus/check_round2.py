"""Full emulations of round 2's kernels at the small size (manifest_round2.SIZES["small"]): every kernel builds, runs
on the emulator with every CTA, and every output element is written and matches the host reference.

    python benchmarks/timing_corpus/check_round2.py [--only SUBSTR ...] [--sources DIR]

Functional only (``open_device("emu")``, no timing model): nothing is predicted here.  Exit status 1 if any kernel
fails.  tests/timing_corpus/test_timing_corpus_round2.py runs a few of them in CI-sized time.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE.parent)]

from timing_corpus import harness, manifest_round2  # noqa: E402

SEED = 3


def check_one(k, root=None) -> dict:
    """Build ``k`` (a small-size round-2 kernel), emulate every CTA, check every output element."""
    import ptxlab
    s = harness.Setup.create(harness.build(k, root), ptxlab.open_device("emu"), SEED)
    s.launch()
    return s.check(full=True)


def check_all(kernels, sources=None, run=check_one) -> list:
    """``run`` (default check_one) each kernel, one line each; the names of those that failed."""
    bad = []
    for k in kernels:
        t0 = time.perf_counter()
        try:
            r = run(k, sources)
            msg = f"{'ok' if r['ok'] else 'FAIL'} {r['written']}/{r['total']} written, max err {r['max_err']:.2e} " \
                  f"{r['detail'][:200]}"
        except Exception as e:  # noqa: BLE001
            r, msg = {"ok": False}, f"ERROR {type(e).__name__}: {str(e)[:400]}"
        if not r["ok"]:
            bad.append(k.name)
        print(f"{k.name:62s} {time.perf_counter() - t0:6.1f} s  {msg}", flush=True)
    print(f"failed: {bad or 'none'}")
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="substrings of kernel names")
    ap.add_argument("--sources", help="cached sources (default: sources.sources_dir())")
    args = ap.parse_args(argv)
    ks = [k for k in manifest_round2.kernels("small") if not args.only or any(s in k.name for s in args.only)]
    return 1 if check_all(ks, args.sources) else 0


if __name__ == "__main__":
    sys.exit(main())
