"""Put the driver layer in place for this process: build and load the stand-in ``libcuda.so.1``, connect its
trampolines to the call tables, and answer ``cuGetProcAddress`` (CUDA Driver API 6.3 "Driver Entry Point Access").

``cuGetProcAddress(name, cudaVersion, flags)`` returns the entry point a caller compiled against ``cudaVersion``
expects: ``VERSIONED`` lists names whose ABI changed (``cuCtxCreate`` became ``cuCtxCreate_v4`` in CUDA 12.5); a
name with a registered ``_v2`` handler gets it (the CUDA 3.2 64-bit ABI every current caller uses). Per-thread
default-stream variants (``flags`` bit 1) resolve to the same handlers: streams are ordered no-ops here.

``uninstall()`` undoes ``install()`` for the rest of the process (``lab.py time`` runs a script between the two): the
library stays loaded (a loaded ``libcuda.so.1`` cannot be taken back from callers holding its entry points) but its
entry points answer ``CUDA_ERROR_NOT_INITIALIZED`` with no callback, as with no driver: cuda-python, ``open_device``
("auto" / "cuda") and NVRTC / nvJitLink (which call ``cuInit`` of an already loaded driver) see no GPU; the
environment, ``cuda.bindings.runtime`` and torch are restored (``undo``, in reverse order).
"""
from __future__ import annotations

import ctypes
import threading
from typing import Dict, List, Optional

from ptxlab.driver import native
from ptxlab.driver.calls import HANDLERS, dispatch
from ptxlab.driver.state import DriverState

__all__ = ["install", "uninstall", "installed", "state", "VERSIONED"]

# name -> [(minimum cudaVersion, entry point)], newest first
VERSIONED = {
    "cuCtxCreate": [(12050, "cuCtxCreate_v4"), (3020, "cuCtxCreate_v2")],
}
_DIRECT = ("cuGetProcAddress", "cuGetProcAddress_v2", "cuDriverGetVersion", "cuInit")
# Looked up with dlsym() by NVIDIA libraries that find the driver already loaded: NVRTC and nvJitLink (CUDA 13)
# dlopen("libcuda.so.1"), call cuInit(0), and when it succeeds call dlsym(.., "cuGetExportTable") *without a NULL
# check*: a stand-in without this export crashed the next nvrtcCompileProgram in the process (SIGSEGV). It fails
# quietly (calls.QUIET: the driver's private export tables are not served) and they compile as with no driver.
_PROBED = ("cuGetExportTable",)

_lock = threading.Lock()
_current: Optional["_Installed"] = None


class _Installed:
    def __init__(self, device_factory=None) -> None:
        from ptxlab.driver import (api_device, api_launch, api_memory, api_module, api_occupancy,  # noqa: F401
                                   api_runtime, api_tensormap)
        from ptxlab.driver.api_runtime import RUNTIME_EXPORTS
        self.names: List[str] = sorted(set(HANDLERS) | set(RUNTIME_EXPORTS) | set(_DIRECT) | set(_PROBED))
        self.path = native.build(self.names)
        self.lib = native.load(self.path)
        self.state = DriverState(device_factory)
        self.state.resolver = self.resolve
        self.pool_base = ctypes.c_int.in_dll(self.lib, "ptxlab_pool_base").value
        self.pool = (ctypes.c_void_p * native.POOL_SLOTS).in_dll(self.lib, "ptxlab_pool")
        self.pool_names: Dict[str, int] = {}
        self.slot_names: List[str] = list(self.names)
        proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_uint64))
        self._cb = proto(self._dispatch)             # kept alive as long as the library may call it
        self.lib.ptxlab_driver_set_dispatch(self._cb)
        self.undo: List = [lambda: self.lib.ptxlab_driver_set_dispatch(None)]   # uninstall() runs these, last first
        from ptxlab.driver import cute_dsl
        self.dump_dir = cute_dsl.setup_env(self.path, self.undo)
        self.undo.append(cute_dsl.patch_cuda_runtime(self.state))
        cute_dsl.watch_dump_dirs()

    def _dispatch(self, slot: int, args) -> int:
        name = self.slot_names[slot] if slot < len(self.slot_names) else f"<slot {slot}>"
        return dispatch(self.state, name, args)

    def _address(self, name: str) -> int:
        return ctypes.cast(getattr(self.lib, name), ctypes.c_void_p).value

    def resolve(self, name: str, version: int, flags: int) -> int:
        """The address cuGetProcAddress returns for ``name``."""
        for min_ver, target in VERSIONED.get(name, []):
            if version >= min_ver:
                return self._address(target)
        if name + "_v2" in HANDLERS:
            return self._address(name + "_v2")
        if name in HANDLERS or name in self.names:
            return self._address(name)
        slot = self.pool_names.get(name)
        if slot is None:
            j = len(self.pool_names)
            if j >= native.POOL_SLOTS:
                raise RuntimeError("ptxlab driver layer: more distinct unimplemented entry points were requested "
                                   f"than the {native.POOL_SLOTS} pool slots")
            slot = self.pool_names[name] = self.pool_base + j
            self.slot_names.append(name)
            assert self.slot_names[slot] == name
        return self.pool[slot - self.pool_base]


def install(device_factory=None) -> "_Installed":
    """Install the layer once per process (later calls return the same one). ``device_factory`` (tests) makes the
    emulator device; default ``open_device("emu")`` at the first call that needs it."""
    global _current
    with _lock:
        if _current is None:
            import sys
            if "cutlass" in sys.modules:
                from ptxlab.driver.calls import report
                report("install() after `import cutlass`: the CuTe DSL may already have read its settings (its PTX "
                       "would not be kept for the emulator); install first, as `lab.py exec` does")
            _current = _Installed(device_factory)
        return _current


def uninstall() -> None:
    """Undo install() (module docstring); a no-op when the layer is not installed. A later install() starts afresh."""
    global _current
    with _lock:
        cur, _current = _current, None
    if cur is not None:
        for fn in reversed(cur.undo):
            fn()
        _RETIRED.append(cur)        # its ctypes callback stays alive: C may still hold the trampoline's target


_RETIRED: List["_Installed"] = []


def installed() -> bool:
    return _current is not None


def state() -> DriverState:
    """The process's driver state (install() first)."""
    if _current is None:
        raise RuntimeError("ptxlab.driver.install() was not called")
    return _current.state
