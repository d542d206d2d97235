"""Round 2's kernels that were left out for emulator gaps (ptx_docs/timing_validation.md "Round 2"), emulated in full
at the small size and checked against the host reference, now that the gaps are closed: the LeetCUDA f16 sigmoid /
swish / elu / gelu and layer_norm_f16_f16 kernels (cuda_fp16.hpp's '.reg.b16 h' registers) and BBuf's
ampere_sgemm_128x256x8_kernel (cp.async.ca.shared.global.L2::128B).  They stay outside the round-2 set (frozen).

    python benchmarks/timing_corpus/check_leftouts.py [--sources DIR]

Functional only (no timing model).  Exit status 1 if any kernel fails.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE.parent)]

from timing_corpus import manifest  # noqa: E402,F401  (defines Kernel before manifest_round2 imports it)
from timing_corpus import check_round2, manifest_round2 as M  # noqa: E402


def kernels() -> list:
    z = M.SIZES["small"]
    n, rows, cols = z["nact"], z["rows"], z["cols"]
    out = [M._k("leetcuda-activation", "leetcuda", [f"kernels/{op}/{op}.cu"], f"{op}_f16_kernel",
                ("elementwise", (("n", n), ("op", op), ("dtype", "float16"))), (n // 256, 1, 1), (256, 1, 1),
                ("ptr:x", "ptr:y", "i32:n")) for op in ("sigmoid", "swish", "elu", "gelu")]
    out.append(M._k("leetcuda-norm", "leetcuda", ["kernels/layer-norm/layer_norm.cu"], "layer_norm_f16_f16_kernel",
                    ("rownorm", (("rows", rows), ("cols", cols), ("op", "layernorm"), ("dtype", "float16"))),
                    (rows, 1, 1), (cols, 1, 1), ("ptr:x", "ptr:y", "f32:g", "f32:b", "i32:rows", "i32:cols"),
                    targs=str(cols)))
    sg, k = 256, 64                      # its launch: grid((n + 255) / 256, (m + 127) / 128), 256 threads
    out.append(M._k(M.MISC, "bbuf", ["cuda-mode/code/YHs_Sample/cuda/gemm/ampere_sgemm.cu"],
                    "ampere_sgemm_128x256x8_kernel", ("gemm", (("M", sg), ("N", sg), ("K", k), ("alpha_beta", False))),
                    (sg // 256, sg // 128, 1), (256, 1, 1),
                    ("ptr:A", "ptr:B", "ptr:C", "u32:M", "u32:N", "u32:K", "u32:B_ldg_step")))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", help="cached sources (default: sources.sources_dir())")
    args = ap.parse_args(argv)
    return 1 if check_round2.check_all(kernels(), args.sources) else 0


if __name__ == "__main__":
    sys.exit(main())
