"""``python lab.py time ...``: predict a kernel's time on a GPU and show where it goes.

    lab.py time --problem nvfp4_gemv --shape 7168,16384,1 [--gpu b200] [--trace out.json] [--png out.png]
    lab.py time --problem nvfp4_gemv_tcgen05 --shape 7168,16384,1
    lab.py time --problem nvfp4_gemm --shape 128,7168,16384,1
    lab.py time --stage E2                    # every launch of a lab stage (on the emulator)
    lab.py time [options] my_script.py [args ...]   # every launch a script makes on open_device("emu")
    lab.py time --compare a.py b.py           # two designs side by side: which is faster, and why
    lab.py time --compare nvfp4_gemm:128,7168,16384,1 nvfp4_gemm_2sm:128,7168,16384,1
    lab.py time --compare nvfp4_gemv:7168,16384,1:4,2,2 nvfp4_gemv:7168,16384,1:8,1,2   # PROBLEM:SHAPE[:CONFIG]

Stages and scripts are timed through the environment: PTXLAB_TIMING=<gpu> makes every ``open_device("emu")``
predict its launches (ptxlab.timing.predict.HISTORY keeps them).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List

from rich.console import Console

PROBLEMS = ("nvfp4_gemv", "nvfp4_gemv_tcgen05", "nvfp4_gemm", "nvfp4_gemm_2sm")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="lab.py time", description=__doc__.split("\n\n")[0])
    ap.add_argument("script", nargs="?", help="a Python script that launches kernels on open_device('emu')")
    ap.add_argument("script_args", nargs=argparse.REMAINDER)
    ap.add_argument("--gpu", default="b200", help="h100 | h200 | b200 (default b200)")
    ap.add_argument("--problem", choices=PROBLEMS)
    ap.add_argument("--shape", help="M,K,L for a GEMV, M,N,K,L for the GEMM")
    ap.add_argument("--config", help="CUDA-core GEMV config, e.g. 4,2,2 or flat,16,2,1,2 (default: the tuned one)")
    ap.add_argument("--stage", help="time every launch of this lab stage")
    ap.add_argument("--sample", default=None,
                    help="'all' emulates every CTA (default for --stage / scripts: their checks need every output), "
                         "'auto' only the busiest SM's CTAs (default for --problem: timing only)")
    ap.add_argument("--trace", help="write a Chrome-trace / Perfetto JSON of the (last) launch to this file")
    ap.add_argument("--png", help="write a PNG timeline of one CTA of the (last) launch to this file")
    ap.add_argument("--sensitivity", action="store_true",
                    help="replay the trace with each unsourced parameter halved / doubled")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"),
                    help="predict two kernels side by side: scripts (a.py) or PROBLEM:SHAPE[:CONFIG] "
                         "(e.g. nvfp4_gemm:128,7168,16384,1)")
    return ap


SHAPE_ARITY = {"nvfp4_gemv": "M,K,L", "nvfp4_gemv_tcgen05": "M,K,L", "nvfp4_gemm": "M,N,K,L",
               "nvfp4_gemm_2sm": "M,N,K,L"}


def _validate(args) -> None:
    """Every argument that can be checked without emulating, checked before anything runs (UsageError: lab.py
    prints one ``error: ...`` line and exits 2)."""
    from ptxlab.errors import UsageError

    from . import params as P
    if args.gpu.strip().lower() not in P.TABLES:
        raise UsageError(f"--gpu {args.gpu}: unknown GPU; use one of {', '.join(P.TABLES)}")
    if args.sample is not None and args.sample.strip().lower() not in P.SAMPLE_MODES:
        raise UsageError(f"--sample {args.sample}: use 'all' or 'auto'")
    modes = [m for m, v in (("--compare", args.compare), ("--problem", args.problem), ("--stage", args.stage),
                            (f"script {args.script}", args.script)) if v]
    if len(modes) > 1:       # one of them would be ignored without a word
        raise UsageError(f"{' and '.join(modes)}: give one of --compare A B, --problem, --stage or a script")
    if args.compare:
        extra = [o for o, v in (("--trace", args.trace), ("--png", args.png), ("--sensitivity", args.sensitivity)) if v]
        if extra:
            raise UsageError(f"{', '.join(extra)}: not with --compare (they describe one kernel: time A or B alone)")
    if args.shape and not args.problem:
        raise UsageError("--shape applies to --problem only (--compare takes PROBLEM:SHAPE[:CONFIG])")
    if args.problem:
        want = SHAPE_ARITY[args.problem]
        if not args.shape:
            raise UsageError(f"--problem {args.problem} needs --shape {want}")
        parts = args.shape.split(",")
        if len(parts) != len(want.split(",")) or not all(x.strip().isdigit() and int(x) > 0 for x in parts):
            raise UsageError(f"--shape {args.shape}: --problem {args.problem} takes {len(want.split(','))} positive "
                             f"integers {want}")
        if args.config and args.problem != "nvfp4_gemv":
            raise UsageError(f"--config applies to --problem nvfp4_gemv only, not {args.problem}")
        _check_problem(args.problem, tuple(int(x) for x in parts), args.config)
    if not 0 <= args.seed < 2**32:
        raise UsageError(f"--seed {args.seed}: use an integer in 0 .. 2**32-1")
    if args.config and not args.problem:
        raise UsageError("--config applies to --problem nvfp4_gemv only")
    if args.problem:
        pass
    elif args.stage:
        from ptxlab.lab.registry import discover, select
        select(discover(), [args.stage])           # unknown ids raise (PtxlabError: exit 2, one line)
    elif args.script and not os.path.isfile(args.script):
        raise UsageError(f"script {args.script}: no such file")
    for c in args.compare or ():
        _parse_target(c)                           # raises UsageError for a bad target
    for opt, path in (("--trace", args.trace), ("--png", args.png)):
        if path is None:
            continue
        if os.path.isdir(path):
            raise UsageError(f"{opt} {path}: is a directory; give a file name (e.g. {os.path.join(path, 'timeline')}"
                             f"{'.json' if opt == '--trace' else '.png'})")
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise UsageError(f"{opt} {path}: directory {parent} does not exist")
        if not os.access(parent, os.W_OK):
            raise UsageError(f"{opt} {path}: directory {parent} is not writable")


def _parse_target(spec: str) -> tuple:
    """A --compare target: ("script", path) or ("problem", name, shape, config)."""
    from ptxlab.errors import UsageError
    if spec.endswith(".py"):
        if not os.path.isfile(spec):
            raise UsageError(f"--compare {spec}: no such file")
        return ("script", spec)
    parts = spec.split(":")
    if parts[0] not in PROBLEMS or not 2 <= len(parts) <= 3:
        raise UsageError(f"--compare {spec}: give a script (x.py) or PROBLEM:SHAPE[:CONFIG] with PROBLEM one of "
                         f"{', '.join(PROBLEMS)}")
    want = SHAPE_ARITY[parts[0]]
    dims = parts[1].split(",")
    if len(dims) != len(want.split(",")) or not all(x.strip().isdigit() and int(x) > 0 for x in dims):
        raise UsageError(f"--compare {spec}: {parts[0]} takes {want}")
    config = parts[2] if len(parts) > 2 else None
    if config and parts[0] != "nvfp4_gemv":
        raise UsageError(f"--compare {spec}: a CONFIG applies to nvfp4_gemv only, not {parts[0]}")
    shape = tuple(int(x) for x in dims)
    try:       # the same shape rules, size bound and config checks as --problem / --shape / --config
        _check_problem(parts[0], shape, config)
    except UsageError as exc:
        raise UsageError(f"--compare {spec}: {exc}") from None
    return ("problem", parts[0], shape, _parse_config(config))
MAX_DIM, MAX_ELEMS = 1 << 16, 1 << 31      # emulator-sized problems: the gpu-mode shapes are far inside both


def _check_problem(problem: str, shape: tuple, config) -> None:
    """The shape rules of each production kernel and a size bound, checked before any data is made (UsageError)."""
    from ptxlab.errors import UsageError

    if max(shape) > MAX_DIM or (shape[0] * shape[-2] * shape[-1] if len(shape) == 3 else
                                max(shape[0], shape[1]) * shape[2] * shape[3]) > MAX_ELEMS:
        raise UsageError(f"--shape {','.join(map(str, shape))}: too large for the emulator (each size <= {MAX_DIM}, "
                         f"operand elements <= {MAX_ELEMS:,}); the gpu-mode shapes are far inside this")
    try:
        if problem == "nvfp4_gemv":
            m, k, l = shape
            if k % 32:
                raise ValueError(f"K={k} must be a multiple of 32 (the CUDA-core GEMV's K step)")
            cfg = _parse_config(config)
            if cfg is not None:
                from ptxlab.production.plan_gemv import fits, full_config
                c = full_config(cfg)          # ValueError on more entries than the variant has
                nums = [v for v in c if not isinstance(v, str)]
                if any(v < 0 or v > 1024 for v in nums) or (not isinstance(c[0], str) and
                                                                            min(c[:3]) < 1):
                    raise ValueError(f"--config {config}: values out of range (positive rows/warps/unroll, <= 1024)")
                if not fits(c, m, k):
                    raise ValueError(f"--config {config} cannot run M={m} K={k}")
        elif problem == "nvfp4_gemv_tcgen05":
            from ptxlab.production.gemv_tcgen05 import NB, check_shape
            check_shape(shape[0], shape[1], shape[2], NB)
        else:
            from ptxlab.production.plan_gemm import check_shape as gemm_shape
            m, n, k, l = shape
            gemm_shape(m, n, k, l, 256 if n % 256 == 0 else 128)
            if problem == "nvfp4_gemm_2sm" and m % 256 not in (0, 128):
                raise ValueError(f"M={m} must be a multiple of 128 for the 2-SM GEMM")
    except ValueError as exc:
        raise UsageError(f"--problem {problem} --shape {','.join(map(str, shape))}: {exc}") from None


def _parse_config(s):
    if not s:
        return None
    parts = [p.strip() for p in s.split(",")]
    if not all(p.lstrip("-").isdigit() for p in parts[1 if parts[0] == "flat" else 0:]):
        raise ValueError(f"--config {s}: integers, optionally after 'flat' (e.g. 4,2,2 or flat,16,2,1,2)")
    return tuple(p if not p.lstrip("-").isdigit() else int(p) for p in parts)


def run_problem(problem: str, shape, gpu, config=None, sample=None, seed: int = 1):
    """Predict one production kernel launch at a gpu-mode shape; returns the Timing.

    The CUDA-core GEMV is compiled for the GPU's architecture (sm_100a on a B200: cvt e2m1x2 decode; sm_90a else)
    and its persistent (flat) grid is sized for the GPU's SM count, as the gpu-mode adapter does on that GPU."""
    import warnings

    with warnings.catch_warnings():     # the table reports the sampling ("emulation" row)
        from .predict import TimingSampleWarning
        warnings.simplefilter("ignore", TimingSampleWarning)
        return _run_problem(problem, shape, gpu, config, sample, seed)


