"""Instruction-handler registry and the decode-time context (see API.md).

Every instruction family (``ops/<family>.py``) registers a table of the *forms* it implements, written in PTX ISA
syntax notation (``core/forms.py``), each with its PTX ISA section and the *builder* that decodes it::

    FORMS = register(SETS, [
        # form                          PTX ISA      builder
        ("add{.rnd}{.ftz}{.sat}.f32",   "9.7.3.3",   build_addsubmul),
    ])

An instruction runs only if its modifiers are an instance of one registered form (in the ISA's order); the first
matching form of its opcode selects the builder.  Anything else is "not implemented" (an error naming the full
instruction and its PTX line when the instruction executes): no instruction can run as another one.

The builder runs once per instruction when a kernel is loaded (``ins.form`` / ``ins.fields`` hold the matched form
and its slot values); the ``run`` function it returns runs each time the instruction executes.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ...errors import EmuError
from . import forms as _forms
from . import ir
from .types import BITS, DTYPE, STORAGE, from_storage, to_storage

Exec = Callable[..., Optional[int]]
_FORMS: dict[str, list] = {}        # opcode -> [(Form, builder)] in registration order
_MATCH: dict[str, Optional[tuple]] = {}   # instruction name -> (Form, builder, fields) or None
_WITHDRAWN: dict[str, list] = {}   # opcode -> [(Form, reason)]: forms refused on purpose (evidence against the model)
CORE = "core"   # builder marker of the forms program.py decodes itself (bra, call, ret, exit, trap)
FAMILY_ERRORS: dict[str, str] = {}  # instruction-family module -> why it failed to import (ops/__init__.py)

# control codes a run function may return (None = fall through to the next instruction)
RETRY = 1        # the instruction could not complete for (some of) m: the core parks them at this instruction
BLOCK_END = 2    # the instruction changed thread states (parked/blocked threads): the core re-schedules after it
JUMP = 3         # the instruction set the pc of its executing threads itself (call/ret: callstack.py)


class Unsupported(EmuError):
    pass


def register(sets: Optional[dict], rows) -> list:
    """Register a family's form table: rows of (form in PTX ISA notation, PTX ISA section, builder).  ``sets``
    defines the named modifier sets the forms use (``{"rnd": ("rn", "rz", "rm", "rp")}``).  Returns the Forms."""
    out = []
    for text, section, builder in rows:
        f = _forms.parse(text, sets, section)
        _FORMS.setdefault(f.opcode, []).append((f, builder))
        out.append(f)
    _MATCH.clear()
    return out


def withdraw(sets: Optional[dict], rows) -> list:
    """Forms a family refuses on purpose although it could compute them, because evidence contradicts its model
    (rows of (form, PTX ISA section, reason)): they stay unregistered, and their "not implemented" error says why."""
    out = []
    for text, section, reason in rows:
        f = _forms.parse(text, sets, section)
        _WITHDRAWN.setdefault(f.opcode, []).append((f, reason))
        out.append(f)
    return out


def withdrawn() -> list:
    """Every withdrawn (Form, reason), opcode by opcode."""
    return [fr for lst in _WITHDRAWN.values() for fr in lst]


def withdrawn_reason(opcode: str, mods: tuple) -> Optional[str]:
    """The reason a withdrawn form covering ``opcode.mods`` gives, or None."""
    return next((r for f, r in _WITHDRAWN.get(opcode, ()) if f.match(tuple(mods)) is not None), None)


def match(opcode: str, mods: tuple) -> Optional[tuple]:
    """(Form, builder, fields) of the first registered form of ``opcode`` that ``mods`` is an instance of."""
    name = ".".join((opcode,) + tuple(mods))
    if name in _MATCH:
        return _MATCH[name]
    hit = None
    for f, b in _FORMS.get(opcode, ()):
        got = f.match(tuple(mods))
        if got is not None:
            hit = (f, b, got)
            break
    _MATCH[name] = hit
    return hit


def lookup(ins: ir.Instr) -> Optional[Callable]:
    """The builder of ``ins`` (None: no registered form matches: not implemented).  Sets ``ins.form`` and
    ``ins.fields`` (slot -> value, '' for an absent optional slot)."""
    hit = match(ins.opcode, ins.mods)
    if hit is None:
        return None
    ins.form, b, ins.fields = hit
    return b


def registered() -> list:
    """Every registered (Form, builder), opcode by opcode in registration order."""
    return [fb for lst in _FORMS.values() for fb in lst]


def forms_of(opcode: str) -> list:
    return [f for f, _ in _FORMS.get(opcode, ())]


def not_implemented(ins: ir.Instr) -> str:
    """The error text for an instruction no registered form accepts."""
    known = forms_of(ins.opcode)
    msg = f"not implemented: {ins.name}"
    why = withdrawn_reason(ins.opcode, tuple(ins.mods))
    if why:
        msg += f" ({why})"
    if known:
        shown = ", ".join(f.text for f in known[:12]) + (f", ... ({len(known)} forms)" if len(known) > 12 else "")
        msg += f"\n  the emulator implements these forms of '{ins.opcode}' only: {shown}"
    else:
        msg += f"\n  the emulator implements no form of '{ins.opcode}'"
    msg += "\n  (ptx_docs/isa_coverage.md lists every form of the PTX ISA and whether the emulator runs it)"
    return msg


def inst_type(ins: ir.Instr, default: Optional[str] = None) -> str:
    """The last type-name modifier of an instruction (``add.s32`` → 's32')."""
    for m in reversed(ins.mods):
        if m in BITS:
            return m
    if default is None:
        raise Unsupported(f"no type modifier on '{ins.text.strip()}' ({ins.where()})")
    return default


class Ctx:
    """Decode-time helpers that turn operands into fast closures over the wave state."""

    def __init__(self, program):
        self.program = program      # machine.Program (symbols, functions)

    # --- reading ------------------------------------------------------------------------------------------------
    def read(self, op, ty: str):
        """fn(st) -> value of operand ``op`` as instruction type ``ty`` (array (T,) or numpy scalar)."""
        dt = DTYPE[ty]
        if isinstance(op, ir.Reg):
            i = op.idx
            if ty == "pred":
                if op.neg:
                    return lambda st: ~st.r[i]
                return lambda st: st.r[i]
            if STORAGE[BITS[op.ty] if op.ty != "pred" else 1] == dt:
                return lambda st: st.r[i]
            if STORAGE[BITS[op.ty]].itemsize == dt.itemsize:
                return lambda st: st.r[i].view(dt)
            return lambda st: from_storage(st.r[i], ty)
        if isinstance(op, ir.Imm):
            v = imm_value(op, ty)
            return lambda st: v
        if isinstance(op, ir.Special):
            name = op.name
            return lambda st: st.special(name).astype(dt, copy=False)
        if isinstance(op, ir.Sym):
            fr = self._frame_reader(op.name, 0, dt)
            if fr is not None:
                return fr
            v = self.program.symbol_address(op.name)
            c = np.array(v, dtype=np.uint64).astype(dt)
            return self._shared_sym(op.name, c, dt)
        if isinstance(op, ir.Addr) and isinstance(op.base, ir.Sym) and op.vec is None:
            fr = self._frame_reader(op.base.name, op.offset, dt)
            if fr is not None:
                return fr
            v = self.program.symbol_address(op.base.name) + op.offset
            c = np.array(v & 0xFFFFFFFFFFFFFFFF, dtype=np.uint64).astype(dt)
            return self._shared_sym(op.base.name, c, dt)
        raise Unsupported(f"operand {op} cannot be read as .{ty}")

    def _frame_reader(self, name: str, offset: int, dt):
        """Reader of a frame-relative local symbol (a variable of a really-called function: callstack.py)."""
        fo = getattr(self.program, "frame_offset", lambda _n: None)(name)
        if fo is None:
            return None
        from .frames import frame_base
        o = np.uint64((fo + offset) & 0xFFFFFFFFFFFFFFFF)
        return lambda st: (frame_base(st) + o).astype(dt, copy=False)

    def read_vec(self, op, ty: str) -> list:
        """Readers for each element of a vector operand (or a one-element list for a scalar)."""
        items = op.items if isinstance(op, ir.Vec) else (op,)
        return [self.read(x, ty) for x in items]

    # --- writing ------------------------------------------------------------------------------------------------
    def write(self, op, ty: str):
        """fn(st, value, m): write ``value`` (of type ``ty``) to register ``op`` for the threads in mask ``m``."""
        if isinstance(op, ir.Sink):
            return lambda st, v, m: None
        if not isinstance(op, ir.Reg):
            raise Unsupported(f"destination {op} is not a register")
        i = op.idx
        storage = STORAGE[1 if op.ty == "pred" else BITS[op.ty]]

        def w(st, v, m):
            v = to_storage(v, ty, storage)
            if m is None:
                st.r[i] = v if v.shape == (st.T,) else np.full(st.T, v, dtype=storage)
            else:
                st.r[i] = np.where(m, v, st.r[i])
        return w

    def write_vec(self, op, ty: str) -> list:
        items = op.items if isinstance(op, ir.Vec) else (op,)
        return [self.write(x, ty) for x in items]

    # --- addresses ----------------------------------------------------------------------------------------------
    def address(self, op: ir.Addr):
        """fn(st) -> uint64 address array/scalar for ``[base+offset]`` (value in the base's own state space)."""
        if not isinstance(op, ir.Addr):
            raise Unsupported(f"expected an address operand [..], got {op}")
        off = op.offset
        if op.base is None:
            c = np.uint64(off & 0xFFFFFFFFFFFFFFFF)
            return lambda st: c
        if isinstance(op.base, ir.Sym):
            fr = self._frame_reader(op.base.name, off, np.dtype(np.uint64))
            if fr is not None:
                return fr
            c = np.uint64((self.program.symbol_address(op.base.name) + off) & 0xFFFFFFFFFFFFFFFF)
            return self._shared_sym(op.base.name, c, np.dtype(np.uint64))
        i = op.base.idx
        if BITS[op.base.ty] == 64:
            if off == 0:
                return lambda st: st.r[i]
            o = np.uint64(off & 0xFFFFFFFFFFFFFFFF)
            return lambda st: st.r[i] + o
        o32 = np.uint32(off & 0xFFFFFFFF)
        if off == 0:
            return lambda st: st.r[i].astype(np.uint64)
        return lambda st: (st.r[i] + o32).astype(np.uint64)

    def _shared_sym(self, name: str, c, dt):
        """Reader of a symbol's address; a .shared symbol's address carries the CTA's cluster rank in bits 24..31
        in a cluster launch (``st.smem_rank_bits``, cluster.py), as on hardware."""
        if self.program.symbol_space(name) != "shared":
            return lambda st: c

        def rd(st):
            rb = st.smem_rank_bits
            return c if rb is None else (rb + c.astype(np.uint64)).astype(dt)
        return rd

    def symbol_space(self, op) -> Optional[str]:
        """The state space of a symbol operand (or of the symbol base of an address), else None."""
        sym = op.base if isinstance(op, ir.Addr) else op
        if isinstance(sym, ir.Sym):
            return self.program.symbol_space(sym.name)
        return None


def imm_value(op: ir.Imm, ty: str):
    """An immediate as a numpy scalar of type ``ty`` (PTX ISA 4.5: 0f/0d literals give exact bit patterns)."""
    dt = DTYPE[ty]
    if ty == "pred":
        return np.bool_(op.value != 0)
    if op.kind == "f32bits":
        f = np.array(op.value, dtype=np.uint32).view(np.float32)
        return f.astype(dt) if dt.kind == "f" or ty == "bf16" else np.array(op.value, np.uint32).astype(dt)[()]
    if op.kind == "f64bits":
        f = np.array(op.value, dtype=np.uint64).view(np.float64)
        return f.astype(dt)[()] if dt.kind == "f" or ty == "bf16" else np.array(op.value, np.uint64).astype(dt)[()]
    if op.kind == "float":
        return np.array(op.value, dtype=np.float64).astype(dt)[()]
    v = int(op.value)
    if dt.kind == "f" or ty == "bf16":
        return np.array(v, dtype=np.float64).astype(dt)[()]
    bits = dt.itemsize * 8
    v &= (1 << bits) - 1
    return np.array(v, dtype=np.uint64).astype(np.dtype(f"u{dt.itemsize}")).view(dt)[()]
