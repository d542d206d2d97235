"""Records for the integer, logic and shift instructions (ops/integer.py; PTX ISA 9.7.1, 9.7.2, 9.7.8, 9.7.9.7).

Each emitter mirrors its interpreter builder's decode: which operand is read as which type, which type the result
is written as.  Forms it does not list (packed SIMD types, carry chains, prmt modes, lop3 with a predicate output)
raise NotNative and stay with the interpreter.
"""
from __future__ import annotations

from ...core import ir
from ...core.types import BITS, is_float
from .operands import NotNative
from .record import Rec

_SCALAR_INT = ("u16", "u32", "u64", "s16", "s32", "s64")
_B = ("b16", "b32", "b64")
_PACKED = ("u16x2", "s16x2", "u8x4", "s8x4")


def ity(ins: ir.Instr, allowed) -> str:
    """The instruction's integer type (last type modifier), if it is one of ``allowed``."""
    for m in reversed(ins.mods):
        if m in _PACKED:
            raise NotNative("packed SIMD type")
        if m in BITS:
            if m not in allowed:
                raise NotNative(f"type .{m}")
            return m
    raise NotNative("no type")


def signed(ty: str) -> bool:
    return ty.startswith("s")


def binary(op: str, ins, O, ty: str, nsrc: int = 2, dty: str = None, sty=None, **kw) -> Rec:
    """d = op(a, b, ...) with every source read as ``sty`` (default ty) and d written as ``dty`` (default ty)."""
    stys = sty if isinstance(sty, (list, tuple)) else [sty or ty] * nsrc
    return Rec(op, dsts=[O.dst(ins.args[0], dty or ty)],
               srcs=[O.src(ins.args[1 + k], stys[k]) for k in range(nsrc)],
               x0=kw.pop("x0", BITS[ty] if ty in BITS else 0), x1=kw.pop("x1", int(signed(ty))), **kw)


def emit_addsub(ins, O):
    if ins.opcode not in ("add", "sub") or "cc" in ins.mods:
        raise NotNative("carry chain")
    ty = ity(ins, _SCALAR_INT + _B)
    if "sat" in ins.mods:
        if BITS[ty] != 32:
            raise NotNative(".sat width")
        return binary("ADD_SAT" if ins.opcode == "add" else "SUB_SAT", ins, O, ty)
    return binary(ins.opcode.upper(), ins, O, ty)


def _wide(ty: str) -> str:
    return ("s" if signed(ty) else "u") + str(2 * BITS[ty])


def emit_mul(ins, O):
    ty = ity(ins, _SCALAR_INT)
    if "wide" in ins.mods:                 # sources read as ty, extended to the wide type, product in it
        if BITS[ty] == 64:
            raise NotNative(".wide.64")
        return binary("MUL_LO", ins, O, ty, dty=_wide(ty))
    return binary("MUL_HI" if "hi" in ins.mods else "MUL_LO", ins, O, ty)


def emit_mad(ins, O):
    if ins.opcode != "mad" or "cc" in ins.mods:
        raise NotNative("carry chain")
    ty = ity(ins, _SCALAR_INT)
    if "wide" in ins.mods:
        if BITS[ty] == 64:
            raise NotNative(".wide.64")
        wt = _wide(ty)
        return binary("MAD_LO", ins, O, ty, nsrc=3, dty=wt, sty=[ty, ty, wt])
    if "sat" in ins.mods:
        if not ("hi" in ins.mods and ty == "s32"):
            raise NotNative(".sat")
        return binary("MAD_HI_SAT", ins, O, ty, nsrc=3)
    return binary("MAD_HI" if "hi" in ins.mods else "MAD_LO", ins, O, ty, nsrc=3)


def emit_divrem(ins, O):
    return binary(ins.opcode.upper(), ins, O, ity(ins, _SCALAR_INT))


def emit_absneg(ins, O):
    return binary(ins.opcode.upper(), ins, O, ity(ins, ("s16", "s32", "s64")), nsrc=1)


def emit_minmax(ins, O):
    ty = ity(ins, _SCALAR_INT)
    op = ins.opcode.upper()
    if "relu" in ins.mods:
        if ty != "s32":
            raise NotNative(".relu")
        op += "_RELU"
    return binary(op, ins, O, ty)


