"""mbarrier instructions (PTX ISA 9.7.13.15) and fence.mbarrier_init (9.7.13.4) for the emulator.

State lives in ``st.side["mbarrier"]``: one :class:`~ptxlab.emu.hw.mbarrier.MbarrierTable` per wave-relative CTA
(the state machine, ranges and the 64-bit state-token encoding are in hw/mbarrier.py / ptx_docs/mbarrier.md).
A ``.shared::cluster`` operand may name a barrier of another CTA of the cluster (rank-encoded addresses, cluster.py):
``arrive``/``arrive_drop`` (remote arrive, no state returned: 9.7.13.15.13), ``expect_tx`` and ``complete_tx``
(9.7.13.15.11/12) act on the peer's barrier; ``init``/``inval`` and the waits act only on the executing CTA's
barriers (9.7.13.15.9/10/16), so a peer address there is reported.  Arrivals publish, and successful waits acquire,
the cluster's DSMEM-lifetime clocks (cluster.Lifetime).

A test_wait/try_wait that returns False parks the thread on key ``(cta << 32) | addr`` (API.md); every change of that
barrier wakes it, and it re-runs its spin loop.  When nothing else in the wave can run, the wait's time limit expires
(``_expire``, an EXPIRY_HOOKS entry): the parked waiters go on with the False they got, as on hardware, so code that
peeks a barrier and waits for it only later (CUTLASS's ``producer_try_acquire``) is not stalled by the parking.  A
wave state already seen at an earlier expiry means the waits can never succeed: a barrier that never completes
therefore shows up as a deadlock report (DEADLOCK_EXPLAINERS) naming the barrier, its phase, pending arrivals and the
missing tx bytes.
"""
from __future__ import annotations

import hashlib
from typing import Optional

import numpy as np

from ...errors import EmuError
from ..checks import fidelity
from ..core import hooks, ir
from ..engine import machine
from ..core.isa import BLOCK_END, Ctx, Unsupported, register
from ..hw.mbarrier import Mbarrier, MbarrierTable, decode_state
from ..hw import cluster as cl
from ..core.memory import SHARED_WIN, WIN_SHIFT

__all__ = ["tables", "table_of", "bar_key", "shared_addresses", "shared_targets", "complete_tx_on", "remote_arrive",
           "describe_barriers", "run_model"]

_SPACES = ("shared::cta", "shared::cluster", "shared")


def tables(st) -> dict[int, MbarrierTable]:
    """Per-CTA mbarrier tables of the wave (created on first use)."""
    t = st.side.get("mbarrier")
    if t is None:
        t = st.side["mbarrier"] = {}
    return t


def table_of(st, cta: int) -> MbarrierTable:
    """The mbarrier table of wave-relative CTA ``cta``."""
    ts = tables(st)
    tab = ts.get(cta)
    if tab is None:
        tab = ts[cta] = MbarrierTable()
    return tab


def bar_key(cta: int, addr: int) -> int:
    """Park/wake key of the barrier at shared address ``addr`` of CTA ``cta`` (API.md)."""
    return (int(cta) << 32) | int(addr)


def space_of(ins: ir.Instr) -> str:
    """'shared' for .shared / .shared::cta / .shared::cluster operands, else 'generic'."""
    return "shared" if any(m in _SPACES for m in ins.mods) else "generic"


def shared_addresses(st, ins, addrs, sel: np.ndarray, space: str, what: str) -> np.ndarray:
    """Shared::cta byte addresses (int64, one per thread of ``sel``) from operand values in ``space``; the operand
    must be in the executing CTA (a shared::cluster address of the executing CTA's own rank is accepted)."""
    ctas, offs = shared_targets(st, ins, addrs, sel, space, what)
    other = ctas != st.cta_of[sel]
    if other.any():
        k = int(np.flatnonzero(other)[0])
        st.fault(ins, sel[k:], f"{what}: the address names the shared memory of cluster rank "
                 f"{int(cl.rank_of(st, ctas[k]))}, not the executing CTA "
                 f"(rank {int(cl.rank_of(st, st.cta_of[sel[k]]))})",
                 "rule: this operand must be in the executing CTA's shared memory (.shared::cta window, PTX ISA "
                 "5.1.7; mbarrier init/wait 9.7.13.15)")
    return offs


