"""Emulator speed against a baseline commit: "nothing that ran before runs more than 5 % slower" (issue 24).

    python benchmarks/emu_regression.py [--base main] [--pairs 5] [--only NAME ...] [--limit 1.05] [--json OUT]

A fixed set of emulator workloads (WORKLOADS below: scalar and tensor-core kernels, a production stage, a CUTLASS
tutorial) runs in a fresh interpreter on this tree and on ``--base`` (exported with ``git archive`` into a temporary
directory), alternating A/B in each pair so that machine load hits both alike; each run reports its own wall time
of the workload proper (compile cache warm: one unmeasured run of each side first). Printed per workload: best and
median of each side and the ratios this/base; exit 1 when a best-of ratio exceeds ``--limit``. Times are only
compared within one run of this script (ratios, same machine, same moment).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# name -> Python source run in the tree under test; it prints the workload's wall seconds on its last line
WORKLOADS = {
    "gemv_scalar": (
        "import subprocess, sys, time, re\n"
        "t = time.perf_counter()\n"
        "out = subprocess.run([sys.executable, 'benchmarks/emu_throughput.py', '--m', '256', '--k', '1024',\n"
        "                      '--repeat', '1'], capture_output=True, text=True, check=True).stdout\n"
        "print(time.perf_counter() - t)\n"),
    "wgmma_sweep_f16": (
        "import sys, time, numpy as np, ptxlab\n"
        "sys.path.insert(0, 'tests/emu/ops'); sys.path.insert(0, 'tests/kernels')\n"
        "import test_emu_wgmma as t\n"
        "rng = np.random.default_rng(1)\n"
        "s = time.perf_counter(); t.test_every_shape(t.KINDS[0], rng); print(time.perf_counter() - s)\n"),
    "tutorial_02": (
        "import time, warnings, ptxlab, ptxlab.cutlass as pc\n"
        "warnings.simplefilter('ignore')\n"
        "dev = ptxlab.open_device('emu', strict=())\n"
        "pc.run('tutorial_02', dev, seed=1)\n"
        "s = time.perf_counter(); r = pc.run('tutorial_02', dev, m=256, n=512, k=192, seed=2)\n"
        "assert r.exact; print(time.perf_counter() - s)\n"),
    "stage_D2": (
        "import subprocess, sys, time\n"
        "s = time.perf_counter()\n"
        "subprocess.run([sys.executable, 'lab.py', '--stage', 'D2'], capture_output=True, check=True)\n"
        "print(time.perf_counter() - s)\n"),
}


def export(ref: str, dst: Path) -> Path:
    """``git archive ref`` unpacked into dst (the tree without its git metadata)."""
    tar = dst / "tree.tar"
    with open(tar, "wb") as f:
        subprocess.run(["git", "-C", str(REPO), "archive", ref], stdout=f, check=True)
    out = dst / "tree"
    out.mkdir()
    with tarfile.open(tar) as t:
        t.extractall(out, filter="data")
    return out


def run_once(tree: Path, code: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree))
    p = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"workload failed in {tree}:\n{p.stderr[-2000:]}")
    return float(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="main", help="git ref of the baseline (default main)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--only", nargs="*", choices=sorted(WORKLOADS))
    ap.add_argument("--limit", type=float, default=1.05)
    ap.add_argument("--json", default=None, help="write the times and ratios here")
    a = ap.parse_args(argv)
    names = a.only or list(WORKLOADS)
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = export(a.base, Path(tmp))
        for name in names:
            code = WORKLOADS[name]
            run_once(REPO, code), run_once(base, code)          # warm the compile cache on both sides
            this, other = [], []
            for _ in range(a.pairs):
                this.append(run_once(REPO, code))
                other.append(run_once(base, code))
            res[name] = dict(this=this, base=other, best_ratio=min(this) / min(other),
                             median_ratio=statistics.median(this) / statistics.median(other))
            r = res[name]
            print(f"{name:18s} this best {min(this):7.3f} s median {statistics.median(this):7.3f} s | base best "
                  f"{min(other):7.3f} s median {statistics.median(other):7.3f} s | ratio best {r['best_ratio']:.3f} "
                  f"median {r['median_ratio']:.3f}", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(dict(base=a.base, pairs=a.pairs, results=res), indent=1))
    bad = [n for n, r in res.items() if r["best_ratio"] > a.limit]
    print("SLOWER than the limit: " + ", ".join(bad) if bad else f"every workload within {a.limit:.2f}x of {a.base}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
