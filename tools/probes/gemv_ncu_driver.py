"""Launch one GEMV variant on one gpu-mode benchmark shape a few times: the program that Nsight Compute profiles.

    ncu --clock-control none -k nvfp4_gemv_cudacore --launch-skip 1 --launch-count 1 --section SpeedOfLight \\
        python3 tools/probes/gemv_ncu_driver.py --variant s:16,1,2048,2 --shape 7168x16384x1

Variants as in tools/probes/sweep_gemv_h100.py ("R,W,U,S,P", "s:W,RS,CS,NS", "old:..." with --old FILE). The output of
the last launch is checked bit-exact against the float64 reference.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # repo root
sys.path.insert(0, str(Path(__file__).resolve().parent))  # sweep_gemv_h100
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # bench_gemv_h100

import bench_gemv_h100 as B  # noqa: E402
from sweep_gemv_h100 import parse_variant  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", required=True)
    ap.add_argument("--shape", required=True)
    ap.add_argument("--old", default=None)
    ap.add_argument("--launches", type=int, default=2)
    args = ap.parse_args(argv)
    import torch

    from ptxlab.production.submission_gemv import CudaGemv

    m, k, l = (int(v) for v in args.shape.split("x"))
    old, cfg, defines = parse_variant(args.variant)
    src = Path(args.old).read_text() if old else None
    r = CudaGemv(torch.cuda.current_device(), config=cfg, defines=defines, source=src)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(int.from_bytes(os.urandom(4), "little"))
    s = B.make_set(torch, m, k, l, gen)
    stream = torch.cuda.current_stream().cuda_stream
    for _ in range(args.launches):
        r.launch(s["a"].data_ptr(), s["b"].data_ptr(), s["sfa"].data_ptr(), s["sfb"].data_ptr(), s["c"].data_ptr(),
                 m, k, l, stream=stream)
    torch.cuda.synchronize()
    ok = bool(torch.equal(s["c"].view(torch.int16), B.reference(torch, s).view(torch.int16)))
    print(f"{args.variant} {args.shape}: plan {r.plan(m, k, l)} exact {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
