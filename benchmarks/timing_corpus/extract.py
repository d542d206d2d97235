"""Keep the device code of a public CUDA file (at run time; nothing of it is committed).

The corpus's files are whole programs (``main``, host launchers, PyTorch bindings, ``#include`` of host headers).
``device_code`` splits a file into its top-level items (preprocessor lines, declarations, definitions: comments,
strings, parentheses and braces are tracked) and keeps what NVRTC compiles for the device: preprocessor lines except
``#include`` / ``#pragma once``, and every item whose declaration names ``__global__``, ``__device__``,
``__constant__`` or ``__shared__`` (templates included), namespace aliases, ``using`` / ``typedef``, and constant
scalars.  Host functions, host globals, ``extern "C"`` launchers and explicit instantiations of host templates are
dropped.  The kernel's own text is never changed; the corpus adds a prelude (headers NVRTC provides) and, for
templates, an explicit instantiation (manifest.py).
"""
from __future__ import annotations

import re

DEVICE_WORDS = ("__global__", "__device__", "__constant__", "__shared__")
_KEEP_DECL = re.compile(r"^\s*(namespace\s+\w+\s*=|using\s|typedef\s)")
_CONST_DECL = re.compile(r"^\s*(static\s+)?(constexpr|const)\s+[\w\s]*\w\s*=[^;\"*(]*;\s*$")   # scalar constants


def split_top_level(text: str) -> list[str]:
    """Top-level items of C++ text, in order, each with its leading comments/whitespace; joined they give ``text``."""
    items, start, i, n = [], 0, 0, len(text)
    depth = 0
    bol = True                                     # at the beginning of a line (only whitespace so far)
    while i < n:
        c = text[i]
        if c == "\n":
            bol = True
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if text.startswith("//", i):
            i = _line_end(text, i)
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == "#" and bol and depth == 0:
            j = i
            while True:                            # a preprocessor line with its continuations
                j = _line_end(text, j)
                if j >= n or text[j - 1] != "\\":
                    break
                j += 1
            if not _strip_comments(text[start:i]).strip():   # else: inside an unfinished item, part of it
                items.append(text[start:j])
                start = j
            i = j
            continue
        bol = False
        if c in "\"'":
            i = _string_end(text, i)
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
            if depth == 0 and c == "}":
                j = i + 1
                while j < n and text[j] in " \t":
                    j += 1
                if j < n and text[j] == ";":       # struct S { ... };
                    i = j
                elif _head(text[start:i]).lstrip().startswith(("struct", "class", "union", "enum")) \
                        and not _has_params(_head(text[start:i])):
                    i += 1                         # struct S { ... } var; : keep going to the ';'
                    continue
                items.append(text[start:i + 1])
                start = i + 1
        elif c == ";" and depth == 0:
            items.append(text[start:i + 1])
            start = i + 1
        i += 1
    if text[start:]:
        items.append(text[start:])
    return items


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j < 0 else j


def _string_end(text: str, i: int) -> int:
    q, j = text[i], i + 1
    while j < len(text) and text[j] != q:
        j += 2 if text[j] == "\\" else 1
    return j + 1


def _strip_comments(s: str) -> str:
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    return re.sub(r"//[^\n]*", " ", s)


def _head(item: str) -> str:
    """The declaration part of an item: up to its body's '{' (comments removed)."""
    s = _strip_comments(item)
    k = s.find("{")
    return s if k < 0 else s[:k]


def _has_params(head: str) -> bool:
    return "(" in head


def keep_item(item: str) -> bool:
    """Does NVRTC need this top-level item for the device?"""
    s = _strip_comments(item).strip()
    if not s:
        return True                                # whitespace / comments only
    if s.startswith("#"):
        return not re.match(r"#\s*(include|pragma\s+once)\b", s)
    head = _head(item)
    if any(w in head for w in DEVICE_WORDS):
        return True
    if s.startswith(("struct", "class", "template")) and any(w in s for w in DEVICE_WORDS) \
            and not s.startswith("template void") and "<<<" not in s:
        return True
    return bool(_KEEP_DECL.match(s) or _CONST_DECL.match(s))


def device_code(text: str, types: tuple = ()) -> str:
    """The device part of a CUDA source file (module docstring); ``types``: names of plain (host-and-device)
    structs the device code uses, kept too (e.g. LeetCUDA softmax's ``struct __align__(8) MD``)."""
    return "".join(it for it in split_top_level(text) if keep_item(it) or _defines_type(it, types))


def _defines_type(item: str, types: tuple) -> bool:
    m = re.match(r"\s*(struct|class)\s+(__align__\(\d+\)\s+)?(\w+)", _strip_comments(item))
    return bool(types) and m is not None and m.group(3) in types


def kernel_names(text: str) -> list[str]:
    """Names of the ``__global__`` functions defined in ``text`` (in order)."""
    names = []
    for it in split_top_level(text):
        head = _head(it).rstrip()
        if "__global__" in head and "{" in _strip_comments(it) and head.endswith(")"):
            depth, j = 0, len(head) - 1          # back to the '(' of the parameter list
            while j >= 0:
                depth += {")": 1, "(": -1}.get(head[j], 0)
                if depth == 0:
                    break
                j -= 1
            m = re.search(r"(\w+)\s*$", head[:j])
            if m:
                names.append(m.group(1))
    return names


def instantiation(text: str, entry: str, targs: str, subst: dict) -> str:
    """``template __global__ void entry<targs>(params);`` for the template kernel ``entry`` defined in ``text``: its
    own parameter list, with the template's type parameters renamed per ``subst`` (e.g. T -> float)."""
    for it in split_top_level(text):
        head = _head(it).rstrip()
        if "__global__" in head and entry in kernel_names(it):
            params = head[head.rindex(entry) + len(entry):].strip()
            for name, typ in subst.items():
                params = re.sub(rf"\b{re.escape(name)}\b", typ, params)
            return f"template __global__ void {entry}<{targs}>{' '.join(params.split())};"
    raise LookupError(f"no __global__ template {entry!r} in the source")
