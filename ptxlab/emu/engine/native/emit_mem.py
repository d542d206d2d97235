"""Records for data movement (ops/data_movement.py; PTX ISA 9.7.9): mov, ld/ldu, st, cvta.

Loads and stores are checked for every executing thread before any byte moves (mem.h); the state space is decided
here as ``data_movement._space`` decides it.  ``.b128`` accesses and call-sequence parameters of a real call stack
stay with the interpreter.
"""
from __future__ import annotations

from ...core import ir
from ...core.types import BITS
from .operands import NotNative
from .record import Rec

_SPACES = ("global", "shared", "local", "param", "const")
SP = {"global": 0, "shared": 1, "local": 2, "param": 3, "const": 4, "generic": 5}
_WIN = {"shared": 0x7E0000000000, "local": 0x7D0000000000, "param": 0x7C0000000000, "const": 0x7B0000000000}


def inst_type(ins) -> str:
    for m in reversed(ins.mods):
        if m in BITS:
            return m
    raise NotNative("no type")


def space(ins, O) -> str:
    """data_movement._space: the explicit state space, else generic; call-sequence .param variables are local."""
    for m in ins.mods:
        base = m.split("::")[0]
        if base in _SPACES:
            if base == "param":
                addr = next((a for a in ins.args if isinstance(a, ir.Addr)), None)
                if addr is not None and isinstance(addr.base, ir.Sym) and \
                        O.program.symbol_space(addr.base.name) == "local":
                    return "local"
            return base
    return "generic"


def _vec(ins) -> int:
    v = ins.mod_startswith("v")
    return int(v[1:]) if v and v[1:].isdigit() else 1


def _items(op) -> tuple:
    return op.items if isinstance(op, ir.Vec) else (op,)


def _elem(ins, regs) -> tuple:
    ty = inst_type(ins)
    if ty == "pred" or BITS[ty] > 64:
        raise NotNative(f"{ins.opcode}.{ty}")
    n = _vec(ins)
    if n != len(regs) or n > 4:
        raise NotNative("vector width")
    return ty, n, BITS[ty] // 8


def emit_ld(ins, O):
    regs = _items(ins.args[0])
    ty, n, eb = _elem(ins, regs)
    return Rec("LD", dsts=[O.dst(r, ty) for r in regs], srcs=[O.addr(ins.args[1])], sub=n,
               x0=SP[space(ins, O)], x1=eb)


def emit_st(ins, O):
    vals = _items(ins.args[1])
    ty, n, eb = _elem(ins, vals)
    return Rec("ST", srcs=[O.addr(ins.args[0])] + [O.src(v, ty) for v in vals], sub=n,
               x0=SP[space(ins, O)], x1=eb)


def emit_mov(ins, O):
    ty = inst_type(ins)
    d, a = ins.args
    bits = BITS[ty]
    if bits > 64:
        raise NotNative("mov.b128")
    if isinstance(a, ir.Vec):               # pack {lo, ..., hi}: element k at bit k*eb (PTX ISA 9.7.9.1)
        eb = bits // len(a.items)
        if len(a.items) > 6:
            raise NotNative("pack width")
        return Rec("PACK", dsts=[O.dst(d, ty)], srcs=[O.src(x, f"b{eb}") for x in a.items], x0=eb)
    if isinstance(d, ir.Vec):               # unpack
        eb = bits // len(d.items)
        if len(d.items) > 4:
            raise NotNative("unpack width")
        src = ty if ty.startswith("b") else f"b{bits}"
        return Rec("UNPACK", dsts=[O.dst(x, f"b{eb}") for x in d.items], srcs=[O.src(a, src)], x0=eb)
    return Rec("MOV", dsts=[O.dst(d, ty)], srcs=[O.src(a, ty)])


def emit_cvta(ins, O):
    """cvta{.to}.space.size (PTX ISA 9.7.9.19): add / subtract the space's generic window base."""
    sp = next((m.split("::")[0] for m in ins.mods if m.split("::")[0] in _SPACES), None)
    if sp is None:
        raise NotNative("cvta space")
    ty = inst_type(ins)
    if sp == "global":
        return Rec("MOV", dsts=[O.dst(ins.args[0], ty)], srcs=[O.src(ins.args[1], ty)])
    base = O.src(ir.Imm(_WIN[sp], "int", hex(_WIN[sp])), "u64")
    return Rec("SUB" if "to" in ins.mods else "ADD", dsts=[O.dst(ins.args[0], ty)],
               srcs=[O.src(ins.args[1], ty), base])


EMITTERS = {"build_ld": emit_ld, "build_st": emit_st, "build_mov": emit_mov, "build_cvta": emit_cvta}
MODULE = "ptxlab.emu.ops.data_movement"
