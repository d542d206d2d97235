"""Turn NVRTC / ptxas / nvJitLink logs into readable CompileError messages (file:line, source line, message)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

__all__ = ["Diagnostic", "parse_nvrtc_log", "parse_ptxas_errors", "ptx_line_to_source", "format_report"]

_NVRTC = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<sev>(?:catastrophic )?error|warning)[^:]*: (?P<msg>.*)$")
_PTXAS = re.compile(r"^ptxas .*?, line (?P<line>\d+); (?P<sev>error|warning)\s*: (?P<msg>.*)$")
_PTXAS_FATAL = re.compile(r"^ptxas fatal\s*: (?P<msg>.*)$")


@dataclass
class Diagnostic:
    """One compiler message located at file:line."""

    file: str
    line: int
    severity: str
    message: str
    source_line: Optional[str] = None


def _line_of(text: str, lineno: int) -> Optional[str]:
    lines = text.splitlines()
    return lines[lineno - 1] if 1 <= lineno <= len(lines) else None


def _read_line(path: str, lineno: int) -> Optional[str]:
    try:
        return _line_of(Path(path).read_text(errors="replace"), lineno)
    except OSError:
        return None


def parse_nvrtc_log(log: str, name: str, source: str) -> List[Diagnostic]:
    """Front-end (EDG) errors from an NVRTC log, each with its source line when it can be found."""
    out = []
    for raw in log.splitlines():
        m = _NVRTC.match(raw.strip())
        if not m or m.group("sev") == "warning":
            continue
        file, lineno = m.group("file"), int(m.group("line"))
        src = _line_of(source, lineno) if file == name else _read_line(file, lineno)
        out.append(Diagnostic(file, lineno, m.group("sev"), m.group("msg"), src))
    return out


def parse_ptxas_errors(log: str, ptx_name: str, ptx: Optional[str]) -> List[Diagnostic]:
    """ptxas errors (``ptxas ..., line N; error : msg``), located in the given PTX text."""
    out = []
    for raw in log.splitlines():
        m = _PTXAS.match(raw.strip())
        if m and m.group("sev") == "error":
            lineno = int(m.group("line"))
            src = _line_of(ptx, lineno) if ptx else None
            out.append(Diagnostic(ptx_name, lineno, "error", m.group("msg"), src))
    return out


def ptx_line_to_source(ptx: str, lineno: int) -> Optional[tuple]:
    """Map a PTX line to (file, line) using the nearest preceding ``.loc`` (needs -lineinfo); None if unknown."""
    files: Dict[int, str] = {int(n): f for n, f in re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', ptx, re.M)}
    loc = None
    for i, text in enumerate(ptx.splitlines()[:lineno], start=1):
        s = text.strip()
        if s.startswith(".loc"):
            m = re.match(r"\.loc\s+(\d+)\s+(\d+)", s)
            if m:
                loc = (int(m.group(1)), int(m.group(2)))
    if loc is None or loc[1] == 0:
        return None
    return files.get(loc[0], f"<file {loc[0]}>"), loc[1]


def format_report(title: str, diags: List[Diagnostic], log: str, hint: str, max_diags: int = 6) -> str:
    """Multi-line error report: title, each located diagnostic with its source line, the raw log, a hint."""
    parts = [title]
    for d in diags[:max_diags]:
        parts.append(f"  {d.file}:{d.line}: {d.severity}: {d.message}")
        if d.source_line is not None:
            parts.append(f"    {d.line:5d} | {d.source_line.rstrip()}")
    if len(diags) > max_diags:
        parts.append(f"  ... and {len(diags) - max_diags} more")
    log = log.strip()
    if log:
        parts.append("  --- compiler log ---")
        parts.extend("  " + ln for ln in log.splitlines())
    parts.append(f"  what to do: {hint}")
    return "\n".join(parts)
