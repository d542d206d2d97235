"""Exception hierarchy for ptxlab. Every error message says what failed, where, and what to do."""
from __future__ import annotations

from typing import Optional, Tuple

__all__ = [
    "PtxlabError",
    "CompileError",
    "TensorMapError",
    "LaunchError",
    "DeviceUnavailable",
    "EmuError",
    "UsageError",
    "OptionError",
    "clean",
    "debug_traceback",
]


class PtxlabError(Exception):
    """Base class of all ptxlab errors; the CLI prints these as one clear message, no traceback."""


def debug_traceback() -> bool:
    """PTXLAB_DEBUG_TRACEBACK=1: keep ptxlab's internal frames and chained exceptions in tracebacks (debugging
    ptxlab itself); otherwise a fault raised through the public API shows the user's frames and one report."""
    import os

    return os.environ.get("PTXLAB_DEBUG_TRACEBACK", "").strip().lower() in ("1", "true", "yes", "on")


def clean(exc: BaseException) -> BaseException:
    """``raise clean(exc) from None`` at an API boundary: the exception without the library frames it went through
    (Python adds the boundary's own frame and the user's), unless PTXLAB_DEBUG_TRACEBACK is set."""
    return exc if debug_traceback() else exc.with_traceback(None)


class CompileError(PtxlabError):
    """NVRTC / nvJitLink compilation failed (message holds file:line, source line and compiler log)."""

    def __init__(self, message: str, *, log: str = "", source_name: str = "", arch: str = "") -> None:
        super().__init__(message)
        self.log = log
        self.source_name = source_name
        self.arch = arch


class TensorMapError(PtxlabError):
    """A TMA tensor map (CUtensorMap) was described with invalid parameters."""


class LaunchError(PtxlabError):
    """A kernel launch was rejected or failed (bad args, grid, shared memory, device fault)."""


class DeviceUnavailable(PtxlabError):
    """The requested backend/device cannot be used on this machine."""


class UsageError(PtxlabError):
    """A bad user input or setting (an unknown option value, an unusable path). Raised from inside a stage it aborts
    the run: ``lab.py`` exits 2 with the message and records no stage result (it says nothing about the kernel)."""


class OptionError(UsageError, ValueError):
    """A bad option value passed to an API call (e.g. ``open_device("emu", timing="a100")``): a usage error, and a
    ValueError for callers that catch those."""


Dim3 = Tuple[int, int, int]


class EmuError(PtxlabError):
    """The PTX emulator hit an unsupported or faulting instruction.

    All location fields are optional; ``str(err)`` is the full multi-line report.
    """

    def __init__(
        self,
        message: str,
        *,
        kernel: Optional[str] = None,
        ptx_line: Optional[int] = None,
        ptx_text: Optional[str] = None,
        src_loc: Optional[str] = None,
        block: Optional[Dim3] = None,
        thread: Optional[Dim3] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kernel = kernel
        self.ptx_line = ptx_line
        self.ptx_text = ptx_text
        self.src_loc = src_loc
        self.block = tuple(block) if block is not None else None
        self.thread = tuple(thread) if thread is not None else None

    def report(self, label: str = "EmuError") -> str:
        """Return the multi-line report (message first, then each known location field); ``label`` starts it
        (``""``: the message alone, e.g. for a warning built from the same fields)."""
        lines = [f"{label}: {self.message}" if label else self.message]
        if self.kernel is not None:
            lines.append(f"  kernel : {self.kernel}")
        if self.ptx_line is not None:
            lines.append(f"  ptx    : line {self.ptx_line}")
        if self.ptx_text is not None:
            lines.append(f"  instr  : {self.ptx_text.strip()}")
        if self.src_loc is not None:
            lines.append(f"  source : {self.src_loc}")
        if self.block is not None:
            lines.append(f"  block  : {self.block}")
        if self.thread is not None:
            lines.append(f"  thread : {self.thread}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report(label="")      # Python's traceback line already says "ptxlab.errors.EmuError: "
