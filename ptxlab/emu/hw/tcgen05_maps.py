"""Thread/register <-> TMEM (lane, column) maps for tcgen05.ld/st, tcgen05.cp and tcgen05.shift.

Sources:
* PTX ISA 9.7.16.2.3 (data-movement shapes; the per-thread figures are images), 9.7.16.8.3/4 (ld/st, Tables 49/50),
  9.7.16.9.2 (cp shapes and multicast), 9.7.16.9.3 (shift).
* The per-thread maps are derived from CUTLASS ``include/cute/atom/copy_traits_sm100.hpp``
  (``Copy_Traits<SM100_TMEM_LOAD_{32dp32b,16dp64b,16dp128b,16dp256b,16dp32b}Nx[_16b]>`` DstLayout/ValID, and
  ``Copy_Traits<SM100_UTCCP_*>`` ValID); the PTX strings come from ``include/cute/arch/copy_sm100.hpp``.
  tests/emu/hw/test_tcgen05_maps.py re-derives every LOAD map by evaluating those CuTe layouts from the installed header.

Conventions: ``L0, C0`` = lane and column of the instruction's TMEM address. A map gives, for every thread t (0..31),
register r and 16-bit half h, the (lane, column) offsets. ``H = 1`` for 32-bit transfers; ``H = 2`` for
``.pack::16b`` / ``.unpack::16b``, where half h = register bits [16h, 16h+16) <-> the low 16 bits of a TMEM word,
the lower column in the low half (CUTLASS ``*_16b`` ValID ``((16,n),16):((1,32),DP)``).
"""
from __future__ import annotations

import functools

from dataclasses import dataclass
from typing import Optional

import numpy as np
import numpy.typing as npt

__all__ = [
    "LDST_SHAPES",
    "LdStMap",
    "ldst_num_regs",
    "ldst_map",
    "ld_pack",
    "st_unpack",
    "CP_SHAPES",
    "CpMap",
    "cp_map",
    "cp_row_words",
    "SHIFT_ROWS",
    "SHIFT_COLS",
    "shift_down_map",
    "MapError",
]

I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]


class MapError(ValueError):
    """An ld/st/cp/shift qualifier combination that does not exist (the handler turns it into an EmuError)."""


@dataclass(frozen=True)
class _LdStShape:
    regs_per_x1: int  # 32-bit registers per thread for .x1 (PTX Table 49)
    cols_per_x1: int  # TMEM columns covered per .x1 repetition (unpacked)
    max_num: int  # largest .num


# PTX Table 49/50: 32x32b/16x64b/16x32bx2 -> N regs (x1..x128); 16x128b -> 2N (x1..x64); 16x256b -> 4N (x1..x32).
LDST_SHAPES: dict[str, _LdStShape] = {
    "32x32b": _LdStShape(1, 1, 128),
    "16x64b": _LdStShape(1, 2, 128),
    "16x128b": _LdStShape(2, 4, 64),
    "16x256b": _LdStShape(4, 8, 32),
    "16x32bx2": _LdStShape(1, 1, 128),
}
_NUMS = (1, 2, 4, 8, 16, 32, 64, 128)


@dataclass(frozen=True)
class LdStMap:
    """``lane[t, r, h]``, ``col[t, r, h]``: TMEM offsets (add L0, C0) of thread t, register r, half h."""

    shape: str
    num: int
    pack16: bool
    lane: I64  # (32, R, H)
    col: I64  # (32, R, H)

    @property
    def nregs(self) -> int:
        return int(self.lane.shape[1])


def ldst_num_regs(shape: str, num: int) -> int:
    """Registers per thread of tcgen05.ld/st ``.shape.xnum`` (PTX Tables 49/50); raises MapError if illegal."""
    info = LDST_SHAPES.get(shape)
    if info is None:
        raise MapError(f"unknown tcgen05.ld/st shape .{shape}; valid: {', '.join('.' + s for s in LDST_SHAPES)}")
    if num not in _NUMS or num > info.max_num:
        raise MapError(f"tcgen05.ld/st .{shape}.x{num} does not exist: .num must be x1..x{info.max_num} (power of 2) "
                       f"for .{shape} (PTX Table 49)")
    return info.regs_per_x1 * num


