"""State spaces of the emulator (PTX ISA 5.1) and the generic address windows (PTX ISA 5.1.6, cvta).

Address map (generic addresses, 64-bit):
  global   GLOBAL_BASE + offset into the device heap (allocations 256-B aligned, with guard gaps)
  shared   SHARED_WIN + shared::cta address   (shared::cta addresses are 32-bit offsets from 0)
  local    LOCAL_WIN  + local address
  param    PARAM_WIN  + kernel-param address  (cvta.param, PTX ISA 9.7.9.19)
  const    CONST_WIN  + const address
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ...errors import PtxlabError

GLOBAL_BASE = 0x7F00_0000_0000
SHARED_WIN = 0x7E00_0000_0000
LOCAL_WIN = 0x7D00_0000_0000
PARAM_WIN = 0x7C00_0000_0000
CONST_WIN = 0x7B00_0000_0000
WIN_SHIFT = 40
WINDOWS = {GLOBAL_BASE >> WIN_SHIFT: "global", SHARED_WIN >> WIN_SHIFT: "shared",
           LOCAL_WIN >> WIN_SHIFT: "local", PARAM_WIN >> WIN_SHIFT: "param", CONST_WIN >> WIN_SHIFT: "const"}
WIN_BASE = {"global": GLOBAL_BASE, "shared": SHARED_WIN, "local": LOCAL_WIN, "param": PARAM_WIN, "const": CONST_WIN}
ALLOC_ALIGN = 256
GUARD = 256
POISON = 0xA5


@dataclass
class Allocation:
    start: int      # offset in the heap
    size: int
    label: str
    serial: int
    full: bool = False   # every byte written by the host (initcheck fast path: no per-byte look-up needed)


class GlobalHeap:
    """Device global memory: one growable byte array; pointers are GLOBAL_BASE + offset.

    Allocations are bump-allocated while the array has room; when it would have to grow, a freed gap that fits is
    reused first (first fit), so a loop of alloc/free keeps its memory; freeing the topmost allocation lowers the top
    (and a heap left mostly empty shrinks). ``limit`` bounds the heap's size: a larger request is refused with a clear
    error and leaves the heap exactly as it was (as does a failed host allocation while growing).
    ``written`` (when ``track_writes`` is on: global initcheck, checks/initcheck.py) flags the bytes that any writer
    has written since their allocation."""

    def __init__(self, capacity: int = 1 << 20, limit: int = 1 << 46):
        self.buf = np.zeros(capacity, dtype=np.uint8)
        self.limit = int(limit)
        self.top = GUARD
        self.allocs: dict[int, Allocation] = {}
        self._starts: list[int] = []       # live allocations in address order (parallel lists)
        self._ends: list[int] = []
        self._items: list[Allocation] = []
        self._serial = 0
        self._views: dict = {}
        self.written: Optional[np.ndarray] = None

    def track_writes(self) -> None:
        """Start flagging written bytes (global initcheck); bytes already allocated count as written."""
        if self.written is None:
            self.written = np.zeros(self.buf.size, dtype=np.bool_)
            self.written[: self.top] = True
            for a in self._items:
                a.full = True

    def view(self, dt: np.dtype) -> np.ndarray:
        v = self._views.get(dt)
        if v is None or v.base is not self.buf:
            v = self.buf.view(dt)
            self._views[dt] = v
        return v

    def _resize(self, cap: int) -> None:
        """Replace buf (and written) by arrays of cap bytes keeping the first min(old, cap) bytes; on a host
        allocation failure nothing changes and a PtxlabError says so."""
        keep = min(self.buf.size, cap)
        try:
            nb = np.zeros(cap, dtype=np.uint8)
            nw = np.zeros(cap, dtype=np.bool_) if self.written is not None else None
        except MemoryError:
            raise PtxlabError(f"emulated global memory: the host could not allocate {cap:,} bytes for the heap "
                              f"({self.top:,} bytes in use); free device buffers or emulate a smaller problem") from None
        nb[:keep] = self.buf[:keep]
        if nw is not None:
            nw[:keep] = self.written[:keep]
            self.written = nw
        self.buf = nb
        self._views.clear()

    def _place(self, size: int) -> int:
        """Start offset for an allocation of size bytes: bump at the top while the array has room, else the first
        gap between live allocations that fits (guards on both sides), else the top (the array grows)."""
        start = (self.top + ALLOC_ALIGN - 1) // ALLOC_ALIGN * ALLOC_ALIGN
        if start + size + GUARD <= self.buf.size:
            return start
        prev_end = 0
        for s0, e0 in zip(self._starts, self._ends):
            s = (prev_end + GUARD + ALLOC_ALIGN - 1) // ALLOC_ALIGN * ALLOC_ALIGN
            if s + size + GUARD <= s0:
                return s
            prev_end = e0
        return start

    def alloc(self, nbytes: int, label: str = "") -> int:
        size = max(int(nbytes), 1)
        start = self._place(size)
        end = start + size
        if end + GUARD > self.limit:
            raise PtxlabError(
                f"emulated global memory: an allocation of {size:,} bytes ({label or 'dev.empty / to_device'}) would "
                f"exceed the emulator's limit of {self.limit:,} bytes ({self.in_use():,} bytes in use); emulate a "
                "smaller problem, free buffers, or raise the limit with PTXLAB_EMU_MEMORY=BYTES / "
                "open_device('emu', memory=BYTES)")
        need = (max(self.top, end + GUARD) + 15) // 16 * 16
        if need > self.buf.size:
            self._resize(max(need, min(self.buf.size * 2, self.limit)))
        self.top = max(self.top, end + GUARD)
        self.buf[start:end] = POISON
        if self.written is not None:
            self.written[start:end] = False
        self._serial += 1
        a = Allocation(start, size, label or f"allocation #{self._serial}", self._serial)
        self.allocs[start] = a
        i = bisect.bisect_left(self._starts, start)   # at the end for a bump allocation: O(1)
        self._starts.insert(i, start)
        self._ends.insert(i, end)
        self._items.insert(i, a)
        return GLOBAL_BASE + start

    def alloc_many(self, items: list) -> list:
        """``alloc(n, label)`` then ``write_bytes(ptr, init)`` for each ``(n, label, init)`` in order, in one step: the
        same addresses, heap size, labels and written flags as those calls (a CUTLASS module has ~18,000 ``.global``
        variables; one call each took about a second).  Falls back to the calls themselves when a freed gap could
        take one of them or the limit would be reached (the calls then decide, and report)."""
        sizes = [max(int(n), 1) for n, _, _ in items]
        if not sizes:
            return []
        smallest = min(sizes)
        prev_end, gap = 0, False
        for s0, e0 in zip(self._starts, self._ends):          # _place's gap search, for the smallest request
            s = (prev_end + GUARD + ALLOC_ALIGN - 1) // ALLOC_ALIGN * ALLOC_ALIGN
            if s + smallest + GUARD <= s0:
                gap = True
                break
            prev_end = e0
        cap, top, starts = self.buf.size, self.top, []
        for size in sizes:
            start = (top + ALLOC_ALIGN - 1) // ALLOC_ALIGN * ALLOC_ALIGN
            end = start + size
            if gap or end + GUARD > self.limit:
                return [self._alloc_write(n, label, init) for n, label, init in items]
            need = (max(top, end + GUARD) + 15) // 16 * 16
            if need > cap:
                cap = max(need, min(cap * 2, self.limit))
            top = max(top, end + GUARD)
            starts.append(start)
        if cap > self.buf.size:
            self._resize(cap)
        self.top = top
        buf, written = self.buf, self.written
        out = []
        for (_, label, init), start, size in zip(items, starts, sizes):
            buf[start:start + size] = POISON
            b = np.frombuffer(init, dtype=np.uint8)
            buf[start:start + b.size] = b
            if written is not None:
                written[start:start + size] = False
                written[start:start + b.size] = True
            self._serial += 1
            a = Allocation(start, size, label or f"allocation #{self._serial}", self._serial,
                           full=written is not None and b.size >= size)
            self.allocs[start] = a
            self._starts.append(start)
            self._ends.append(start + size)
            self._items.append(a)
            out.append(GLOBAL_BASE + start)
        return out

    def _alloc_write(self, nbytes: int, label: str, init: bytes) -> int:
        p = self.alloc(nbytes, label)
        self.write_bytes(p, np.frombuffer(init, dtype=np.uint8))
        return p

    def in_use(self) -> int:
        return sum(a.size for a in self._items)

    def free(self, ptr: int):
        off = ptr - GLOBAL_BASE
        if off not in self.allocs:
            raise KeyError(f"free of {ptr:#x}: not the start of a live allocation")
        a = self.allocs.pop(off)
        i = bisect.bisect_left(self._starts, off)
        del self._starts[i], self._ends[i], self._items[i]
        if self.written is not None:
            self.written[off: off + a.size] = False
        self.top = (self._ends[-1] + GUARD) if self._ends else GUARD
        if self.buf.size > (64 << 20) and self.top < self.buf.size // 4:    # mostly empty: give memory back
            self._resize(max(self.buf.size // 2, (self.top + 15) // 16 * 16))

    def find(self, off: int) -> Optional[Allocation]:
        i = bisect.bisect_right(self._starts, off) - 1
        if i >= 0 and off < self._ends[i]:
            return self._items[i]
        return None

    def nearest(self, off: int) -> str:
        """Describe the allocation nearest to heap offset ``off`` (for diagnostics)."""
        if not self._items:
            return "no live allocations"
        best = min(self._items, key=lambda a: 0 if a.start <= off < a.start + a.size else
                   min(abs(off - a.start), abs(off - (a.start + a.size - 1))))
        rel = off - best.start
        if 0 <= rel < best.size:
            where = f"offset {rel} inside"
        elif rel < 0:
            where = f"{-rel} bytes before"
        else:
            where = f"{rel - best.size} bytes past the end of"
        return f"{where} {best.label} ({best.size} bytes at {GLOBAL_BASE + best.start:#x})"

    def check(self, off: np.ndarray, nbytes: int) -> Optional[int]:
        """Return the index of the first access [off, off+nbytes) outside every allocation, or None."""
        if off.size == 0:
            return None
        lo, hi = int(off.min()), int(off.max())
        a = self.find(lo)
        if a is not None and hi + nbytes <= a.start + a.size:
            return None
        starts = np.asarray(self._starts, dtype=np.int64)
        ends = np.asarray(self._ends, dtype=np.int64)
        o = off.astype(np.int64)
        k = np.searchsorted(starts, o, side="right") - 1
        ok = (k >= 0) & (o + nbytes <= ends[np.maximum(k, 0)]) if len(starts) else np.zeros(o.shape, bool)
        bad = np.flatnonzero(~ok)
        return int(bad[0]) if bad.size else None

    def read_bytes(self, ptr: int, nbytes: int) -> np.ndarray:
        off = ptr - GLOBAL_BASE
        return self.buf[off: off + nbytes].copy()

    def write_bytes(self, ptr: int, data: np.ndarray):
        off = ptr - GLOBAL_BASE
        b = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        self.buf[off: off + b.size] = b
        self.mark_range(off, b.size)

    def fill(self, ptr: int, value: int, nbytes: int) -> None:
        off = ptr - GLOBAL_BASE
        self.buf[off: off + nbytes] = value
        self.mark_range(off, nbytes)

    def mark_range(self, off: int, n: int) -> None:
        """Bytes [off, off+n) were written (host copies, bulk copies): initcheck's record."""
        if self.written is None or n <= 0:
            return
        self.written[off: off + n] = True
        a = self.find(off)
        if a is not None and off <= a.start and off + n >= a.start + a.size:
            a.full = True

    def mark(self, flat: np.ndarray, nbytes: int) -> None:
        """Accesses of nbytes at heap offsets ``flat`` wrote their bytes (kernel stores)."""
        if self.written is None or flat.size == 0:
            return
        if nbytes == 1:
            self.written[flat] = True
        else:
            self.written[flat[:, None] + np.arange(nbytes)] = True
