"""Toolchain: NVRTC / nvJitLink compilation, disk cache, resources, SASS via nvdisasm."""
from __future__ import annotations

from ptxlab.toolchain.compiler import compile, is_ptx_source  # noqa: A004
from ptxlab.toolchain.module import Module
from ptxlab.toolchain.paths import cache_dir, cutlass_include_dir, nvdisasm_path
from ptxlab.toolchain.resources import KernelResources
from ptxlab.toolchain import sass

__all__ = [
    "compile",
    "is_ptx_source",
    "Module",
    "KernelResources",
    "cache_dir",
    "cutlass_include_dir",
    "nvdisasm_path",
    "sass",
]