def shared_targets(st, ins, addrs, sel: np.ndarray, space: str, what: str):
    """(wave CTA, offset) int64 arrays, one per thread of ``sel``, of shared(::cluster) operand values in ``space``
    ('shared' or 'generic'); the operand may name any CTA of the cluster (rank encoding: cluster.py)."""
    a = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (st.T,))[sel].astype(np.uint64)
    if space == "generic":
        win = (a >> np.uint64(WIN_SHIFT)).astype(np.int64)
        bad = win != (SHARED_WIN >> WIN_SHIFT)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            st.fault(ins, sel[k:], f"{what}: generic address {int(a[k]):#x} is not in the shared window",
                     "an mbarrier / TMA shared operand must point into shared memory (PTX ISA 9.7.13.15.9: outside "
                     ".shared::cta the behaviour is undefined); use cvta.shared or a .shared::cta address")
        a = a - np.uint64(SHARED_WIN)
    raw = a.astype(np.int64)
    ctas = st.cta_of[sel].astype(np.int64)
    hi = raw >> cl.RANK_SHIFT
    if hi.any() or st.smem_rank_bits is not None:     # bits 31..24: the cluster rank (0 is rank 0, not "own")
        n = cl.size(st)
        bad = hi >= n
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            st.fault(ins, sel[k:], f"{what}: shared::cluster address {int(raw[k]):#x} names CTA rank {int(hi[k])}, "
                     f"outside the cluster of {n} CTA(s)",
                     "rule: the target rank must be < %cluster_nctarank (PTX ISA 5.1.7, 9.7.9.23 mapa)")
        ctas = ctas - ctas % n + hi
    out = raw & cl.OFF_MASK
    lim = st.smem_size
    bad = (out < 0) | (out + 8 > lim)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        st.fault(ins, sel[k:], f"{what}: shared address {int(out[k]):#x} is outside this CTA's {lim} bytes of "
                 "shared memory")
    return ctas, out


def _run_model(st, ins, t: int, fn):
    """Call a model operation; turn its MbarrierError into a located emulator fault."""
    try:
        return fn()
    except EmuError as exc:
        st.fault(ins, int(t), exc.message)


run_model = _run_model   # public name for other families (ops/cp_async.py)


def complete_tx_on(st, ins, thread: int, cta: int, addr: int, nbytes: int) -> None:
    """complete-tx from an asynchronous copy (TMA, cp.async.bulk) on CTA ``cta``'s barrier at ``addr``."""
    if cta != int(st.cta_of[thread]):
        cl.check_alive(st, ins, thread, cta, "complete-tx on an mbarrier")
    tab = table_of(st, cta)
    bar = _run_model(st, ins, thread, lambda: tab.get(addr, "complete_tx of an asynchronous copy"))
    _run_model(st, ins, thread, lambda: bar.complete_tx(nbytes, async_copy=True))
    st.wake(bar_key(cta, addr))


def remote_arrive(st, ins, thread: int, cta: int, addr: int, count: int = 1) -> None:
    """One arrive-on of ``count`` by wave thread ``thread`` on CTA ``cta``'s barrier at ``addr`` (no state returned),
    e.g. tcgen05.commit .multicast::cluster; publishes the arriving CTA's lifetime clock."""
    if cta != int(st.cta_of[thread]):
        cl.check_alive(st, ins, thread, cta, "mbarrier arrive")
    bar = _run_model(st, ins, thread, lambda: table_of(st, cta).get(addr, "mbarrier arrive"))
    _run_model(st, ins, thread, lambda: bar.arrive(count))
    _publish(st, int(st.cta_of[thread]), cta, addr)
    st.wake(bar_key(cta, addr))


def _publish(st, src_cta: int, cta: int, addr: int) -> None:
    """Release edge of an arrive by a thread of ``src_cta`` on barrier (cta, addr) for the DSMEM lifetime check."""
    c = cl.release(st, src_cta)
    if c is not None:
        d = st.side.setdefault("mbarrier_clock", {})
        d[(cta, addr)] = cl.join(d.get((cta, addr)), c)


def _acquire(st, cta: int, addr: int) -> None:
    d = st.side.get("mbarrier_clock")
    if d:
        cl.acquire(st, cta, d.get((cta, addr)))


def _sel(st, m) -> np.ndarray:
    return np.arange(st.T)[st.status == machine.RUN] if m is None else np.flatnonzero(m)


