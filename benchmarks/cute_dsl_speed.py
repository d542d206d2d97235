"""How large a problem each CuTe DSL tutorial runs on the emulator in a time budget, and the time extrapolated to the
tutorial's default size (issue 23 item 5; ptx_docs/cute_dsl.md "Speed").

Each tutorial of ``cute_dsl_coverage.ENTRIES`` is run through ``lab.py exec`` (whole-script wall time: start-up,
JIT compile, emulation, the script's own check) on a ladder of sizes, each step doubling the work, until a run does
not finish inside ``--budget`` seconds (it is stopped there) or fails. A tutorial whose default size is small
(``DEFAULT_FIRST``) is tried at its default size first. The extrapolation fits ``t = a + b * work`` through the two
largest finished runs (``work`` = multiply-adds M*N*K*L, or elements M*N times launches for the TMA tutorials) and
evaluates it at the default size; the next step of a ladder is not run when that fit predicts it over 1.5 x the budget.

    python benchmarks/cute_dsl_speed.py --cutlass ../cutlass [--budget 60] [--only fp16_gemm_0]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cute_dsl_coverage import ENTRIES, REPO  # noqa: E402


# ladders (M, N, K[, L]): the work (multiply-adds) doubles or quadruples per step; a run stops at the budget
_MNK = [(512, 512, 512), (1024, 512, 512), (1024, 1024, 512), (1024, 1024, 1024), (2048, 1024, 1024),
        (2048, 2048, 1024), (2048, 2048, 2048)]
_MNKL = [(512, 512, 512, 1), (1024, 512, 512, 1), (1024, 1024, 512, 1), (1024, 1024, 1024, 1), (2048, 1024, 1024, 1),
         (2048, 2048, 1024, 1), (2048, 2048, 2048, 1)]
_MN = [(128, 64), (512, 128), (1024, 512), (2048, 1024)]

# name -> (flag, ladder, default size, extra arguments, launches per run); the defaults are the scripts' argparse
# defaults (NVIDIA/cutlass examples/python/CuTeDSL/cute/blackwell/tutorial)
TUTORIALS = {
    **{f"fp16_gemm_{i}": ("--mnk", _MNK, (8192, 8192, 8192), [], 1) for i in ("0", "1", "2", "3", "3_1", "4", "5")},
    "fp16_gemm_6": ("--mnk", _MNK, (256, 8192, 128), [], 1),
    "nvfp4_gemm_0": ("--mnkl", _MNKL, (8192, 8192, 8192, 8), [], 1),
    "nvfp4_gemm_1": ("--mnkl", _MNKL, (8192, 8192, 8192, 8), [], 1),
    # the TMA tutorials time 5 warm-up + 20 iterations by default; the ladder runs one iteration
    **{f"tma_v{i}": (("--M", "--N"), _MN, (512 if i == 0 else 128, 128), ["--num_warmup", "0", "--num_iters", "1"], 1)
       for i in range(3)},
}
DEFAULT_LAUNCHES = {"tma_v0": 25, "tma_v1": 25, "tma_v2": 25}
DEFAULT_FIRST = ("fp16_gemm_6", "tma_v0", "tma_v1", "tma_v2")


def work(size, launches: int = 1) -> int:
    w = 1
    for x in size:
        w *= x
    return w * launches


def size_args(flag, size) -> list:
    if isinstance(flag, tuple):          # one flag per dimension
        return [a for f, x in zip(flag, size) for a in (f, str(x))]
    return [flag, ",".join(str(x) for x in size)]


def run_once(script: Path, args: list, budget: float) -> tuple:
    """(status, seconds): PASS, FAIL (exit status) or OVER (stopped at the budget)."""
    cmd = [sys.executable, str(REPO / "lab.py"), "exec", str(script)] + args
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=script.parent, capture_output=True, text=True, timeout=budget)
        st = "PASS" if p.returncode == 0 else f"FAIL ({p.returncode}): " + (p.stderr.strip().splitlines() or [""])[-1][:120]
    except subprocess.TimeoutExpired:
        st = "OVER"
    return st, time.perf_counter() - t0


def extrapolate(points: list, target_work: int):
    """t = a + b * work through the two largest finished points ((work, seconds)); None with fewer than two."""
    if len(points) < 2:
        return None
    (w0, t0), (w1, t1) = sorted(points)[-2:]
    b = (t1 - t0) / (w1 - w0)
    a = t1 - b * w1
    return a + b * target_work


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cutlass", required=True, help="checkout of NVIDIA/cutlass")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds a run may take (default 60)")
    ap.add_argument("--only", action="append", default=[], help="run only these tutorials (repeat)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    scripts = {e[0]: Path(args.cutlass) / e[2] for e in ENTRIES if e[1] == "cutlass"}
    rows = []
    for name, (flag, ladder, default, extra, _) in TUTORIALS.items():
        if args.only and name not in args.only:
            continue
        script = scripts[name]
        d_launch = DEFAULT_LAUNCHES.get(name, 1)
        runs = []
        if name in DEFAULT_FIRST:
            st, dt = run_once(script, size_args(flag, default), args.budget)
            runs.append((default, "default", st, dt))
            print(f"{name:<14} default {default}: {st} {dt:.1f} s", flush=True)
        if not (runs and runs[0][2] == "PASS"):
            for size in ladder:
                done = [(work(s), dt) for s, kind, st, dt in runs if st == "PASS" and kind == "ladder"]
                guess = extrapolate(done, work(size))
                if guess is not None and guess > 1.5 * args.budget:
                    print(f"{name:<14} {size}: not run (predicted {guess:.0f} s)", flush=True)
                    break
                st, dt = run_once(script, size_args(flag, size) + extra, args.budget)
                runs.append((size, "ladder", st, dt))
                print(f"{name:<14} {size}: {st} {dt:.1f} s", flush=True)
                if st != "PASS":
                    break
        done = [(work(s), dt) for s, kind, st, dt in runs if st == "PASS" and kind == "ladder"]
        best = max(((s, dt) for s, kind, st, dt in runs if st == "PASS"), key=lambda r: work(r[0]), default=None)
        default_ok = any(kind == "default" and st == "PASS" for _, kind, st, _ in runs)
        est = None if default_ok else extrapolate(done, work(default, d_launch))
        rows.append({"tutorial": name, "default": list(default), "default_launches": d_launch,
                     "default_s": next((dt for _, kind, st, dt in runs if kind == "default" and st == "PASS"), None),
                     "largest_in_budget": list(best[0]) if best else None, "largest_s": best[1] if best else None,
                     "extrapolated_default_s": est,
                     "runs": [{"size": list(s), "kind": k, "status": st, "s": round(dt, 2)} for s, k, st, dt in runs]})
    print(f"\n{'tutorial':<14} {'largest size in budget':<24} {'s':>6}  {'default size':<22} default s (measured / extrapolated)")
    for r in rows:
        big = "x".join(map(str, r["largest_in_budget"])) if r["largest_in_budget"] else "-"
        dflt = "x".join(map(str, r["default"])) + (f" ({r['default_launches']} launches)" if r["default_launches"] > 1 else "")
        if r["default_s"] is not None:
            d = f"{r['default_s']:.1f} (measured)"
        elif r["extrapolated_default_s"] is not None:
            d = f"~{r['extrapolated_default_s']:.3g} (extrapolated)"
        else:
            d = "-"
        print(f"{r['tutorial']:<14} {big:<24} {r['largest_s'] or 0:6.1f}  {dflt:<22} {d}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
