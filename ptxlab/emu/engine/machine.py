"""The SIMT machine: a *wave* of CTAs executed in lock step as numpy vectors, with a min-PC scheduler.

Every register is a numpy array over all T threads of the wave (CTAs padded to whole warps).  The scheduler picks the
lowest PC among runnable threads and runs that basic block for exactly the threads there, so divergent paths
reconverge at the first common PC (PTX ISA 9.7.12.x; correct for every structured branch shape NVRTC emits).  A group
that keeps looping while others wait yields to them after SPIN_PICKS back edges (forward progress: a spin-wait on a
flag written by another warp, lane or CTA completes, as under Volta+ independent thread scheduling).
Threads leave the runnable set when they exit, wait at a CTA barrier, park on an mbarrier/TMEM allocation, or wait for
the rest of their warp at a ``.sync`` warp instruction.  When nothing can run, the async engine completes pending
asynchronous operations (TMA, tcgen05.mma/cp, bulk copies), which may wake parked threads; if nothing is pending
either, the kernel is deadlocked and the report says which warps wait where.
"""
from __future__ import annotations

import itertools
import time
from collections import Counter
from typing import Callable, Optional

import numpy as np

from ... import settings as _settings
from ...errors import EmuError
from ..core import isa
from ..core.memory import (CONST_WIN, GLOBAL_BASE, LOCAL_WIN, PARAM_WIN, POISON, SHARED_WIN, WIN_SHIFT, GlobalHeap)
from ..core.program import K_BRA, K_EXIT, K_NORMAL, K_TRAP, Program
from ..hw import proxy as _proxy
from ..hw import cluster as _cluster
from ..hw import clc as _clc
from ..checks import fidelity as _fidelity
from . import workers as _workers
from ..checks import initcheck as _initcheck
from ..checks import racecheck as _racecheck

from ..core.hooks import (ASYNC_COMPLETE_HOOKS, DEADLOCK_EXPLAINERS, EXPIRY_HOOKS,  # noqa: F401
                          PROGRESS_HOOKS, WAVE_END_HOOKS)
from ..core.thread_status import BAR, EXITED, PARK, RUN, SYNC  # noqa: F401  (re-exported)
_STATUS = {BAR: "waiting at a CTA barrier", PARK: "parked", SYNC: "waiting for its warp at a .sync instruction"}
# settings.py checks these when a device opens; import-time reads fall back to the default on a bad value
DEFAULT_BUDGET = int(_settings.get("PTXLAB_EMU_BUDGET", fallback=True))  # thread-instructions per launch
WAVE_THREADS = int(_settings.get("PTXLAB_EMU_WAVE_THREADS", fallback=True))
# forward progress (ptx_docs/emulator_checks.md "Forward progress"): after this many loop iterations (back-edge
# picks) of the lowest-PC group while other runnable threads wait at higher PCs, those others run first for as many
# picks, so a spin-wait on a flag that another warp (or lane) sets after the loop cannot starve its writer.
SPIN_PICKS = int(_settings.get("PTXLAB_EMU_SPIN_PICKS", fallback=True))


class AsyncEngine:
    """Pending asynchronous operations, completed in issue order (a legal schedule for every async proxy op)."""

    def __init__(self):
        self.queue: list = []

    def submit(self, op):
        """``op`` has ``complete(st)`` and ``describe() -> str``; optional ``thread`` (wave thread index)."""
        self.queue.append(op)

    @property
    def pending(self) -> bool:
        return bool(self.queue)

    def drain(self, st, until: Optional[Callable] = None) -> int:
        """Complete ops in order (all, or until ``until(op)`` returns True after completing it)."""
        n = 0
        while self.queue:
            op = self.queue.pop(0)
            for hook in ASYNC_COMPLETE_HOOKS:    # e.g. exitcheck.py: the destination CTA already exited
                hook(st, op)
            op.complete(st)
            n += 1
            if until is not None and until(op):
                break
        return n


