"""The corpus: each kernel's source, entry, problem, launch geometry, arguments and its split.

Split (``SPLIT``, fixed 2026-11-27 before any measurement or fitting; tests/timing_corpus/test_timing_corpus_manifest.py
holds its checksum): ``cal`` = calibration (the model's parameters may be fitted on these; measured on the H100),
``val`` = validation (never fitted; their predictions are committed before the lead measures them).  Drawn once with
one ``numpy.random.default_rng(20261127)``: for each series in manifest order, ``permutation(n)`` of its kernels,
the first max(1, round(0.4 n)) calibration; written here literally (28 of 73).

Arguments: ``"ptr:NAME"`` a device array of the problem, ``"i32:NAME"`` / ``"u32:NAME"`` / ``"u64:NAME"`` /
``"f32:NAME"`` one of its scalars (problems.py) in that PTX type.  Template kernels are instantiated explicitly
(``targs``; ``subst`` renames the template's type parameters in the parameter list, extract.instantiation).
Sizes: SGEMM-class 1024^3 (each predicts in ~10-30 s on the 2-core machine), streams 32 Mi elements or 4096^2.
"""
from __future__ import annotations

from dataclasses import dataclass, field

SIZE = 1024                    # M = N = K of every GEMM
NSTREAM = 1 << 25              # elements of the streaming / reduction problems
TR = 4096                      # transposes: TR x TR float32


@dataclass(frozen=True)
class Kernel:
    name: str                  # unique: "<series>/<kernel>"
    series: str                # ranking group (Spearman within it)
    source: str                # sources.SOURCES key
    files: tuple               # their device code, concatenated in this order
    entry: str                 # the __global__ function
    problem: tuple             # (family, params) -> problems.make(family, **params)
    grid: tuple
    block: tuple
    args: tuple
    split: str                 # "cal" | "val" (round 1) | "val2" (round 2) | "val3" (round 3)
    targs: str = ""            # explicit instantiation's template arguments
    subst: tuple = ()          # ((template type parameter, type), ...) in the instantiated parameter list
    replace: tuple = ()        # ((old, new), ...): data-only edits (a __constant__ array's initializer)
    note: str = ""
    types: tuple = ()          # plain structs of the source the device code uses (extract.device_code)
    smem: int = 0              # dynamic shared memory bytes of the launch (the project's own launcher's value)
    prelude: str = field(default="", repr=False)

    @property
    def params(self) -> dict:
        return dict(self.problem[1])


PRELUDE = {"cudasamples": "#include <cooperative_groups.h>\n",
           "leetcuda": "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"}

GEMM_ABC = ("i32:M", "i32:N", "i32:K", "f32:alpha", "ptr:A", "ptr:B", "f32:beta", "ptr:C")
GEMM_LD = ("u64:M", "u64:N", "u64:K", "f32:alpha", "ptr:A", "u64:lda", "ptr:B", "u64:ldb", "f32:beta", "ptr:C",
           "u64:ldc")
CONV_TAPS = tuple((i % 5 + 1) / 8 for i in range(17))   # exact binary fractions, radius 8


def _gemm(layout: str = "row", alpha_beta: bool = True) -> tuple:
    return ("gemm", (("M", SIZE), ("N", SIZE), ("K", SIZE), ("layout", layout), ("alpha_beta", alpha_beta)))


