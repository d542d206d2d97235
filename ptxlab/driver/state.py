"""What the driver layer remembers between calls: the emulated device, the current context, and the objects the
caller holds opaque handles to (modules, libraries, functions, kernels, streams, events, allocations).

Handles are integers in a per-kind range (``HANDLE_KINDS``), so a handle of one kind passed where another is
expected is caught (``CUDA_ERROR_INVALID_HANDLE`` naming both kinds). A ``CUkernel`` may stand in for a
``CUfunction`` (CUDA Driver API 6.13 "Library Management": kernels are accepted by the launch APIs).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from ptxlab.driver.calls import CUresult, DriverError

__all__ = ["DriverState", "Function", "HANDLE_KINDS"]

HANDLE_KINDS = {"context": 0x1C, "module": 0x1D, "library": 0x1E, "function": 0x1F, "kernel": 0x20,
                "stream": 0x21, "event": 0x22}
_SHIFT = 40


@dataclass
class Function:
    """A kernel entry of a loaded image (CUfunction or CUkernel): its attributes as set by the caller."""

    image: Any
    name: str
    attrs: Dict[int, int] = field(default_factory=dict)


class DriverState:
    """One per process (``ptxlab.driver.install`` creates it)."""

    # calls refused after a kernel fault (the context is lost, as on hardware)
    STICKY_CALLS = frozenset({"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
                              "cuCtxSynchronize", "cuStreamSynchronize", "cuStreamSynchronize_ptsz",
                              "_cudaLaunchKernelEx", "_cudaDeviceSynchronize", "_cudaStreamSynchronize"})

    def __init__(self, device_factory=None) -> None:
        self._device_factory = device_factory
        self._dev = None
        self.initialized = False
        self.current_ctx: Optional[int] = None
        self.primary_ctx: Optional[int] = None
        self.objects: Dict[int, Any] = {}
        self._next: Dict[str, int] = {k: 1 for k in HANDLE_KINDS}
        self.buffers: Dict[int, Any] = {}       # device pointer -> DeviceBuffer
        self.sticky: Optional[int] = None
        self.faults: list = []
        self.last_error: Optional[str] = None
        self.unimplemented: Dict[str, int] = {}  # calls made that no table serves -> count
        self.launches = 0
        self.launch_hooks: list = []             # (before, after) callables around every launch (torch_cuda.py)
        self.capture: Optional[list] = None      # launches recorded during a graph capture (torch_cuda.CUDAGraph)
        self.last_launch = None                 # (kernel name, [bytes of each parameter]) of the latest launch

    # ------------------------------------------------------------------ device
    @property
    def dev(self):
        """The emulator device (``open_device("emu")``, so PTXLAB_TIMING / PTXLAB_EMU_* apply), opened lazily."""
        if self._dev is None:
            if self._device_factory is not None:
                self._dev = self._device_factory()
            else:
                from ptxlab.device import open_device
                self._dev = open_device("emu")
        return self._dev

    # ------------------------------------------------------------------ handles
    def new_handle(self, kind: str, obj: Any) -> int:
        n = self._next[kind]
        self._next[kind] = n + 1
        h = (HANDLE_KINDS[kind] << _SHIFT) | (n << 4)
        self.objects[h] = obj
        return h

    def get(self, handle: int, *kinds: str, what: str = "handle") -> Any:
        """The object behind ``handle``, which must be of one of ``kinds``."""
        tag = handle >> _SHIFT
        names = {v: k for k, v in HANDLE_KINDS.items()}
        if handle not in self.objects or names.get(tag) not in kinds:
            got = f"a {names[tag]} handle" if tag in names and handle in self.objects else \
                f"0x{handle:x}, which no call of this layer returned (or it was released)"
            raise DriverError(CUresult.INVALID_HANDLE, f"{what}: expected a {' or '.join(kinds)} handle, got {got}")
        return self.objects[handle]

    def release(self, handle: int, *kinds: str, what: str = "handle") -> Any:
        obj = self.get(handle, *kinds, what=what)
        del self.objects[handle]
        return obj

    def need_stream(self, handle: int, what: str) -> None:
        """``handle`` is a stream: NULL (0), ``CU_STREAM_LEGACY`` (1), ``CU_STREAM_PER_THREAD`` (2) or one that
        ``cuStreamCreate`` returned and was not destroyed (CUDA Driver API, "Stream synchronization behavior")."""
        if handle not in (0, 1, 2):
            self.get(handle, "stream", what=what)

    # ------------------------------------------------------------------ context
    def need_init(self, name: str) -> None:
        if not self.initialized:
            raise DriverError(CUresult.NOT_INITIALIZED, f"{name}: cuInit(0) was not called yet")

    def need_context(self, name: str) -> None:
        self.need_init(name)
        if self.current_ctx is None:
            raise DriverError(CUresult.INVALID_CONTEXT, f"{name}: no current context; call cuCtxCreate or "
                                                        "cuDevicePrimaryCtxRetain + cuCtxSetCurrent first")

    def ensure_primary(self) -> int:
        """The runtime API's implicit initialisation: cuInit, retain the primary context, make it current."""
        self.initialized = True
        if self.primary_ctx is None:
            self.primary_ctx = self.new_handle("context", {"device": 0, "primary": True})
        if self.current_ctx is None:
            self.current_ctx = self.primary_ctx
        return self.primary_ctx

    # ------------------------------------------------------------------ faults
    def record_fault(self, err) -> None:
        """A kernel faulted on the emulator: report it now (as ``lab.py`` does) and make the context sticky."""
        self.faults.append(err)
        self.sticky = CUresult.LAUNCH_FAILED
        self.last_error = str(err)
        print(f"ptxlab driver: the emulator stopped a kernel:\n{err}", file=sys.stderr, flush=True)

    def now_ms(self) -> float:
        return time.perf_counter() * 1e3
