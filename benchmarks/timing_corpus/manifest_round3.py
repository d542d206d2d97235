"""Round 3 of the corpus (issue 21): a FRESH validation part, ``val3``, of kernels the timing model was never fitted
to (rounds 1 and 2 are spent: the model was refit on them).

Every round-3 kernel is validation: there is no round-3 calibration part.  The set was fixed on 2026-11-28, before
any round-3 kernel was predicted with the frozen model or measured; tests/timing_corpus/test_timing_corpus_round3.py
holds the checksum of its names.  Round 2 was streaming-heavy; round 3 is what the model is weakest at and users
choose between: GEMM optimisation series, CUDA-core (SGEMM) and tensor-core (``mma.sync`` / ``ldmatrix`` /
``cp.async`` HGEMM), an HGEMV and a softmax design series, from five repositories new to the corpus (sources.py):
tpoisonooo/how-to-optimize-gemm (its ``cuda/`` steps), nicolaswilde/cuda-sgemm, Bruce-Lee-LY/cuda_hgemm (its
``mma/`` steps), Bruce-Lee-LY/cuda_hgemv and karpathy/llm.c (``dev/cuda/softmax_forward.cu``).  Launch geometry and
dynamic shared memory: each project's own host code (``MY_MMult``, ``main``, the ``mma*`` / ``warp*`` launchers,
``softmax_forward<n>`` with block size 256).
"""
from __future__ import annotations

from .manifest import Kernel

