"""Warpgroup-level MMA (PTX ISA 9.7.15, sm_90a): wgmma.mma_async, wgmma.fence, wgmma.commit_group, wgmma.wait_group.

A warpgroup is four contiguous warps of a CTA (warp ranks 4g..4g+3); every instruction is executed by all 128 of its
threads together (.sync.aligned: early warps wait for the others; a warpgroup with an exited thread faults).

wgmma.mma_async computes D = A·B (+ D when scale-d is true) when it is issued: A from shared memory through its
matrix descriptor (9.7.15.5.1.2.2, the canonical layouts of ptxlab.desc) or from registers, B from shared memory;
imm-scale-a/b = -1 negates A/B, imm-trans-a/b = 1 reads A/B MN-major; arithmetic hw/warp_mma_arith.py (FP8:
hw/wgmma_fp8_arith.py, Hopper's reduced-precision accumulation as measured on the H100).  The D
registers are then *pending* until a wgmma.wait_group covers the instruction's commit group: reading one earlier is
the fidelity rule ``wgmma_wait`` (checks/fidelity.py; by default a warning and the computed value, because ptxas
guards the first use of each accumulator register with ``WARPGROUP.DEPBAR`` whether or not the PTX waits: sm_90a
SASS, tests/emu/ops/test_emu_wgmma.py; strict: an error).  The shared-memory operands are read through the async
proxy (the proxy check of hw/proxy.py applies).  wgmma.fence orders register accesses around mma_async: with
operations performed at issue it has nothing to do in the emulator.
"""
from __future__ import annotations

import numpy as np

from ..core import ir
from ..core.forms import TYPE_NAMES
from ..core.isa import RETRY, Ctx, Unsupported, register
from ..engine.machine import EXITED, RUN
from ..hw import warp_mma as wm
from ..hw.tcgen05_mma import MmaError, gather_smem_operand
from ..hw.warp_mma_arith import mma_float, mma_int
from ..hw.wgmma_fp8_arith import mma_fp8_hopper
from ...mma.codec import ModelSilent

_ECLASS = {"f16": ("16b", 16, "f16"), "bf16": ("16b", 16, "f16"), "tf32": ("tf32", 32, "tf32"),
           "e4m3": ("8b", 8, "f8f6f4"), "e5m2": ("8b", 8, "f8f6f4"), "u8": ("8b", 8, "i8"), "s8": ("8b", 8, "i8")}
_SW = {0: 0, 1: 2, 2: 4, 3: 6}          # wgmma swizzle code -> tcgen05 (sm_100) descriptor layout code


def sm100_desc(desc: int) -> int:
    """The tcgen05 form of a wgmma matrix descriptor (same start / LBO / SBO / base-offset fields; swizzle in bits
    62-63 as 0 none, 1 128B, 2 64B, 3 32B becomes bits 61-63 with the version bit 46), for ptxlab.desc."""
    keep = desc & ((1 << 46) - 1) | (desc & (0x7 << 49))
    return keep | (1 << 46) | (_SW[(desc >> 62) & 3] << 61)


