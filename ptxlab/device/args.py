"""Kernel parameters: parse an entry's .param list from PTX and pack Python arguments into a param buffer."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ptxlab.device.buffer import DeviceBuffer
from ptxlab.errors import LaunchError

__all__ = ["Param", "parse_entry_params", "pack_params", "arg_bytes"]


@dataclass(frozen=True)
class Param:
    """One kernel parameter: PTX name, size in bytes, alignment in bytes."""

    name: str
    size: int
    align: int


_TYPE_BITS = {
    "b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16,
    "b32": 32, "u32": 32, "s32": 32, "f32": 32, "b64": 64, "u64": 64, "s64": 64, "f64": 64,
    "b128": 128, "f16x2": 32, "bf16x2": 32,
}
_ENTRY_RE = re.compile(r"\.entry\s+([A-Za-z_$%][\w$%.]*)\s*\(", re.S)
_PARAM_RE = re.compile(
    r"^\.param((?:\s+\.[\w:]+(?:\s+\d+)?)*)\s+([A-Za-z_$%][\w$%.]*)\s*(?:\[\s*(\d*)\s*\])?$"
)


def _strip_comments(ptx: str) -> str:
    ptx = re.sub(r"/\*.*?\*/", " ", ptx, flags=re.S)
    return re.sub(r"//[^\n]*", "", ptx)


def _entry_param_text(ptx: str, kernel: str) -> str:
    text = _strip_comments(ptx)
    names = []
    for m in _ENTRY_RE.finditer(text):
        names.append(m.group(1))
        if m.group(1) == kernel:
            end = text.find(")", m.end())
            if end < 0:
                raise LaunchError(f"kernel {kernel!r}: unterminated .param list in PTX")
            return text[m.end():end]
    # kernels without parameters may be written ".entry k" with no parentheses
    for m in re.finditer(r"\.entry\s+([A-Za-z_$%][\w$%.]*)", text):
        if m.group(1) == kernel:
            return ""
        names.append(m.group(1))
    raise LaunchError(
        f"kernel {kernel!r} is not an .entry of this PTX (entries: {sorted(set(names))}); "
        "declare it extern \"C\" __global__ or pass the mangled name"
    )


def _parse_one(decl: str, kernel: str, index: int) -> Param:
    decl = " ".join(re.sub(r"(?<=[\w\d])\.(?=[A-Za-z])", " .", decl).split())  # ".ptr.global.align" -> ".ptr .global .align"
    m = _PARAM_RE.match(decl)
    if not m:
        raise LaunchError(f"kernel {kernel!r} parameter {index}: cannot parse PTX declaration {decl!r}")
    qualifiers, name, count = m.group(1), m.group(2), m.group(3)
    toks = qualifiers.split()
    bits = None
    align = None
    i = 0
    while i < len(toks):
        t = toks[i].lstrip(".")
        if t == "align":
            align = int(toks[i + 1])
            i += 2
            continue
        if t in _TYPE_BITS:
            bits = _TYPE_BITS[t]
        elif t in ("ptr", "global", "const", "shared", "local", "param") or t.startswith("shared::"):
            pass  # .ptr and its state space only annotate a pointer's target
        else:
            raise LaunchError(f"kernel {kernel!r} parameter {index} ({name}): unknown PTX qualifier .{t} in {decl!r}")
        i += 1
    if bits is None:
        raise LaunchError(f"kernel {kernel!r} parameter {index} ({name}): no type in PTX declaration {decl!r}")
    elem = bits // 8
    if count is not None:
        if count == "":
            raise LaunchError(f"kernel {kernel!r} parameter {index} ({name}): unsized array {decl!r} is not supported")
        size = elem * int(count)
        # .ptr .align N describes the pointee; for arrays/.b8 structs the .align is the parameter's own alignment
        return Param(name, size, align if align is not None else elem)
    is_ptr = any(t.lstrip(".") == "ptr" for t in toks)
    return Param(name, elem, elem if (is_ptr or align is None) else max(align, elem))


def parse_entry_params(ptx: str, kernel: str) -> list[Param]:
    """Return the parameter layout of `.entry kernel(...)` in PTX text, in declaration order."""
    body = _entry_param_text(ptx, kernel).strip()
    if not body:
        return []
    return [_parse_one(d, kernel, i) for i, d in enumerate(body.split(","))]


def arg_bytes(arg: Any, kernel: str, index: int) -> bytes:
    """Bytes of one launch argument: DeviceBuffer -> u64 pointer, TensorMap -> 128 raw bytes, numpy scalar, bytes."""
    from ptxlab.tensormap import TensorMap

    if isinstance(arg, DeviceBuffer):
        if arg.freed:
            raise LaunchError(f"kernel {kernel!r} argument {index}: buffer 0x{arg.ptr:x} was freed")
        return int(arg.ptr).to_bytes(8, "little")
    if isinstance(arg, TensorMap):
        return bytes(arg.raw)
    if isinstance(arg, np.generic):
        return arg.tobytes()
    if isinstance(arg, np.ndarray) and arg.ndim == 0:
        return arg.tobytes()
    if isinstance(arg, (bytes, bytearray, memoryview)):
        return bytes(arg)
    if isinstance(arg, (bool, int, float)):
        raise LaunchError(
            f"kernel {kernel!r} argument {index}: plain Python {type(arg).__name__} {arg!r} has no fixed width; "
            "wrap it as a numpy scalar of the parameter's type, e.g. np.uint32(n) or np.float32(x)"
        )
    raise LaunchError(
        f"kernel {kernel!r} argument {index}: unsupported type {type(arg).__name__}; pass a DeviceBuffer, a TensorMap, "
        "a numpy scalar or a bytes object (host arrays must be copied with dev.to_device first)"
    )


def pack_params(layout: Sequence[Param], args: Sequence[Any], kernel: str) -> tuple[bytes, list[int]]:
    """Pack args per layout (each at its alignment); return (buffer, offsets). Count/size mismatches raise LaunchError."""
    if len(args) != len(layout):
        raise LaunchError(
            f"kernel {kernel!r} takes {len(layout)} parameters ({', '.join(p.name for p in layout) or 'none'}) "
            f"but {len(args)} arguments were given"
        )
    buf = bytearray()
    offsets: list[int] = []
    for i, (p, a) in enumerate(zip(layout, args)):
        data = arg_bytes(a, kernel, i)
        if len(data) != p.size:
            raise LaunchError(
                f"kernel {kernel!r} parameter {i} ({p.name}) is {p.size} bytes but the argument "
                f"{type(a).__name__} gives {len(data)} bytes; pass a value of the parameter's exact type"
            )
        off = -(-len(buf) // p.align) * p.align
        buf.extend(b"\0" * (off - len(buf)))
        offsets.append(off)
        buf.extend(data)
    return bytes(buf), offsets
