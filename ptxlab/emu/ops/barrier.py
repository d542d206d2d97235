"""CTA barriers and memory ordering: bar/barrier{.cta}.{sync,arrive,red}, membar, fence, nanosleep
(PTX ISA 9.7.13.1 bar/barrier, 9.7.13.4 membar/fence).

Barriers count arriving *threads* per CTA.  Without a thread count the barrier expects every thread of the CTA that
has not exited.  Memory fences have no effect in the emulator because every access is performed in program order
and completes immediately; asynchronous-proxy ordering is modelled by the families that own async operations,
and the generic->async proxy SMEM check (fence.proxy.async) by proxy.py, fed by the barrier arrivals/releases here.
"""
from __future__ import annotations

import numpy as np

from ..core import hooks, ir
from ..engine import machine
from ..checks import synccheck
from ..core.isa import BLOCK_END, Ctx, Unsupported, register
from ..engine.machine import BAR, EXITED, RUN

NBARRIERS = 16


class _BarState:
    def __init__(self, nctas: int, T: int):
        self.arrived = np.zeros((NBARRIERS, nctas), dtype=np.int64)
        self.expected = np.full((NBARRIERS, nctas), -1, dtype=np.int64)
        self.red_val = np.zeros(T, dtype=np.bool_)
        self.red_op = {}          # barrier id → (op, writer)
        self.at_line = np.zeros(T, dtype=np.int64)   # PTX line of the barrier instruction each thread arrived at
        self.ins_of_line: dict = {}                  # that line → its ir.Instr (synccheck reports)


def _state(st) -> _BarState:
    s = st.side.get("bar")
    if s is None:
        s = st.side["bar"] = _BarState(st.nctas, st.T)
    return s


def _release(st, bid: int) -> bool:
    """Release the CTAs whose barrier ``bid`` has all its arrivals.  Returns True if any thread was released."""
    s = _state(st)
    exp = s.expected[bid].copy()
    default = exp < 0
    if default.any():
        live = np.bincount(st.cta_of[st.valid & (st.status != EXITED)], minlength=st.nctas)
        exp[default] = live[default]
    done = (s.arrived[bid] >= exp) & (s.arrived[bid] > 0)
    if not done.any():
        return False
    waiting = (st.status == BAR) & (st.bar_id == bid) & done[st.cta_of]
    if (default & done).any():   # barrier divergence / early-exit checks (synccheck.py)
        synccheck.check_release(st, s, bid, np.flatnonzero(default & done), waiting)
    if (done & ~default & (s.arrived[bid] > exp)).any():   # more arrivals than an explicit thread count
        synccheck.check_overshoot(st, s, bid, np.flatnonzero(done & ~default & (s.arrived[bid] > exp)), waiting)
    if st.proxy is not None:   # generic→async proxy check: publish the participants' SMEM writes (proxy.py)
        st.proxy.release(st, bid, done, waiting)
    if st.race is not None:    # racecheck: a full CTA barrier orders everything before it (racecheck.py)
        st.race.barrier(np.flatnonzero(default & done))
    red = s.red_op.get(bid)
    if red is not None:
        op, wr = red
        contrib = s.red_val & (st.bar_id == bid) & ((st.status == BAR) | waiting)
        cnt = np.bincount(st.cta_of[contrib], minlength=st.nctas)
        live = s.arrived[bid]
        if op == "popc":
            val = cnt[st.cta_of].astype(np.uint32)
            wr(st, val, waiting)
        elif op == "and":
            wr(st, (cnt == live)[st.cta_of], waiting)
        else:
            wr(st, (cnt > 0)[st.cta_of], waiting)
        s.red_val[waiting] = False
        del s.red_op[bid]
    st.status[waiting] = RUN
    st.progress += 1                     # forward progress for the watchdog's stall limit (watchdog.py)
    s.arrived[bid][done] = 0
    s.expected[bid][done] = -1
    return True


def _progress(st) -> bool:
    s = st.side.get("bar")
    if s is None:
        return False
    return any(_release(st, b) for b in range(NBARRIERS) if s.arrived[b].any())


hooks.PROGRESS_HOOKS.append(_progress)
hooks.DEADLOCK_EXPLAINERS.append(synccheck.explain)


