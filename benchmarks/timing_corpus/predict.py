"""Predict every corpus kernel with ptxlab's timing model (the emulator, ``open_device("emu", timing=GPU)``) and
check its output; write the predictions as JSON (committed under benchmarks/timing_corpus/data/).

    python benchmarks/timing_corpus/predict.py [--gpu h100 h200] [--part all] [--only SUBSTR ...] [--jobs 2] \\
        [--sources DIR] [--out benchmarks/timing_corpus/data/predicted_<date>.json]

Each kernel is emulated once per GPU (a fresh device, seed 1 inputs); the timing-only sample computes the busiest
SM's CTAs only, so the check compares the elements those CTAs wrote with the host reference (at least one must be
written: problems.Problem.check).  A failed check or an emulator error is recorded in the kernel's row and counted
at the end (exit status 1), never silently dropped.  ``--jobs N`` runs N kernels at once (processes).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import traceback
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE.parent)]

from timing_corpus import manifest  # noqa: E402
from timing_corpus.sources import SOURCES  # noqa: E402

SEED = 1


def predict_one(name: str, gpus: tuple, root=None) -> dict:
    """Emulate kernel ``name`` once per GPU; the row for the JSON (errors recorded, not raised)."""
    import ptxlab
    from ptxlab.timing.predict import TimingSampleWarning
    from timing_corpus import harness

    warnings.simplefilter("ignore", TimingSampleWarning)   # the check below is the sample-aware one
    k = manifest.BY_NAME[name]
    row = describe(k)
    row["predicted"] = {}
    try:
        built = harness.build(k, root)
    except Exception as e:  # noqa: BLE001
        row["error"] = f"build: {type(e).__name__}: {e}"
        return row
    host = None
    for gpu in gpus:
        t0 = time.perf_counter()
        try:
            dev = ptxlab.open_device("emu", timing=gpu)
            s = harness.Setup.create(built, dev, SEED, host=host)
            host = s.host
            s.launch()
            t = dev.last_timing
            chk = s.check(full=False)
            row["predicted"][gpu] = {
                "us": round(t.us, 3), "bound": t.bound, "ctas": t.ctas, "ctas_per_sm": t.ctas_per_sm,
                "waves": round(t.waves, 3), "sampled": t.sampled, "registers": t.registers,
                "utilization": {r: round(v, 3) for r, v in sorted(t.utilization.items(), key=lambda x: -x[1])[:5]},
                "emu_s": round(t.emu_seconds, 2), "wall_s": round(time.perf_counter() - t0, 2),
                "check_ok": chk["ok"]}
            if not chk["ok"] or "check" not in row:     # the row's check: the first, or the first failure
                row["check"] = chk
            s.free()
        except Exception as e:  # noqa: BLE001
            row.setdefault("errors", {})[gpu] = f"{type(e).__name__}: {e}"[:2000]
            traceback.print_exc()
    return row


def describe(k) -> dict:
    src = SOURCES[k.source]
    return {"name": k.name, "series": k.series, "split": k.split, "repo": src.repo, "commit": src.commit,
            "files": list(k.files), "entry": k.entry, "targs": k.targs, "problem": [k.problem[0], k.params],
            "grid": list(k.grid), "block": list(k.block)}


def _git(*a: str) -> str:
    try:
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:  # noqa: BLE001
        return "?"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", nargs="+", default=["h100", "h200"])
    ap.add_argument("--part", default="all", help="calibration | validation | all")
    ap.add_argument("--only", nargs="*", help="substrings of kernel names")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--sources", help="cached sources (default: sources.sources_dir())")
    ap.add_argument("--out", help="JSON path (default data/predicted_<date>.json)")
    args = ap.parse_args(argv)
    ks = manifest.select(args.part, args.only)
    out = Path(args.out) if args.out else HERE / "data" / f"predicted_{time.strftime('%Y%m%d')}.json"
    t0 = time.perf_counter()
    gpus = tuple(args.gpu)
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as ex:
            rows = list(ex.map(predict_one, [k.name for k in ks], [gpus] * len(ks), [args.sources] * len(ks)))
    else:
        rows = []
        for k in ks:
            rows.append(predict_one(k.name, gpus, args.sources))
            _print_row(rows[-1])
    wall = time.perf_counter() - t0
    if args.jobs > 1:
        for r in rows:
            _print_row(r)
    bad = [r["name"] for r in rows if r.get("error") or r.get("errors") or not r.get("check", {}).get("ok")]
    rep = {"what": "timing-model predictions of the out-of-sample corpus (benchmarks/timing_corpus)",
           "date": time.strftime("%Y-%m-%d"), "model_commit": _git("rev-parse", "HEAD"),
           "model_dirty": bool(_git("status", "--porcelain", "--", "ptxlab")),
           "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
           "gpus": list(gpus), "jobs": args.jobs, "wall_s": round(wall, 1), "failed": bad, "kernels": rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rep, indent=1) + "\n")
    print(f"{len(rows)} kernels x {len(gpus)} GPUs predicted in {wall:.0f} s -> {out}; failed: {bad or 'none'}")
    return 1 if bad else 0


def _print_row(r: dict) -> None:
    p = " ".join(f"{g} {v['us']:9.2f} us ({v['bound']})" for g, v in r.get("predicted", {}).items())
    c = r.get("check", {})
    print(f"{r['name']:58s} {r['split']} {p}  check {'ok' if c.get('ok') else 'FAIL'} "
          f"({c.get('written', 0)}/{c.get('total', 0)} written) {r.get('error', '')}{r.get('errors', '')}"
          f"{c.get('detail', '')[:160]}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
