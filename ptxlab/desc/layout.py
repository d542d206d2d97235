"""Host side of an SMEM matrix descriptor: lay a numpy tile out in shared memory for a descriptor (the inverse of the
address walk of :func:`ptxlab.desc.smem.smem_operand_addresses`), read a tile back through a descriptor, and check a
descriptor against the tile it is meant to describe before a launch.

    start, image = layout_tile(a, desc)          # bytes to put at shared address `start` (e.g. copy them in)
    check_descriptor(desc, a, image, start)      # DescError naming the first wrong element, and the likely cause

An LBO/SBO swap (or a wrong SBO, start address or swizzle) makes the MMA read a permuted tile and produce wrong
numbers silently; :func:`check_descriptor` reads the tile back through the descriptor and compares, and names the
swap when swapping the two fields would have read the right tile. Element bytes follow the operand formats of PTX
ISA 9.7.16.4 (little-endian; 4-bit codes two per byte, element 2i in the low nibble, as tcgen05.mma reads E2M1).
Used by ptx_docs/hello_tcgen05.md.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from ptxlab.desc.fields import DescError
from ptxlab.desc.smem import SmemDesc, smem_operand_addresses

__all__ = ["tile_bytes", "layout_tile", "read_tile", "check_descriptor"]


def _bits(tile: np.ndarray, elem_bits: Optional[int]) -> int:
    b = int(elem_bits) if elem_bits is not None else 8 * np.asarray(tile).dtype.itemsize
    if b not in (4, 8, 16, 32):
        raise DescError(f"element size {b} bits: use 4, 8, 16 or 32")
    return b


def tile_bytes(tile: np.ndarray, elem_bits: Optional[int] = None) -> np.ndarray:
    """(rows, k) elements -> (rows, k * bits / 8) bytes along K (4-bit: codes 0..15, element 2i in the low nibble)."""
    t = np.asarray(tile)
    if t.ndim != 2:
        raise DescError(f"a tile is 2-D (rows x K elements), got shape {t.shape}")
    b = _bits(t, elem_bits)
    if b == 4:
        if t.shape[1] % 2:
            raise DescError(f"a 4-bit tile needs an even K, got {t.shape[1]}")
        c = t.astype(np.uint8) & 0xF
        return (c[:, 0::2] | (c[:, 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(t).view(np.uint8).reshape(t.shape[0], -1)


def _addresses(desc: int, rows: int, k_bytes: int, major: str, eb: int) -> np.ndarray:
    """(rows, k_bytes) SMEM byte address of each byte of a (rows x K) tile, K-major or MN-major."""
    if major.upper() == "K":
        return smem_operand_addresses(desc, rows, k_bytes, "K")
    if eb < 1:
        raise DescError("MN-major tiles of 4-bit elements are not supported (sub-byte MN-major layouts are figure-only)")
    k = k_bytes // eb
    a = smem_operand_addresses(desc, rows * eb, k, "MN")          # [mn byte, k row]
    return a.reshape(rows, eb, k).transpose(0, 2, 1).reshape(rows, k * eb)


def layout_tile(tile: np.ndarray, desc: int, major: str = "K", elem_bits: Optional[int] = None
                ) -> Tuple[int, np.ndarray]:
    """(start, image): the shared-memory bytes from the descriptor's start address that make an MMA reading through
    ``desc`` see ``tile`` (bytes the tile does not use are 0). Raises DescError when two elements land on one byte
    (the descriptor's layout overlaps itself for this tile)."""
    t = np.asarray(tile)
    b = _bits(t, elem_bits)
    by = tile_bytes(t, b)
    addr = _addresses(desc, t.shape[0], by.shape[1], major, b // 8)
    start = int(SmemDesc.decode(desc)["start_address"])
    flat = addr.ravel() - start
    if np.unique(flat).size != flat.size:
        raise DescError(f"descriptor {desc:#018x}: the {t.shape} tile's bytes overlap in shared memory (LBO/SBO too "
                        "small for this tile); `python lab.py desc smem` shows the address walk")
    image = np.zeros(int(flat.max()) + 1, np.uint8)
    image[flat] = by.ravel()
    return start, image


def read_tile(image: np.ndarray, start: int, desc: int, rows: int, k: int, major: str = "K", elem_bits: int = 8
              ) -> np.ndarray:
    """The (rows x k) tile an MMA reads through ``desc`` from ``image`` (shared bytes from address ``start``):
    unsigned element codes (uint8 / uint16 / uint32)."""
    b = _bits(np.zeros(1, np.uint8), elem_bits)
    k_bytes = k * b // 8
    addr = _addresses(desc, rows, k_bytes, major, b // 8) - int(start)
    img = np.asarray(image, np.uint8)
    if addr.min() < 0 or addr.max() >= img.size:
        raise DescError(f"descriptor {desc:#018x} reads shared bytes {int(addr.min()) + start:#x}..{int(addr.max()) + start:#x}"
                        f", outside the {img.size} bytes laid out from {start:#x}")
    by = img[addr]
    if b == 4:
        out = np.empty((rows, k), np.uint8)
        out[:, 0::2], out[:, 1::2] = by & 0xF, by >> 4
        return out
    return np.ascontiguousarray(by).view({8: np.uint8, 16: np.uint16, 32: np.uint32}[b]).reshape(rows, k)


def _codes(tile: np.ndarray, b: int) -> np.ndarray:
    t = np.asarray(tile)
    if b == 4:
        return t.astype(np.uint8) & 0xF
    return np.ascontiguousarray(t).view({8: np.uint8, 16: np.uint16, 32: np.uint32}[b]).reshape(t.shape)


def _swap(desc: int) -> int:
    d = SmemDesc.decode(desc)
    return SmemDesc.encode(start_address=d["start_address"], lbo=d["sbo"], sbo=d["lbo"],
                           swizzle=d.swizzle_name, base_offset=d["base_offset"], lbo_mode=d["lbo_mode"])


def check_descriptor(desc: int, tile: np.ndarray, image: np.ndarray, start: int, major: str = "K",
                     elem_bits: Optional[int] = None, what: str = "operand") -> None:
    """Raise DescError unless an MMA reading ``image`` (laid out from shared address ``start``) through ``desc`` sees
    ``tile``; the message names the first wrong element, what it read there, and an LBO/SBO swap when swapping the
    two fields makes it right."""
    t = np.asarray(tile)
    b = _bits(t, elem_bits)
    want = _codes(t, b)
    rows, k = t.shape
    try:
        got = read_tile(image, start, desc, rows, k, major, b)
    except DescError as exc:
        got, why = None, str(exc)
    if got is not None and np.array_equal(got, want):
        return
    d = SmemDesc.decode(desc)
    fields = f"start {d['start_address']:#x}, LBO {d['lbo']} B, SBO {d['sbo']} B, swizzle {d.swizzle_name}"
    if got is not None:
        bad = np.argwhere(got != want)
        r, c = (int(x) for x in bad[0])
        why = (f"{len(bad)} of {want.size} elements differ; first: element ({r}, {c}) reads {int(got[r, c]):#x}, "
               f"the tile has {int(want[r, c]):#x}")
    hint = ""
    if d["lbo"] != d["sbo"]:
        try:
            if np.array_equal(read_tile(image, start, _swap(desc), rows, k, major, b), want):
                hint = (f"; LBO and SBO are swapped: the data is laid out with LBO {d['sbo']} B and SBO {d['lbo']} B "
                        f"(descriptor {_swap(desc):#018x})")
        except DescError:
            pass
    raise DescError(f"{what} descriptor {desc:#018x} ({fields}, {major}-major) does not describe the intended "
                    f"{rows}x{k} tile: {why}{hint}")
