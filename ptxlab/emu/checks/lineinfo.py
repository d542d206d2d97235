"""CUDA source lines for emulator reports of modules compiled without ``-lineinfo`` (ptx_docs/emulator_checks.md
"Source lines in reports").

``ptxlab.compile`` does not add ``-lineinfo`` by default, so its PTX (and the compile cache, and the PTX the gpu-mode
submissions reproduce with bare NVRTC) stays exactly what NVRTC emits for the caller's options.  When the emulator
reports a fault, deadlock, watchdog stop or warning in such a module, this module recompiles the same source with
the same final options plus ``-lineinfo`` (once per module; cached on disk like every compile, keyed also by the
original PTX), aligns the two PTX texts instruction by instruction (``-lineinfo`` only adds ``.loc``/``.file``
directives; the alignment tolerates any other difference) and maps each PTX line of the original to the CUDA
``file:line`` of the ``.loc`` in effect.  The report then names ``file.cu:LINE`` as if the module had been compiled
with ``-lineinfo``.  ``PTXLAB_EMU_LINEINFO=0`` switches the recompile off.
"""
from __future__ import annotations

import difflib
import hashlib
import re
from pathlib import Path
from typing import Optional

_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_PTX_LINE = re.compile(r"PTX line (\d+)\b")
_HAS_SRC = re.compile(r"\[[^\]\n]+:\d+\]")


def _norm(line: str) -> Optional[str]:
    s = line.strip()
    if not s or s.startswith("//") or s.startswith(".loc") or s.startswith(".file"):
        return None
    return re.sub(r"\s+", " ", s)


def build_map(ptx: str, ptx_li: str) -> dict:
    """{PTX line of ``ptx`` (1-based): (file, line)} from the .loc directives of ``ptx_li`` (the -lineinfo build)."""
    files = {}
    for ln in ptx_li.splitlines():
        m = _FILE.match(ln)
        if m:
            files[int(m.group(1))] = m.group(2)
    b_text, b_loc = [], []
    loc = None
    for ln in ptx_li.splitlines():
        m = _LOC.match(ln)
        if m:
            fi, li = int(m.group(1)), int(m.group(2))
            loc = (files.get(fi, f"file{fi}"), li) if li > 0 else None
            continue
        n = _norm(ln)
        if n is None:
            continue
        if n.startswith("}") or n.startswith(".entry") or n.startswith(".visible") or n.startswith(".func"):
            loc = None
        b_text.append(n)
        b_loc.append(loc)
    a_text, a_line = [], []
    for i, ln in enumerate(ptx.splitlines(), 1):
        n = _norm(ln)
        if n is not None:
            a_text.append(n)
            a_line.append(i)
    out = {}
    if a_text == b_text:
        pairs = zip(range(len(a_text)), range(len(b_text)))
    else:
        sm = difflib.SequenceMatcher(None, a_text, b_text, autojunk=False)
        pairs = ((blk.a + k, blk.b + k) for blk in sm.get_matching_blocks() for k in range(blk.size))
    for ia, ib in pairs:
        if b_loc[ib] is not None:
            out[a_line[ia]] = b_loc[ib]
    return out


def _compile_lineinfo(module) -> Optional[str]:
    from ptxlab.toolchain import backends, cache
    opts = list(module.options)
    if "-lineinfo" not in opts:
        opts.append("-lineinfo")
    nv, jl = backends.compiler_versions()
    key = cache.cache_key(source=module.source, name=module.name, arch=module.arch, options=opts, ptx=False,
                          nvrtc=nv, nvjitlink=jl, headers="emu-lineinfo:" + hashlib.sha256(module.ptx.encode())
                          .hexdigest())
    hit = cache.load(key)
    if hit is not None:
        return hit[0]
    raw = backends.nvrtc_compile(module.source, module.name, opts)
    if not raw.ok or not raw.ptx:
        return None
    cache.store(key, raw.ptx, raw.cubin or b"", raw.log)
    return raw.ptx


def line_map(module) -> dict:
    """The PTX-line -> (file, line) map of a ptxlab Module ({} when unknown or not needed)."""
    m = getattr(module, "_emu_line_map", None)
    if m is not None:
        return m
    m = {}
    ptx = getattr(module, "ptx", None)
    src = getattr(module, "source", None)
    from ... import settings
    enabled = settings.get("PTXLAB_EMU_LINEINFO", fallback=True)
    if enabled and ptx and src and not re.search(r"^\s*\.loc\s", ptx, re.M) and src != ptx and not str(module.name).endswith(".ptx"):
        try:
            li = _compile_lineinfo(module)
            if li:
                m = build_map(ptx, li)
        except Exception:       # noqa: BLE001 - line info is a convenience; the report stands without it
            m = {}
    try:
        module._emu_line_map = m
    except AttributeError:
        pass
    return m


def annotate_text(text: str, lmap: dict) -> str:
    """Append ' [file:line]' to every line of ``text`` that names a 'PTX line N' but no source location."""
    if not lmap:
        return text
    out = []
    for ln in text.split("\n"):
        m = _PTX_LINE.search(ln)
        if m and not _HAS_SRC.search(ln):
            loc = lmap.get(int(m.group(1)))
            if loc:
                ln = f"{ln} [{loc[0]}:{loc[1]}]"
        out.append(ln)
    return "\n".join(out)


def _source_lines(module, file: str) -> Optional[list]:
    """The lines of CUDA file ``file`` as compiled into ``module`` (its own source, or a header read from disk)."""
    src, name = getattr(module, "source", None), str(getattr(module, "name", ""))
    if src and (file == name or Path(file).name == Path(name).name):
        return src.splitlines()
    try:
        return Path(file).read_text(errors="replace").splitlines()
    except OSError:
        return None


def asm_line(module, file: str, line: int, ptx_text: Optional[str]) -> int:
    """The CUDA line of a PTX instruction that comes from an inline-``asm`` statement spanning several lines: NVRTC's
    ``.loc`` names the line where the statement starts; this returns the line of the statement whose string holds the
    instruction's mnemonic (when exactly one does), else ``line``."""
    if not ptx_text or not line:
        return line
    lines = _source_lines(module, file)
    if not lines or not 1 <= line <= len(lines) or "asm" not in lines[line - 1]:
        return line
    words = ptx_text.strip().split()
    if not words:
        return line
    mnemonic = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    hits = []
    for i in range(line - 1, min(len(lines), line + 40)):
        text = lines[i]
        if re.search(r'"[^"]*' + re.escape(mnemonic) + r'(?![\w.])', text):
            hits.append(i + 1)
        if i > line - 1 and re.search(r"\)\s*;", text):
            break
    return hits[0] if len(hits) == 1 else line


def annotate_error(err, module) -> None:
    """Fill in the CUDA source line of an EmuError (and of the PTX lines its message names), in place; a fault inside
    a multi-line inline-asm statement names the statement line holding the instruction (asm_line)."""
    if getattr(err, "src_loc", None) is None or _PTX_LINE.search(getattr(err, "message", "")):
        lmap = line_map(module)
        if lmap:
            if err.src_loc is None and err.ptx_line is not None and err.ptx_line in lmap:
                f, li = lmap[err.ptx_line]
                err.src_loc = f"{f}:{li}"
            err.message = annotate_text(err.message, lmap)
            err.args = (err.message,)
    m = re.match(r"^(.*):(\d+)$", err.src_loc or "")
    if m:
        li = asm_line(module, m.group(1), int(m.group(2)), getattr(err, "ptx_text", None))
        err.src_loc = f"{m.group(1)}:{li}"
