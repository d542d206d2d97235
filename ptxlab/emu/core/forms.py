"""Instruction forms written in PTX ISA syntax notation: parse, match, expand.

A *form* is one syntax line of the PTX ISA, e.g. ``add{.rnd}{.ftz}{.sat}.f32`` with ``.rnd = {.rn, .rz, .rm, .rp}``:
an opcode followed by modifier *slots*; ``.name`` is a mandatory slot, ``{.name}`` an optional one; a name defined
in the form's *sets* stands for one of its values, any other name is itself (a literal).  Forms are matched in order
against the dot components of an instruction (``ir.Instr.mods``), exactly as the ISA writes them: a form accepts a
modifier tuple only if every component is consumed by one slot, in the slot order (the ISA's own order; NVRTC and
ptxas spell modifiers in it).  ptxas also accepts some modifiers out of that order (CUDA's float2 ``atomicAdd`` emits
``atom.global.v2.f32.add``, CUTLASS ``cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global...``): a form also
accepts a permutation of one of its instances in which the *type* modifiers (``.f32``, ``.e4m3`` ...) keep their
relative order, since that order carries meaning (``cvt.f16.f32`` is not ``cvt.f32.f16``) while the other modifiers'
positions never do.

Used by the handler registry (``core/isa.py``: every handler lists the forms it implements; anything else is refused
as "not implemented"), the legal-form tables of the PTX ISA (``core/ptx_isa/``) and the coverage table
(``tools/isa_coverage.py``, ``ptx_docs/isa_coverage.md``).
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Iterator, Mapping, Optional


@dataclass(frozen=True)
class Slot:
    """One modifier position: ``name`` (a set name or the literal), its alternative values, optional or not."""
    name: str
    alts: tuple
    optional: bool

    def text(self) -> str:
        s = "." + self.name
        return "{" + s + "}" if self.optional else s


@dataclass(frozen=True)
class Form:
    """One instruction form (a PTX ISA syntax line)."""
    text: str                   # as written: "add{.rnd}{.ftz}{.sat}.f32"
    opcode: str                 # "add"
    slots: tuple                # Slot, in order
    section: str = ""           # PTX ISA section, e.g. "9.7.3.3"
    regex: object = None        # unused (kept for compatibility; matching walks the slots: _walk)

    def match(self, mods: tuple) -> Optional[dict]:
        """Slot name -> value ('' for an absent optional slot) if ``mods`` is an instance of this form (or a
        permutation of one that keeps the type modifiers in order), else None.  A name used by several slots is
        keyed name, name#2, name#3 ..."""
        if not _vocab(self).issuperset(mods):
            return None
        mods = tuple(mods)
        vals = _walk(_alts_of(self), mods, 0, 0)
        if vals is None:
            canon = self._canonical(mods)
            if canon is None or canon == mods:
                return None
            vals = _walk(_alts_of(self), canon, 0, 0)
            if vals is None:
                return None
        return dict(zip(_keys_of(self), vals))

    def _canonical(self, mods: tuple) -> Optional[tuple]:
        """``mods`` reordered into this form's slot order: each non-type modifier goes to the first slot that can
        hold it, type modifiers to the type slots in their own order.  None if some modifier fits no slot."""
        pos = _positions(self)
        keyed = []
        last_type = (-1, -1)
        for k, x in enumerate(mods):
            cands = pos.get(x)
            if not cands:
                return None
            if x in TYPE_NAMES:
                later = [c for c in cands if c > last_type]
                if not later:
                    return None
                last_type = later[0]
                keyed.append((later[0], k, x))
            else:
                keyed.append((cands[0], k, x))
        keyed.sort()
        return tuple(x for _, _, x in keyed)

    def count(self) -> int:
        n = 1
        for s in self.slots:
            n *= len(s.alts) + (1 if s.optional else 0)
        return n

    def expand(self) -> Iterator[tuple]:
        """Every modifier tuple this form accepts (optional slots absent or present; a set value of several
        components, e.g. ``.v8.b32``, gives them all)."""
        choices = [(("",) if s.optional else ()) + tuple(s.alts) for s in self.slots]
        for combo in itertools.product(*choices):
            yield tuple(x for c in combo if c for x in c.split("."))

    def values(self) -> list:
        """[(slot key, alternatives incl. '' for optional)] in slot order."""
        return [(k, ((("",) if s.optional else ()) + tuple(s.alts))) for k, s in zip(_keys(self.slots), self.slots)]


