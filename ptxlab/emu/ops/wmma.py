"""WMMA (PTX ISA 9.7.14.4): wmma.load (9.7.14.4.3), wmma.store (9.7.14.4.4), wmma.mma (9.7.14.4.5) for the
sm_80 / sm_90 f16, bf16, tf32, s8 / u8 and f64 forms.

Fragments (hw/wmma.py): the register counts are the ISA's; the layout inside them is the ISA's "unspecified": the
H100's where its probe measured it (``_modelled``), else internal -- every wmma instruction first checks (once per
kernel, checks/wmma_fragments.py) that a kernel reading fragment elements uses only measured fragments, and refuses
to run otherwise.  Memory (9.7.14.4.2): element
(r, c) of a .row matrix at ``p + (r * stride + c) * size``, of a .col matrix at ``p + (c * stride + r) * size``;
the stride defaults to the leading dimension; ``p`` and the stride in bytes must be multiples of the fragment size.

Arithmetic (hw/wmma.py ``mma``: what ptxas lowers wmma.mma to, with the mma.sync rules the H100 matched): f16 / bf16
with C and D of one type: the tensor-core window over the 16 products of each element (HMMA.16816); tf32 m16n16k8:
two chained windows of 4 products, k 0-3 then 4-7 (two HMMA.1684); s8 / u8: exact, .satfinite clamps once (IMMA);
f64 .rn: one IEEE fma per k in k order (DMMA).
**UNCONFIRMED on the H100** (ptx_docs/isa_coverage_notes.md "WMMA"): the probe entries of tests/corpus/kernels_wmma.py
decide.  f16 with C and D of different types as ptxas lowers them (f16 C widened exactly, or the f32 result rounded
to f16 by F2FP: a NaN result refused).  Refused: f64 .rz / .rm / .rp, the sub-byte and b1 forms (sm_75 .m8n8k32 /
.m8n8k128), and a kernel that reads fragment elements of a layout not measured (.u8, C / D .col).
"""
from __future__ import annotations

import numpy as np

from ..checks import wmma_fragments
from ..core import ir
from ..core.isa import Ctx, Unsupported, register
from ..hw import warp_mma as wm
from ..hw import wmma as fw
from .warp_mma import _warps, _words, _write_words

_NP = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _modelled(ins: ir.Instr) -> bool:
    """Whether every fragment of a wmma instruction is in the H100's measured layout (hw/wmma.py ``measured``): A / B
    loads of either layout; C loads and D stores .row only (the probe loaded C .row)."""
    mods = ins.mods
    shape = next(x for x in mods if x in fw.SHAPES)
    types = [x for x in mods if x in fw.ELEMENT]
    if mods[0] == "mma":
        at = "f16" if len(types) == 2 else types[1]
        frs = [fw.fragment("a", shape, at), fw.fragment("b", shape, at), fw.fragment("c", shape, types[0]),
               fw.fragment("c", shape, types[-1])]
    else:
        matrix = mods[1] if mods[0] == "load" else "c"
        if matrix == "c" and "row" not in mods:
            return False
        frs = [fw.fragment(matrix, shape, mods[-1])]
    return all(fw.measured(f) is not None for f in frs)


def _check_kernel(ins: ir.Instr, ctx: Ctx) -> None:
    """Refuse the instruction if any instruction of the kernel could observe the fragment layout (module doc)."""
    prog = ctx.program
    probs = getattr(prog, "_wmma_layout_problems", None)
    if probs is None:
        probs = wmma_fragments.problems(prog.body, _modelled)
        prog._wmma_layout_problems = probs
    if probs:
        raise Unsupported(f"not implemented: {ins.name} in a kernel that accesses WMMA fragment elements: "
                          f"{probs[0]}{f' (and {len(probs) - 1} more)' if len(probs) > 1 else ''} ({ins.where()}). "
                          "The fragment layout is unspecified in the PTX ISA; the emulator models the H100's only "
                          "where the probe measured it (A / B of f16, bf16, tf32, s8, f64; C / D .row of f32, f16, "
                          "s32, f64; not .u8, not C .col: ptx_docs/isa_coverage_notes.md 'WMMA'); use mma.sync, "
                          "whose fragments the ISA specifies")


def _space(mods) -> str:
    return "shared" if any(m.startswith("shared") for m in mods) else ("global" if "global" in mods else "generic")


def _plan(ins: ir.Instr, ctx: Ctx, matrix: str):
    """(fragment, layout, address reader, stride reader or None, state space) of a wmma.load / wmma.store."""
    mods = ins.mods
    shape = next(x for x in mods if x in fw.SHAPES)
    fr = fw.fragment(matrix, shape, mods[-1])
    layout = next(x for x in mods if x in ("row", "col"))
    ai, vi = (1, 0) if mods[0] == "load" else (0, 1)
    addr = ctx.address(ins.args[ai])
    stride = ctx.read(ins.args[2], "u32") if len(ins.args) > 2 else None
    vec = ins.args[vi]
    if len(vec.items if isinstance(vec, ir.Vec) else (vec,)) != fr.nregs:
        raise Unsupported(f"{ins.name}: the fragment is {fr.nregs} .{fr.reg_type} registers ({ins.where()})")
    return fr, layout, addr, stride, _space(mods)


