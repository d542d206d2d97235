"""Device code shipped with ptxlab: the building blocks shared by the stages and the production kernels
(``blocks/*.cuh``: TMA load, TMEM alloc, scale copy, MMA issue, epilogue) and the production kernels themselves.

Stage and production sources ``#include "blocks/<name>.cuh"`` and compile with ``include_dirs=[KERNELS_DIR]``, so a
graduated stage and the production kernel use exactly the same verified code.
"""
from pathlib import Path

KERNELS_DIR = Path(__file__).resolve().parent
BLOCKS_DIR = KERNELS_DIR / "blocks"


def read(name: str) -> str:
    """Source text of a kernel file in this package (e.g. ``read("nvfp4_gemv_cudacore.cu")``)."""
    return (KERNELS_DIR / name).read_text()