def build_bar(ins: ir.Instr, ctx: Ctx):
    mods = [m for m in ins.mods if m not in ("cta", "aligned")]
    if not mods:
        raise Unsupported(f"cannot tell the barrier operation of '{ins.text.strip()}'")
    kind = mods[0]
    if kind == "warp":  # bar.warp.sync membermask (PTX ISA 9.7.13.2)
        return _build_bar_warp(ins, ctx)
    args = list(ins.args)
    wr = None
    red = None
    if kind == "red":
        red = mods[1]
        if red not in ("popc", "and", "or"):
            raise Unsupported(f"bar.red.{red} is not a barrier reduction")
        wr = ctx.write(args.pop(0), "u32" if red == "popc" else "pred")
        c_rd = ctx.read(args.pop(), "pred")
    elif kind not in ("sync", "arrive"):
        raise Unsupported(f"barrier operation '{kind}' is not supported")
    a_rd = ctx.read(args[0], "u32")
    b_rd = ctx.read(args[1], "u32") if len(args) > 1 else None
    wait = kind in ("sync", "red")

    def run(st, m):
        s = _state(st)
        sel = np.ones(st.T, bool) if m is None else m
        ids = np.broadcast_to(np.asarray(a_rd(st)), (st.T,))[sel]
        bid = int(ids[0])
        if (ids != bid).any() or not 0 <= bid < NBARRIERS:
            st.fault(ins, sel, f"barrier id must be uniform and in 0..{NBARRIERS - 1}")
        counts = np.bincount(st.cta_of[sel], minlength=st.nctas)
        if b_rd is not None:
            b = np.broadcast_to(np.asarray(b_rd(st)), (st.T,))[sel]
            if (b % 32 != 0).any() or (b == 0).any():
                st.fault(ins, sel, "barrier thread count must be a non-zero multiple of 32 (PTX ISA 9.7.13.1)")
            ctas = np.flatnonzero(counts)
            first = {int(st.cta_of[t]): int(v) for t, v in zip(np.flatnonzero(sel)[::-1], b[::-1])}
            for c in ctas:
                if s.expected[bid][c] >= 0 and s.expected[bid][c] != first[int(c)]:
                    st.fault(ins, sel & (st.cta_of == c), f"barrier {bid}: threads disagree on the thread count "
                             f"({s.expected[bid][c]} vs {first[int(c)]})")
                s.expected[bid][c] = first[int(c)]
        s.arrived[bid] += counts
        s.at_line[sel] = ins.line
        s.ins_of_line[ins.line] = ins
        if st.proxy is not None:
            st.proxy.arrive(sel, bid)
        if red is not None:
            s.red_val[sel] = np.broadcast_to(np.asarray(c_rd(st)), (st.T,))[sel]
            s.red_op[bid] = (red, wr)
        if wait:
            st.status[sel] = BAR
            st.bar_id[sel] = bid
        _release(st, bid)
        return BLOCK_END
    return run


def _build_bar_warp(ins, ctx):
    mask_rd = ctx.read(ins.args[0], "b32")
    from .warp_sync import warp_sync_ready  # shared membermask check

    def run(st, m):
        mv = mask_rd(st)
        r = warp_sync_ready(st, ins, m, mv)
        if r is None and st.proxy is not None:   # memory ordering among the members: publish their SMEM writes
            sel = np.flatnonzero(st.status == RUN) if m is None else np.flatnonzero(m)
            st.proxy.warp_sync(st, sel, np.broadcast_to(np.asarray(mv, dtype=np.uint32), (st.T,))[sel])
        return r
    return run


def build_fence(ins: ir.Instr, ctx: Ctx):
    """Memory fences: no effect, since the emulator performs every generic-proxy access in program order
    (fence.proxy.async::generic.release... orders generic SMEM writes for the async proxy: see proxy.py)."""
    if ins.opcode == "fence" and len(ins.mods) > 1 and ins.mods[0] == "proxy" and \
            ins.mods[1].startswith("async::generic") and not any(m_.startswith("global") for m_ in ins.mods):
        def run_proxy(st, m):
            if st.proxy is not None:
                st.proxy.fence(st, m)
        return run_proxy

    def run(st, m):
        return None
    return run


def build_nanosleep(ins: ir.Instr, ctx: Ctx):
    def run(st, m):
        return None
    return run


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"fsem": ("sc", "acq_rel", "acquire", "release"), "scope": ("cta", "cluster", "gpu", "sys"),
        "level": ("cta", "gl", "sys"), "redop": ("and", "or")}
FORMS = register(SETS, [
    # form                                                                   PTX ISA     builder
    ("barrier{.cta}.sync{.aligned}",                                        "9.7.13.1", build_bar),
    ("barrier{.cta}.arrive{.aligned}",                                      "9.7.13.1", build_bar),
    ("barrier{.cta}.red.popc{.aligned}.u32",                                "9.7.13.1", build_bar),
    ("barrier{.cta}.red.redop{.aligned}.pred",                              "9.7.13.1", build_bar),
    ("bar{.cta}.sync",                                                      "9.7.13.1", build_bar),
    ("bar{.cta}.arrive",                                                    "9.7.13.1", build_bar),
    ("bar{.cta}.red.popc.u32",                                              "9.7.13.1", build_bar),
    ("bar{.cta}.red.redop.pred",                                            "9.7.13.1", build_bar),
    ("bar.warp.sync",                                                       "9.7.13.2", build_bar),
    ("fence{.fsem}.scope",                                                  "9.7.13.4", build_fence),
    ("fence.acquire.sync_restrict::shared::cluster.cluster",               "9.7.13.4", build_fence),
    ("fence.release.sync_restrict::shared::cta.cluster",                   "9.7.13.4", build_fence),
    ("fence.proxy.alias",                                                   "9.7.13.4", build_fence),
    ("fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster", "9.7.13.4", build_fence),
    ("fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster", "9.7.13.4", build_fence),
    ("membar.level",                                                        "9.7.13.4", build_fence),
    ("membar.proxy.alias",                                                  "9.7.13.4", build_fence),
    ("nanosleep.u32",                                                       "9.7.19.2", build_nanosleep),
])