def emit_bitcount(ins, O):
    op = ins.opcode
    ty = ity(ins, ("b32", "b64") if op != "bfind" else ("u32", "u64", "s32", "s64"))
    return binary(op.upper(), ins, O, ty, nsrc=1, dty="u32", sub=int("shiftamt" in ins.mods))


def emit_brev(ins, O):
    return binary("BREV", ins, O, ity(ins, ("b32", "b64")), nsrc=1)


def emit_bfe(ins, O):
    ty = ity(ins, ("u32", "u64", "s32", "s64"))
    return binary("BFE", ins, O, ty, nsrc=3, sty=[ty, "u32", "u32"])


def emit_bfi(ins, O):
    ty = ity(ins, ("b32", "b64"))
    return binary("BFI", ins, O, ty, nsrc=4, sty=[ty, ty, "u32", "u32"])


def emit_dp(ins, O):
    tys = [x for x in ins.mods if x in ("u32", "s32")]
    if len(tys) != 2:
        raise NotNative("dp4a types")
    at, bt = tys
    ct = "u32" if at == bt == "u32" else "s32"
    two = ins.opcode == "dp2a"
    if two and not ("hi" in ins.mods or "lo" in ins.mods):
        raise NotNative("dp2a")
    sub = int(at == "s32") | int(bt == "s32") << 1 | int(two) << 2 | int("hi" in ins.mods) << 3
    return binary("DP4A", ins, O, ct, nsrc=3, sty=["b32", "b32", ct], sub=sub)


def _logic_type(ins) -> str:
    for m in reversed(ins.mods):
        if m in BITS or m in _PACKED:
            if m == "pred":
                return m
            if is_float(m) or m not in BITS or BITS[m] > 64:
                raise NotNative("logic type")
            return f"b{BITS[m]}"
    raise NotNative("no type")


def emit_logic(ins, O):
    ty = _logic_type(ins)
    return binary(ins.opcode.upper(), ins, O, ty, x0=BITS[ty])


def emit_not(ins, O):
    ty = _logic_type(ins)
    if ins.opcode == "cnot" and ty == "pred":
        raise NotNative("cnot.pred")
    return binary(ins.opcode.upper(), ins, O, ty, nsrc=1, x0=BITS[ty])


def emit_lop3(ins, O):
    if not isinstance(ins.args[4], ir.Imm) or "or" in ins.mods or "and" in ins.mods:
        raise NotNative("lop3 form")
    return binary("LOP3", ins, O, "b32", nsrc=3, sub=int(ins.args[4].value) & 0xFF)


def emit_shf(ins, O):
    left = "l" in ins.mods
    if not (left or "r" in ins.mods) or not ("clamp" in ins.mods or "wrap" in ins.mods):
        raise NotNative("shf form")
    return binary("SHF", ins, O, "b32", nsrc=3, sty=["b32", "b32", "u32"],
                  sub=int(left) | int("clamp" in ins.mods) << 1)


def emit_shift(ins, O):
    ty = None
    for m in reversed(ins.mods):
        if m in BITS:
            ty = m
            break
    if ty is None or is_float(ty) or ty == "pred" or BITS[ty] < 16 or BITS[ty] > 64:
        raise NotNative("shift type")
    if ins.opcode == "shl":
        ty = f"b{BITS[ty]}"
    return binary(ins.opcode.upper(), ins, O, ty, sty=[ty, "u32"])


def emit_prmt(ins, O):
    if [x for x in ins.mods if x != "b32"]:
        raise NotNative("prmt mode")
    return binary("PRMT", ins, O, "b32", nsrc=3)


EMITTERS = {
    "build_addsub": emit_addsub, "build_mul": emit_mul, "build_mad": emit_mad, "build_divrem": emit_divrem,
    "build_absneg": emit_absneg, "build_minmax": emit_minmax, "build_bitcount": emit_bitcount,
    "build_brev": emit_brev, "build_bfe": emit_bfe, "build_bfi": emit_bfi, "build_dp": emit_dp,
    "build_logic": emit_logic, "build_not": emit_not, "build_lop3": emit_lop3, "build_shf": emit_shf,
    "build_shift": emit_shift, "build_prmt": emit_prmt,
}
MODULE = "ptxlab.emu.ops.integer"
