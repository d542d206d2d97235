"""Comparison and selection: setp, set, selp, slct (PTX ISA 9.7.6.1-4) and the half-precision forms of set/setp
(PTX ISA 9.7.7.1-2: .f16, .bf16, .f16x2, .bf16x2).

Float comparisons follow the PTX NaN rules: the ordered operators (eq ne lt le gt ge) are False when either operand
is NaN, the unordered ones (equ neu ltu leu gtu geu) are True, ``num``/``nan`` test orderedness.  ``.ftz`` flushes
subnormal inputs to (sign-preserving) zero before comparing (only the .f32 and half forms accept it).
"""
from __future__ import annotations

import numpy as np

from ..core import ir
from ..core.isa import Ctx, Unsupported, register
from ..core.types import BITS, is_float

_CMPOPS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
           "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
_BOOLOPS = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
_TYPES = ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f16", "bf16", "f32", "f64",
          "f16x2", "bf16x2", "u8", "s8", "b8")
_FLOAT_ONLY = ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
_UNSIGNED_ONLY = ("lo", "ls", "hi", "hs")
_TINY = {"f32": np.float32(np.finfo(np.float32).tiny), "f16": np.float32(2.0 ** -14),
         "bf16": np.float32(np.finfo(np.float32).tiny), "f64": np.float64(np.finfo(np.float64).tiny)}


def _types(ins: ir.Instr) -> list:
    return [m for m in ins.mods if m in _TYPES]


def _half_to_f32(u16, bf: bool):
    """uint16 bit patterns → float32 values (exact)."""
    if bf:
        return (np.asarray(u16).astype(np.uint32) << np.uint32(16)).view(np.float32) if np.ndim(u16) else \
            np.asarray(np.uint32(u16) << np.uint32(16)).view(np.float32)
    return np.asarray(u16).view(np.float16).astype(np.float32) if np.ndim(u16) else \
        np.asarray(np.uint16(u16)).view(np.float16).astype(np.float32)


def _float_reader(ctx: Ctx, op, ty: str, ftz: bool):
    """fn(st) -> float32/float64 values of a scalar float operand (f16/bf16 widened exactly to f32)."""
    if ty in ("f16", "bf16"):
        r = ctx.read(op, "b16")
        f = lambda st: _half_to_f32(r(st), ty == "bf16")  # noqa: E731
    else:
        f = ctx.read(op, ty)
    if not ftz:
        return f
    tiny = _TINY[ty]
    return lambda st: _flush(f(st), tiny)


def _flush(x, tiny):
    x = np.asarray(x)
    return np.where(np.abs(x) < tiny, np.copysign(x.dtype.type(0), x), x)   # sign-preserving zero


def _lane_reader(ctx: Ctx, op, ty: str, ftz: bool, lane: int):
    """Reader of lane 0 (bits 15:0) or lane 1 (bits 31:16) of an .f16x2/.bf16x2 operand as float32."""
    r = ctx.read(op, "b32")
    bf = ty == "bf16x2"
    sh = np.uint32(16 * lane)
    tiny = _TINY["bf16" if bf else "f16"]

    def f(st):
        v = _half_to_f32(((np.asarray(r(st)) >> sh) & np.uint32(0xFFFF)).astype(np.uint16), bf)
        return _flush(v, tiny) if ftz else v
    return f


def _compare(cmp: str, floating: bool):
    """fn(a, b) -> bool array for one CmpOp (PTX ISA 9.7.6.2 integer and floating-point notes)."""
    if not floating:
        return {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater,
                "hs": np.greater_equal}[cmp]

    def unord(a, b):
        return np.isnan(a) | np.isnan(b)
    return {
        "eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
        "ne": lambda a, b: np.not_equal(a, b) & ~unord(a, b),
        "equ": lambda a, b: np.equal(a, b) | unord(a, b),
        "neu": np.not_equal,                                  # numpy's != is already True on NaN
        "ltu": lambda a, b: ~np.greater_equal(a, b), "leu": lambda a, b: ~np.greater(a, b),
        "gtu": lambda a, b: ~np.less_equal(a, b), "geu": lambda a, b: ~np.less(a, b),
        "num": lambda a, b: ~unord(a, b), "nan": unord,
    }[cmp]


