"""Real PTX ``call``/``ret`` for functions that cannot be inlined (recursion): a per-thread call stack in local memory
(PTX ISA 9.7.12.5 call, 9.7.12.6 ret; the ABI's call-sequence .param variables, PTX ISA 5.1.6.2 / 7 "Abstracting the
ABI").

``program.py`` inlines every call into its caller (fast; it was the only mechanism before) except calls to functions
that are part of a cycle of the call graph (``recursive_functions``), or every call when ``PTXLAB_EMU_INLINE=0``.
Those functions are emitted once, after the kernel body, and called for real:

* **frame** — each such function ``f`` has a frame layout (``FrameLayout``) in the thread's local memory, placed on
  top of the caller's frame (the kernel's own locals are static, below the stack):
  ``[call-site pc (8 B)] [caller's frame base (8 B)] [f's registers saved, 8 B each] [f's .local/.param variables,
  the locals of functions inlined into f, f's formal parameters and return parameters]``.  Symbols of frame
  variables are frame-relative: ``Ctx.read``/``Ctx.address`` add the thread's frame base (``frame_base``).
* **call** — for the threads executing it: depth check (``PTXLAB_EMU_CALL_DEPTH``, default 1024 frames; exceeding it
  is an EmuError naming kernel, PTX line, block and thread), push the frame, save the callee's register slots (a
  recursive activation overwrites them), copy the actual ``.param`` arguments of the call sequence into the callee's
  formal parameters, jump to the callee's first instruction.
* **ret** — copy the callee's return parameters into the call site's return variables, restore the saved registers,
  pop the frame, continue after the call site (each thread at its own call site).
* Divergence: threads that call and threads that do not, or threads at different depths, are ordinary per-thread
  state (pc, frame base, depth), so the min-PC scheduler stays correct: threads wait for each other only at
  ``.sync`` warp instructions and barriers, which already wait for the missing threads.

Indirect calls (``call %fptr`` with a prototype) are not supported: they raise when executed, naming the line.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .frames import CallState, frame_base, state  # noqa: F401  (re-exported)
from .isa import JUMP

HEADER = 16
MAX_DEPTH_DEFAULT = 1024
MAX_LOCAL_BYTES = 1 << 30     # refuse to grow the wave's local memory (all threads) beyond this


def max_depth() -> int:
    from ... import settings
    return int(settings.get("PTXLAB_EMU_CALL_DEPTH"))


@dataclass
class FrameLayout:
    """The frame of one really-called function."""
    name: str
    saved: list = field(default_factory=list)     # register slots saved at call, restored at ret
    vars_size: int = 0                            # bytes of variables (laid out from offset 0 during emission)
    var_offsets: dict = field(default_factory=dict)   # unique symbol name -> offset among the variables
    params: list = field(default_factory=list)    # (unique name, size) of the formal parameters, in order
    rets: list = field(default_factory=list)      # (unique name, size) of the return parameters
    start_label: str = ""

    def add_var(self, name: str, size: int, align: int) -> None:
        a = max(align, 1)
        self.vars_size = (self.vars_size + a - 1) // a * a
        self.var_offsets[name] = self.vars_size
        self.vars_size += max(size, 1)

    @property
    def header(self) -> int:
        return (HEADER + 8 * len(self.saved) + 15) // 16 * 16     # variables keep their alignment (<= 16)

    @property
    def size(self) -> int:
        return (self.header + self.vars_size + 15) // 16 * 16

    def offset(self, name: str) -> int:
        """Frame-relative offset of a variable (valid once ``saved`` is final)."""
        return self.header + self.var_offsets[name]


def _grow(st, ins, need: int, sel):
    """Make every thread's local memory at least ``need`` bytes (the stack grows on demand)."""
    new = max(need, 2 * st.lstride)
    new = (new + 15) // 16 * 16
    if new * st.T > MAX_LOCAL_BYTES:
        st.fault(ins, sel, "call stack too large for the emulator",
                 f"{new:,} bytes of local memory per thread x {st.T} threads exceed {MAX_LOCAL_BYTES:,} bytes; "
                 f"lower PTXLAB_EMU_CALL_DEPTH or PTXLAB_EMU_WAVE_THREADS")
    buf = np.zeros(st.T * new, dtype=np.uint8)
    buf.reshape(st.T, new)[:, :st.lstride] = st.lmem.reshape(st.T, st.lstride)
    st.lmem = buf
    st.lstride = new
    st.local_limit = new


def _copy(st, sel, src, dst, size: int):
    rows = sel.astype(np.int64) * st.lstride
    k = np.arange(size, dtype=np.int64)
    st.lmem[(rows + dst.astype(np.int64))[:, None] + k] = st.lmem[(rows + src.astype(np.int64))[:, None] + k]


