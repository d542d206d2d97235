"""Two GEMM candidates of benchmarks/predict_b200.py on ONE shape under every unsourced B200 timing value x0.5 and
x2 (ptxlab.timing.cli.sensitivity: each recorded trace replayed), side by side: which is faster in how many
scenarios. PREDICTIONS, not measurements.

    python benchmarks/compare_sensitivity_b200.py 128 4096 7168 nvfp4_gemm cluster_xbarrier --json J

Prints one row per scenario (candidate A µs, candidate B µs), then the counts (2-decimal µs); --json writes
{candidate: {"base": µs, "<param> x0.5": µs, "<param> x2": µs, ...}}.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import predict_b200 as P  # noqa: E402  (the candidates, the repo on sys.path)

from ptxlab.timing import cli  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("m", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("k", type=int)
    ap.add_argument("a", choices=sorted(P.CANDIDATES))
    ap.add_argument("b", choices=sorted(P.CANDIDATES))
    ap.add_argument("--gpu", default="b200")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    res = {}
    for name in (args.a, args.b):
        t, _ = P._timed(name, (args.m, args.n, args.k, 1), args.gpu)
        res[name] = {"base": t.us, **{f"{p} x{f:g}": us for p, lo, hi in cli.sensitivity(t, args.gpu)
                                      for f, us in ((0.5, lo), (2.0, hi))}}
        print(f"{name} {t.us:.2f} us PREDICTED", flush=True)
    a, b = (res[args.a], res[args.b])
    r2 = {k: (round(a[k], 2), round(b.get(k, float("nan")), 2)) for k in a}
    for k, (x, y) in sorted(r2.items(), key=lambda kv: kv[1][1] - kv[1][0]):
        print(f"{k:45s} {x:7.2f} {y:7.2f}")
    print(f"{args.a} faster in {sum(x < y for x, y in r2.values())}, equal in {sum(x == y for x, y in r2.values())}, "
          f"slower in {sum(x > y for x, y in r2.values())} of {len(r2)} scenarios (base included) than {args.b}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
