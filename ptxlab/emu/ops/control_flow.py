"""Control flow (PTX ISA 9.7.12): bra, call, ret, exit, and trap (9.7.19.4).

The program decoder (``core/program.py``) executes these itself (branch targets, call inlining or the real call
stack of ``core/callstack.py``, thread exit, device abort); this table declares the forms it implements, so that the
coverage table (ptx_docs/isa_coverage.md) lists them and any other form is refused like every other instruction.
``brx.idx`` (indirect branch) and indirect calls are refused when executed.
"""
from __future__ import annotations

from ..core.isa import CORE, register

FORMS = register({}, [
    # form             PTX ISA     builder
    ("bra{.uni}",     "9.7.12.3", CORE),
    ("call{.uni}",    "9.7.12.5", CORE),
    ("ret{.uni}",     "9.7.12.6", CORE),
    ("exit",          "9.7.12.7", CORE),
    ("trap",          "9.7.19.4", CORE),
])
