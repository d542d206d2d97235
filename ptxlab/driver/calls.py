"""The call table of the driver layer: which Python handler serves each CUDA entry point, how its raw arguments
are read, and how a handler's outcome becomes a ``CUresult`` (CUDA Driver API reference, "Error Handling").

A handler is registered with ``@call("cuMemAlloc_v2", "cuMemAlloc")`` and receives ``(state, a)``: ``a[i]`` is the
i-th argument as an unsigned 64-bit integer, with helpers to read C strings and to store results through output
pointers. It returns nothing on success or raises :class:`DriverError` with a CUresult and one line of text.
``PTXLAB_DRIVER_TRACE=1`` prints every call's name (``=stack``: also the Python stack of calls no table implements).
Emulator faults (:class:`ptxlab.errors.EmuError`) are reported once on stderr, as ``lab.py`` reports them, and
become ``CUDA_ERROR_LAUNCH_FAILED``; any other exception is a bug of the layer and becomes ``CUDA_ERROR_UNKNOWN``
with its traceback. A call no table implements fails with ``CUDA_ERROR_NOT_SUPPORTED`` and one line naming it (the
first time; ``state.unimplemented`` counts them).
"""
from __future__ import annotations

import ctypes
import os
import sys
import traceback
from typing import Callable, Dict

from ptxlab.errors import EmuError, PtxlabError

__all__ = ["CUresult", "DriverError", "Args", "call", "HANDLERS", "dispatch", "report"]


class CUresult:
    """The CUresult / cudaError_t codes the layer returns (the two enums share these values)."""

    SUCCESS = 0
    INVALID_VALUE = 1
    OUT_OF_MEMORY = 2
    NOT_INITIALIZED = 3
    INVALID_IMAGE = 200
    NO_BINARY_FOR_GPU = 209
    INVALID_CONTEXT = 201
    INVALID_HANDLE = 400
    NOT_FOUND = 500
    NOT_READY = 600
    ILLEGAL_ADDRESS = 700
    LAUNCH_FAILED = 719
    NOT_SUPPORTED = 801
    UNKNOWN = 999


class DriverError(Exception):
    """A call fails with ``code``; ``text`` (one line: what, where, what to do) goes to stderr when ``loud``."""

    def __init__(self, code: int, text: str, loud: bool = True) -> None:
        super().__init__(text)
        self.code, self.text, self.loud = code, text, loud


class Args:
    """The raw arguments of one call, with typed access."""

    __slots__ = ("name", "v")

    def __init__(self, name: str, v) -> None:
        self.name, self.v = name, v

    def __getitem__(self, i: int) -> int:
        return int(self.v[i])

    def i32(self, i: int) -> int:
        x = int(self.v[i]) & 0xFFFFFFFF
        return x - (1 << 32) if x & 0x80000000 else x

    def u32(self, i: int) -> int:
        return int(self.v[i]) & 0xFFFFFFFF

    def cstr(self, i: int) -> str:
        p = self[i]
        if not p:
            raise DriverError(CUresult.INVALID_VALUE, f"{self.name}: argument {i} is a NULL string")
        return ctypes.string_at(p).decode("utf-8", "replace")

    def out(self, i: int, value: int, ctype=ctypes.c_uint64) -> None:
        """Store ``value`` through the output pointer argument i (NULL -> CUDA_ERROR_INVALID_VALUE)."""
        p = self[i]
        if not p:
            raise DriverError(CUresult.INVALID_VALUE, f"{self.name}: output argument {i} is NULL")
        ctype.from_address(p).value = value


# Entry points probed during the CUDA runtime's lazy initialisation (cuda.bindings.runtime links it statically): its
# private export tables are not served; the runtime function that needed them fails with its own error code, and
# the ones the CuTe DSL calls are replaced (cute_dsl.RUNTIME_PATCHES). No line for these.
QUIET = frozenset({"cuGetExportTable"})

Handler = Callable[..., None]
HANDLERS: Dict[str, Handler] = {}


def call(*names: str) -> Callable[[Handler], Handler]:
    """Register a handler for one or more entry-point names (a versioned name and its unversioned alias)."""
    def deco(fn: Handler) -> Handler:
        for n in names:
            if n in HANDLERS:
                raise RuntimeError(f"driver call {n} registered twice")
            HANDLERS[n] = fn
        return fn
    return deco


def report(text: str) -> None:
    """One line on stderr, prefixed so it is found among the script's own output."""
    print(f"ptxlab driver: {text}", file=sys.stderr, flush=True)


def dispatch(state, name: str, raw) -> int:
    """Run the handler of ``name``; never raises (the caller is C)."""
    fn = HANDLERS.get(name)
    a = Args(name, raw)
    trace = os.environ.get("PTXLAB_DRIVER_TRACE", "")
    if trace:
        report(f"call {name}" + ("" if fn else " (not implemented)"))
        if trace == "stack" and fn is None:
            traceback.print_stack(limit=12)
    try:
        if fn is None:
            first = name not in state.unimplemented
            state.unimplemented[name] = state.unimplemented.get(name, 0) + 1
            raise DriverError(CUresult.NOT_SUPPORTED,
                              f"{name} is not implemented by ptxlab's driver layer (ptxlab/driver); the emulator "
                              "serves the calls listed in ptx_docs/cute_dsl.md (reported once per process)",
                              loud=first and name not in QUIET)
        if state.sticky is not None and name in state.STICKY_CALLS:
            raise DriverError(state.sticky, f"{name}: the context is unusable after an earlier kernel fault "
                                            "(as on a GPU); restart the process", loud=False)
        fn(state, a)
        return CUresult.SUCCESS
    except DriverError as e:
        if e.loud:
            report(e.text)
        state.last_error = e.text
        return e.code
    except EmuError as e:
        state.record_fault(e)
        return CUresult.LAUNCH_FAILED
    except PtxlabError as e:
        report(f"{name}: {e}")
        state.last_error = str(e)
        return CUresult.INVALID_VALUE
    except Exception:            # noqa: BLE001 - a bug of the layer: keep its traceback, never unwind into C
        report(f"{name}: internal error of the driver layer (a bug; please report it):\n{traceback.format_exc()}")
        return CUresult.UNKNOWN
