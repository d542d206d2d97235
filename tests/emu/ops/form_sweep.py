"""Instances that cover every modifier value of a registered form (the coverage rule of tools/isa_coverage.py).

``cover(form, ok)`` returns modifier tuples, each an instance of ``form`` that is legal PTX on sm_90a or sm_100a (a
row of ptxlab/emu/core/ptx_isa matches it) and that ``ok(mods)`` accepts (what the sweep's operand builder can run),
such that every value of every slot of the form (and the absence of every optional slot) occurs in one of them, where
such an instance exists; and the (slot, value) pairs it could not place.  Deterministic (a fixed search order), so the
sweep kernels are the same on every run while their data are fresh."""
from __future__ import annotations

import random
from functools import lru_cache

from ptxlab.emu.core import isa, ptx_isa
from ptxlab.emu.ops import load_families

load_families()


@lru_cache(maxsize=None)
def _legal_rows(opcode: str) -> tuple:
    return tuple(r for r in ptx_isa.instructions() if r.form.opcode == opcode and not r.operands)


def legal_target(opcode: str, mods: tuple):
    """The first of sm_90a / sm_100a on which some legal row accepts ``opcode.mods``, else None."""
    for t in ptx_isa.TARGETS:
        for r in _legal_rows(opcode):
            if ptx_isa.legal_on(r, t) and r.form.match(mods) is not None:
                return t
    return None


def _build(form, choice: dict) -> tuple:
    return tuple(x for k, _ in form.values() if choice[k] for x in choice[k].split("."))


def cover(form, ok, tries: int = 400) -> tuple:
    """(instances [(mods, target)], missing [(slot, value)]) for one registered form."""
    vals = form.values()
    rng = random.Random(form.text)
    base = {k: alts[0] for k, alts in vals}
    found: dict = {}
    missing = []
    for k, alts in vals:
        for v in alts:
            if any(c[k] == v for c, _ in found.values()):
                continue
            hit = None
            for n in range(tries):
                if n == 0:
                    c = dict(base)
                else:
                    c = {kk: rng.choice(aa) for kk, aa in vals}
                c[k] = v
                mods = _build(form, c)
                m = isa.match(form.opcode, mods)
                if m is None or m[0] is not form or not ok(mods):
                    continue
                t = legal_target(form.opcode, mods)
                if t is not None:
                    hit = (c, t)
                    break
            if hit is None:
                missing.append((k, v or "(absent)"))
            else:
                found[_build(form, hit[0])] = hit
    return [(mods, t) for mods, (c, t) in found.items()], missing


def forms_of(opcode: str) -> list:
    return [f for f, b in isa.registered() if f.opcode == opcode and b is not None]


def all_instances(opcodes, ok) -> tuple:
    inst, miss = [], []
    for op in opcodes:
        for f in forms_of(op):
            i, m = cover(f, ok)
            inst += [(op, mods, t) for mods, t in i]
            miss += [(f.text, k, v) for k, v in m]
    return inst, miss


__all__ = ["cover", "all_instances", "legal_target", "forms_of"]
