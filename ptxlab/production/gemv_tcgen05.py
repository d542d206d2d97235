"""The fused tcgen05 NVFP4 GEMV for sm_100a: ``ptxlab/kernels/nvfp4_gemv_tcgen05.cu``, the very source that stages
D3 / E1 / E2 verify (they compile it through ``stages/D_mma/tile_pipeline.cu``), built from the shared blocks.

One CTA per 128-row tile and batch; the K loop runs through a 2-stage mbarrier pipeline with one
``tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16`` (128×16×64) per K chunk, SFs copied to TMEM with
``tcgen05.cp.32x128b.warpx4``, and the epilogue reads TMEM with ``tcgen05.ld.32x32b`` and stores fp16.  B is gpu-mode's
(128, K/2, L) tensor: the kernel uses its first 16 rows (N padded to 16); only column 0 is the GEMV result.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Dict, List

import numpy as np

__all__ = ["KERNEL_FILE", "KERNEL_NAME", "compile_gemv_tcgen05", "run_gemv_tcgen05", "graduation_report"]

KERNEL_FILE = "nvfp4_gemv_tcgen05.cu"
KERNEL_NAME = "tile_pipeline"
NB = 16
STAGE_SMEM = 2 * 22528 + 1024       # 2 pipeline stages of 22528 B + 1024 B alignment slack (see the .cu header)
STAGES_VERIFYING = ("D3", "E1", "E2")


@lru_cache(maxsize=None)
def compile_gemv_tcgen05() -> Any:
    """Compile for sm_100a with the epilogue on (NB=16, EPILOGUE=1, no accumulator dump)."""
    import ptxlab
    from ptxlab.kernels import KERNELS_DIR, read

    src = f"#define NB {NB}\n#define EPILOGUE 1\n#define DUMP_ACC 0\n" + read(KERNEL_FILE)
    return ptxlab.compile(src, arch="sm_100a", name=KERNEL_FILE, include_dirs=[KERNELS_DIR])


def graduation_report() -> Dict[str, List[str]]:
    """Which stages that verify this kernel, and which of its building blocks, are graduated on the current source."""
    from ptxlab.lab.state import graduated, graduated_blocks

    return {"stages": [s for s in STAGES_VERIFYING if graduated(s)],
            "blocks": sorted(graduated_blocks())}


def run_gemv_tcgen05(problem: Any, device: Any = "emu", poison: int = 0xA5) -> np.ndarray:
    """Run on a gpu-mode GEMV problem (n == 1, M % 128 == 0, K % 64 == 0); returns c (M, 1, L) fp16."""
    import ptxlab
    from ptxlab.scales import permuted_bytes

    p = problem
    if p.n != 1 or p.m % 128 or p.k % 64:
        raise ValueError(f"fused tcgen05 GEMV needs n=1, M % 128 == 0, K % 64 == 0; got n={p.n} M={p.m} K={p.k}")
    own = not hasattr(device, "launch")
    dev = ptxlab.open_device(device, arch="sm_100a") if own else device
    try:
        mod = compile_gemv_tcgen05()
        a = dev.to_device(np.ascontiguousarray(p.a.transpose(2, 0, 1)))
        b_host = np.ascontiguousarray(p.b.transpose(2, 0, 1))
        b = dev.to_device(b_host)
        sfa = dev.to_device(permuted_bytes(p.sfa_permuted))
        sfb = dev.to_device(permuted_bytes(p.sfb_permuted))
        acc = dev.empty(4)                      # unused with DUMP_ACC=0
        c = dev.empty(2 * p.l * p.m)
        dev.memset(c, poison)
        dev.launch(mod, KERNEL_NAME, grid=(p.m // 128, p.l, 1), block=(128, 1, 1),
                   args=[a, b, sfa, sfb, acc, c, np.uint32(p.m), np.uint32(p.k), np.uint32(b_host.shape[1]),
                         np.uint32(1)], shared_bytes=STAGE_SMEM)
        out = dev.to_host(c, np.float16, (p.l, p.m))
    finally:
        if own:
            dev.close()
    return out.transpose(1, 0)[:, None, :]
