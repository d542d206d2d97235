"""Translate a kernel (``core.program.Program``) once into the native engine's tables: one ``Op`` record per pc.

Which instructions are native: those whose interpreter builder (``core.isa.lookup``) has an emitter here -- keyed
by the builder's module and name, so an instruction family added or replaced later runs on the interpreter by
itself -- and whose emitter accepts the form.  An instruction whose builder refused it (its handler raises when
executed) or that the program rewrote (calls, returns) also stays with the interpreter.  Control flow (bra, exit,
trap) is always native.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import isa
from ...core.program import K_BRA, K_EXIT, K_TRAP
from . import emit_cvt, emit_float, emit_int, emit_lut, emit_mem
from .operands import NotNative, Operands
from .record import OPCODES, WORDS, Rec

assert OPCODES["PY"] == 0      # a zeroed record is "run it in Python"

EMITTERS: dict = dict(emit_float.EMITTERS)
for _m in (emit_cvt, emit_int, emit_mem):
    EMITTERS.update({(_m.MODULE, name): fn for name, fn in _m.EMITTERS.items()})


@dataclass
class Tables:
    ops: np.ndarray          # (n, WORDS) int64: the Op records
    ends: np.ndarray         # (n,) int64: block end per pc
    roff: np.ndarray         # (n + 1,) int64: reads[roff[pc]:roff[pc+1]] = register slots pc reads
    reads: np.ndarray        # int32
    native: list             # per pc: True when it runs natively
    specials: list           # special register names, index = Ctx.spec slot
    luts: list = None        # lookup tables of OP_LUT records (emit_lut.py), index = the record's x0


def builder_key(ins):
    b = isa.lookup(ins)
    return None if b is None else (b.__module__, b.__qualname__)


def _interpreted(fn) -> bool:
    """The interpreter runs it: no run function, a refused instruction (program._raiser marks it ``refuses``), or one
    whose execution the evidence recorder records (core/evidence.py)."""
    return fn is None or getattr(fn, "refuses", None) is not None or getattr(fn, "records_evidence", False) or \
        getattr(fn, "__qualname__", "").startswith("_raiser")


def record(prog, e, O: Operands, luts: list):
    """The Rec of one normal instruction, or None (the interpreter runs it); a lookup table goes to ``luts``."""
    if _interpreted(e.fn) or id(e.ins) in getattr(prog, "_call_info", {}):
        return None
    key = builder_key(e.ins)
    em = EMITTERS.get(key)
    try:
        if em is not None:
            return em(e.ins, O)
    except NotNative:
        pass
    except (KeyError, ValueError, IndexError, TypeError, AttributeError):
        return None            # a form the emitter did not foresee: the interpreter decides what it means
    if key is None or key[0] != emit_lut.MODULE:
        return None
    try:
        rec, tb = emit_lut.emit(prog, e, O)
    except NotNative:
        return None
    rec.x0 = len(luts)
    luts.append(tb)
    return rec


def translate(prog) -> Tables:
    code = prog.code
    n = len(code)
    O = Operands(prog)
    rows = []
    luts: list = []
    native = [False] * n
    for pc, e in enumerate(code):
        if e.kind == K_BRA:
            rec = Rec("BRA", x0=e.target)
        elif e.kind == K_EXIT:
            rec = Rec("EXIT")
        elif e.kind == K_TRAP:
            rec = Rec("TRAP")
        else:
            rec = record(prog, e, O, luts)
            native[pc] = rec is not None
            if rec is None:
                rec = Rec("PY")
        try:
            row = rec.row(e.guard, e.gneg)
            if any(not -2**63 <= v < 2**63 for v in row):
                raise OverflowError(rec)
        except (ValueError, OverflowError):
            row = Rec("PY").row(e.guard, e.gneg)
            native[pc] = False
        rows.append(row)
    ops = np.array(rows, dtype=np.int64).reshape(n, WORDS)
    roff = np.zeros(n + 1, np.int64)
    reads = []
    for pc, e in enumerate(code):
        reads.extend(e.reads)
        roff[pc + 1] = len(reads)
    return Tables(ops, np.asarray(prog.block_end, np.int64), roff, np.asarray(reads, np.int32), native,
                  list(O.specials), luts)