PART = "val3"
# Problem sizes: SIZES["full"] is the set (predicted and measured); SIZES["small"] the same kernels on a few CTAs,
# for full emulations on the CPU (check_round3.py).
SIZES = {
    "full": dict(sg=(1024, 1024, 1024),      # SGEMMs: M, N, K (round 1's size; 4096^3 predicts far too slowly)
                 hg=(2048, 2048, 1024),      # HGEMMs: 8.6 GFLOP, tens of us on an H100 with mma.sync
                 hv=(16384, 4096),           # HGEMV N, K: B is 128 MiB (its main's 256 x 128 is a few us)
                 sm=(4096, 4096)),           # llm.c softmax rows, cols: 64 MiB in (its main's 8192 x 50257: 1.6 GB)
    "small": dict(sg=(256, 256, 64), hg=(256, 256, 256), hv=(320, 512), sm=(40, 1000)),
}
PRELUDE = {"tpoisonooo": "#include <cstdint>\n", "nwsgemm": "",
           "brucelee": "#include <cuda_fp16.h>\n#include <cstdint>\n",
           "hgemv": "#include <cuda_fp16.h>\n",
           "llmc": "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                   "#ifndef INFINITY\n#define INFINITY __int_as_float(0x7f800000)\n#endif\n"}   # <math.h>'s

SG_LD = ("i32:M", "i32:N", "i32:K", "ptr:A", "i32:lda", "ptr:B", "i32:ldb", "ptr:C", "i32:ldc")
SG_ABC = ("i32:M", "i32:N", "i32:K", "ptr:A", "ptr:B", "ptr:C")
HG_ARGS = ("ptr:A", "ptr:B", "ptr:C", "u64:M", "u64:N", "u64:K")
# Bruce-Lee-LY's mma kernels: (file, entry, dynamic shared memory of its launcher: max((BLOCK_ROWS + BLOCK_COLS) *
# AB_SMEM_STRIDE * 2 * stages, BLOCK_ROWS * C_SMEM_STRIDE * 2) with 256 x 128 blocks, AB stride 32, C stride 128)
HG_MMA = [("mma_naive", "mmaNaiveKernel", 0), ("mma_base", "mmaBaseKernel", 65536),
          ("mma_permuted", "mmaPermutedKernel", 65536), ("mma_async", "mmaAsyncKernel", 65536),
          ("mma_async_pg2s", "mmaAsyncPg2sKernel", 65536), ("mma_async_pg2s_ps2r", "mmaAsyncPg2sPs2rKernel", 65536),
          ("mma_async_stage2", "mmaAsyncStage2Kernel", 65536), ("mma_async_stage3", "mmaAsyncStage3Kernel", 73728),
          ("mma_async_stage4", "mmaAsyncStage4Kernel", 98304)]


def _k(series, source, files, entry, problem, grid, block, args, **kw) -> Kernel:
    name = f"{series}/{kw.pop('label', entry)}"
    return Kernel(name, series, source, tuple(files), entry, problem, tuple(grid), tuple(block), tuple(args), PART,
                  prelude=PRELUDE[source], **kw)


def _sgemm(z: dict) -> tuple:
    M, N, K = z["sg"]
    return ("gemm", (("M", M), ("N", N), ("K", K), ("alpha_beta", False)))


def _tpoisonooo(z: dict) -> list:
    M, N, _ = z["sg"]
    # MY_MMult of each step: (targs, rows per CTA along grid x and y, block, argument list)
    rows = {2: ("16", 16, (16, 16, 1), SG_LD), 3: ("16", 16, (16, 16, 1), SG_ABC),
            4: ("16, 2", 32, (16, 16, 1), SG_LD), 5: ("8, 4", 32, (8, 8, 1), SG_LD),
            6: ("16, 2", 32, (16, 16, 1), SG_LD), 7: ("", 64, (256, 1, 1), SG_LD), 8: ("8, 4", 32, (8, 8, 1), SG_LD)}
    rows.update({v: ("", 128, (256, 1, 1), SG_ABC) for v in (9, 10)})
    # left out: MMult_cuda_11 / 12 (they switch shared-memory buffers by XOR-ing the address with 0x2000 / 0x1000,
    # relying on `__align__(16 * 1024)`; an sm_90 CTA's shared memory starts at 0x400 whatever the .align
    # (ptx_docs/fidelity.md, smem_align): wrong results on the H100, and on the emulator, which lays it out the same)
    out = []
    for v, (ta, t, block, args) in rows.items():
        entry = "sgemm_128x128x8" if v >= 9 else "sgemm"
        out.append(_k("tpoisonooo-sgemm", "tpoisonooo", [f"cuda/MMult_cuda_{v}.cu"], entry, _sgemm(z),
                      (M // t, N // t, 1), block, args, targs=ta, label=f"MMult_cuda_{v}"))
    return out


def _nwsgemm(z: dict) -> list:
    M, N, _ = z["sg"]   # its main(): naive block (32, 32), grid (N / 32, M / 32); V1-V3 block (16, 16), 128^2 tiles
    return [_k("nicolaswilde-sgemm", "nwsgemm", ["sgemm.cu"], e, _sgemm(z), (N // t, M // t, 1), b,
               ("ptr:A", "ptr:B", "ptr:C", "i32:M", "i32:N", "i32:K"))
            for e, t, b in (("naiveSgemm", 32, (32, 32, 1)), ("mySgemmV1Aligned", 128, (16, 16, 1)),
                            ("mySgemmV2Aligned", 128, (16, 16, 1)), ("mySgemmV3Aligned", 128, (16, 16, 1)))]


def _brucelee(z: dict) -> list:
    M, N, K = z["hg"]
    prob = ("hgemm", (("M", M), ("N", N), ("K", K)))
    out, common = [], ["src/common/ptx.h", "src/common/util.h"]
    for f, e, smem in HG_MMA:
        # mmaNaive: one warp per 16 x 8 tile, grid (N / 8, M / 16); the others: 256 threads, grid (BLOCK_STRIDE = 16,
        # M / 256, N / (128 * 16)) (CTAs past N return at once, as on the project's own launch)
        grid = (-(-N // 8), -(-M // 16), 1) if f == "mma_naive" else (16, -(-M // 256), -(-N // 2048))
        block = (32, 1, 1) if f == "mma_naive" else (256, 1, 1)
        out.append(_k("brucelee-hgemm", "brucelee", common + [f"src/mma/{f}.cu"], e, prob, grid, block, HG_ARGS,
                      smem=smem, label=f))
    return out


def _hgemv(z: dict) -> list:
    N, K = z["hv"]
    prob = ("hgemv", (("N", N), ("K", K)))
    out = []
    for f, cols in [("thread/thread_naive", 128), ("thread/thread_smem", 128)] + \
            [(f"warp/warp{c}_{v}", 4 * c) for c in (1, 2, 4, 8, 16) for v in ("naive", "smem")]:
        # each launcher: 128 threads, grid ceil(N / columns per CTA); the _smem ones K * 2 bytes of dynamic smem.
        # N must be a multiple of 64: warp8 / warp16 return lanes of a column >= N and then shfl.sync with a full
        # mask (undefined by the PTX ISA, 9.7.9.6; the emulator stops: "deadlock")
        stem = f.split("/")[1]
        entry = "".join(w.capitalize() if i else w for i, w in enumerate(stem.split("_"))) + "Kernel"
        out.append(_k("brucelee-hgemv", "hgemv", ["src/common/util.h", f"src/{f}.cu"], entry, prob,
                      (-(-N // cols), 1, 1), (128, 1, 1), ("ptr:A", "ptr:B", "ptr:C", "u64:N", "u64:K"),
                      smem=2 * K if stem.endswith("smem") else 0, label=stem))
    return out


def _llmc(z: dict) -> list:
    N, C = z["sm"]
    prob = ("rownorm", (("rows", N), ("cols", C), ("op", "softmax")))
    warps = -(-N * 32 // 256)            # one warp per row, 256-thread CTAs
    # softmax_forward<kernel_num>'s launch with block_size 256 (kernel 3: 32), dynamic smem as it computes it.
    # left out: kernel4 (every thread reads the max from shared[0], then warp 0's lane 0 writes the sum there with
    # no barrier between: a write-after-read race; the emulator's racecheck stops)
    rows = [("softmax_forward_kernel1", -(-N // 256), 256, 0), ("softmax_forward_kernel2", N, 256, 256 * 4),
            ("softmax_forward_kernel3", N, 32, 32 * 4),
            ("softmax_forward_online_kernel1", -(-N // 256), 256, 0),
            ("softmax_forward_online_kernel2", warps, 256, 0),
            ("softmax_forward_kernel7", N, 256, 2 * 256 // 32 * 4), ("softmax_forward_online_kernel8", warps, 256, 0)]
    return [_k("llmc-softmax", "llmc", ["dev/cuda/common.h", "dev/cuda/softmax_forward.cu"], e, prob, (g, 1, 1),
               (b, 1, 1), ("ptr:y", "ptr:x", "i32:rows", "i32:cols"), smem=smem, types=("SumMax",))
            for e, g, b, smem in rows]


def kernels(size: str = "full") -> list:
    """Round 3's kernels at ``size`` ("full": the set; "small": a few CTAs each, same names, code and launch)."""
    z = SIZES[size]
    return _tpoisonooo(z) + _nwsgemm(z) + _brucelee(z) + _hgemv(z) + _llmc(z)
