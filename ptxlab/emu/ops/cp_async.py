"""Non-bulk asynchronous copies global → shared (sm_80; PTX ISA 9.7.9.25.3):

    cp.async.ca.shared{::cta}.global{.L2::cache_hint}{.L2::prefetch_size} [dst], [src], cp-size{, src-size}{, policy}
    cp.async.cg.shared{::cta}.global{...}                                 [dst], [src], 16{, src-size}{, policy}
    cp.async.ca/cg.shared.global ...                                      [dst], [src], cp-size{, ignore-src}{, policy}
    cp.async.commit_group;  cp.async.wait_group N;  cp.async.wait_all;
    cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [mbar];

Model: each executed cp.async instruction becomes one asynchronous operation on ``st.engine`` covering its threads.
The source is read and the shared destination written when the operation *completes* (the engine completes in issue
order, lazily: only when no thread can run, or when a wait forces it) — so a kernel that reads the destination
without ``cp.async.wait_group``/``wait_all`` (or the mbarrier) sees the old shared-memory contents, as it may on
hardware.  Bytes beyond ``src-size`` (or all bytes with ``ignore-src`` true) are zero-filled (9.7.9.25.3.1).

Groups are per thread: ``grp[t]`` is the index of thread t's open group; commit_group increments it; wait_group N
completes (in issue order) every pending copy of the waiting threads whose group index is < grp[t] - N.
``cp.async.mbarrier.arrive`` queues an arrive-on that completes after all prior cp.async of the thread (issue order);
without ``.noinc`` the pending count is first incremented by 1 (9.7.9.25.3.4), so the net count is unchanged.
"""
from __future__ import annotations

import numpy as np

from ..core import ir
from ..checks import exitcheck  # noqa: F401  (registers the copies-in-flight-at-exit check)
from ..core.isa import Ctx, Unsupported, register

_SIZES = (4, 8, 16)


class _State:
    def __init__(self, T: int):
        self.grp = np.zeros(T, np.int64)      # open group index per thread
        self.pending: list = []               # _Copy ops not yet completed (issue order)


def _state(st) -> _State:
    s = st.side.get("cpasync")
    if s is None:
        s = st.side["cpasync"] = _State(st.T)
    return s


class _Copy:
    """One cp.async instruction execution for a set of threads."""

    def __init__(self, ins, sel, dst, src, size, src_size, group):
        self.ins, self.sel, self.dst, self.src, self.size = ins, sel, dst, src, size
        self.src_size, self.group = src_size, group
        self.done = False

    def smem_dest(self, st):
        """[(cta, first issuing thread)] whose shared memory this op writes (exitcheck.py)."""
        ctas = st.cta_of[self.sel]
        return [(int(c), int(self.sel[np.flatnonzero(ctas == c)[0]])) for c in np.unique(ctas)]

    def describe(self) -> str:
        return (f"cp.async ({self.size} bytes x {self.sel.size} threads) at PTX line {self.ins.line}: "
                f"{self.ins.text.strip()}")

    def complete(self, st):
        T = st.T
        m = np.zeros(T, bool)
        m[self.sel] = True
        src = np.zeros(T, np.uint64)
        src[self.sel] = self.src
        dst = np.zeros(T, np.uint64)
        dst[self.sel] = self.dst
        full = self.src_size >= self.size
        data = np.zeros((T, self.size), np.uint8)
        if full.all():
            data = st.load(self.ins, "global", src, m, np.uint8, self.size)
        else:
            ss = np.zeros(T, np.int64)
            ss[self.sel] = self.src_size
            for j in range(self.size):            # partial lanes: read only the src-size bytes (zero-fill the rest)
                mj = m & (ss > j)
                if mj.any():
                    data[:, j] = st.load(self.ins, "global", src + np.uint64(j), mj, np.uint8)
        if st.race is not None:
            st.race.inflight.remove(self)          # its own writes are not a race (checks/asyncread.py)
        st.store(self.ins, "shared", dst, m, data, np.uint8, self.size)
        self.done = True
        s = _state(st)
        if self in s.pending:
            s.pending.remove(self)


