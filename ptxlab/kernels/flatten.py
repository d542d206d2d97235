"""Flatten a kernel's local ``#include "..."`` files into one self-contained source text.

The production kernels are built from ``blocks/*.cuh`` through ``#include`` and ``include_dirs=[KERNELS_DIR]``. A
single-file gpu-mode submission cannot ship a directory of headers, so the exporter embeds the output of
:func:`flatten`: every quoted include that resolves to a local file is replaced by that file's text, recursively.

Resolution follows the compilers' rule for quoted includes: the directory of the including file first, then each of
``include_dirs`` in order (default: ``[KERNELS_DIR]``, what the wrappers pass). Each file is identified by its
resolved path. A file containing ``#pragma once`` is inlined at most once (the pragma line itself is dropped: it
would warn in a main file); any other file is inlined at every include and keeps its text as written, so classic
``#ifndef``/``#define`` guards do what the preprocessor would do with them. Angle-bracket includes and quoted
includes that do not resolve to a local file are left as written (:func:`remaining_includes` lists them).

A local include nested inside a preprocessor conditional of the including file is refused (``FlattenError``): the
flattener does not evaluate conditions, so it could not know whether a ``#pragma once`` file counts as included.

The inlined text is wrapped in ``// ---- begin <path> ----`` / ``// ---- end <path> ----`` comments (paths relative to
the kernels directory); no ``#line`` directives are emitted, so the PTX equals the include-based build's
(``tests/production/test_export.py`` checks that for the GEMM).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Set, Union

from ptxlab.kernels import KERNELS_DIR

__all__ = ["flatten", "flatten_text", "remaining_includes", "FlattenError"]

PathLike = Union[str, Path]

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)')
_PRAGMA_ONCE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once\b")
_IF_OPEN = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef)\b")
_IF_CLOSE = re.compile(r"^[ \t]*#[ \t]*endif\b")


class FlattenError(ValueError):
    """An include the flattener cannot inline faithfully (cycle, conditional include, unreadable file)."""


def _rel(p: Path) -> str:
    try:
        return p.relative_to(KERNELS_DIR).as_posix()
    except ValueError:
        return p.as_posix()


def _resolve(name: str, here: Path, dirs: Sequence[Path]) -> Optional[Path]:
    for d in (here, *dirs):
        cand = (d / name).resolve()
        if cand.is_file():
            return cand
    return None


def _logical_lines(text: str) -> List[str]:
    """Lines with backslash-continued directive lines kept together (so a continued directive stays one unit)."""
    out: List[str] = []
    buf = ""
    for line in text.splitlines(keepends=True):
        buf += line
        if not buf.rstrip("\r\n").endswith("\\"):
            out.append(buf)
            buf = ""
    if buf:
        out.append(buf)
    return out


def _strip_block_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """line with /* ... */ comments blanked (string literals ignored: directives never hold comment markers in
    strings that matter here); returns (code, still_in_comment)."""
    out = []
    i = 0
    while i < len(line):
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out), True
            i, in_comment = j + 2, False
            out.append(" ")
        else:
            j = line.find("/*", i)
            k = line.find("//", i)
            if j < 0 or (0 <= k < j):
                out.append(line[i:] if k < 0 else line[i:k])
                return "".join(out), False
            out.append(line[i:j])
            i, in_comment = j + 2, True
    return "".join(out), in_comment


def _flatten(text: str, here: Path, dirs: Sequence[Path], once: Set[Path], stack: List[Path], out: List[str]) -> None:
    depth = 0
    in_comment = False
    for line in _logical_lines(text):
        code, in_comment_next = _strip_block_comments(line, in_comment)
        was_in_comment, in_comment = in_comment, in_comment_next
        if was_in_comment and not code.strip():
            out.append(line)
            continue
        if _PRAGMA_ONCE.match(code):
            continue  # handled by the caller (file inlined at most once)
        if _IF_OPEN.match(code):
            depth += 1
        elif _IF_CLOSE.match(code):
            depth = max(depth - 1, 0)
        m = _INCLUDE.match(code)
        if not m or m.group(1) is None:
            out.append(line)
            continue
        target = _resolve(m.group(1), here, dirs)
        if target is None:
            out.append(line)  # not a local file (e.g. a CUDA header on an -I path): left for the compiler
            continue
        if depth:
            raise FlattenError(f'{_rel(stack[-1]) if stack else "<source>"}: #include "{m.group(1)}" inside a '
                               "preprocessor conditional; the flattener does not evaluate conditions, move the "
                               "include out of the #if")
        if target in stack:
            chain = " -> ".join(_rel(p) for p in [*stack, target])
            raise FlattenError(f"include cycle: {chain}")
        if target in once:
            out.append(f"// ---- {_rel(target)}: already inlined above (pragma once) ----\n")
            continue
        try:
            body = target.read_text()
        except OSError as exc:
            raise FlattenError(f"cannot read {target}: {exc}") from exc
        if any(_PRAGMA_ONCE.match(_strip_block_comments(x, False)[0]) for x in body.splitlines()):
            once.add(target)
        out.append(f"// ---- begin {_rel(target)} (inlined by ptxlab.kernels.flatten) ----\n")
        _flatten(body, target.parent, dirs, once, [*stack, target], out)
        if out and not out[-1].endswith("\n"):
            out.append("\n")
        out.append(f"// ---- end {_rel(target)} ----\n")


def flatten_text(text: str, base_dir: PathLike = KERNELS_DIR,
                 include_dirs: Optional[Iterable[PathLike]] = None) -> str:
    """text (a source whose own directory is base_dir) with its local quoted includes inlined recursively."""
    dirs = [Path(d).resolve() for d in (include_dirs if include_dirs is not None else [KERNELS_DIR])]
    out: List[str] = []
    _flatten(text, Path(base_dir).resolve(), dirs, set(), [], out)
    return "".join(out)


def flatten(name: PathLike, include_dirs: Optional[Iterable[PathLike]] = None) -> str:
    """The self-contained text of a kernel file (a name relative to KERNELS_DIR, or a path), e.g.
    ``flatten("nvfp4_gemm_tcgen05.cu")``."""
    path = Path(name)
    if not path.is_absolute():
        path = KERNELS_DIR / path
    path = path.resolve()
    dirs = [Path(d).resolve() for d in (include_dirs if include_dirs is not None else [KERNELS_DIR])]
    out: List[str] = []
    _flatten(path.read_text(), path.parent, dirs, set(), [path], out)
    return "".join(out)


def remaining_includes(text: str) -> List[str]:
    """The ``#include`` targets still in text (angle-bracket ones as ``<name>``), outside comments."""
    found: List[str] = []
    in_comment = False
    for line in _logical_lines(text):
        code, in_comment = _strip_block_comments(line, in_comment)
        m = _INCLUDE.match(code)
        if m:
            found.append(m.group(1) if m.group(1) is not None else f"<{m.group(2)}>")
    return found