def _decode(ins: ir.Instr, nsrc_types: int):
    cmps = [m for m in ins.mods if m in _CMPOPS]
    if len(cmps) != 1:
        raise Unsupported(f"{ins.name}: expected exactly one comparison operator (PTX ISA 9.7.6.2)")
    cmp = cmps[0]
    boolop = next((m for m in ins.mods if m in _BOOLOPS), None)
    ftz = "ftz" in ins.mods
    tys = _types(ins)
    if len(tys) != nsrc_types:
        raise Unsupported(f"{ins.name}: expected {nsrc_types} type modifier(s) (PTX ISA 9.7.6)")
    st_ = tys[-1]
    floating = is_float(st_)
    if cmp in _FLOAT_ONLY and not floating:
        raise Unsupported(f"{ins.name}: .{cmp} is a floating-point comparison (PTX ISA 9.7.6.2)")
    if floating and cmp in _UNSIGNED_ONLY:
        raise Unsupported(f"{ins.name}: .{cmp} is an unsigned-integer comparison (PTX ISA 9.7.6.2)")
    if ftz and st_ not in ("f32", "f16", "f16x2"):
        raise Unsupported(f"{ins.name}: .ftz applies only to .f32 (and .f16/.f16x2) comparisons (PTX ISA 9.7.6.2)")
    return cmp, boolop, ftz, tys, floating


def _tests(ins, ctx, cmp, ty, floating, ftz):
    """List of fn(st) -> bool array: one per lane (two for .f16x2/.bf16x2)."""
    f = _compare(cmp, floating)
    if ty in ("f16x2", "bf16x2"):
        out = []
        for lane in (0, 1):
            ra = _lane_reader(ctx, ins.args[1], ty, ftz, lane)
            rb = _lane_reader(ctx, ins.args[2], ty, ftz, lane)
            out.append((lambda ra, rb: lambda st: f(ra(st), rb(st)))(ra, rb))
        return out
    if floating:
        ra = _float_reader(ctx, ins.args[1], ty, ftz)
        rb = _float_reader(ctx, ins.args[2], ty, ftz)
    else:
        ra = ctx.read(ins.args[1], ty)
        rb = ctx.read(ins.args[2], ty)
    return [lambda st: f(ra(st), rb(st))]


def build_setp(ins: ir.Instr, ctx: Ctx):
    """p = BoolOp(t, c), q = BoolOp(!t, c); for .f16x2/.bf16x2 p/q take the low/high half results (9.7.7.2)."""
    cmp, boolop, ftz, tys, floating = _decode(ins, 1)
    ty = tys[0]
    d = ins.args[0]
    dp, dq = (d.items[0], d.items[1]) if isinstance(d, ir.Pair) else (d, None)
    wp = ctx.write(dp, "pred")
    wq = ctx.write(dq, "pred") if dq is not None else None
    c = ctx.read(ins.args[3], "pred") if boolop else None
    comb = _BOOLOPS.get(boolop)
    tests = _tests(ins, ctx, cmp, ty, floating, ftz)
    packed = len(tests) == 2
    if packed and dq is None:
        raise Unsupported(f"{ins.name}: .f16x2/.bf16x2 setp needs a p|q destination (PTX ISA 9.7.7.2)")
    t0 = tests[0]

    if packed:
        t1 = tests[1]

        def run(st, m):
            p, q = t0(st), t1(st)
            if comb is not None:
                cc = c(st)
                p, q = comb(p, cc), comb(q, cc)
            wp(st, p, m)
            wq(st, q, m)
        return run
    if comb is None and wq is None:
        return lambda st, m: wp(st, t0(st), m)

    def run(st, m):
        t = np.asarray(t0(st))
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


