"""Records for cvt (ops/conversion.py; PTX ISA 9.7.9.21): the integer-to-integer forms.  Conversions with a
floating-point side stay with the interpreter."""
from __future__ import annotations

from ...core import ir
from ...core.types import BITS
from .operands import NotNative
from .record import Rec

_INTS = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64")


def _imm(O, value: int, ty: str):
    return O.src(ir.Imm(value, "int", str(value)), ty)


def emit_cvt(ins, O):
    tys = [m for m in ins.mods if m in BITS or m.endswith(("x2", "x4"))]
    if len(tys) != 2 or not all(t in _INTS for t in tys):
        raise NotNative("cvt with a floating-point side")
    dty, aty = tys
    if "sat" not in ins.mods:
        return Rec("MOV", dsts=[O.dst(ins.args[0], dty)], srcs=[O.src(ins.args[1], aty)])
    bits = BITS[dty]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dty.startswith("s") else (0, (1 << bits) - 1)
    if aty.startswith("s"):             # int64 clip of the sign-extended source (conversion._build_int_int)
        lo, hi = max(lo, -2**63), min(hi, 2**63 - 1)
        return Rec("CLAMP", dsts=[O.dst(ins.args[0], dty)],
                   srcs=[O.src(ins.args[1], aty), _imm(O, lo, "s64"), _imm(O, hi, "s64")], sub=1)
    return Rec("CLAMP", dsts=[O.dst(ins.args[0], dty)],
               srcs=[O.src(ins.args[1], aty), _imm(O, 0, "u64"), _imm(O, hi, "u64")], sub=0)


EMITTERS = {"build_cvt": emit_cvt}
MODULE = "ptxlab.emu.ops.conversion"
