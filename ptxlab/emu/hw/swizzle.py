"""TMA / UMMA shared-memory swizzle as a function of the absolute shared::cta byte address.

PTX ISA 5.5.7 ("Swizzling Modes") gives each mode as a table of 16-byte cells per 128-byte shared-memory line, with
the pattern anchored at a 256/512/1024-byte boundary, and a "swizzle base offset" = (dstMem / 128) % N for starts
off that boundary. Both statements together say the permutation is a pure function of the absolute address bits,
which is what is implemented here (L = addr >> 7 is the 128-byte line index, bits below 7 are the offset in the line):

=========================  ==================================  ======================  ================
mode                       permutation (XOR on address bits)    natural boundary        PTX 5.5.7 table
=========================  ==================================  ======================  ================
none                       identity                            16 B                    no swizzle
32B                        bit 4      ^= bit 7                 256 B                   c ^ (L & 1)
64B                        bits [4,6) ^= bits [7,9)            512 B                   c ^ (L & 3)
128B                       bits [4,7) ^= bits [7,10)           1024 B                  c ^ (L & 7)
128B_ATOM_32B              bits [5,7) ^= bits [7,9)            512 B (32 B atoms)      32-B pair p ^ (L & 3)
128B_ATOM_64B              bit 6      ^= bit 7                 256 B (64 B atoms)      64-B half h ^ (L & 1)
128B_ATOM_32B_FLIP_8B      ATOM_32B + an 8-byte flip on        --                      figure only
                           "every alternate line"
=========================  ==================================  ======================  ================

Every mapping is an involution (the XOR source bits are never modified), so the inverse equals the forward map.

128B_ATOM_32B_FLIP_8B: the text says the two 8-byte halves of each 16 B are swapped "at every alternate shared memory
line" but not which lines (odd or even, relative to what); the figure is an image. No source settles it, so that mode
raises :class:`SwizzleUnconfirmed` (see ptx_docs/tma.md). The 96B mode of PTX 5.5.7 has no tensor-map encoding
(CUtensorMapSwizzle has none) and is not offered.
"""
from __future__ import annotations

from typing import Union, overload

import numpy as np
import numpy.typing as npt

from ptxlab.errors import EmuError

__all__ = [
    "SWIZZLE_MODES",
    "SwizzleError",
    "SwizzleUnconfirmed",
    "swizzle_span",
    "swizzle_atomicity",
    "pattern_bytes",
    "natural_alignment",
    "base_offset",
    "swizzle_addr",
    "unswizzle_addr",
    "check_dst_alignment",
]

SWIZZLE_MODES: tuple[str, ...] = (
    "none", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B",
)

# (xor-target low bit, number of bits) ; the source bits always start at bit 7 (the 128-B line index).
_XOR: dict[str, tuple[int, int]] = {
    "none": (4, 0),
    "32B": (4, 1),
    "64B": (4, 2),
    "128B": (4, 3),
    "128B_ATOM_32B": (5, 2),
    "128B_ATOM_64B": (6, 1),
}
_SPAN = {"none": 0, "32B": 32, "64B": 64, "128B": 128,
         "128B_ATOM_32B": 128, "128B_ATOM_32B_FLIP_8B": 128, "128B_ATOM_64B": 128}
_ATOMICITY = {"none": 16, "32B": 16, "64B": 16, "128B": 16,
              "128B_ATOM_32B": 32, "128B_ATOM_32B_FLIP_8B": 32, "128B_ATOM_64B": 64}


class SwizzleError(EmuError):
    """A swizzled shared-memory access broke an alignment rule, or named an unknown mode."""


class SwizzleUnconfirmed(SwizzleError):
    """The mode's exact permutation is not settled by any source consulted; refusing to guess."""


def _check_mode(mode: str) -> str:
    if mode not in _SPAN:
        raise SwizzleError(f"unknown swizzle mode {mode!r}; use one of {list(SWIZZLE_MODES)}")
    if mode == "128B_ATOM_32B_FLIP_8B":
        raise SwizzleUnconfirmed(
            "swizzle 128B_ATOM_32B_FLIP_8B: PTX ISA 5.5.7 says the 8-byte halves flip 'at every alternate shared "
            "memory line' but not which lines (the figure is an image); the emulator does not guess. Use "
            "128B_ATOM_32B, or settle it on sm_100 hardware with tests/fidelity/tma (see ptx_docs/tma.md)")
    return mode


def swizzle_span(mode: str) -> int:
    """Bytes of the swizzle span (0 for none): the largest legal inner box in bytes (cuTensorMapEncodeTiled)."""
    if mode not in _SPAN:
        raise SwizzleError(f"unknown swizzle mode {mode!r}; use one of {list(SWIZZLE_MODES)}")
    return _SPAN[mode]


