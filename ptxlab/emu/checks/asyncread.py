"""Shared memory that an asynchronous copy in flight will write, read or written by a thread first (part of racecheck).

``cp.async`` (PTX ISA 9.7.9.25.3) writes its shared destination asynchronously: the writes are made visible to the
executing thread only by ``cp.async.wait_group`` / ``cp.async.wait_all`` or by the completion of the mbarrier that
``cp.async.mbarrier.arrive`` tracks (9.7.9.25.3.3-4), and to other threads after that and a barrier. A generic load
or store of a destination byte before then is unordered with the asynchronous write (PTX ISA 8.6: a data race): on
hardware the load may see the old or the new bytes. The emulator completes copies as late as legal (old bytes), so
without this check such a kernel would run and read stale data silently.

Each registered copy adds 1 to a per-byte count of the wave's shared memory for its destination bytes and removes it
when it completes (just before it writes); an access of a byte with a count > 0 faults, naming the copy (issuing
instruction, thread) and what to add. It is on with racecheck (``PTXLAB_EMU_RACECHECK=0`` /
``open_device('emu', racecheck=False)`` switches both off; the kernel then reads whatever the copy has not yet
written).
"""
from __future__ import annotations

import numpy as np


class InflightWrites:
    """Destination bytes (wave shared-memory offsets) of asynchronous copies that have not completed."""

    def __init__(self, st):
        self.st = st
        self.count = None          # int32 per wave shared-memory byte, allocated at the first copy
        self.ops: dict = {}        # id(op) -> (op, byte offsets, first issuing thread per byte)

    def add(self, op, sel: np.ndarray, flat: np.ndarray, nbytes: int) -> None:
        """Copy ``op`` of ``nbytes`` per thread ``sel`` at wave shared-memory offsets ``flat`` is now in flight."""
        if self.count is None:
            self.count = np.zeros(self.st.smem.size, np.int32)
        idx = (flat[:, None] + np.arange(nbytes)).reshape(-1)
        np.add.at(self.count, idx, 1)
        self.ops[id(op)] = (op, idx, np.repeat(sel, nbytes))

    def remove(self, op) -> None:
        rec = self.ops.pop(id(op), None)
        if rec is not None:
            np.subtract.at(self.count, rec[1], 1)

    def check(self, ins, sel: np.ndarray, flat: np.ndarray, nbytes: int, write: bool) -> None:
        """Fault if threads ``sel`` access a byte that a copy in flight will write."""
        if not self.ops or sel.size == 0:
            return
        idx = flat[:, None] + np.arange(nbytes)
        hit = (self.count[idx] > 0).any(axis=1)
        if not hit.any():
            return
        k = int(np.flatnonzero(hit)[0])
        byte = int(idx[k][self.count[idx[k]] > 0][0])
        op, issuer = next((o, int(t[np.flatnonzero(b == byte)[0]])) for o, b, t in self.ops.values() if byte in b)
        st = self.st
        cta = byte // st.smem_stride
        blk, thr = st.coords(issuer)
        st.fault(ins, sel[k:], f"racecheck: shared memory {'written' if write else 'read'} while an asynchronous "
                 f"copy into it is still in flight",
                 f"shared byte {byte - cta * st.smem_stride:#x} is the destination of {op.describe()} issued by "
                 f"thread {thr} of block {blk}, which has not completed: its writes become visible only after "
                 f"cp.async.wait_group / cp.async.wait_all of the issuing thread, or the completion of the mbarrier "
                 f"phase of its cp.async.mbarrier.arrive (PTX ISA 9.7.9.25.3.3-4); another thread needs a barrier "
                 f"after that as well (a data race, PTX ISA 8.6: hardware may return the old or the new bytes)\n"
                 f"  what to do: add 'cp.async.wait_group N;' (__pipeline_wait_prior(N)) or 'cp.async.wait_all;' "
                 f"before the access, then __syncthreads() when other threads' copies are read; "
                 f"PTXLAB_EMU_RACECHECK=0 / open_device('emu', racecheck=False) switches the check off")
