"""Full emulations of round 3's kernels at the small size (manifest_round3.SIZES["small"]): every kernel builds, runs
on the emulator with every CTA, and every output element is written and matches the host reference.

    python benchmarks/timing_corpus/check_round3.py [--only SUBSTR ...] [--sources DIR] [--accept GPU]

``--accept h100``: instead, one launch of each small-size kernel on ``open_device("emu", timing="h100")``, to show
the timing model accepts every instruction form (ok, or the error); the sampled CTAs' outputs are checked, and the
predicted time is thrown away unread: round 3 is predicted once, by the lead, with the frozen model, at the full
size.  Exit status 1 if any kernel fails.
"""
from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE.parent)]

from timing_corpus import manifest  # noqa: E402,F401  (defines Kernel before manifest_round3 imports it)
from timing_corpus import check_round2, harness, manifest_round3  # noqa: E402


def accept_one(k, root=None, gpu: str = "h100") -> dict:
    """One launch of ``k`` under the timing model; the check of the sampled CTAs' outputs (the time is not read)."""
    import ptxlab
    s = harness.Setup.create(harness.build(k, root), ptxlab.open_device("emu", timing=gpu), check_round2.SEED)
    s.launch()
    return s.check(full=False)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="substrings of kernel names")
    ap.add_argument("--sources", help="cached sources (default: sources.sources_dir())")
    ap.add_argument("--accept", metavar="GPU", help="timing-model acceptance run (h100 | h200), time discarded")
    args = ap.parse_args(argv)
    ks = [k for k in manifest_round3.kernels("small") if not args.only or any(s in k.name for s in args.only)]
    if args.accept:
        return 1 if check_round2.check_all(ks, args.sources, run=functools.partial(accept_one, gpu=args.accept)) \
            else 0
    return 1 if check_round2.check_all(ks, args.sources) else 0


if __name__ == "__main__":
    sys.exit(main())