def _run_problem(problem: str, shape, gpu, config=None, sample=None, seed: int = 1):
    import numpy as np

    import ptxlab
    from ptxlab import gpumode

    from . import params as P
    p = P.get(gpu)
    dev = ptxlab.open_device("emu", timing=gpu, timing_sample=sample)
    if problem == "nvfp4_gemv":
        from ptxlab.production import gemv as G
        from ptxlab.production.plan_gemv import launch_plan, pick_config
        m, k, l = shape
        arch = "sm_100a" if p.name == "b200" else "sm_90a"
        cfg = tuple(config) if config else tuple(pick_config(m, k, l, arch))
        prob = gpumode.generate_gemv(m, k, l, seed)
        mod = G.compile_gemv(arch, cfg)
        bufs = [dev.to_device(G.physical(x)) for x in (prob.a, prob.b, prob.sfa, prob.sfb)]
        c = dev.empty(l * m * 2)
        grid, block, smem = launch_plan(m, k, l, cfg, sms=p.sms)
        dev.launch(mod, G.KERNEL_NAME, grid=grid, block=block, shared_bytes=smem,
                   args=[*bufs, c, np.int32(m), np.int32(k), np.int32(l)])
    elif problem == "nvfp4_gemv_tcgen05":
        from ptxlab.production.gemv_tcgen05 import run_gemv_tcgen05
        m, k, l = shape
        run_gemv_tcgen05(gpumode.generate_gemv(m, k, l, seed), device=dev)
    else:   # nvfp4_gemm: the production default (PTXLAB_GEMM_VARIANT, "cluster" unless set); nvfp4_gemm_2sm: the
        # opt-in cta_group::2 variant (2-CTA clusters)
        from ptxlab.production.gemm import nvfp4_gemm
        from ptxlab.production.plan_gemm import resolve_variant
        m, n, k, l = shape
        nvfp4_gemm(dev, gpumode.generate_gemm(m, n, k, l, seed),
                   variant="2sm" if problem == "nvfp4_gemm_2sm" else resolve_variant())
    return dev.last_timing


