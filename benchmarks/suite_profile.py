"""Where the cold-cache suite's time goes: a fresh clone, an empty compile cache, per-test and per-compile costs.

    python benchmarks/suite_profile.py [--repo .] [--workers 2] [--out DIR] [--keep] [-- PYTEST ARGS]
    python benchmarks/suite_profile.py --report DIR          # the tables again, from a finished run

Clones ``--repo`` (its committed HEAD) into a temporary directory, runs ``python -m pytest -n WORKERS --dist worksteal
--durations=80`` there (the suite of ``.ci/run``, with this interpreter: no fresh venv) with ``PTXLAB_CACHE`` an
empty directory and the plugin benchmarks/suite_profile_plugin.py, then, unless ``--no-interp``, the interpreter pass
of ``.ci/run`` on the same cache.  Writes ``DIR/profile.jsonl`` (one line per test and per compile), the pytest output
(``DIR/pytest.txt``, ``DIR/interp.txt``) and prints: wall and CPU of each pass, the load average before and after,
the 25 costliest tests by CPU, compiles by kind (``lineinfo`` = the ``-lineinfo`` rebuilds of emulator reports,
whose NVRTC time is also in ``nvrtc``), modules built more than once, and each worker's idle time at the end
(xdist imbalance).  The machine's other load inflates wall times; CPU seconds are the comparable measure.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _pass(clone: Path, cache: Path, log: Path, out: Path, args: list, env_extra: dict) -> dict:
    env = dict(os.environ, PTXLAB_CACHE=str(cache), CI="1", SUITE_PROFILE_LOG=str(log),
               PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               **env_extra)
    load0, t, c = os.getloadavg(), time.time(), _children_cpu()
    with open(out, "w") as fh:
        rc = subprocess.run([sys.executable, "-m", "pytest", "-p", "suite_profile_plugin", *args], cwd=clone, env=env,
                            stdout=fh, stderr=subprocess.STDOUT).returncode
    return dict(rc=rc, wall=round(time.time() - t, 1), cpu=round(_children_cpu() - c, 1), load_before=load0,
                load_after=os.getloadavg())


def report(out: Path) -> None:
    recs = [json.loads(ln) for ln in (out / "profile.jsonl").read_text().splitlines() if ln.strip()]
    meta = json.loads((out / "passes.json").read_text()) if (out / "passes.json").exists() else {}
    for name, p in meta.items():
        print(f"{name}: rc {p['rc']}, wall {p['wall']} s, CPU {p['cpu']} s, load {p['load_before'][0]:.1f} -> "
              f"{p['load_after'][0]:.1f}")
    tests = [r for r in recs if r["kind"] == "test"]
    print(f"\n{len(tests)} tests, CPU {sum(r['cpu'] for r in tests):.0f} s, wall summed {sum(r['wall'] for r in tests):.0f} s"
          "\ncostliest 25 tests by CPU (s):")
    for r in sorted(tests, key=lambda r: -r["cpu"])[:25]:
        print(f"  {r['cpu']:7.1f} cpu {r['wall']:7.1f} wall  {r['test']}")
    print("\ncompiles: kind, count, CPU s, wall s")
    by = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for r in recs:
        if r["kind"] != "test":
            by[r["kind"]][0] += 1
            by[r["kind"]][1] += r["cpu"]
            by[r["kind"]][2] += r["wall"]
    for k, (n, cpu, wall) in sorted(by.items()):
        print(f"  {k:9s} {n:5d} {cpu:8.1f} {wall:8.1f}")
    big = sorted((r for r in recs if r["kind"] in ("nvrtc", "lineinfo") and r["cpu"] > 5), key=lambda r: -r["cpu"])
    print("\ncompiles over 5 CPU-s:")
    for r in big:
        print(f"  {r['kind']:8s} {r['cpu']:6.1f} cpu {r['wall']:7.1f} wall {r['name']:28s} {r['test']}")
    keys = collections.Counter((r["kind"], r["key"]) for r in recs if r["kind"] in ("nvrtc", "jitlink"))
    dup = [(k, n) for k, n in keys.items() if n > 1]
    print(f"\nmodules built more than once: {len(dup)}")
    for (kind, key), n in dup[:20]:
        names = {r["name"] for r in recs if r.get("key") == key}
        print(f"  {kind} x{n} {sorted(names)}")
    ends = collections.defaultdict(float)
    for r in tests:
        ends[r["pid"]] = max(ends[r["pid"]], r["t0"] + r["wall"])
    if len(ends) > 1:
        last = max(ends.values())
        print("\nworker idle at the end (s): " + ", ".join(f"{last - e:.0f}" for e in sorted(ends.values())))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default=str(HERE.parent))
    ap.add_argument("--workers", default="2")
    ap.add_argument("--out", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the clone and the cache")
    ap.add_argument("--no-interp", action="store_true", help="skip the interpreter pass")
    ap.add_argument("--report", default=None, help="print the tables of a finished run's DIR")
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()
    if a.report:
        report(Path(a.report))
        return 0
    out = Path(a.out or tempfile.mkdtemp(prefix="suite_profile_"))
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="suite_profile_clone_"))
    clone, cache, log = work / "clone", work / "cache", out / "profile.jsonl"
    subprocess.run(["git", "clone", "-q", a.repo, str(clone)], check=True)
    cache.mkdir()
    log.unlink(missing_ok=True)
    xd = ["-n", a.workers, "--dist", "worksteal"]
    passes = {"suite": _pass(clone, cache, log, out / "pytest.txt", [*xd, "--durations=80", *a.pytest_args], {})}
    if not a.no_interp and passes["suite"]["rc"] == 0:
        passes["interp"] = _pass(clone, cache, log, out / "interp.txt",
                                 [*xd, "-q", "--durations=40", "tests/emu/ops", "tests/emu/checks"],
                                 {"PTXLAB_EMU_ENGINE": "interp"})
    (out / "passes.json").write_text(json.dumps(passes, indent=1))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    report(out)
    print(f"\nfiles: {out}")
    return max(p["rc"] for p in passes.values())


if __name__ == "__main__":
    sys.exit(main())
