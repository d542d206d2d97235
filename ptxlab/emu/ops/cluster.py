"""Cluster instructions: mapa (PTX ISA 9.7.9.23), getctarank (9.7.9.24), barrier.cluster.arrive/wait (9.7.13.3).

Address encoding, geometry and the DSMEM lifetime check: cluster.py; rules and open questions: ptx_docs/clusters.md.

barrier.cluster (9.7.13.3): one barrier per cluster with phases.  ``arrive`` counts the executing thread for the
current phase; the phase completes when every non-exited thread of the cluster has arrived (exit releases a barrier
held up only by exiting threads, 9.7.8.x exit); ``wait`` returns once the phase the thread arrived at has completed.
Each thread must alternate arrive, wait, arrive, wait ...: a second arrive before the wait, or a wait without an
arrive, is reported (the text requires the pairing; what hardware does otherwise is not stated).  ``.aligned``
requires every thread of the warp to execute the same instruction: checked like bar.sync's (all non-exited threads
of the warp must be in the executing mask).  ``.relaxed`` / ``.release`` / ``.acquire``: memory is one coherent image
in the emulator; for the lifetime check every arrive is treated as a release and every wait as an acquire.
"""
from __future__ import annotations

import numpy as np

from ..checks import fidelity
from ..hw import cluster as cl
from ..core import hooks, ir
from ..engine import machine
from ..core.isa import BLOCK_END, Ctx, Unsupported, inst_type, register
from ..engine.machine import EXITED, PARK, RUN
from ..core.memory import SHARED_WIN, WIN_SHIFT

CLUSTER_BAR_KEY = 1 << 60          # park key base of barrier.cluster (+ wave cluster index)


def _sel(st, m) -> np.ndarray:
    return np.flatnonzero(st.status == RUN) if m is None else np.flatnonzero(m)


# ------------------------------------------------------------------------------------------------ mapa / getctarank
def _shared_operand(ins, ctx, op, ty):
    """Reader of a shared::cluster operand: a register, a shared variable or ``var+imm``."""
    if isinstance(op, (ir.Sym, ir.Addr)):
        a = op if isinstance(op, ir.Addr) else ir.Addr(op, 0)
        if not isinstance(a.base, ir.Sym) or ctx.symbol_space(a) != "shared":
            raise Unsupported(f"{ins.opcode}: operand {op} must be a register or a .shared variable (+imm) "
                              f"({ins.where()})")
        return ctx.read(a, ty)
    return ctx.read(op, ty)


def build_mapa(ins: ir.Instr, ctx: Ctx):
    """mapa{.shared::cluster}.type d, a, b: the address in CTA rank b corresponding to a (9.7.9.23)."""
    ty = inst_type(ins)
    generic = not ins.has("shared::cluster")
    if ty not in ("u32", "u64"):
        raise Unsupported(f"mapa.{ty}: the type must be .u32 or .u64 ({ins.where()})")
    if generic and ty != "u64":
        raise Unsupported(f"mapa without .shared::cluster maps generic addresses: use .u64 ({ins.where()})")
    rd_a = _shared_operand(ins, ctx, ins.args[1], ty)
    rd_b = ctx.read(ins.args[2], "u32")
    wr = ctx.write(ins.args[0], ty)
    dt = np.uint32 if ty == "u32" else np.uint64

    def run(st, m):
        sel = _sel(st, m)
        a = np.broadcast_to(np.asarray(rd_a(st)).astype(np.uint64), (st.T,))[sel].astype(np.int64)
        b = np.broadcast_to(np.asarray(rd_b(st)).astype(np.int64), (st.T,))[sel]
        n = cl.size(st)
        if generic:
            bad = (a >> WIN_SHIFT) != (SHARED_WIN >> WIN_SHIFT)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                st.fault(ins, sel[k:], f"mapa: generic address {int(a[k]):#x} does not point to shared memory",
                         "rule: without .shared::cluster, a must be a generic address of shared memory (9.7.9.23)")
            a = a - SHARED_WIN
        if (b >= n).any() or (b < 0).any():
            k = int(np.flatnonzero((b >= n) | (b < 0))[0])
            fidelity.violation(st, ins, sel[k:], "mapa_rank",
                               f"mapa: target CTA rank {int(b[k])} is outside the cluster of {n} CTA(s)",
                               "rule: b is the rank of a CTA of the executing cluster, < %cluster_nctarank (9.7.9.23)")
            b = b & 0xFF                  # the address keeps 8 rank bits (bits 31..24, ptx_docs/clusters.md)
        hi = a >> cl.RANK_SHIFT
        if (hi >= n).any():
            k = int(np.flatnonzero(hi >= n)[0])
            st.fault(ins, sel[k:], f"mapa: {int(a[k]):#x} is not a shared memory address of this cluster")
        off = a & cl.OFF_MASK
        if (off >= st.smem_size).any():
            k = int(np.flatnonzero(off >= st.smem_size)[0])
            st.fault(ins, sel[k:], f"mapa: shared offset {int(off[k]):#x} is outside the {st.smem_size} bytes of "
                     "shared memory of each CTA", "map an address of a shared variable")
        d = (b << cl.RANK_SHIFT) | off
        if generic:
            d = d + SHARED_WIN
        out = np.zeros(st.T, dt)
        out[sel] = d.astype(dt)
        wr(st, out, m)
    return run


