"""Recording hooks: while the emulator runs a kernel, record each warp's dynamic instruction stream as events.

The emulator's scheduling order is not time order (it runs the lowest PC first and completes asynchronous operations
lazily), so nothing here measures time: it records *what* each warp did, in that warp's program order, with the
identities the simulator (sim.py) needs to replay it causally:

* every executed instruction (its PTX code index: class, latency and register dependences come from the program);
* global memory accesses: bytes, 32-byte sectors, and how many sectors are a first touch in this launch (DRAM) or a
  re-read (L2); shared-memory accesses: wavefronts (bank conflicts);
* CTA barriers (bar.sync / bar.arrive / bar.red): (CTA, barrier id, generation) and whether the warp waits;
* mbarrier operations: each arrive / expect_tx / complete_tx is a *contribution* to one phase (barrier object, phase
  index, as the emulator's state machine assigned it); each successful try_wait / test_wait *depends* on the
  completion of one phase;
* asynchronous operations (TMA / bulk copies, tcgen05.commit, cp.async arrivals): issue point, bytes (DRAM / L2), and
  the phase contributions they make when they complete;
* tcgen05.mma / tcgen05.cp: shape and kind (tensor-pipe work); tcgen05.ld: bytes read from TMEM.

Hook points (no emulator handler is edited): the recorder wraps each decoded instruction's handler in a copy of the
program (``instrument``), subclasses the wave's memory access (``TimedWave.load/store``), and replaces the wave's
async engine (``RecordingEngine``).  The only emulator change is none: ``predict.py`` builds and runs the waves.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import numpy as np

from ..emu.core import ir, isa
from ..emu.engine import machine
from ..emu.core.memory import GLOBAL_BASE, SHARED_WIN, WIN_SHIFT
from . import cluster_trace, memsys
from .cluster_trace import CBAR_ARRIVE, CBAR_WAIT, DSMEM  # noqa: F401

# event kinds inside a warp's stream (item = (pc, kind, data))
PLAIN, GLD, GST, SMEM, BAR, MB_CONTRIB, MB_WAIT, ASYNC, MMA, TMEM_LD, LOCAL = range(11)
# thread-block clusters (cluster_trace.py): DSMEM, CBAR_ARRIVE, CBAR_WAIT = 11, 12, 13

_BAR_OPS = ("bar", "barrier")
CPA_KEY = ("cp.async",)   # key (CPA_KEY + (async id,)) of a cp.async's completion: what its wait_group waits on
_MBAR_CHANGE = {"arrive", "arrive_drop", "expect_tx", "complete_tx"}


@dataclass
class AsyncOp:
    """One asynchronous operation as recorded: what it moves and which mbarrier phases its completion feeds."""
    kind: str                 # "tma" | "bulk" | "tma_store" | "commit" | "cp_async" | "arrive" | other describe()
    pc: int
    cta: int                  # global CTA id
    dram_bytes: int = 0
    l2_bytes: int = 0
    contribs: list = field(default_factory=list)   # event ids (phase contributions) made at completion
    line: int = 0
    nbytes: int = 0           # bytes of a SMEM -> peer SMEM bulk copy ("bulk_dsmem")
    dst_ctas: tuple = ()      # global CTAs whose SMEM it fills, when not only ``cta`` (multicast, peer bulk copy)
    sectors: int = 0          # global sectors a load read (TMA / bulk copy / cp.async)
    first: int = 0            # ... of which first touches by its CTA (DRAM with its stream's p, memsys.py)
    stream: int = -1          # the access stream (issuing PTX pc) of the grid footprint (memsys.py)


@dataclass
class Contribution:
    """One contribution to an mbarrier phase or a CTA-barrier generation: ``parts`` warp (or async) arrivals that all
    have to happen; the phase completes at the latest contribution."""
    key: tuple
    parts: int = 0
    remote: bool = False      # an arrive on a peer CTA's mbarrier (crosses the SM-to-SM network)
    release_cluster: bool = False   # .release at .cluster scope: the issuing warp waits for the release (sim.py)


class SmemAccess(tuple):
    """Shared-memory wavefronts of one warp's access (``wav``), and of the same lanes' access widened to 8 / 16 bytes
    at their address rounded down (``w64`` / ``w128``: what an ``LDS.64`` / ``LDS.128`` that ptxas made out of several
    narrower PTX accesses costs; sass_join merges the parts, sim.py picks the width of the SASS instruction);
    ``parts``: how many PTX accesses it stands for."""
    __slots__ = ()

    def __new__(cls, wav: int, w64: int, w128: int, parts: int = 1):
        return tuple.__new__(cls, (wav, w64, w128, parts))

    wav = property(lambda s: s[0])
    w64 = property(lambda s: s[1])
    w128 = property(lambda s: s[2])
    parts = property(lambda s: s[3])

    def merged(self, other: "SmemAccess") -> "SmemAccess":
        return SmemAccess(self[0] + other[0], self[1], self[2], self[3] + other[3])

    def at_width(self, width: int) -> int:
        """Wavefronts when issued as one access of ``width`` bytes per lane (0: as recorded)."""
        if self[3] > 1 and width >= 16:
            return self[2]
        if self[3] > 1 and width == 8:
            return self[1]
        return self[0]


def smem_wavefronts(warps: np.ndarray, lanes: np.ndarray, addr: np.ndarray, nbytes: int, nwarps: int) -> np.ndarray:
    """Wavefronts per warp of one shared-memory access (H100: 32 banks of 4 bytes, one 128-byte wavefront per
    cycle).  Lanes accessing the same 4-byte word share it (broadcast); a wavefront serves at most one word per bank,
    so a group of lanes needs as many wavefronts as its most-used bank has distinct words.  Groups: the whole warp
    for accesses of up to 8 bytes per lane, each half-warp for 16 bytes (a 128-bit access is split in half-warps: a
    warp-wide broadcast is 2 wavefronts, 32 distinct 16-byte words 4; probed on the H100, NOTES.md)."""
    if warps.size == 0:
        return np.zeros(nwarps, np.int64)
    fast = _wavefronts_fast(warps, addr, nbytes, nwarps)
    if fast is None:
        fast = _wavefronts_rows(warps, addr, nbytes, nwarps)
    if fast is not None:
        return fast
    return _wavefronts_unique(warps, lanes, addr, nbytes, nwarps)


def _wavefronts_unique(warps: np.ndarray, lanes: np.ndarray, addr: np.ndarray, nbytes: int, nwarps: int) -> np.ndarray:
    """smem_wavefronts for any set of lanes: the distinct (group, word) pairs, counted per bank."""
    nword = max(1, nbytes // 4)
    words = addr >> 2
    grp = (lanes >> 4) if nbytes >= 16 else np.zeros_like(lanes)
    if nword > 1:
        words = (words[:, None] + np.arange(nword)).ravel()
        warps = np.repeat(warps, nword)
        grp = np.repeat(grp, nword)
    wg = warps.astype(np.int64) * 2 + grp
    key = np.unique(wg << 40 | (words & ((1 << 40) - 1)))
    kwg = key >> 40
    bank = key & 31
    per = np.bincount(kwg * 32 + bank, minlength=nwarps * 2 * 32).reshape(-1, 32)
    return per.max(axis=1).reshape(nwarps, 2).sum(axis=1)


def _wavefronts_rows(warps: np.ndarray, addr: np.ndarray, nbytes: int, nwarps: int):
    """smem_wavefronts for whole warps (32 lanes each, in lane order) with the words of each wavefront group sorted
    per row instead of one np.unique over all pairs (the same count: distinct words per bank, most-used bank per
    group), else None."""
    if warps.size % 32:
        return None
    w2 = warps.reshape(-1, 32)
    if not (w2 == w2[:, :1]).all():
        return None
    nword = max(1, nbytes // 4)
    a = addr.astype(np.int64)
    if nword > 1 and not (a & (nbytes - 1)).any():
        # aligned 8 / 16-byte accesses: a unit of nbytes covers banks (unit % groups) * nword ... + nword - 1, so a
        # bank's distinct words are its unit group's distinct units (the same count, nword times fewer to sort)
        units, groups = (a // nbytes).reshape(-1, 32), 32 // nword
    else:
        units, groups = (a >> 2).reshape(-1, 32), 32
        if nword > 1:
            units = (units[:, :, None] + np.arange(nword)).reshape(units.shape[0], -1)
    per = 2 if nbytes >= 16 else 1             # half-warp groups for 16-byte accesses (lanes 0-15, 16-31)
    g = np.sort(units.reshape(units.shape[0] * per, -1), axis=1)
    new = np.ones(g.shape, bool)
    new[:, 1:] = g[:, 1:] != g[:, :-1]         # each distinct unit once
    rows = np.broadcast_to(np.arange(g.shape[0])[:, None], g.shape)
    cnt = np.bincount((rows * groups + (g % groups))[new], minlength=g.shape[0] * groups).reshape(-1, groups)
    out = np.zeros(nwarps, np.int64)
    out[w2[:, 0]] = cnt.max(axis=1).reshape(-1, per).sum(axis=1)
    return out


def _wavefronts_fast(warps: np.ndarray, addr: np.ndarray, nbytes: int, nwarps: int):
    """smem_wavefronts for the common case of whole warps whose lanes' words lie within one 128-byte window per
    wavefront group (every bank used at most once: 1 wavefront per group), else None."""
    if warps.size % 32 or nbytes not in (4, 8, 16):
        return None
    w2 = warps.reshape(-1, 32)
    if not (w2 == w2[:, :1]).all():
        return None
    a2 = addr.reshape(-1, 32)
    if nbytes == 16:        # half-warp groups
        span = np.maximum(a2[:, :16].max(1) - a2[:, :16].min(1), a2[:, 16:].max(1) - a2[:, 16:].min(1))
        per = 2
    else:
        span = a2.max(1) - a2.min(1)
        per = 1
    # all lanes' bytes inside a 128-byte window: one word per bank at most (identical words broadcast)
    if not (span + nbytes <= 128).all():
        return None
    out = np.zeros(nwarps, np.int64)
    out[w2[:, 0]] = per
    return out


class Trace:
    """All recorded streams of one launch (or of the sampled CTAs of it)."""

    def __init__(self, prog, grid, block, dyn_smem: int, ctas: list):
        self.prog = prog
        self.kernel = prog.kernel
        self.grid, self.block, self.dyn_smem = tuple(grid), tuple(block), int(dyn_smem)
        self.ctas = list(ctas)                       # emulated (sampled) global CTA ids
        self.streams: dict[tuple, list] = {}         # (cta, warp) -> [(pc, kind, data)]
        self.contribs: list[Contribution] = []       # id -> Contribution
        self.phase_contribs: dict[tuple, list] = {}  # phase key -> [contribution ids]
        self.asyncs: list[AsyncOp] = []
        self.smem_bytes = 0
        self.thread_instrs = 0
        self.emu_seconds = 0.0
        self.tmem_cols: dict[int, int] = {}          # cta -> max TMEM columns allocated
        self.bar_addr: dict[int, int] = {}           # id(mbarrier object) -> its shared::cta address
        self.cluster = 1                             # CTAs per cluster (cluster launches: cluster_trace.py)
        self.cluster_of: dict[int, tuple] = {}       # global CTA -> (cluster index, %cluster_ctarank)
        self.footprint = None                        # memsys.GridFootprint (predict.py)
        self.sm_ctas = 0                             # CTAs the busiest SM runs (> len(ctas): round sampling)

    def new_contrib(self, key: tuple) -> int:
        self.contribs.append(Contribution(key))
        cid = len(self.contribs) - 1
        self.phase_contribs.setdefault(key, []).append(cid)
        return cid


# ------------------------------------------------------------------------------------------------ instruction classes
_INT_TYPES = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "b8", "b16", "b32", "b64"}


def instr_class(ins: ir.Instr) -> str:
    """Coarse issue/latency class of a PTX instruction (params.py gives each class a latency, sim.py a pipe).

    PTX is not SASS: register moves and integer widenings mostly vanish in register allocation ("free": no issue
    slot), integer multiplies / dot products run on the FMA-heavy pipe (IMAD/IDP), FP32 arithmetic on either FMA
    pipe, logic/shift/add/compare/permute on the integer ALU pipe."""
    op, mods = ins.opcode, ins.mods
    if op in ("ld", "ldu", "st", "red", "atom", "prefetch", "cp", "cp.async", "ldmatrix", "stmatrix"):
        return "mem"
    if op == "mov" or op == "cvta" or (op == "cvt" and all(m in _INT_TYPES or m in ("rn", "rz", "rm", "rp")
                                                          for m in mods) and not any(m.startswith("f") for m in mods)):
        return "free"
    fp = any(t in mods for t in ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2", "ftz", "rn"))
    if op in ("fma", "mad", "add", "sub", "mul", "min", "max", "neg", "abs") and fp:
        return "fma"
    if op in ("mul", "mad", "mul24", "mad24", "dp4a", "dp2a", "madc"):
        return "imad"
    if op in ("ex2", "lg2", "rcp", "rsqrt", "sqrt", "sin", "cos", "tanh"):
        return "sfu"
    if op == "div" and fp:
        return "sfu"
    if op in ("shfl", "redux", "vote", "match", "activemask"):
        return "shfl"
    if op == "cvt":
        return "cvt"
    if op in ("mbarrier", "bar", "barrier", "fence", "membar", "tcgen05", "elect", "nanosleep",
              "griddepcontrol", "setmaxnreg"):
        return "sync"
    return "alu"


def _write_slots(ins: ir.Instr) -> tuple:
    from ..emu.core.program import _dest_first, _regs
    if not ins.args or not _dest_first(ins):
        return ()
    return tuple(sorted({r.idx for r in _regs([ins.args[0]])}))


class ProgramInfo:
    """Static per-PC tables of a program for the simulator: class, register reads/writes, PTX line."""

    def __init__(self, prog, line_map: Optional[dict] = None):
        """``line_map``: {PTX line: (file, line)} (predict.py: the PTX's own ``.loc``, else emu/lineinfo.py's map as
        fault reports use, resolved to real files by srcloc.py)."""
        code = prog.code
        line_map = line_map or {}
        n = len(code)
        self.cls = [""] * n
        self.reads = [()] * n
        self.writes = [()] * n
        self.line = [0] * n
        self.text = [""] * n
        self.loc = [None] * n
        for i, e in enumerate(code):
            ins = e.ins
            self.line[i] = ins.line
            self.text[i] = ins.text.strip()
            self.loc[i] = line_map.get(ins.line) or ins.loc
            if e.kind != 0:
                self.cls[i] = "branch"
                self.reads[i] = e.reads
                continue
            self.cls[i] = instr_class(ins)
            self.reads[i] = e.reads
            self.writes[i] = _write_slots(ins)


# ------------------------------------------------------------------------------------------------ the recorder
class Recorder:
    """Attached to a TimedWave; collects one launch's trace across all its waves."""

    def __init__(self, trace: Trace, params):
        self.trace = trace
        self.params = params
        self.st = None
        self.cur_pc = -1
        self.cur_mem: dict = {}        # warp (wave-global) -> (kind, data) of the running memory instruction
        self.cur_async: list = []      # async ops submitted by the running instruction
        self.bar_arrivals: dict = {}   # (cta, id) -> threads arrived so far (generation counting)
        self.keep: list = []           # keep mbarrier objects alive (their id() names phases)
        self.in_async: Optional[AsyncOp] = None   # set while a cp.async completes: its st.load/st.store are not
                                                  # the running instruction's accesses (charged as the async op)
        self.cpa_open: dict = {}       # warp -> [(async id, lanes, group per lane)] of cp.async not yet waited for
        self.l1: dict = {}             # simulated SM -> memsys.L1Cache
        self.widen: dict = {}          # PTX pc -> bytes per lane of the SASS shared access made from it (if wider)
        self.l1_bytes = 256 * 1024     # set by predict.py from the carveout (memsys.l1_bytes)
        self.seen = np.zeros(1 << 16, np.uint64)   # per heap sector: bit (CTA slot % 64) = that CTA touched it
        self._slots: dict = {}         # global CTA -> slot
        self.fp: dict = {}             # (global CTA, PTX pc) -> [sector arrays] it read (the grid footprint, memsys.py)
        self.stored = [0]              # sectors stored by the recorded CTAs (memsys.infer: write-back share)
        self.stored_sec: list = []     # the sector indices of their global stores (unique: what L2 writes back)
        self.stored_bulk = [0]         # sectors of their bulk / TMA stores (addresses not kept: counted as unique)
        self.first_by_stream: dict = {}   # PTX pc -> first touches by their CTA that reached L2 (memsys.infer)
        self.cbar_gen: dict = {}       # (cta, warp) -> barrier.cluster arrivals so far (cluster_trace.py)
        self.partial: dict = {}        # (warp, barrier) -> lanes of a diverged warp that arrived so far

    # --- per-wave setup ------------------------------------------------------------------------------------------
    def attach(self, st):
        self.st = st
        self.warp_cta = st.cta_ids[np.arange(st.T // 32) * 32 // st.tpc].astype(np.int64)
        self.warp_in_cta = (np.arange(st.T // 32) * 32 % st.tpc) // 32
        valid_w = st.valid.reshape(-1, 32).any(axis=1)
        self.all_warps = np.flatnonzero(valid_w)
        self.keys = [(int(self.warp_cta[w]), int(self.warp_in_cta[w])) for w in range(st.T // 32)]
        if self.trace.cluster > 1:
            self.sm_of_warp = np.array([self.trace.cluster_of.get(int(c), (c, 0))[1] for c in self.warp_cta], np.int64)
        self.cta_slot = np.zeros(int(st.cta_ids.max()) + 1, np.int64)
        for c in st.cta_ids:
            self.cta_slot[int(c)] = self.cta_slot_of(int(c))
        for w in self.all_warps:
            self.trace.streams.setdefault(self.keys[w], [])
        st.engine = RecordingEngine(self)

    def warps_of(self, m) -> np.ndarray:
        st = self.st
        if m is None:
            live = st.status.reshape(-1, 32) != machine.EXITED
            return np.flatnonzero(live.any(axis=1))
        return np.flatnonzero(np.asarray(m).reshape(-1, 32).any(axis=1))

    # --- global memory ------------------------------------------------------------------------------------------
    def sectors(self, off: np.ndarray, nbytes: int, warps: np.ndarray) -> tuple:
        """(warp, sector) pairs, unique, of the accesses at byte offsets ``off`` into the heap."""
        first = off >> 5
        last = (off + nbytes - 1) >> 5
        if nbytes <= 32 and (first == last).all():
            sec = first
            w = warps
        else:
            span = int((last - first).max()) + 1
            sec = (first[:, None] + np.arange(span)).ravel()
            w = np.repeat(warps, span)
            keep = sec <= np.repeat(last, span)
            sec, w = sec[keep], w[keep]
        key = np.unique(w.astype(np.int64) << 40 | sec)
        return key >> 40, key & ((1 << 40) - 1)

    def _global(self, st, warps: np.ndarray, addr: np.ndarray, nbytes: int, write: bool, cache: bool):
        """Global access: sectors per warp; for loads the L1 (memsys.L1Cache of the warp's SM: ``cache`` False for
        .cg / .cv), the misses, which of them are the CTA's first touch of the sector, and the footprint sets."""
        off = addr.astype(np.int64) - GLOBAL_BASE
        uw, us = self.sectors(off, nbytes, warps)
        nw = st.T // 32
        tot = np.bincount(uw, minlength=nw)
        if write:
            u = np.unique(us)
            self.stored[0] += int(u.size)
            self.stored_sec.append(u)
            lines = np.bincount(np.unique(uw.astype(np.int64) << 40 | (us >> 2)) >> 40, minlength=nw)
            for w in np.flatnonzero(tot):
                prev = self.cur_mem.get(w)
                n, nl = int(tot[w]), int(lines[w])
                if prev is not None and prev[0] == GST:
                    n, nl = n + prev[1][0], nl + prev[1][1]
                self.cur_mem[w] = (GST, (n, nl))
            return
        miss = np.zeros(us.size, bool)
        sm_of = self.sm_of_warp[uw] if self.trace.cluster > 1 else None
        for sm in (np.unique(sm_of) if sm_of is not None else (0,)):
            part = np.flatnonzero(sm_of == sm) if sm_of is not None else np.arange(us.size)
            useq, inv = np.unique(us[part], return_inverse=True)
            hit_u = self.l1_for_sm(int(sm)).access(useq) if cache else np.zeros(useq.size, bool)
            # a sector two warps of this instruction miss on is fetched once: the first warp's miss
            first_pair = np.zeros(part.size, bool)
            _, fidx = np.unique(inv, return_index=True)
            first_pair[fidx] = True
            miss[part] = ~hit_u[inv] & first_pair
        mw, ms = uw[miss], us[miss]
        ctas = self.warp_cta[mw]
        bits = np.left_shift(np.uint64(1), (self.cta_slot[ctas] % 64).astype(np.uint64))
        self._grow(int(us.max()) + 1)
        fresh = (self.seen[ms] & bits) == 0
        np.bitwise_or.at(self.seen, ms, bits)
        misses = np.bincount(mw, minlength=nw)
        firsts = np.bincount(mw[fresh], minlength=nw)
        lines = np.bincount(np.unique(uw.astype(np.int64) << 40 | (us >> 2)) >> 40, minlength=nw)
        pc = self.cur_pc
        fb = self.first_by_stream
        fb[pc] = fb.get(pc, 0) + int(fresh.sum())
        cta_of = self.warp_cta[uw]
        for c in np.unique(cta_of):
            self.fp.setdefault((int(c), pc), []).append(us[cta_of == c])
        cm = self.cur_mem
        for w in np.flatnonzero(tot).tolist():
            d = memsys.GlobalAccess(int(tot[w]), int(misses[w]), int(firsts[w]), pc, int(lines[w]))
            prev = cm.get(w)
            if prev is not None and prev[0] == GLD:
                p = prev[1]
                d = memsys.GlobalAccess(d[0] + p[0], d[1] + p[1], d[2] + p[2], pc, d[4] + p[4])
            cm[w] = (GLD, d)

    def _grow(self, n: int):
        if n > self.seen.size:
            self.seen = np.concatenate([self.seen, np.zeros(max(n - self.seen.size, self.seen.size), np.uint64)])

    def l1_for_sm(self, sm: int) -> "memsys.L1Cache":
        """The L1 of simulated SM ``sm`` (one per cluster rank for cluster launches)."""
        l1 = self.l1.get(sm)
        if l1 is None:
            l1 = self.l1[sm] = memsys.L1Cache(self.l1_bytes)
        return l1

    def note_reads(self, cta: int, ptr_n: list, pc: int) -> tuple:
        """TMA / bulk-copy reads [(pointer, bytes)] by ``cta`` issued at PTX ``pc``: (sectors, first touches by the
        CTA, the access stream: pc)."""
        secs = [np.arange((ptr - GLOBAL_BASE) >> 5, ((ptr - GLOBAL_BASE) + n - 1 >> 5) + 1) for ptr, n in ptr_n]
        if not secs:
            return 0, 0, -1
        sec = np.unique(np.concatenate(secs))
        self._grow(int(sec.max()) + 1)
        bit = np.uint64(1) << np.uint64(int(self.cta_slot_of(cta)) % 64)
        fresh = (self.seen[sec] & bit) == 0
        self.seen[sec] |= bit
        self.fp.setdefault((int(cta), pc), []).append(sec)
        self.first_by_stream[pc] = self.first_by_stream.get(pc, 0) + int(fresh.sum())
        return int(sec.size), int(fresh.sum()), pc

    def cta_slot_of(self, cta: int) -> int:
        slot = self._slots.get(cta)
        if slot is None:
            slot = self._slots[cta] = len(self._slots)
        return slot

    def mem(self, st, space: str, sel: np.ndarray, addr: np.ndarray, nbytes: int, write: bool, cache: bool = True):
        """Called by TimedWave.load/store (after the access is validated) with resolved per-space addresses."""
        if sel.size == 0:
            return
        warps = st.gwarp[sel]
        if space == "global":
            self._global(st, warps, addr, nbytes, write, cache)
        elif space in ("shared", "shared::cluster"):
            a = addr.astype(np.int64)
            lanes = sel % 32
            if st.smem_rank_bits is not None:    # cluster launch: a peer's SMEM is a DSMEM access
                a, warps, keep = cluster_trace.split_dsmem(self, st, sel, warps, a, nbytes, write)
                if a.size == 0:
                    return
                lanes = lanes[keep]
            nw = st.T // 32
            wav = smem_wavefronts(warps, lanes, a, nbytes, nw)
            wide = self.widen.get(self.cur_pc, 0)      # ptxas made this access part of a wider SASS access
            w64 = smem_wavefronts(warps, lanes, a & ~7, 8, nw) if nbytes < 8 == wide else wav
            w128 = smem_wavefronts(warps, lanes, a & ~15, 16, nw) if nbytes < 16 <= wide else wav
            for w in np.flatnonzero(wav):
                d = SmemAccess(int(wav[w]), int(w64[w]), int(w128[w]), 1)
                prev = self.cur_mem.get(w)
                if prev is not None and prev[0] == SMEM:
                    d = SmemAccess(d.wav + prev[1].wav, d.w64 + prev[1].w64, d.w128 + prev[1].w128, 1)
                self.cur_mem[w] = (SMEM, d)
        elif space == "local":     # param / const: kernel-parameter and constant-bank operands, no memory event
            for w in np.unique(warps):
                self.cur_mem.setdefault(int(w), (LOCAL, 0))

    # --- mbarrier state snapshots -------------------------------------------------------------------------------
    def mbar_snapshot(self, ctas) -> dict:
        ts = self.st.side.get("mbarrier")
        if not ts:
            return {}
        snap = {}
        for c in ctas:
            tab = ts.get(int(c))
            if tab is None:
                continue
            for b in tab._bars.values():
                snap[id(b)] = (b, b.phase, b.pending, b.tx, b.valid)
        return snap

    def mbar_changes(self, before: dict, ctas) -> list:
        """[(bar, phase index contributed to, cta)] for barriers whose state changed since ``before``."""
        out = []
        ts = self.st.side.get("mbarrier") or {}
        for c in ctas:
            tab = ts.get(int(c))
            if tab is None:
                continue
            for b in tab._bars.values():
                old = before.get(id(b))
                if old is None:
                    continue   # init: not a contribution
                if (b.phase, b.pending, b.tx) != old[1:4]:
                    self.keep.append(b)
                    out.append((b, old[1], int(c)))
        return out


class RecordingEngine(machine.AsyncEngine):
    """The wave's async engine, recording each op at submit (issuing warp, pc) and its effects at completion."""

    def __init__(self, rec: Recorder):
        super().__init__()
        self.rec = rec
        self.meta: dict = {}

    def submit(self, op):
        rec = self.rec
        st = rec.st
        t = getattr(op, "thread", None)
        cta_w = getattr(op, "cta", None)
        name = type(op).__name__.lower()
        kind = {"_tensorload": "tma", "_bulkcopy": "bulk", "_tensorstore": "tma_store", "_commitop": "commit",
                "_arrive": "cp_async_arrive", "_copy": "cp_async"}.get(name, name.strip("_"))
        if kind == "bulk" and getattr(op, "direction", "") == "shared::cta->shared::cluster":
            kind = "bulk_dsmem"      # SMEM -> a peer CTA's SMEM over the SM-to-SM network
            a_bytes = int(getattr(op, "size", 0))
        elif kind == "bulk" and getattr(op, "direction", "") != "global->shared":
            kind = "bulk_store"
        if t is not None:
            w = int(st.gwarp[int(t)])
            gcta = int(rec.warp_cta[w])
        elif cta_w is not None:
            gcta = int(st.cta_ids[int(cta_w)])
            w = None
        else:
            w, gcta = None, -1
        if kind == "cp_async":
            self._submit_cp_async(op)
            super().submit(op)
            return
        a = AsyncOp(kind=kind, pc=rec.cur_pc, cta=gcta, line=op.ins.line if hasattr(op, "ins") else 0)
        if kind == "bulk_store":
            a.dram_bytes = int(getattr(op, "size", 0))
        elif kind == "tma_store":
            plan = getattr(op, "plan", None)
            a.dram_bytes = int(getattr(plan, "box_bytes", 0)) if plan is not None else 0
        elif kind == "bulk_dsmem":
            a.nbytes = a_bytes
        rec.stored[0] += a.dram_bytes // 32
        rec.stored_bulk[0] += a.dram_bytes // 32
        cluster_trace.note_targets(st, op, a)
        rec.trace.asyncs.append(a)
        self.meta[id(op)] = (len(rec.trace.asyncs) - 1, a)
        rec.cur_async.append((w, len(rec.trace.asyncs) - 1))
        super().submit(op)

    def _submit_cp_async(self, op):
        """A non-bulk cp.async (PTX ISA 9.7.9.25.3.1): one AsyncOp per issuing warp (its bytes are that warp's global
        read, its completion what that warp's cp.async.wait_group / wait_all waits for: ``cpa_open``)."""
        rec = self.rec
        st = rec.st
        warps = st.gwarp[op.sel]
        parts = []
        for w in np.unique(warps).tolist():
            k = np.flatnonzero(warps == w)
            a = AsyncOp(kind="cp_async", pc=rec.cur_pc, cta=int(rec.warp_cta[w]), line=op.ins.line)
            rec.trace.asyncs.append(a)
            aid = len(rec.trace.asyncs) - 1
            cid = rec.trace.new_contrib(CPA_KEY + (aid,))
            rec.trace.contribs[cid].parts = 1
            a.contribs.append(cid)
            rec.cpa_open.setdefault(w, []).append((aid, op.sel[k], np.asarray(op.group)[k]))
            parts.append((aid, a, k))
            rec.cur_async.append((w, aid))
        self.meta[id(op)] = parts

    def drain(self, st, until=None) -> int:
        n = 0
        while self.queue:
            op = self.queue.pop(0)
            self._complete(st, op)
            n += 1
            if until is not None and until(op):
                break
        return n

    def _complete(self, st, op):
        rec = self.rec
        meta = self.meta.pop(id(op), (None, None))
        if isinstance(meta, list):
            return self._complete_cp_async(st, op, meta)
        aid, a = meta
        ctas = range(st.nctas)
        cw = getattr(op, "cta", None)
        if cw is not None:
            ctas = cluster_trace.cluster_ctas(st, [int(cw)])   # multicast / peer copies signal peers' barriers
        elif hasattr(op, "ctas"):
            ctas = sorted({int(c) for c in np.atleast_1d(op.ctas)})
        before = rec.mbar_snapshot(ctas)
        heap = st.heap
        reads: list = []
        if a is not None and a.kind in ("tma", "bulk", "cp_async"):
            orig = heap.read_bytes

            def spy(ptr, n, _orig=orig):
                reads.append((int(ptr), int(n)))
                return _orig(ptr, n)
            heap.read_bytes = spy
            heap.gather_rows = False        # TMA loads read row by row through the spy (ops/bulk_copy.py)
            try:
                op.complete(st)
            finally:
                del heap.read_bytes
                del heap.gather_rows
        else:
            op.complete(st)
        if a is None:
            return
        if reads:
            a.sectors, a.first, a.stream = rec.note_reads(a.cta, reads, a.pc)
        for bar, phase, c in rec.mbar_changes(before, ctas):
            cid = rec.trace.new_contrib((id(bar), phase))
            rec.trace.contribs[cid].parts = 1
            a.contribs.append(cid)

    def _complete_cp_async(self, st, op, parts):
        """Complete a cp.async: its source bytes (up to src-size per lane; the zero-filled rest reads nothing) become
        each issuing warp's async read, through the same sectors / first-touch bookkeeping as TMA (note_reads)."""
        rec = self.rec
        rec.in_async = parts[0][1] if parts else None
        try:
            op.complete(st)
        finally:
            rec.in_async = None
        ss = np.asarray(op.src_size, np.int64)
        src = np.asarray(op.src, np.uint64)
        for aid, a, k in parts:
            reads = [(int(src[j]), int(ss[j])) for j in k.tolist() if ss[j] > 0]
            if reads:
                a.sectors, a.first, a.stream = rec.note_reads(a.cta, reads, a.pc)


def cp_async_waits(rec: Recorder, st, ins, warps, m) -> dict:
    """{warp: [async ids]} of the cp.async a cp.async.wait_group N / wait_all just waited for (PTX ISA 9.7.9.25.3.3:
    every copy of the thread's groups but the N most recent committed ones), removed from ``rec.cpa_open``."""
    s = st.side.get("cpasync")
    out: dict = {}
    if s is None:
        return out
    keep = int(ins.args[0].value) if ins.mods[1] == "wait_group" else 0
    limit = s.grp - keep
    act = np.ones(st.T, bool) if m is None else np.asarray(m, bool)
    for w in warps.tolist():
        left = []
        for aid, lanes, grp in rec.cpa_open.get(w, ()):
            if np.any(act[lanes] & (grp < limit[lanes])):
                out.setdefault(w, []).append(aid)
            else:
                left.append((aid, lanes, grp))
        if w in rec.cpa_open:
            rec.cpa_open[w] = left
    return out


# ------------------------------------------------------------------------------------------------ instrumentation
def instrument(prog, rec: Recorder):
    """A shallow copy of ``prog`` whose handlers record into ``rec`` (the original program is untouched)."""
    p2 = copy.copy(prog)
    ctx = isa.Ctx(prog)
    code = []
    for i, e in enumerate(prog.code):
        if e.fn is None:
            code.append(e)
            continue
        code.append(replace(e, fn=_wrap(i, e, ctx, rec)))
    p2.code = code
    return p2


def _operand_value(ctx, op, ty="u32"):
    if isinstance(op, ir.Addr):
        return ctx.address(op)
    return ctx.read(op, ty)


def _wrap(i: int, e, ctx, rec: Recorder):
    fn = e.fn
    ins = e.ins
    op, mods = ins.opcode, ins.mods
    trace = rec.trace
    kind = PLAIN
    rel_cluster = False
    cpa_wait = False
    if op in _BAR_OPS and mods and [m for m in mods if m not in ("cta", "aligned")][:1] in (["sync"], ["arrive"],
                                                                                          ["red"]):
        kind = BAR
        real = [m for m in mods if m not in ("cta", "aligned")]
        wait = real[0] in ("sync", "red")
        args = list(ins.args)
        if real[0] == "red":
            args = args[1:-1]
        id_rd = ctx.read(args[0], "u32")
        cnt_rd = ctx.read(args[1], "u32") if len(args) > 1 else None
    elif op == "mbarrier" and mods and mods[0] in _MBAR_CHANGE:
        kind = MB_CONTRIB
        bar_addr = next((a for a in ins.args if isinstance(a, ir.Addr)), None)
        tgt_rd = cluster_trace.target_reader(ctx, ins, bar_addr)
        rel_cluster = "cluster" in mods and "relaxed" not in mods    # default semantics: .release (9.7.13.15.13)
    elif cluster_trace.is_cluster_barrier(ins):
        kind = CBAR_ARRIVE if "arrive" in mods else CBAR_WAIT
    elif op == "mbarrier" and mods and mods[0] in ("try_wait", "test_wait"):
        kind = MB_WAIT
        addr_rd = ctx.address(ins.args[1])
        generic = not any(m.startswith("shared") for m in mods)
        pred_slot = ins.args[0].idx if isinstance(ins.args[0], ir.Reg) else None
    elif op == "tcgen05" and mods and mods[0] == "mma":
        kind = MMA
        from ..emu.ops.tcgen05 import _mma_kind_block
        mma_kind, mma_block = _mma_kind_block(ins)
        mma_cg = 2 if ins.has("cta_group::2") else 1
        mma_ts = isinstance(ins.args[1], ir.Addr)      # A from TMEM ([taddr]): the TS form
        idesc_rd = ctx.read(ins.args[3], "b32")
    elif op == "tcgen05" and mods and mods[0] == "cp":
        kind = MMA
        mma_kind, mma_block, idesc_rd, mma_ts = "cp", None, None, False
        mma_cg = 2 if ins.has("cta_group::2") else 1     # .cta_group::2: each CTA of the pair copies its own SMEM
        cp_nbytes = tcgen05_cp_bytes(ins)
    elif op == "tcgen05" and mods and mods[0] == "commit":
        kind = MB_CONTRIB   # its arrive happens in the async op; this records the issue
    elif op == "tcgen05" and mods and mods[0] == "ld":
        kind = TMEM_LD
    elif op == "cp" and mods[:1] == ("async",) and mods[1:2] in (("wait_group",), ("wait_all",)):
        kind = MB_WAIT
        cpa_wait = True
    elif op == "cp.async" or (op == "cp" and mods and mods[0] == "async"):
        kind = MB_CONTRIB
    streams = trace.streams

    def run_plain(st, m):
        rec.cur_pc = i
        rec.cur_async = []
        rec.cur_mem = {}
        rc = fn(st, m)
        warps = rec.warps_of(m)
        keys = rec.keys
        cm = rec.cur_mem
        if cm:
            for w in warps:
                x = cm.get(int(w))
                if x is None:
                    streams[keys[w]].append((i, PLAIN, None))
                else:
                    streams[keys[w]].append((i, x[0], x[1]))
        else:
            for w in warps:
                streams[keys[w]].append((i, PLAIN, None))
        if rec.cur_async:
            _attach_async(rec, warps, i)
        return rc

    if kind == PLAIN:
        run_plain.plain = True      # native_record.py: the native engine may run and log it
        return run_plain

    def run_event(st, m):
        rec.cur_pc = i
        rec.cur_m = m
        rec.cur_async = []
        rec.cur_mem = {}
        warps = rec.warps_of(m)
        ctas = sorted({int(x) for x in (st.cta_of[warps * 32])}) if warps.size else []
        before = rec.mbar_snapshot(cluster_trace.cluster_ctas(st, ctas)) if kind in (MB_CONTRIB,) else None
        extra = None
        if kind == MMA:
            extra = _mma_size(st, m, warps, mma_kind, mma_block, idesc_rd,
                              cp_nbytes if mma_kind == "cp" else 0, mma_cg, mma_ts)
        rc = fn(st, m)
        keys = rec.keys
        items = {int(w): [] for w in warps}
        if kind == BAR:
            ids = np.broadcast_to(np.asarray(id_rd(st)), (st.T,))
            cnts = np.broadcast_to(np.asarray(cnt_rd(st)), (st.T,)) if cnt_rd is not None else None
            for w in warps:
                t = int(w) * 32
                bid = int(ids[t])
                exp = int(cnts[t]) if cnts is not None else int(np.count_nonzero(st.valid[:st.tpc]))
                key = (int(rec.warp_cta[w]), bid)
                n = rec.bar_arrivals.get(key, 0)
                # a warp diverged around the barrier arrives in parts: only its last part arrives and waits
                part = cluster_trace.warp_part(rec, st, m, int(w), ("bar",) + key)
                rec.bar_arrivals[key] = n + part[0]
                if not part[1]:
                    continue
                gen = (n + part[0] - 1) // exp
                ck = ("bar",) + key + (gen,)
                cids = trace.phase_contribs.get(ck)
                if not cids:
                    cid = trace.new_contrib(ck)
                else:
                    cid = cids[0]
                trace.contribs[cid].parts += 1
                items[int(w)].append((BAR, (cid, ck, wait)))
        elif kind == MB_CONTRIB and before is not None:
            tgt = tgt_rd(st, m) if op == "mbarrier" else None     # per thread: the barrier's CTA (remote arrive)
            for bar, phase, c in rec.mbar_changes(before, cluster_trace.cluster_ctas(st, ctas)):
                cw, remote = cluster_trace.contributors(st, warps, c, tgt)
                cid = trace.new_contrib((id(bar), phase))
                trace.contribs[cid].parts = len(cw)
                trace.contribs[cid].remote = remote
                trace.contribs[cid].release_cluster = rel_cluster
                for w in cw:
                    items[w].append((MB_CONTRIB, cid))
        elif kind in (CBAR_ARRIVE, CBAR_WAIT):
            cluster_trace.record_cluster_barrier(rec, warps, kind, items)
        elif kind == MB_WAIT and cpa_wait:
            for w, aids in cp_async_waits(rec, st, ins, warps, m).items():
                items[w].extend((MB_WAIT, CPA_KEY + (aid,)) for aid in aids)
        elif kind == MB_WAIT:
            if pred_slot is not None:
                ok = np.asarray(st.r[pred_slot]).astype(bool)
            else:
                ok = np.ones(st.T, bool)
            addrs = np.broadcast_to(np.asarray(addr_rd(st), dtype=np.uint64), (st.T,))
            ts = st.side.get("mbarrier") or {}
            for w in warps:
                lanes = np.arange(int(w) * 32, int(w) * 32 + 32)
                sel = lanes if m is None else lanes[np.asarray(m)[lanes]]
                good = sel[ok[sel]]
                if not good.size:
                    continue
                t = int(good[0])
                a = int(addrs[t])
                if generic and (a >> WIN_SHIFT) == (SHARED_WIN >> WIN_SHIFT):
                    a -= SHARED_WIN
                tab = ts.get(int(st.cta_of[t]))
                bar = tab.find(a & cluster_trace.OFF_MASK) if tab is not None else None
                if bar is None or bar.phase == 0:
                    continue
                rec.keep.append(bar)
                trace.bar_addr[id(bar)] = bar.addr
                items[int(w)].append((MB_WAIT, (id(bar), bar.phase - 1)))
        elif kind == MMA and extra is not None:
            for w, x in extra.items():
                if w in items:
                    items[w].append((MMA, x))
        elif kind == TMEM_LD:
            nb = _tmem_ld_bytes(ins)
            for w in warps:
                items[int(w)].append((TMEM_LD, nb))
        cm = rec.cur_mem
        for w in warps:
            w = int(w)
            lst = items[w]
            if w in cm:
                lst.insert(0, cm[w])
            if not lst:
                streams[keys[w]].append((i, PLAIN, None))
            elif len(lst) == 1:
                streams[keys[w]].append((i, lst[0][0], lst[0][1]))
            else:
                streams[keys[w]].append((i, -1, lst))
        if rec.cur_async:
            _attach_async(rec, warps, i)
        return rc
    return run_event


def _attach_async(rec: Recorder, warps, i: int):
    """Issued async ops go into the issuing warp's stream right after the instruction that issued them."""
    streams, keys = rec.trace.streams, rec.keys
    for w, aid in rec.cur_async:
        if w is None:
            w = int(warps[0]) if len(warps) else None
        if w is None:
            continue
        streams[keys[w]].append((i, ASYNC, aid))
    rec.cur_async = []


def tcgen05_cp_bytes(ins: ir.Instr) -> int:
    """Bytes one tcgen05.cp moves from shared memory to TMEM: rows x bits of its .shape, x4 / x2 for .warpx4 / .warpx2
    (PTX ISA 9.7.16.8.6: shapes 128x256b, 4x256b, 128x128b, 64x128b.warpx2::*, 32x128b.warpx4)."""
    shape = next((m for m in ins.mods if "x" in m and m[0].isdigit() and m.endswith("b")), "128x256b")
    rows, bits = shape[:-1].split("x")
    mult = 4 if any(m.startswith("warpx4") for m in ins.mods) else 2 if any(m.startswith("warpx2")
                                                                              for m in ins.mods) else 1
    return int(rows) * int(bits) // 8 * mult


def _mma_size(st, m, warps, kind, block, idesc_rd, cp_bytes: int = 0, cta_group: int = 1, ts: bool = False) -> dict:
    """{warp: (kind, M, N, K, cta group, A from TMEM)} for the issuing threads of a tcgen05.mma; ("cp", bytes, 0, 0
    [, 2]) for a tcgen05.cp (a .cta_group::2 MMA is one MMA over a CTA pair: both SMs' tensor pipes, sim.py)."""
    out = {}
    sel = np.flatnonzero(st.status != machine.EXITED) if m is None else np.flatnonzero(m)
    for t in sel:
        w = int(st.gwarp[int(t)])
        if kind == "cp":
            out[w] = ("cp", cp_bytes, 0, 0) + ((2,) if cta_group == 2 else ())
            continue
        from ..emu.hw.tcgen05_mma import KIND_K, spec_from_idesc
        v = idesc_rd(st)
        idesc = int(np.asarray(v)[t]) if np.ndim(v) else int(v)
        try:
            spec = spec_from_idesc(kind, idesc & 0xFFFFFFFF, block=block, cta_group=cta_group)
            out[w] = (kind, spec.M, spec.N, KIND_K[kind])
        except Exception:   # an invalid descriptor faults in the handler itself
            out[w] = (kind, 128 * cta_group, 256, KIND_K.get(kind, 32))
        out[w] = out[w] + (cta_group, ts)
    return out


def _tmem_ld_bytes(ins: ir.Instr) -> int:
    """Bytes one warp reads from TMEM with this tcgen05.ld (32 lanes x shape bits x .num repeats)."""
    shape = next((mm for mm in ins.mods if mm.startswith(("16x", "32x"))), "32x32b")
    num = next((mm for mm in ins.mods if mm.startswith("x") and mm[1:].isdigit()), "x1")
    bits = {"32x32b": 32, "16x64b": 64, "16x128b": 128, "16x256b": 256, "16x32bx2": 64}.get(shape, 32)
    return 32 * bits // 8 * int(num[1:])


class TimedWave(machine.Wave):
    """A wave whose memory accesses are reported to the recorder (the access itself is the emulator's)."""

    recorder: Optional[Recorder] = None

    def load(self, ins, space, addr, m, dt, count=1, align=None):
        out = super().load(ins, space, addr, m, dt, count, align)
        self._note(ins, space, addr, m, dt, count, False)
        return out

    def store(self, ins, space, addr, m, values, dt, count=1):
        super().store(ins, space, addr, m, values, dt, count)
        self._note(ins, space, addr, m, dt, count, True)

    def _note(self, ins, space, addr, m, dt, count, write):
        rec = self.recorder
        if rec is None or rec.in_async is not None:
            return
        sel = np.arange(self.T) if m is None else np.flatnonzero(m)
        if sel.size == 0:
            return
        a = np.broadcast_to(np.asarray(addr, dtype=np.uint64), (self.T,))[sel]
        nbytes = np.dtype(dt).itemsize * count
        cache = not any(m in ("cg", "cv") for m in ins.mods)     # PTX ISA 9.7.9.8: .cg / .cv bypass L1
        for sp, s, aa in self._space_of(space, a, sel, ins):
            rec.mem(self, sp, s, aa, nbytes, write, cache)


def clone_cta(trace: Trace, src: int, dst: int) -> None:
    """Record CTA ``dst`` as a copy of the recorded CTA ``src`` (predict.py: CTAs assumed alike when emulating
    each would take too long): its warps' streams with every synchronisation renamed to ``dst``'s own (CTA-barrier
    generations, mbarrier phases, async copies and their completions), memory events as ``src`` recorded them."""
    cmap: dict = {}

    def key_of(k):
        if isinstance(k, tuple) and k and k[0] == "bar":
            return ("bar", dst) + k[2:]
        return ("clone", dst, k)

    def cid_of(c):
        n = cmap.get(c)
        if n is None:
            old = trace.contribs[c]
            n = cmap[c] = trace.new_contrib(key_of(old.key))
            nc = trace.contribs[n]
            nc.parts, nc.remote, nc.release_cluster = old.parts, old.remote, old.release_cluster
        return n

    amap: dict = {}

    def aid_of(a):
        n = amap.get(a)
        if n is None:
            old = trace.asyncs[a]
            new = replace(old, cta=dst, contribs=[cid_of(c) for c in old.contribs])
            trace.asyncs.append(new)
            n = amap[a] = len(trace.asyncs) - 1
        return n

    def ev(k, d):
        if k == BAR:
            cid, ck, wait = d
            return (k, (cid_of(cid), key_of(ck), wait))
        if k in (MB_CONTRIB, CBAR_ARRIVE):
            return (k, cid_of(d))
        if k == MB_WAIT and d[:1] == CPA_KEY:
            return (k, key_of(d))
        if k == MB_WAIT:
            return (k, (("clone", dst, d[0]), d[1]))
        if k == ASYNC:
            return (k, aid_of(d))
        return (k, d)
    for (c, wi), st in list(trace.streams.items()):
        if c != src:
            continue
        out = []
        for pc, k, d in st:
            if k == PLAIN:
                out.append((pc, k, d))
            elif k == -1:
                out.append((pc, -1, [ev(kk, dd) for kk, dd in d]))
            else:
                out.append((pc,) + ev(k, d))
        trace.streams[(dst, wi)] = out
    for bid, addr in list(trace.bar_addr.items()):
        trace.bar_addr[("clone", dst, bid)] = addr
    if src in trace.tmem_cols:
        trace.tmem_cols[dst] = trace.tmem_cols[src]
