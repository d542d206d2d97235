"""SASS disassembly (pip nvdisasm) and ``require``: assert that a module's SASS contains given instructions."""
from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from ptxlab.errors import PtxlabError
from ptxlab.toolchain.paths import nvdisasm_path

__all__ = ["SassCheckError", "disassemble", "split_kernels", "opcodes", "require"]


class SassCheckError(PtxlabError):
    """Expected SASS instructions are missing from a compiled module."""


def disassemble(cubin: bytes, where: str = "cubin", extra_args: Iterable[str] = ()) -> str:
    """Run ``nvdisasm -c`` on cubin bytes and return the SASS text."""
    exe = nvdisasm_path()
    with tempfile.TemporaryDirectory(prefix="ptxlab-sass-") as td:
        path = Path(td) / "k.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run([str(exe), "-c", *extra_args, str(path)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise PtxlabError(
            f"nvdisasm failed on {where} (exit {proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}; "
            "check that the cubin is valid and nvdisasm supports its arch (pip install -U nvidia-cuda-nvdisasm)"
        )
    return proc.stdout


_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)", re.M)


def split_kernels(sass: str) -> Dict[str, str]:
    """Split nvdisasm output into {function name: its SASS} using the ``.text.<name>`` sections."""
    marks = [(m.start(), m.group(1).strip('"')) for m in _SECTION.finditer(sass)]
    out: Dict[str, str] = {}
    for i, (start, name) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(sass)
        out[name] = sass[start:end]
    return out


_INSTR = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)")


def opcodes(sass: str) -> List[str]:
    """Full opcodes (with modifiers, e.g. ``UTCCP.T.S.4x32dp128bit``) in order of appearance."""
    return _INSTR.findall(sass)


def require(module: object, wanted: Iterable[str], kernel: Optional[str] = None) -> Dict[str, int]:
    """Check that the module's SASS contains every wanted opcode; return {opcode: count}.

    A wanted name matches an instruction whose opcode equals it or starts with it followed by ``.``
    (``"UTCOMMA"`` matches ``UTCOMMA.4X``; ``"UTCOMMA.4X"`` only that form). ``kernel`` limits the
    search to one entry's ``.text`` section. Raises SassCheckError listing what is missing.
    """
    sass = module.sass()  # type: ignore[attr-defined]
    where = f"{getattr(module, 'name', 'module')} ({getattr(module, 'arch', '?')})"
    if kernel is not None:
        parts = split_kernels(sass)
        if kernel not in parts:
            raise SassCheckError(
                f"kernel {kernel!r} not found in the SASS of {where}; kernels present: {sorted(parts)}; "
                "pass the (possibly mangled) entry name from module.kernels"
            )
        sass, where = parts[kernel], f"{where} kernel {kernel}"
    ops = opcodes(sass)
    counts: Dict[str, int] = {}
    missing: List[str] = []
    for w in wanted:
        n = sum(1 for op in ops if op == w or op.startswith(w + "."))
        counts[w] = n
        if n == 0:
            missing.append(w)
    if missing:
        present = sorted({op.split(".")[0] for op in ops})
        raise SassCheckError(
            f"SASS of {where} lacks {missing}; opcodes present: {' '.join(present)}; "
            "check that the PTX instructions were emitted (not optimized away) and the arch is right "
            "(set PTXLAB_DEBUG=dump_ptx,dump_sass to inspect)"
        )
    return counts
