"""Operand encodings of the native engine (``Opnd`` in runtime.h): reads as an instruction type, register
destinations, addresses.

The conversions are the interpreter's (``core/types.py`` ``from_storage`` / ``to_storage``, ``core/isa.py``
``Ctx.read`` / ``Ctx.write`` / ``Ctx.address``); engine.c's ``fetch`` and ``store_dst`` apply them.  An operand is
three words: ``k`` = kind | type bits << 8 | signed << 16 | storage bits << 24 | negated << 32, then an index or a
value, then an offset.  Whatever falls outside these rules (.b128 registers, frame-relative symbols of a real call
stack, float views of predicates, %globaltimer) raises ``NotNative``: the instruction stays with the interpreter.
"""
from __future__ import annotations

import functools

import numpy as np

from ...core import ir
from ...core.isa import imm_value
from ...core.types import BITS, is_signed

(K_NONE, K_REG, K_IMM, K_SPEC, K_CLOCK, K_CLOCK64, K_SYMSH, K_SINK, K_AREG, K_ACONST, K_ASYMSH, K_CLOCKHI) = range(12)
_CLOCKS = {"clock": K_CLOCK, "clock_hi": K_CLOCKHI, "clock64": K_CLOCK64}     # %clock_hi: the upper half of %clock64
_UNCACHED = ("globaltimer", "globaltimer_lo", "globaltimer_hi")
_FLOATISH = ("f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "tf32")
NONE = (0, 0, 0)


class NotNative(Exception):
    """The instruction (or this form of it) has no native translation: the interpreter runs it."""


def tbits(ty: str) -> int:
    if ty not in BITS or BITS[ty] > 64:
        raise NotNative(f"type .{ty}")
    return BITS[ty]


@functools.lru_cache(maxsize=None)
def _k(kind: int, ty: str, sb: int = 0, neg: bool = False) -> int:
    return kind | (tbits(ty) << 8) | (int(is_signed(ty)) << 16) | (sb << 24) | (int(neg) << 32)


@functools.lru_cache(maxsize=65536)
def _imm(op: ir.Imm, ty: str) -> int:
    v = np.asarray(imm_value(op, ty))
    bits = int(bool(v)) if ty == "pred" else int(v.view(np.dtype(f"u{v.dtype.itemsize}")))
    return _container(tbits(ty), bits, is_signed(ty))


def storage_bits(reg: ir.Reg) -> int:
    sb = 1 if reg.ty == "pred" else BITS.get(reg.ty, 0)
    if sb not in (1, 8, 16, 32, 64):
        raise NotNative(f"{sb}-bit register {reg.name}")
    return sb


def _container(bits: int, value: int, signed: bool) -> int:
    """A type's value as engine.c's 64-bit container (sign- or zero-extended), as a signed int64."""
    value &= (1 << bits) - 1 if bits < 64 else (1 << 64) - 1
    if signed and bits < 64 and value >> (bits - 1):
        value -= 1 << bits
    if value >= 1 << 63:
        value -= 1 << 64
    return value


class Operands:
    """Per-kernel operand encoding (records the special registers the kernel reads)."""

    def __init__(self, program):
        self.program = program
        self.specials: list = []        # names, index = Ctx.spec slot

    def src(self, op, ty: str) -> tuple:
        """Operand ``op`` read as PTX type ``ty``."""
        tb = tbits(ty)
        if isinstance(op, ir.Reg):
            sb = storage_bits(op)
            if op.neg and (ty != "pred" or sb != 1):
                raise NotNative("negated register read as a value")
            if sb == 1 and ty in _FLOATISH:
                raise NotNative("predicate read as a float")
            return (_k(K_REG, ty, sb, op.neg), op.idx, 0)
        if isinstance(op, ir.Imm):
            return (_k(K_IMM, ty), _imm(op, ty), 0)
        if isinstance(op, ir.Special):
            if ty in _FLOATISH or ty == "pred":
                raise NotNative("special register read as a float or predicate")
            name = op.name
            if name in _CLOCKS:
                return (_k(_CLOCKS[name], ty), 0, 0)
            if name in _UNCACHED:
                raise NotNative(f"%{name}")
            if name not in self.specials:
                self.specials.append(name)
            return (_k(K_SPEC, ty), self.specials.index(name), 0)
        if isinstance(op, ir.Sym) or (isinstance(op, ir.Addr) and isinstance(op.base, ir.Sym) and op.vec is None):
            if ty in _FLOATISH or ty == "pred":
                raise NotNative("symbol address read as a float or predicate")
            name = op.name if isinstance(op, ir.Sym) else op.base.name
            off = 0 if isinstance(op, ir.Sym) else op.offset
            shared, v = self._symbol(name, off)
            v &= (1 << tb) - 1 if tb < 64 else (1 << 64) - 1      # Ctx.read: np.array(v, u64).astype(dt)
            if shared:
                return (_k(K_SYMSH, ty), _container(64, v, False), 0)
            return (_k(K_IMM, ty), _container(tb, v, is_signed(ty)), 0)
        raise NotNative(f"operand {op!r}")

    def _symbol(self, name: str, offset: int) -> tuple:
        prog = self.program
        if getattr(prog, "frame_offset", lambda _n: None)(name) is not None:
            raise NotNative(f"frame-relative symbol {name}")
        if name not in prog.syms:
            raise NotNative(f"unknown symbol {name}")
        v = (prog.symbol_address(name) + offset) & 0xFFFFFFFFFFFFFFFF
        return prog.symbol_space(name) == "shared", v

    def addr(self, op) -> tuple:
        """``[base+offset]`` as a uint64 address in the base's own state space (Ctx.address)."""
        if not isinstance(op, ir.Addr) or op.vec is not None:
            raise NotNative(f"address operand {op!r}")
        off = op.offset
        if op.base is None:
            return (K_ACONST, _container(64, off, False), 0)
        if isinstance(op.base, ir.Sym):
            shared, v = self._symbol(op.base.name, off)
            return (K_ASYMSH if shared else K_ACONST, _container(64, v, False), 0)
        if not isinstance(op.base, ir.Reg) or op.base.neg:
            raise NotNative(f"address base {op.base!r}")
        sb = storage_bits(op.base)
        if sb not in (16, 32, 64):
            raise NotNative(f"{sb}-bit address register")
        return (K_AREG | (sb << 24), op.base.idx, _container(64, off, False))

    def dst(self, op, ty: str) -> tuple:
        """Destination ``op`` written with a value of PTX type ``ty``."""
        if isinstance(op, ir.Sink):
            return (K_SINK, 0, 0)
        if not isinstance(op, ir.Reg):
            raise NotNative(f"destination {op!r}")
        sb = storage_bits(op)
        if sb == 1 and ty in _FLOATISH:
            raise NotNative("float value written to a predicate")
        return (_k(K_REG, ty, sb), op.idx, 0)
