"""Warp-level matrix instructions (PTX ISA 9.7.14): mma.sync (9.7.14.5.14), ldmatrix (9.7.14.5.15), stmatrix
(9.7.14.5.16), movmatrix (9.7.14.5.17).

Every lane of the warp executes these together (.sync.aligned; the ISA leaves a partial warp undefined: the emulator
faults).  Fragments follow hw/warp_mma.py (the ISA's per-shape formulas), the arithmetic hw/warp_mma_arith.py.
Refused (not in the form table): f16 mma with different C and D types (.f32.f16.f16.f16, .f16.f16.f16.f32: the ISA
does not say where that conversion happens), the sm_120a block-scaled and .kind::f8f6f4 mma forms, mma.sp, and the
sm_100a ldmatrix .m16n16 / .m8n16 / .b8 and stmatrix .m16n8 / .b8 forms (their fragment layouts are given only as
figures in the ISA).  m16n8k32 .e4m3/.e5m2 and every m8n8k4 .f16 form follow the H100's lowerings of them
(hw/warp_mma_sm90.py; withdrawn on 2026-11-27, derived from the H100's outputs on 2026-11-28 and the SASS; f16 C with
f32 D: C widened exactly first, as the SASS does; f16 C and D: an f32 tree rounded once to f16).  .f64 NaN results follow the H100 (hw/warp_mma_arith.py).
"""
from __future__ import annotations

import numpy as np

from ..core import ir
from ..core.forms import TYPE_NAMES
from ..core.isa import Ctx, Unsupported, register
from ..engine.machine import EXITED, RUN
from ..hw import warp_mma as wm
from ..hw.warp_mma_arith import mma_f64, mma_float, mma_int
from ..hw.warp_mma_sm90 import mma_fp8_sm90, mma_m8n8k4_f16_sm90, mma_m8n8k4_f32_sm90

# element class, element bits in a register word, word bits, elements per word
_ECLASS = {"f16": ("16b", 16), "bf16": ("16b", 16), "tf32": ("tf32", 32), "f64": ("f64", 64),
           "u8": ("8b", 8), "s8": ("8b", 8), "e4m3": ("8b", 8), "e5m2": ("8b", 8),
           "u4": ("4b", 4), "s4": ("4b", 4), "b1": ("b1", 1)}
_SHAPES = {"m8n8k4": (8, 8, 4), "m8n8k16": (8, 8, 16), "m8n8k32": (8, 8, 32), "m8n8k128": (8, 8, 128),
           "m16n8k4": (16, 8, 4), "m16n8k8": (16, 8, 8), "m16n8k16": (16, 8, 16), "m16n8k32": (16, 8, 32),
           "m16n8k64": (16, 8, 64), "m16n8k128": (16, 8, 128), "m16n8k256": (16, 8, 256)}


def _warps(st, ins, m) -> np.ndarray:
    """The warps executing the instruction (wave-global indices); faults if a warp executes it partially."""
    sel = np.flatnonzero(st.status == RUN) if m is None else np.flatnonzero(m)
    nw = st.T // 32
    ex = np.bincount(st.gwarp[sel], minlength=nw)
    live = np.bincount(st.gwarp[st.valid & (st.status != EXITED)], minlength=nw)
    bad = np.flatnonzero((ex > 0) & ((ex < 32) | (live < 32)))
    if bad.size:
        w = int(bad[0])
        st.fault(ins, sel[st.gwarp[sel] == w], f"{ins.opcode}.sync.aligned executed by {int(ex[w])} of the 32 lanes "
                 f"of warp {int(st.warp[w * 32])}",
                 f"rule: every thread of the warp must execute the same {ins.opcode} (PTX ISA 9.7.14.5; undefined "
                 "if a lane has exited or is not converged)")
    return np.flatnonzero(ex > 0)


def _words(rds, st, ws, dtype):
    """(W, 32, len(rds)) register words of the warps ws."""
    T = st.T
    out = np.empty((len(ws), 32, len(rds)), dtype=dtype)
    idx = (ws[:, None] * 32 + np.arange(32)[None, :])
    for j, r in enumerate(rds):
        v = np.broadcast_to(np.asarray(r(st)), (T,)).astype(dtype, copy=False)
        out[:, :, j] = v[idx]
    return out