def _addresses(st, ins, fr, layout, addr, stride, ws):
    """(W*32, n) element addresses of the warps ws; faults on the alignment rule of 9.7.14.4.2."""
    T = st.T
    a = np.broadcast_to(np.asarray(addr(st)), (T,)).astype(np.uint64)
    s = (np.broadcast_to(np.asarray(stride(st)), (T,)).astype(np.uint64) if stride is not None
         else np.full(T, fw.default_stride(fr, layout), np.uint64))
    tid = (ws[:, None] * 32 + np.arange(32)[None, :]).reshape(-1)
    r, c = fw.element_index(fr)
    lead, minor = (r, c) if layout == "row" else (c, r)
    esz = fr.bits // 8
    el = np.tile(lead, (len(ws), 1)).astype(np.uint64) * s[tid, None] + np.tile(minor, (len(ws), 1)).astype(np.uint64)
    bad = (a[tid] % fr.bytes != 0) | ((s[tid] * esz) % fr.bytes != 0)
    if bad.any():
        t = int(tid[np.flatnonzero(bad)[0]])
        st.fault(ins, t, f"{ins.name}: address {int(a[t]):#x} or stride {int(s[t])} (elements of {esz} bytes) is "
                 f"not a multiple of the fragment size {fr.bytes} bytes",
                 "rule: the start of every row / column must be aligned to the fragment size (PTX ISA 9.7.14.4.2)")
    return tid, a[tid, None] + el * np.uint64(esz)


def build_load(ins: ir.Instr, ctx: Ctx):
    """wmma.load.{a,b,c}.sync.aligned.layout.shape{.ss}.type r, [p]{, stride}."""
    _check_kernel(ins, ctx)
    fr, layout, addr, stride, space = _plan(ins, ctx, ins.mods[1])
    wrs = ctx.write_vec(ins.args[0], fr.reg_type)
    edt = _NP[fr.bits]

    def run(st, m):
        ws = _warps(st, ins, m)
        tid, ea = _addresses(st, ins, fr, layout, addr, stride, ws)
        vals = np.zeros((st.T, fr.n), edt)
        mask = np.zeros(st.T, bool)
        mask[tid] = True
        for i in range(fr.n):
            a = np.zeros(st.T, np.uint64)
            a[tid] = ea[:, i]
            vals[:, i] = st.load(ins, space, a, mask, edt, 1).reshape(-1)
        el = vals[tid].reshape(len(ws), 32, fr.n)
        words = wm.pack(el, fr.bits, fr.per_reg).astype(np.uint64 if fr.reg_type == "b64" else np.uint32)
        _write_words(wrs, st, ws, words, m)
    return run


def build_store(ins: ir.Instr, ctx: Ctx):
    """wmma.store.d.sync.aligned.layout.shape{.ss}.type [p], r{, stride}."""
    _check_kernel(ins, ctx)
    fr, layout, addr, stride, space = _plan(ins, ctx, "c")
    rds = ctx.read_vec(ins.args[1], fr.reg_type)
    edt = _NP[fr.bits]
    lane, slot = fw.first_slots(fr)

    def run(st, m):
        ws = _warps(st, ins, m)
        tid, ea = _addresses(st, ins, fr, layout, addr, stride, ws)
        words = _words(rds, st, ws, np.uint64 if fr.reg_type == "b64" else np.uint32)
        el = wm.unpack(words, fr.bits, fr.per_reg).astype(edt)        # (W, 32, n)
        tid_w = tid.reshape(len(ws), 32)
        for i in range(fr.n):                                       # each element once: its first slot
            lanes = lane[slot == i]                                 # distinct lanes, one slot
            if not lanes.size:
                continue
            t = tid_w[:, lanes].reshape(-1)
            a = np.zeros(st.T, np.uint64)
            a[t] = ea.reshape(len(ws), 32, fr.n)[:, lanes, i].reshape(-1)
            v = np.zeros(st.T, edt)
            v[t] = el[:, lanes, i].reshape(-1)
            mask = np.zeros(st.T, bool)
            mask[t] = True
            st.store(ins, space, a, mask, v, edt, 1)
    return run


