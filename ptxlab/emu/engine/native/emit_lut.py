"""Records for conversions of a narrow register (ops/conversion.py; PTX ISA 9.7.9.21): a lookup table.

A ``cvt`` whose only source is a register of at most 16 bits (``cvt.rn.f16x2.e2m1x2 d, b8``, ``cvt.f32.f16``,
``cvt.rn.f16x2.e4m3x2``, ...) is a function of at most 65,536 inputs.  Its table is computed once per kernel by the
interpreter's own handler, run over every possible register value on a stand-in wave that holds nothing but that
register and the destination; engine.c's ``OP_LUT`` then reads the destination's storage bits from the table.  The
results are the interpreter's by construction.  A handler that touches anything else of the wave (a fidelity warning,
a special register, another register) fails on the stand-in, and the instruction stays with the interpreter.
"""
from __future__ import annotations

import types

import numpy as np

from ...core import ir
from ...core.types import STORAGE
from .operands import NotNative, storage_bits
from .record import Rec

MAX_BITS = 16
_TABLES: dict = {}      # (form, source and destination register types) -> table: one per form, not per instruction


def table(fn, src: ir.Reg, dst: ir.Reg, nregs: int) -> np.ndarray:
    """The destination's storage bits (uint64) for every storage value of ``src``, from the handler ``fn``."""
    sb, db = storage_bits(src), storage_bits(dst)
    n = 1 << sb
    r = [None] * nregs                      # any other register read fails (TypeError): not a function of src alone
    r[dst.idx] = np.zeros(n, STORAGE[db])
    r[src.idx] = np.arange(n, dtype=np.uint64).astype(STORAGE[sb])
    fn(types.SimpleNamespace(r=r, T=n), None)
    out = np.asarray(r[dst.idx])
    if out.shape != (n,) or out.dtype != STORAGE[db]:
        raise NotNative("the handler wrote something else than the destination register")
    if dst.idx != src.idx and not np.array_equal(r[src.idx], np.arange(n, dtype=np.uint64).astype(STORAGE[sb])):
        raise NotNative("the handler changed its source")
    return out.astype(np.uint64)


def emit(prog, e, O):
    """(Rec, table) of a narrow-source conversion, or NotNative."""
    ins = e.ins
    if ins.opcode != "cvt" or len(ins.args) != 2:
        raise NotNative("not a one-source cvt")
    d, a = ins.args
    if not (isinstance(d, ir.Reg) and isinstance(a, ir.Reg)) or a.neg or d.neg:
        raise NotNative("operands are not plain registers")
    sb, db = storage_bits(a), storage_bits(d)
    if sb not in (8, 16) or db not in (8, 16, 32, 64):
        raise NotNative(f"cvt from a {sb}-bit register")
    # the handler is built from the form (opcode and modifiers) and the two registers' types only
    key = (ins.opcode, tuple(ins.mods), a.ty, d.ty, getattr(e.fn, "__qualname__", None))
    tb = _TABLES.get(key)
    if tb is None:
        try:
            tb = table(e.fn, a, d, len(prog.reg_types))
        except NotNative:
            raise
        except Exception as exc:     # noqa: BLE001 -- it needs more than its source: the interpreter runs it
            raise NotNative(f"cvt handler on the stand-in wave: {exc!r}") from None
        if len(_TABLES) > 256:
            _TABLES.clear()
        _TABLES[key] = tb
    return Rec("LUT", dsts=[O.dst(d, f"b{db}")], srcs=[O.src(a, f"b{sb}")]), tb


MODULE = "ptxlab.emu.ops.conversion"