def build_cp_async(ins: ir.Instr, ctx: Ctx):
    """cp.async.ca/cg.shared{::cta}.global (9.7.9.25.3.1)."""
    mods = ins.mods[2:]                     # opcode 'cp', mods ('async', 'ca'|'cg', ...)
    dst_sp = next((x for x in mods if x.startswith("shared")), None)
    if dst_sp not in ("shared", "shared::cta") or "global" not in mods:
        raise Unsupported(f"{ins.name}: only cp.async.{{ca,cg}}.shared{{::cta}}.global is defined (PTX ISA "
                          f"9.7.9.25.3.1); got {ins.where()}")
    for x in mods:
        if not (x.startswith("shared") or x == "global" or x.startswith("L2")):
            raise Unsupported(f"{ins.name}: modifier .{x} is not supported ({ins.where()})")
    args = ins.args
    if len(args) < 3 or not isinstance(args[2], ir.Imm):
        raise Unsupported(f"{ins.name}: cp-size must be an immediate 4, 8 or 16 ({ins.where()})")
    size = int(args[2].value)
    if size not in _SIZES or (ins.mods[1] == "cg" and size != 16):
        raise Unsupported(f"{ins.name}: cp-size {size} is invalid (.ca: 4/8/16, .cg: 16; PTX ISA 9.7.9.25.3.1)")
    has_policy = any(x.startswith("L2::cache_hint") for x in mods)
    extra = list(args[3:])
    if has_policy:
        if not extra:
            raise Unsupported(f"{ins.name}: .L2::cache_hint needs a cache-policy operand")
        rd_policy = ctx.read(extra[-1], "b64")   # the 64-bit cache-policy operand (createpolicy, 9.7.9.18): read
        extra = extra[:-1]                       # like any operand, then ignored (a hint without architectural effect)
    rd_src_size = rd_ignore = None
    if not has_policy:
        rd_policy = None
    if extra:
        op = extra[0]
        if isinstance(op, ir.Reg) and op.ty == "pred":
            rd_ignore = ctx.read(op, "pred")
        else:
            rd_src_size = ctx.read(op, "u32")
    rd_dst = ctx.address(args[0])
    rd_src = ctx.address(args[1])

    def run(st, m):
        T = st.T
        sel = np.arange(T) if m is None else np.flatnonzero(m)
        if sel.size == 0:
            return None
        if rd_policy is not None:
            rd_policy(st)
        dst = np.broadcast_to(np.asarray(rd_dst(st), np.uint64), (T,))[sel]
        src = np.broadcast_to(np.asarray(rd_src(st), np.uint64), (T,))[sel]
        if rd_src_size is not None:
            ss = np.broadcast_to(np.asarray(rd_src_size(st), np.int64), (T,))[sel]
            bad = ss > size
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                st.fault(ins, sel[k:], f"cp.async src-size {int(ss[k])} exceeds cp-size {size}",
                         "rule: src-size must be <= cp-size (PTX ISA 9.7.9.25.3.1)")
        elif rd_ignore is not None:
            ig = np.broadcast_to(np.asarray(rd_ignore(st), bool), (T,))[sel]
            ss = np.where(ig, 0, size).astype(np.int64)
        else:
            ss = np.full(sel.size, size, np.int64)
        for what, a in (("destination", dst), ("source", src)):
            mis = a % np.uint64(size) != 0
            if mis.any():
                k = int(np.flatnonzero(mis)[0])
                st.fault(ins, sel[k:], f"misaligned cp.async {what} address {int(a[k]):#x}",
                         f"rule: both addresses must be aligned to cp-size = {size} bytes (PTX ISA 9.7.9.25.3.1)")
        # bounds of the destination now (clear diagnostics at the issuing instruction); the source is read later
        lim = st.smem_size
        over = (dst.astype(np.int64) + size > lim)
        if over.any():
            k = int(np.flatnonzero(over)[0])
            st.fault(ins, sel[k:], f"out-of-bounds cp.async destination: shared address {int(dst[k]):#x} + {size} "
                     f"bytes exceeds this CTA's {lim} bytes of shared memory")
        s = _state(st)
        op = _Copy(ins, sel, dst, src, size, ss, s.grp[sel].copy())
        s.pending.append(op)
        if st.race is not None:                    # a thread's access of the destination before the wait: a race
            st.race.inflight.add(op, sel, st.cta_of[sel].astype(np.int64) * st.smem_stride + dst.astype(np.int64),
                                 size)
        st.engine.submit(op)
        return None
    return run


def build_commit(ins: ir.Instr, ctx: Ctx):
    """cp.async.commit_group (9.7.9.25.3.2): close each executing thread's open group (an empty group is fine)."""
    def run(st, m):
        s = _state(st)
        if m is None:
            s.grp = s.grp + 1
        else:
            s.grp = s.grp + m
        return None
    return run