def build_mma(ins: ir.Instr, ctx: Ctx):
    """wmma.mma.sync.aligned.alayout.blayout.shape{.rnd}.dtype{.atype.btype}.ctype{.satfinite} d, a, b, c."""
    _check_kernel(ins, ctx)
    mods = ins.mods
    shape = next(x for x in mods if x in fw.SHAPES)
    types = [x for x in mods if x in fw.ELEMENT]
    dtype, ctype = types[0], types[-1]
    atype, btype = ("f16", "f16") if len(types) == 2 else (types[1], types[2])
    fa, fb = fw.fragment("a", shape, atype), fw.fragment("b", shape, btype)
    fc, fd = fw.fragment("c", shape, ctype), fw.fragment("c", shape, dtype)
    sat = "satfinite" in mods
    rd = [ctx.read_vec(ins.args[j], f.reg_type) for j, f in ((1, fa), (2, fb), (3, fc))]
    wr = ctx.write_vec(ins.args[0], fd.reg_type)
    for op, f in ((ins.args[0], fd), (ins.args[1], fa), (ins.args[2], fb), (ins.args[3], fc)):
        if len(op.items if isinstance(op, ir.Vec) else (op,)) != f.nregs:
            raise Unsupported(f"{ins.name}: a {f.matrix.upper()} fragment is {f.nregs} registers ({ins.where()})")

    def compute(A, B, C):
        return fw.mma(A, B, C, atype, btype, dtype, ctype, sat)

    def matrix(fr, words):
        el = wm.unpack(words, fr.bits, fr.per_reg)                 # (W, 32, n)
        lane, slot = fw.first_slots(fr)
        return el[:, lane, slot].reshape(len(words), fr.rows, fr.cols)

    def run(st, m):
        ws = _warps(st, ins, m)
        mats = [matrix(f, _words(r, st, ws, np.uint64 if f.reg_type == "b64" else np.uint32))
                for r, f in zip(rd, (fa, fb, fc))]
        r, c = fw.element_index(fd)
        out = np.empty((len(ws), 32, fd.n), np.uint64)
        for w in range(len(ws)):
            D = compute(mats[0][w], mats[1][w], mats[2][w])
            out[w] = np.asarray(D).astype(np.uint64)[r, c]
        words = wm.pack(out, fd.bits, fd.per_reg).astype(np.uint64 if fd.reg_type == "b64" else np.uint32)
        _write_words(wr, st, ws, words, m)
    return run


# ------------------------------------------------------------------------------------------------ forms
SETS = {"abc": ("a", "b", "c"), "ab": ("a", "b"), "layout": ("row", "col"), "alayout": ("row", "col"),
        "blayout": ("row", "col"), "fshape": ("m16n16k16", "m8n32k16", "m32n8k16"),
        "ss": ("global", "shared", "shared::cta"), "i8type": ("s8", "u8"), "ftype": ("f16", "f32")}
FORMS = register(SETS, [
    # form                                                                                 PTX ISA        builder
    ("wmma.load.abc.sync.aligned.layout.fshape{.ss}.f16",                                 "9.7.14.4.3", build_load),
    ("wmma.load.c.sync.aligned.layout.fshape{.ss}.f32",                                   "9.7.14.4.3", build_load),
    ("wmma.load.ab.sync.aligned.layout.fshape{.ss}.i8type",                               "9.7.14.4.3", build_load),
    ("wmma.load.c.sync.aligned.layout.fshape{.ss}.s32",                                   "9.7.14.4.3", build_load),
    ("wmma.load.ab.sync.aligned.layout.fshape{.ss}.bf16",                                 "9.7.14.4.3", build_load),
    ("wmma.load.ab.sync.aligned.layout.m16n16k8{.ss}.tf32",                               "9.7.14.4.3", build_load),
    ("wmma.load.c.sync.aligned.layout.m16n16k8{.ss}.f32",                                 "9.7.14.4.3", build_load),
    ("wmma.load.abc.sync.aligned.layout.m8n8k4{.ss}.f64",                                 "9.7.14.4.3", build_load),
    ("wmma.store.d.sync.aligned.layout.fshape{.ss}.ftype",                                "9.7.14.4.4", build_store),
    ("wmma.store.d.sync.aligned.layout.fshape{.ss}.s32",                                  "9.7.14.4.4", build_store),
    ("wmma.store.d.sync.aligned.layout.m16n16k8{.ss}.f32",                                "9.7.14.4.4", build_store),
    ("wmma.store.d.sync.aligned.layout.m8n8k4{.ss}.f64",                                  "9.7.14.4.4", build_store),
    ("wmma.mma.sync.aligned.alayout.blayout.fshape.f16.f16",                              "9.7.14.4.5", build_mma),
    ("wmma.mma.sync.aligned.alayout.blayout.fshape.f32.f32",                              "9.7.14.4.5", build_mma),
    ("wmma.mma.sync.aligned.alayout.blayout.fshape.f16.f32",                              "9.7.14.4.5", build_mma),
    ("wmma.mma.sync.aligned.alayout.blayout.fshape.f32.f16",                              "9.7.14.4.5", build_mma),
    ("wmma.mma.sync.aligned.alayout.blayout.fshape.s32.i8type.i8type.s32{.satfinite}",    "9.7.14.4.5", build_mma),
    ("wmma.mma.sync.aligned.alayout.blayout.fshape.f32.bf16.bf16.f32",                    "9.7.14.4.5", build_mma),
    ("wmma.mma.sync.aligned.alayout.blayout.m16n16k8.f32.tf32.tf32.f32",                  "9.7.14.4.5", build_mma),
    ("wmma.mma.sync.aligned.alayout.blayout.m8n8k4{.rn}.f64.f64.f64.f64",                 "9.7.14.4.5", build_mma),
])