def _unpacked_x1(shape: str) -> tuple[I64, I64]:
    """(32, regs_per_x1) lane/col offsets of one .x1 repetition (CUTLASS SM100_TMEM_LOAD_*1x DstLayout)."""
    t = np.arange(32)[:, None]
    if shape == "32x32b":  # 32dp32b1x: thread t -> lane t
        return t + 0 * t, 0 * t
    if shape == "16x64b":  # 16dp64b1x DstLayout ((2,2,8),32):((512,32,64),1)
        return t // 4 + 8 * (t % 2), (t // 2) % 2 + 0 * t
    if shape == "16x128b":  # 16dp128b1x DstLayout ((4,8),(32,2)):((32,128),(1,1024))
        r = np.arange(2)[None, :]
        return t // 4 + 8 * r, t % 4 + 0 * r
    if shape == "16x256b":  # 16dp256b1x DstLayout ((4,8),(64,2)):((64,256),(1,2048))
        r = np.arange(4)[None, :]
        return t // 4 + 8 * (r // 2), 2 * (t % 4) + r % 2
    raise AssertionError(shape)


def ldst_map(shape: str, num: int, *, pack16: bool = False, imm: Optional[int] = None) -> LdStMap:
    """The (thread, register, half) -> (lane, column) offset map of tcgen05.ld/st.

    ``imm`` is the 16x32bx2 immHalfSplitoff (threads 16..31 use column C0 + imm); required for that shape only.
    Repetition j of .xN occupies registers [j*R1, (j+1)*R1) and columns + j*cols_per_x1 (x2 with pack16).
    Cached (every warp of every tcgen05.ld/st asks): the arrays are read-only.
    """
    return _ldst_map(shape, int(num), bool(pack16), None if imm is None else int(imm))


