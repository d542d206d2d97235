"""Sanitizer parity: the corpus of buggy kernels (tests/emu/checks/sanitizer/sanitizer_corpus.py) under compute-sanitizer on a GPU
and under the emulator, side by side.

    # on the H100 (compute-sanitizer from the CUDA toolkit on PATH, or $CUDA_HOME/bin, or /usr/local/cuda/bin):
    PYTHONPATH=. python3 tools/audit/sanitizer_parity.py --gpu-side --out $OUT       # -> $OUT/sanitizer_h100.json
    # here (CPU): the emulator side, and the table for ptx_docs/emulator_checks.md
    python tools/audit/sanitizer_parity.py --table benchmarks/data/sanitizer_h100_<date>.json

--gpu-side runs every sm_90a entry once under each tool (memcheck, racecheck, initcheck, synccheck), each in its own
process (``--run-one NAME``: the entry on open_device("cuda"), built with -lineinfo and HW_BOUNDED, so a wait that
never completes gives up instead of hanging the GPU), 4 processes at a time, 60 s each at most; it records each
tool's summary (errors / hazards, warnings) and its first report lines. --table runs every entry on the emulator
(default checks) and prints the markdown table: an entry is in parity when the emulator reports (an error or an
EmuWarning) every hazard a compute-sanitizer tool reported.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "emu" / "checks" / "sanitizer"))

from sanitizer_corpus import BY_NAME, ENTRIES, compile_entry, launch  # noqa: E402

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
_SUMMARY = re.compile(r"(ERROR SUMMARY|RACECHECK SUMMARY):\s*(\d+)\s+(?:errors?|hazards? displayed)"
                      r"(?:\s*\((\d+) errors?, (\d+) warnings?\))?")
_REPORT = re.compile(r"^=+\s+(Invalid|Uninitialized|Race reported|Barrier error|Error|Warning|Divergent|Program hit|"
                     r"Misaligned|Address|Malloc|Unused|Hazard)", re.M)


def sanitizer() -> str:
    for cand in (shutil.which("compute-sanitizer"), os.path.join(os.environ.get("CUDA_HOME", ""), "bin",
                                                                  "compute-sanitizer"),
                 "/usr/local/cuda/bin/compute-sanitizer"):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    raise SystemExit("compute-sanitizer not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)")


def run_one(name: str) -> int:
    """The process compute-sanitizer watches: one entry on the GPU."""
    import numpy as np

    import ptxlab

    e = BY_NAME[name]
    dev = ptxlab.open_device("cuda")
    mod = compile_entry(e, hw_bounded=True, lineinfo=True)
    try:
        launch(dev, mod, e, np.random.default_rng(1))
        dev.synchronize()
        print(f"{name}: ran")
    except ptxlab.PtxlabError as exc:       # e.g. the launch failed after a memcheck error: the report is the tool's
        print(f"{name}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    return 0


def parse(text: str) -> dict:
    m = _SUMMARY.search(text)
    errors = int(m.group(2)) if m else None
    if m and m.group(3) is not None:
        errors, warns = int(m.group(3)), int(m.group(4))
    else:
        warns = 0
    lines = [ln.strip("= ").strip() for ln in text.splitlines() if _REPORT.match(ln)]
    return {"errors": errors, "warnings": warns, "reports": lines[:8]}


def gpu_side(out: Path, workers: int = 4) -> int:
    cs = sanitizer()
    out.mkdir(parents=True, exist_ok=True)
    entries = [e for e in ENTRIES if e.arch == "sm_90a"]
    for e in {e.source: e for e in entries}.values():       # warm the compile cache once, outside the sanitizer
        compile_entry(e, hw_bounded=True, lineinfo=True)
    version = subprocess.run([cs, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1:]
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()

    def one(job):
        e, tool = job
        cmd = [cs, "--tool", tool, "--print-limit", "20", sys.executable, str(Path(__file__).resolve()), "--run-one",
               e.name]
        if tool == "racecheck":
            cmd[3:3] = ["--racecheck-report", "all"]
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(REPO)))
            res = dict(parse(p.stdout + p.stderr), rc=p.returncode, timed_out=False)
            res["tail"] = (p.stdout + p.stderr)[-1500:]
        except subprocess.TimeoutExpired as exc:
            text = (exc.stdout or b"").decode(errors="replace") + (exc.stderr or b"").decode(errors="replace")
            res = dict(parse(text), rc=None, timed_out=True, tail=text[-1500:])
        res["seconds"] = round(time.monotonic() - t0, 1)
        return e.name, tool, res

    jobs = [(e, t) for e in entries for t in TOOLS]
    results: dict = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for name, tool, res in pool.map(one, jobs):
            results.setdefault(name, {})[tool] = res
    doc = {"gpu": gpu, "compute_sanitizer": version, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "results": results}
    (out / "sanitizer_h100.json").write_text(json.dumps(doc, indent=1))
    print(f"{'kernel':<28} " + " ".join(f"{t:>10}" for t in TOOLS))
    for name, per in results.items():
        cells = []
        for t in TOOLS:
            r = per[t]
            cells.append("timeout" if r["timed_out"] else ("-" if not r["errors"] and not r["warnings"] else
                                                          f"{r['errors'] or 0}e/{r['warnings']}w"))
        print(f"{name:<28} " + " ".join(f"{c:>10}" for c in cells))
    return 0


def emulator_side() -> dict:
    import numpy as np

    import ptxlab
    from ptxlab.errors import EmuError

    out = {}
    mods: dict = {}
    for e in ENTRIES:
        mod = mods.setdefault((e.source, e.arch), compile_entry(e))
        dev = ptxlab.open_device("emu", **e.emu_options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                launch(dev, mod, e, np.random.default_rng(1))
                kind, text = ("warning", dev.emu_warnings[0]) if dev.emu_warnings else ("clean", "")
            except EmuError as exc:
                kind, text = "error", str(exc)
        out[e.name] = (kind, text.splitlines()[0] if text else "")
    return out


def table(measured: dict) -> str:
    emu = emulator_side()
    res = measured.get("results", {})
    rows = ["| kernel | bug | compute-sanitizer (H100) | emulator (default checks) | parity |", "|---|---|---|---|---|"]
    for e in ENTRIES:
        per = res.get(e.name)
        if per is None:
            cs = ("not run (sm_100a: emulator only)" if e.arch == "sm_100a" else
                  f"not measured yet (expected: {e.cs if e.cs != 'none' else 'no tool reports it'})")
            found = None
        else:
            hits = [f"{t}: {p['errors'] or 0} error(s)" + (f", {p['warnings']} warning(s)" if p["warnings"] else "")
                    for t, p in per.items() if (p["errors"] or p["warnings"])]
            hung = [t for t, p in per.items() if p["timed_out"]]
            cs = "; ".join(hits) or "nothing reported"
            if hung:
                cs += f" (timed out under {', '.join(hung)})"
            found = bool(hits)
        kind, first = emu[e.name]
        shown = {"clean": "nothing reported", "error": f"error: {first[:90]}", "warning": f"EmuWarning: {first[:90]}"}[kind]
        parity = ("emulator only" if kind != "clean" else "n/a") if found is None else (
            ("yes" if kind != "clean" else "**MISSED**") if found else ("yes (both silent)" if kind == "clean"
                                                                         else "emulator reports more"))
        rows.append(f"| `{e.name}` | {e.bug} | {cs} | {shown.replace('|', '/')} | {parity} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu-side", action="store_true", help="run compute-sanitizer on every sm_90a entry (needs a GPU)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."), help="--gpu-side: directory for sanitizer_h100.json")
    ap.add_argument("--run-one", metavar="NAME", help=argparse.SUPPRESS)
    ap.add_argument("--table", metavar="JSON", help="the comparison table from a --gpu-side JSON")
    ap.add_argument("--workers", type=int, default=4)
    args = ap.parse_args(argv)
    if args.run_one:
        return run_one(args.run_one)
    if args.gpu_side:
        return gpu_side(Path(args.out), args.workers)
    measured = json.loads(Path(args.table).read_text()) if args.table else {}
    print(table(measured))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
