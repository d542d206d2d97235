"""racecheck: shared-memory data races (the emulator's analogue of compute-sanitizer's racecheck).

Two accesses to the same shared-memory bytes by different threads, at least one a write, race unless something
orders them (PTX ISA 8.6 "Memory consistency model": a data race is two conflicting accesses not ordered by
happens-before). The check is a happens-before test that never reports an ordered pair:

* every thread has a synchronization clock; executing a synchronizing instruction (``SYNC_CTA``: CTA barriers,
  mbarrier operations, atomics and reductions, ``.volatile`` / ``.relaxed`` / ``.acquire`` / ``.release``
  loads and stores, asynchronous-copy waits and commits, cluster barriers, ...; not a fence alone) advances it; warp-level ones
  (``SYNC_WARP``: ``bar.warp.sync`` / ``__syncwarp()``, ``shfl.sync``, ``vote.sync``, ``match``, ``redux``,
  ``elect``) advance only a warp clock, which orders the lanes of that warp alone;
* each 4-byte word of the wave's shared memory remembers its last writer and its last reader (thread, clocks, the
  bytes touched, PTX line);
* a later access by thread b conflicts with that record (other thread a, overlapping bytes, one side a write) and
  is a **hazard** when a has executed no synchronizing instruction since its access (and no warp-level one either
  if a and b share a warp) and a has not exited: nothing a did after its access can order it before b's. The
  hazard is reported as read-after-write (RAW), write-after-read (WAR) or write-after-write (WAW), naming both
  accesses' threads, PTX lines and CUDA lines, like compute-sanitizer's racecheck.
* two threads storing different values to the same bytes in one instruction are a WAW hazard too (the stored value
  read back differs from the one the thread wrote).

Accesses made by synchronizing instructions themselves (atomics, volatile flags, mbarrier words) are not data
accesses and are not recorded; asynchronous writes (TMA, ``cp.async``, tcgen05) have no writing thread, as in
compute-sanitizer; a thread's access of a ``cp.async`` destination while the copy is in flight is reported
(asyncread.py). What it cannot see: a race hidden because the earlier thread synchronized with someone else in
between (the check over-approximates ordering, so it misses such races rather than report ordered pairs), races
in global memory (compute-sanitizer's racecheck checks shared memory only). Switch: ``PTXLAB_EMU_RACECHECK`` /
``open_device("emu", racecheck=...)``; measured cost in ptx_docs/emulator_checks.md.
"""
from __future__ import annotations

import numpy as np

from ...errors import UsageError
from ..core.thread_status import EXITED
from .asyncread import InflightWrites

MODES = {"shared": True, "1": True, "on": True, "0": False, "off": False, "none": False}

SYNC_WARP = frozenset({"shfl", "vote", "match", "redux", "elect"})
# fences (membar / fence) are not here: a fence orders the executing thread's own accesses, it synchronizes with
# no one until a flag store / atomic after it (which is here) is observed (PTX ISA 8.6 "release pattern")
SYNC_CTA = frozenset({"barrier", "atom", "red", "mbarrier", "cp", "griddepcontrol", "clusterlaunchcontrol",
                      "multimem"})
_ORDERED_MODS = frozenset({"volatile", "relaxed", "acquire", "release", "mmio"})
_TCGEN05_SYNC = frozenset({"commit", "fence", "wait"})


def racecheck_mode(spec) -> bool:
    """On/off from ``open_device('emu', racecheck=...)``: None = PTXLAB_EMU_RACECHECK (default on)."""
    if spec is None:
        from ... import settings
        spec = settings.get("PTXLAB_EMU_RACECHECK")
    if isinstance(spec, bool):
        return spec
    key = str(spec).strip().lower() if isinstance(spec, str) else None
    if key not in MODES:
        raise UsageError(f"open_device('emu', racecheck={spec!r}): use True, False, 'shared' or 'off'")
    return MODES[key]


