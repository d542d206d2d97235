"""Module images handed to ``cuModuleLoadData`` / ``cuLibraryLoadData``: the emulator runs PTX, so each image is
turned into PTX text.

* PTX text (NUL-terminated, as the driver's JIT takes it) is used as is.
* A cubin (ELF) carries no PTX. Its PTX is looked up by the sha256 of the cubin among PTX/cubin pairs that were
  written side by side (``CUBIN_PTX_DIRS``: the CuTe DSL writes ``<name>.sm_100a.ptx`` and ``.cubin`` to its dump
  directory when ``CUTE_DSL_KEEP=ptx,cubin``, which ``lab.py exec`` sets) or registered with :func:`register_pair`.
  A cubin with no known PTX is refused with a line saying how to provide it.
* Fatbinaries are refused (name the call; build PTX or a cubin instead).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from ptxlab.driver.calls import CUresult, DriverError

__all__ = ["Image", "image_from_bytes", "read_image", "register_pair", "CUBIN_PTX_DIRS"]

CUBIN_PTX_DIRS: List[Path] = []
_PAIRS: Dict[str, str] = {}          # sha256(cubin) -> PTX text
_SEEN: Dict[Path, float] = {}        # cubin files already indexed (mtime)
_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$%][\w$%.]*)")
_TARGET = re.compile(r"^\s*\.target\s+(\w+)", re.M)
_FATBIN_MAGIC = b"\x50\xed\x55\xba"


@dataclass
class Image:
    """What the emulator loads: the PTX text, the kernel entries, and where it came from (for reports)."""

    ptx: str
    name: str
    kernels: List[str] = field(default_factory=list)
    arch: Optional[str] = None
    source: Optional[str] = None          # no CUDA source: line info comes from the PTX's own .loc directives
    options: tuple = ()
    functions: dict = field(default_factory=dict)   # entry name -> its one Function (attributes shared by handles)

    @classmethod
    def from_ptx(cls, ptx: str, name: str) -> "Image":
        m = _TARGET.search(ptx)
        return cls(ptx=ptx, name=name, kernels=sorted(set(_ENTRY.findall(ptx))), arch=m.group(1) if m else None)


def register_pair(cubin: bytes, ptx: str) -> None:
    """Tell the layer which PTX a cubin was built from (its loads then run that PTX)."""
    _PAIRS[hashlib.sha256(bytes(cubin)).hexdigest()] = ptx


def _scan() -> None:
    for d in CUBIN_PTX_DIRS:
        if not d.is_dir():
            continue
        for cub in d.rglob("*.cubin"):
            try:
                mt = cub.stat().st_mtime
            except OSError:
                continue
            if _SEEN.get(cub) == mt:
                continue
            ptx_path = cub.with_suffix(".ptx")
            if ptx_path.exists():
                register_pair(cub.read_bytes(), ptx_path.read_text(errors="replace"))
                _SEEN[cub] = mt


def _ptx_of_cubin(data: bytes, what: str) -> str:
    key = hashlib.sha256(data).hexdigest()
    if key not in _PAIRS:
        _scan()
    if key not in _PAIRS:
        raise DriverError(CUresult.NO_BINARY_FOR_GPU,
                          f"{what}: the image is a cubin (machine code) and the emulator runs PTX, but no PTX is known "
                          f"for it (sha256 {key[:16]}); load PTX text instead, run the CuTe DSL under `lab.py exec` "
                          "(which keeps the DSL's PTX next to each cubin), or call "
                          "ptxlab.driver.images.register_pair(cubin, ptx)")
    return _PAIRS[key]


def _fatbin_entries(data: bytes):
    """(kind, payload) of each entry of a fatbinary: header (magic, version u16, header size u16, payload size u64),
    then entries (kind u16: 1 PTX, 2 ELF; version u16; header size u32; payload size u64; ...; flags)."""
    import struct
    _, _, hsize, fsize = struct.unpack_from("<IHHQ", data, 0)
    off, end = hsize, min(hsize + fsize, len(data))
    while off + 16 <= end:
        kind, _, ehsize, psize = struct.unpack_from("<HHIQ", data, off)
        flags, = struct.unpack_from("<Q", data, off + 24) if ehsize >= 32 else (0,)
        yield kind, flags, data[off + ehsize: off + ehsize + psize]
        off += ehsize + psize


_FATBIN_COMPRESSED = 0x2000


def _from_fatbin(data: bytes, what: str) -> Image:
    """A fatbinary: its uncompressed PTX entry if it has one, else the PTX of its cubin (ELF entry)."""
    entries = list(_fatbin_entries(data))
    for kind, flags, payload in entries:
        if kind == 1 and not flags & _FATBIN_COMPRESSED:
            return Image.from_ptx(payload.split(b"\0", 1)[0].decode("utf-8", "replace"),
                                  f"fatbin-ptx-{hashlib.sha256(payload).hexdigest()[:12]}")
    for kind, _, payload in entries:
        if kind == 2 and payload[:4] == b"\x7fELF":
            return image_from_bytes(payload, what)
    raise DriverError(CUresult.INVALID_IMAGE, f"{what}: the fatbinary holds neither uncompressed PTX nor a cubin "
                                              f"(entry kinds {[k for k, _, _ in entries]})")


def read_image(ptr: int, what: str) -> bytes:
    """The bytes of an image given by address only: an ELF's size from its header (section headers and program
    headers, whichever ends last), PTX text up to its NUL."""
    import ctypes
    import struct
    if not ptr:
        raise DriverError(CUresult.INVALID_VALUE, f"{what}: the image pointer is NULL")
    head = ctypes.string_at(ptr, 4)
    if head == b"\x7fELF":
        h = ctypes.string_at(ptr, 64)
        if h[4] != 2:
            raise DriverError(CUresult.INVALID_IMAGE, f"{what}: a 32-bit ELF is not a cubin")
        phoff, shoff = struct.unpack_from("<QQ", h, 32)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", h, 54)
        end = max(shoff + shentsize * shnum, phoff + phentsize * phnum)
        for i in range(shnum):   # sections may follow the header table
            sh = ctypes.string_at(ptr + shoff + i * shentsize, shentsize)
            sh_type, = struct.unpack_from("<I", sh, 4)
            off, size = struct.unpack_from("<QQ", sh, 24)
            if sh_type != 8:     # SHT_NOBITS occupies no file bytes
                end = max(end, off + size)
        return ctypes.string_at(ptr, end)
    if head == _FATBIN_MAGIC:
        hsize, = struct.unpack_from("<H", ctypes.string_at(ptr + 6, 2))
        fsize, = struct.unpack_from("<Q", ctypes.string_at(ptr + 8, 8))
        return ctypes.string_at(ptr, hsize + fsize)
    return ctypes.string_at(ptr)


def image_from_bytes(data: bytes, what: str) -> Image:
    """Classify an image (PTX, cubin, fatbin) and return its PTX as an :class:`Image`."""
    if data[:4] == b"\x7fELF":
        return Image.from_ptx(_ptx_of_cubin(data, what), f"cubin-{hashlib.sha256(data).hexdigest()[:12]}")
    if data[:4] == _FATBIN_MAGIC:
        return _from_fatbin(data, what)
    text = data.split(b"\0", 1)[0].decode("utf-8", "replace")
    if ".entry" not in text and ".version" not in text:
        raise DriverError(CUresult.INVALID_IMAGE, f"{what}: the image is neither PTX text nor a cubin "
                                                  f"(starts with {data[:8]!r})")
    return Image.from_ptx(text, f"ptx-{hashlib.sha256(data[:len(text)]).hexdigest()[:12]}")
