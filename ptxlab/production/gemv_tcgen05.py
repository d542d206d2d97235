"""The fused tcgen05 NVFP4 GEMV for sm_100a: ``ptxlab/kernels/nvfp4_gemv_tcgen05.cu``, the very source that stages
D3 / E1 / E2 verify (they compile it through ``stages/D_mma/tile_pipeline.cu`` and launch it with
:func:`launch_tile_pipeline`), built from the shared blocks.

One CTA per 128-row tile and batch; operands arrive by TMA (``cp.async.bulk.tensor`` + mbarrier expect_tx /
complete_tx, ``blocks/tma.cuh``) into a ``STAGES``-deep SMEM ring, one
``tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16`` (128×16×64) per K chunk, SFs copied to TMEM with
``tcgen05.cp.32x128b.warpx4``, and the epilogue reads TMEM with ``tcgen05.ld.32x32b`` and stores fp16.  B is
gpu-mode's (128, K/2, L) tensor: the kernel uses its first 16 rows (N padded to 16); only column 0 is the GEMV result.

Tensor maps (the GEMM's, from ``submission_gemm.tensor_map_params`` as ``ptxlab/production/gemm.py`` builds them,
with N = b's rows and tile N = 16):

* a, b: physical (L, rows, K/2) bytes -> 3-D UINT8 maps {K/2, rows, L}, box {128 B, 128 | NB rows, 1}, SWIZZLE_128B;
* sfa, sfb: the permuted SF tensors' memory (L, rest, K/64, 32, 4, 4) -> 2-D UINT8 maps {128 B, bytes/128 rows},
  box {128, 16} (4 consecutive 512-B SF blocks), no swizzle.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Dict, List, Optional

import numpy as np

__all__ = ["KERNEL_FILE", "KERNEL_NAME", "STAGES", "BLOCKS_USED", "compile_gemv_tcgen05", "run_gemv_tcgen05", "graduation_report",
           "stage_bytes", "tx_bytes", "shared_bytes", "check_shape", "make_tensor_maps", "launch_tile_pipeline"]

KERNEL_FILE = "nvfp4_gemv_tcgen05.cu"
KERNEL_NAME = "tile_pipeline"
NB = 16
STAGES = 4                          # TMA ring depth (the kernel's -DSTAGES; its default is the same)
BM = 128
BK_BYTES = 128                      # one 128-B swizzle row of K = 256 fp4 per pipeline stage
STAGES_VERIFYING = ("D3", "E1", "E2")
BLOCKS_USED = ("common.cuh", "mbarrier.cuh", "tma.cuh", "tmem.cuh", "scales.cuh", "mma.cuh", "epilogue.cuh")


def stage_bytes() -> int:
    """SMEM bytes of one ring slot: A 128x128 B | B 2048 B (16 rows) | SFA 2048 B | SFB 2048 B (see the .cu header);
    the slot holds exactly what the 4 boxes of a full stage deliver."""
    return tx_bytes(NB)


def tx_bytes(nb: int = NB) -> int:
    """Bytes the 4 TMA boxes of a stage deliver (the kernel's compile-time expect_tx, TX_BYTES)."""
    return BM * BK_BYTES + nb * BK_BYTES + 2 * 2048


def shared_bytes(stages: int = STAGES) -> int:
    return stages * stage_bytes() + 1024  # + slack to round the dynamic SMEM base up to 1024 B


def check_shape(m: int, k: int, l: int, b_rows: int, nb: int = NB) -> None:
    if min(m, k, l) <= 0:
        raise ValueError(f"fused tcgen05 GEMV: sizes must be positive, got M={m} K={k} L={l}")
    if m % BM or k % 64:
        raise ValueError(f"fused tcgen05 GEMV needs M % 128 == 0, K % 64 == 0; got M={m} K={k}")
    if b_rows < nb:
        raise ValueError(f"fused tcgen05 GEMV: b has {b_rows} rows, the MMA reads {nb}")
    if m // BM > 2**31 - 1 or l > 65535:
        raise ValueError(f"fused tcgen05 GEMV: grid ({m // BM}, {l}) too large")


@lru_cache(maxsize=None)
def compile_gemv_tcgen05(stages: int = STAGES, wait_probes: int = 0) -> Any:
    """Compile for sm_100a with the epilogue on (NB=16, EPILOGUE=1, no accumulator dump), a `stages`-deep TMA ring.
    wait_probes > 0: every mbarrier wait traps after that many failed try_wait probes (hardware bring-up)."""
    import ptxlab
    from ptxlab.kernels import KERNELS_DIR, read

    if not 2 <= stages <= 10:
        raise ValueError(f"fused tcgen05 GEMV: stages={stages}: 2..10 ring slots (SMEM)")
    if not 0 <= int(wait_probes) < 2**32:
        raise ValueError("fused tcgen05 GEMV: wait_probes must fit in 32 bits")
    pre = f"#define NB {NB}\n#define STAGES {int(stages)}\n#define EPILOGUE 1\n#define DUMP_ACC 0\n"
    if wait_probes:
        pre += f"#define PTXLAB_WAIT_PROBES {int(wait_probes)}u\n"
    return ptxlab.compile(pre + read(KERNEL_FILE), arch="sm_100a", name=KERNEL_FILE, include_dirs=[KERNELS_DIR])


def graduation_report() -> Dict[str, List[str]]:
    """Which stages that verify this kernel, and which of its building blocks, are graduated on the current source."""
    from ptxlab.lab.state import graduated, graduated_blocks

    return {"stages": [s for s in STAGES_VERIFYING if graduated(s)],
            "blocks": sorted(graduated_blocks())}


def make_tensor_maps(dev: Any, a: Any, b: Any, sfa: Any, sfb: Any, m: int, k: int, l: int, b_rows: int,
                     nb: int = NB) -> List[Any]:
    """The kernel's 4 tensor maps over device buffers a (L, M, K/2), b (L, b_rows, K/2) and the permuted SF memory
    (``ptxlab.scales.permuted_bytes``) of sfa / sfb; checks that their boxes deliver tx_bytes(nb) per stage.
    The parameters come from the GEMM's single source of truth, ``submission_gemm.tensor_map_params``, with
    N = b_rows and the tile N = nb (B box {128, nb, 1})."""
    from ptxlab.production.plan_gemm import tensor_map_params

    prm = tensor_map_params(m, b_rows, k, l, nb)
    maps = [dev.tensor_map(buf, **prm[name]) for name, buf in (("a", a), ("b", b), ("sfa", sfa), ("sfb", sfb))]
    tx = sum(t.spec.box_bytes for t in maps)
    if tx != tx_bytes(nb):  # the kernel's compile-time expect_tx must equal what the boxes deliver
        raise AssertionError(f"fused tcgen05 GEMV: tensor-map boxes deliver {tx} B per stage, kernel expects "
                             f"{tx_bytes(nb)}")
    return maps


def launch_tile_pipeline(dev: Any, mod: Any, a: Any, b: Any, sfa: Any, sfb: Any, acc: Any, c: Any, m: int, k: int,
                         l: int, b_rows: int, nc: int, nb: int = NB, stages: int = STAGES,
                         report: Optional[Dict[str, Any]] = None) -> None:
    """Launch `tile_pipeline` of `mod` (compiled with NB=nb, STAGES=stages) on device buffers: a (L, M, K/2) and
    b (L, b_rows, K/2) bytes, sfa / sfb permuted SF memory, acc (L, M, nb) u32 dump (used with DUMP_ACC=1) and
    c (L, M, nc) fp16. `report` (a dict) receives grid, shared_bytes, tx_bytes, stages."""
    check_shape(m, k, l, b_rows, nb)
    maps = make_tensor_maps(dev, a, b, sfa, sfb, m, k, l, b_rows, nb)
    grid = (m // BM, l, 1)
    smem = shared_bytes(stages)
    dev.launch(mod, KERNEL_NAME, grid=grid, block=(128, 1, 1),
               args=[*maps, acc, c, np.uint32(m), np.uint32(k), np.uint32(b_rows), np.uint32(nc)],
               shared_bytes=smem)
    if report is not None:
        report.update(grid=grid, shared_bytes=smem, tx_bytes=tx_bytes(nb), stages=stages)


def run_gemv_tcgen05(problem: Any, device: Any = "emu", poison: int = 0xA5, stages: int = STAGES,
                     report: Optional[Dict[str, Any]] = None, wait_probes: int = 0) -> np.ndarray:
    """Run on a gpu-mode GEMV problem (n == 1, M % 128 == 0, K % 64 == 0); returns c (M, 1, L) fp16.
    stages: TMA ring depth; wait_probes: see compile_gemv_tcgen05; report: see launch_tile_pipeline."""
    import ptxlab
    from ptxlab.scales import permuted_bytes

    p = problem
    if p.n != 1 or p.m % 128 or p.k % 64:
        raise ValueError(f"fused tcgen05 GEMV needs n=1, M % 128 == 0, K % 64 == 0; got n={p.n} M={p.m} K={p.k}")
    own = not hasattr(device, "launch")
    dev = ptxlab.open_device(device, arch="sm_100a") if own else device
    try:
        mod = compile_gemv_tcgen05(stages, wait_probes)
        a = dev.to_device(np.ascontiguousarray(p.a.transpose(2, 0, 1)))
        b_host = np.ascontiguousarray(p.b.transpose(2, 0, 1))
        b = dev.to_device(b_host)
        sfa = dev.to_device(permuted_bytes(p.sfa_permuted))
        sfb = dev.to_device(permuted_bytes(p.sfb_permuted))
        acc = dev.empty(4)                      # unused with DUMP_ACC=0
        c = dev.empty(2 * p.l * p.m)
        dev.memset(c, poison)
        launch_tile_pipeline(dev, mod, a, b, sfa, sfb, acc, c, p.m, p.k, p.l, b_host.shape[1], 1, stages=stages,
                             report=report)
        out = dev.to_host(c, np.float16, (p.l, p.m))
        if not own:     # a caller's device lives on: give the buffers back (as run_gemv does)
            for buf in (a, b, sfa, sfb, acc, c):
                dev.free(buf)
    finally:
        if own:
            dev.close()
    return out.transpose(1, 0)[:, None, :]
