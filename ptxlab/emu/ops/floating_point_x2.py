"""Packed single-precision arithmetic ``.f32x2`` (PTX ISA 9.7.3.3 add, 9.7.3.4 sub, 9.7.3.5 mul, 9.7.3.6 fma; PTX ISA
8.6, sm_100+):

    add{.rnd}{.ftz}.f32x2 d, a, b;   sub{.rnd}{.ftz}.f32x2 d, a, b;   mul{.rnd}{.ftz}.f32x2 d, a, b;
    fma.rnd{.ftz}.f32x2 d, a, b, c;

Each ``.b64`` operand holds two ``.f32`` values (bits 0..31 = element 0, bits 32..63 = element 1); the two halves
are computed independently with the ``.f32`` semantics of ``floating_point.py`` (same rounding, ``.ftz``, canonical
NaN). NVIDIA's CuTe DSL emits ``mul.f32x2`` (its fp16_gemm_6 tutorial's epilogue scaling).
"""
from __future__ import annotations

import numpy as np

from ..core import ir
from ..core.isa import Ctx, Unsupported, handler
from .floating_point import f32_add, f32_fma, f32_mul

_ROUND = ("rn", "rz", "rm", "rp")
_SIGN = np.uint32(0x80000000)


def _names():
    for op in ("add", "sub", "mul", "fma"):
        for rnd in ((None,) if op != "fma" else ()) + _ROUND:
            for ftz in (False, True):
                yield ".".join([op] + ([rnd] if rnd else []) + (["ftz"] if ftz else []) + ["f32x2"])


def _split(v):
    """(T,) or scalar uint64 -> (lo, hi) uint32 halves."""
    v = np.asarray(v, dtype=np.uint64)
    return (v & np.uint64(0xFFFFFFFF)).astype(np.uint32), (v >> np.uint64(32)).astype(np.uint32)


def _join(lo, hi):
    return np.asarray(lo, np.uint64) | (np.asarray(hi, np.uint64) << np.uint64(32))


@handler(*_names())
def build_f32x2(ins: ir.Instr, ctx: Ctx):
    """add/sub/mul/fma .f32x2: element-wise ``.f32`` operations on the two halves of ``.b64`` operands."""
    op = ins.opcode
    mode = next((m for m in ins.mods if m in _ROUND), "rn")
    ftz = ins.has("ftz")
    extra = [m for m in ins.mods if m not in _ROUND + ("ftz", "f32x2")]
    if extra:
        raise Unsupported(f"{ins.name}: modifier(s) {', '.join('.' + x for x in extra)} are not defined for .f32x2 "
                          f"({ins.where()})")
    nargs = 3 if op == "fma" else 2
    if len(ins.args) != nargs + 1:
        raise Unsupported(f"{ins.name}: expected {nargs + 1} operands ({ins.where()})")
    for a in ins.args[1:]:
        if isinstance(a, ir.Imm):
            raise Unsupported(f"{ins.name}: .f32x2 operands are .b64 registers, not literals ({ins.where()})")
    rds = [ctx.read(a, "b64") for a in ins.args[1:]]
    w = ctx.write(ins.args[0], "b64")
    if op == "mul":
        f = lambda a, b: f32_mul(a, b, mode, ftz)  # noqa: E731
    elif op == "add":
        f = lambda a, b: f32_add(a, b, mode, ftz)  # noqa: E731
    elif op == "sub":
        f = lambda a, b: f32_add(a, b ^ _SIGN, mode, ftz)  # noqa: E731
    else:
        f = lambda a, b, c: f32_fma(a, b, c, mode, ftz)  # noqa: E731

    def run(st, m):
        halves = [_split(r(st)) for r in rds]
        lo = f(*(h[0] for h in halves))
        hi = f(*(h[1] for h in halves))
        w(st, _join(lo, hi), m)
    return run


__all__ = ["build_f32x2"]
