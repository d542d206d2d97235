"""cvt: conversions between integer and floating-point types (PTX ISA 9.7.9.21 'Data Movement and Conversion
Instructions: cvt').

int → int: truncation / sign or zero extension, optional .sat clamping.
"""
from __future__ import annotations

import numpy as np

from . import ir
from .isa import Ctx, Unsupported, handler
from .types import BITS, DTYPE, is_float

_INTS = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64")


def _int_range(ty):
    bits = BITS[ty]
    if ty.startswith("s"):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _build_int_int(ins, ctx, dty, aty):
    """Integer → integer (PTX ISA 9.7.9.21): wrap (truncate/extend by the source signedness); .sat clamps to the
    destination range."""
    sat = "sat" in ins.mods
    a = ctx.read(ins.args[1], aty)
    w = ctx.write(ins.args[0], dty)
    ddt = DTYPE[dty]
    if not sat:
        def run(st, m):
            x = np.asarray(a(st))
            # widen through the source signedness, then keep the low bits of the destination width
            w(st, x.astype(np.int64 if aty.startswith("s") else np.uint64).astype(ddt), m)
        return run
    lo, hi = _int_range(dty)
    if aty.startswith("s"):
        def run(st, m):
            x = np.asarray(a(st)).astype(np.int64)
            w(st, np.clip(x, max(lo, -2**63), min(hi, 2**63 - 1)).astype(ddt), m)
    else:
        def run(st, m):
            x = np.asarray(a(st)).astype(np.uint64)
            w(st, np.minimum(x, np.uint64(hi)).astype(ddt), m)
    return run


def _cvt_types(ins):
    tys = [m for m in ins.mods if m in BITS or m in ("e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2")]
    if len(tys) != 2:
        raise Unsupported(f"{ins.name}: cvt needs .dtype.atype (PTX ISA 9.7.9.21)")
    return tys


@handler("cvt")
def build_cvt(ins: ir.Instr, ctx: Ctx):
    dty, aty = _cvt_types(ins)
    if dty in _INTS and aty in _INTS:
        if any(r in ins.mods for r in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")):
            raise Unsupported(f"{ins.name}: rounding modifiers are illegal for int-to-int cvt (PTX ISA 9.7.9.21)")
        return _build_int_int(ins, ctx, dty, aty)
    if is_float(dty) or is_float(aty):
        raise Unsupported(f"{ins.name}: float conversions not yet implemented")
    raise Unsupported(f"{ins.name}: unsupported cvt type pair")