# The split, frozen 2026-11-27 before any measurement (procedure in the module docstring).
SPLIT = {
    # yzhai-sgemm
    "yzhai-sgemm/mysgemm_v1": "cal",
    "yzhai-sgemm/mysgemm_v2": "val",
    "yzhai-sgemm/mysgemm_v3": "cal",
    "yzhai-sgemm/mysgemm_v4": "cal",
    "yzhai-sgemm/mysgemm_v5": "val",
    "yzhai-sgemm/mysgemm_v6": "val",
    "yzhai-sgemm/mysgemm_v7": "cal",
    "yzhai-sgemm/mysgemm_v8": "val",
    "yzhai-sgemm/mysgemm_v9": "val",
    "yzhai-sgemm/mysgemm_v10": "val",
    "yzhai-sgemm/mysgemm_v11": "val",
    # wangzyon-sgemm
    "wangzyon-sgemm/mysgemm_v1": "val",
    "wangzyon-sgemm/mysgemm_v2": "val",
    "wangzyon-sgemm/mysgemm_v3": "cal",
    "wangzyon-sgemm/mysgemm_v4": "cal",
    "wangzyon-sgemm/mysgemm_v5": "val",
    "wangzyon-sgemm/mysgemm_v6": "val",
    "wangzyon-sgemm/mysgemm_v7": "cal",
    # leimao-sgemm
    "leimao-sgemm/gemm_v00": "cal",
    "leimao-sgemm/gemm_v01": "val",
    "leimao-sgemm/gemm_v02": "cal",
    "leimao-sgemm/gemm_v02_vectorized": "val",
    "leimao-sgemm/gemm_v03": "cal",
    "leimao-sgemm/gemm_v04": "val",
    "leimao-sgemm/gemm_v04_vectorized": "val",
    "leimao-sgemm/gemm_v05_vectorized": "val",
    "leimao-sgemm/gemm_v06_vectorized": "val",
    "leimao-sgemm/gemm_v06_vectorized_double_buffered": "cal",
    # liu-reduce
    "liu-reduce/reduce0": "val",
    "liu-reduce/reduce1": "cal",
    "liu-reduce/reduce2": "val",
    "liu-reduce/reduce3": "val",
    "liu-reduce/reduce4": "cal",
    "liu-reduce/reduce5": "val",
    "liu-reduce/reduce6": "val",
    "liu-reduce/reduce7": "cal",
    # liu-sgemv
    "liu-sgemv/Sgemv_v0": "val",
    "liu-sgemv/Sgemv_v1": "val",
    "liu-sgemv/Sgemv_v2": "cal",
    # liu-elementwise
    "liu-elementwise/add": "val",
    "liu-elementwise/vec2_add": "val",
    "liu-elementwise/vec4_add": "cal",
    # leetcuda-transpose
    "leetcuda-transpose/mat_transpose_f32_col2row_kernel": "val",
    "leetcuda-transpose/mat_transpose_f32_row2col_kernel": "val",
    "leetcuda-transpose/mat_transpose_f32x4_col2row_kernel": "val",
    "leetcuda-transpose/mat_transpose_f32x4_row2col_kernel": "cal",
    "leetcuda-transpose/mat_transpose_f32_col2row2d_kernel": "cal",
    "leetcuda-transpose/mat_transpose_f32_row2col2d_kernel": "cal",
    "leetcuda-transpose/mat_transpose_f32_diagonal2d_kernel": "val",
    "leetcuda-transpose/mat_transpose_f32x4_shared_col2row2d_kernel": "val",
    "leetcuda-transpose/mat_transpose_f32x4_shared_bcf_col2row2d_kernel": "cal",
    "leetcuda-transpose/mat_transpose_f32x4_shared_bcf_merge_write_row2col2d_kernel": "val",
    # leetcuda-elementwise
    "leetcuda-elementwise/elementwise_add_f32_kernel": "val",
    "leetcuda-elementwise/elementwise_add_f32x4_kernel": "val",
    "leetcuda-elementwise/elementwise_add_f16x8_pack_kernel": "cal",
    "leetcuda-elementwise/relu_f32_kernel": "cal",
    "leetcuda-elementwise/relu_f32x4_kernel": "val",
    # leetcuda-sgemm
    "leetcuda-sgemm/sgemm_naive_f32_kernel": "val",
    "leetcuda-sgemm/sgemm_sliced_k_f32_kernel": "cal",
    "leetcuda-sgemm/sgemm_t_8x8_sliced_k_f32x4_kernel": "val",
    "leetcuda-sgemm/sgemm_t_8x8_sliced_k_f32x4_bcf_kernel": "val",
    "leetcuda-sgemm/sgemm_t_8x8_sliced_k_f32x4_bcf_dbuf_kernel": "cal",
    # cudasamples-transpose
    "cudasamples-transpose/copy": "val",
    "cudasamples-transpose/copySharedMem": "val",
    "cudasamples-transpose/transposeNaive": "val",
    "cudasamples-transpose/transposeCoalesced": "cal",
    "cudasamples-transpose/transposeNoBankConflicts": "cal",
    "cudasamples-transpose/transposeDiagonal": "val",
    # cudasamples-misc
    "cudasamples-misc/MatrixMulCUDA<16>": "cal",
    "cudasamples-misc/MatrixMulCUDA<32>": "val",
    "cudasamples-misc/vectorAdd": "val",
    "cudasamples-misc/convolutionRowsKernel": "val",
    "cudasamples-misc/convolutionColumnsKernel": "cal",
}


