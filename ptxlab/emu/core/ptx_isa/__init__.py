"""The legal instruction forms of the PTX ISA (chapter 9.7) and its special registers (chapter 10), as data.

The ``*.txt`` files beside this module transcribe the syntax blocks and Target ISA Notes of the PTX ISA 9.1 in its
own notation (format: README.md). ``legal_forms()`` parses them into :class:`LegalForm` rows; ``legal_on(row,
target)`` says whether a row is legal PTX for ``sm_90a`` or ``sm_100a``.  Used by the coverage table
(``tools/isa_coverage.py``) and the refusal test; the emulator itself does not need it to run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .. import forms as _forms

HERE = Path(__file__).resolve().parent
TARGETS = ("sm_90a", "sm_100a")


@dataclass(frozen=True)
class LegalForm:
    form: _forms.Form
    section: str            # "9.7.3.3"
    title: str              # "add"
    targets: tuple          # ("sm_20+",) / ("sm_90a", "sm_100f") ...
    operands: str = ""      # non-empty: a form told apart from another by its operands only (README.md)
    source: str = ""        # data file name

    @property
    def text(self) -> str:
        return self.form.text


def legal_on(row: LegalForm, target: str) -> bool:
    """Is ``row`` legal PTX for ``target`` ('sm_90a' or 'sm_100a')?"""
    base = int(target[3:-1])
    for t in row.targets:
        if t == "all":
            return True
        m = re.fullmatch(r"sm_(\d+)(\+|a|f)?", t)
        if m is None:
            raise ValueError(f"bad target {t!r} in {row.source} ({row.text})")
        n, kind = int(m.group(1)), m.group(2)
        if kind == "+" and n <= base:
            return True
        if kind == "a" and n == base:
            return True
        if kind == "f" and n == base:          # sm_100f: the sm_100 family, which sm_100a belongs to
            return True
    return False


_SECTION = re.compile(r"^§\s+(\S+)\s+(.*?)\s{2,}(\S+)\s*$")
_SET = re.compile(r"^\.(\S+)\s*=\s*\{(.*)\}\s*$")


def _parse_file(path: Path) -> list:
    rows = []
    section = title = None
    default = ()
    section_sets: dict = {}
    block: list = []

    def flush():
        if not block:
            return
        sets = dict(section_sets)
        pending = []
        for kind, a, b in block:
            if kind == "set":
                sets[a] = b
            else:
                pending.append((a, b))
        if not pending:                       # a block of sets only: section-wide
            section_sets.update({a: b for kind, a, b in block if kind == "set"})
        for text, (targets, operands) in pending:
            f = _forms.parse(text, sets, section)
            rows.append(LegalForm(f, section, title, targets or default, operands, path.name))
        block.clear()

    for raw in path.read_text().splitlines():
        line = raw.split("  #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            flush()
            continue
        if line.startswith("§"):
            flush()
            m = _SECTION.match(line)
            if m is None:
                raise ValueError(f"{path.name}: bad section line {raw!r}")
            section, title, default = m.group(1), m.group(2), tuple(m.group(3).split(","))
            section_sets = {}
            continue
        m = _SET.match(line.strip())
        if m is not None:
            vals = tuple(v.strip().lstrip(".") for v in m.group(2).split(",") if v.strip())
            block.append(("set", m.group(1), vals))
            continue
        text, _, rest = line.partition("@")
        operands = ""
        targets: tuple = ()
        if rest:
            tpart, _, operands = rest.partition("!operands")
            targets = tuple(t.strip() for t in tpart.split(",") if t.strip())
        block.append(("form", text.strip(), (targets, operands.strip())))
    flush()
    return rows


@lru_cache(maxsize=1)
def legal_forms() -> tuple:
    """Every legal form row of every data file, in file and line order."""
    rows = []
    for p in sorted(HERE.glob("*.txt")):
        rows.extend(_parse_file(p))
    return tuple(rows)


def special_registers() -> tuple:
    """The chapter-10 rows (special registers) and WARP_SZ."""
    return tuple(r for r in legal_forms() if r.source.startswith("10_"))


def instructions() -> tuple:
    return tuple(r for r in legal_forms() if not r.source.startswith("10_"))