def swizzle_atomicity(mode: str) -> int:
    """Bytes kept intact by the permutation (PTX 5.5.7 Table 14)."""
    swizzle_span(mode)
    return _ATOMICITY[mode]


def pattern_bytes(mode: str) -> int:
    """Bytes after which the permutation repeats (16 for none)."""
    _check_mode(mode)
    lo, n = _XOR[mode]
    return 16 if n == 0 else 128 << n


def natural_alignment(mode: str) -> int:
    """The boundary at which the pattern starts with base offset 0 (PTX 5.5.7: 1024/512/256 B; 16 B for none)."""
    return pattern_bytes(mode)


def base_offset(mode: str, addr: int) -> int:
    """PTX 5.5.7 swizzle base offset of a destination address: (addr / 128) % (pattern rows); 0 when aligned."""
    rows = pattern_bytes(mode) // 128
    return (int(addr) // 128) % rows if rows > 1 else 0


AddrLike = Union[int, npt.NDArray[np.integer]]


@overload
def swizzle_addr(mode: str, addr: int) -> int: ...
@overload
def swizzle_addr(mode: str, addr: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]: ...
def swizzle_addr(mode: str, addr: AddrLike) -> AddrLike:  # noqa: E302
    """Map the linear (dense-box) shared-memory byte address to where TMA/UMMA actually place the byte."""
    _check_mode(mode)
    lo, n = _XOR[mode]
    if n == 0:
        return addr if isinstance(addr, (int, np.integer)) else np.asarray(addr, dtype=np.int64)
    mask = (1 << n) - 1
    if isinstance(addr, (int, np.integer)):
        a = int(addr)
        if a < 0:
            raise SwizzleError(f"swizzle {mode}: shared address {a} is negative")
        return a ^ (((a >> 7) & mask) << lo)
    a = np.asarray(addr, dtype=np.int64)
    if a.size and int(a.min()) < 0:
        raise SwizzleError(f"swizzle {mode}: a shared address is negative (min {int(a.min())})")
    return a ^ (((a >> 7) & mask) << lo)


def unswizzle_addr(mode: str, addr: AddrLike) -> AddrLike:
    """Inverse of :func:`swizzle_addr` (every mode is an involution, so this is the same map)."""
    return swizzle_addr(mode, addr)


def check_dst_alignment(mode: str, addr: int, *, what: str = "TMA shared-memory address",
                        tensor_min_align: int = 128, require_natural: bool = True) -> None:
    """Raise SwizzleError naming the rule if ``addr`` breaks a shared-memory alignment rule of a tensor copy.

    Rules (ptx_docs/tma.md): 16 B always (PTX 5.5.3.1, bounding box address); ``tensor_min_align`` (128 B for TMA,
    measured on an H100 on 2026-11-22); atom alignment 32/64 B for the ATOM sub-modes (PTX 5.5.7 text); and, when
    ``require_natural``, the natural pattern boundary (1024/512/256 B) so that the swizzle base offset is 0 (not a
    TMA rule: the H100 accepts 128-B aligned swizzled destinations; hw/tma.py passes require_natural=False).
    """
    swizzle_span(mode)
    a = int(addr)
    if a % 16:
        raise SwizzleError(f"{what} 0x{a:x} is not 16-byte aligned (PTX ISA 5.5.3.1: the bounding box address must "
                           "be aligned to 16 bytes); align the shared buffer")
    if tensor_min_align and a % tensor_min_align:
        raise SwizzleError(f"{what} 0x{a:x} is not {tensor_min_align}-byte aligned (TMA shared destination rule: "
                           "not in the PTX text, but an H100 faults with CUDA_ERROR_MISALIGNED_ADDRESS at +16/+32/+64 B "
                           "and accepts +128 B, ptx_docs/tma.md); align the stage buffer to 128 B")
    atom = _ATOMICITY[mode]
    if a % atom:
        raise SwizzleError(f"{what} 0x{a:x}: swizzle {mode} keeps {atom}-byte atoms and 'requires {atom} byte "
                           "alignment at shared memory' (PTX ISA 5.5.7)")
    if require_natural and mode != "none":
        nat = natural_alignment(mode)
        if a % nat:
            raise SwizzleError(
                f"{what} 0x{a:x} is not {nat}-byte aligned for swizzle {mode}: the pattern would start with base "
                f"offset {base_offset(mode, a)} (PTX ISA 5.5.7), which UMMA descriptors with base_offset 0 and the "
                f"emulator's strict mode reject; align stage buffers to {nat} B")