def sensitivity(t, gpu=None) -> list:
    """[(param, us at x0.5, us at x2)] for the parameters of the prediction's GPU table that have no source: the
    recorded trace is replayed with each such value halved and doubled (predict.resimulate)."""
    from . import params as P
    from .predict import resimulate
    base = P.get(gpu or t.gpu)
    out = []
    for name, src in base.sources.items():
        if "NO SOURCE" not in src:
            continue
        val = getattr(base, name)
        if isinstance(val, dict):       # a rate per kind: scale every kind
            scaled = [{k: v * f for k, v in val.items()} for f in (0.5, 2.0)]
        elif isinstance(val, (int, float)) and not isinstance(val, bool) and val:
            scaled = [type(val)(val * f) for f in (0.5, 2.0)]
        else:
            continue
        lo = resimulate(t, base.with_(**{name: scaled[0]})).us
        hi = resimulate(t, base.with_(**{name: scaled[1]})).us
        out.append((name, lo, hi))
    return sorted(out, key=lambda x: -abs(x[2] - x[1]))


def _time_script(script, script_args, gpu, sample, stage=None) -> tuple:
    """(timings of every launch, lab exit code) of a script (or a lab stage) run with PTXLAB_TIMING=gpu."""
    from . import predict
    saved = {k: os.environ.get(k) for k in ("PTXLAB_TIMING", "PTXLAB_TIMING_SAMPLE")}
    saved_argv = sys.argv
    os.environ["PTXLAB_TIMING"] = gpu
    # stages and scripts check their results: emulate every CTA unless told otherwise
    os.environ["PTXLAB_TIMING_SAMPLE"] = sample or "all"
    predict.HISTORY.clear()
    rc = 0
    try:
        if stage:
            from ptxlab.lab.cli import main as lab_main
            rc = lab_main(["run", "--stage", stage, "--backend", "emu"])
        else:
            # driver calls (cuda-python, CuTe DSL, torch CUDA tensors) on the emulator, as under `lab.py exec`, for
            # this script only: uninstalled after it (ptxlab.driver.uninstall), so the process sees no GPU again
            from ptxlab.driver import installed, uninstall
            from ptxlab.lab.exec_cli import prepare, run_script
            ours = not installed()
            prepare()
            try:
                rc = run_script(script, list(script_args))
            finally:
                if ours:
                    uninstall()
    finally:
        sys.argv = saved_argv
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return list(predict.HISTORY), rc