# value written for True per destination type of set (PTX ISA 9.7.6.1, 9.7.7.1); False is 0 (+0.0) everywhere
_SET_TRUE = {"u32": (0xFFFFFFFF, 32), "s32": (0xFFFFFFFF, 32), "f32": (0x3F800000, 32),
             "u16": (0xFFFF, 16), "s16": (0xFFFF, 16), "f16": (0x3C00, 16), "bf16": (0x3F80, 16)}
_SET_TRUE_X2 = {"u32": 0xFFFF, "s32": 0xFFFF, "f16x2": 0x3C00, "bf16x2": 0x3F80}


def build_set(ins: ir.Instr, ctx: Ctx):
    cmp, boolop, ftz, tys, floating = _decode(ins, 2)
    dty, sty = tys
    c = ctx.read(ins.args[3], "pred") if boolop else None
    comb = _BOOLOPS.get(boolop)
    tests = _tests(ins, ctx, cmp, sty, floating, ftz)
    if len(tests) == 2:
        if dty not in _SET_TRUE_X2:
            raise Unsupported(f"{ins.name}: destination .{dty} with packed source (PTX ISA 9.7.7.1)")
        tv = np.uint32(_SET_TRUE_X2[dty])
        w = ctx.write(ins.args[0], "b32")

        def run(st, m):
            out = np.uint32(0)
            for k, t in enumerate(tests):
                v = t(st)
                if comb is not None:
                    v = comb(v, c(st))
                out = out | (np.where(v, tv, np.uint32(0)) << np.uint32(16 * k))
            w(st, out, m)
        return run
    if dty not in _SET_TRUE:
        raise Unsupported(f"{ins.name}: set destination type .{dty} (PTX ISA 9.7.6.1)")
    tv, bits = _SET_TRUE[dty]
    ut = np.uint32 if bits == 32 else np.uint16
    w = ctx.write(ins.args[0], f"b{bits}")
    t0 = tests[0]

    def run(st, m):
        v = t0(st)
        if comb is not None:
            v = comb(v, c(st))
        w(st, np.where(v, ut(tv), ut(0)), m)
    return run


def build_selp(ins: ir.Instr, ctx: Ctx):
    """d = c ? a : b (PTX ISA 9.7.6.3); a bit copy, so float operands are moved untouched (NaN payloads kept)."""
    tys = _types(ins)
    if len(tys) != 1:
        raise Unsupported(f"{ins.name}: selp needs one type (PTX ISA 9.7.6.3)")
    ty = tys[0]
    bty = ty if not is_float(ty) else f"b{BITS[ty]}"
    a = ctx.read(ins.args[1], bty)
    b = ctx.read(ins.args[2], bty)
    c = ctx.read(ins.args[3], "pred")
    w = ctx.write(ins.args[0], bty)
    return lambda st, m: w(st, np.where(c(st), a(st), b(st)), m)