def _k(series, source, files, entry, problem, grid, block, args, **kw) -> Kernel:
    name = f"{series}/{kw.pop('label', entry)}"
    return Kernel(name, series, source, tuple(files), entry, problem, tuple(grid), tuple(block), tuple(args),
                  SPLIT[name], prelude=PRELUDE.get(source, ""), **kw)


def _yzhai() -> list:
    S, out = SIZE, []
    geo = {1: (32, (32, 32, 1)), 2: (32, (32, 32, 1)), 3: (32, (1024, 1, 1)), 4: (32, (1024, 1, 1)),
           5: (32, (256, 1, 1)), 6: (32, (256, 1, 1)), 7: (64, (256, 1, 1))}
    for v in range(1, 12):
        tile, block = geo.get(v, (128, (256, 1, 1)))
        out.append(_k("yzhai-sgemm", "yzhai", [f"include/kernel{v}.cuh"], f"mysgemm_v{v}", _gemm("col"),
                      (S // tile, S // tile, 1), block, GEMM_ABC))
    return out


def _wangzyon() -> list:
    S = SIZE
    rows = [(1, "", 32, (32, 32, 1)), (2, "32", 32, (1024, 1, 1)), (3, "64, 64, 8, 8", 64, (512, 1, 1))] + \
        [(v, "128, 128, 8, 8, 8", 128, (256, 1, 1)) for v in (4, 5, 6, 7)]
    return [_k("wangzyon-sgemm", "wangzyon", [f"src/kernel/kernel_{v}.cuh"], f"mysgemm_v{v}", _gemm(),
               (S // t, S // t, 1), b, GEMM_ABC, targs=ta) for v, ta, t, b in rows]


def _leimao() -> list:
    S, util = SIZE, "include/cuda_gemm_utils.cuh"
    t4, w6 = "float, 128, 128, 16, 8, 8", "float, 128, 128, 16, 32, 64, 8, 8, 4, 8"
    rows = [("00_non_coalesced_global_memory_access", "gemm_v00", "float", 32, (32, 32, 1)),
            ("01_coalesced_global_memory_access", "gemm_v01", "float", 32, (32, 32, 1)),
            ("02_2d_block_tiling", "gemm_v02", "float, 32, 32, 32", 32, (32, 32, 1)),
            ("02_2d_block_tiling_vectorized_memory_access", "gemm_v02_vectorized", "float, 32, 32, 32", 32,
             (32, 32, 1)),
            ("03_2d_block_tiling_1d_thread_tiling", "gemm_v03", "float, 64, 64, 8, 8", 64, (512, 1, 1)),
            ("04_2d_block_tiling_2d_thread_tiling", "gemm_v04", t4, 128, (256, 1, 1)),
            ("04_2d_block_tiling_2d_thread_tiling_vectorized_memory_access", "gemm_v04_vectorized", t4, 128,
             (256, 1, 1)),
            ("05_2d_block_tiling_2d_thread_tiling_matrix_transpose_vectorized_memory_access", "gemm_v05_vectorized",
             t4, 128, (256, 1, 1)),
            ("06_2d_block_tiling_2d_warp_tiling_2d_thread_tiling_matrix_transpose_vectorized_memory_access",
             "gemm_v06_vectorized", w6, 128, (256, 1, 1)),
            ("06_2d_block_tiling_2d_warp_tiling_2d_thread_tiling_matrix_transpose_vectorized_memory_access_double_"
             "buffered", "gemm_v06_vectorized_double_buffered", w6, 128, (256, 1, 1))]
    # v00's launcher puts m on grid x (its threads walk C by column); the others put n on x: square here either way
    return [_k("leimao-sgemm", "leimao", [util, f"src/{f}.cu"], e, _gemm(), (S // t, S // t, 1), b, GEMM_LD,
               targs=ta, subst=(("T", "float"),)) for f, e, ta, t, b in rows]


def _liu() -> list:
    n, out = NSTREAM, []
    red = [("reduce_v0_baseline", "reduce0", "", 256), ("reduce_v1_no_divergence_branch", "reduce1", "", 256),
           ("reduce_v2_no_bank_conflict", "reduce2", "", 256), ("reduce_v3_add_during_load", "reduce3", "", 512),
           ("reduce_v4_unroll_last_warp", "reduce4", "", 512), ("reduce_v5_completely_unroll", "reduce5", "256", 512),
           ("reduce_v6_multi_add", "reduce6", "256, 128", n // 1024), ("reduce_v7_shuffle", "reduce7", "256, 128",
                                                                        n // 1024)]
    for f, e, ta, per in red:
        args = ("ptr:x", "ptr:out") + (("u32:n",) if "," in ta else ())
        out.append(_k("liu-reduce", "liu", [f"reduce/{f}.cu"], e, ("block_sums", (("n", n), ("per_block", per))),
                      (n // per, 1, 1), (256, 1, 1), args, targs=ta))
    for e, ta, kk, rows in (("Sgemv_v0", "", 32, 4), ("Sgemv_v1", "", 128, 4), ("Sgemv_v2", "2", 16, 8)):
        m = (1 << 24) // kk                                    # A is 64 MiB
        out.append(_k("liu-sgemv", "liu", [f"sgemv/{e}.cu"], e, ("gemv", (("M", m), ("K", kk))), (m // rows, 1, 1),
                      (32, 4, 1), ("ptr:A", "ptr:x", "ptr:y", "i32:M", "i32:K"), targs=ta))
    for e, per in (("add", 256), ("vec2_add", 512), ("vec4_add", 1024)):
        out.append(_k("liu-elementwise", "liu", ["elementwise/elementwise_add.cu"], e,
                      ("elementwise", (("n", n), ("op", "add"))), (n // per, 1, 1), (256, 1, 1),
                      ("ptr:a", "ptr:b", "ptr:c")))
    return out


def _leetcuda() -> list:
    out, T, S, n = [], TR, SIZE, NSTREAM
    tr, tf = ("transpose", (("rows", T), ("cols", T))), ["kernels/mat-transpose/mat_transpose.cu"]
    targs = ("ptr:x", "ptr:y", "i32:rows", "i32:cols")
    for tag, pack in (("f32_col2row", 1), ("f32_row2col", 1), ("f32x4_col2row", 4), ("f32x4_row2col", 4)):
        out.append(_k("leetcuda-transpose", "leetcuda", tf, f"mat_transpose_{tag}_kernel", tr,
                      (T * T // pack // 256, 1, 1), (256, 1, 1), targs))
    for tag, nr, nc in (("f32_col2row2d", 1, 1), ("f32_row2col2d", 1, 1), ("f32_diagonal2d", 1, 1),
                        ("f32x4_shared_col2row2d", 1, 4), ("f32x4_shared_bcf_col2row2d", 1, 4),
                        ("f32x4_shared_bcf_merge_write_row2col2d", 4, 1)):
        out.append(_k("leetcuda-transpose", "leetcuda", tf, f"mat_transpose_{tag}_kernel", tr,
                      (T // (16 * nc), T // (16 * nr), 1), (16, 16, 1), targs))
    for f, e, op, dt, pack in (("elementwise/elementwise.cu", "elementwise_add_f32_kernel", "add", "float32", 1),
                               ("elementwise/elementwise.cu", "elementwise_add_f32x4_kernel", "add", "float32", 4),
                               ("elementwise/elementwise.cu", "elementwise_add_f16x8_pack_kernel", "add", "float16", 8),
                               ("relu/relu.cu", "relu_f32_kernel", "relu", "float32", 1),
                               ("relu/relu.cu", "relu_f32x4_kernel", "relu", "float32", 4)):
        args = ("ptr:a", "ptr:b", "ptr:c", "i32:n") if op == "add" else ("ptr:x", "ptr:y", "i32:n")
        out.append(_k("leetcuda-elementwise", "leetcuda", [f"kernels/{f}"], e,
                      ("elementwise", (("n", n), ("op", op), ("dtype", dt))), (n // 256, 1, 1), (256 // pack, 1, 1),
                      args))
    for e, ta, t, b in (("sgemm_naive_f32_kernel", "", 32, (32, 32, 1)),
                        ("sgemm_sliced_k_f32_kernel", "32, 32, 32", 32, (32, 32, 1)),
                        ("sgemm_t_8x8_sliced_k_f32x4_kernel", "128, 128, 8, 8, 8", 128, (16, 16, 1)),
                        ("sgemm_t_8x8_sliced_k_f32x4_bcf_kernel", "128, 128, 8, 8, 8, 0", 128, (16, 16, 1)),
                        ("sgemm_t_8x8_sliced_k_f32x4_bcf_dbuf_kernel", "128, 128, 8, 8, 8, 0", 128, (16, 16, 1))):
        out.append(_k("leetcuda-sgemm", "leetcuda", ["kernels/sgemm/sgemm.cu"], e, _gemm(alpha_beta=False),
                      (S // t, S // t, 1), b, ("ptr:A", "ptr:B", "ptr:C", "i32:M", "i32:N", "i32:K"), targs=ta))
    return out


def _cudasamples() -> list:
    out, T, S, n = [], TR, SIZE, NSTREAM
    tp = "Samples/6_Performance/transpose/transpose.cu"
    for e, cp in (("copy", True), ("copySharedMem", True), ("transposeNaive", False), ("transposeCoalesced", False),
                  ("transposeNoBankConflicts", False), ("transposeDiagonal", False)):
        out.append(_k("cudasamples-transpose", "cudasamples", [tp], e,
                      ("transpose", (("rows", T), ("cols", T), ("copy", cp))), (T // 32, T // 32, 1), (32, 16, 1),
                      ("ptr:y", "ptr:x", "i32:cols", "i32:rows")))
    mm = "Samples/0_Introduction/matrixMul/matrixMul.cu"
    for bs in (16, 32):
        out.append(_k("cudasamples-misc", "cudasamples", [mm], "MatrixMulCUDA", _gemm(alpha_beta=False),
                      (S // bs, S // bs, 1), (bs, bs, 1), ("ptr:C", "ptr:A", "ptr:B", "i32:K", "i32:N"),
                      targs=str(bs), label=f"MatrixMulCUDA<{bs}>"))
    out.append(_k("cudasamples-misc", "cudasamples", ["Samples/0_Introduction/vectorAdd/vectorAdd.cu"], "vectorAdd",
                  ("elementwise", (("n", n), ("op", "add"))), (n // 256, 1, 1), (256, 1, 1),
                  ("ptr:a", "ptr:b", "ptr:c", "i32:n")))
    cdir = "Samples/2_Concepts_and_Techniques/convolutionSeparable/"
    init = ("__constant__ float c_Kernel[KERNEL_LENGTH];",
            "__constant__ float c_Kernel[KERNEL_LENGTH] = {" + ", ".join(f"{t!r}f" for t in CONV_TAPS) + "};")
    W = 3072
    for e, ax, grid, block in (("convolutionRowsKernel", "rows", (W // 128, W // 4, 1), (16, 4, 1)),
                               ("convolutionColumnsKernel", "cols", (W // 16, W // 64, 1), (16, 8, 1))):
        out.append(_k("cudasamples-misc", "cudasamples", [cdir + "convolutionSeparable_common.h",
                                                          cdir + "convolutionSeparable.cu"], e,
                      ("sepconv", (("width", W), ("height", W), ("axis", ax), ("taps", CONV_TAPS))), grid, block,
                      ("ptr:dst", "ptr:src", "i32:width", "i32:height", "i32:pitch"), replace=(init,),
                      note="c_Kernel set by an initializer instead of cudaMemcpyToSymbol"))
    return out


ROUND1 = _yzhai() + _wangzyon() + _leimao() + _liu() + _leetcuda() + _cudasamples()

from .manifest_round2 import kernels as _round2  # noqa: E402  (it imports Kernel from here)

from .manifest_round3 import kernels as _round3  # noqa: E402

ROUND2 = _round2()                 # part "val2": round 2's fresh validation set (manifest_round2.py)
ROUND3 = _round3()                 # part "val3": round 3's fresh validation set (manifest_round3.py)
KERNELS = ROUND1 + ROUND2 + ROUND3
BY_NAME = {k.name: k for k in KERNELS}
PARTS = ("cal", "val", "val2", "val3")


def select(part: str = "all", only=None) -> list:
    """Kernels of a part ("cal" / "calibration", "val" / "validation": round 1; "val2" / "round2": round 2's
    validation set; "val3" / "round3": round 3's; "all"), optionally filtered by substrings."""
    p = {"calibration": "cal", "validation": "val", "round2": "val2", "round3": "val3"}.get(part, part)
    if p not in PARTS + ("all",):
        raise ValueError(f"part must be calibration, validation, val2, val3 or all, not {part!r}")
    ks = [k for k in KERNELS if p == "all" or k.split == p]
    if only:
        ks = [k for k in ks if any(s in k.name for s in only)]
    return ks