@dataclass
class CallSite:
    pc: int
    caller: object            # FrameLayout of the caller, or None for the kernel (static locals)
    callee: FrameLayout
    actuals: list             # (unique name, size) of the call sequence's argument variables
    actual_rets: list         # (unique name, size) of its return variables
    target: int = -1          # pc of the callee's first instruction


def _var_addr(prog, site_owner, name: str, base: np.ndarray) -> np.ndarray:
    """Local-space address of a caller-side variable: frame-relative in a real function, static in the kernel."""
    if site_owner is not None and name in site_owner.var_offsets:
        return base + np.uint64(site_owner.offset(name))
    return np.full(base.shape, prog.symbol_address(name), dtype=np.uint64)


def build_call(prog, site: CallSite, ins):
    callee = site.callee
    caller_size = 0 if site.caller is None else site.caller.size

    def run(st, m):
        cs = state(st)
        sel = np.arange(st.T) if m is None else np.flatnonzero(m)
        if sel.size == 0:
            return None
        lim = max_depth()
        d = cs.depth[sel] + 1
        over = d > lim
        if over.any():
            st.fault(ins, sel[over], f"call stack overflow: calling {callee.name} would make the call depth "
                                     f"{int(d[over][0])}, above the limit of {lim} frames",
                     "runaway recursion (a missing or never-true base case?), or a legitimately deep recursion: "
                     "raise the limit with PTXLAB_EMU_CALL_DEPTH=N (hardware would run out of its per-thread stack, "
                     "cudaLimitStackSize, much earlier)")
        old = cs.base[sel]
        new = old + np.uint64(caller_size)
        need = int(new.max()) + callee.size
        if need > st.local_limit:
            _grow(st, ins, need, sel)
        l64 = st.lmem.view(np.uint64)
        q = sel.astype(np.int64) * (st.lstride // 8) + (new // np.uint64(8)).astype(np.int64)
        l64[q] = np.uint64(site.pc)
        l64[q + 1] = old
        for k, slot in enumerate(callee.saved):
            l64[q + 2 + k] = st.r[slot][sel].astype(np.uint64)
        for (aname, size), (fname, _) in zip(site.actuals, callee.params):
            _copy(st, sel, _var_addr(prog, site.caller, aname, old), new + np.uint64(callee.offset(fname)), size)
        cs.base[sel] = new
        cs.depth[sel] = d
        st.pc[sel] = site.target
        return JUMP
    return run


def build_ret(prog, frame: FrameLayout, ins):
    def run(st, m):
        cs = state(st)
        sel = np.arange(st.T) if m is None else np.flatnonzero(m)
        if sel.size == 0:
            return None
        base = cs.base[sel]
        l64 = st.lmem.view(np.uint64)
        q = sel.astype(np.int64) * (st.lstride // 8) + (base // np.uint64(8)).astype(np.int64)
        call_pc = l64[q].astype(np.int64)
        old = l64[q + 1].copy()
        for c in np.unique(call_pc):
            site = prog.call_sites[int(c)]
            k = call_pc == c
            for (aname, size), (fname, _) in zip(site.actual_rets, frame.rets):
                _copy(st, sel[k], base[k] + np.uint64(frame.offset(fname)),
                      _var_addr(prog, site.caller, aname, old[k]), size)
        for j, slot in enumerate(frame.saved):
            r = st.r[slot].copy()
            r[sel] = l64[q + 2 + j].astype(r.dtype)
            st.r[slot] = r
        cs.base[sel] = old
        cs.depth[sel] -= 1
        st.pc[sel] = call_pc + 1
        st.progress += 1            # a completed call is forward progress for the watchdog's stall limit
        return JUMP
    return run


def recursive_functions(module, kernel: str) -> set:
    """Functions reachable from ``kernel`` that lie on a cycle of the call graph (direct calls)."""
    from . import ir
    graph = {}
    for name, fn in module.functions.items():
        callees = set()
        for item in fn.body:
            if isinstance(item, ir.Instr) and item.opcode == "call":
                for a in item.args:
                    if isinstance(a, ir.Sym):
                        callees.add(a.name)
                        break
        graph[name] = callees

    def reach(src):
        seen, todo = set(), list(graph.get(src, ()))
        while todo:
            f = todo.pop()
            if f in seen:
                continue
            seen.add(f)
            todo.extend(graph.get(f, ()))
        return seen

    from_kernel = reach(kernel)
    return {f for f in from_kernel if f in reach(f)}
