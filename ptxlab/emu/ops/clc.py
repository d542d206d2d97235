"""Cluster launch control (PTX ISA 9.7.13, ``clusterlaunchcontrol``, PTX 8.6, sm_100+): the instruction handlers.

    clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes{.multicast::cluster::all}.b128
        [addr], [mbar];
    clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, resp;
    clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {x, y, z, _}, resp;
    clusterlaunchcontrol.query_cancel.get_first_ctaid::{x,y,z}.b32.b128 r, resp;

try_cancel: each executing thread issues one request; which requests succeed and which cluster a successful one
takes is hw.clc.LaunchQueue's deterministic policy (decided at issue, so two requests in flight never get the same
cluster). The 16-byte response is written asynchronously (an op of the async engine, like a TMA load): into the
issuing CTA's shared memory at ``addr`` -- or, with .multicast::cluster::all, at ``addr`` of every CTA of the
issuing cluster -- followed by complete-tx of 16 bytes on the mbarrier at ``mbar`` of the same CTA. The write is an
async-proxy write (it needs no proxy fence before an mbarrier-ordered read). The instruction performs no arrive and
no expect-tx: the program does those (PTX ISA example: mbarrier.arrive.expect_tx ... 16).

Rules reported (st.fault): ``addr`` not 16-byte aligned, ``mbar`` not 8-byte aligned or not an initialized
mbarrier, an address outside the executing CTA's shared memory, the response overwriting a live mbarrier; a
try_cancel by a CTA that has already observed a failed response (query_cancel.is_canceled = false: "the behavior of
a subsequent try_cancel is undefined"); query_cancel of a value that is not a try_cancel response; get_first_ctaid
of a failed response (undefined in the PTX ISA).
"""
from __future__ import annotations

import numpy as np

from ..checks import fidelity
from ..hw import cluster as cl
from ..core import ir
from ..engine import machine
from ..hw.clc import RESPONSE_BYTES, LaunchQueue, decode_response, encode_response
from ..core.isa import Ctx, Unsupported, inst_type, register
from .mbarrier import complete_tx_on, shared_addresses, table_of
from ..core.types import b128_words

_SIDE = "clc"


def _state(st) -> dict:
    d = st.side.get(_SIDE)
    if d is None:
        d = st.side[_SIDE] = {"failed_seen": set()}
    return d


def _queue(st, ins, t) -> LaunchQueue:
    q = getattr(st, "launch_queue", None)
    if q is None:
        st.fault(ins, t, "clusterlaunchcontrol.try_cancel outside a launch with a launch queue",
                 "internal: machine.run_kernel sets st.launch_queue (hw.clc.LaunchQueue)")
    return q


class _Response:
    """The asynchronous write of one try_cancel response (and its complete-tx) into each target CTA."""

    def __init__(self, ins, t: int, targets: list, addr: int, mbar: int, ctaid):
        self.ins, self.thread, self.targets, self.addr, self.mbar, self.ctaid = ins, t, targets, addr, mbar, ctaid

    def describe(self) -> str:
        what = f"cancels the cluster of ctaid {self.ctaid}" if self.ctaid is not None else "fails"
        return (f"clusterlaunchcontrol.try_cancel response ({what}) -> shared {self.addr:#x} of {len(self.targets)} "
                f"CTA(s), mbarrier {self.mbar:#x} (PTX line {self.ins.line})")

    def complete(self, st) -> None:
        data = encode_response(self.ctaid)
        lo, hi = self.addr, self.addr + RESPONSE_BYTES
        for cta in self.targets:
            if cta != int(st.cta_of[self.thread]):
                cl.check_alive(st, self.ins, self.thread, cta, "clusterlaunchcontrol.try_cancel multicast response")
            clob = table_of(st, cta).overlapping(lo, hi)
            if clob:
                st.fault(self.ins, self.thread, f"try_cancel response [{lo:#x}, {hi:#x}) overwrites the live mbarrier "
                         f"at {clob[0].addr:#x}", "place the 16-byte response outside the mbarriers")
            smem = st.smem_of(cta)
            smem[lo:hi] = data
            if st.proxy is not None:       # async-proxy write, ordered by the mbarrier's complete-tx
                st.proxy.clean(cta, lo=lo, hi=hi)
            complete_tx_on(st, self.ins, self.thread, cta, self.mbar, RESPONSE_BYTES)


