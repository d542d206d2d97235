"""Which instruction forms the test suite executes (the evidence column of ptx_docs/isa_coverage.md).

Off unless ``PTXLAB_ISA_EVIDENCE`` names a directory: then every instruction the emulator executes (without error) for
the first time in a test appends ``name <TAB> special registers <TAB> pytest node id`` to ``<dir>/ev.<pid>.tsv`` (the node id comes
from ``PYTEST_CURRENT_TEST``).  ``tools/isa_coverage.py --collect <dir>`` folds the files into
``tools/isa_evidence.json``.  With the variable unset, ``wrap`` returns the run function unchanged (no cost); with it
set, the interpreter runs every wrapped instruction (the native engine would not call the wrapper).
"""
from __future__ import annotations

import os
from typing import Callable

from . import ir

_SEEN: set = set()


def enabled() -> bool:
    return bool(os.environ.get("PTXLAB_ISA_EVIDENCE"))


def _sregs(ins: ir.Instr) -> str:
    out = []

    def walk(ops):
        for op in ops:
            if isinstance(op, ir.Special):
                out.append("%" + op.name)
            elif isinstance(op, ir.Imm) and op.text == "WARP_SZ":
                out.append("WARP_SZ")
            elif isinstance(op, (ir.Vec, ir.Pair, ir.Paren)):
                walk(op.items)
    walk(ins.args)
    return ",".join(out)


def _record(ins: ir.Instr) -> None:
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    regs = _sregs(ins)
    key = (ins.name, regs, test)
    if key in _SEEN:
        return
    _SEEN.add(key)
    d = os.environ.get("PTXLAB_ISA_EVIDENCE")
    if not d:
        return
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"ev.{os.getpid()}.tsv"), "a") as f:
        f.write(f"{ins.name}\t{regs}\t{test}\n")


def wrap(fn: Callable, ins: ir.Instr) -> Callable:
    """``fn`` itself, or (evidence collection on) a wrapper that records ``ins`` when it executes."""
    if not enabled() or fn is None or getattr(fn, "refuses", None) is not None:
        return fn                 # a refused instruction stays recognisable as refused (the native engine runs it
                                  # otherwise: a wrapped refusal once ran a three-input min as a two-input one)

    def run(st, m):
        r = fn(st, m)             # recorded once it has run: an instruction refused when it executes is not
        _record(ins)
        return r
    run.records_evidence = True   # the native engine leaves it to the interpreter (it would not call it)
    return run