def build_getctarank(ins: ir.Instr, ctx: Ctx):
    """getctarank{.shared::cluster}.type d, a: rank of the CTA whose shared memory holds a (9.7.9.24)."""
    ty = inst_type(ins)
    generic = not ins.has("shared::cluster")
    rd_a = _shared_operand(ins, ctx, ins.args[1], ty)
    wr = ctx.write(ins.args[0], "u32")

    def run(st, m):
        sel = _sel(st, m)
        a = np.broadcast_to(np.asarray(rd_a(st)).astype(np.uint64), (st.T,))[sel].astype(np.int64)
        if generic:
            bad = (a >> WIN_SHIFT) != (SHARED_WIN >> WIN_SHIFT)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                st.fault(ins, sel[k:], f"getctarank: generic address {int(a[k]):#x} does not point to shared memory",
                         "rule: a must be a generic address of shared memory (9.7.9.24)")
            a = a - SHARED_WIN
        hi = a >> cl.RANK_SHIFT
        n = cl.size(st)
        if (hi >= n).any():
            k = int(np.flatnonzero(hi >= n)[0])
            st.fault(ins, sel[k:], f"getctarank: {int(a[k]):#x} is not a shared memory address of this cluster",
                     f"its rank field (bits 31..24) is {int(hi[k])}, the cluster has {n} CTA(s)")
        out = np.zeros(st.T, np.uint32)
        out[sel] = hi.astype(np.uint32)
        wr(st, out, m)
    return run