def sync_scope(ins) -> str:
    """'cta' / 'warp' for a synchronizing instruction (module doc), '' for a plain one."""
    op, mods = ins.opcode, set(ins.mods)
    if op == "bar":
        return "warp" if "warp" in mods else "cta"
    if op in SYNC_WARP:
        return "warp"
    if op in SYNC_CTA:
        return "cta"
    if op in ("ld", "st") and mods & _ORDERED_MODS:
        return "cta"
    if op in ("st", "red") and "async" in mods:
        return "cta"
    if op == "tcgen05" and mods & _TCGEN05_SYNC:
        return "cta"
    return ""


def instrument(prog) -> None:
    """Wrap the handlers of prog's synchronizing instructions (once per program): their own memory accesses are not
    recorded, and afterwards the executing threads' clocks advance. Waves without racecheck pass straight through."""
    if getattr(prog, "_race_instrumented", False):
        return
    for e in prog.code:
        if e.fn is None:
            continue
        scope = sync_scope(e.ins)
        if scope:
            e.fn = _wrap(e.fn, scope == "cta")
    prog._race_instrumented = True


def _wrap(fn, cta: bool):
    def run(st, m):
        race = st.race
        if race is None:
            return fn(st, m)
        race.skip += 1
        try:
            return fn(st, m)
        finally:
            race.skip -= 1
            race.synced(m, cta)
    return run


_KINDS = {("w", "r"): ("read-after-write", "RAW"), ("r", "w"): ("write-after-read", "WAR"),
          ("w", "w"): ("write-after-write", "WAW")}


