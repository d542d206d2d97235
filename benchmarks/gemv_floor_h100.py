"""What a read-only kernel achieves on the GPU for the GEMV's byte counts: the floor the GEMV is measured against.

    PYTHONPATH=. python3 benchmarks/gemv_floor_h100.py [--iters 100] [--probe2]

Same timing method as benchmarks/bench_gemv_h100.py (per-launch CUDA events behind a GPU sleep, medians), with the
read region rotated through a 2 GiB buffer so every launch reads DRAM. Kernels (NVRTC, no headers):
  * empty:  an empty kernel, grids of the GEMV's sizes -- the launch cost the events see;
  * flat:   a streaming read of n bytes (16-byte ld.global.nc.L1::no_allocate, 4 loads in flight per thread,
            XOR-reduced), grid-stride with a persistent grid of SMs x {2,4,8} CTAs of 256 threads, and one-shot
            (each thread a fixed slice);
  * rows:   the GEMV's access pattern (a warp reads R rows of K/2 bytes, lane j chunks j, j+32, ..., U chunks per row
            per round, plus the rows' scale bytes) with no arithmetic;
  * flat2:  two grid-stride streams at once, A and SFA (1/8 of A's bytes): the GEMV's bytes read as fast as this GPU
            reads anything (bench_gemv_h100.py's "read floor" column uses it);
  * blk:    the buffer cut into regions of x bytes, dealt round-robin to warps, each read front to back.
--probe2 runs only flat, flat2, blk (1 KiB .. 64 KiB regions, 16 and 32 warps per SM) and rows with/without SFA at
the 7168x16384 shape (the access-pattern study in ptx_docs/production.md).
For each kernel and size it prints the median time, GB/s and % of the same-run 1 GiB device-to-device copy, and a
least-squares fit t = t0 + bytes / BW over the sizes (t0: the fixed cost of a launch that the bytes do not explain).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_gemv_h100 as B  # noqa: E402
from read_kernels import Mod  # noqa: E402  (the kernels, shared with bench_gemv_h100.py)


def fit(points):
    """least squares t = t0 + bytes / bw over (bytes, us) points -> (t0 us, bw GB/s)"""
    x = np.array([p[0] for p in points], float)
    y = np.array([p[1] for p in points], float)
    A = np.stack([np.ones_like(x), x], 1)
    (t0, slope), *_ = np.linalg.lstsq(A, y, rcond=None)
    return float(t0), float(1e-3 / slope) if slope > 0 else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--probe2", action="store_true", help="only the access-pattern probes at the 66 MB shape")
    args = ap.parse_args(argv)
    import torch

    torch.cuda.init()
    stream = torch.cuda.current_stream().cuda_stream
    sleep = int(1.98e9 * 3e-3)
    rep: dict = {"rows": []}
    rep["copy"] = B.copy_bandwidth(torch, sleep, 60)
    cp = rep["copy"]["GBps"]
    buf = torch.empty((2 << 30) + (1 << 20), dtype=torch.uint8, device="cuda").random_(0, 255)
    out = torch.zeros(16, dtype=torch.int32, device="cuda")
    base = buf.data_ptr()
    mods = {}

    def mod(defs=""):
        if defs not in mods:
            mods[defs] = Mod(defs)
        return mods[defs]

    def run(label, name, nbytes, grid, block, make_vals, defs=""):
        m = mod(defs)
        nreg = max(2, (2 << 30) // max(nbytes, 1))
        nreg = min(nreg, 16)
        packs = [m.packed(make_vals(base + i * ((2 << 30) // nreg) // 256 * 256)) for i in range(nreg)]
        fns = [lambda p=p: m.launch(name, grid, block, p, stream) for p in packs]
        fns[0]()
        torch.cuda.synchronize()
        t = B.time_launches(torch, fns, args.iters, sleep)
        row = {"label": label, "bytes": nbytes, "grid": list(grid), "block": block, **t}
        row["GBps"] = nbytes / (t["median_us"] * 1e-6) / 1e9 if nbytes else 0.0
        row["pct_copy"] = 100 * row["GBps"] / cp
        rep["rows"].append(row)
        print(f"{label:>40} {nbytes / 1e6:8.1f} MB grid {grid[0]:6d}x{grid[1]} blk {block:4d} "
              f"{t['median_us']:8.2f} us ({t['p10_us']:.1f}-{t['p90_us']:.1f})  {row['GBps']:6.0f} GB/s "
              f"{row['pct_copy']:5.1f}%", flush=True)
        return t["median_us"]

    sms = mod().sms
    if args.probe2:
        o64 = lambda: ctypes.c_uint64(out.data_ptr())  # noqa: E731
        m, k, l = 7168, 16384, 1
        na = m * k // 2
        n16 = na // 16
        run("flat A only 8/SM", "flat_k", na, (sms * 8, 1, 1), 256,
            lambda p: [ctypes.c_uint64(p), ctypes.c_longlong(n16), o64()])
        run("flat A + flat SFA 4/SM", "flat2_k", na + na // 8, (sms * 4, 1, 1), 256,
            lambda p: [ctypes.c_uint64(p), ctypes.c_uint64(p + na), ctypes.c_longlong(n16), o64()])
        for x in (1024, 2048, 8192, 65536, na // (sms * 16)):
            for wps in (16, 32):
                run(f"blocked A, regions {x} B, {wps} warps/SM", "blk_k", na, (sms * wps // 8, 1, 1), 256,
                    lambda p, x=x: [ctypes.c_uint64(p), ctypes.c_longlong(n16), ctypes.c_longlong(x // 16), o64()])
        sf_off = na // 256 * 256 + 256
        for rr, uu, w in ((4, 2, 2), (2, 2, 4)):
            for nosf in (0, 1):
                run(f"rows R{rr} U{uu} W{w}{' no SFA' if nosf else ''}", "rows_k", na + (0 if nosf else na // 8),
                    (-(-m // (rr * w)), l, 1), 32 * w,
                    lambda p: [ctypes.c_uint64(p), ctypes.c_uint64(p + sf_off), ctypes.c_int32(m), ctypes.c_int32(k),
                               o64()],
                    defs=f"#define RR {rr}\n#define UU {uu}\n" + ("#define NOSF\n" if nosf else ""))
        o = os.environ.get("OUT")
        if o:
            Path(o, "gemv_floor_probe2.json").write_text(json.dumps(rep, indent=2))
        return 0
    for g in (132, 896, 3584, 8192):
        run(f"empty grid {g}", "empty_k", 0, (g, 1, 1), 64, lambda p: [ctypes.c_uint64(out.data_ptr())])
    sizes = [16.5e6, 33.1e6, 66.1e6, 132.2e6, 264.4e6]
    fits = {}
    for per_sm in (2, 4, 8):
        pts = []
        for n in sizes:
            n16 = int(n) // 16
            t = run(f"flat persistent {per_sm}/SM", "flat_k", n16 * 16, (sms * per_sm, 1, 1), 256,
                    lambda p, n16=n16: [ctypes.c_uint64(p), ctypes.c_longlong(n16), ctypes.c_uint64(out.data_ptr())])
            pts.append((n16 * 16, t))
        fits[f"flat persistent {per_sm}/SM"] = fit(pts)
    pts = []
    for n in sizes:
        n16 = int(n) // 16
        grid = -(-n16 // (256 * 16))
        t = run("flat one-shot 16 loads/thread", "flat_k", n16 * 16, (grid, 1, 1), 256,
                lambda p, n16=n16: [ctypes.c_uint64(p), ctypes.c_longlong(n16), ctypes.c_uint64(out.data_ptr())])
        pts.append((n16 * 16, t))
    fits["flat one-shot"] = fit(pts)
    # the GEMV access pattern at the three shapes
    for (m, k, l) in B.SHAPES:
        for rr, uu, w in ((4, 2, 2), (2, 2, 4), (8, 1, 1), (4, 4, 4)):
            nb = l * m * k // 2 + l * m * k // 16
            rows_cta = rr * w
            sf_off = l * m * k // 2 // 256 * 256 + 256
            run(f"rows {m}x{k}x{l} R{rr} U{uu} W{w}", "rows_k", nb, (-(-m // rows_cta), l, 1), 32 * w,
                lambda p, m=m, k=k, sf_off=sf_off: [ctypes.c_uint64(p), ctypes.c_uint64(p + sf_off), ctypes.c_int32(m),
                                                     ctypes.c_int32(k), ctypes.c_uint64(out.data_ptr())],
                defs=f"#define RR {rr}\n#define UU {uu}\n")
    print(f"copy {cp:.0f} GB/s")
    for name, (t0, bw) in fits.items():
        print(f"fit {name}: t = {t0:.2f} us + bytes / {bw:.0f} GB/s")
    rep["fits"] = fits
    o = os.environ.get("OUT")
    if o:
        Path(o, "gemv_floor_h100.json").write_text(json.dumps(rep, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