# ------------------------------------------------------------------------------------------------ barrier.cluster
class _ClusterBar:
    """Per-wave state of the cluster barriers (one per cluster of the wave)."""

    def __init__(self, st):
        n = cl.size(st)
        ncl = st.nctas // n
        self.n = n
        self.arrived = np.zeros(ncl, np.int64)      # arrivals in the current phase
        self.phase = np.zeros(ncl, np.int64)        # completed phases
        self.state = np.zeros(st.T, np.int8)        # 0 idle, 1 arrived (phase pending), 2 phase done, not waited
        self.clock = [None] * ncl                   # lifetime clock published by the current phase's arrivals
        self.done_clock = [None] * ncl              # ... by the last completed phase

    def live(self, st) -> np.ndarray:
        alive = st.valid & (st.status != EXITED)
        return np.bincount(st.cta_of[alive] // self.n, minlength=self.arrived.size)

    def complete(self, st) -> bool:
        """Complete every phase whose arrivals reached the live thread count.  True if any completed."""
        live = self.live(st)
        done = np.flatnonzero((self.arrived >= live) & (self.arrived > 0))
        for k in done:
            k = int(k)
            inc = (st.cta_of // self.n) == k
            arrived = inc & (self.state == 1)
            parked = arrived & (st.status == PARK) & (st.park_key == CLUSTER_BAR_KEY + k)
            self.state[arrived] = 2
            self.state[parked] = 0
            self.phase[k] += 1
            self.arrived[k] = 0
            self.done_clock[k], self.clock[k] = self.clock[k], None
            for c in np.unique(st.cta_of[parked]):
                cl.acquire(st, int(c), self.done_clock[k])
            st.wake(CLUSTER_BAR_KEY + k)
        return bool(done.size)


def _cbar(st) -> _ClusterBar:
    s = st.side.get("barrier.cluster")
    if s is None:
        s = st.side["barrier.cluster"] = _ClusterBar(st)
    return s


def _progress(st) -> bool:
    s = st.side.get("barrier.cluster")
    return s is not None and s.arrived.any() and s.complete(st)


def _explain(st):
    s = st.side.get("barrier.cluster")
    if s is None or not s.arrived.any():
        return None
    live = s.live(st)
    lines = []
    for k in np.flatnonzero(s.arrived):
        k = int(k)
        first = st.coords(int(k * s.n * st.tpc))[0]
        lines.append(f"    cluster of block {first}: {int(s.arrived[k])} of {int(live[k])} live threads arrived at "
                     f"barrier.cluster phase {int(s.phase[k])}")
    return "  cluster barriers:\n" + "\n".join(lines)


hooks.PROGRESS_HOOKS.append(_progress)
hooks.DEADLOCK_EXPLAINERS.append(_explain)
hooks.WAVE_END_HOOKS.append(cl._wave_end)


def _check_aligned(st, ins, sel: np.ndarray) -> None:
    """.aligned: all non-exited threads of each executing warp execute this instruction together."""
    nw = st.T // 32
    live = np.bincount(st.gwarp[st.valid & (st.status != EXITED)], minlength=nw)
    ex = np.bincount(st.gwarp[sel], minlength=nw)
    bad = np.flatnonzero((ex > 0) & (ex < live))
    if bad.size:
        w = int(bad[0])
        st.fault(ins, sel[st.gwarp[sel] == w], f"{ins.opcode}.{'.'.join(ins.mods)}: .aligned executed by only part "
                 f"of warp {int(st.warp[w * 32])}",
                 "rule: with .aligned all threads of the warp must execute the same barrier.cluster instruction "
                 "(PTX ISA 9.7.13.3); drop .aligned or make the call warp-uniform")


def build_barrier_cluster(ins: ir.Instr, ctx: Ctx):
    """barrier.cluster.arrive{.release|.relaxed}{.aligned} / barrier.cluster.wait{.acquire}{.aligned} (9.7.13.3)."""
    mods = [m for m in ins.mods if m != "cluster"]
    op = mods[0] if mods else ""
    extra = [m for m in mods[1:] if m not in ("aligned", "release", "relaxed", "acquire")]
    if op not in ("arrive", "wait") or extra or (op == "wait" and ("release" in mods or "relaxed" in mods)) or \
            (op == "arrive" and "acquire" in mods):
        raise Unsupported(f"barrier.cluster form '{ins.text.strip()}' is not PTX ISA 9.7.13.3 "
                          f"(barrier.cluster.arrive{{.release|.relaxed}}{{.aligned}} / "
                          f"barrier.cluster.wait{{.acquire}}{{.aligned}}) ({ins.where()})")
    aligned = "aligned" in mods

    def run_arrive(st, m):
        s = _cbar(st)
        sel = _sel(st, m)
        if aligned:
            _check_aligned(st, ins, sel)
        twice = s.state[sel] != 0
        if twice.any():
            st.fault(ins, sel[twice], "barrier.cluster.arrive twice without barrier.cluster.wait in between",
                     "rule: each thread must wait on the cluster barrier before arriving at it again (PTX ISA "
                     "9.7.13.3); pair every arrive with a wait (cluster.sync() = arrive + wait)")
        s.state[sel] = 1
        k = st.cta_of[sel] // s.n
        np.add.at(s.arrived, k, 1)
        for c in np.unique(st.cta_of[sel]):
            c = int(c)
            kk = c // s.n
            s.clock[kk] = cl.join(s.clock[kk], cl.release(st, c))
        s.complete(st)
        return None

    def run_wait(st, m):
        s = _cbar(st)
        sel = _sel(st, m)
        if aligned:
            _check_aligned(st, ins, sel)
        none = s.state[sel] == 0
        if none.any():
            st.fault(ins, sel[none], "barrier.cluster.wait without a preceding barrier.cluster.arrive",
                     "rule: a thread waits for the phase it arrived at (PTX ISA 9.7.13.3); execute "
                     "barrier.cluster.arrive first (cluster.sync() = arrive + wait)")
        done = sel[s.state[sel] == 2]
        for c in np.unique(st.cta_of[done]):
            cl.acquire(st, int(c), s.done_clock[int(c) // s.n])
        s.state[done] = 0
        pend = sel[s.state[sel] == 1]
        if pend.size == 0:
            return None
        for k in np.unique(st.cta_of[pend] // s.n):
            mk = np.zeros(st.T, bool)
            mk[pend[(st.cta_of[pend] // s.n) == k]] = True
            st.park(mk, CLUSTER_BAR_KEY + int(k))
        return BLOCK_END

    return run_arrive if op == "arrive" else run_wait


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"size": ("u32", "u64"), "csem": ("release", "relaxed")}
FORMS = register(SETS, [
    # form                                            PTX ISA     builder
    ("mapa.shared::cluster.size",                    "9.7.9.23", build_mapa),
    ("mapa.u64",                                     "9.7.9.23", build_mapa),
    ("getctarank.shared::cluster.size",              "9.7.9.24", build_getctarank),
    ("getctarank.u64",                               "9.7.9.24", build_getctarank),
    ("barrier.cluster.arrive{.csem}{.aligned}",      "9.7.13.3", build_barrier_cluster),
    ("barrier.cluster.wait{.acquire}{.aligned}",     "9.7.13.3", build_barrier_cluster),
])
