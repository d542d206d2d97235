"""Host wrappers for the CUDA-core NVFP4 GEMV (``ptxlab/kernels/nvfp4_gemv_cudacore.cu``) on ptxlab devices.

``run_gemv(problem, device="emu")`` runs one gpu-mode GEMV problem (numpy, :class:`ptxlab.gpumode.NvFp4Problem`) on a
ptxlab device (emulator or cuda) and returns c (M, 1, L) fp16; the output buffer is poisoned (0xFF = NaN) first, so a
row the kernel does not write shows up as NaN.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

import numpy as np

from ptxlab.production.host_io import physical
# config tuples (rows_per_warp, warps, unroll, ksplit, prefetch) and the per-shape choice live in plan_gemv.py, which
# the self-contained gpu-mode adapter imports too (the exporter inlines it there): one definition for both
from ptxlab.production.plan_gemv import (CONFIG_NAMES, DEFAULT_CONFIG, config_defines, fits, full_config, is_flat,
                                         launch_plan, pick_config)

__all__ = ["KERNEL_FILE", "KERNEL_NAME", "ROWS_PER_CTA", "THREADS", "kernel_source", "compile_gemv", "check_shape",
           "launch_geometry", "launch_gemv", "run_gemv", "CONFIG_NAMES", "DEFAULT_CONFIG", "pick_config"]

KERNEL_FILE = "nvfp4_gemv_cudacore.cu"
KERNEL_NAME = "nvfp4_gemv_cudacore"
ROWS_PER_WARP = 4  # must match the .cu defaults (GEMV_ROWS_PER_WARP, GEMV_WARPS)
WARPS = 2
ROWS_PER_CTA = ROWS_PER_WARP * WARPS
THREADS = 32 * WARPS
GEMV_N_PADDED = 128  # rows of gpu-mode's b / sfb


def kernel_source() -> str:
    from ptxlab.kernels import read

    return read(KERNEL_FILE)


def config_source(config: Optional[tuple] = None) -> str:
    """Kernel text, with #defines selecting config (see submission_gemv.full_config; None or the default config: the
    text as it is)."""
    if config is None or full_config(config) == DEFAULT_CONFIG:
        return kernel_source()
    return config_defines(config) + kernel_source()


def compile_gemv(arch: str = "sm_90a", config: Optional[tuple] = None) -> Any:
    """ptxlab.compile the GEMV for arch ("sm_90a" or "sm_100a"), optionally with a (rows_per_warp, warps, unroll[,
    ksplit[, prefetch]]) config; cached per process."""
    return _compile(arch, None if config is None or full_config(config) == DEFAULT_CONFIG else full_config(config))


@lru_cache(maxsize=None)
def _compile(arch: str, config: Optional[tuple]) -> Any:
    import ptxlab
    from ptxlab.kernels import KERNELS_DIR

    return ptxlab.compile(config_source(config), arch=arch, name=KERNEL_FILE, include_dirs=[KERNELS_DIR])


def check_shape(m: int, k: int, l: int) -> None:
    """The kernel's requirements: positive sizes, K % 32 == 0 (16-byte chunks of a row; gpu-mode guarantees K % 64)."""
    if min(m, k, l) <= 0:
        raise ValueError(f"nvfp4 GEMV: sizes must be positive, got M={m} K={k} L={l}")
    if k % 32:
        raise ValueError(f"nvfp4 GEMV: K={k} must be a multiple of 32 (the kernel reads 16-byte chunks of fp4x2)")
    if l > 65535:
        raise ValueError(f"nvfp4 GEMV: L={l} exceeds gridDim.y (65535)")


def launch_geometry(m: int, l: int, config: Optional[tuple] = None,
                    k: Optional[int] = None) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(grid, block) for M rows and L batches (default config, or a (rows_per_warp, warps, unroll[, ksplit, ...]) one):
    a CTA of `warps` warps covers rows_per_warp * warps / ksplit rows. The flat variant needs k (its grid is
    persistent, sized for a 132-SM GPU; see submission_gemv.launch_plan)."""
    if k is None and is_flat(config):
        raise ValueError(f"nvfp4 GEMV launch_geometry: the flat variant {full_config(config)} sizes its grid from K "
                         "(rows per round = 32 * warps / (K/32) * rows_per_round); pass k=")
    grid, block, _ = launch_plan(m, 0 if k is None else k, l, config)
    return grid, block


def launch_gemv(dev: Any, mod: Any, a: Any, b: Any, sfa: Any, sfb: Any, c: Any, m: int, k: int, l: int,
                config: Optional[tuple] = None, sms: int = 132) -> None:
    """Launch on ptxlab DeviceBuffers holding the physical (L, rows, cols) bytes of a, b, sfa, sfb and c (L, M) fp16;
    sms: the SM count the flat variant's persistent grid is sized for (148 on a B200)."""
    check_shape(m, k, l)
    need = {"a": (a, l * m * k // 2), "b": (b, l * GEMV_N_PADDED * k // 2), "sfa": (sfa, l * m * k // 16),
            "sfb": (sfb, l * GEMV_N_PADDED * k // 16), "c": (c, l * m * 2)}
    for name, (buf, n) in need.items():
        if buf.nbytes < n:
            raise ValueError(f"nvfp4 GEMV: buffer {name} holds {buf.nbytes} bytes, needs {n} for M={m} K={k} L={l}")
    if not fits(config, m, k):
        raise ValueError(f"nvfp4 GEMV: config {full_config(config)} cannot run M={m} K={k}")
    grid, block, smem = launch_plan(m, k, l, config, sms=sms)
    dev.launch(mod, KERNEL_NAME, grid=grid, block=block, shared_bytes=smem,
               args=[a, b, sfa, sfb, c, np.int32(m), np.int32(k), np.int32(l)])


def run_gemv(problem: Any, device: Any = "emu", arch: str = "sm_90a", poison: int = 0xFF,
             module: Optional[Any] = None, config: Optional[tuple] = None, sms: int = 132) -> np.ndarray:
    """Run the GEMV on a gpu-mode problem (NvFp4Problem, n == 1); returns c as a new (M, 1, L) fp16 array with
    gpu-mode's memory order. device: a ptxlab Device or a kind for ptxlab.open_device; module: an already compiled
    module of the kernel (default: compile_gemv(arch, config)); config: (rows_per_warp, warps, unroll[, ksplit[,
    prefetch]]), default pick_config(M, K, L) (the tuned config of a gpu-mode benchmark shape, else the default);
    a module passed in must have been compiled for that config; sms: as launch_gemv."""
    import ptxlab

    p = problem
    if p.n != 1:
        raise ValueError(f"run_gemv: problem has n={p.n}, expected a GEMV problem (n=1)")
    m, k, l = p.m, p.k, p.l
    check_shape(m, k, l)
    if config is None:
        config = pick_config(m, k, l, arch)
    own = not hasattr(device, "launch")
    dev = ptxlab.open_device(device) if own else device
    try:
        mod = compile_gemv(arch, config) if module is None else module
        bufs = [dev.to_device(physical(x)) for x in (p.a, p.b, p.sfa, p.sfb)]
        c = dev.empty(l * m * 2)
        dev.memset(c, poison)
        launch_gemv(dev, mod, *bufs, c, m, k, l, config, sms=sms)
        out = dev.to_host(c, np.float16, (l, m))
        for buf in bufs + [c]:
            dev.free(buf)
    finally:
        if own:
            dev.close()
    return out.transpose(1, 0)[:, None, :]
