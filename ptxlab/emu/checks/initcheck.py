"""initcheck: loads of memory that nothing wrote (the emulator's analogue of compute-sanitizer's initcheck).

* **global memory** (on by default, ``PTXLAB_EMU_INITCHECK=global``): the heap flags every byte written since its
  allocation (``memory.GlobalHeap.written``): host copies and memsets, kernel stores and atomics, bulk copies and TMA
  stores to global memory. ``ld.global`` / generic loads of global memory (and atomics, which read first) of a byte
  never written fault with the allocation, the offset and what to do. An allocation the host wrote completely (every
  ``to_device`` buffer) is skipped without a per-byte look-up. compute-sanitizer's initcheck reports the same
  ("Uninitialized __global__ memory read"); TMA tensor loads are not checked (no source says whether the sanitizer
  does: ptx_docs/emulator_checks.md).
* **shared memory** (``PTXLAB_EMU_INITCHECK=all`` or ``open_device("emu", initcheck=True)``): bytes written by
  generic stores are flagged; a load whose bytes are unflagged AND still hold the poison byte 0xA5 was never written
  (asynchronous writers such as TMA change the poison, so they need no flag; a 4-byte load of data that happens to be
  0xA5A5A5A5 is the documented 1-in-2^32 false positive).
"""
from __future__ import annotations

import numpy as np

from ...errors import UsageError
from ..core.memory import GLOBAL_BASE

MODES = {"global": (True, False), "all": (True, True), "1": (True, True), "shared": (False, True),
         "0": (False, False), "off": (False, False), "none": (False, False)}


def initcheck_modes(spec) -> tuple:
    """(global, shared) from ``open_device('emu', initcheck=...)``: None = PTXLAB_EMU_INITCHECK (default 'global'),
    True = both, False = neither, or one of MODES' names."""
    if spec is None:
        from ... import settings
        spec = settings.get("PTXLAB_EMU_INITCHECK")
    if isinstance(spec, bool):
        return (spec, spec)
    key = str(spec).strip().lower() if isinstance(spec, str) else None
    if key not in MODES:
        raise UsageError(f"open_device('emu', initcheck={spec!r}): use True, False or one of {', '.join(MODES)}")
    return MODES[key]


def check_global(st, ins, sel: np.ndarray, off: np.ndarray, nbytes: int) -> None:
    """Fault when an access of nbytes at heap offsets ``off`` (threads ``sel``) reads a never-written byte."""
    heap = st.heap
    w = heap.written
    if w is None or off.size == 0:
        return
    lo = int(off.min())
    a = heap.find(lo)
    if a is not None and a.full and int(off.max()) + nbytes <= a.start + a.size:
        return
    if nbytes == 1:
        bad = ~w[off]
    else:
        bad = ~w[off[:, None] + np.arange(nbytes)].all(axis=1)
    if not bad.any():
        return
    k = int(np.flatnonzero(bad)[0])
    o = int(off[k])
    first = o + int(np.flatnonzero(~w[o:o + nbytes])[0])
    st.fault(ins, sel[bad], "initcheck: read of never-written global memory",
             f"address {GLOBAL_BASE + first:#x} ({nbytes}-byte load at {GLOBAL_BASE + o:#x}) — {heap.nearest(first)} — "
             "was not written by the host (dev.to_device / dev.write / dev.memset) or by any kernel store since it "
             "was allocated (dev.empty leaves memory uninitialized, like cudaMalloc); initialize it first. "
             "(PTXLAB_EMU_INITCHECK=0 / open_device('emu', initcheck=False) switches the check off)")

