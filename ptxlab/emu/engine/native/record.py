"""One instruction record of the native engine (``Op`` in runtime.h) and the opcode numbers of engine.c."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

WORDS = 8 + 3 * (4 + 6)          # header + 4 destinations + 6 sources (runtime.h Op)


def _opcodes() -> dict:
    """{name: number} from engine.c's ``enum { OP_PY, ... OP_LAST }`` (the C file is the one definition)."""
    src = (Path(__file__).with_name("engine.c")).read_text()
    body = re.search(r"enum\s*\{\s*(OP_PY.*?OP_LAST)\s*\}", src, re.S).group(1)
    names = re.findall(r"OP_(\w+)", body)
    return {n: k for k, n in enumerate(names)}


OPCODES = _opcodes()
TILE = int(re.search(r"#define TILE (\d+)", (Path(__file__).with_name("runtime.h")).read_text()).group(1))


@dataclass
class Rec:
    op: str
    dsts: list = field(default_factory=list)     # operand triples (operands.py)
    srcs: list = field(default_factory=list)
    sub: int = 0
    x0: int = 0
    x1: int = 0

    def row(self, guard: int, gneg: bool) -> list:
        """This record as WORDS int64 values (one row of the kernel's table)."""
        if len(self.dsts) > 4 or len(self.srcs) > 6:
            raise ValueError("too many operands for an Op record")
        out = [OPCODES[self.op], self.sub, guard, int(gneg), len(self.dsts), len(self.srcs), self.x0, self.x1]
        for ops, n in ((self.dsts, 4), (self.srcs, 6)):
            for o in ops:
                out.extend(o)
            out.extend((0, 0, 0) * (n - len(ops)))
        return out
