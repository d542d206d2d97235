"""Host-side tensor handling shared by the production wrappers (``gemm.py``: 1sm / 2sm GEMM, ``gemm_cluster.py``:
cluster GEMM, ``gemv.py``: CUDA-core GEMV).

One module they all import, so no wrapper imports another for these: gpu-mode's tensors as the kernels read them
(a, b: (L, rows, K/2) bytes; the permuted scale tensors' memory, ``ptxlab.scales.permuted_bytes``), the poison
byte c is filled with before a launch (0xFF bytes = fp16 NaN, so an element the kernel misses shows up), and
best-effort freeing of device buffers.
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ptxlab.scales import permuted_bytes

__all__ = ["POISON", "physical", "sf_physical", "free_all"]

POISON = 0xFF


def physical(x: np.ndarray) -> np.ndarray:
    """(rows, cols, L) gpu-mode view -> its (L, rows, cols) bytes, contiguous."""
    return np.ascontiguousarray(np.asarray(x).transpose(2, 0, 1))


def sf_physical(sf_perm: np.ndarray) -> np.ndarray:
    """gpu-mode (32, 4, rest_m, 4, rest_k, L) permuted SF -> its memory (L, rest_m, rest_k, 32, 4, 4), flat bytes."""
    return permuted_bytes(sf_perm)


def free_all(dev: Any, bufs: Iterable[Any]) -> None:
    """Free device buffers, best effort (cleanup after a launch that may have failed)."""
    for buf in bufs:
        try:
            dev.free(buf)
        except Exception:
            pass
