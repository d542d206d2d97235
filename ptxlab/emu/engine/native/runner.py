"""The native engine's scheduler: ``machine.Scheduler`` with ``_run_from`` done by engine.c's ``ptx_run``.

Everything above ``_run_from`` -- picking the lowest-PC group, divergence and reconvergence, forward progress,
barriers, parking, the asynchronous engine, deadlock and watchdog reports -- is the interpreter's own code.  The
native code runs blocks of the kernel's translated records (translate.py); for an instruction it hands back
(``R_PY``) this runner does exactly what the interpreter's ``_run_from`` loop does for one instruction (guard,
pending-register check, the handler, its return code) and resumes the native code after it.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ....errors import EmuError
from ...core.program import Program
from ...hw import cluster as _cluster
from ..machine import Scheduler
from . import build
from .record import TILE
from .translate import translate
from .regfile import RegFile

R_DONE, R_PY, R_TRAP, R_TICK, R_WATCHDOG, R_FLUSH = -1, -2, -3, -4, -5, -6
_P = ctypes.c_void_p
_I = ctypes.c_int64


class Ctx(ctypes.Structure):
    """Mirror of ``Ctx`` in runtime.h (same order)."""
    _fields_ = [("T", _I), ("R", _P), ("pend", _P), ("npend", _I), ("pc", _P), ("status", _P), ("mask", _P),
                ("na", _I), ("steps", _I), ("ti", _I), ("budget", _I), ("watch", _I), ("at", _I), ("blk", _I),
                ("spec", _P),
                ("ops", _P), ("ends", _P), ("roff", _P), ("reads", _P), ("pyonly", _P),
                ("S", _P * 6), ("V", _P * 4), ("act", _P),
                ("heap", _P), ("alo", _P), ("ahi", _P), ("nalloc", _I), ("gwritten", _P),
                ("smem", _P), ("smem_size", _I), ("smem_stride", _I), ("cta_of", _P), ("csize", _I),
                ("smem_py", _I),
                ("lmem", _P), ("lstride", _I), ("local_limit", _I), ("params", _P), ("params_size", _I),
                ("cbank", _P), ("cbank_size", _I), ("rank_bits", _P), ("addr", _P), ("afull", _P), ("luts", _P),
                ("log", _P), ("loglen", _P), ("logcap", _I), ("lognmax", _I), ("gw", _P), ("ngw", _I), ("sel", _P)]


_TABLES: dict = {}        # translations by what they depend on: another device loading the same module reuses them


def _text_key(module) -> str:
    """sha256 of a parsed module's PTX, once per module object (4 MB for a CUTLASS example)."""
    k = getattr(module, "text_sha256", None)         # set by the device's loader, which hashed it already
    if k is None:
        import hashlib
        k = hashlib.sha256(module.text.encode()).hexdigest()
        try:
            module.text_sha256 = k
        except AttributeError:
            pass
    return k


def _tables(prog: Program):
    import os
    # the symbols as a tuple (dict order is the module's): hashing it is ~10x cheaper than a frozenset of 18,000 pairs
    key = (_text_key(prog.module), prog.kernel, os.environ.get("PTXLAB_EMU_INLINE", "1"), tuple(prog.syms.items()))
    t = _TABLES.get(key)
    if t is None:
        if len(_TABLES) >= 16:
            _TABLES.pop(next(iter(_TABLES)))
        from ..decode_cache import no_gc
        with no_gc():      # one record per instruction next to a parsed module of millions of objects
            t = _TABLES[key] = translate(prog)
    return t


class Kernel:
    """A Program's translated form (built once per Program and kept on it)."""

    def __init__(self, prog: Program):
        self.tables = _tables(prog)
        lib = build.engine()
        self.run = lib.ptx_run
        self.run.argtypes = [ctypes.POINTER(Ctx), _I, _I]
        self.run.restype = _I
        self.fns = [e.fn for e in prog.code]     # the handlers the translations stand for
        self.native = self.tables.native


