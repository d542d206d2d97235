"""Config sweep of the CUDA-core NVFP4 GEMV on gpu-mode's three benchmark shapes (one GPU call, one table).

    PYTHONPATH=. python3 tools/probes/sweep_gemv_h100.py [--iters 150] [--old OLD.cu] [--variants VARIANT ...]

Same inputs and method as benchmarks/bench_gemv_h100.py (rotated input sets so every launch reads DRAM, per-launch
CUDA events behind a GPU sleep, medians, same-run 1 GiB device-to-device copy), without the baselines: every
variant is bit-exact-checked on set 0 (poisoned output) and timed on the same sets. A variant is
"R,W,U,S,P" = (rows_per_warp, warps, unroll, ksplit, prefetch) of the register variant, "s:W,RS,CS,NS" = the
streaming variant (warps, rows per stage, row bytes per stage, stages) or "f:W,R,PF,MIN" = the flat variant (warps,
rows per thread per round, prefetch, min CTAs per SM); variants are skipped on shapes they cannot run;
optionally ":NAME=V,NAME=V" extra #defines, and "old:" in front runs the kernel text given by --old (e.g. an
earlier commit's .cu) instead. Prints registers and
resident CTAs per SM (driver occupancy) for each variant and the best exact variant per shape; JSON to
$OUT/sweep_gemv_h100.json when $OUT is set.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # repo root
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # bench_gemv_h100

import bench_gemv_h100 as B  # noqa: E402

DEFAULT_VARIANTS = [
    "4,2,2,1,0", "2,4,2,1,0", "4,4,4,1,0", "8,1,1,1,0", "8,1,2,1,0",
    "4,2,2,1,1", "2,4,2,1,1", "4,2,1,1,1", "8,1,1,1,1", "2,4,1,1,1",
    "4,4,2,2,0", "4,4,1,2,1", "2,8,2,4,0", "8,4,1,4,0", "16,1,1,1,0",
    "4,2,2,1,0:GEMV_IMAD_SHIFT=0", "4,2,2,1,0:GEMV_L2_PREFETCH=1",
]


def parse_variant(text: str) -> tuple:
    old = text.startswith("old:")
    body = text[4:] if old else text
    kind = {"s:": "stream", "f:": "flat"}.get(body[:2])
    body = body[2:] if kind else body
    cfg_text, _, defs_text = body.partition(":")
    cfg = tuple(int(v) for v in cfg_text.split(","))
    if kind:
        cfg = (kind,) + cfg
    defines = dict(kv.split("=", 1) for kv in defs_text.split(",") if kv) if defs_text else {}
    return old, cfg, defines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=150)
    ap.add_argument("--old", default=None, help="kernel text for 'old:' variants")
    ap.add_argument("--variants", nargs="*", default=None)
    ap.add_argument("--shapes", default=None, help="e.g. 7168x16384x1,7168x2048x4 (default: the three)")
    args = ap.parse_args(argv)
    import torch

    from ptxlab.production.submission_gemv import CudaGemv, fits, is_flat, is_stream

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.init()
    dev = torch.cuda.current_device()
    report: dict = {"device": torch.cuda.get_device_properties(dev).name, "torch": torch.__version__, "rows": [],
                    "errors": []}
    old_src = Path(args.old).read_text() if args.old else None
    runners = {}
    for text in args.variants or DEFAULT_VARIANTS:
        old, cfg, defines = parse_variant(text)
        try:
            if old and old_src is None:
                raise RuntimeError("old: variant without --old")
            r = CudaGemv(dev, config=cfg, defines=defines, source=old_src if old else None)
            drv = r._drv
            regs = r._check(drv.cuFuncGetAttribute(drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, r._func),
                            "regs")
            ctas = r._check(drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(r._func, r.threads, 0), "occupancy")
            runners[text] = (r, int(regs), int(ctas))
        except Exception as exc:  # noqa: BLE001
            report["errors"].append(f"{text}: {exc}"[:400])
    sleep_cycles = int(1.98e9 * 3e-3)
    report["copy"] = B.copy_bandwidth(torch, sleep_cycles, 100)
    cp = report["copy"]["GBps"]
    shapes = B.SHAPES if not args.shapes else [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    stream = torch.cuda.current_stream().cuda_stream
    for m, k, l in shapes:
        nbytes = B.gemv_bytes(m, k, l)
        nsets = int(min(32, max(2, math.ceil(4 * B.L2_BYTES / nbytes))))
        gen = torch.Generator(device="cuda")
        gen.manual_seed(int.from_bytes(os.urandom(4), "little"))
        sets = [B.make_set(torch, m, k, l, gen) for _ in range(nsets)]
        ref = B.reference(torch, sets[0])
        for text, (r, regs, ctas) in runners.items():
            if not fits(r.config, m, k):
                continue
            row = {"shape": [m, k, l], "variant": text, "regs": regs, "ctas_per_sm": ctas,
                   "warps_per_sm": ctas * r.threads // 32}
            try:
                grid, _, smem = r.plan(m, k, l)
                row["grid"], row["smem"] = grid[0] * grid[1], smem
                if is_stream(r.config) or is_flat(r.config):  # occupancy with this shape's shared memory
                    drv = r._drv
                    row["ctas_per_sm"] = int(r._check(drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                        r._func, r.threads, smem), "occupancy"))
                    row["warps_per_sm"] = row["ctas_per_sm"] * r.threads // 32
                packed = [r.params(s["a"].data_ptr(), s["b"].data_ptr(), s["sfa"].data_ptr(), s["sfb"].data_ptr(),
                                   s["c"].data_ptr(), m, k, l) for s in sets]
                fns = [lambda p=p, r=r: r.launch(0, 0, 0, 0, 0, m, k, l, stream=stream, packed=p) for p in packed]
                sets[0]["c"].fill_(float("nan"))
                fns[0]()
                torch.cuda.synchronize()
                row["exact"] = bool(torch.equal(sets[0]["c"].view(torch.int16), ref.view(torch.int16)))
                t = B.time_launches(torch, fns, args.iters, sleep_cycles)
                row.update(t)
                row["GBps"] = nbytes / (t["median_us"] * 1e-6) / 1e9
                row["pct_copy"] = 100 * row["GBps"] / cp
            except Exception as exc:  # noqa: BLE001
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            report["rows"].append(row)
        del sets, ref
        torch.cuda.empty_cache()
    print(f"device {report['device']}, copy {cp:.0f} GB/s")
    print(f"{'shape':>16} {'variant':>34} {'regs':>4} {'w/SM':>4} {'grid':>6} {'us':>8} {'p10-p90':>13} {'GB/s':>6} "
          f"{'%copy':>6} exact")
    best = {}
    for row in report["rows"]:
        sh = "x".join(map(str, row["shape"]))
        if "error" in row:
            print(f"{sh:>16} {row['variant']:>34} ERROR {row['error']}")
            continue
        print(f"{sh:>16} {row['variant']:>34} {row['regs']:4d} {row['warps_per_sm']:4d} {row['grid']:6d} "
              f"{row['median_us']:8.2f} {row['p10_us']:6.1f}-{row['p90_us']:<6.1f} {row['GBps']:6.0f} "
              f"{row['pct_copy']:5.1f}% {'yes' if row['exact'] else 'NO'}")
        if row["exact"] and (sh not in best or row["median_us"] < best[sh]["median_us"]):
            best[sh] = row
    for sh, row in best.items():
        print(f"best {sh}: {row['variant']} {row['median_us']:.2f} us ({row['pct_copy']:.1f}% of copy)")
    for e in report["errors"]:
        print("ERROR:", e)
    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "sweep_gemv_h100.json").write_text(json.dumps(report, indent=2))
    ok = not report["errors"] and all(r.get("exact") for r in report["rows"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