@functools.lru_cache(maxsize=512)
def _ldst_map(shape: str, num: int, pack16: bool, imm: Optional[int]) -> LdStMap:
    R = ldst_num_regs(shape, num)
    info = LDST_SHAPES[shape]
    t = np.arange(32)[:, None]
    if shape == "16x32bx2":
        if imm is None:
            raise MapError("tcgen05.ld/st.16x32bx2 needs the immHalfSplitoff immediate operand")
        j = np.arange(R)[None, :]
        lane = np.broadcast_to(t % 16, (32, R)).astype(np.int64)
        ucol = j + 0 * t  # unpacked column inside the half
        half_base = (t // 16) * int(imm)
    else:
        if imm is not None:
            raise MapError(f"tcgen05.ld/st.{shape} takes no immHalfSplitoff operand (only .16x32bx2 does)")
        l1, c1 = _unpacked_x1(shape)
        reps = np.arange(num)
        lane = np.tile(l1, (1, num)).astype(np.int64)
        ucol = (np.tile(c1, (1, num)) + np.repeat(reps, info.regs_per_x1)[None, :] * info.cols_per_x1).astype(np.int64)
        half_base = 0 * t
    if pack16:
        h = np.arange(2)[None, None, :]
        col = half_base[..., None] + 2 * ucol[..., None] + h
        lane3 = np.broadcast_to(lane[..., None], col.shape)
    else:
        col = (half_base + ucol)[..., None]
        lane3 = lane[..., None]
    lane3, col = np.array(lane3, np.int64, order="C"), np.array(col, np.int64, order="C")
    lane3.flags.writeable = False
    col.flags.writeable = False
    return LdStMap(shape, num, pack16, lane3, col)


def ld_pack(words: npt.ArrayLike, pack16: bool) -> U32:
    """TMEM words (32, R, H) -> register values (32, R). pack16: low 16 bits of each column, lower column low."""
    w = np.asarray(words).astype(np.uint32)
    if not pack16:
        return w[..., 0]
    return ((w[..., 0] & 0xFFFF) | ((w[..., 1] & 0xFFFF) << 16)).astype(np.uint32)


def st_unpack(regs: npt.ArrayLike, pack16: bool) -> U32:
    """Register values (32, R) -> TMEM words (32, R, H).

    unpack16 writes each 16-bit half zero-extended into its column. What the upper 16 bits of the TMEM word hold after
    ``.unpack::16b`` is not stated in PTX 9.7.16.8.4 (UNCONFIRMED); readers of those bits are wrong anyway.
    """
    r = np.asarray(regs).astype(np.uint32)
    if not pack16:
        return r[..., None]
    return np.stack([r & 0xFFFF, r >> 16], axis=-1).astype(np.uint32)


# ------------------------------------------------------------------------------------------------ tcgen05.cp
@dataclass(frozen=True)
class CpMap:
    """Source row i (``row_bytes`` bytes, K-major canonical through the SMEM descriptor) -> lanes ``lanes[i, :]``
    (offsets from L0), columns C0 .. C0 + row_bytes/4 - 1; byte 4c+b of the row -> bits [8b, 8b+8) of column c."""

    shape: str
    multicast: Optional[str]
    rows: int
    row_bytes: int
    lanes: I64  # (rows, copies)

    @property
    def ncols(self) -> int:
        return self.row_bytes // 4


def _cp_lanes(shape: str, multicast: Optional[str]) -> I64:
    # CUTLASS Copy_Traits<SM100_UTCCP_*_1cta> ValID; modes [core_matrix_strided, core_matrix_leading, (repeat), broadcast]
    if shape == "128x256b" or shape == "128x128b":
        return np.arange(128)[:, None]
    if shape == "4x256b":  # ValID via DstLayout (4,256):(32,128): row i -> lane 32*i (CUTLASS "4DP refresh")
        return (32 * np.arange(4))[:, None]
    r = np.arange(64)
    if multicast == "warpx2::02_13":  # ValID (64,128,2):(DP,1,64*DP)
        return np.stack([r, r + 64], axis=1)
    if multicast == "warpx2::01_23":  # ValID (32,128,2,2):(DP,1,64*DP,32*DP)
        base = 64 * (r // 32) + r % 32
        return np.stack([base, base + 32], axis=1)
    if multicast == "warpx4":  # ValID (32,128,4):(DP,1,32*DP)
        r = np.arange(32)
        return np.stack([r, r + 32, r + 64, r + 96], axis=1)
    raise AssertionError((shape, multicast))


CP_SHAPES: dict[tuple[str, Optional[str]], tuple[int, int]] = {
    ("128x256b", None): (128, 32),
    ("128x128b", None): (128, 16),
    ("4x256b", None): (4, 32),
    ("64x128b", "warpx2::02_13"): (64, 16),
    ("64x128b", "warpx2::01_23"): (64, 16),
    ("32x128b", "warpx4"): (32, 16),
}


def cp_map(shape: str, multicast: Optional[str] = None, decompress: Optional[str] = None) -> CpMap:
    """Map of ``tcgen05.cp.<shape>{.<multicast>}`` (PTX 9.7.16.9.2). Decompression forms are rejected (see docs)."""
    if decompress is not None:
        raise MapError(
            f"tcgen05.cp .{decompress} decompression is not supported by the emulator: where the 4-bit / 6-bit value "
            "sits inside its 8-bit container is given only by PTX ISA figures 194-198 (images), no text source "
            "settles it (ptx_docs/tcgen05.md); copy undecompressed data instead")
    key = (shape, multicast)
    if key not in CP_SHAPES:
        need = {"64x128b": ".warpx2::02_13 or .warpx2::01_23", "32x128b": ".warpx4"}.get(shape, "no multicast")
        raise MapError(f"tcgen05.cp.{shape}{'.' + multicast if multicast else ''} is not a legal shape/multicast "
                       f"combination: .{shape} requires {need} (PTX 9.7.16.9.2)")
    rows, row_bytes = CP_SHAPES[key]
    return CpMap(shape, multicast, rows, row_bytes, _cp_lanes(shape, multicast).astype(np.int64))


def cp_row_words(row_bytes: npt.ArrayLike) -> U32:
    """(rows, nbytes) uint8 -> (rows, nbytes/4) uint32 little-endian (byte 0 = bits 0..7 of column C0)."""
    b = np.ascontiguousarray(np.asarray(row_bytes, np.uint8))
    return b.view("<u4").astype(np.uint32).reshape(b.shape[0], -1)


# ------------------------------------------------------------------------------------------------ tcgen05.shift
SHIFT_ROWS = 32
SHIFT_COLS = 8  # 32-byte elements = 8 columns; implicit shape .31x256b (PTX 9.7.16.2.3 table)


def shift_down_map(lane0: int) -> tuple[I64, I64]:
    """tcgen05.shift.down (PTX 9.7.16.9.3): "shifting of 32-byte elements downwards across all the rows, except the
    last, by one row"; taddr lane aligned to 32; implicit shape .31x256b.

    Returns (src_lanes, dst_lanes) offsets, 31 each: lane L0+i -> L0+i+1 for i = 0..30, columns C0..C0+7.
    What lane L0 holds afterwards is not stated (the caller marks it unwritten). The model covers the one 32-lane
    block at L0 (shape 31x256b); whether other subpartitions shift too is not stated either.
    """
    if lane0 % 32:
        raise MapError(f"tcgen05.shift address lane {lane0} is not aligned to 32 (PTX 9.7.16.9.3)")
    src = np.arange(31, dtype=np.int64)
    return src, src + 1