class RaceShadow:
    """Per-wave records of the last writer and reader of every 4-byte word of shared memory (module doc): per
    record kind (w, r) the thread (-1: none), its clocks when it accessed ((CTA clock << 32) | clock), and
    (PTX line << 4) | the word's bytes it touched."""

    def __init__(self, st):
        self.st = st
        self.skip = 0
        T = st.T
        self.clk = np.zeros(T, np.int64)        # every synchronizing instruction
        self.cta = np.zeros(T, np.int64)        # CTA-scope ones only
        self.packed = np.zeros(T, np.int64)     # (cta << 32) | (clk & 0xFFFFFFFF), what a record stores
        self.rec = None                          # allocated at the first shared access
        self.inflight = InflightWrites(st)       # destinations of cp.async copies in flight (asyncread.py)

    def _alloc(self):
        n = self.st.smem.size // 4 + 1
        self.rec = {k: (np.full(n, -1, np.int32), np.zeros(n, np.int64), np.zeros(n, np.int32)) for k in ("w", "r")}

    def synced(self, m, cta: bool):
        sel = slice(None) if m is None else m
        self.clk[sel] += 1
        if cta:
            self.cta[sel] += 1
        self.packed[sel] = (self.cta[sel] << 32) | (self.clk[sel] & 0xFFFFFFFF)

    def barrier(self, ctas: np.ndarray) -> None:
        """A CTA barrier without a thread count completed for ``ctas``: every access of their threads before it is
        ordered before every access after it, so their records are forgotten (a peer CTA's DSMEM access recorded
        there is forgotten too: a missed race at worst, never a false one)."""
        if self.rec is None or ctas.size == 0:
            return
        stride = self.st.smem_stride // 4
        for c in ctas.tolist():
            for k in ("w", "r"):
                self.rec[k][0][c * stride:(c + 1) * stride] = -1

    def access(self, ins, sel: np.ndarray, flat: np.ndarray, nbytes: int, write: bool):
        """Check then record an access of nbytes at wave-SMEM offsets ``flat`` by threads ``sel``."""
        if self.skip or sel.size == 0:
            return
        if self.inflight.ops and ins.opcode != "cp":     # not the completing copies' own writes
            self.inflight.check(ins, sel, flat, nbytes, write)
        if self.rec is None:
            self._alloc()
        word = flat // 4
        if nbytes >= 4:
            nw = nbytes // 4
            words = (word[:, None] + np.arange(nw)).reshape(-1) if nw > 1 else word
            tids = np.repeat(sel, nw) if nw > 1 else sel
            mask = 0xF
        else:
            words, tids = word, sel
            mask = (((1 << nbytes) - 1) << (flat % 4)).astype(np.int32)
        kind = "w" if write else "r"
        self._check(ins, "w", kind, words, tids, mask)
        if write:
            self._check(ins, "r", kind, words, tids, mask)
        tid_a, clk_a, lm_a = self.rec[kind]
        tid_a[words] = tids
        clk_a[words] = self.packed[tids]
        lm_a[words] = (ins.line << 4) | mask

    def _check(self, ins, prev: str, now: str, words, tids, mask):
        tid_a, clk_a, lm_a = self.rec[prev]
        a = tid_a[words]
        idx = np.flatnonzero((a >= 0) & (a != tids))
        if idx.size == 0:
            return
        w = words[idx]
        lm = lm_a[w]
        ov = (lm & (mask if np.isscalar(mask) else mask[idx]) & 0xF) != 0
        if not ov.all():
            idx, w, lm = idx[ov], w[ov], lm[ov]
        if idx.size == 0:
            return
        aa = a[idx].astype(np.int64)
        rc = clk_a[w]
        st = self.st
        hz = (self.cta[aa] == (rc >> 32)) & (st.status[aa] != EXITED)
        if hz.any():
            same = st.gwarp[aa] == st.gwarp[tids[idx]]
            hz &= ~same | ((self.clk[aa] & 0xFFFFFFFF) == (rc & 0xFFFFFFFF))
        if hz.any():
            k = int(np.flatnonzero(hz)[0])
            self._report(ins, prev, now, int(w[k]), int(aa[k]), int(tids[idx[k]]), int(lm[k]) >> 4)

    def _report(self, ins, prev: str, now: str, word: int, a: int, b: int, line: int):
        st = self.st
        name, short = _KINDS[(prev, now)]
        cta = word * 4 // st.smem_stride
        addr = word * 4 - cta * st.smem_stride
        blk_a, thr_a = st.coords(a)
        other = next((e.ins for e in st.prog.code if e.ins.line == line), None)
        where = f"PTX line {line}" + (f": {other.text.strip()}" if other is not None else "")
        if other is not None and other.loc:
            where += f" [{other.loc[0]}:{other.loc[1]}]"
        st.fault(ins, np.array([b]), f"racecheck: {name} hazard ({short}) on shared memory",
                 f"shared word {addr:#x} is {'read' if now == 'r' else 'written'} here; it was "
                 f"{'written' if prev == 'w' else 'read'} by thread {thr_a} of block {blk_a} (warp "
                 f"{int(st.warp[a])}, lane {int(st.lane[a])}) at {where}, and that thread executed no barrier, "
                 f"fence or other synchronization since, so nothing orders the two accesses (PTX ISA 8.6: a data "
                 f"race; compute-sanitizer's racecheck reports it as a {short} hazard)\n  what to do: put a "
                 f"__syncthreads() (bar.sync) between the two accesses (or __syncwarp() within a warp, or an "
                 f"mbarrier arrive/wait pair); PTXLAB_EMU_RACECHECK=0 / open_device('emu', racecheck=False) "
                 f"switches the check off")

    def check_store_values(self, ins, sel: np.ndarray, buf: np.ndarray, flat: np.ndarray, vals: np.ndarray,
                           dt: np.dtype, count: int):
        """WAW inside one store instruction: a thread whose stored bytes were overwritten by another thread's
        different value in the same instruction."""
        if self.skip or sel.size < 2:
            return
        u = np.dtype(f"u{dt.itemsize}")
        view = buf.view(u)
        idx = flat // dt.itemsize
        got = view[idx] if count == 1 else view[idx[:, None] + np.arange(count)]
        want = np.ascontiguousarray(vals).view(u).reshape(got.shape)
        lost = got != want
        if lost.ndim > 1:
            lost = lost.any(axis=1)
        if not lost.any():
            return
        k = int(np.flatnonzero(lost)[0])
        word = int(flat[k]) // 4
        winner = int(self.rec["w"][0][word]) if self.rec is not None else -1
        b = int(sel[k])
        if winner < 0 or winner == b:
            return
        self._report(ins, "w", "w", word, winner, b, ins.line)
