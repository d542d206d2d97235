"""Reliability audit: >= 300 bad inputs and faults, as a careless or unlucky user would make them (issue 26).

    python tools/audit/audit.py [--workers 2] [--only SUBSTRING] [--smoke] [--json report.json] [--seed N]

Categories (tools/audit/cases.py): every CLI subcommand and flag (``lab.py exec`` with cuda-python driver-API misuse,
``time --compare`` targets), every PTXLAB_* setting, the library API (engine selection included), kernels
with classic bugs (the sanitizer corpus and runaway loops), kills mid-run (SIGINT / SIGTERM / SIGKILL at random
times during stage runs with dumps and during exports), concurrent runs (stage runs, exports, dump writers,
compiles), full / read-only / damaged cache and output locations (a small tmpfs when root can mount one, else a
simulated ENOSPC), huge sizes. Each case runs in a subprocess with a timeout, in a sandbox with a lab state that
holds a recorded PASS. Prints a table (category x outcome) and every case that was not ``ok``; exit 1 if any.
``--smoke`` runs the quick subset tests/tools/test_audit_smoke.py runs in CI.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cases import SMOKE, all_cases  # noqa: E402
from runner import run_all  # noqa: E402

OUTCOMES = ("ok", "traceback", "hang", "wrong-exit", "silent", "data-loss", "internal", "audit-error")


def table(results) -> str:
    by = defaultdict(Counter)
    for r in results:
        by[r.category][r.outcome] += 1
    head = "| category | attempts | " + " | ".join(OUTCOMES[1:]) + " |"
    rows = [head, "|" + "---|" * (len(OUTCOMES) + 1)]
    total = Counter()
    for cat in sorted(by):
        c = by[cat]
        total.update(c)
        rows.append(f"| {cat} | {sum(c.values())} | " + " | ".join(str(c[o]) for o in OUTCOMES[1:]) + " |")
    rows.append(f"| **all** | **{sum(total.values())}** | " + " | ".join(f"**{total[o]}**" for o in OUTCOMES[1:]) + " |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--only", default=None, help="run the cases whose id contains this")
    ap.add_argument("--smoke", action="store_true", help="the quick CI subset")
    ap.add_argument("--json", default=None, help="write every result to this JSON file")
    ap.add_argument("--seed", type=int, default=None, help="kill delays / kernel salts (default: fresh)")
    args = ap.parse_args(argv)
    if not 1 <= args.workers <= 64:
        ap.error("--workers must be in 1..64")
    seed = args.seed if args.seed is not None else int(time.time())
    cases = all_cases(seed)
    ids = [c.id for c in cases]
    dup = [i for i, n in Counter(ids).items() if n > 1]
    if dup:
        raise SystemExit(f"duplicate case ids: {dup}")
    if args.smoke:
        cases = [c for c in cases if c.id in SMOKE]
    if args.only:
        cases = [c for c in cases if args.only in c.id]
    print(f"ptxlab audit: {len(cases)} cases, {args.workers} workers, seed {seed}", flush=True)
    t0 = time.monotonic()

    def progress(r):
        if r.outcome != "ok":
            print(f"  {r.outcome.upper():10s} {r.id}: {r.detail[:300]}", flush=True)

    results = run_all(cases, workers=args.workers, progress=progress)
    print(f"\n{table(results)}\n\n{len(results)} cases in {time.monotonic() - t0:.0f} s", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ for r in results], indent=1))
    return 1 if any(r.outcome != "ok" for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