def build_try_cancel(ins: ir.Instr, ctx: Ctx):
    if not ins.has("async") or not ins.has("mbarrier::complete_tx::bytes") or not ins.has("b128"):
        raise Unsupported("clusterlaunchcontrol.try_cancel needs .async.mbarrier::complete_tx::bytes ... .b128 "
                          f"(PTX ISA 9.7.13) ({ins.where()})")
    multicast = ins.has("multicast::cluster::all")
    space = "shared" if ins.has("shared::cta") else "generic"
    rd_addr, rd_bar = ctx.address(ins.args[0]), ctx.address(ins.args[1])

    def run(st, m):
        sel = np.arange(st.T)[st.status == machine.RUN] if m is None else np.flatnonzero(m)
        addrs = shared_addresses(st, ins, rd_addr(st), sel, space, "try_cancel response address")
        bars = shared_addresses(st, ins, rd_bar(st), sel, space, "try_cancel mbarrier")
        seen = _state(st)["failed_seen"]
        for i, t in enumerate(sel):
            t = int(t)
            cta = int(st.cta_of[t])
            a, b = int(addrs[i]), int(bars[i])
            if a % 16:
                st.fault(ins, t, f"try_cancel response address {a:#x} is not 16-byte aligned",
                         "the 16-byte response must be naturally aligned (PTX ISA 9.7.13 clusterlaunchcontrol)")
            if b % 8 or table_of(st, cta).find(b) is None:
                st.fault(ins, t, f"try_cancel mbarrier at shared {b:#x} is not an initialized, 8-byte aligned mbarrier",
                         "mbarrier.init it before the request")
            if cta in seen:
                st.fault(ins, t, "clusterlaunchcontrol.try_cancel after this CTA observed a failed request",
                         "PTX ISA 9.7.13: once a CTA has observed a try_cancel completing as failed "
                         "(query_cancel.is_canceled = false), a further try_cancel is undefined behaviour; leave the "
                         "scheduling loop instead")
            ctaid = _queue(st, ins, t).try_cancel()
            n = cl.size(st) if multicast else 1
            targets = [int(cl.peer(st, cta, r)) for r in range(n)] if multicast else [cta]
            st.engine.submit(_Response(ins, t, targets, a, b, ctaid))
    return run


def _decode(st, ins, rd, m):
    sel = np.arange(st.T) if m is None else np.flatnonzero(m)
    v = np.broadcast_to(rd(st), (st.T,))
    words = b128_words(v).view(np.uint32).reshape(st.T, 4)
    valid, canceled, x, y, z = decode_response(words)
    bad = ~valid[sel]
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        st.fault(ins, sel[k:], "clusterlaunchcontrol.query_cancel of a value that is not a try_cancel response",
                 f"the .b128 operand holds {bytes(words[sel[k]].view(np.uint8)).hex()}; load it with ld.shared.b128 "
                 "from the response address after the try_cancel mbarrier phase completed")
    return sel, canceled, (x, y, z)


def build_query_cancel(ins: ir.Instr, ctx: Ctx):
    if inst_type(ins) != "b128" and "b128" not in ins.mods:
        raise Unsupported(f"clusterlaunchcontrol.query_cancel needs a .b128 response operand ({ins.where()})")
    rd = ctx.read(ins.args[1], "b128")
    if ins.has("is_canceled"):
        wr = ctx.write(ins.args[0], "pred")

        def run_is(st, m):
            sel, canceled, _ = _decode(st, ins, rd, m)
            failed = sel[~canceled[sel]]
            if failed.size:
                _state(st)["failed_seen"].update(int(c) for c in np.unique(st.cta_of[failed]))
            wr(st, canceled, m)
        return run_is
    which = next((mm for mm in ins.mods if mm.startswith("get_first_ctaid")), None)
    if which is None:
        raise Unsupported(f"clusterlaunchcontrol.query_cancel.{'.'.join(ins.mods)} is not a PTX ISA form "
                          f"({ins.where()})")
    if which == "get_first_ctaid":
        items = ins.args[0].items if isinstance(ins.args[0], ir.Vec) else ()
        if not ins.has("v4") or len(items) != 4:
            raise Unsupported(f"get_first_ctaid without ::x/::y/::z needs .v4.b32 {{x, y, z, _}} ({ins.where()})")
        wrs = [ctx.write(op, "b32") for op in items[:3]]
        axes = (0, 1, 2)
    else:
        ax = which.split("::", 1)[1] if "::" in which else ""
        if ax not in ("x", "y", "z"):
            raise Unsupported(f"query_cancel.{which}: dimension must be ::x, ::y or ::z ({ins.where()})")
        wrs = [ctx.write(ins.args[0], "b32")]
        axes = ("xyz".index(ax),)

    def run_get(st, m):
        sel, canceled, xyz = _decode(st, ins, rd, m)
        bad = ~canceled[sel]
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            fidelity.violation(st, ins, sel[k:], "clc_failed_ctaid",
                               "clusterlaunchcontrol.query_cancel.get_first_ctaid of a failed request",
                               "the ctaid of a failed try_cancel response is undefined (PTX ISA 9.7.13); test "
                               "query_cancel.is_canceled first and predicate this instruction on it")
            xyz = [np.where(canceled, x, np.uint32(UNDEFINED_CTAID)) for x in xyz]
        for w, a in zip(wrs, axes):
            w(st, xyz[a].astype(np.uint32), m)
    return run_get


# what get_first_ctaid of a failed response returns when that is only warned about (fidelity rule clc_failed_ctaid):
# far outside any grid, so a kernel that uses it anyway faults on the first access it derives from it
UNDEFINED_CTAID = 0xFFFFFFFF

__all__ = ["build_try_cancel", "build_query_cancel", "UNDEFINED_CTAID"]


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"dim": ("get_first_ctaid::x", "get_first_ctaid::y", "get_first_ctaid::z")}
FORMS = register(SETS, [
    # form                                                                                     PTX ISA
    ("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes{.multicast::cluster::all}"
     ".b128",                                                                                 "9.7.13.17", build_try_cancel),
    ("clusterlaunchcontrol.query_cancel.is_canceled.pred.b128",                              "9.7.13.18", build_query_cancel),
    ("clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128",                        "9.7.13.18", build_query_cancel),
    ("clusterlaunchcontrol.query_cancel(.get_first_ctaid::x|.get_first_ctaid::y).b32.b128",
     "9.7.13.18", build_query_cancel),
])