def build_slct(ins: ir.Instr, ctx: Ctx):
    """d = (c >= 0) ? a : b (PTX ISA 9.7.6.4); f32 c: -0 selects a, NaN selects b, .ftz subnormal c selects a."""
    tys = _types(ins)
    if len(tys) != 2 or tys[1] not in ("s32", "f32"):
        raise Unsupported(f"{ins.name}: slct is slct.dtype.{{s32,f32}} (PTX ISA 9.7.6.4)")
    dty, cty = tys
    ftz = "ftz" in ins.mods
    if ftz and cty != "f32":
        raise Unsupported(f"{ins.name}: .ftz applies to the .f32 form only (PTX ISA 9.7.6.4)")
    bty = f"b{BITS[dty]}"
    a = ctx.read(ins.args[1], bty)
    b = ctx.read(ins.args[2], bty)
    c = ctx.read(ins.args[3], cty)
    w = ctx.write(ins.args[0], bty)
    tiny = _TINY["f32"]

    def run(st, m):
        cv = np.asarray(c(st))
        if ftz:
            cv = np.where(np.abs(cv) < tiny, np.float32(0), cv)
        w(st, np.where(cv >= 0, a(st), b(st)), m)
    return run


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
_ICMP = ("eq", "ne", "lt", "le", "gt", "ge")
SETS = {"icmp": _ICMP, "ucmp": _ICMP + _UNSIGNED_ONLY, "bcmp": ("eq", "ne"), "fcmp": _ICMP + _FLOAT_ONLY,
        "boolop": tuple(_BOOLOPS), "sint": ("s16", "s32", "s64"), "uint": ("u16", "u32", "u64"),
        "bint": ("b16", "b32", "b64"), "dtype": ("u32", "s32", "f32"), "hdtype": ("u16", "s16", "u32", "s32"),
        "half": ("f16", "f16x2"), "bhalf": ("bf16", "bf16x2"), "x2dtype": ("f16x2", "u32", "s32"),
        "bx2dtype": ("bf16x2", "u32", "s32"), "hsrc": ("f16", "f32"), "fsrc": ("f16", "f32", "f64"),
        "hf": ("f16", "bf16"),
        "seltype": ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64")}
FORMS = register(SETS, [
    # form                                       PTX ISA    builder
    ("set.icmp{.boolop}.dtype.sint",             "9.7.6.1", build_set),
    ("set.ucmp{.boolop}.dtype.uint",             "9.7.6.1", build_set),
    ("set.bcmp{.boolop}.dtype.bint",             "9.7.6.1", build_set),
    ("set.fcmp{.boolop}{.ftz}.dtype.f32",        "9.7.6.1", build_set),
    ("set.fcmp{.boolop}.dtype.f64",              "9.7.6.1", build_set),
    ("setp.icmp{.boolop}.sint",                  "9.7.6.2", build_setp),
    ("setp.ucmp{.boolop}.uint",                  "9.7.6.2", build_setp),
    ("setp.bcmp{.boolop}.bint",                  "9.7.6.2", build_setp),
    ("setp.fcmp{.boolop}{.ftz}.f32",             "9.7.6.2", build_setp),
    ("setp.fcmp{.boolop}.f64",                   "9.7.6.2", build_setp),
    ("selp.seltype",                             "9.7.6.3", build_selp),
    ("slct.seltype.s32",                         "9.7.6.4", build_slct),
    ("slct{.ftz}.seltype.f32",                   "9.7.6.4", build_slct),
    ("set.fcmp{.boolop}{.ftz}.hdtype.f16",       "9.7.7.1", build_set),
    ("set.fcmp{.boolop}.hdtype.bf16",            "9.7.7.1", build_set),
    ("set.fcmp{.boolop}{.ftz}.x2dtype.f16x2",    "9.7.7.1", build_set),
    ("set.fcmp{.boolop}.bx2dtype.bf16x2",        "9.7.7.1", build_set),
    ("set.fcmp{.boolop}{.ftz}.f16.hsrc",         "9.7.7.1", build_set),   # f16 result 1.0 / 0.0 (cuda_fp16.hpp)
    ("set.fcmp{.boolop}.f16.f64",                "9.7.7.1", build_set),
    ("set.fcmp{.boolop}.bf16.fsrc",              "9.7.7.1", build_set),
    ("set.icmp{.boolop}.hf.sint",                "9.7.7.1", build_set),
    ("set.ucmp{.boolop}.hf.uint",                "9.7.7.1", build_set),
    ("set.bcmp{.boolop}.hf.bint",                "9.7.7.1", build_set),
    ("setp.fcmp{.boolop}{.ftz}.half",            "9.7.7.2", build_setp),
    ("setp.fcmp{.boolop}.bhalf",                 "9.7.7.2", build_setp),
])
