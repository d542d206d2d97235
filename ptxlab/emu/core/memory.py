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


class GlobalHeap:
    """Device global memory: one growable byte array; pointers are GLOBAL_BASE + offset."""

    def __init__(self, capacity: int = 1 << 20):
        self.buf = np.zeros(capacity, dtype=np.uint8)
        self.top = GUARD
        self.allocs: dict[int, Allocation] = {}
        self._starts: list[int] = []       # live allocations in address order (parallel lists)
        self._ends: list[int] = []
        self._items: list[Allocation] = []
        self._serial = 0
        self._views: dict = {}

    def view(self, dt: np.dtype) -> np.ndarray:
        v = self._views.get(dt)
        if v is None or v.base is not self.buf:
            v = self.buf.view(dt)
            self._views[dt] = v
        return v

    def alloc(self, nbytes: int, label: str = "") -> int:
        size = max(int(nbytes), 1)
        start = (self.top + ALLOC_ALIGN - 1) // ALLOC_ALIGN * ALLOC_ALIGN
        end = start + size
        self.top = end + GUARD
        need = (self.top + 15) // 16 * 16
        if need > self.buf.size:
            cap = max(need, self.buf.size * 2)
            nb = np.zeros(cap, dtype=np.uint8)
            nb[: self.buf.size] = self.buf
            self.buf = nb
            self._views.clear()
        self.buf[start:end] = POISON
        self._serial += 1
        a = Allocation(start, size, label or f"allocation #{self._serial}", self._serial)
        self.allocs[start] = a
        # ``top`` only grows, so a new allocation starts after every live one: appending keeps the index sorted
        # (O(1) per allocation; a module with ~18,000 .global variables loads in linear time).
        self._starts.append(start)
        self._ends.append(end)
        self._items.append(a)
        return GLOBAL_BASE + start

    def free(self, ptr: int):
        off = ptr - GLOBAL_BASE
        if off not in self.allocs:
            raise KeyError(f"free of {ptr:#x}: not the start of a live allocation")
        del self.allocs[off]
        i = bisect.bisect_left(self._starts, off)
        del self._starts[i], self._ends[i], self._items[i]

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
