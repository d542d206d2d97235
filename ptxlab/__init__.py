"""ptxlab: staged raw-PTX bring-up lab for Blackwell NVFP4 kernels, with a CPU PTX emulator.

Public API (imported lazily so the package imports even while parts are missing)::

    mod = ptxlab.compile(src, arch="sm_100a")
    dev = ptxlab.open_device("auto")   # "cuda" | "emu" | "auto"
"""
from __future__ import annotations

from typing import Any

from ptxlab.errors import (  # noqa: F401  (re-exported)
    CompileError,
    DeviceUnavailable,
    EmuError,
    LaunchError,
    PtxlabError,
    TensorMapError,
)

__version__ = "0.1.0"

__all__ = [
    "compile",
    "open_device",
    "PtxlabError",
    "CompileError",
    "TensorMapError",
    "LaunchError",
    "DeviceUnavailable",
    "EmuError",
]


# Subpackages reachable as attributes right after `import ptxlab` (e.g. ptxlab.toolchain.cutlass_include_dir()),
# imported on first access so `import ptxlab` stays cheap.
_SUBMODULES = ("toolchain", "device", "emu", "desc", "lab", "kernels", "production", "gpumode", "numerics", "scales",
               "tensormap", "debug", "errors", "progress")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"ptxlab.{name}")
    raise AttributeError(f"module 'ptxlab' has no attribute {name!r}")


def compile(source: str, arch: str = "sm_100a", name: str = "k.cu", options: Any = (), include_dirs: Any = ()) -> Any:  # noqa: A001
    """Compile CUDA C++ (NVRTC) or PTX text (nvJitLink) to a :class:`ptxlab.toolchain.Module`."""
    from ptxlab.toolchain.compiler import compile as _compile

    return _compile(source, arch=arch, name=name, options=options, include_dirs=include_dirs)


def open_device(kind: str = "auto", **kwargs: Any) -> Any:
    """Open a device backend: "cuda", "emu" or "auto" (implemented in :mod:`ptxlab.device`)."""
    try:
        from ptxlab.device import open_device as _open_device
    except ImportError as exc:
        raise DeviceUnavailable(
            f"ptxlab.open_device({kind!r}): ptxlab.device.open_device is not available ({exc}); "
            "the device layer (ptxlab/device/) is not installed or not written yet"
        ) from exc
    return _open_device(kind, **kwargs)
