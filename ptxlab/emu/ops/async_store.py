"""Asynchronous stores and reductions into distributed shared memory (sm_90): st.async (PTX ISA 9.7.9.12) and
red.async (9.7.13.7) with .mbarrier::complete_tx::bytes completion, and setmaxnreg (9.7.19.5).

st.async / red.async write (reduce into) a CTA's shared memory of the cluster, usually a peer's, and then perform
complete-tx with the access size in bytes on the mbarrier at ``[mbar]``, which must be in the same CTA as the data
(9.7.9.12).  The value is taken at issue; the write and the complete-tx happen when the async engine completes the
operation.  Reduction rules as atom/red (ops/atomic.py).  The sm_100 forms with .release / .mmio on global memory
are refused.

setmaxnreg.{inc,dec}.sync.aligned.u32 n: a register-allocation hint with no effect on the emulator's register file;
all four warps of the warpgroup execute it together (early warps wait) and n must be a multiple of 8 in [24, 256].
"""
from __future__ import annotations

import numpy as np

from ..core import ir
from ..core.isa import RETRY, Ctx, Unsupported, register
from ..hw import cluster as cl
from .atomic import _combine
from .bulk_copy import _per_thread, _sel
from .mbarrier import complete_tx_on, shared_targets
from .wgmma import _groups

_NP = {"b32": np.uint32, "u32": np.uint32, "s32": np.uint32, "f32": np.uint32, "b64": np.uint64, "u64": np.uint64,
       "s64": np.uint64, "f64": np.uint64}


class _AsyncSt:
    def __init__(self, ins, t, cta, dcta, off, data, bcta, bar, op=None, ty=None):
        self.ins, self.thread, self.cta, self.dcta, self.off, self.data = ins, t, cta, dcta, off, data
        self.bcta, self.bar, self.op, self.ty = bcta, bar, op, ty
        self.done = False

    def smem_dest(self, st):
        return [(self.dcta, self.thread)]

    def describe(self) -> str:
        what = "st.async" if self.op is None else f"red.async.{self.op}"
        return f"{what} {self.data.size} bytes -> CTA {self.dcta} shared {self.off:#x} (PTX line {self.ins.line})"

    def complete(self, st) -> None:
        if self.dcta != self.cta:
            cl.check_alive(st, self.ins, self.thread, self.dcta, "st.async / red.async into the shared memory")
        smem = st.smem_of(self.dcta)
        n = self.data.size
        if self.off + n > smem.size:
            st.fault(self.ins, self.thread, f"{self.describe()}: past the CTA's {smem.size} bytes of shared memory")
        if self.op is None:
            smem[self.off:self.off + n] = self.data
        else:
            dt = _NP[self.ty]
            cur = smem[self.off:self.off + n].copy().view(dt)
            smem[self.off:self.off + n] = np.asarray(_combine(self.op, self.ty, cur, self.data.view(dt), None, True)
                                                     ).astype(dt).view(np.uint8)
        if st.proxy is not None:
            st.proxy.clean(self.dcta, lo=self.off, hi=self.off + n)
        self.done = True
        complete_tx_on(st, self.ins, self.thread, self.bcta, self.bar, n)


def _build(ins: ir.Instr, ctx: Ctx, red: bool):
    ty = next(x for x in reversed(ins.mods) if x in _NP)
    op = next((x for x in ins.mods if x in ("add", "min", "max", "inc", "dec", "and", "or", "xor")), None) if red \
        else None
    vec = next((int(x[1:]) for x in ins.mods if x in ("v2", "v4")), 1)
    if len(ins.args) != 3:
        raise Unsupported(f"{ins.name}: expected [a], b, [mbar] operands (PTX ISA 9.7.9.12) ({ins.where()})")
    rd_addr, rd_bar = ctx.address(ins.args[0]), ctx.address(ins.args[2])
    dt = _NP[ty]
    rds = ctx.read_vec(ins.args[1], f"b{8 * np.dtype(dt).itemsize}")       # the bits, whatever the type
    if len(rds) != vec:
        raise Unsupported(f"{ins.name}: .v{vec} needs {vec} source registers ({ins.where()})")

    def run(st, m):
        sel = _sel(st, m)
        dctas, offs = shared_targets(st, ins, rd_addr(st), sel, "shared", f"{ins.opcode} destination")
        bctas, bars = shared_targets(st, ins, rd_bar(st), sel, "shared", f"{ins.opcode} mbarrier")
        vals = np.stack([_per_thread(st, r, dt) for r in rds], 1)
        for i, t in enumerate(sel):
            t = int(t)
            if int(dctas[i]) != int(bctas[i]):
                st.fault(ins, t, f"{ins.opcode}: the mbarrier is not in the CTA whose shared memory is written",
                         "rule: [mbar] must be in the same CTA as [a] (PTX ISA 9.7.9.12, 9.7.13.7)")
            if int(offs[i]) % (vec * dt().itemsize):
                st.fault(ins, t, f"{ins.opcode}: misaligned {vec * dt().itemsize}-byte access at {int(offs[i]):#x}")
            st.engine.submit(_AsyncSt(ins, t, int(st.cta_of[t]), int(dctas[i]), int(offs[i]),
                                      vals[t].astype(dt).view(np.uint8).copy(), int(bctas[i]), int(bars[i]), op, ty))
    return run


def build_st_async(ins, ctx):
    return _build(ins, ctx, False)


def build_red_async(ins, ctx):
    return _build(ins, ctx, True)


def build_setmaxnreg(ins: ir.Instr, ctx: Ctx):
    if not isinstance(ins.args[0], ir.Imm) or not (24 <= int(ins.args[0].value) <= 256) or int(ins.args[0].value) % 8:
        raise Unsupported(f"{ins.name}: imm-reg-count must be an immediate multiple of 8 in [24, 256] "
                          f"(PTX ISA 9.7.19.5) ({ins.where()})")

    def run(st, m):
        return RETRY if _groups(st, ins, m) is None else None
    return run


SETS = {"vec": ("v2", "v4"), "sttype": tuple(_NP), "incdec": ("inc", "dec"), "mm": ("min", "max"),
        "mmtype": ("u32", "s32"), "bitop": ("and", "or", "xor"), "addtype": ("u32", "s32", "u64"),
        "action": ("inc", "dec")}
_R = "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes"
FORMS = register(SETS, [
    # form                                                                         PTX ISA      builder
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes{.vec}.sttype", "9.7.9.12", build_st_async),
    (f"{_R}.incdec.u32",                                                          "9.7.13.7", build_red_async),
    (f"{_R}.mm.mmtype",                                                           "9.7.13.7", build_red_async),
    (f"{_R}.bitop.b32",                                                           "9.7.13.7", build_red_async),
    (f"{_R}.add.addtype",                                                         "9.7.13.7", build_red_async),
    ("setmaxnreg.action.sync.aligned.u32",                                        "9.7.19.5", build_setmaxnreg),
])