class Wave:
    """Execution state of a group of CTAs run together.  Handlers see it as ``st`` (see API.md)."""

    def __init__(self, prog: Program, heap: GlobalHeap, cta_ids: list, grid: tuple, block: tuple,
                 params: bytes, dyn_smem: int, device=None, cluster=None):
        self.prog = prog
        self.cluster = cluster                            # device.cluster.ClusterLaunch or None (cluster.py)
        self.smem_rank_bits = None                        # per thread: cluster rank << 24 (shared addresses), or None
        self.heap = heap
        self.device = device
        self.kernel = prog.kernel
        self.grid = grid
        self.block = block
        self.ntid = block[0] * block[1] * block[2]
        self.tpc = (self.ntid + 31) // 32 * 32           # threads per CTA, padded to whole warps
        self.cta_ids = np.asarray(cta_ids, dtype=np.int64)
        self.nctas = len(cta_ids)
        self.T = T = self.nctas * self.tpc
        t = np.arange(T, dtype=np.int64)
        self.cta_of = t // self.tpc                       # wave-relative CTA index
        self.local_tid = t % self.tpc
        self.valid = self.local_tid < self.ntid
        lt = np.minimum(self.local_tid, self.ntid - 1)
        self.tid = (lt % block[0], (lt // block[0]) % block[1], lt // (block[0] * block[1]))
        gc = self.cta_ids[self.cta_of]
        self.ctaid = (gc % grid[0], (gc // grid[0]) % grid[1], gc // (grid[0] * grid[1]))
        if cluster is not None and cluster.size > 1:
            self.smem_rank_bits = (self.cta_of % cluster.size).astype(np.uint64) << np.uint64(_cluster.RANK_SHIFT)
        self.lane = (self.local_tid % 32).astype(np.uint32)
        self.warp = self.local_tid // 32                  # warp index within the CTA
        self.gwarp = t // 32                              # wave-global warp index
        self.r: list = _zero_registers(prog, T)
        self.pc = np.zeros(T, dtype=np.int64)
        self.status = np.where(self.valid, RUN, EXITED).astype(np.int8)
        self.park_key = np.zeros(T, dtype=np.int64)
        self.bar_id = np.zeros(T, dtype=np.int64)
        self.pending: dict = {}                           # reg slot → (mask, description): async results not ready
        self.side: dict = {}                              # per-family state (mbarriers, TMEM, bulk groups ...)
        self.engine = AsyncEngine()
        # memory
        self.smem_size = prog.dyn_base + dyn_smem if prog.has_dynamic_smem else max(prog.static_smem,
                                                                                     prog.dyn_base + dyn_smem)
        self.dyn_smem = dyn_smem
        self.smem_stride = (self.smem_size + 15) // 16 * 16 or 16
        self.smem = np.full(self.nctas * self.smem_stride, POISON, dtype=np.uint8)
        self.lstride = (prog.local_size + 15) // 16 * 16 or 16
        self.lmem = np.zeros(T * self.lstride, dtype=np.uint8)
        self.local_limit = prog.local_size                # grows with the call stack (callstack.py)
        self.params = np.frombuffer(bytearray(params.ljust((len(params) + 15) // 16 * 16 or 16, b"\0")),
                                    dtype=np.uint8)
        self.const = np.frombuffer(bytearray(bytes(prog.const_bank).ljust(
            (len(prog.const_bank) + 15) // 16 * 16 or 16, b"\0")), dtype=np.uint8)
        self._special: dict = {}
        self.steps = 0
        self.thread_instrs = 0
        self.progress = 0          # forward-progress events (barrier releases, wakes, async completions): watchdog.py
        self.bar_counts: dict = {}
        # optional initcheck (PTXLAB_EMU_INITCHECK=1 or EmuDevice(initcheck=True)): shared bytes written by generic
        # stores are flagged; a load whose bytes are unflagged AND still hold the poison byte was never written
        # (asynchronous writers such as TMA change the poison, so they need no flag; a 1-in-2^32 false positive for a
        # 4-byte load of data that happens to be 0xA5A5A5A5 is the documented price)
        self.initcheck = bool(getattr(device, "initcheck", False))
        self.smem_written = np.zeros(self.smem.size, dtype=np.bool_) if self.initcheck else None
        # reads of never-written global memory (checks/initcheck.py; the heap records writes when it is on)
        self.ginitcheck = heap.written is not None
        # shared-memory data races (checks/racecheck.py)
        self.race = None
        if getattr(device, "racecheck", False):
            _racecheck.instrument(prog)
            self.race = _racecheck.RaceShadow(self)
        # generic→async proxy check (proxy.py): shadow of SMEM bytes written by generic stores, only for kernels
        # that have an async-proxy SMEM reader (TMA store, bulk smem→gmem, tcgen05.cp/mma)
        self.proxy = _proxy.ProxyShadow(self) if _proxy.ENABLED and _proxy.program_has_async_smem_readers(prog) \
            else None

    # --- special registers (PTX ISA 10) ------------------------------------------------------------------------
    def special(self, name: str) -> np.ndarray:
        v = self._special.get(name)
        if v is None:
            v = self._make_special(name)
            if name not in ("clock", "clock64", "clock_hi", "globaltimer", "globaltimer_lo", "globaltimer_hi"):
                self._special[name] = v
        return v

    def _make_special(self, name: str) -> np.ndarray:
        T = self.T
        full = lambda x: np.full(T, x, dtype=np.uint64)  # noqa: E731
        base, _, comp = name.partition(".")
        ax = "xyz".index(comp) if comp in ("x", "y", "z") else None
        if base == "tid":
            return self.tid[ax].astype(np.uint32)
        if base == "ntid":
            return full(self.block[ax]).astype(np.uint32)
        if base == "ctaid":
            return self.ctaid[ax].astype(np.uint32)
        if base == "nctaid":
            return full(self.grid[ax]).astype(np.uint32)
        if "cluster" in base:
            return _cluster.special(self, name)
        if name == "laneid":
            return self.lane
        if name == "warpid":
            return self.warp.astype(np.uint32)
        if name == "nwarpid":
            return full((self.ntid + 31) // 32).astype(np.uint32)
        if name == "smid":
            return (self.cta_ids[self.cta_of] % 132).astype(np.uint32)
        if name == "nsmid":
            return full(132).astype(np.uint32)
        if name == "gridid":
            return np.zeros(T, dtype=np.uint64)
        if name.startswith("lanemask_"):
            lane = self.lane.astype(np.uint64)
            one = np.uint64(1)
            kind = name[9:]
            eq = (one << lane)
            v = {"eq": eq, "lt": eq - one, "le": (eq << one) - one, "gt": ~((eq << one) - one),
                 "ge": ~(eq - one)}[kind]
            return (v & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        if name == "clock":
            return full(self.steps & 0xFFFFFFFF).astype(np.uint32)
        if name == "clock_hi":                      # the upper 32 bits of %clock64 (PTX ISA 10.17)
            return full(self.steps >> 32).astype(np.uint32)
        if name == "clock64":
            return full(self.steps)
        if name.startswith("globaltimer"):
            ns = time.time_ns()
            v = full(ns)
            return v.astype(np.uint32) if name.endswith("lo") else (v >> np.uint64(32)).astype(np.uint32) \
                if name.endswith("hi") else v
        if name == "dynamic_smem_size":
            return full(self.dyn_smem).astype(np.uint32)
        if name in ("total_smem_size", "aggr_smem_size"):
            return full(self.smem_size).astype(np.uint32)
        raise EmuError(f"special register %{name} is not supported by the emulator (kernel {self.kernel})")

    # --- diagnostics -------------------------------------------------------------------------------------------
    def coords(self, t: int) -> tuple:
        return ((int(self.ctaid[0][t]), int(self.ctaid[1][t]), int(self.ctaid[2][t])),
                (int(self.tid[0][t]), int(self.tid[1][t]), int(self.tid[2][t])))

    def fault(self, ins, threads, msg: str, detail: str = ""):
        """Raise an EmuError located at ``ins`` for the first thread of ``threads`` (mask, index array or int)."""
        if threads is None:
            idx = np.flatnonzero(self.status == RUN)
        elif isinstance(threads, (int, np.integer)):
            idx = np.array([threads])
        elif threads.dtype == np.bool_:
            idx = np.flatnonzero(threads)
        else:
            idx = np.asarray(threads)
        t = int(idx[0]) if idx.size else 0
        block, thread = self.coords(t)
        extra = ""
        if idx.size > 1:
            nblocks = int(np.unique(self.cta_of[idx]).size)
            extra = f" (+{idx.size - 1} more threads" + (f", in {nblocks} blocks)" if nblocks > 1 else " of this block)")
        full = msg + (("\n  " + detail) if detail else "")
        full += f"\n  warp   : {int(self.warp[t])}, lane {int(self.lane[t])}{extra}"
        src = f"{ins.loc[0]}:{ins.loc[1]}" if ins is not None and ins.loc else None
        raise EmuError(full, kernel=self.kernel, ptx_line=ins.line if ins is not None else None,
                       ptx_text=ins.text if ins is not None else None, src_loc=src, block=block, thread=thread)

    # --- memory access (PTX ISA 5.1, 9.7.9.8 ld, 9.7.9.10 st) --------------------------------------------------
    def _space_of(self, space: str, addr: np.ndarray, sel: np.ndarray, ins) -> list:
        """Split selected threads by state space; returns [(space, sel_subset, addr_in_space)]."""
        if space != "generic":
            return [(space, sel, addr)]
        win = (addr >> np.uint64(WIN_SHIFT)).astype(np.int64)
        out = []
        for w in np.unique(win):
            k = win == w
            base = {GLOBAL_BASE >> WIN_SHIFT: ("global", 0), SHARED_WIN >> WIN_SHIFT: ("shared::cluster", SHARED_WIN),
                    LOCAL_WIN >> WIN_SHIFT: ("local", LOCAL_WIN), PARAM_WIN >> WIN_SHIFT: ("param", PARAM_WIN),
                    CONST_WIN >> WIN_SHIFT: ("const", CONST_WIN)}.get(int(w))
            if base is None:
                bad = sel[k]
                self.fault(ins, bad, "generic address outside every state space (wild or null pointer)",
                           f"address: {int(addr[k][0]):#x}")
            out.append((base[0], sel[k], addr[k] - np.uint64(base[1])))
        return out

    def _flat(self, ins, space: str, sel: np.ndarray, a: np.ndarray, nbytes: int, write: bool):
        """(buffer, flat byte offsets) for an access of nbytes at space addresses ``a`` by threads ``sel``."""
        if space == "global":
            off = (a - np.uint64(GLOBAL_BASE)).astype(np.int64)
            bad = self.heap.check(off, nbytes)
            if bad is not None:
                o = int(off[bad])
                self.fault(ins, sel[bad:], f"out-of-bounds global {'store' if write else 'load'} of {nbytes} bytes",
                           f"address: {GLOBAL_BASE + o:#x} — {self.heap.nearest(o)}")
            return self.heap.buf, off
        a64 = a.astype(np.int64)
        if space in ("shared", "shared::cluster"):
            cta, a64 = _cluster.resolve(self, ins, sel, a, nbytes, write, space)   # DSMEM: rank field, checks
            lim = self.smem_size
            if a64.size and (int(a64.max()) + nbytes > lim or int(a64.min()) < 0):
                k = int(np.flatnonzero((a64 + nbytes > lim) | (a64 < 0))[0])
                self.fault(ins, sel[k:], f"out-of-bounds shared {'store' if write else 'load'} of {nbytes} bytes",
                           f"shared address: {int(a64[k]):#x}; this CTA has {lim} bytes of shared memory "
                           f"({self.prog.static_smem} static + {self.dyn_smem} dynamic)")
            return self.smem, cta * self.smem_stride + a64
        if space == "local":
            lim = self.local_limit
            if a64.size and (int(a64.max()) + nbytes > lim or int(a64.min()) < 0):
                k = int(np.flatnonzero((a64 + nbytes > lim) | (a64 < 0))[0])
                self.fault(ins, sel[k:], f"out-of-bounds local {'store' if write else 'load'}",
                           f"local address {int(a64[k]):#x}, local frame is {lim} bytes")
            return self.lmem, sel.astype(np.int64) * self.lstride + a64
        if space in ("param", "const"):
            buf = self.params if space == "param" else self.const
            if write:
                self.fault(ins, sel, f"store to read-only .{space} space")
            if a64.size and (int(a64.max()) + nbytes > buf.size or int(a64.min()) < 0):
                k = int(np.flatnonzero(a64 + nbytes > buf.size)[0]) if int(a64.max()) + nbytes > buf.size else 0
                self.fault(ins, sel[k:], f"out-of-bounds .{space} load", f"address {int(a64[k]):#x}")
            return buf, a64
        self.fault(ins, sel, f"state space .{space} is not supported by the emulator")

    def load(self, ins, space: str, addr, m, dt: np.dtype, count: int = 1, align: int | None = None) -> np.ndarray:
        """Load ``count`` elements of ``dt`` per thread of mask ``m`` (None = all); zeros elsewhere.

        ``align`` (bytes) overrides the natural alignment rule (access size) for reads of objects whose own
        alignment is smaller than their size, e.g. a 128-byte CUtensorMap operand (64-byte aligned)."""
        dt = np.dtype(dt)
        T = self.T
        sel = np.arange(T) if m is None else np.flatnonzero(m)
        addr = np.broadcast_to(np.asarray(addr, dtype=np.uint64), (T,))[sel]
        nbytes = dt.itemsize * count
        shape = (T,) if count == 1 else (T, count)
        out = np.zeros(shape, dtype=dt)
        if sel.size == 0:
            return out
        need = nbytes if align is None else int(align)
        mis = addr % np.uint64(need) != 0
        if mis.any():
            k = int(np.flatnonzero(mis)[0])
            self.fault(ins, sel[k:], f"misaligned {nbytes}-byte load",
                       f"address {int(addr[k]):#x} is not a multiple of {need} (PTX ISA 5.4.2: accesses must be "
                       f"naturally aligned to the access size)")
        for sp, s, a in self._space_of(space, addr, sel, ins):
            buf, flat = self._flat(ins, sp, s, a, nbytes, False)
            if sp.startswith("shared"):
                if self.initcheck:
                    self._initcheck(ins, s, flat, nbytes)
                if self.race is not None:
                    self.race.access(ins, s, flat, nbytes, False)
            elif sp == "global" and self.ginitcheck:
                _initcheck.check_global(self, ins, s, flat, nbytes)
            view = buf.view(dt)
            idx = flat // dt.itemsize
            if count == 1:
                vals = view[idx]
            else:
                vals = view[idx[:, None] + np.arange(count)]
            if m is None and sp == space:
                return vals
            out[s] = vals
        return out

    def store(self, ins, space: str, addr, m, values, dt: np.dtype, count: int = 1):
        """Store ``values`` ((T,) or (T, count) of ``dt``) for the threads of mask ``m``."""
        dt = np.dtype(dt)
        T = self.T
        sel = np.arange(T) if m is None else np.flatnonzero(m)
        if sel.size == 0:
            return
        addr = np.broadcast_to(np.asarray(addr, dtype=np.uint64), (T,))[sel]
        shape = (T,) if count == 1 else (T, count)
        vals = np.broadcast_to(np.asarray(values), shape)[sel]
        if vals.dtype != dt:
            vals = vals.astype(dt) if vals.dtype.itemsize != dt.itemsize else vals.view(dt)
        nbytes = dt.itemsize * count
        mis = addr % np.uint64(nbytes) != 0
        if mis.any():
            k = int(np.flatnonzero(mis)[0])
            self.fault(ins, sel[k:], f"misaligned {nbytes}-byte store",
                       f"address {int(addr[k]):#x} is not a multiple of {nbytes} (PTX ISA 5.4.2)")
        parts = self._space_of(space, addr, sel, ins)
        for sp, s, a in parts:
            buf, flat = self._flat(ins, sp, s, a, nbytes, True)
            race = None
            if sp.startswith("shared"):
                if self.initcheck:
                    self.smem_written[flat[:, None] + np.arange(nbytes)] = True
                if self.proxy is not None:
                    self.proxy.mark(self, s, flat, nbytes)
                race = self.race
                if race is not None:
                    race.access(ins, s, flat, nbytes, True)
            elif sp == "global" and self.ginitcheck:
                self.heap.mark(flat, nbytes)
            view = buf.view(dt)
            idx = flat // dt.itemsize
            v = vals if len(parts) == 1 else vals[np.isin(sel, s)]
            if count == 1:
                view[idx] = v
            else:
                view[idx[:, None] + np.arange(count)] = v
            if race is not None:
                race.check_store_values(ins, s, buf, flat, v, dt, count)

    def _initcheck(self, ins, sel: np.ndarray, flat: np.ndarray, nbytes: int):
        idx = flat[:, None] + np.arange(nbytes)
        never = (~self.smem_written[idx] & (self.smem[idx] == POISON)).all(axis=1)
        if never.any():
            k = int(np.flatnonzero(never)[0])
            cta = int(flat[k]) // self.smem_stride      # the owning CTA (a cluster peer for a DSMEM load)
            self.fault(ins, sel[never], "initcheck: read of never-written shared memory",
                       f"shared address {int(flat[k]) - cta * self.smem_stride:#x}"
                       f"{f' of cluster rank {_cluster.rank_of(self, cta)}' if self.cluster is not None else ''} "
                       f"({nbytes} bytes) was not written by "
                       f"any store or asynchronous copy before this load; initialize it or add the missing "
                       f"barrier/wait")

    def smem_of(self, cta: int) -> np.ndarray:
        """The shared-memory bytes of wave-relative CTA ``cta`` (a writable view)."""
        o = cta * self.smem_stride
        return self.smem[o: o + self.smem_size]

    # --- clusters (cluster.py; API.md "Clusters") ----------------------------------------------------------------
    def cluster_rank(self, cta: int) -> int:
        """%cluster_ctarank of wave-relative CTA ``cta``."""
        return int(_cluster.rank_of(self, cta))

    def cluster_peer(self, cta: int, rank: int) -> int:
        """Wave-relative CTA index of cluster rank ``rank`` in ``cta``'s cluster (faults-free; rank < cluster size)."""
        if not 0 <= int(rank) < _cluster.size(self):
            raise EmuError(f"cluster_peer: rank {rank} is outside the cluster of {_cluster.size(self)} CTAs",
                           kernel=self.kernel)
        return int(_cluster.peer(self, cta, rank))

    def peer_smem(self, cta: int, rank: int) -> np.ndarray:
        """Shared-memory bytes of cluster rank ``rank`` in ``cta``'s cluster (a writable view)."""
        return self.smem_of(self.cluster_peer(cta, rank))

    # --- thread-state control for handlers ---------------------------------------------------------------------
    def park(self, m, key: int):
        """Park the threads of ``m`` until ``wake(key)``; the instruction after the current one runs next."""
        sel = np.arange(self.T) if m is None else m
        self.status[sel] = PARK
        self.park_key[sel] = key
        self._parked_keys.add(key)

    def wake(self, key: int):
        if key in self._parked_keys:
            self.progress += 1
            w = (self.status == PARK) & (self.park_key == key)
            self.status[w] = RUN
            self._parked_keys.discard(key)

    def set_pending(self, slots, m, what: str):
        """Mark register slots as holding asynchronous results not yet valid for the threads in ``m``."""
        mm = np.ones(self.T, bool) if m is None else m.copy()
        for s in slots:
            old = self.pending.get(s)
            self.pending[s] = (mm if old is None else (old[0] | mm), what)

    def clear_pending(self, m, what_prefix: str = ""):
        mm = np.ones(self.T, bool) if m is None else m
        for s in list(self.pending):
            pm, what = self.pending[s]
            if what.startswith(what_prefix):
                pm = pm & ~mm
                if pm.any():
                    self.pending[s] = (pm, what)
                else:
                    del self.pending[s]


def _zero_registers(prog: Program, T: int) -> list:
    """One zeroed (T,) array per register: rows of one block per storage dtype (a kernel after inlining can have
    thousands of registers; one allocation each made the start of every wave slow)."""
    from ..core.types import BITS, STORAGE
    kinds = getattr(prog, "_reg_storage", None)
    if kinds is None:
        kinds = prog._reg_storage = [STORAGE[1 if ty == "pred" else BITS[ty]] for ty in prog.reg_types]
    blocks = {dt: iter(np.zeros((sum(1 for k in kinds if k == dt), T), dt)) for dt in set(kinds)}
    return [next(blocks[dt]) for dt in kinds]




class Scheduler:
    """Runs a Wave to completion."""

    def __init__(self, st: Wave, budget: int = DEFAULT_BUDGET, watch=None):
        self.st = st
        self.budget = budget            # thread-instructions this wave may still execute (watchdog.py)
        self.watch = watch              # watchdog.LaunchWatch of the launch (stall limit, per-launch budget)
        st._parked_keys = set()
        self.code = st.prog.code
        self.ends = st.prog.block_end

    def run(self):
        st = self.st
        T = st.T
        status, pc = st.status, st.pc
        last_p, back, later, quantum = -1, 0, None, 0   # forward progress (SPIN_PICKS)
        while True:
            runnable = status == RUN
            nrun = int(np.count_nonzero(runnable))
            if nrun == 0:
                later = None
                if st.engine.pending:
                    st.progress += st.engine.drain(st)
                    continue
                if (status == EXITED).all():
                    break
                if any(h(st) for h in PROGRESS_HOOKS) or any(h(st) for h in EXPIRY_HOOKS):
                    continue
                self._deadlock()
            if later is not None:        # a spinning group yields: the others run first for a quantum
                quantum -= 1
                others = runnable & ~later
                n_others = int(np.count_nonzero(others))
                if n_others == 0 or quantum <= 0:
                    later = None
                else:
                    runnable, nrun = others, n_others
            calls = st.side.get("calls")
            if calls is not None:        # real calls (callstack.py): the deepest frames run first, so a call
                runnable, nrun = calls.deepest(runnable, nrun)   # reconverges at its return point
            if nrun == T:
                p = int(pc.min())
                if int(pc.max()) == p:
                    m = None
                else:
                    m = pc == p
            else:
                p = int(pc[runnable].min())
                m = runnable & (pc == p)
            if m is None or (p > last_p and back == 0) or int(np.count_nonzero(m)) == nrun:
                back = 0                 # converged, or no loop yet: nothing waits behind a spinning group
            elif p <= last_p:            # the lowest group took a back edge while others wait at higher PCs
                back += 1
                if back >= SPIN_PICKS:
                    later = m.copy() if later is None else (later | m)
                    quantum, back = SPIN_PICKS, 0
            last_p = p
            if (status == SYNC).any():
                w = (status == SYNC) & (pc == p)
                if w.any():
                    status[w] = RUN
                    m = (m if m is not None else np.ones(T, bool)) | w
            self._run_from(p, m)
            if st.thread_instrs > self.budget:
                self._watchdog()
        for hook in WAVE_END_HOOKS:
            hook(st)

    def _run_from(self, p: int, m):
        """Run blocks starting at ``p`` for mask ``m`` while the group stays whole and converged."""
        st = self.st
        code, ends, r = self.code, self.ends, st.r
        pc, status = st.pc, st.status
        T = st.T
        budget = self.budget
        watch = self.watch
        while True:
            e_end = ends[p]
            n_active = T if m is None else int(np.count_nonzero(m))
            st.steps += 1
            if st.thread_instrs > budget:
                self._watchdog()
            if watch is not None and not st.steps & 63:
                watch.tick(self)
            i = p
            while i < e_end:
                e = code[i]
                if e.kind != K_NORMAL:
                    break
                gm = m
                if e.guard >= 0:
                    g = r[e.guard]
                    if e.gneg:
                        g = ~g
                    gm = g if m is None else (g & m)
                    if not gm.any():
                        i += 1
                        continue
                if st.pending and e.reads:
                    self._check_pending(e, gm)
                rc = e.fn(st, gm)
                if rc:
                    st.thread_instrs += n_active * (i - p + 1)
                    self._after_rc(i, m, gm, rc)
                    return
                i += 1
            st.thread_instrs += n_active * (i - p)
            if i >= e_end:   # fell through into the next block
                nxt = e_end
                if m is None:
                    pc[:] = nxt
                    p = nxt
                    continue
                pc[m] = nxt
                return
            e = code[i]
            if e.kind == K_BRA:
                if e.guard < 0:
                    if m is None:
                        pc[:] = e.target
                        p = e.target
                        continue
                    pc[m] = e.target
                    return
                g = r[e.guard]
                if e.gneg:
                    g = ~g
                if m is None:
                    if g.all():
                        pc[:] = e.target
                        p = e.target
                        continue
                    if not g.any():
                        pc[:] = i + 1
                        p = i + 1
                        continue
                    pc[:] = np.where(g, e.target, i + 1)
                    return
                pc[m] = np.where(g[m], e.target, i + 1)
                return
            if e.kind == K_EXIT:
                gm = m
                if e.guard >= 0:
                    g = r[e.guard]
                    if e.gneg:
                        g = ~g
                    gm = g if m is None else (g & m)
                    rest = (np.ones(T, bool) if m is None else m) & ~gm
                    pc[rest] = i + 1
                if gm is None:
                    status[:] = EXITED
                else:
                    status[gm] = EXITED
                return
            if e.kind == K_TRAP:
                st.fault(e.ins, m, "the kernel executed 'trap' (a device-side abort, e.g. a failed assert)")

    def _after_rc(self, i: int, m, gm, rc: int):
        """Thread states after instruction ``i`` returned control code ``rc`` for ``gm`` (of the group ``m``)."""
        st = self.st
        T, pc, status = st.T, st.pc, st.status
        if rc == isa.RETRY:
            # threads of gm wait at this instruction; the others of m continue after it
            sel = np.ones(T, bool) if gm is None else gm
            early = (status == SYNC) & (pc == i)
            if early.any():      # lanes that got here first (forward progress) wait here: all retry
                status[early] = RUN          # together from this instruction at the next pick
            else:
                status[sel] = SYNC
            pc[sel] = i
            rest = (np.ones(T, bool) if m is None else m) & ~sel
            pc[rest] = i + 1
        elif rc == isa.JUMP:
            # call/ret (callstack.py) set the pc of gm's threads; the others of m continue after it
            if gm is not m:
                rest = (np.ones(T, bool) if m is None else m) & ~gm
                pc[rest] = i + 1
        else:
            if m is None:
                pc[:] = i + 1
            else:
                pc[m] = i + 1

    def _check_pending(self, e, gm):
        st = self.st
        for s in e.reads:
            pend = st.pending.get(s)
            if pend is None:
                continue
            pm, what = pend
            hit = pm if gm is None else (pm & gm)
            if hit.any():
                # default: warn, the value is the computed one (ptxas scoreboards LDTM results and guards wgmma
                # accumulators with WARPGROUP.DEPBAR); strict: error.  The rule comes from the writer (fidelity.py).
                rule, fix = _fidelity.PENDING_RULES["wgmma" if what.startswith("wgmma") else "tcgen05.ld"]
                _fidelity.violation(st, e.ins, hit, rule,
                                    f"register {st.prog.reg_names[s]} is read before the asynchronous {what} "
                                    f"that writes it has completed", fix)
                st.clear_pending(hit, what)

    def _where_summary(self, mask) -> str:
        st = self.st
        rows = Counter()
        for t in np.flatnonzero(mask):
            rows[(int(st.cta_of[t]), int(st.warp[t]), int(st.pc[t]), int(st.status[t]))] += 1
        lines = []
        for (c, w, p, s), n in sorted(rows.items())[:24]:
            if s in (BAR, PARK) and p > 0:
                p -= 1          # waiting threads have already moved past the instruction they wait at
            ins = self.code[p].ins if p < len(self.code) else None
            block = st.coords(int(np.flatnonzero(st.cta_of == c)[0]))[0]
            where = f"PTX line {ins.line}: {ins.text.strip()}" if ins is not None else "?"
            if ins is not None and ins.loc:
                where += f" [{ins.loc[0]}:{ins.loc[1]}]"
            lines.append(f"    block {block} warp {w}: {n} threads {_STATUS.get(s, 'running')} at {where}")
        if len(rows) > 24:
            lines.append(f"    ... {len(rows) - 24} more groups")
        return "\n".join(lines)

    def _deadlock(self):
        st = self.st
        waiting = st.status != EXITED
        detail = self._where_summary(waiting)
        extra = []
        for fn in DEADLOCK_EXPLAINERS:
            s = fn(st)
            if s:
                extra.append(s)
        raise EmuError("deadlock: no thread can make progress and no asynchronous operation is pending\n"
                       "  waiting threads:\n" + detail + ("\n" + "\n".join(extra) if extra else "") +
                       "\n  what to do: check barrier thread counts, mbarrier arrival counts/expect_tx bytes and "
                       "phase parity, and that every thread reaches each bar.sync",
                       kernel=st.kernel)

    def _watchdog(self):
        if self.watch is not None:
            self.watch.budget_report(self)
        st = self.st
        detail = self._where_summary(st.status == RUN)
        raise EmuError(f"instruction budget exceeded: {st.thread_instrs:,} thread-instructions executed "
                       f"(limit {self.budget:,}; set PTXLAB_EMU_BUDGET to raise it) — a runaway loop or a spin "
                       f"wait that can never succeed\n  running threads:\n{detail}", kernel=st.kernel)




def run_kernel(prog: Program, heap: GlobalHeap, grid: tuple, block: tuple, params: bytes, dyn_smem: int,
               device=None, budget: int = DEFAULT_BUDGET, cluster=None, stall_s: Optional[float] = None,
               scheduler: Optional[Callable] = None) -> dict:
    """Run all CTAs of a launch, in waves of up to WAVE_THREADS threads (whole clusters: a cluster's CTAs are
    co-resident, cluster.py).  Returns run statistics.
    ``budget`` (thread-instructions) and ``stall_s`` (seconds without progress) apply to the whole launch.
    ``scheduler(st, budget, watch)`` makes the scheduler of each wave (default: the interpreter's ``Scheduler``;
    the native engine passes its own, engine/native/runner.py)."""
    make = scheduler or Scheduler
    from ..checks import watchdog
    watchdog.preflight(prog, grid, block, budget, prog.kernel)
    watch = watchdog.LaunchWatch(prog.kernel, budget,
                                 watchdog.stall_seconds_default() if stall_s is None else stall_s)
    nctas = grid[0] * grid[1] * grid[2]
    tpc = (block[0] * block[1] * block[2] + 31) // 32 * 32
    csize = cluster.size if cluster is not None else 1
    per_wave = max(1, min(nctas, WAVE_THREADS // tpc)) // csize * csize or csize
    order = _cluster.wave_order(grid, cluster.dims) if cluster is not None else None
    stats = {"thread_instrs": 0, "blocks": 0, "waves": 0}
    # clusters not yet started, in launch order; clusterlaunchcontrol.try_cancel takes clusters from it (hw/clc.py)
    queue = _clc.LaunchQueue(order if order is not None else range(nctas), csize, per_wave, grid,
                             getattr(device, "clc", None), _clc.wave_ctas_cap(device))
    logs = (getattr(device, "fidelity_log", None), getattr(device, "emu_warnings", None))

    def run_wave(ids) -> dict:
        n_logs = [len(x) if x is not None else 0 for x in logs]
        t0 = time.perf_counter()
        st = Wave(prog, heap, ids, grid, block, params, dyn_smem, device, cluster=cluster)
        st.launch_queue = queue
        watch.start_wave()
        make(st, watch.remaining(), watch).run()
        watch.done += st.thread_instrs
        return {"thread_instrs": st.thread_instrs, "blocks": st.steps, "seconds": time.perf_counter() - t0,
                "warned": any(x is not None and len(x) > n for x, n in zip(logs, n_logs))}

    waves, done, nw, first = queue.waves(), None, 1, []
    if _workers.independent_waves(prog) is None and _workers.workers() > 1:      # engine/workers.py
        waves = list(waves)
        nw = _workers.parallel_plan(prog, device, len(waves))
        if nw > 1 and not _workers.explicit():   # default worker count: the first wave decides whether forking pays
            first = [run_wave(waves[0])]
            waves = waves[1:]
            nw = _workers.worth_it(first[0]["seconds"], len(waves), nw, heap)
        if nw > 1:
            done = _workers.run_parallel(waves, run_wave, heap, nw)
            left = watch.budget - sum(s["thread_instrs"] for s in first)
            for s in done or ():
                if s["thread_instrs"] > left:        # the serial run stops at this wave: let it say so
                    done = None
                    break
                left -= s["thread_instrs"]
    for s in itertools.chain(first, done if done is not None else map(run_wave, waves)):
        stats["thread_instrs"] += s["thread_instrs"]
        stats["blocks"] += s["blocks"]
        stats["waves"] += 1
    stats["workers"] = 1 if done is None else nw
    stats.update(queue.stats())
    return stats
