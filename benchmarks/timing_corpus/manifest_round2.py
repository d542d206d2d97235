"""Round 2 of the corpus (issue 21): a FRESH validation part, ``val2``, of kernels the timing model was never fitted
to (round 1's 73 kernels, calibration and validation, are spent: the model was refit on all of them).

Every round-2 kernel is validation: there is no round-2 calibration part (round 1 is the calibration now).  The set
was fixed on 2026-11-28, before any round-2 kernel was predicted with the frozen model or measured;
tests/timing_corpus/test_timing_corpus_manifest.py holds the checksum of its names.  Sources (sources.py): new files
of LeetCUDA (activations, softmax, layer / RMS norm) and three projects new to the corpus (Tongkaio's
CUDA_Kernel_Samples, BBuf's how-to-optim-algorithm-in-cuda, PaddleJitLab's CUDATutorial).  Launch geometry: each
project's own host code (LeetCUDA's torch bindings, the projects' ``main``).  Sizes: H100-realistic, 20 us - 2 ms.
"""
from __future__ import annotations

from .manifest import Kernel

PART = "val2"
MISC = "misc2"                  # one ranking group for the projects with 1-2 kernels here (as round 1's cudasamples-misc)
# Problem sizes: SIZES["full"] is the set (predicted and measured); SIZES["small"] the same kernels on a few CTAs,
# for full emulations on the CPU (tests/timing_corpus/test_timing_corpus_round2.py, check_round2.py).
SIZES = {
    "full": dict(nact=1 << 25,              # activation elements (f32: 256 MiB moved)
                 rows=8192, cols=1024,      # LeetCUDA's per-row norms: one row (token) per CTA, hidden size 1024
                 tk_m=12800, tk_n=1280,     # Tongkaio's transpose: the size of its main()
                 sm_rows=1 << 17, sm_cols=64,   # Tongkaio's softmax_matrix: its N = 64, rows scaled up from 2048
                 emb=(16384, 32000, 1024),  # LeetCUDA's embedding: tokens, vocabulary, embedding size
                 sg=(1024, 512),            # YHs' SGEMM (BBuf): M = N, K (its main: 4096^3; 1024^3 predicts in
                                            # 150 s here at load 8, K = 512 in about half)
                 nadd=10_000_000,           # PaddleJitLab's vector add: its main()'s N
                 bs=4_000_000,              # cuda-samples BlackScholes: its OPT_N
                 sp=(1024, 8192)),          # cuda-samples scalarProd: vectors x elements (its main: 256 x 4096)
    "small": dict(nact=2048, rows=3, cols=1024, tk_m=80, tk_n=48, sm_rows=96, sm_cols=64, sg=(256, 64), nadd=3000, emb=(5, 40, 1024),
                  bs=2048, sp=(130, 2048)),
}

_GUARDS = ("#ifndef FLT_MAX\n#define FLT_MAX 3.402823466e+38F\n#endif\n"
           "#ifndef M_SQRT2\n#define M_SQRT2 1.41421356237309504880\n#endif\n"
           "#ifndef M_2_SQRTPI\n#define M_2_SQRTPI 1.12837916709551257390\n#endif\n"
           "#ifndef M_SQRT1_2\n#define M_SQRT1_2 0.70710678118654752440\n#endif\n")   # <math.h>'s, absent in NVRTC
PRELUDE = {"leetcuda": "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n" + _GUARDS, "tongkaio": _GUARDS,
           "bbuf": "#include <cstdint>\n", "paddle": "", "cudasamples": "#include <cooperative_groups.h>\n"}

ACT_PACK = {"f32": 1, "f32x4": 4, "f16": 1, "f16x2": 2, "f16x8": 8, "f16x8_pack": 8}
# Left out: the f16 sigmoid / swish / elu / gelu kernels (hexp: cuda_fp16.hpp's inline PTX declares a register
# without '%', which the emulator's parser rejects; gelu f16 also overflows hexp to NaN for x > ~3.5).
ACTIVATIONS = [("sigmoid", "f32"), ("sigmoid", "f32x4"), ("swish", "f32"), ("swish", "f32x4"),
               ("elu", "f32"), ("elu", "f32x4"), ("gelu", "f32"), ("gelu", "f32x4"),
               ("hardswish", "f32x4"), ("hardswish", "f16"), ("hardswish", "f16x8_pack"),
               ("hardshrink", "f32"), ("hardshrink", "f32x4"), ("hardshrink", "f16x2")]