def _wait(st, m, keep: int):
    s = _state(st)
    if not s.pending:
        return
    act = np.ones(st.T, bool) if m is None else m
    limit = s.grp - keep                        # groups with index < limit must be complete

    def needed(op) -> bool:
        return bool(np.any(act[op.sel] & (op.group < limit[op.sel])))

    if any(needed(op) for op in s.pending):
        st.engine.drain(st, until=lambda _op: not any(needed(op) for op in s.pending))


def build_wait_group(ins: ir.Instr, ctx: Ctx):
    """cp.async.wait_group N (9.7.9.25.3.3): all but the N most recent committed groups of the thread are done."""
    n_op = ins.args[0] if ins.args else None
    if not isinstance(n_op, ir.Imm):
        raise Unsupported(f"cp.async.wait_group needs an immediate group count ({ins.where()})")
    keep = int(n_op.value)

    def run(st, m):
        _wait(st, m, keep)
        return None
    return run


def build_wait_all(ins: ir.Instr, ctx: Ctx):
    """cp.async.wait_all (9.7.9.25.3.3) = commit_group; wait_group 0."""
    def run(st, m):
        s = _state(st)
        s.grp = s.grp + (1 if m is None else m)
        _wait(st, m, 0)
        return None
    return run


class _Arrive:
    def __init__(self, ins, sel, ctas, addrs):
        self.ins, self.sel, self.ctas, self.addrs = ins, sel, ctas, addrs

    def describe(self) -> str:
        return f"cp.async.mbarrier.arrive ({self.sel.size} threads) at PTX line {self.ins.line}"

    def complete(self, st):
        from .mbarrier import _run_model, bar_key, table_of
        for t, c, a in zip(self.sel, self.ctas, self.addrs):
            tab = table_of(st, int(c))
            bar = _run_model(st, self.ins, int(t), lambda: tab.get(int(a), "cp.async.mbarrier.arrive"))
            _run_model(st, self.ins, int(t), lambda: bar.arrive(1))
            st.wake(bar_key(int(c), int(a)))


def build_mbar_arrive(ins: ir.Instr, ctx: Ctx):
    """cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr] (9.7.9.25.3.4)."""
    if len(ins.mods) < 3 or ins.mods[2] != "arrive":
        raise Unsupported(f"{ins.name}: expected cp.async.mbarrier.arrive ({ins.where()})")
    try:
        from .mbarrier import _run_model, shared_addresses, space_of, table_of
    except ImportError as e:  # pragma: no cover - depends on the mbarrier family being present
        raise Unsupported(f"cp.async.mbarrier.arrive needs the mbarrier family (ops/mbarrier.py): {e}")
    noinc = ins.has("noinc")
    space = space_of(ins)
    rd = ctx.address(ins.args[0])

    def run(st, m):
        sel = np.arange(st.T) if m is None else np.flatnonzero(m)
        if sel.size == 0:
            return None
        addrs = shared_addresses(st, ins, rd(st), sel, space, "cp.async.mbarrier.arrive")
        ctas = st.cta_of[sel]
        if not noinc:
            for t, c, a in zip(sel, ctas, addrs):
                tab = table_of(st, int(c))
                bar = _run_model(st, ins, int(t), lambda: tab.get(int(a), "cp.async.mbarrier.arrive"))
                bar.pending += 1          # "pending count incremented by 1 prior to the asynchronous arrive-on"
        st.engine.submit(_Arrive(ins, sel, ctas, addrs))
        return None
    return run


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"cacg": ("ca", "cg"), "state": ("shared", "shared::cta"),
        "prefetch_size": ("L2::64B", "L2::128B", "L2::256B")}
FORMS = register(SETS, [
    # form                                                                 PTX ISA          builder
    ("cp.async.cacg.state.global{.L2::cache_hint}{.prefetch_size}",       "9.7.9.25.3.1", build_cp_async),
    ("cp.async.commit_group",                                             "9.7.9.25.3.2", build_commit),
    ("cp.async.wait_group",                                               "9.7.9.25.3.3", build_wait_group),
    ("cp.async.wait_all",                                                 "9.7.9.25.3.3", build_wait_all),
    ("cp.async.mbarrier.arrive{.noinc}{.state}.b64",                      "9.7.13.15.15", build_mbar_arrive),
])
