"""Timing recording on the native engine (ptx_docs/emulator_engines.md "Timing recording on the native engine").

The interpreter records a launch by running every instruction through its wrapped handler (trace.instrument): per
instruction a Python call that appends ``(pc, PLAIN, None)`` to the stream of each warp that ran it, or an event
for memory accesses, barriers, mbarriers, asynchronous and tensor-core operations.  Here the native engine runs the
instructions whose record is ``(pc, PLAIN, None)`` -- translated, not a load or store, wrapped by ``run_plain`` --
and logs, per warp, the pcs it ran (engine.c ``Ctx.log``: the warps holding an executing thread, mask and guard
read before the instruction, as ``Recorder.warps_of``); every other instruction goes to its wrapped handler as on
the interpreter.  The runner hands the log over before each instruction Python runs and at the end of each block
run, so each warp's stream receives the same items in the same order: the trace is the interpreter's, item for
item (tests/timing/test_native_record.py).
"""
from __future__ import annotations

import numpy as np

from ..emu.engine.native import build
from ..emu.engine.native.record import OPCODES
from ..emu.engine.native.runner import NativeScheduler, kernel_of
from .trace import PLAIN

_MEMORY = (OPCODES["LD"], OPCODES["ST"])      # their accesses are recorded by TimedWave.load / store
LOG_CAP = 4096          # log entries per warp between two hand-overs (engine.c returns R_FLUSH when a row is full)


def plain_native(prog, iprog, kernel) -> np.ndarray:
    """Per pc: 1 = the native code runs it and logs it (translated, handler not replaced after decode, no memory
    access, recorded as a plain instruction by trace._wrap)."""
    ops = kernel.tables.ops[:, 0]
    return np.array([1 if (nat and e.fn is f and ops[pc] not in _MEMORY and getattr(w.fn, "plain", False)) else 0
                     for pc, (e, w, f, nat) in enumerate(zip(prog.code, iprog.code, kernel.fns, kernel.native))],
                    np.uint8)


class RecordingScheduler(NativeScheduler):
    """The native scheduler of a recorded wave (``st``: a trace.TimedWave running the instrumented program)."""

    def __init__(self, st, budget, kernel, rec, plain: np.ndarray, items: np.ndarray):
        super().__init__(st, budget, None, kernel)
        self.pyonly = (1 - plain).astype(np.uint8)
        self.c.pyonly = self.pyonly.ctypes.data
        self.enable_log(LOG_CAP)
        self.rec = rec
        self.items = items

    def flush_log(self, log, loglen) -> None:
        streams, keys, items = self.rec.trace.streams, self.rec.keys, self.items
        for w in np.flatnonzero(loglen).tolist():
            streams[keys[w]].extend(items[log[w, :loglen[w]]].tolist())


def recording_scheduler(dev, prog, iprog, rec):
    """A scheduler factory ``make(st, budget)`` that records ``iprog`` (trace.instrument(prog, rec)) natively, or
    None: the interpreter records (``open_device("emu", engine="interp")``, no C compiler, a failed build)."""
    if getattr(dev, "engine", "interp") != "native" or not build.available():
        return None
    if getattr(prog, "_native_kernel", None) is False:
        return None
    try:
        k = kernel_of(prog)
    except build.NativeBuildError:
        prog._native_kernel = False
        return None
    plain = plain_native(prog, iprog, k)
    items = np.empty(len(plain), object)      # the interpreter's item per pc, shared by the streams
    for pc in range(len(plain)):
        items[pc] = (pc, PLAIN, None)

    def make(st, budget):
        return RecordingScheduler(st, budget, k, rec, plain, items)
    return make
