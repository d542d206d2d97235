"""Predict every corpus kernel with ptxlab's timing model (the emulator, ``open_device("emu", timing=GPU)``) and
check its output; write the predictions as JSON (committed under benchmarks/timing_corpus/data/).

    python benchmarks/timing_corpus/predict.py [--gpu h100 h200] [--part all] [--only SUBSTR ...] [--jobs 2] \\
        [--sources DIR] [--out benchmarks/timing_corpus/data/predicted_<date>.json]

Each kernel is emulated once per GPU (a fresh device, seed 1 inputs); the timing-only sample computes the busiest
SM's CTAs only, so the check compares the elements those CTAs wrote with the host reference (at least one must be
written: problems.Problem.check).  A failed check or an emulator error is recorded in the kernel's row and counted
at the end (exit status 1), never silently dropped.  Every kernel runs in its own process (``--one NAME``; its
memory is returned when it ends, and a process killed for memory costs that kernel only: the row says so), ``--jobs
N`` of them at once; the JSON is rewritten after every kernel, and ``--resume`` keeps the rows of an earlier,
interrupted run that have no error.  Each row records the process's peak RSS.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
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
            del dev, s, t                                 # the trace of a big sample is GBs: gone before the next GPU
            gc.collect()
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
    ap.add_argument("--part", default="all", help="calibration | validation | val2 | val3 | all")
    ap.add_argument("--only", nargs="*", help="substrings of kernel names")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--sources", help="cached sources (default: sources.sources_dir())")
    ap.add_argument("--out", help="JSON path (default data/predicted_<date>.json)")
    ap.add_argument("--resume", action="store_true", help="keep the error-free rows already in --out")
    ap.add_argument("--one", help=argparse.SUPPRESS)        # internal: one kernel, its row as JSON on stdout
    args = ap.parse_args(argv)
    if args.one:
        row = predict_one(args.one, tuple(args.gpu), args.sources)
        import resource
        row["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(json.dumps(row))
        return 0
    ks = manifest.select(args.part, args.only)
    out = Path(args.out) if args.out else HERE / "data" / f"predicted_{time.strftime('%Y%m%d')}.json"
    t0 = time.perf_counter()
    gpus = tuple(args.gpu)
    done = {}
    if args.resume and out.is_file():
        done = {r["name"]: r for r in json.loads(out.read_text())["kernels"] if _ok(r)}
    rows = [done[k.name] for k in ks if k.name in done]
    todo = [k for k in ks if k.name not in done]
    with ThreadPoolExecutor(max(1, args.jobs)) as ex:
        futs = [ex.submit(_subprocess, k.name, gpus, args.sources) for k in todo]
        for f in as_completed(futs):
            rows.append(f.result())
            _print_row(rows[-1])
            _write(out, rows, ks, gpus, args, time.perf_counter() - t0)
    wall = time.perf_counter() - t0
    bad = _write(out, rows, ks, gpus, args, wall)
    print(f"{len(rows)} kernels x {len(gpus)} GPUs predicted in {wall:.0f} s -> {out}; failed: {bad or 'none'}")
    return 1 if bad else 0


def _ok(r: dict) -> bool:
    return not r.get("error") and not r.get("errors") and r.get("check", {}).get("ok", False)


def _subprocess(name: str, gpus: tuple, sources) -> dict:
    """predict_one in a fresh interpreter; a crash (out of memory: SIGKILL) becomes the kernel's error row."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", name, "--gpu", *gpus]
    if sources:
        cmd += ["--sources", str(sources)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    k = manifest.BY_NAME[name]
    row = describe(k)
    row["error"] = f"process exited with {p.returncode} (negative: killed by that signal; -9 is usually out of " \
                   f"memory): {p.stderr.strip()[-800:]}"
    return row


def _write(out: Path, rows: list, ks: list, gpus: tuple, args, wall: float) -> list:
    order = {k.name: i for i, k in enumerate(ks)}
    rows.sort(key=lambda r: order[r["name"]])
    bad = [r["name"] for r in rows if not _ok(r)]
    rep = {"what": "timing-model predictions of the out-of-sample corpus (benchmarks/timing_corpus)",
           "date": time.strftime("%Y-%m-%d"), "model_commit": _git("rev-parse", "HEAD"),
           "model_dirty": bool(_git("status", "--porcelain", "--", "ptxlab")),
           "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
           "gpus": list(gpus), "jobs": args.jobs, "wall_s": round(wall, 1), "kernels_done": len(rows),
           "kernels_total": len(ks), "failed": bad, "kernels": rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rep, indent=1) + "\n")
    return bad


def _print_row(r: dict) -> None:
    p = " ".join(f"{g} {v['us']:9.2f} us ({v['bound']})" for g, v in r.get("predicted", {}).items())
    c = r.get("check", {})
    print(f"{r['name']:58s} {r['split']} {p}  check {'ok' if c.get('ok') else 'FAIL'} "
          f"({c.get('written', 0)}/{c.get('total', 0)} written) {r.get('error', '')}{r.get('errors', '')}"
          f"{c.get('detail', '')[:160]}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
