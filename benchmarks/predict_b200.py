"""B200 PREDICTIONS (timing model, not measurements) of the production kernels on every gpu-mode benchmark shape,
and of every GEMM design candidate (ptx_docs/production_gemm.md "Design space").

    python benchmarks/predict_b200.py [--gpu b200] [--only KERNEL ...] [--png-dir DIR] [--json OUT.json]
                                      [--cache CACHE.json] [--sensitivity [--every-shape]] [--before OLD.json]
                                      [--list]
    python benchmarks/predict_b200.py --check-tests [--only CANDIDATE ...] [--max-work W]   # bit-exactness

--check-tests runs each GEMM candidate (every CTA emulated, no timing) on ptxlab.gpumode.GEMM_TESTS with fresh data
and compares c bit for bit with the tensor-core model of its arithmetic (model_c; the split-K model for split-K);
--max-work skips shapes of more than W = (M/128)(N/256)(K/256) units (shape 5 has 9072: ~10 min alone).

Kernels: the CUDA-core NVFP4 GEMV (tuned config, sm_100a PTX, grid sized for the GPU's SMs), the fused tcgen05 GEMV,
and the GEMM candidates of CANDIDATES (``nvfp4_gemm`` = the production default; the others by name, ``--list``), on
ptxlab.gpumode.GEMV_BENCHMARKS / GEMM_BENCHMARKS. Each row: predicted µs, the bound, the busiest resources, the
biggest wait of the busiest warp role, the config the plan chose; --png-dir writes one timeline per kernel and shape.
Every row carries the model version: the git tree hash of ptxlab/timing (``model``), so a table can be re-made when
the model changes (--cache reuses rows of the same model, kernel sources and candidate). Parameters:
ptxlab/timing/params.py (B200 table: datasheets and publications; unsourced values listed with their sensitivity by
--sensitivity; with --every-shape on every shape, plus a table of each kernel's geomean in every scenario). --before
prints the before/after table against the rows of an earlier model (every TMA byte is charged: the timing recorder
turns the emulator's one-gather TMA read off while it records, ptxlab/timing/trace.py). Never fitted to any measured
B200 time.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ptxlab import gpumode  # noqa: E402
from ptxlab.timing import cli, trace_export  # noqa: E402


_LAST: Dict[str, Any] = {}   # the last candidate run's c (check_tests)


def _gemm(**kw: Any) -> Callable[[Any, Any], None]:
    def run(dev: Any, p: Any) -> None:
        from ptxlab.production.gemm import nvfp4_gemm

        report: Dict[str, Any] = {}
        _LAST["c"] = nvfp4_gemm(dev, p, report=report, **kw)
        _LAST["splits"] = report.get("splits", 1) if report.get("variant") == "cluster" else 1
    return run


def _splitk(reduce: str) -> Callable[[Any, Any], None]:
    """1sm + split-K. On a TIMED device the tile counters are pre-armed so that the sampled CTA (CTA 0, split 0 of
    tile 0: timing-only samples emulate the busiest SM's CTAs, which never include the tile's other splits) arrives
    LAST and its timeline includes the fixup the last arriver does on hardware (reading the other splits' partials);
    the outputs of such a run are not meaningful, its time is the critical path's. Untimed runs (--check-tests) use a
    zeroed workspace as production does."""
    def run(dev: Any, p: Any) -> None:
        import numpy as np
        from ptxlab.production.gemm import SplitKWorkspace, choose_bn, choose_splits, nvfp4_gemm

        s = choose_splits(p.m, p.n, p.k, p.l)
        ws = None
        if getattr(dev, "timing", None) and s > 1:
            ws = SplitKWorkspace(dev, p.m, p.n, p.l, choose_bn(p.n), s, reduce)
            dev.write(ws.counters, np.array([s - 1], dtype=np.uint32))
        try:
            _LAST["c"] = nvfp4_gemm(dev, p, variant="1sm", splits=s, reduce=reduce, workspace=ws)
        finally:
            if ws is not None:
                ws.free()
    return run


def _splitk_model(p: Any) -> Any:
    from ptxlab.production.gemm import choose_splits, model_c_splitk

    return model_c_splitk(p, choose_splits(p.m, p.n, p.k, p.l))


#: name -> (what it is, runner(dev, problem)). "nvfp4_gemm" is whatever nvfp4_gemm() runs by default.
CANDIDATES: Dict[str, tuple] = {
    "nvfp4_gemm": ("production default (variant cluster, plan's config: split-K over the cluster where it fits)",
                   _gemm()),
    "cluster_nosplit": ("plan's config without split-K (the default until issue 22 round 3: 64/16, 32/8, 64/8)",
                        _gemm(config={"splits": 1})),
    "cluster_xbarrier": ("plan's config, split-K exchange ordered by one cluster barrier (stage F6; the default until "
                         "issue 22 round 4, now opt-in config exchange='barrier')", _gemm(config={"exchange": "barrier"})),
    "cluster_k2_c4": ("BN 128, split-K 2 over (1, 4, 2) clusters (portable 8-CTA clusters on every shape)",
                      _gemm(config={"bn": 128, "splits": 2, "cluster": 4})),
    "cluster_k2_c8": ("BN 128, split-K 2 over (1, 8, 2) clusters (16 CTAs, non-portable)",
                      _gemm(config={"bn": 128, "splits": 2, "cluster": 8})),
    "cluster_k4": ("BN 128, split-K 4 over the cluster (C = 16 or 8 / 4)", _gemm(config={"bn": 128, "splits": 4})),
    "cluster_bn32": ("cluster kernel, BN 32 (cluster size by the plan)", _gemm(config={"bn": 32})),
    "cluster_bn64": ("cluster kernel, BN 64", _gemm(config={"bn": 64})),
    "cluster_bn128": ("cluster kernel, BN 128 (= the swap-A/B tile: M_mma 128 x N_mma 128)", _gemm(config={"bn": 128})),
    "cluster_bn256": ("cluster kernel, BN 256", _gemm(config={"bn": 256})),
    "cluster_c1": ("no-split plan's BN, no cluster (A loaded by every CTA, no multicast)",
                   _gemm(config={"cluster": 1, "splits": 1})),
    "cluster_c4": ("no-split plan's BN, 4-CTA clusters", _gemm(config={"cluster": 4, "splits": 1})),
    "cluster_c8": ("no-split plan's BN, 8-CTA clusters", _gemm(config={"cluster": 8, "splits": 1})),
    "cluster_c16": ("no-split plan's BN, 16-CTA clusters (non-portable)", _gemm(config={"cluster": 16, "splits": 1})),
    "cluster_warm0": ("plan's config, no warm-up K blocks (multicast waits for the cluster barrier)",
                      _gemm(config={"warm": 0})),
    "nvfp4_gemm_1sm": ("1sm kernel, BN 256, one tile per CTA (the earlier default)", _gemm(variant="1sm")),
    "nvfp4_gemm_2sm": ("2sm kernel (CTA pairs, cta_group::2, M 256)", _gemm(variant="2sm")),
    "splitk_ordered": ("1sm kernel + split-K (choose_splits), ordered reduction (deterministic, the split-K default)",
                       _splitk("ordered")),
    "splitk_atomic": ("1sm kernel + split-K (choose_splits), red.add reduction (NON-DETERMINISTIC, opt-in)",
                      _splitk("atomic")),
}
#: the bit-exact model of a candidate's arithmetic, where it is not ptxlab.production.gemm.model_c
MODELS: Dict[str, Callable[[Any], Any]] = {"splitk_ordered": _splitk_model}
#: the cluster kernel's split-K: the model of the split the launch used (report["splits"]; 1 = model_c)


def check_tests(only=None, max_work: int = 10**9, indices=None) -> int:
    """Every candidate on every GEMM_TESTS shape (W <= max_work), all CTAs emulated: c == its model bit for bit (the
    atomic split-K, whose order is the emulator's: within gpu-mode's 1e-3 of the model instead). 0 when all pass."""
    import numpy as np
    import ptxlab
    from ptxlab.production.gemm import model_c

    dev = ptxlab.open_device("emu")
    fails = 0
    for name in (only or list(CANDIDATES)):
        for i, t in enumerate(gpumode.GEMM_TESTS):
            if indices is not None and i not in indices:
                continue
            w = (t["m"] // 128) * (t["n"] // 256) * (t["k"] // 256)
            if w > max_work:
                print(f"{name:>16} [{i}] {t['m']}x{t['n']}x{t['k']}x{t['l']}: skipped (W = {w} > {max_work})")
                continue
            seed = int(np.random.SeedSequence().entropy % (2**31))
            p = gpumode.generate_gemm(t["m"], t["n"], t["k"], t["l"], seed)
            t0 = time.perf_counter()
            try:
                CANDIDATES[name][1](dev, p)
            except Exception as exc:   # a candidate that cannot run a shape says so
                print(f"{name:>16} [{i}] {t['m']}x{t['n']}x{t['k']}x{t['l']}: cannot run ({exc})")
                continue
            c = _LAST.get("c")
            if name in MODELS:
                want = MODELS[name](p)
            else:
                from ptxlab.production.gemm import model_c_splitk

                want = model_c_splitk(p, _LAST["splits"]) if _LAST.get("splits", 1) > 1 else model_c(p)
            if name == "splitk_atomic":
                ok = not gpumode.check_close(c, want, rtol=1e-3, atol=1e-3)
            else:
                ok = bool((c.view(np.uint16) == want.view(np.uint16)).all())
            fails += not ok
            print(f"{name:>16} [{i}] {t['m']}x{t['n']}x{t['k']}x{t['l']}: {'PASS' if ok else 'FAIL'} "
                  f"({'1e-3' if name == 'splitk_atomic' else 'bit-exact'}, splits {_LAST.get('splits', 1)}, "
                  f"seed {seed}, "
                  f"{time.perf_counter() - t0:.1f} s)", flush=True)
    return 1 if fails else 0


def model_version() -> str:
    """The git tree hash of ptxlab/timing (the model's code and parameters); a content hash when git is missing."""
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD:ptxlab/timing"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "ptxlab/timing"],
                               capture_output=True, text=True).stdout.strip()
        return out[:12] + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        h = hashlib.sha256()
        for f in sorted((REPO / "ptxlab" / "timing").glob("*.py")):
            h.update(f.read_bytes())
        return "sha256:" + h.hexdigest()[:12]


def sources_version(name: str) -> str:
    """Hash of what a row depends on besides the model: the flattened kernel text of the candidate (blocks included)
    and the GEMM host code (plan, wrappers); for the GEMVs their kernel files and wrappers."""
    from ptxlab.kernels.flatten import flatten
    from ptxlab.production.plan_gemm import GEMM_VARIANT

    h = hashlib.sha256()
    if name.startswith("nvfp4_gemv"):
        files = ["nvfp4_gemv_cudacore.cu", "nvfp4_gemv_tcgen05.cu"]
        host = ["gemv.py", "gemv_tcgen05.py", "plan_gemv.py"]
    else:
        cluster = name.startswith("cluster") or (name == "nvfp4_gemm" and GEMM_VARIANT == "cluster")
        files = ["nvfp4_gemm_cluster.cu" if cluster else "nvfp4_gemm_tcgen05.cu"]
        host = ["gemm.py", "gemm_cluster.py", "plan_gemm.py"]
    for f in files:
        h.update(flatten(f).encode())
    for f in host:
        h.update((REPO / "ptxlab" / "production" / f).read_bytes())
    return h.hexdigest()[:12]


def _timed(name: str, shape, gpu: str):
    """Run one prediction; returns the Timing and the launch report (config) where there is one."""
    import ptxlab

    if name in ("nvfp4_gemv", "nvfp4_gemv_tcgen05"):
        return cli.run_problem(name, shape, gpu), {}
    m, n, k, l = shape
    dev = ptxlab.open_device("emu", timing=gpu)
    with warnings.catch_warnings():
        from ptxlab.timing.predict import TimingSampleWarning

        warnings.simplefilter("ignore", TimingSampleWarning)
        CANDIDATES[name][1](dev, gpumode.generate_gemm(m, n, k, l, 1))
    t = dev.last_timing
    if t.amounts.get("tma_ops") and not (t.amounts.get("dram_bytes") or t.amounts.get("l2_bytes")):
        print(f"WARNING: {name} {shape}: {t.amounts['tma_ops']:.0f} TMA operations charged no DRAM / L2 bytes (the "
              "timing recorder did not see their reads: ptxlab/timing/trace.py, heap.gather_rows)", file=sys.stderr, flush=True)
    return t, {}


def row_of(name: str, shape, gpu: str, t, wall: float, model: str, sources: str) -> dict:
    top = sorted(((k, v) for k, v in t.utilization.items() if k != "launch/tail"), key=lambda kv: -kv[1])[:2]
    waits = []
    for wi, s in t.warps.items():
        if s["waits"]:
            k, v = max(s["waits"].items(), key=lambda kv: kv[1])
            waits.append((v, wi, k))
    waits.sort(reverse=True)
    return {"kernel": name, "shape": list(shape), "predicted_us": round(t.us, 2), "bound": t.bound,
            "top_resources": {k: round(v, 2) for k, v in top}, "ctas": t.ctas, "ctas_per_sm": t.ctas_per_sm,
            "busy_sms": t.busy_sms, "grid": list(t.grid), "sampled": t.sampled, "wall_s": round(wall, 1),
            "dram_mb": round(t.amounts.get("dram_bytes", 0.0) / 1e6, 2),
            "l2_mb": round(t.amounts.get("l2_bytes", 0.0) / 1e6, 2),
            "biggest_wait": (f"warp {waits[0][1]}: {waits[0][2]} {waits[0][0] / (t.clock_ghz * 1e3):.2f} us"
                             if waits else ""), "gpu": gpu, "model": model, "sources": sources}


def jobs_for(only) -> list:
    jobs = [("nvfp4_gemv", (b["m"], b["k"], b["l"])) for b in gpumode.GEMV_BENCHMARKS]
    jobs += [("nvfp4_gemv_tcgen05", (b["m"], b["k"], b["l"])) for b in gpumode.GEMV_BENCHMARKS]
    for name in CANDIDATES:
        jobs += [(name, (b["m"], b["n"], b["k"], b["l"])) for b in gpumode.GEMM_BENCHMARKS]
    if only:
        jobs = [j for j in jobs if j[0] in only]
    return jobs


def _key(r: dict) -> tuple:
    """A row's identity in a --cache file: kernel, shape, GPU, model and kernel-source versions."""
    return (r["kernel"], tuple(r["shape"]), r.get("gpu"), r.get("model"), r.get("sources"))


def rows(gpu: str, png_dir=None, sens: bool = False, only=None, cache: Optional[Path] = None,
         sens_every: bool = False) -> list:
    model = model_version()
    cached = {}
    if cache is not None and cache.exists():
        cached = {_key(r): r for r in json.loads(cache.read_text())}
    out = []
    first = set()
    for name, shape in jobs_for(only):
        sources = sources_version(name)
        key = (name, tuple(shape), gpu, model, sources)
        want_sens = sens and (sens_every or name not in first)
        if key in cached and not (png_dir or (want_sens and not cached[key].get(
                "sensitivity_all" if sens_every else "sensitivity"))):
            out.append(cached[key])
            print(f"{name:>20} {'x'.join(map(str, shape)):>16}: {cached[key]['predicted_us']:8.2f} us PREDICTED "
                  "(cached)", flush=True)
            first.add(name)
            continue
        t0 = time.perf_counter()
        t, _ = _timed(name, shape, gpu)
        row = row_of(name, shape, gpu, t, time.perf_counter() - t0, model, sources)
        if want_sens:
            row["sensitivity"] = [(n, round(lo, 2), round(hi, 2)) for n, lo, hi in
                                  cli.sensitivity(t, gpu)[:None if sens_every else 6]]
            row["sensitivity_all"] = sens_every
        if png_dir:
            from ptxlab.production.plan_gemm import GEMM_VARIANT

            tag = f"nvfp4_gemm_{GEMM_VARIANT}" if name == "nvfp4_gemm" else name   # the default: named by variant
            stem = f"timing_{gpu}_{tag}_{'x'.join(map(str, shape))}"
            trace_export.write_png(t, Path(png_dir) / f"{stem}.png")
            row["png"] = str(Path(png_dir) / f"{stem}.png")
        first.add(name)
        out.append(row)
        print(f"{name:>20} {'x'.join(map(str, shape)):>16}: {t.us:8.2f} us PREDICTED, bound {t.bound}; "
              f"{row['biggest_wait']} ({row['wall_s']:.1f} s)", flush=True)
        if cache is not None:   # keep what is done, so an interrupted run resumes
            keep = {_key(r): r for r in (json.loads(cache.read_text()) if cache.exists() else [])}
            keep[key] = row
            cache.write_text(json.dumps(list(keep.values()), indent=1))
    return out


def geomeans(rs: list) -> dict:
    """{kernel: geometric mean of its predicted µs} over the GEMM benchmark shapes (kernels with all three)."""
    import math

    want = {tuple((b["m"], b["n"], b["k"], b["l"])) for b in gpumode.GEMM_BENCHMARKS}
    by: Dict[str, dict] = {}
    for r in rs:
        if tuple(r["shape"]) in want:
            by.setdefault(r["kernel"], {})[tuple(r["shape"])] = r["predicted_us"]
    return {k: round(math.exp(sum(math.log(v) for v in d.values()) / len(d)), 2) for k, d in by.items()
            if set(d) == want}


def sensitivity_ranking(rs: list) -> list:
    """Markdown lines: per scenario (one unsourced parameter x0.5 or x2, from rows that carry every shape's
    sensitivity, --every-shape) each GEMM kernel's geomean over the 3 shapes, and the fastest; [] without such rows."""
    base = geomeans(rs)
    scen: Dict[tuple, list] = {}
    for r in rs:
        for name, lo, hi in r.get("sensitivity", ()):
            for f, us in (("x0.5", lo), ("x2", hi)):
                scen.setdefault((name, f), []).append({**r, "predicted_us": us})
    table = {k: geomeans(v) for k, v in scen.items()}
    kernels = sorted({k for g in table.values() for k in g}, key=lambda k: base.get(k, 1e9))
    if not kernels:
        return []
    out = ["", "| scenario | " + " | ".join(kernels) + " | fastest |", "|---|" + "---:|" * len(kernels) + "---|",
           "| table's values | " + " | ".join(f"{base[k]:.2f}" for k in kernels) + f" | {kernels[0]} |"]
    for (name, f), g in sorted(table.items()):
        if set(g) != set(kernels):
            continue
        best = min(g, key=g.get)
        out.append(f"| {name} {f} | " + " | ".join(f"{g[k]:.2f}" for k in kernels) + f" | {best} |")
    return out


def compare_table(before: list, after: list) -> str:
    """Markdown: every GEMM candidate of `after` sorted by its geomean, each shape's predicted µs with the `before`
    prediction (another model) in parentheses, and the bounds: the before/after table of a model change."""
    shapes = [(b["m"], b["n"], b["k"], b["l"]) for b in gpumode.GEMM_BENCHMARKS]
    old = {(r["kernel"], tuple(r["shape"])): r for r in before}
    new = {(r["kernel"], tuple(r["shape"])): r for r in after}
    g_old, g_new = geomeans(before), geomeans(after)
    models = [sorted({r.get("model", "?") for r in x}) for x in (before, after)]
    head = " | ".join(f"{'x'.join(map(str, s[:3]))} µs" for s in shapes)
    lines = [f"| candidate | what | {head} | geomean µs | bound (per shape) |",
             "|---|---|" + "---:|" * (len(shapes) + 1) + "---|"]

    def cell(k, s):
        o = old.get((k, s))
        return f"{new[(k, s)]['predicted_us']:.2f}" + (f" ({o['predicted_us']:.2f})" if o else "")

    for k in sorted(g_new, key=g_new.get):
        what = CANDIDATES[k][0] if k in CANDIDATES else k
        go = f" ({g_old[k]:.2f})" if k in g_old else ""
        lines.append(f"| {k} | {what} | " + " | ".join(cell(k, s) for s in shapes) + f" | {g_new[k]:.2f}{go} | "
                     + " / ".join(new[(k, s)]["bound"] for s in shapes) + " |")
    lines += ["", f"Model {', '.join(models[1])}; in parentheses: model {', '.join(models[0])}."]
    return "\n".join(lines)


def markdown(rs: list, gpu: str) -> str:
    lines = [f"| kernel | shape | predicted {gpu.upper()} µs | bound | busiest resources | CTAs (per SM, SMs busy) | "
             "biggest wait (per warp) |", "|---|---|---:|---|---|---|---|"]
    for r in rs:
        res = ", ".join(f"{k} {100 * v:.0f} %" for k, v in r["top_resources"].items())
        lines.append(f"| {r['kernel']} | {'x'.join(map(str, r['shape']))} | {r['predicted_us']:.2f} | {r['bound']} | "
                     f"{res} | {r['ctas']} ({r['ctas_per_sm']}, {r['busy_sms']}) | {r['biggest_wait']} |")
    g = geomeans(rs)
    if g:
        lines += ["", "| kernel | geomean over the 3 GEMM shapes, µs |", "|---|---:|"]
        lines += [f"| {k} | {v:.2f} |" for k, v in sorted(g.items(), key=lambda kv: kv[1])]
    lines += sensitivity_ranking(rs)
    models = sorted({r.get("model", "?") for r in rs})
    lines += ["", f"model (git tree of ptxlab/timing): {', '.join(models)}"]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="b200")
    ap.add_argument("--png-dir")
    ap.add_argument("--json")
    ap.add_argument("--cache", help="JSON of earlier rows: rows of the same model, sources and candidate are reused")
    ap.add_argument("--sensitivity", action="store_true",
                    help="replay each kernel's first shape with every unsourced parameter x0.5 and x2")
    ap.add_argument("--every-shape", action="store_true",
                    help="--sensitivity on every shape, all unsourced parameters: the table then ranks the kernels' "
                         "geomeans in each scenario (is the fastest still the fastest?)")
    ap.add_argument("--only", nargs="*", help="kernels / candidates to predict (default: all)")
    ap.add_argument("--list", action="store_true", help="list the GEMM candidates and exit")
    ap.add_argument("--before", help="JSON of an earlier run (another model): print the before/after table too")
    ap.add_argument("--check-tests", action="store_true",
                    help="run the GEMM candidates on GEMM_TESTS (all CTAs, no timing), bit-exact against their model")
    ap.add_argument("--max-work", type=int, default=10**9, help="--check-tests: skip shapes with more work units")
    ap.add_argument("--tests", default=None, help="--check-tests: comma-separated GEMM_TESTS indices (default: all)")
    args = ap.parse_args(argv)
    if args.list:
        for k, (what, _) in CANDIDATES.items():
            print(f"{k:>16}: {what}")
        return 0
    unknown = set(args.only or ()) - set(CANDIDATES) - {"nvfp4_gemv", "nvfp4_gemv_tcgen05"}
    if unknown:
        ap.error(f"unknown kernel(s) {sorted(unknown)}; see --list")
    if args.check_tests:
        return check_tests(args.only, args.max_work,
                           None if args.tests is None else {int(x) for x in args.tests.split(",") if x.strip()})
    if args.png_dir:
        Path(args.png_dir).mkdir(parents=True, exist_ok=True)
    rs = rows(args.gpu, args.png_dir, args.sensitivity, args.only, Path(args.cache) if args.cache else None,
              args.every_shape)
    print(markdown(rs, args.gpu))
    if args.before:
        print("\n" + compare_table(json.loads(Path(args.before).read_text()), rs))
    if args.json:
        Path(args.json).write_text(json.dumps(rs, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
