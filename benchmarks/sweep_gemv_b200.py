"""B200 PREDICTIONS (timing model, not measurements) of CUDA-core GEMV configs on the gpu-mode GEMV benchmark shapes,
against the model's DRAM floor (launch + the problem's bytes at the B200's DRAM bandwidth): which config of
ptxlab/production/plan_gemv.py's flat / register variants sits closest to its floor, and whether any prediction
claims more than 100 % of DRAM (a model defect: such rows are flagged, never chosen).

    python benchmarks/sweep_gemv_b200.py [--json OUT.json] [--shapes 0,1,2] [--configs "flat,16,4,1,4" ...]

Each row: shape, config, predicted µs, ratio to the floor, DRAM utilization, bound; per shape the best row whose
DRAM utilization is <= 100 %. The floor: the B200 table's launch_us + (A, SFA, b row 0, sfb row 0, c bytes) / dram_bw.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ptxlab import gpumode  # noqa: E402

#: flat configs ("flat", warps, rows per thread per round, prefetch, min CTAs per SM) swept on every shape they fit
CONFIGS = [("flat", 16, 4, 1, 4), ("flat", 16, 2, 1, 2), ("flat", 16, 2, 1, 4), ("flat", 16, 4, 1, 2),
           ("flat", 16, 4, 1, 3), ("flat", 16, 8, 1, 1), ("flat", 16, 8, 1, 2), ("flat", 32, 2, 1, 1),
           ("flat", 32, 4, 1, 1), ("flat", 14, 2, 1, 2), ("flat", 14, 4, 1, 2), ("flat", 14, 4, 1, 4),
           ("flat", 14, 8, 1, 2), ("flat", 8, 2, 1, 4), ("flat", 8, 4, 1, 4), ("flat", 4, 4, 1, 8),
           ("flat", 32, 4, 1, 1), ("flat", 10, 8, 1, 2), ("flat", 12, 8, 1, 2), ("flat", 6, 8, 1, 4)]


def problem_bytes(m: int, k: int, l: int) -> int:
    """The bytes the GEMV must move (ptx_docs/production.md "GEMV at its DRAM floor"): A (M x K fp4), SFA (M x K/16),
    b row 0 (K fp4), sfb row 0 (K/16), c (M fp16), x L."""
    return l * (m * k // 2 + m * k // 16 + k // 2 + k // 16 + 2 * m)


def floor_us(m: int, k: int, l: int, gpu: str = "b200") -> float:
    from ptxlab.timing import params as P

    p = P.get(gpu)
    return p.launch_us + problem_bytes(m, k, l) / p.dram_bw * 1e6


def main(argv=None) -> int:
    from ptxlab.production.plan_gemv import fits
    from ptxlab.timing import cli

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--shapes", default=None, help="indices into GEMV_BENCHMARKS (default: all)")
    ap.add_argument("--configs", nargs="*", help="configs as comma lists, e.g. flat,16,4,1,4 (default: CONFIGS)")
    args = ap.parse_args(argv)
    configs = [tuple(x if i == 0 and x == "flat" else int(x) for i, x in enumerate(c.split(",")))
               for c in args.configs] if args.configs else CONFIGS
    benches = list(gpumode.GEMV_BENCHMARKS)
    if args.shapes:
        benches = [benches[int(i)] for i in args.shapes.split(",")]
    rows = []
    for b in benches:
        m, k, l = b["m"], b["k"], b["l"]
        fl = floor_us(m, k, l)
        for cfg in configs:
            if not fits(cfg, m, k):
                continue
            t0 = time.perf_counter()
            t = cli.run_problem("nvfp4_gemv", (m, k, l), "b200", config=cfg)
            dram = t.utilization.get("dram", 0.0)
            row = {"shape": [m, k, l], "config": list(cfg), "predicted_us": round(t.us, 2),
                   "floor_us": round(fl, 2), "ratio": round(t.us / fl, 3), "dram_util": round(dram, 3),
                   "bound": t.bound, "valid": dram <= 1.0 + 1e-6 and t.us >= fl, "wall_s": round(time.perf_counter() - t0, 1)}
            rows.append(row)
            print(f"{m}x{k}x{l} {cfg}: {t.us:.2f} us PREDICTED = {t.us / fl:.3f} x floor {fl:.2f}, DRAM "
                  f"{100 * dram:.0f} %, {t.bound}{'' if row['valid'] else '  <- above 100 % DRAM / below floor'}",
                  flush=True)
    print("\n| shape | best config (DRAM <= 100 %) | predicted µs | floor µs | ratio | bound |\n|---|---|---:|---:|---:|---|")
    for b in benches:
        shape = [b["m"], b["k"], b["l"]]
        ok = [r for r in rows if r["shape"] == shape and r["valid"]]
        if ok:
            r = min(ok, key=lambda r: r["predicted_us"])
            print(f"| {'x'.join(map(str, shape))} | {tuple(r['config'])} | {r['predicted_us']:.2f} | "
                  f"{r['floor_us']:.2f} | {r['ratio']:.3f} | {r['bound']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