def kernel_of(prog: Program) -> Kernel:
    k = getattr(prog, "_native_kernel", None)
    if k is None:
        k = prog._native_kernel = Kernel(prog)
    return k


def _ptr(a) -> int:
    return 0 if a is None else a.ctypes.data


class NativeScheduler(Scheduler):
    def __init__(self, st, budget, watch=None, kernel: Kernel = None):
        super().__init__(st, budget, watch)
        self.k = kernel
        st.r = RegFile(st.r)
        self.keep = {}                       # arrays whose pointers the context holds
        c = self.c = Ctx()
        c.T = st.T
        c.R = st.r.ptrs.ctypes.data
        c.budget = budget
        c.watch = 1 if watch is not None else 0
        self.pend = np.zeros(max(len(st.r), 1), np.uint8)
        c.pend = _ptr(self.pend)
        # interpreter closures replaced after decode (e.g. a checker wrapping a handler) stay interpreted
        self.pyonly = np.array([0 if (e.fn is f or not nat) else 1 for e, f, nat in
                                zip(st.prog.code, kernel.fns, kernel.native)], np.uint8)
        c.pyonly = _ptr(self.pyonly)
        tb = kernel.tables
        c.ops, c.ends, c.roff, c.reads = _ptr(tb.ops), _ptr(tb.ends), _ptr(tb.roff), _ptr(tb.reads)
        luts = tb.luts or []
        self.luts = (_P * max(len(luts), 1))(*[_ptr(a) for a in luts])
        c.luts = ctypes.cast(self.luts, _P)
        self.scratch = np.zeros((10, TILE), np.uint64)
        self.act = np.zeros(TILE, np.uint8)
        self.addr = np.zeros(max(st.T, 1), np.uint64)
        c.addr = _ptr(self.addr)
        for k in range(6):
            c.S[k] = self.scratch[k].ctypes.data
        for k in range(4):
            c.V[k] = self.scratch[6 + k].ctypes.data
        c.act = _ptr(self.act)
        specs = []
        for name in tb.specials:
            try:
                specs.append(np.ascontiguousarray(st.special(name).astype(np.uint64)))
            except EmuError:
                specs.append(None)                 # the interpreter raises when an instruction reads it
        self.keep["spec"] = specs
        self.spec = (_P * max(len(specs), 1))(*[_ptr(a) for a in specs])
        c.spec = ctypes.cast(self.spec, _P)
        self._mem_ids = None
        self._sync_mem()

    # --- the execution log (timing recording: timing/native_record.py) ---------------------------------------
    def enable_log(self, cap: int = 4096) -> None:
        """Log, per warp, the pcs of the instructions the native code runs (Ctx.log); ``flush_log`` receives them
        before every instruction Python runs and at the end of every block run, so a warp's logged and Python-run
        instructions keep their order."""
        W = max(self.st.T // 32, 1)
        self.log = np.zeros((W, cap), np.int32)
        self.loglen = np.zeros(W, np.int64)
        self._gw = np.zeros(W, np.int64)
        self._sel = np.zeros(W, np.int64)
        c = self.c
        c.log, c.loglen, c.logcap, c.lognmax = _ptr(self.log), _ptr(self.loglen), cap, 0
        c.gw, c.sel = _ptr(self._gw), _ptr(self._sel)

    def _flush(self) -> None:
        if self.c.lognmax:
            self.flush_log(self.log, self.loglen)
            self.loglen[:] = 0
            self.c.lognmax = 0

    def flush_log(self, log: np.ndarray, loglen: np.ndarray) -> None:
        """Receive the logged pcs: row w holds warp w's first loglen[w] (subclasses record them)."""

    # --- keeping the context's view of the wave current ------------------------------------------------------
    def _sync_mem(self):
        st = self.st
        heap = st.heap
        written = getattr(heap, "written", None)
        smem_py = (1 if (st.initcheck or getattr(st, "race", None) is not None) else 0) | \
            (2 if (st.initcheck or st.proxy is not None or getattr(st, "race", None) is not None) else 0)
        ids = (id(heap.buf), len(heap._starts), id(written), id(st.lmem), st.local_limit, id(st.pc), id(st.status),
               smem_py, id(st.smem))
        if ids == self._mem_ids:
            return
        self._mem_ids = ids
        c = self.c
        alo = np.asarray(heap._starts, np.int64)
        ahi = np.asarray(heap._ends, np.int64)
        # a flag that turns true later (a bulk copy wrote the whole allocation) only costs the per-byte look-up
        afull = np.fromiter((a.full for a in heap._items), np.uint8, len(heap._items)) if len(alo) else \
            np.zeros(1, np.uint8)
        self.keep.update(alo=alo, ahi=ahi, afull=afull)
        c.afull = _ptr(afull)
        c.heap, c.alo, c.ahi, c.nalloc = _ptr(heap.buf), _ptr(alo), _ptr(ahi), len(alo)
        c.gwritten = _ptr(written)
        c.smem, c.smem_size, c.smem_stride = _ptr(st.smem), st.smem_size, st.smem_stride
        c.cta_of, c.csize = _ptr(st.cta_of), _cluster.size(st) if st.cluster is not None else 1
        c.smem_py = smem_py
        c.lmem, c.lstride, c.local_limit = _ptr(st.lmem), st.lstride, st.local_limit
        c.params, c.params_size = _ptr(st.params), st.params.size
        c.cbank, c.cbank_size = _ptr(st.const), st.const.size
        c.rank_bits = _ptr(st.smem_rank_bits)
        c.pc, c.status = _ptr(st.pc), _ptr(st.status)

    def _sync_pending(self):
        st = self.st
        c = self.c
        if not st.pending and not c.npend:
            return
        self.pend[:] = 0
        for s in st.pending:
            self.pend[s] = 1
        c.npend = len(st.pending)

    # --- the native _run_from ------------------------------------------------------------------------------------
    def _run_from(self, p: int, m):
        st = self.st
        c = self.c
        code, ends = self.code, self.ends
        if m is None:
            c.mask = None
        else:
            m = np.ascontiguousarray(m)
            c.mask = m.ctypes.data
        self._sync_mem()
        self._sync_pending()
        run = self.k.run
        cref = ctypes.byref(c)
        prologue = 1
        while True:
            c.steps, c.ti = st.steps, st.thread_instrs
            rc = run(cref, p, prologue)
            st.steps, st.thread_instrs = c.steps, c.ti
            if c.lognmax:
                self._flush()
            if rc == R_DONE:
                return
            i = c.at
            if rc == R_FLUSH:
                p, prologue = i, 0
                continue
            if rc == R_TICK:
                self.watch.tick(self)
                p, prologue = i, 0
                continue
            if rc == R_WATCHDOG:
                self._watchdog()
            if rc == R_TRAP:
                st.fault(code[i].ins, m, "the kernel executed 'trap' (a device-side abort, e.g. a failed assert)")
            if rc != R_PY:
                raise EmuError(f"internal error: native engine returned {rc} at pc {c.at}", kernel=st.kernel)
            # the interpreter's _run_from, for the one instruction i
            e = code[i]
            gm = m
            run_it = True
            if e.guard >= 0:
                g = st.r.view(e.guard)
                if e.gneg:
                    g = ~g
                gm = g.copy() if m is None else (g & m)
                run_it = bool(gm.any())
            if run_it:
                if st.pending and e.reads:
                    self._check_pending(e, gm)
                rci = e.fn(st, gm)
                st.thread_instrs += c.na
                if rci:
                    self._after_rc(i, m, gm, rci)
                    return
                self._sync_mem()
                self._sync_pending()
            else:
                st.thread_instrs += c.na
            nxt = i + 1
            if nxt == ends[i]:                  # the block ends after it: fall through as the interpreter does
                if m is not None:
                    st.pc[m] = nxt
                    return
                p, prologue = nxt, 1
            else:
                p, prologue = nxt, 0
