"""Integer arithmetic and logic (PTX ISA 9.7.1, 9.7.7 logic and shift, 9.7.3 comparison and selection).

Bootstrap subset; the full family (div/rem, bfe/bfi, prmt, lop3, popc/clz/brev/bfind, sad, mul24 ...) extends this.
"""
from __future__ import annotations

import numpy as np

from . import ir
from .isa import Ctx, Unsupported, handler, inst_type
from .types import DTYPE, SINT, UINT, is_float, is_signed

_INT = frozenset({"b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "u8", "s8", "b8"})


def _wrap_binop(ins: ir.Instr, ctx: Ctx, ty: str, f):
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    w = ctx.write(ins.args[0], ty)

    def run(st, m):
        w(st, f(a(st), b(st)), m)
    return run


@handler("add", "sub")
def build_addsub(ins: ir.Instr, ctx: Ctx):
    ty = inst_type(ins)
    if ty not in _INT or any(x in ins.mods for x in ("sat", "cc")) or ins.opcode in ("addc", "subc"):
        raise Unsupported(f"{ins.name}: only plain integer add/sub are in the bootstrap ALU")
    dt = DTYPE[ty]
    if ins.opcode == "add":
        return _wrap_binop(ins, ctx, ty, lambda x, y: np.add(x, y, dtype=dt))
    return _wrap_binop(ins, ctx, ty, lambda x, y: np.subtract(x, y, dtype=dt))


@handler("mul")
def build_mul(ins: ir.Instr, ctx: Ctx):
    ty = inst_type(ins)
    if ty not in _INT:
        raise Unsupported(f"{ins.name}: float mul is not in the bootstrap ALU")
    dt = DTYPE[ty]
    bits = dt.itemsize * 8
    if "wide" in ins.mods:
        wt = ("s" if is_signed(ty) else "u") + str(2 * bits)
        wdt = DTYPE[wt]
        a = ctx.read(ins.args[1], ty)
        b = ctx.read(ins.args[2], ty)
        w = ctx.write(ins.args[0], wt)

        def run(st, m):
            w(st, np.multiply(np.asarray(a(st)).astype(wdt), np.asarray(b(st)).astype(wdt), dtype=wdt), m)
        return run
    if "hi" in ins.mods:
        raise Unsupported("mul.hi is not in the bootstrap ALU")
    return _wrap_binop(ins, ctx, ty, lambda x, y: np.multiply(x, y, dtype=dt))


@handler("mad")
def build_mad(ins: ir.Instr, ctx: Ctx):
    ty = inst_type(ins)
    if ty not in _INT:
        raise Unsupported(f"{ins.name}: float mad is not in the bootstrap ALU")
    dt = DTYPE[ty]
    bits = dt.itemsize * 8
    wide = "wide" in ins.mods
    if "hi" in ins.mods:
        raise Unsupported("mad.hi is not in the bootstrap ALU")
    ot = (("s" if is_signed(ty) else "u") + str(2 * bits)) if wide else ty
    odt = DTYPE[ot]
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    c = ctx.read(ins.args[3], ot)
    w = ctx.write(ins.args[0], ot)

    def run(st, m):
        p = np.multiply(np.asarray(a(st)).astype(odt), np.asarray(b(st)).astype(odt), dtype=odt)
        w(st, np.add(p, c(st), dtype=odt), m)
    return run


@handler("and", "or", "xor")
def build_logic(ins: ir.Instr, ctx: Ctx):
    ty = inst_type(ins)
    f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[ins.opcode]
    if ty == "pred":
        return _wrap_binop(ins, ctx, ty, f)
    return _wrap_binop(ins, ctx, ty, f)


@handler("not")
def build_not(ins: ir.Instr, ctx: Ctx):
    ty = inst_type(ins)
    a = ctx.read(ins.args[1], ty)
    w = ctx.write(ins.args[0], ty)

    def run(st, m):
        w(st, np.invert(a(st)), m)
    return run


@handler("shl", "shr")
def build_shift(ins: ir.Instr, ctx: Ctx):
    """Shift amounts greater than the width clamp (PTX ISA 9.7.7.7/8)."""
    ty = inst_type(ins)
    dt = DTYPE[ty]
    bits = dt.itemsize * 8
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], "u32")
    w = ctx.write(ins.args[0], ty)
    left = ins.opcode == "shl"
    signed = is_signed(ty)

    def run(st, m):
        x = np.asarray(a(st))
        s = np.minimum(np.asarray(b(st)).astype(np.uint64), bits)
        if left:
            r = np.where(s >= bits, 0, x << np.minimum(s, bits - 1).astype(dt)).astype(dt)
        elif signed:
            r = (x >> np.minimum(s, bits - 1).astype(dt)).astype(dt)
        else:
            r = np.where(s >= bits, 0, x >> np.minimum(s, bits - 1).astype(dt)).astype(dt)
        w(st, r, m)
    return run


_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}


@handler("setp")
def build_setp(ins: ir.Instr, ctx: Ctx):
    ty = inst_type(ins)
    cmp = ins.mods[0]
    if cmp not in _CMP or is_float(ty):
        raise Unsupported(f"setp.{cmp}.{ty} is not in the bootstrap ALU")
    boolop = next((x for x in ins.mods if x in ("and", "or", "xor")), None)
    d = ins.args[0]
    dp, dq = (d.items[0], d.items[1]) if isinstance(d, ir.Pair) else (d, None)
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    c = ctx.read(ins.args[3], "pred") if boolop else None
    f = _CMP[cmp]
    wp = ctx.write(dp, "pred")
    wq = ctx.write(dq, "pred") if dq is not None else None
    comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(boolop)

    def run(st, m):
        t = f(a(st), b(st))
        if comb is not None:
            cc = c(st)
            wp(st, comb(t, cc), m)
            if wq is not None:
                wq(st, comb(~t, cc), m)
        else:
            wp(st, t, m)
            if wq is not None:
                wq(st, ~t, m)
    return run


@handler("selp")
def build_selp(ins: ir.Instr, ctx: Ctx):
    ty = inst_type(ins)
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    c = ctx.read(ins.args[3], "pred")
    w = ctx.write(ins.args[0], ty)

    def run(st, m):
        w(st, np.where(c(st), a(st), b(st)), m)
    return run
