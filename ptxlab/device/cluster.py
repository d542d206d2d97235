"""Thread-block cluster launch rules, shared by the cuda and emu backends (so both refuse the same launches alike).

A cluster launch (CUDA Programming Guide "Thread Block Clusters"; PTX ISA 2.2.2 cluster of CTAs, 11.7 cluster
dimension directives) is described by:

* ``dev.launch(..., cluster=(cx, cy, cz))``: the launch-time cluster shape (``cuLaunchKernelEx`` with
  ``CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION``);
* the kernel's PTX directives ``.reqnctapercluster X, Y, Z`` (compile-time shape, CUDA ``__cluster_dims__``),
  ``.explicitcluster`` (the kernel must be launched as a cluster) and ``.maxclusterrank N`` (at most N CTAs per
  cluster).

Rules (each raises :class:`LaunchError` naming the kernel):

* every grid dimension must be a multiple of the cluster dimension (hardware: ``CUDA_ERROR_INVALID_CLUSTER_SIZE``);
* more than 8 CTAs per cluster (the portable maximum) needs ``non_portable_cluster=True`` (the driver's
  ``CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED``); more than 16 is refused outright (no GPU supports it);
* a kernel with ``.reqnctapercluster`` launched without ``cluster=`` gets that shape (as the CUDA runtime does);
  a different ``cluster=`` is an error;
* ``.explicitcluster`` without any cluster shape is an error; ``.maxclusterrank N`` bounds the cluster size.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from ptxlab.errors import LaunchError

__all__ = ["ClusterLaunch", "PORTABLE_CLUSTER_SIZE", "MAX_CLUSTER_SIZE", "kernel_cluster_directives",
           "resolve_cluster"]

PORTABLE_CLUSTER_SIZE = 8
MAX_CLUSTER_SIZE = 16


@dataclass(frozen=True)
class ClusterLaunch:
    """A resolved cluster launch: ``dims`` (cx, cy, cz), whether the shape came from the kernel (``compile_time``),
    and the non-portable opt-in.  ``explicit`` is %is_explicit_cluster (always True for a cluster launch)."""

    dims: tuple
    compile_time: bool = False
    non_portable: bool = False
    explicit: bool = True

    @property
    def size(self) -> int:
        return self.dims[0] * self.dims[1] * self.dims[2]


def _entry_tail(ptx: str, kernel: str) -> str:
    """The directive text between ``.entry kernel(...)`` and its body's ``{``."""
    text = re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", " ", ptx, flags=re.S))
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\b", text)
    if not m:
        return ""
    i = m.end()
    if text[i:].lstrip().startswith("("):
        depth = 0
        j = text.index("(", i)
        for j in range(j, len(text)):
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
        i = j + 1
    end = text.find("{", i)
    return text[i:end if end >= 0 else len(text)]


def kernel_cluster_directives(ptx: str, kernel: str) -> dict:
    """``{'reqnctapercluster': (x, y, z) | None, 'explicitcluster': bool, 'maxclusterrank': int | None}``."""
    tail = _entry_tail(ptx or "", kernel)
    out: dict = {"reqnctapercluster": None, "explicitcluster": False, "maxclusterrank": None}
    m = re.search(r"\.reqnctapercluster\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", tail)
    if m:
        out["reqnctapercluster"] = tuple(int(g) if g else 1 for g in m.groups())
    out["explicitcluster"] = bool(re.search(r"\.explicitcluster\b", tail))
    m = re.search(r"\.maxclusterrank\s+(\d+)", tail)
    if m:
        out["maxclusterrank"] = int(m.group(1))
    return out


def _dim3(v: Union[int, Sequence[int]], kernel: str) -> tuple:
    t = (int(v),) if isinstance(v, int) else tuple(int(x) for x in v)
    if not 1 <= len(t) <= 3:
        raise LaunchError(f"kernel {kernel!r}: cluster {v!r} must be an int or 1..3 ints")
    t = t + (1,) * (3 - len(t))
    if any(x < 1 for x in t):
        raise LaunchError(f"kernel {kernel!r}: cluster {t} dimensions must be >= 1")
    return t


def resolve_cluster(kernel: str, grid: tuple, cluster, non_portable: bool, directives: dict) \
        -> Optional[ClusterLaunch]:
    """Apply the rules above; None means an ordinary launch (every CTA is its own implicit 1x1x1 cluster)."""
    req = directives.get("reqnctapercluster")
    c = _dim3(cluster, kernel) if cluster is not None else None
    if req is not None:
        if c is not None and c != tuple(req):
            raise LaunchError(f"kernel {kernel!r}: cluster={c} differs from the kernel's .reqnctapercluster "
                              f"{tuple(req)} (__cluster_dims__); launch with cluster={tuple(req)} or without cluster=")
        c = tuple(req)
    if c is None:
        if directives.get("explicitcluster"):
            raise LaunchError(f"kernel {kernel!r} is declared .explicitcluster (it must run as a cluster) but was "
                              f"launched without cluster=; pass cluster=(cx, cy, cz)")
        if non_portable:
            raise LaunchError(f"kernel {kernel!r}: non_portable_cluster=True needs cluster=")
        return None
    size = c[0] * c[1] * c[2]
    for i in range(3):
        if grid[i] % c[i]:
            raise LaunchError(f"kernel {kernel!r}: grid {tuple(grid)} is not divisible by the cluster shape {c} "
                              f"(dimension {'xyz'[i]}: {grid[i]} % {c[i]} != 0); every grid dimension must be a "
                              f"multiple of the cluster dimension")
    mcr = directives.get("maxclusterrank")
    if mcr is not None and size > mcr:
        raise LaunchError(f"kernel {kernel!r}: cluster {c} has {size} CTAs, more than the kernel's "
                          f".maxclusterrank {mcr}")
    if size > MAX_CLUSTER_SIZE:
        raise LaunchError(f"kernel {kernel!r}: cluster {c} has {size} CTAs; no GPU runs clusters of more than "
                          f"{MAX_CLUSTER_SIZE} CTAs")
    if size > PORTABLE_CLUSTER_SIZE and not non_portable:
        raise LaunchError(f"kernel {kernel!r}: cluster {c} has {size} CTAs, more than the portable maximum of "
                          f"{PORTABLE_CLUSTER_SIZE}; pass non_portable_cluster=True to opt in (the driver's "
                          f"CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED; H100 allows up to 16)")
    return ClusterLaunch(dims=c, compile_time=req is not None, non_portable=bool(non_portable))