def main(argv: List[str]) -> int:
    args = _parser().parse_args(argv)
    _validate(args)
    from . import predict, report, trace_export

    console = Console(width=None if sys.stdout.isatty() else 140, highlight=False)
    timings = []
    sens = None
    rc = 0
    if args.compare:
        runs = []
        for spec in args.compare:
            tg = _parse_target(spec)
            if tg[0] == "script":
                ts, rc = _time_script(tg[1], [], args.gpu, args.sample)
            else:
                ts = [run_problem(tg[1], tg[2], args.gpu, tg[3], args.sample, args.seed)]
            if not ts:
                console.print(f"{spec}: no kernel launch was timed (did it use open_device('emu')?)")
                return 1
            runs.append((spec, ts))
        report.print_compare(runs[0], runs[1], console)
        return 0
    if args.problem:
        shape = tuple(int(x) for x in args.shape.split(","))
        timings.append(run_problem(args.problem, shape, args.gpu, _parse_config(args.config), args.sample,
                                   args.seed))
        if args.sensitivity:
            sens = sensitivity(timings[-1], args.gpu)
    elif args.stage or args.script:
        if args.stage:
            timings, rc = _time_script(None, [], args.gpu, args.sample, stage=args.stage)
        else:
            timings, rc = _time_script(args.script, args.script_args, args.gpu, args.sample)
        if rc == 2 and not timings:      # the stage run's own usage/setup error (already printed)
            return 2
    else:
        _parser().print_help()
        return 2
    if not timings:
        console.print("no kernel launch was timed (did the script use open_device('emu')?)")
        return 1
    if args.sensitivity and sens is None:
        sens = sensitivity(timings[-1], args.gpu)
    for t in timings:
        report.print_table(t, console, sens if t is timings[-1] else None)
    last = timings[-1]
    if args.trace:
        path = trace_export.write_chrome_trace(last, args.trace)
        console.print(f"timeline: {path} (open it at https://ui.perfetto.dev)")
    if args.png:
        path = trace_export.write_png(last, args.png)
        console.print(f"timeline picture: {path}")
    return rc           # a script's / stage's own exit status (as `lab.py exec` returns it); 0 for --problem