def build_mbarrier(ins: ir.Instr, ctx: Ctx):
    """All mbarrier.* forms of PTX ISA 9.7.13.15.9-17."""
    op = ins.mods[0] if ins.mods else ""
    space = space_of(ins)
    cluster = "shared::cluster" in ins.mods
    if op == "pending_count":
        rd_state = ctx.read(ins.args[1], "b64")
        wr = ctx.write(ins.args[0], "u32")

        def run_pending(st, m):
            sel = _sel(st, m)
            toks = np.broadcast_to(np.asarray(rd_state(st), dtype=np.uint64), (st.T,))
            out = np.zeros(st.T, np.uint32)
            for t in sel:
                out[t] = _run_model(st, ins, t, lambda: decode_state(int(toks[t])))[2]
            wr(st, out, m)
        return run_pending

    if op not in ("init", "inval", "expect_tx", "complete_tx", "arrive", "arrive_drop", "test_wait", "try_wait"):
        raise Unsupported(f"mbarrier.{op} is not a PTX ISA 9.7.13.15 operation ({ins.where()})")
    # operand positions
    if op in ("init", "inval", "expect_tx", "complete_tx"):
        addr_op = ins.args[0]
    else:
        addr_op = ins.args[1]
    if not isinstance(addr_op, ir.Addr):
        raise Unsupported(f"mbarrier.{op}: expected an address operand [..], got {addr_op} ({ins.where()})")
    rd_addr = ctx.address(addr_op)
    what = f"mbarrier.{op}"

    if cluster and op in ("init", "inval"):
        raise Unsupported(f"{what}.shared::cluster is not PTX: mbarrier.{op} takes .shared{{::cta}} or a generic "
                          f"address of the executing CTA (9.7.13.15.9/10) ({ins.where()})")
    if op in ("init", "inval"):
        rd_cnt = ctx.read(ins.args[1], "u32") if op == "init" else None

        def run_init(st, m):
            sel = _sel(st, m)
            addrs = shared_addresses(st, ins, rd_addr(st), sel, space, what)
            cnts = np.broadcast_to(np.asarray(rd_cnt(st)), (st.T,))[sel] if rd_cnt else None
            done: dict = {}          # (warp, address) -> count this execution initialised it with
            for i, t in enumerate(sel):
                cta = int(st.cta_of[t])
                tab = table_of(st, cta)
                a = int(addrs[i])
                if op == "init":
                    key = (int(t) // 32, a)          # tpc is padded to whole warps: t // 32 names one warp
                    if done.get(key) == int(cnts[i]):
                        fidelity.violation(st, ins, sel[i:i + 1], "mbarrier_init_lanes",
                                           f"mbarrier.init: lanes of one warp initialise the mbarrier at shared "
                                           f"0x{a:x} alike (count {int(cnts[i])})",
                                           "rule: mbarrier.init of a location holding a valid mbarrier object is "
                                           "undefined (PTX ISA 9.7.13.15.9); initialise it from one lane "
                                           "(elect.sync / a lane predicate)")
                        continue
                    done[key] = int(cnts[i])
                    _run_model(st, ins, t, lambda: tab.init(a, int(cnts[i])))
                else:
                    bar = _run_model(st, ins, t, lambda: tab.get(a, what))
                    _run_model(st, ins, t, bar.inval)
                st.wake(bar_key(cta, a))
        return run_init

    if op in ("expect_tx", "complete_tx"):
        rd_n = ctx.read(ins.args[1], "u32")

        def run_tx(st, m):
            sel = _sel(st, m)
            if cluster:     # a barrier of any CTA of the cluster
                ctas, addrs = shared_targets(st, ins, rd_addr(st), sel, space, what)
            else:
                ctas, addrs = st.cta_of[sel], shared_addresses(st, ins, rd_addr(st), sel, space, what)
            ns = np.broadcast_to(np.asarray(rd_n(st)), (st.T,))[sel]
            for i, t in enumerate(sel):
                cta, a = int(ctas[i]), int(addrs[i])
                if cta != int(st.cta_of[t]):
                    cl.check_alive(st, ins, int(t), cta, what)
                bar = _run_model(st, ins, t, lambda: table_of(st, cta).get(a, what))
                if op == "expect_tx":
                    _run_model(st, ins, t, lambda: bar.expect_tx(int(ns[i])))
                else:
                    _run_model(st, ins, t, lambda: bar.complete_tx(int(ns[i])))
                st.wake(bar_key(cta, a))
        return run_tx

    if op in ("arrive", "arrive_drop"):
        expect = ins.has("expect_tx")
        no_complete = ins.has("noComplete")
        sink = isinstance(ins.args[0], ir.Sink)
        if cluster and not sink:
            raise Unsupported(f"{what} on a .shared::cluster barrier cannot return a state; the destination must be "
                              f"'_' (PTX ISA 9.7.13.15.13) ({ins.where()})")
        wr = ctx.write(ins.args[0], "b64")
        rd_x = ctx.read(ins.args[2], "u32") if len(ins.args) > 2 else None

        def run_arrive(st, m):
            sel = _sel(st, m)
            if cluster:     # remote arrive on a barrier of any CTA of the cluster (9.7.13.15.13)
                ctas, addrs = shared_targets(st, ins, rd_addr(st), sel, space, what)
            else:
                ctas, addrs = st.cta_of[sel], shared_addresses(st, ins, rd_addr(st), sel, space, what)
            xs = np.broadcast_to(np.asarray(rd_x(st)), (st.T,))[sel] if rd_x else None
            toks = np.zeros(st.T, np.uint64)
            for i, t in enumerate(sel):
                cta, a = int(ctas[i]), int(addrs[i])
                if cta != int(st.cta_of[t]):
                    cl.check_alive(st, ins, int(t), cta, what)
                bar: Mbarrier = _run_model(st, ins, t, lambda: table_of(st, cta).get(a, what))
                count = 1 if (expect or xs is None) else int(xs[i])
                tx = int(xs[i]) if expect else None
                fn = bar.arrive if op == "arrive" else bar.arrive_drop
                toks[t] = _run_model(st, ins, t, lambda: fn(count, no_complete=no_complete, expect_tx=tx))
                _publish(st, int(st.cta_of[t]), cta, a)
                st.wake(bar_key(cta, a))
            wr(st, toks, m)
        return run_arrive

    # test_wait / try_wait
    if cluster:
        raise Unsupported(f"{what} on a .shared::cluster address is not supported by PTX (waits are only allowed on "
                          f"the local CTA's barrier, 9.7.13.15.8) ({ins.where()})")
    parity = ins.has("parity")
    rd_tok = ctx.read(ins.args[2], "u32" if parity else "b64")
    wr = ctx.write(ins.args[0], "pred")

    def run_wait(st, m):
        sel = _sel(st, m)
        addrs = shared_addresses(st, ins, rd_addr(st), sel, space, what)
        toks = np.broadcast_to(np.asarray(rd_tok(st)), (st.T,))[sel]
        res = np.zeros(st.T, np.bool_)
        parked = np.zeros(st.T, np.bool_)
        for i, t in enumerate(sel):
            cta, a = int(st.cta_of[t]), int(addrs[i])
            bar: Mbarrier = _run_model(st, ins, t, lambda: table_of(st, cta).get(a, what))
            if parity:
                ok = _run_model(st, ins, t, lambda: bar.test_wait_parity(int(toks[i])))
            else:
                ok = _run_model(st, ins, t, lambda: bar.test_wait(int(toks[i])))
            res[t] = ok
            if ok:
                _acquire(st, cta, a)
            else:
                parked[t] = True
        wr(st, res, m)
        if parked.any():
            keys = st.side.setdefault("mbar_wait_keys", set())
            for t in np.flatnonzero(parked):
                k = bar_key(int(st.cta_of[t]), int(addrs[np.searchsorted(sel, t)]))
                st.park(_one(st.T, t), k)
                keys.add(k)
            return BLOCK_END
        return None
    return run_wait


def _one(T: int, t: int) -> np.ndarray:
    m = np.zeros(T, np.bool_)
    m[t] = True
    return m


def build_fence_mbarrier_init(ins: ir.Instr, ctx: Ctx):
    """fence.mbarrier_init.release.cluster (9.7.13.4): orders prior mbarrier.init; no effect in the emulator."""
    def run(st, m):
        return None
    return run


def describe_barriers(st) -> Optional[str]:
    """Deadlock-report lines: every barrier with parked threads or an incomplete transaction count."""
    ts = st.side.get("mbarrier")
    if not ts:
        return None
    lines = []
    for cta, tab in sorted(ts.items()):
        block = st.coords(int(np.flatnonzero(st.cta_of == cta)[0]))[0]
        for bar in tab:
            if not bar.valid:
                continue
            key = bar_key(cta, bar.addr)
            n = int(np.count_nonzero((st.status == machine.PARK) & (st.park_key == key)))
            if n or bar.tx != 0:
                who = f"{n} thread(s) wait on " if n else ""
                lines.append(f"    block {block}: {who}{bar.describe()}")
    if not lines:
        return None
    return "  mbarriers:\n" + "\n".join(lines)


def _fingerprint(st) -> bytes:
    """Digest of everything a parked waiter's future depends on: pcs, thread states, registers, shared memory and
    every mbarrier's state (global memory reaches a thread only through its registers)."""
    h = hashlib.blake2b(digest_size=16)
    for a in (st.pc, st.status, st.park_key, st.smem):
        h.update(a.tobytes())
    for r in st.r:
        h.update(r.tobytes())
    for cta, tab in sorted(tables(st).items()):
        h.update(repr((cta, [(b.addr, b.valid, b.phase, b.pending, b.expected, b.tx) for b in tab])).encode())
    return h.digest()


def _expire(st) -> bool:
    """The time limit of the parked mbarrier waits expires (PTX ISA 9.7.13.15.16: test_wait is non-blocking,
    try_wait is potentially blocking and returns False once a system-dependent time limit passes without the phase
    completing).  Called only when no thread can run, no asynchronous operation is pending and no other progress
    hook found work: the waiters keep the False they already got and run on.  A spin loop comes back to the same
    wait; if the whole wave is then in a state seen at an earlier expiry, nothing can ever change: return False (the
    scheduler reports the deadlock)."""
    keys = st.side.get("mbar_wait_keys")
    if not keys:
        return False
    parked = (st.status == machine.PARK) & np.isin(st.park_key, np.fromiter(keys, np.int64, len(keys)))
    if not parked.any():
        return False
    seen = st.side.setdefault("mbar_expiry_seen", set())
    fp = _fingerprint(st)
    if fp in seen:
        return False
    seen.add(fp)
    st.side["mbar_expiries"] = st.side.get("mbar_expiries", 0) + 1
    progress = st.progress
    for k in sorted(set(st.park_key[parked].tolist())):
        st.wake(int(k))
    st.progress = progress      # not forward progress for the watchdog: a poll that never ends is a spin (watchdog.py)
    return True


def _explain_expiries(st) -> Optional[str]:
    n = st.side.get("mbar_expiries", 0)
    if not n:
        return None
    return (f"  mbarrier waits: the time limit of the parked test_wait/try_wait expired {n} time(s) (they returned "
            "False and their threads ran on); the wave came back to a state it had already been in, so no wait can "
            "succeed any more")


hooks.DEADLOCK_EXPLAINERS.append(describe_barriers)
hooks.DEADLOCK_EXPLAINERS.append(_explain_expiries)
hooks.EXPIRY_HOOKS.append(_expire)


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"state": ("shared", "shared::cta"), "space": ("shared", "shared::cta", "shared::cluster"),
        "asem": ("release", "relaxed"), "wsem": ("acquire", "relaxed"), "scope": ("cta", "cluster"),
        "ad": ("arrive", "arrive_drop"), "wait": ("test_wait", "try_wait")}