def _k(series, source, files, entry, problem, grid, block, args, **kw) -> Kernel:
    name = f"{series}/{kw.pop('label', entry)}"
    return Kernel(name, series, source, tuple(files), entry, problem, tuple(grid), tuple(block), tuple(args), PART,
                  prelude=PRELUDE[source], **kw)


def _leetcuda(z: dict) -> list:
    out, NACT, ROWS, COLS = [], z["nact"], z["rows"], z["cols"]
    for op, v in ACTIVATIONS:          # grid(N / 256), block(256 / pack): LeetCUDA's TORCH_BINDING_<OP>
        dt = "float32" if v.startswith("f32") else "float16"
        out.append(_k("leetcuda-activation", "leetcuda", [f"kernels/{op}/{op}.cu"], f"{op}_{v}_kernel",
                      ("elementwise", (("n", NACT), ("op", op), ("dtype", dt))), (NACT // 256, 1, 1),
                      (256 // ACT_PACK[v], 1, 1), ("ptr:x", "ptr:y", "i32:n")))
    nt, nv, ne = z["emb"]
    for v, pack in (("f32", 1), ("f32x4", 4), ("f32x4_pack", 4), ("f16", 1), ("f16x8", 8), ("f16x8_pack", 8)):
        dt = "float32" if v.startswith("f32") else "float16"     # grid(N), block(emb_size / pack): its binding
        out.append(_k("leetcuda-embedding", "leetcuda", ["kernels/embedding/embedding.cu"], f"embedding_{v}_kernel",
                      ("embedding", (("tokens", nt), ("vocab", nv), ("emb", ne), ("dtype", dt))), (nt, 1, 1),
                      (ne // pack, 1, 1), ("ptr:idx", "ptr:weight", "ptr:y", "i32:tokens", "i32:emb")))
    sm, ln, rn = "kernels/softmax/softmax.cu", "kernels/layer-norm/layer_norm.cu", "kernels/rms-norm/rms_norm.cu"
    for f, e, op, pack in ((sm, "softmax_f32_per_token_kernel", "softmax", 1),
                           (sm, "softmax_f32x4_per_token_kernel", "softmax", 4),
                           (sm, "safe_softmax_f32_per_token_kernel", "softmax", 1),
                           (sm, "safe_softmax_f32x4_per_token_kernel", "softmax", 4),
                           (sm, "online_safe_softmax_f32_per_token_kernel", "softmax", 1),
                           (sm, "safe_softmax_f16_f32_per_token_kernel", "softmax", 1),
                           (sm, "safe_softmax_f16x2_f32_per_token_kernel", "softmax", 2),
                           (sm, "safe_softmax_f16x8_pack_f32_per_token_kernel", "softmax", 8),
                           (ln, "layer_norm_f32_kernel", "layernorm", 1), (ln, "layer_norm_f32x4_kernel", "layernorm", 4),
                           (ln, "layer_norm_f16_f32_kernel", "layernorm", 1),
                           (ln, "layer_norm_f16x8_pack_f32_kernel", "layernorm", 8),
                           (rn, "rms_norm_f32_kernel", "rmsnorm", 1), (rn, "rms_norm_f32x4_kernel", "rmsnorm", 4),
                           (rn, "rms_norm_f16_f32_kernel", "rmsnorm", 1),
                           (rn, "rms_norm_f16x8_pack_f32_kernel", "rmsnorm", 8)):
        # left out: online_safe_softmax_f32x4_pack (its block reduce reads shared[lane] for lanes >= its 8 warps:
        # past the array; the emulator stops there) and layer_norm_f16_f16 (hrsqrt: the '%'-less register of
        # cuda_fp16.hpp's inline PTX, as the f16 activations)
        dt = "float16" if "_f16" in e else "float32"
        args = {"softmax": ("ptr:x", "ptr:y", "i32:total"),
                "layernorm": ("ptr:x", "ptr:y", "f32:g", "f32:b", "i32:rows", "i32:cols"),
                "rmsnorm": ("ptr:x", "ptr:y", "f32:g", "i32:rows", "i32:cols")}[op]
        out.append(_k("leetcuda-norm", "leetcuda", [f], e, ("rownorm", (("rows", ROWS), ("cols", COLS), ("op", op), ("dtype", dt))),
                      (ROWS, 1, 1), (COLS // pack, 1, 1), args, targs=str(COLS // pack),
                      types=("MD",) if f == sm else ()))
    return out


def _tongkaio(z: dict) -> list:
    out, M, N, SM_ROWS, SM_COLS = [], z["tk_m"], z["tk_n"], z["sm_rows"], z["sm_cols"]
    tr = ("transpose", (("rows", M), ("cols", N)))
    for v in range(6):                 # its main(): v0, v3-v5 tile the input (N/32, M/32), v1-v2 the output
        grid = (-(-M // 32), -(-N // 32), 1) if v in (1, 2) else (-(-N // 32), -(-M // 32), 1)
        out.append(_k("tongkaio", "tongkaio", ["transpose/transpose.cu"], f"device_transpose_v{v}", tr,
                      grid, (32, 32, 1), ("ptr:x", "ptr:y", "i32:rows", "i32:cols"), targs="32" if v >= 3 else ""))
    files = ["reduce/softmax_matrix/include/utils.cuh", "reduce/softmax_matrix/softmax_matrix.cu"]
    # left out: softmax_row_kernel / softmax_col_kernel (lane 0 writes s_max_val / s_sum to shared memory and the
    # other lanes read it with no __syncwarp between: a data race by the PTX ISA; the emulator's racecheck stops)
    for e, axis in (("softmax_row_kernel2", "rows"), ("softmax_col_kernel2", "cols")):
        rows = SM_ROWS if axis == "rows" else SM_ROWS // 8     # the column kernel: 64 CTAs walk all rows
        out.append(_k("tongkaio", "tongkaio", files, e,
                      ("rownorm", (("rows", rows), ("cols", SM_COLS), ("op", "softmax"), ("axis", axis))),
                      (rows if axis == "rows" else SM_COLS, 1, 1), (32, 1, 1),
                      ("ptr:x", "ptr:y", "i32:rows", "i32:cols")))
    return out


def _bbuf(z: dict) -> list:
    (SG, K), d = z["sg"], "cuda-mode/code/YHs_Sample/cuda/gemm/"
    g = ("gemm", (("M", SG), ("N", SG), ("K", K), ("alpha_beta", False)))
    abc = ("ptr:A", "ptr:B", "ptr:C", "u32:M", "u32:N", "u32:K")
    return [_k(MISC, "bbuf", [d + "sgemm.cu"], "sgemm_128x128x8_kernel", g, (SG // 128, SG // 128, 1),
               (256, 1, 1), abc + ("u32:A_ldg_step", "u32:B_ldg_step")),
            ]   # left out: ampere_sgemm_128x256x8 (cp.async.ca.shared.global.L2::128B: not emulated yet)


def _paddle(z: dict) -> list:
    n = z["nadd"]                      # grid (N + 256) / 256: its main()
    return [_k(MISC, "paddle", ["docs/04_first_refine_kernel/vector_add_grid.cu"], "add_kernel",
               ("elementwise", (("n", n), ("op", "add"))), ((n + 256) // 256, 1, 1), (256, 1, 1),
               ("ptr:a", "ptr:b", "ptr:c", "i32:n"), label="vector_add_grid")]


def _cudasamples(z: dict) -> list:
    n, (nv, ne) = z["bs"], z["sp"]
    return [_k(MISC, "cudasamples", ["Samples/5_Domain_Specific/BlackScholes/BlackScholes_kernel.cuh"],
               "BlackScholesGPU", ("blackscholes", (("n", n),)), (-(-(n // 2) // 128), 1, 1), (128, 1, 1),
               ("ptr:call", "ptr:put", "ptr:S", "ptr:X", "ptr:T", "f32:riskfree", "f32:volatility", "i32:n")),
            _k(MISC, "cudasamples", ["Samples/2_Concepts_and_Techniques/scalarProd/scalarProd_kernel.cuh"],
               "scalarProdGPU", ("batchdot", (("vectors", nv), ("elements", ne))), (128, 1, 1), (256, 1, 1),
               ("ptr:C", "ptr:A", "ptr:B", "i32:vectors", "i32:elements"))]


def kernels(size: str = "full") -> list:
    """Round 2's kernels at ``size`` ("full": the set; "small": a few CTAs each, same names, code and launch)."""
    z = SIZES[size]
    return _leetcuda(z) + _tongkaio(z) + _bbuf(z) + _paddle(z) + _cudasamples(z)
