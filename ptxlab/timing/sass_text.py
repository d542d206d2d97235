"""SASS text of one kernel as the timing model reads it: instructions, their control codes, PTX lines and blocks.

Input: ``nvdisasm -c -hex -gp`` output (``ptxlab.timing.sass_build`` makes it).  Per instruction:

* the opcode with its modifiers (``LDS.128``), the guard predicate (``@!P0``), the operand text, a branch target;
* the **control code** ptxas writes into bits 105..125 of every 128-bit Volta-and-later instruction (the second
  64-bit word's bits 41..61): stall cycles before the warp's next instruction (4 bits), yield (1), the scoreboard
  this instruction sets when its result is written (write barrier, 3 bits, 7 = none), the scoreboard released when
  its source registers have been read (read barrier, 3 bits), the scoreboards it waits for (6-bit mask) and the
  operand-reuse flags (4 bits).  Layout as documented by the open Volta/Turing/Ampere assemblers (CuAssembler,
  turingas) and checked here on sm_90a / sm_100a builds: a consumer of an ``LDG``'s register waits on exactly the
  scoreboard the ``LDG`` sets (tests/timing/test_timing_sass.py);
* the PTX line it was generated from: nvdisasm ``-gp`` prints the ``.nv_debug_line_sass`` table that ptxas writes
  with ``-lineinfo`` (``//## File ".nv_debug_ptx_txt", line N``: line N of the PTX text ptxas was given).

Blocks: a block starts at a label or after a branch / exit / return and ends at the next.  ``blocks()`` gives them
with their successors (fall-through and branch target).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
_LABEL = re.compile(r"^(\.L_x_\d+|[A-Za-z_$][\w$.]*):\s*$")
_PTXLINE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
_INS = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:(@!?U?P(?:\d|T))\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*(.*?)\s*;"
                  r"\s*(?:/\*\s*0x([0-9a-f]{16})\s*\*/)?\s*$")
_HEX = re.compile(r"^\s*/\*\s*0x([0-9a-f]{16})\s*\*/\s*$")
_TARGET = re.compile(r"`\(([^)]+)\)")

# opcodes that end a block (control transfer); BSSY / BSYNC / WARPSYNC do not
BRANCHES = ("BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "KILL", "BPT")


@dataclass
class Ctrl:
    """The control code of one instruction (module docstring)."""
    stall: int = 1
    yield_: int = 0
    wbar: int = 7          # scoreboard set when the result is written (7 = none)
    rbar: int = 7          # scoreboard set until the sources are read (7 = none)
    wait: int = 0          # 6-bit mask of scoreboards waited for before issue
    reuse: int = 0

    @classmethod
    def decode(cls, hi: int) -> "Ctrl":
        c = hi >> 41
        return cls(stall=c & 0xF, yield_=(c >> 4) & 1, wbar=(c >> 5) & 7, rbar=(c >> 8) & 7, wait=(c >> 11) & 0x3F,
                   reuse=(c >> 17) & 0xF)


@dataclass
class SassInstr:
    idx: int                        # index in the kernel's instruction list
    addr: int                       # byte offset in the section
    op: str                         # opcode with modifiers, e.g. "LDS.128"
    guard: str                      # "" or "@P0" / "@!P0" / "@UP0"
    args: str                       # operand text
    ptx_line: int = 0               # PTX line (0: none)
    ctrl: Ctrl = field(default_factory=Ctrl)
    target: Optional[str] = None    # branch target label

    @property
    def base(self) -> str:
        return self.op.split(".", 1)[0]

    @property
    def text(self) -> str:
        return f"{self.guard + ' ' if self.guard else ''}{self.op} {self.args}".strip()

    @property
    def ends_block(self) -> bool:
        return self.base in BRANCHES

    @property
    def unconditional(self) -> bool:
        """No guard predicate, and (sm_100 ``BRA.U UP0, target``) no predicate operand other than PT."""
        if self.guard and self.guard != "@PT":
            return False
        m = _PRED_OPERAND.match(self.args) if self.base == "BRA" else None
        return not m or m.group(1) == "PT"


_PRED_OPERAND = re.compile(r"\s*!?(U?P[0-9T])\s*,")     # BRA.U UP0, `(.L_x_1) / BRA.U !UP0, ...


@dataclass
class SassBlock:
    idx: int
    start: int                      # first instruction index
    end: int                        # one past the last
    succ: List[int] = field(default_factory=list)
    label: str = ""


@dataclass
class SassKernel:
    name: str
    instrs: List[SassInstr]
    labels: Dict[str, int]          # label -> instruction index
    ptx_file: str = ""              # the line table's file name (".nv_debug_ptx_txt...")
    _blocks: Optional[List[SassBlock]] = field(default=None, repr=False)

    def blocks(self) -> List[SassBlock]:
        if self._blocks is None:
            self._blocks = _split_blocks(self)
        return self._blocks


def parse(text: str) -> Dict[str, SassKernel]:
    """{function name: SassKernel} of an ``nvdisasm -c -hex -gp`` listing (one entry per ``.text.<name>``)."""
    out: Dict[str, SassKernel] = {}
    cur: Optional[SassKernel] = None
    line = 0
    pfile = ""
    pending: Optional[SassInstr] = None
    for raw in text.splitlines():
        m = _SECTION.match(raw)
        if m:
            cur = SassKernel(m.group(1).strip('"'), [], {})
            out[cur.name] = cur
            line, pending = 0, None
            continue
        if cur is None:
            continue
        m = _PTXLINE.match(raw)
        if m:
            pfile, line = m.group(1), int(m.group(2))
            cur.ptx_file = cur.ptx_file or pfile
            continue
        m = _LABEL.match(raw.strip()) if raw[:1] not in (" ", "\t") or raw.strip().startswith(".L_x") else None
        if m and not raw.strip().startswith(".text"):
            cur.labels[m.group(1)] = len(cur.instrs)
            continue
        m = _INS.match(raw)
        if m:
            addr, guard, op, args, lo = m.groups()
            ins = SassInstr(len(cur.instrs), int(addr, 16), op, guard or "", args, line)
            t = _TARGET.search(args)
            if t and op.split(".")[0] in BRANCHES:
                ins.target = t.group(1)
            cur.instrs.append(ins)
            pending = ins if lo else None
            continue
        m = _HEX.match(raw)
        if m and pending is not None:
            pending.ctrl = Ctrl.decode(int(m.group(1), 16))
            pending = None
    return out


def _split_blocks(k: SassKernel) -> List[SassBlock]:
    n = len(k.instrs)
    leaders = {0} | {i for i in k.labels.values() if i < n}
    for i, ins in enumerate(k.instrs):
        if ins.ends_block and i + 1 < n:
            leaders.add(i + 1)
    starts = sorted(leaders)
    blocks = []
    at = {}
    for bi, s in enumerate(starts):
        e = starts[bi + 1] if bi + 1 < len(starts) else n
        blocks.append(SassBlock(bi, s, e))
        at[s] = bi
    names = {v: kk for kk, v in k.labels.items()}
    for b in blocks:
        b.label = names.get(b.start, "")
        last = k.instrs[b.end - 1]
        falls = not (last.ends_block and last.unconditional and last.base in ("BRA", "JMP", "EXIT", "RET", "KILL",
                                                                               "BRX", "JMX"))
        if last.base in ("BRA", "JMP") and last.target in k.labels and k.labels[last.target] in at:
            b.succ.append(at[k.labels[last.target]])
        if falls and b.end in at:
            b.succ.append(at[b.end])
    return blocks