FORMS = register(SETS, [
    # form                                                             PTX ISA        builder
    ("mbarrier.init(.shared|.shared::cta).b64",                                     "9.7.13.15.9", build_mbarrier),
    ("mbarrier.inval.shared::cta.b64",                                    "9.7.13.15.10", build_mbarrier),
    ("mbarrier.expect_tx{.relaxed}{.scope}(.shared|.shared::cta|.shared::cluster).b64",
     "9.7.13.15.11", build_mbarrier),
    ("mbarrier.complete_tx{.relaxed}{.cluster}(.shared::cta|.shared::cluster).b64",            "9.7.13.15.12", build_mbarrier),
    ("mbarrier.ad(.shared|.shared::cta).b64",                        "9.7.13.15.13", build_mbarrier),
    ("mbarrier.arrive{.asem}{.cluster}.shared::cluster.b64",                "9.7.13.15.13", build_mbarrier),
    ("mbarrier.arrive.expect_tx(.shared|.shared::cta).b64",              "9.7.13.15.13", build_mbarrier),
    # the default semantics spelled out (.release.cta): the CuTe DSL 4.3 pipelines
    ("mbarrier.arrive.release.cta.shared::cta.b64",                       "9.7.13.15.13", build_mbarrier),
    ("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64",             "9.7.13.15.13", build_mbarrier),
    ("mbarrier.arrive.expect_tx.shared::cluster.b64",      "9.7.13.15.13", build_mbarrier),
    ("mbarrier.arrive.noComplete.shared::cta.b64",            "9.7.13.15.13", build_mbarrier),
    ("mbarrier.wait{.parity}{.acquire}{.scope}(.shared|.shared::cta).b64",         "9.7.13.15.16",  build_mbarrier),
    ("mbarrier.pending_count.b64",                                    "9.7.13.15.17", build_mbarrier),
    ("fence.mbarrier_init.release.cluster",                           "9.7.13.4", build_fence_mbarrier_init),
])
