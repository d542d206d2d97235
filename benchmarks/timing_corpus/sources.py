"""The public sources of the corpus: repository, pinned commit, the files used and a digest of each (sha256, first
16 hex digits), and where the cached copies live.

The cache (``~/.cache/ptxlab/timing_corpus`` by default; ``$PTXLAB_CORPUS_SOURCES`` or ``--sources`` override it)
holds ``<owner>+<name>/<commit>/<path>``.  ``fetch.py`` fills it; ``fetch.py --pack`` copies the same tree into a
folder inside the repo (ignored by git) for the device machine, which has no network.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACK_DIR = ROOT / ".timing_corpus_sources"   # fetch.py --pack default: in the repo root, ignored via .git/info/exclude
DEFAULT_CACHE = Path("~/.cache/ptxlab/timing_corpus").expanduser()


@dataclass(frozen=True)
class Source:
    """One public repository at one commit and the files of it the corpus compiles."""
    key: str
    repo: str                   # owner/name on GitHub
    commit: str
    license: str
    files: dict                 # path -> first 16 hex digits of its sha256

    @property
    def slug(self) -> str:
        return self.repo.replace("/", "+")


SOURCES = {s.key: s for s in [
    Source("yzhai", "yzhaiustc/Optimizing-SGEMM-on-NVIDIA-Turing-GPUs", "a5c0d6ce593553cdf87848821b1433d7930d0cc4",
           "GPL-3.0", {
               "include/kernel1.cuh": "867f675d606877be", "include/kernel2.cuh": "87316b43f9ce511c",
               "include/kernel3.cuh": "a317c1d57a8716f0", "include/kernel4.cuh": "dbef3ac23d8ed968",
               "include/kernel5.cuh": "fdf07bbf1cb76e66", "include/kernel6.cuh": "af5a5cd9f544d360",
               "include/kernel7.cuh": "db16c112d199df31", "include/kernel8.cuh": "2ceeadf5ed023bd5",
               "include/kernel9.cuh": "9f60b7f84bffa46b", "include/kernel10.cuh": "b642547d427c0063",
               "include/kernel11.cuh": "7a5168279b0112f2"}),
    Source("wangzyon", "wangzyon/NVIDIA_SGEMM_PRACTICE", "d6068b13e9997ccff51c9d3cb773afd176fb7d8f", "none stated", {
        "src/kernel/kernel_1.cuh": "f9c2294e191a70b5", "src/kernel/kernel_2.cuh": "dc34b23348e29479",
        "src/kernel/kernel_3.cuh": "9d89cca15b7161b7", "src/kernel/kernel_4.cuh": "43aea92f9d972691",
        "src/kernel/kernel_5.cuh": "b315e731787104f8", "src/kernel/kernel_6.cuh": "fd32810e0c489a1a",
        "src/kernel/kernel_7.cuh": "cad1b08d7f19ca5a"}),
    Source("leimao", "leimao/CUDA-GEMM-Optimization", "747e49b418bca18557581969c78333443055fd43", "MIT", {
        "include/cuda_gemm_utils.cuh": "eda3c1d6dc21d666",
        "src/00_non_coalesced_global_memory_access.cu": "6ce1d11f1c48dd25",
        "src/01_coalesced_global_memory_access.cu": "22192f24b0348146",
        "src/02_2d_block_tiling.cu": "06dc2d350ab2be41",
        "src/02_2d_block_tiling_vectorized_memory_access.cu": "f403842c83c86e6f",
        "src/03_2d_block_tiling_1d_thread_tiling.cu": "d5aed92daeefe6eb",
        "src/04_2d_block_tiling_2d_thread_tiling.cu": "3dee450c5fcb2345",
        "src/04_2d_block_tiling_2d_thread_tiling_vectorized_memory_access.cu": "a1576d3ce9f09975",
        "src/05_2d_block_tiling_2d_thread_tiling_matrix_transpose_vectorized_memory_access.cu": "7f8dd1d3d5769f1b",
        "src/06_2d_block_tiling_2d_warp_tiling_2d_thread_tiling_matrix_transpose_vectorized_memory_access.cu":
            "25f1a71179454a96",
        "src/06_2d_block_tiling_2d_warp_tiling_2d_thread_tiling_matrix_transpose_vectorized_memory_access_double_"
        "buffered.cu": "61d8ee46c463548d"}),
    Source("liu", "Liu-xiandong/How_to_optimize_in_GPU", "5d2def3e082c4e1364c3ade54451b7b9d1d6f044", "Apache-2.0", {
        "reduce/reduce_v0_baseline.cu": "1ada0abb9bbf1efc",
        "reduce/reduce_v1_no_divergence_branch.cu": "415cfb20c8573c9a",
        "reduce/reduce_v2_no_bank_conflict.cu": "6d3f7cc952fd0e04",
        "reduce/reduce_v3_add_during_load.cu": "e9c4f72d95d3343d",
        "reduce/reduce_v4_unroll_last_warp.cu": "3f0ec2815324c0f7",
        "reduce/reduce_v5_completely_unroll.cu": "561676fdb23e0723",
        "reduce/reduce_v6_multi_add.cu": "9ffcf8554c3809f2",
        "reduce/reduce_v7_shuffle.cu": "9a13118f0e6b0647",
        "sgemv/Sgemv_v0.cu": "be224165b7dcd29a", "sgemv/Sgemv_v1.cu": "3f2c2e8618944b67",
        "sgemv/Sgemv_v2.cu": "84fc2bcb51cb5793",
        "elementwise/elementwise_add.cu": "e342d60a673b84a4"}),
    Source("leetcuda", "xlite-dev/LeetCUDA", "cb6a0497e829741fc5e3ad5e43a5beed0d85edcd", "GPL-3.0", {
        "kernels/mat-transpose/mat_transpose.cu": "4f729de181e4be57",
        "kernels/elementwise/elementwise.cu": "5653e841da65f6b0",
        "kernels/relu/relu.cu": "94bcbccc1b526019",
        "kernels/sgemm/sgemm.cu": "4bc696c6016f2d79",
        # round 2 (val2)
        "kernels/sigmoid/sigmoid.cu": "91a0610012ff905b", "kernels/swish/swish.cu": "88334e43806ccb59",
        "kernels/elu/elu.cu": "888350fe60666479", "kernels/gelu/gelu.cu": "20712b256e00d72f",
        "kernels/hardswish/hardswish.cu": "12a3c10a584cccde", "kernels/hardshrink/hardshrink.cu": "ebc8f0678d0d1401",
        "kernels/softmax/softmax.cu": "4bde8dd15ece10de", "kernels/layer-norm/layer_norm.cu": "57dd78f9285e4c56",
        "kernels/rms-norm/rms_norm.cu": "00a9afa32632dcbc", "kernels/embedding/embedding.cu": "4a14c703c5bdfca7"}),
    Source("cudasamples", "NVIDIA/cuda-samples", "c94ff366aed18c797b8a85dfaac7817b0228b420", "BSD-3-Clause", {
        "Samples/6_Performance/transpose/transpose.cu": "14b15f234a54fbe3",
        "Samples/0_Introduction/matrixMul/matrixMul.cu": "71872f21264d67fa",
        "Samples/0_Introduction/vectorAdd/vectorAdd.cu": "38c186374058ad21",
        "Samples/2_Concepts_and_Techniques/convolutionSeparable/convolutionSeparable.cu": "8664b64131d53fee",
        "Samples/2_Concepts_and_Techniques/convolutionSeparable/convolutionSeparable_common.h": "c898be7a6f140a67",
        # round 2 (val2)
        "Samples/5_Domain_Specific/BlackScholes/BlackScholes_kernel.cuh": "1576566f2f98439a",
        "Samples/2_Concepts_and_Techniques/scalarProd/scalarProd_kernel.cuh": "21d0d6936b7a50a5"}),
    # round 2 (val2): projects new to the corpus
    Source("tongkaio", "Tongkaio/CUDA_Kernel_Samples", "fc0275378a00058ab03e749031767133f5c6c386", "MIT", {
        "transpose/transpose.cu": "cd3f5e76958169d9", "reduce/softmax_matrix/include/utils.cuh": "1b147b2ef01a9a1b",
        "reduce/softmax_matrix/softmax_matrix.cu": "3835be5ccf24a304"}),
    Source("bbuf", "BBuf/how-to-optim-algorithm-in-cuda", "10a3a8d243037e2544686eb673fda86fba23143f", "Apache-2.0", {
        "cuda-mode/code/YHs_Sample/cuda/gemm/sgemm.cu": "d1c58dcb8982308f",
        "cuda-mode/code/YHs_Sample/cuda/gemm/ampere_sgemm.cu": "835217746a4a4bc7"}),
    Source("paddle", "PaddleJitLab/CUDATutorial", "7499a3792f44ef6c78fcad5091fb7335ba6d2d68", "none stated", {
        "docs/04_first_refine_kernel/vector_add_grid.cu": "798c0d20217fd679"}),
    # round 3 (val3): projects new to the corpus
    Source("tpoisonooo", "tpoisonooo/how-to-optimize-gemm", "27f9656874c82e1072d28088feb297784836e975", "GPL-3.0", {
        "cuda/MMult_cuda_2.cu": "5e595063ee1057c0", "cuda/MMult_cuda_3.cu": "4c084c97af501591",
        "cuda/MMult_cuda_4.cu": "88cd871c2d876c87", "cuda/MMult_cuda_5.cu": "5e16f2d5cdf1ce1b",
        "cuda/MMult_cuda_6.cu": "4d4dbcb962f76ae6", "cuda/MMult_cuda_7.cu": "1e7f0ddeb9203fe1",
        "cuda/MMult_cuda_8.cu": "ce51954aea5c49a9", "cuda/MMult_cuda_9.cu": "54afc455c68332ab",
        "cuda/MMult_cuda_10.cu": "a1980dc792a747ac", "cuda/MMult_cuda_11.cu": "1bdd1010e969982d",
        "cuda/MMult_cuda_12.cu": "d7d1828d1ce10a7d"}),
    Source("nwsgemm", "nicolaswilde/cuda-sgemm", "03a2c7bb17f5791466014cf4fb5b8fa42167d000", "none stated", {
        "sgemm.cu": "a8c8ac570e945351"}),
    Source("brucelee", "Bruce-Lee-LY/cuda_hgemm", "0d26c2e4415ab0d0af5a6bfae301275c608d46b4", "MIT", {
        "src/common/ptx.h": "649eabafbccbe098", "src/common/util.h": "97e89a2c021fe8a6",
        "src/mma/mma_naive.cu": "b813dbd10a7950ef", "src/mma/mma_base.cu": "161aa5bd8d6f76d6",
        "src/mma/mma_permuted.cu": "dfdf6fc80576e510", "src/mma/mma_async.cu": "eb097bf81ba74fcb",
        "src/mma/mma_async_pg2s.cu": "5027c4d4c09e00ef", "src/mma/mma_async_pg2s_ps2r.cu": "00523660d05b15ad",
        "src/mma/mma_async_stage2.cu": "f71b8050d8f755ff", "src/mma/mma_async_stage3.cu": "3cb7492a6be37571",
        "src/mma/mma_async_stage4.cu": "1a8328a011fc7de2"}),
    Source("hgemv", "Bruce-Lee-LY/cuda_hgemv", "55eaca46c25234c9dce3daa00a8a9884a63cee22", "MIT", {
        "src/common/util.h": "97e89a2c021fe8a6",
        "src/thread/thread_naive.cu": "39a0b45f8852f0d1", "src/thread/thread_smem.cu": "d014187c863ea83d",
        "src/warp/warp1_naive.cu": "e71f43b5c98262f8", "src/warp/warp1_smem.cu": "2d9d677d6e78cc24",
        "src/warp/warp2_naive.cu": "75e82a8c0f53818c", "src/warp/warp2_smem.cu": "853eba3caec932f1",
        "src/warp/warp4_naive.cu": "b9e3dfc7dba896c4", "src/warp/warp4_smem.cu": "6590f67df71e8088",
        "src/warp/warp8_naive.cu": "481280ecc28fe0b2", "src/warp/warp8_smem.cu": "1ae3035e7b049174",
        "src/warp/warp16_naive.cu": "85c6ea80bbbf241f", "src/warp/warp16_smem.cu": "84af9d1ce4457b77"}),
    Source("llmc", "karpathy/llm.c", "f1e2ace651495b74ae22d45d1723443fd00ecd3a", "MIT", {
        "dev/cuda/common.h": "cf73117df76f26ce", "dev/cuda/softmax_forward.cu": "5bc29aae3b655fbc"}),
]}


class SourceMissing(RuntimeError):
    """A corpus file is not in the cache (run benchmarks/timing_corpus/fetch.py first)."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def sources_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Where the cached sources are read from: ``explicit``, else $PTXLAB_CORPUS_SOURCES, else the in-repo pack (if
    fetch.py --pack made one), else ~/.cache/ptxlab/timing_corpus."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("PTXLAB_CORPUS_SOURCES")
    if env:
        return Path(env).expanduser()
    if PACK_DIR.is_dir() and any(PACK_DIR.iterdir()):
        return PACK_DIR
    return DEFAULT_CACHE


def cached_path(root: Path, src: Source, path: str) -> Path:
    return root / src.slug / src.commit / path


def read(key: str, path: str, root: Path | None = None) -> str:
    """The text of one pinned file, checked against its digest."""
    src = SOURCES[key]
    if path not in src.files:
        raise KeyError(f"{path!r} is not a file of source {key!r} ({src.repo}); add it to sources.SOURCES first")
    root = sources_dir(root)
    p = cached_path(root, src, path)
    if not p.is_file():
        raise SourceMissing(f"{src.repo}@{src.commit[:12]}:{path} is not in {root}; run "
                            "`python benchmarks/timing_corpus/fetch.py` (add --pack on a machine that will carry "
                            "the sources to a GPU), or point --sources / $PTXLAB_CORPUS_SOURCES at a fetched copy")
    data = p.read_bytes()
    if digest(data) != src.files[path]:
        raise SourceMissing(f"{p}: sha256 {digest(data)} does not match the pinned {src.files[path]}; "
                            "delete it and run fetch.py again")
    return data.decode()
