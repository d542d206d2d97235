"""Records for floating point, comparison and selection (ops/floating_point.py, ops/comparison.py; PTX ISA 9.7.3,
9.7.6.1-3).  Round-to-nearest .f32/.f64 forms only: directed rounding, half precision (.f16/.bf16 and packed) and the
transcendental .approx functions (ex2, lg2, sin, cos, tanh: the interpreter rounds numpy's f64 result) stay with the
interpreter.  Float operands are read as their bit patterns, as the interpreter's ``_reader`` does."""
from __future__ import annotations

from ...core import ir
from ...core.types import BITS, is_float
from .operands import NotNative
from .record import Rec

_ROUND = ("rn", "rz", "rm", "rp")
_FT = ("f32", "f64")
_HALF = ("f16", "f16x2", "bf16", "bf16x2")


def _ftype(ins) -> str:
    for m in reversed(ins.mods):
        if m in _FT:
            return m
        if m in _HALF:
            raise NotNative("half precision")
    raise NotNative("no float type")


def _rn(ins, default="rn") -> None:
    mode = next((m for m in ins.mods if m in _ROUND), default)
    if mode != "rn":
        raise NotNative(f".{mode}")


def _flags(ins) -> int:
    return int(ins.has("ftz")) | int(ins.has("sat")) << 1 | int(ins.has("NaN")) << 2 | int(ins.has("approx")) << 3


def _f(op: str, ins, O, ty: str, nsrc: int) -> Rec:
    return Rec(op, dsts=[O.dst(ins.args[0], ty)], srcs=[O.src(ins.args[1 + k], ty) for k in range(nsrc)],
               x0=BITS[ty], x1=_flags(ins))


def emit_addsubmul(ins, O):
    ty = _ftype(ins)
    _rn(ins)
    return _f({"add": "FADD", "sub": "FSUB", "mul": "FMUL"}[ins.opcode], ins, O, ty, 2)


def emit_fma(ins, O):
    ty = _ftype(ins)
    _rn(ins)
    if ins.has("relu") or ins.has("oob"):
        raise NotNative("fma.relu")
    return _f("FFMA", ins, O, ty, 3)


def emit_div(ins, O):
    ty = _ftype(ins)
    if not (ins.has("approx") or ins.has("full")):
        _rn(ins, default=None)
    return _f("FDIV", ins, O, ty, 2)


def emit_rcp(ins, O):
    ty = _ftype(ins)
    if not ins.has("approx"):
        _rn(ins)
    return _f("FRCP", ins, O, ty, 1)


def emit_sqrt(ins, O):
    ty = _ftype(ins)
    if not ins.has("approx"):
        _rn(ins)
    return _f("FSQRT", ins, O, ty, 1)


def emit_rsqrt(ins, O):
    return _f("FRSQRT", ins, O, _ftype(ins), 1)


def emit_negabs(ins, O):
    return _f("FNEG" if ins.opcode == "neg" else "FABS", ins, O, _ftype(ins), 1)


def emit_minmax(ins, O):
    return _f("FMIN" if ins.opcode == "min" else "FMAX", ins, O, _ftype(ins), 2)


def emit_copysign(ins, O):
    return _f("COPYSIGN", ins, O, _ftype(ins), 2)


_TESTP = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")


def emit_testp(ins, O):
    ty = _ftype(ins)
    op = next((m for m in ins.mods if m in _TESTP), None)
    if op is None:
        raise NotNative("testp")
    return Rec("TESTP", dsts=[O.dst(ins.args[0], "pred")], srcs=[O.src(ins.args[1], ty)], sub=_TESTP.index(op),
               x0=BITS[ty])


_CMPOPS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
_TYPES = ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f16", "bf16", "f32", "f64",
          "f16x2", "bf16x2", "u8", "s8", "b8")
_BOOL = {"and": 1, "or": 2, "xor": 3}


def emit_setp(ins, O):
    cmps = [m for m in ins.mods if m in _CMPOPS or m in _UNSIGNED]
    tys = [m for m in ins.mods if m in _TYPES]
    if len(cmps) != 1 or len(tys) != 1:
        raise NotNative("setp form")
    ty = tys[0]
    cmp = _UNSIGNED.get(cmps[0], cmps[0])       # lo/ls/hi/hs: the comparison of the operands as read (their type)
    if ty in _HALF:
        raise NotNative("half setp")
    floating = is_float(ty)
    if not floating and _CMPOPS.index(cmp) > 5:
        raise NotNative("float-only comparison on integers")
    boolop = next((m for m in ins.mods if m in _BOOL), None)
    d = ins.args[0]
    dp, dq = (d.items[0], d.items[1]) if isinstance(d, ir.Pair) else (d, None)
    srcs = [O.src(ins.args[1], ty), O.src(ins.args[2], ty)]
    if boolop:
        srcs.append(O.src(ins.args[3], "pred"))
    dsts = [O.dst(dp, "pred")] + ([O.dst(dq, "pred")] if dq is not None else [])
    x1 = int(ins.has("ftz")) | _BOOL.get(boolop, 0) << 4 | int(ty.startswith("s")) << 6
    return Rec("SETP", dsts=dsts, srcs=srcs, sub=_CMPOPS.index(cmp), x0=BITS[ty] if floating else 0, x1=x1)


def emit_selp(ins, O):
    tys = [m for m in ins.mods if m in _TYPES]
    if len(tys) != 1:
        raise NotNative("selp form")
    ty = tys[0]
    bty = ty if not is_float(ty) else f"b{BITS[ty]}"
    return Rec("SELP", dsts=[O.dst(ins.args[0], bty)],
               srcs=[O.src(ins.args[1], bty), O.src(ins.args[2], bty), O.src(ins.args[3], "pred")])


EMITTERS = {
    ("ptxlab.emu.ops.floating_point", "build_addsubmul"): emit_addsubmul,
    ("ptxlab.emu.ops.floating_point", "build_fma"): emit_fma,
    ("ptxlab.emu.ops.floating_point", "build_div"): emit_div,
    ("ptxlab.emu.ops.floating_point", "build_rcp"): emit_rcp,
    ("ptxlab.emu.ops.floating_point", "build_sqrt"): emit_sqrt,
    ("ptxlab.emu.ops.floating_point", "build_rsqrt"): emit_rsqrt,
    ("ptxlab.emu.ops.floating_point", "build_negabs"): emit_negabs,
    ("ptxlab.emu.ops.floating_point", "build_minmax"): emit_minmax,
    ("ptxlab.emu.ops.floating_point", "build_copysign"): emit_copysign,
    ("ptxlab.emu.ops.floating_point", "build_testp"): emit_testp,
    ("ptxlab.emu.ops.comparison", "build_setp"): emit_setp,
    ("ptxlab.emu.ops.comparison", "build_selp"): emit_selp,
}