def _write_words(wrs, st, ws, words, m):
    T = st.T
    idx = (ws[:, None] * 32 + np.arange(32)[None, :]).reshape(-1)
    for j, w in enumerate(wrs):
        cur = np.zeros(T, dtype=words.dtype)
        cur[idx] = words[:, :, j].reshape(-1)
        w(st, cur, m)


# ------------------------------------------------------------------------------------------------ mma.sync
def build_mma(ins: ir.Instr, ctx: Ctx):
    """mma.sync.aligned.<shape>.<alayout>.<blayout>{.satfinite}.<dtype>.<atype>.<btype>.<ctype>{.bitop.popc}."""
    mods = ins.mods
    shape = next(x for x in mods if x in _SHAPES)
    lays = [x for x in mods if x in ("row", "col")]
    dtype, atype, btype, ctype = [x for x in mods if x in TYPE_NAMES]
    al, bl = lays
    ecl, ebits = _ECLASS[atype]
    key_a = al if shape == "m8n8k4" and atype == "f16" else ecl
    key_b = bl if shape == "m8n8k4" and btype == "f16" else _ECLASS[btype][0]
    la, lb = wm.LAYOUTS[(shape, "a", key_a)], wm.LAYOUTS[(shape, "b", key_b)]
    lc, ld = wm.c_layout(shape, ctype), wm.c_layout(shape, dtype)       # differ only for m8n8k4 .f32...f16
    wbits = 64 if atype == "f64" else 32
    per_a = wbits // ebits
    cbits, dbits = ({"f64": 64, "f16": 16}.get(t, 32) for t in (ctype, dtype))
    per_c, per_d = ((64 if dtype == "f64" else 32) // b for b in (cbits, dbits))
    rd_a = ctx.read_vec(ins.args[1], f"b{wbits}")
    rd_b = ctx.read_vec(ins.args[2], f"b{wbits}")
    rd_c = ctx.read_vec(ins.args[3], "b64" if dtype == "f64" else "b32")
    wr_d = ctx.write_vec(ins.args[0], "b64" if dtype == "f64" else "b32")
    for what, rds, lay, per in (("A", rd_a, la, per_a), ("B", rd_b, lb, per_a), ("C", rd_c, lc, per_c),
                                ("D", wr_d, ld, per_d)):
        if len(rds) * per != lay.n:
            raise Unsupported(f"{ins.name}: {what} needs {lay.n // per} registers, got {len(rds)} ({ins.where()})")
    sat = "satfinite" in mods
    bitop = next((x for x in mods if x in ("xor", "and")), "")
    wdt = np.uint64 if wbits == 64 else np.uint32
    cdt = np.uint64 if dtype == "f64" else np.uint32

    def compute(A, B, C):
        if atype == "f64":
            return mma_f64(A, B, C)
        if dtype == "s32":
            return mma_int(A, B, C, atype, btype, sat, bitop)
        if atype in ("e4m3", "e5m2"):
            return mma_fp8_sm90(A, B, C, atype, btype)
        if shape == "m8n8k4" and dtype == "f32":
            return mma_m8n8k4_f32_sm90(A, B, C, ctype)
        if shape == "m8n8k4":
            return mma_m8n8k4_f16_sm90(A, B, C)
        return mma_float(A, B, C, atype, btype, dtype)

    def run(st, m):
        ws = _warps(st, ins, m)
        A = wm.gather(la, wm.unpack(_words(rd_a, st, ws, wdt), ebits, per_a))
        B = wm.gather(lb, wm.unpack(_words(rd_b, st, ws, wdt), ebits, per_a))
        C = wm.gather(lc, wm.unpack(_words(rd_c, st, ws, cdt), cbits, per_c))
        D = np.empty(C.shape, dtype=np.uint64)
        for w in range(len(ws)):
            for p in range(C.shape[1]):
                D[w, p] = compute(A[w, p], B[w, p], C[w, p])
        words = wm.pack(wm.scatter(ld, D), dbits, per_d).astype(cdt)
        _write_words(wr_d, st, ws, words, m)
    return run


# ------------------------------------------------------------------------------------------------ ldmatrix / stmatrix
def _ldst_plan(ins, regs: list, what: str):
    """(.xN count, state space, lane -> fragment index pairs) of an ldmatrix / stmatrix with ``regs`` vector registers."""
    num = int(ins.fields["num"][1:])
    if len(regs) != num:
        raise Unsupported(f"{ins.name}: .x{num} needs {num} {what} registers ({ins.where()})")
    space = "shared" if any(m.startswith("shared") for m in ins.mods) else "generic"
    return num, space, _frag_index(ins.fields["trans"] == "trans")


def _frag_index(trans: bool):
    """For one 8x8 .b16 matrix: lane -> (row, col) of its two elements (PTX ISA 9.7.14.5.15 Figure 104: a group of
    four lanes holds one row, lane l elements (l/4, 2(l%4)) and (l/4, 2(l%4)+1); .trans: the transpose)."""
    r, c = wm.G, wm.T * 2
    if trans:
        return (c, r), (c + 1, r)
    return (r, c), (r, c + 1)


def build_ldmatrix(ins: ir.Instr, ctx: Ctx):
    """ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 r, [p]: lanes 8j..8j+7 give the row addresses
    of matrix j (16 bytes each); register j of lane l receives matrix j's elements (l/4, 2(l%4)), (.., +1)."""
    addr = ctx.address(ins.args[1])
    wrs = ctx.write_vec(ins.args[0], "b32")
    num, space, ((r0, c0), (r1, c1)) = _ldst_plan(ins, wrs, "destination")

    def run(st, m):
        ws = _warps(st, ins, m)
        T = st.T
        a = np.broadcast_to(np.asarray(addr(st)), (T,)).astype(np.uint64)
        mask = np.zeros(T, bool)
        idx = (ws[:, None] * 32 + np.arange(8 * num)[None, :]).reshape(-1)
        mask[idx] = True
        rows = st.load(ins, space, a, mask, np.uint16, 8)          # (T, 8) halves of each addressed row
        words = np.empty((len(ws), 32, num), np.uint32)
        for j in range(num):
            mat = rows[(ws[:, None] * 32 + 8 * j + np.arange(8)[None, :])]     # (W, 8 rows, 8 cols)
            lo = mat[:, r0, c0].astype(np.uint32)
            hi = mat[:, r1, c1].astype(np.uint32)
            words[:, :, j] = lo | (hi << np.uint32(16))
        _write_words(wrs, st, ws, words, m)
    return run


def build_stmatrix(ins: ir.Instr, ctx: Ctx):
    """stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 [p], r: the inverse of ldmatrix (lanes
    8j..8j+7 give the row addresses of matrix j; register j of each lane holds that matrix's fragment)."""
    addr = ctx.address(ins.args[0])
    rds = ctx.read_vec(ins.args[1], "b32")
    num, space, ((r0, c0), (r1, c1)) = _ldst_plan(ins, rds, "source")

    def run(st, m):
        ws = _warps(st, ins, m)
        T = st.T
        words = _words(rds, st, ws, np.uint32)
        rows = np.zeros((T, 8), np.uint16)
        mask = np.zeros(T, bool)
        for j in range(num):
            mat = np.zeros((len(ws), 8, 8), np.uint16)
            mat[:, r0, c0] = (words[:, :, j] & np.uint32(0xFFFF)).astype(np.uint16)
            mat[:, r1, c1] = (words[:, :, j] >> np.uint32(16)).astype(np.uint16)
            tid = (ws[:, None] * 32 + 8 * j + np.arange(8)[None, :])
            rows[tid] = mat
            mask[tid.reshape(-1)] = True
        a = np.broadcast_to(np.asarray(addr(st)), (T,)).astype(np.uint64)
        st.store(ins, space, a, mask, rows, np.uint16, 8)
    return run


def build_movmatrix(ins: ir.Instr, ctx: Ctx):
    """movmatrix.sync.aligned.m8n8.trans.b16 d, a: transpose an 8x8 .b16 matrix held in the ldmatrix fragment layout
    (PTX ISA 9.7.14.5.17)."""
    rd = ctx.read(ins.args[1], "b32")
    wr = ctx.write(ins.args[0], "b32")
    (r0, c0), (r1, c1) = _frag_index(False)

    def run(st, m):
        ws = _warps(st, ins, m)
        words = _words([rd], st, ws, np.uint32)[:, :, 0]
        mat = np.zeros((len(ws), 8, 8), np.uint16)
        mat[:, r0, c0] = (words & np.uint32(0xFFFF)).astype(np.uint16)
        mat[:, r1, c1] = (words >> np.uint32(16)).astype(np.uint16)
        t = mat.transpose(0, 2, 1)
        out = t[:, r0, c0].astype(np.uint32) | (t[:, r1, c1].astype(np.uint32) << np.uint32(16))
        _write_words([wr], st, ws, out[:, :, None], m)
    return run


# ------------------------------------------------------------------------------------------------ forms
SETS = {"alayout": ("row", "col"), "blayout": ("row", "col"), "f8": ("e4m3", "e5m2"), "i8": ("u8", "s8"), "i4": ("u4", "s4"),
        "bitop": ("xor", "and"), "num": ("x1", "x2", "x4"), "ss": ("shared", "shared::cta"),
        "i8shape": ("m8n8k16", "m16n8k16", "m16n8k32"), "i4shape": ("m8n8k32", "m16n8k32", "m16n8k64"),
        "b1shape": ("m8n8k128", "m16n8k128", "m16n8k256"), "f64shape": ("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"),
        "ctype": ("f16", "f32"), "hshape": ("m16n8k8", "m16n8k16"), "bshape": ("m16n8k8", "m16n8k16"),
        "tshape": ("m16n8k4", "m16n8k8")}
FORMS = register(SETS, [
    # form                                                                                 PTX ISA        builder
    ("mma.sync.aligned.m8n8k4.alayout.blayout.f16.f16.f16.f16",                           "9.7.14.5.14", build_mma),
    ("mma.sync.aligned.m8n8k4.alayout.blayout.f32.f16.f16.ctype",                         "9.7.14.5.14", build_mma),
    ("mma.sync.aligned.m16n8k32.row.col.f32.f8.f8.f32",                                   "9.7.14.5.14", build_mma),
    ("mma.sync.aligned.hshape.row.col.f32.f16.f16.f32",                                   "9.7.14.5.14", build_mma),
    ("mma.sync.aligned.hshape.row.col.f16.f16.f16.f16",                                   "9.7.14.5.14", build_mma),
    ("mma.sync.aligned.bshape.row.col.f32.bf16.bf16.f32",                                 "9.7.14.5.14", build_mma),
    ("mma.sync.aligned.tshape.row.col.f32.tf32.tf32.f32",                                 "9.7.14.5.14", build_mma),
    ("mma.sync.aligned.f64shape.row.col.f64.f64.f64.f64",                                 "9.7.14.5.14", build_mma),
    ("mma.sync.aligned.i8shape.row.col{.satfinite}.s32.i8.i8.s32",                        "9.7.14.5.14", build_mma),
    ("mma.sync.aligned.i4shape.row.col{.satfinite}.s32.i4.i4.s32",                        "9.7.14.5.14", build_mma),
    ("mma.sync.aligned.b1shape.row.col.s32.b1.b1.s32.bitop.popc",                         "9.7.14.5.14", build_mma),
    ("ldmatrix.sync.aligned.m8n8.num{.trans}.shared.b16",                                   "9.7.14.5.15", build_ldmatrix),
    ("stmatrix.sync.aligned.m8n8.num{.trans}.shared.b16",                                   "9.7.14.5.16", build_stmatrix),
    ("movmatrix.sync.aligned.m8n8.trans.b16",                                             "9.7.14.5.17", build_movmatrix),
])
