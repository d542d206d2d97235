"""Per-thread call-stack state of a wave (frame base and depth), at the bottom of the emulator's layers: the ISA
table's frame-relative symbol readers (isa.py) and the call/ret handlers (callstack.py) both use it."""
from __future__ import annotations

import numpy as np


class CallState:
    def __init__(self, st, stack_base: int):
        self.base = np.full(st.T, stack_base, dtype=np.uint64)   # frame base (local-space offset) per thread
        self.depth = np.zeros(st.T, dtype=np.int64)
        self.T = st.T

    def deepest(self, runnable: np.ndarray, nrun: int):
        """Restrict the scheduler's runnable threads to those with the deepest call stack.  A called function is
        emitted after the kernel (higher pcs), so min-PC alone would run the threads that skipped a divergent call
        ahead of the callers; deepest-first makes the callers finish the call first and all of them meet again
        after it, like a reconvergence point at the return address."""
        if nrun == 0:
            return runnable, nrun
        d = self.depth[runnable]
        top = d.max()
        if top == 0 or (d == top).all():
            return runnable, nrun
        r = runnable & (self.depth == top)
        return r, int(np.count_nonzero(r))


def state(st) -> CallState:
    s = st.side.get("calls")
    if s is None:
        s = st.side["calls"] = CallState(st, st.prog.stack_base)
    return s


def frame_base(st) -> np.ndarray:
    """The (T,) uint64 frame base of every thread (what frame-relative symbols are relative to)."""
    return state(st).base
