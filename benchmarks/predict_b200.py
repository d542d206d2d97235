"""B200 PREDICTIONS (timing model, not measurements) of the production kernels on every gpu-mode benchmark shape.

    python benchmarks/predict_b200.py [--gpu b200] [--png-dir ptx_docs/img] [--json out.json] [--sensitivity]

Kernels: the CUDA-core NVFP4 GEMV (tuned config, sm_100a PTX, grid sized for the GPU's SMs), the fused tcgen05 GEMV
and the tcgen05 GEMM (the 1-SM default and the opt-in 2-SM cta_group::2 variant ``nvfp4_gemm_2sm``), on ptxlab.gpumode.GEMV_BENCHMARKS / GEMM_BENCHMARKS. Each row: predicted µs, the bound, the
busiest resources, and the biggest wait of the busiest warp role; --png-dir writes one timeline per kernel (first
shape). Parameters: ptxlab/timing/params.py (B200 table: datasheets and publications; unsourced values listed with
their sensitivity by --sensitivity). Never fitted to any measured B200 time.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ptxlab import gpumode  # noqa: E402
from ptxlab.timing import cli, trace_export  # noqa: E402


def rows(gpu: str, png_dir=None, sens: bool = False, only=None) -> list:
    out = []
    jobs = [("nvfp4_gemv", (b["m"], b["k"], b["l"])) for b in gpumode.GEMV_BENCHMARKS]
    jobs += [("nvfp4_gemv_tcgen05", (b["m"], b["k"], b["l"])) for b in gpumode.GEMV_BENCHMARKS]
    jobs += [("nvfp4_gemm", (b["m"], b["n"], b["k"], b["l"])) for b in gpumode.GEMM_BENCHMARKS]
    jobs += [("nvfp4_gemm_2sm", (b["m"], b["n"], b["k"], b["l"])) for b in gpumode.GEMM_BENCHMARKS]
    if only:
        jobs = [j for j in jobs if j[0] in only]
    first = set()
    for prob, shape in jobs:
        t0 = time.perf_counter()
        t = cli.run_problem(prob, shape, gpu)
        wall = time.perf_counter() - t0
        top = sorted(((k, v) for k, v in t.utilization.items() if k != "launch/tail"), key=lambda kv: -kv[1])[:2]
        waits = []
        for wi, s in t.warps.items():
            if s["waits"]:
                k, v = max(s["waits"].items(), key=lambda kv: kv[1])
                waits.append((v, wi, k))
        waits.sort(reverse=True)
        row = {"kernel": prob, "shape": list(shape), "predicted_us": round(t.us, 2), "bound": t.bound,
               "top_resources": {k: round(v, 2) for k, v in top}, "ctas": t.ctas, "ctas_per_sm": t.ctas_per_sm,
               "busy_sms": t.busy_sms, "sampled": t.sampled, "wall_s": round(wall, 1),
               "biggest_wait": (f"warp {waits[0][1]}: {waits[0][2]} {waits[0][0] / (t.clock_ghz * 1e3):.2f} us"
                                if waits else "")}
        if sens and prob not in first:
            row["sensitivity"] = [(n, round(lo, 2), round(hi, 2)) for n, lo, hi in cli.sensitivity(t, gpu)[:6]]
        if png_dir and prob not in first:
            stem = f"timing_{gpu}_{prob}_{'x'.join(map(str, shape))}"
            trace_export.write_png(t, Path(png_dir) / f"{stem}.png")
            row["png"] = str(Path(png_dir) / f"{stem}.png")
        first.add(prob)
        out.append(row)
        print(f"{prob:>20} {'x'.join(map(str, shape)):>16}: {t.us:8.2f} us PREDICTED, bound {t.bound}; "
              f"{row['biggest_wait']} ({wall:.1f} s)", flush=True)
    return out


def markdown(rs: list, gpu: str) -> str:
    lines = [f"| kernel | shape | predicted {gpu.upper()} µs | bound | busiest resources | CTAs (per SM, SMs busy) | "
             "biggest wait (per warp) |", "|---|---|---:|---|---|---|---|"]
    for r in rs:
        res = ", ".join(f"{k} {100 * v:.0f} %" for k, v in r["top_resources"].items())
        lines.append(f"| {r['kernel']} | {'x'.join(map(str, r['shape']))} | {r['predicted_us']:.2f} | {r['bound']} | "
                     f"{res} | {r['ctas']} ({r['ctas_per_sm']}, {r['busy_sms']}) | {r['biggest_wait']} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="b200")
    ap.add_argument("--png-dir")
    ap.add_argument("--json")
    ap.add_argument("--sensitivity", action="store_true")
    ap.add_argument("--only", nargs="*", help="kernels to predict (default: all)")
    args = ap.parse_args(argv)
    if args.png_dir:
        Path(args.png_dir).mkdir(parents=True, exist_ok=True)
    rs = rows(args.gpu, args.png_dir, args.sensitivity, args.only)
    print(markdown(rs, args.gpu))
    if args.json:
        Path(args.json).write_text(json.dumps(rs, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
