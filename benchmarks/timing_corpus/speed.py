"""How long the timing model takes to predict one corpus kernel, optionally at a larger GEMM size (issue 21 item 6:
a 4096^3 SGEMM-class kernel in under 120 s on the 2-core machine).

    python benchmarks/timing_corpus/speed.py --kernel leetcuda-sgemm/sgemm_t_8x8_sliced_k_f32x4_bcf_dbuf_kernel \\
        --size 4096 [--gpu h100] [--engine interp --engine native] [--json out.json]

``--size S`` rescales a ``gemm``-family kernel of the manifest (M = N = K = S; every grid dimension above 1 scales
by S / manifest.SIZE, which is how each project's host code sizes its grid).  Phases timed separately: build
(NVRTC + ptxas, cached by ptxlab), inputs (host arrays + copies to the emulator), launch (emulation of the sampled
CTAs + the timing replay: what ``lab.py time`` costs) and the sampled-output check (float64 reference on the host).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE.parent)]

from timing_corpus import manifest  # noqa: E402


def rescaled(k: manifest.Kernel, size: int) -> manifest.Kernel:
    """Kernel ``k`` (gemm family) at M = N = K = ``size``."""
    if k.problem[0] != "gemm":
        raise ValueError(f"{k.name}: --size rescales gemm-family kernels only (this one is {k.problem[0]!r})")
    if size % manifest.SIZE:
        raise ValueError(f"--size {size}: must be a multiple of manifest.SIZE = {manifest.SIZE}")
    f = size // manifest.SIZE
    params = tuple((n, size if n in ("M", "N", "K") else v) for n, v in k.problem[1])
    grid = tuple(g * f if g > 1 else g for g in k.grid)
    return dataclasses.replace(k, problem=(k.problem[0], params), grid=grid)


def time_one(k: manifest.Kernel, gpu: str, root=None, engine=None) -> dict:
    import ptxlab
    from ptxlab.timing.predict import TimingSampleWarning
    from timing_corpus import harness

    warnings.simplefilter("ignore", TimingSampleWarning)
    row = {"kernel": k.name, "gpu": gpu, "engine": engine or "default", "problem": dict(k.problem[1]),
           "grid": list(k.grid), "block": list(k.block)}
    t0 = time.perf_counter()
    built = harness.build(k, root)
    t1 = time.perf_counter()
    dev = ptxlab.open_device("emu", timing=gpu, engine=engine)
    s = harness.Setup.create(built, dev, 1)
    t2 = time.perf_counter()
    c2 = time.process_time()
    s.launch()
    t3 = time.perf_counter()
    c3 = time.process_time()
    chk = s.check(full=False)
    t4 = time.perf_counter()
    t = dev.last_timing
    row.update(build_s=round(t1 - t0, 2), inputs_s=round(t2 - t1, 2), launch_s=round(t3 - t2, 2),
               check_s=round(t4 - t3, 2), wall_s=round(t4 - t0, 2), emu_s=round(t.emu_seconds, 2),
               launch_cpu_s=round(c3 - c2, 2),     # CPU seconds of this process: near the idle wall time when loaded
               predicted_us=round(t.us, 2), bound=t.bound, ctas=t.ctas, sampled=t.sampled,
               check_ok=chk["ok"], written=chk["written"], peak_rss_mib=resource.getrusage(
                   resource.RUSAGE_SELF).ru_maxrss // 1024, load=os.getloadavg())
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", required=True, help="a manifest name, e.g. leetcuda-sgemm/sgemm_naive_f32_kernel")
    ap.add_argument("--size", type=int, help="M = N = K for a gemm-family kernel (default: the manifest's)")
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--sources", help="cached sources (default: sources.sources_dir())")
    ap.add_argument("--engine", action="append", choices=("native", "interp"),
                    help="the emulator engine that records (repeat for several in one run: ratios; default: the "
                         "emulator's default)")
    ap.add_argument("--json", help="write the row here")
    args = ap.parse_args(argv)
    k = manifest.BY_NAME[args.kernel]
    if args.size:
        k = rescaled(k, args.size)
    rows = [time_one(k, args.gpu, args.sources, e) for e in (args.engine or [None])]
    for row in rows:
        print(json.dumps(row))
    row = rows if len(rows) > 1 else rows[0]
    if args.json:
        Path(args.json).write_text(json.dumps(row, indent=1) + "\n")
    return 0 if all(r["check_ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
