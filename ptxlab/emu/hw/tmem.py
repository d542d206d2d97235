"""Tensor Memory (TMEM) of one CTA: storage, allocator and access checks.

PTX ISA 9.7.16.1 (128 lanes x 512 columns x 32 bit per CTA on sm_100a), 9.7.16.1.1 (address = lane<<16 | col),
9.7.16.7.1 (tcgen05.alloc / dealloc / relinquish_alloc_permit rules), 9.7.16.8.1 (warp w may touch lanes
32*(w%4) .. 32*(w%4)+31 only). CUTLASS mirror: include/cute/arch/tmem_allocator_sm100.hpp.

Every violated rule raises :class:`TmemError` whose message names the rule and what to do. Location fields
(kernel, PTX line, block, thread) are passed through ``loc`` to :class:`ptxlab.errors.EmuError`.

Asynchronous writers (tcgen05.mma / cp / shift / st) are tracked per (lane, column): a read of TMEM that an
incomplete async op will write is an error that names the op, its PTX line and the wait that is missing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from ptxlab.errors import EmuError

__all__ = [
    "TMEM_LANES",
    "TMEM_COLS",
    "POISON",
    "TmemError",
    "TmemAllocation",
    "AsyncWriter",
    "Tmem",
    "split_taddr",
    "make_taddr",
    "warp_lane_range",
]

TMEM_LANES = 128
TMEM_COLS = 512
#: Value of never-written TMEM words (TMEM content after alloc is undefined; a recognisable NaN pattern).
POISON = 0x7FBADBAD

Loc = dict[str, Any]
IntArray = npt.NDArray[np.int64]


class TmemError(EmuError):
    """A Tensor Memory rule was violated; ``rule`` is a short stable tag (e.g. "alloc-ncols")."""

    def __init__(self, rule: str, message: str, **loc: Any) -> None:
        super().__init__(f"[tmem:{rule}] {message}", **loc)
        self.rule = rule


def split_taddr(taddr: int, *, what: str = "TMEM address", loc: Optional[Loc] = None) -> tuple[int, int]:
    """Split a 32-bit TMEM address into (lane, column) [PTX 9.7.16.1.1: bits 31..16 lane, 15..0 column].

    Lane >= 128 or column >= 512 raise: CUTLASS keeps a sub-word index in bits 24..31 and SF IDs in bits 30..31,
    and whether hardware ignores those bits is UNCONFIRMED (ptx_facts UNCONFIRMED #6), so the emulator refuses.
    """
    taddr = int(taddr) & 0xFFFFFFFF
    lane, col = taddr >> 16, taddr & 0xFFFF
    if lane >= TMEM_LANES or col >= TMEM_COLS:
        raise TmemError(
            "address",
            f"{what} 0x{taddr:08x} decodes to lane {lane}, column {col}; valid is lane < {TMEM_LANES}, column < "
            f"{TMEM_COLS} (PTX 9.7.16.1.1). Bits 23..31 set (CUTLASS sub-word / SF-ID bits) are not modelled: "
            "mask the address to 0x007F01FF and pass SF IDs through the instruction descriptor",
            **(loc or {}),
        )
    return lane, col


def make_taddr(lane: int, col: int) -> int:
    """Build a TMEM address from (lane, column)."""
    return ((int(lane) & 0xFFFF) << 16) | (int(col) & 0xFFFF)


def warp_lane_range(warp: int) -> tuple[int, int]:
    """Lanes [lo, hi) a warp may access with tcgen05.ld/st: warp w -> 32*(w%4) .. +32 [PTX 9.7.16.8.1]."""
    q = int(warp) % 4
    return 32 * q, 32 * q + 32


@dataclass(frozen=True)
class TmemAllocation:
    """One live allocation: columns [col, col+ncols) in all 128 lanes, made by ``warp``."""

    col: int
    ncols: int
    warp: int
    ptx_line: Optional[int] = None


@dataclass
class AsyncWriter:
    """An in-flight asynchronous op that will write TMEM (mma, cp, shift: the tensor pipe; st: per-thread)."""

    op_id: int
    kind: str  # "mma" | "cp" | "shift" | "st"
    ptx_line: Optional[int]
    issuer: str  # e.g. "thread (0,0,0)"
    wait_hint: str  # what the reader must wait on
    cells: int = 0


@dataclass
class Tmem:
    """TMEM of one CTA: ``data`` (128, 512) uint32, allocator state and pending-writer map."""

    data: npt.NDArray[np.uint32] = field(default_factory=lambda: np.full((TMEM_LANES, TMEM_COLS), POISON, np.uint32))
    written: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros((TMEM_LANES, TMEM_COLS), bool))
    pending: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros((TMEM_LANES, TMEM_COLS), np.int32))
    allocs: list[TmemAllocation] = field(default_factory=list)
    relinquished_by: Optional[int] = None
    last_alloc_ncols: Optional[int] = None
    writers: dict[int, AsyncWriter] = field(default_factory=dict)
    _next_op: int = 1

    # ------------------------------------------------------------------ allocator [PTX 9.7.16.7.1]
    @staticmethod
    def check_ncols(ncols: int, *, instr: str = "tcgen05.alloc", loc: Optional[Loc] = None) -> None:
        """nCols must be a power of two in [32, 512] [PTX 9.7.16.7.1]."""
        n = int(ncols)
        if n < 32 or n > TMEM_COLS or n & (n - 1):
            raise TmemError(
                "ncols",
                f"{instr} with nCols = {n}: the column count must be a power of two in [32, 512] "
                "(PTX 9.7.16.7.1); round the request up to 32, 64, 128, 256 or 512",
                **(loc or {}),
            )

    def free_starts(self, ncols: int) -> list[int]:
        """Start columns (aligned to ncols) where ncols free columns begin."""
        used = np.zeros(TMEM_COLS, bool)
        for a in self.allocs:
            used[a.col : a.col + a.ncols] = True
        return [s for s in range(0, TMEM_COLS, ncols) if not used[s : s + ncols].any()]

    def _free_start(self, ncols: int) -> Optional[int]:
        # Emulator choice (not architectural): first fit, aligned to ncols. Programs must use the returned address.
        starts = self.free_starts(ncols)
        return starts[0] if starts else None

    def check_alloc_rules(self, ncols: int, *, warp: int, loc: Optional[Loc] = None) -> None:
        """Raise if an alloc of ``ncols`` by ``warp`` breaks a rule of PTX 9.7.16.7.1 (size, relinquish, increase)."""
        loc = loc or {}
        self.check_ncols(ncols, loc=loc)
        if self.relinquished_by is not None:
            raise TmemError(
                "alloc-after-relinquish",
                f"tcgen05.alloc of {ncols} columns by warp {warp} after warp {self.relinquished_by} executed "
                "tcgen05.relinquish_alloc_permit: the CTA may not allocate TMEM any more (PTX 9.7.16.7.1); "
                "move relinquish_alloc_permit after the last alloc",
                **loc,
            )
        if self.last_alloc_ncols is not None and ncols > self.last_alloc_ncols:
            raise TmemError(
                "alloc-increasing",
                f"tcgen05.alloc of {ncols} columns by warp {warp} follows an allocation of {self.last_alloc_ncols} "
                "columns: the number of columns must not increase between two allocations of a CTA "
                "(PTX 9.7.16.7.1); allocate the largest block first",
                **loc,
            )

    def take(self, start: int, ncols: int, *, warp: int, ptx_line: Optional[int] = None) -> int:
        """Record the allocation of columns [start, start+ncols) (rules checked by the caller); return its address."""
        self.allocs.append(TmemAllocation(int(start), int(ncols), int(warp), ptx_line))
        self.last_alloc_ncols = int(ncols)
        return make_taddr(0, start)

    def try_alloc(self, ncols: int, *, warp: int, ptx_line: Optional[int] = None, loc: Optional[Loc] = None) -> Optional[int]:
        """Allocate ``ncols`` columns; return the TMEM address (lane 0, start column), or None if it would block.

        Raises on rule violations: bad nCols, alloc after relinquish_alloc_permit, nCols larger than the previous
        allocation of this CTA ("should not increase between any two allocations", PTX 9.7.16.7.1).
        A None return means the warp must be parked until a dealloc frees columns (alloc blocks, PTX 9.7.16.7.1).
        """
        self.check_alloc_rules(ncols, warp=warp, loc=loc)
        start = self._free_start(ncols)
        if start is None:
            return None
        return self.take(start, ncols, warp=warp, ptx_line=ptx_line)

    def deadlock_error(self, ncols: int, warp: int, loc: Optional[Loc] = None) -> TmemError:
        """The error to raise when an alloc would block and no other warp can ever free columns."""
        live = ", ".join(f"cols {a.col}..{a.col + a.ncols - 1} (warp {a.warp})" for a in self.allocs) or "none"
        return TmemError(
            "alloc-deadlock",
            f"tcgen05.alloc of {ncols} columns by warp {warp} blocks forever: {self.free_columns()} of {TMEM_COLS} "
            f"columns are free (live: {live}) and no running warp can dealloc; dealloc earlier or allocate less",
            **(loc or {}),
        )

    def free_columns(self) -> int:
        """Number of unallocated columns."""
        return TMEM_COLS - sum(a.ncols for a in self.allocs)

    def dealloc(self, taddr: int, ncols: int, *, warp: int, loc: Optional[Loc] = None) -> None:
        """Free an allocation; address and nCols must match a live allocation exactly [PTX 9.7.16.7.1]."""
        loc = loc or {}
        self.check_ncols(ncols, instr="tcgen05.dealloc", loc=loc)
        lane, col = split_taddr(taddr, what="tcgen05.dealloc address", loc=loc)
        for i, a in enumerate(self.allocs):
            if a.col == col and lane == 0:
                if a.ncols != ncols:
                    raise TmemError(
                        "dealloc-mismatch",
                        f"tcgen05.dealloc of {ncols} columns at 0x{int(taddr):08x} but the allocation at column "
                        f"{col} has {a.ncols} columns (PTX 9.7.16.7.1); pass the nCols used by tcgen05.alloc",
                        **loc,
                    )
                pend = self.pending[:, a.col : a.col + a.ncols]
                if pend.any():
                    w = self.writers[int(pend[pend != 0][0])]
                    raise TmemError(
                        "dealloc-pending",
                        f"tcgen05.dealloc of columns {a.col}..{a.col + a.ncols - 1} while the {w.kind} issued at PTX "
                        f"line {w.ptx_line} by {w.issuer} still writes them; {w.wait_hint} before dealloc",
                        **loc,
                    )
                del self.allocs[i]
                self.written[:, a.col : a.col + a.ncols] = False
                self.data[:, a.col : a.col + a.ncols] = POISON
                return
        live = ", ".join(f"0x{make_taddr(0, a.col):08x}/{a.ncols}" for a in self.allocs) or "none"
        raise TmemError(
            "dealloc-mismatch",
            f"tcgen05.dealloc at 0x{int(taddr) & 0xFFFFFFFF:08x} ({ncols} columns) by warp {warp} does not match a "
            f"live allocation (live address/nCols: {live}); pass the exact address written by tcgen05.alloc",
            **loc,
        )

    def relinquish(self, *, warp: int) -> None:
        """tcgen05.relinquish_alloc_permit: later allocs by this CTA are errors."""
        if self.relinquished_by is None:
            self.relinquished_by = int(warp)

    def check_exit(self, *, kernel: Optional[str] = None, block: Any = None) -> None:
        """Launcher hook at CTA exit: every allocation must have been freed [PTX 9.7.16.7.1]."""
        if self.allocs:
            live = ", ".join(
                f"columns {a.col}..{a.col + a.ncols - 1} allocated by warp {a.warp}"
                + (f" at PTX line {a.ptx_line}" if a.ptx_line is not None else "")
                for a in self.allocs
            )
            raise TmemError(
                "leak",
                f"TMEM not freed at kernel exit: {live}. Every tcgen05.alloc needs a tcgen05.dealloc with the same "
                "address and nCols before the CTA exits (PTX 9.7.16.7.1)",
                kernel=kernel,
                block=block,
            )

    # ------------------------------------------------------------------ access checks
    def check_allocated(self, cols: npt.ArrayLike, *, what: str, loc: Optional[Loc] = None) -> None:
        """Every column touched must lie inside a live allocation."""
        cols = np.asarray(cols, np.int64)
        if not cols.size:
            return
        lo, hi = int(cols.min()), int(cols.max())
        if any(a.col <= lo and hi < a.col + a.ncols for a in self.allocs):
            return                               # all inside one allocation (the usual case, no per-column work)
        cols = np.unique(cols)
        ok = np.zeros(cols.shape, bool)
        for a in self.allocs:
            ok |= (cols >= a.col) & (cols < a.col + a.ncols)
        if not ok.all():
            bad = cols[~ok]
            live = ", ".join(f"{a.col}..{a.col + a.ncols - 1}" for a in self.allocs) or "none"
            raise TmemError(
                "unallocated",
                f"{what} touches TMEM column(s) {_fmt_list(bad)} outside every live allocation (allocated columns: "
                f"{live}); check the address arithmetic and the tcgen05.alloc size",
                **(loc or {}),
            )

    @staticmethod
    def check_warp_lanes(warp: int, lanes: npt.ArrayLike, *, what: str, loc: Optional[Loc] = None) -> None:
        """tcgen05.ld/st by warp w may touch lanes 32*(w%4)..+31 only [PTX 9.7.16.8.1]."""
        lanes = np.asarray(lanes, np.int64)
        lo, hi = warp_lane_range(warp)
        bad = lanes[(lanes < lo) | (lanes >= hi)]
        if bad.size:
            raise TmemError(
                "warp-quarter",
                f"{what} by warp {warp} touches lane(s) {_fmt_list(np.unique(bad))}, but warp {warp} (warp%4 = "
                f"{warp % 4}) may only access lanes {lo}..{hi - 1} (PTX 9.7.16.8.1); use lane base 32*(warp%4) in "
                "the address, or let the warp with the right warp%4 do this access",
                **(loc or {}),
            )

    def check_read_ready(self, lanes: IntArray, cols: IntArray, *, reader: str, pipe: bool, loc: Optional[Loc] = None) -> None:
        """Reading cells that an incomplete async op will write is an error.

        ``pipe=True`` for readers on the tensor pipe (mma/cp/shift): they are ordered after earlier pipe ops
        (PTX 9.7.16.6.2 pipelined pairs), so only pending tcgen05.st writers are hazards for them.
        """
        ids = self.pending[lanes, cols]
        ids = ids[ids != 0]
        if not ids.size:
            return
        for op_id in np.unique(ids):
            w = self.writers[int(op_id)]
            if pipe and w.kind != "st":
                continue
            raise TmemError(
                "read-before-complete",
                f"{reader} reads TMEM before the {w.kind} issued at PTX line {w.ptx_line} by {w.issuer} completed: "
                f"{w.wait_hint}",
                **(loc or {}),
            )

    def check_initialized(self, lanes: IntArray, cols: IntArray, *, reader: str, loc: Optional[Loc] = None) -> None:
        """Raise if any cell was never written since alloc (used for MMA accumulate inputs and SF/A operands)."""
        w = self.written[lanes, cols]
        if not w.all():
            bl, bc = np.asarray(lanes)[~w].ravel(), np.asarray(cols)[~w].ravel()
            raise TmemError(
                "uninitialized",
                f"{reader} reads TMEM never written since tcgen05.alloc (first: lane {int(bl[0])}, column "
                f"{int(bc[0])}; {int((~w).sum())} cells); write it first (tcgen05.st/cp, or an MMA with "
                "enable-input-d = false)",
                **(loc or {}),
            )

    # ------------------------------------------------------------------ data movement
    def read(self, lanes: IntArray, cols: IntArray) -> npt.NDArray[np.uint32]:
        """Gather words (no checks: call the check_* methods first)."""
        return self.data[lanes, cols]

    def write(self, lanes: IntArray, cols: IntArray, values: npt.ArrayLike, *, mask: Optional[npt.ArrayLike] = None) -> None:
        """Scatter words (optionally only where ``mask``); marks cells written."""
        lanes, cols = np.asarray(lanes), np.asarray(cols)
        values = np.broadcast_to(np.asarray(values).astype(np.uint32), lanes.shape)
        if mask is not None:
            m = np.broadcast_to(np.asarray(mask, bool), lanes.shape)
            lanes, cols, values = lanes[m], cols[m], values[m]
        self.data[lanes, cols] = values
        self.written[lanes, cols] = True

    # ------------------------------------------------------------------ async writers
    def begin_async_write(
        self, kind: str, lanes: IntArray, cols: IntArray, *, ptx_line: Optional[int], issuer: str, wait_hint: str,
        loc: Optional[Loc] = None,
    ) -> int:
        """Mark cells as pending writes of a new async op; return its op id (pass it to :meth:`complete`).

        A second writer of a cell still pending from a tcgen05.st (or an st over a pending pipe op) is a race.
        """
        lanes, cols = np.asarray(lanes), np.asarray(cols)
        cur = self.pending[lanes, cols]
        for other in np.unique(cur[cur != 0]):
            w = self.writers[int(other)]
            if (kind == "st") != (w.kind == "st") or kind == "st":
                raise TmemError(
                    "write-race",
                    f"{kind} writes TMEM that the {w.kind} issued at PTX line {w.ptx_line} by {w.issuer} is still "
                    f"writing: {w.wait_hint} first",
                    **(loc or {}),
                )
        op_id = self._next_op
        self._next_op += 1
        self.writers[op_id] = AsyncWriter(op_id, kind, ptx_line, issuer, wait_hint, int(lanes.size))
        self.pending[lanes, cols] = op_id
        return op_id

    def complete(self, op_id: int) -> None:
        """The async op finished: its cells are readable (cells re-marked by a later op stay pending)."""
        if op_id in self.writers:
            self.pending[self.pending == op_id] = 0
            del self.writers[op_id]


def _fmt_list(values: npt.ArrayLike, limit: int = 8) -> str:
    v = [int(x) for x in np.asarray(values).ravel()]
    s = ", ".join(map(str, v[:limit]))
    return s + (f", ... ({len(v)} total)" if len(v) > limit else "")