# type modifiers (PTX ISA 5.2 fundamental types plus the packed / narrow / MMA element types): their relative order
# is significant, every other modifier's position is not (see the module docstring)
TYPE_NAMES = frozenset(
    [f"{k}{n}" for k in "bus" for n in (8, 16, 32, 64)] + ["b1", "b128", "b1024", "u4", "s4", "f16", "f32", "f64",
                                                            "bf16", "tf32", "pred", "f16x2", "bf16x2", "f32x2",
                                                            "u16x2", "s16x2", "u8x4", "s8x4", "ue8m0", "ue4m3"]
    + [f"{t}{x}" for t in ("e4m3", "e5m2", "e2m1", "e2m3", "e3m2", "ue8m0") for x in ("", "x2", "x4")])

_POS: dict = {}


_ALTS: dict = {}


def _alts_of(form: "Form") -> tuple:
    """Per slot: (optional, ((value, its components), ...)), longest value first."""
    a = _ALTS.get(id(form))
    if a is None:
        a = _ALTS[id(form)] = tuple(
            (s.optional, tuple((v, tuple(v.split("."))) for v in sorted(s.alts, key=len, reverse=True)))
            for s in form.slots)
    return a


def _walk(alts: tuple, mods: tuple, i: int, k: int):
    """The slot values (in slot order) that consume mods[i:] with slots k.., or None: each slot takes one of its
    values (several components for a value like ``v8.b32``), an optional slot may also be absent ('')."""
    if k == len(alts):
        return [] if i == len(mods) else None
    optional, choices = alts[k]
    for v, comps in choices:
        n = len(comps)
        if mods[i:i + n] == comps:
            rest = _walk(alts, mods, i + n, k + 1)
            if rest is not None:
                return [v] + rest
    if optional:
        rest = _walk(alts, mods, i, k + 1)
        if rest is not None:
            return [""] + rest
    return None


def _positions(form: "Form") -> dict:
    """modifier -> sorted [(slot index, component index)] where it may stand in ``form``."""
    p = _POS.get(id(form))
    if p is None:
        p = {}
        for i, s in enumerate(form.slots):
            for a in s.alts:
                for j, comp in enumerate(a.split(".")):
                    p.setdefault(comp, []).append((i, j))
        for v in p.values():
            v.sort()
        _POS[id(form)] = (p, form)      # the form is kept alive with its entry, so its id stays unique
        return p
    return p[0]


_KEYS: dict = {}
_VOCAB: dict = {}


def _vocab(form: "Form") -> frozenset:
    v = _VOCAB.get(id(form))
    if v is None:
        v = _VOCAB[id(form)] = (frozenset(c for s in form.slots for a in s.alts for c in a.split(".")), form)
    return v[0]


def _keys_of(form: "Form") -> list:
    k = _KEYS.get(id(form))
    if k is None:
        k = _KEYS[id(form)] = (_keys(form.slots), form)
    return k[0]


def _keys(slots) -> list:
    seen: dict = {}
    keys = []
    for s in slots:
        n = seen.get(s.name, 0) + 1
        seen[s.name] = n
        keys.append(s.name if n == 1 else f"{s.name}#{n}")
    return keys


_TOKEN = re.compile(r"\{\.([^{}]+)\}|\(\.([^()]+)\)|\.([^.{}()]+)")


def parse(text: str, sets: Optional[Mapping[str, tuple]] = None, section: str = "") -> Form:
    """Parse a form in PTX ISA notation.  ``sets`` maps a set name to its values (without dots); a ``{.a|.b}``
    group lists optional inline alternatives, a ``(.a|.b)`` group mandatory ones (one of them must be present)."""
    text = text.strip()
    sets = sets or {}
    i = 0
    while i < len(text) and text[i] not in ".{(":
        i += 1
    opcode = text[:i]
    if not opcode:
        raise ValueError(f"form {text!r}: no opcode")
    slots = []
    pos = i
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"form {text!r}: cannot parse at {text[pos:]!r}")
        optional = m.group(1) is not None
        body = m.group(1) if optional else (m.group(2) or m.group(3))
        if "|" in body or m.group(2) is not None:     # {.a|.b} / (.a|.b) inline alternatives
            alts = tuple(a.strip().lstrip(".") for a in body.split("|"))
            name = "|".join(alts)
        else:
            name = body
            alts = tuple(sets[name]) if name in sets else (name,)
        slots.append(Slot(name, alts, optional))
        pos = m.end()
    return Form(text, opcode, tuple(slots), section)