def _groups(st, ins, m) -> list:
    """[(cta, warpgroup, thread indices (128,))] executing; None if some threads of a warpgroup have not arrived."""
    sel = np.flatnonzero(st.status == RUN) if m is None else np.flatnonzero(m)
    wg = st.cta_of * 1024 + st.warp // 4
    out = []
    for key in np.unique(wg[sel]):
        members = np.flatnonzero(wg == key)
        if members.size != 128 or (~st.valid[members]).any() or (st.status[members] == EXITED).any():
            st.fault(ins, members[:1], f"{ins.opcode}.{'.'.join(ins.mods)} executed by a warpgroup that is not 128 "
                     "live threads", "rule: all threads of the warpgroup (4 warps) execute wgmma (PTX ISA 9.7.15.1)")
        arrived = np.isin(members, sel)
        if not arrived.all():
            return None
        out.append((int(key // 1024), int(key % 1024), members))
    return out


def _state(st) -> dict:
    return st.side.setdefault("wgmma", {"open": {}, "committed": {}})


# ------------------------------------------------------------------------------------------------ mma_async
def build_mma_async(ins: ir.Instr, ctx: Ctx):
    mods = ins.mods
    shape = next(x for x in mods if x.startswith("m64n"))
    n, k = int(shape[4:shape.index("k")]), int(shape[shape.index("k") + 1:])
    dtype, atype, btype = [x for x in mods if x in TYPE_NAMES]
    sat = "satfinite" in mods
    eclass, ebits, kind = _ECLASS[atype]
    d_items = ins.args[0].items if isinstance(ins.args[0], ir.Vec) else ()
    per = n // 2 if dtype in ("f32", "s32") else n // 4
    if len(d_items) != per:
        raise Unsupported(f"{ins.name}: D needs {per} registers, got {len(d_items)} ({ins.where()})")
    a_regs = isinstance(ins.args[1], ir.Vec)
    rest = ins.args[3:]
    imms = [int(x.value) for x in rest[1:]] if all(isinstance(x, ir.Imm) for x in rest[1:]) else None
    if imms is None:
        raise Unsupported(f"{ins.name}: imm-scale / imm-trans operands must be immediates ({ins.where()})")
    scale_a = scale_b = 1
    trans_a = trans_b = 0
    if kind != "i8":
        scale_a, scale_b = imms[0], imms[1]
        if atype in ("f16", "bf16"):
            if a_regs:
                trans_b = imms[2]
            else:
                trans_a, trans_b = imms[2], imms[3]
    if scale_a not in (1, -1) or scale_b not in (1, -1) or trans_a not in (0, 1) or trans_b not in (0, 1):
        raise Unsupported(f"{ins.name}: imm-scale must be 1 or -1 and imm-trans 0 or 1 ({ins.where()})")
    rd_scale_d = ctx.read(rest[0], "pred")
    rd_d = [ctx.read(x, "b32") for x in d_items]
    wr_d = [ctx.write(x, "b32") for x in d_items]
    slots = [x.idx for x in d_items if isinstance(x, ir.Reg)]
    rd_bdesc = ctx.read(ins.args[2], "b64")
    if a_regs:
        a_items = ins.args[1].items
        a_rows, a_cols = wm.wgmma_a_index(eclass)
        if len(a_items) * (32 // ebits) != a_rows.shape[1]:
            raise Unsupported(f"{ins.name}: A in registers needs {a_rows.shape[1] * ebits // 32} registers "
                              f"({ins.where()})")
        rd_a = [ctx.read(x, "b32") for x in a_items]
    else:
        rd_adesc = ctx.read(ins.args[1], "b64")
    d_rows, d_cols = wm.wgmma_d_index(n, n // 2)
    cbits = 16 if dtype == "f16" else 32
    sign = {16: 0x8000, 8: 0x80, 32: 0x80000000}[ebits]

    def negate(codes, s):
        return codes if s == 1 else codes ^ np.asarray(sign, codes.dtype)

    def run(st, m):
        groups = _groups(st, ins, m)
        if groups is None:
            return RETRY
        T = st.T
        sd = np.broadcast_to(np.asarray(rd_scale_d(st)), (T,))
        bd = np.broadcast_to(np.asarray(rd_bdesc(st)), (T,)).astype(np.uint64)
        ad = None if a_regs else np.broadcast_to(np.asarray(rd_adesc(st)), (T,)).astype(np.uint64)
        dw = np.stack([np.broadcast_to(np.asarray(r(st)), (T,)).astype(np.uint32) for r in rd_d], 1)
        out = dw.copy()
        for cta, _g, th in groups:
            t0 = int(th[0])
            smem = st.smem_of(cta)

            def chk(what):
                if st.proxy is None:
                    return None
                return lambda addr: st.proxy.check_read(st, ins, t0, cta, f"wgmma.mma_async {what} operand",
                                                        addrs=addr)
            for what, dv in (("B descriptor", bd),) + (() if a_regs else (("A descriptor", ad),)):
                if (dv[th] != dv[t0]).any():
                    st.fault(ins, th, f"wgmma.mma_async: the {what} differs between threads of the warpgroup",
                             "rule: the operands of wgmma must be warpgroup-uniform (PTX ISA 9.7.15.5.2)")
            try:
                B = gather_smem_operand(smem, sm100_desc(int(bd[t0])), n, _fmt(btype), kind,
                                        "MN" if trans_b else "K", on_read=chk("B"))          # (N, K)
                if a_regs:
                    words = np.stack([np.broadcast_to(np.asarray(r(st)), (T,)).astype(np.uint32)[th]
                                      for r in rd_a], 1)                                       # (128, regs)
                    el = wm.unpack(words[None], ebits, 32 // ebits)[0]
                    A = np.zeros((64, k), np.uint32)
                    A[a_rows, a_cols] = el
                else:
                    A = gather_smem_operand(smem, sm100_desc(int(ad[t0])), 64, _fmt(atype), kind,
                                            "MN" if trans_a else "K", on_read=chk("A"))      # (64, K)
            except MmaError as e:
                st.fault(ins, t0, f"wgmma.mma_async: {e}")
            A = negate(np.asarray(A).astype(np.uint32), scale_a)
            B = negate(np.asarray(B).astype(np.uint32), scale_b)
            accumulate = bool(sd[t0])
            C = np.zeros((64, n), np.uint32)
            if accumulate:
                el = wm.unpack(dw[th][None], cbits, 32 // cbits)[0]
                C[d_rows, d_cols] = el
            if kind == "i8":
                D = mma_int(A, B.T, C, atype, btype, sat)
            elif kind == "f8f6f4":
                try:
                    D = mma_fp8_hopper(A, B.T, C, atype, btype, dtype)
                except ModelSilent as e:
                    st.fault(ins, t0, f"not implemented: {ins.name} with these operands: {e}",
                             "the Hopper FP8 rule covers what the H100 was measured on (hw/wgmma_fp8_arith.py, "
                             "ptx_docs/isa_coverage_notes.md)")
            else:
                D = mma_float(A, B.T, C, atype, btype, dtype)
            out[th] = wm.pack(D[d_rows, d_cols][None], cbits, 32 // cbits)[0].astype(np.uint32)
            s = _state(st)
            for t in th:
                s["open"].setdefault(int(t), []).append(slots)
        for j, w in enumerate(wr_d):
            w(st, out[:, j], m)
        st.set_pending(slots, m, f"wgmma.mma_async at PTX line {ins.line}")
    return run


def _fmt(ty: str) -> str:
    return {"u8": "u8", "s8": "s8"}.get(ty, ty)


# ------------------------------------------------------------------------------------------------ fence / commit / wait
def build_fence(ins: ir.Instr, ctx: Ctx):
    def run(st, m):
        return RETRY if _groups(st, ins, m) is None else None
    return run


def _threads(st, ins, m):
    """The threads of the complete warpgroups executing ``ins`` (None: some warp has not arrived, retry)."""
    groups = _groups(st, ins, m)
    return None if groups is None else [int(t) for _c, _g, th in groups for t in th]


def build_commit(ins: ir.Instr, ctx: Ctx):
    """Close each thread's open wgmma-group (9.7.15.7.2)."""
    def run(st, m):
        ts = _threads(st, ins, m)
        if ts is None:
            return RETRY
        s = _state(st)
        for t in ts:
            s["committed"].setdefault(t, []).append(s["open"].pop(t, []))
    return run


def build_wait(ins: ir.Instr, ctx: Ctx):
    """wgmma.wait_group.sync.aligned N (9.7.15.7.3): the groups older than the newest N are complete; their D
    registers become valid (unless a younger pending wgmma writes the same register)."""
    if not isinstance(ins.args[0], ir.Imm):
        raise Unsupported(f"wgmma.wait_group needs an immediate group count ({ins.where()})")
    keep = int(ins.args[0].value)

    def run(st, m):
        ts = _threads(st, ins, m)
        if ts is None:
            return RETRY
        s = _state(st)
        for t in ts:
            com = s["committed"].get(t, [])
            done, left = (com[:len(com) - keep], com[len(com) - keep:]) if keep else (com, [])
            s["committed"][t] = left
            still = {x for grp in left for op in grp for x in op} | {x for op in s["open"].get(t, []) for x in op}
            for slot in {x for grp in done for op in grp for x in op} - still:
                ent = st.pending.get(slot)
                if ent is None:
                    continue
                pm = ent[0].copy()
                pm[t] = False
                if pm.any():
                    st.pending[slot] = (pm, ent[1])
                else:
                    del st.pending[slot]
    return run


# ------------------------------------------------------------------------------------------------ forms
_N8 = tuple(f"m64n{n}k{{}}" for n in range(8, 257, 8))
_NI = tuple(f"m64n{n}k32" for n in [8, 16, 24] + list(range(32, 257, 16)))
SETS = {"shape16": tuple(s.format(16) for s in _N8), "shape8": tuple(s.format(8) for s in _N8),
        "shape32": tuple(s.format(32) for s in _N8), "ishape": _NI, "dtype": ("f16", "f32"), "f8": ("e4m3", "e5m2"),
        "i8": ("s8", "u8")}
FORMS = register(SETS, [
    # form                                                                  PTX ISA        builder
    ("wgmma.mma_async.sync.aligned.shape16.dtype.f16.f16",                 "9.7.15.5.2", build_mma_async),
    ("wgmma.mma_async.sync.aligned.shape16.f32.bf16.bf16",                 "9.7.15.5.2", build_mma_async),
    ("wgmma.mma_async.sync.aligned.shape8.f32.tf32.tf32",                  "9.7.15.5.2", build_mma_async),
    ("wgmma.mma_async.sync.aligned.ishape{.satfinite}.s32.i8.i8",          "9.7.15.5.2", build_mma_async),
    # FP8: Hopper's reduced-precision accumulation fitted to every word of the H100 corpus (hw/wgmma_fp8_arith.py);
    # withdrawn on 2026-11-27 before the fit
    ("wgmma.mma_async.sync.aligned.shape32.dtype.f8.f8",                   "9.7.15.5.2", build_mma_async),
    ("wgmma.fence.sync.aligned",                                           "9.7.15.7.1", build_fence),
    ("wgmma.commit_group.sync.aligned",                                    "9.7.15.7.2", build_commit),
    ("wgmma.wait_group.sync.aligned",                                      "9.7.15.7.3", build_wait),
])
