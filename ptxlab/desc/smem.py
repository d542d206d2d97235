"""tcgen05 shared-memory matrix descriptor (64-bit), PTX ISA 9.7.16.4.1 Table 40 / CUTLASS `UMMA::SmemDescriptor`.

One table (`SMEM_DESC`) drives encode / decode / validate / pretty. `smem_operand_addresses` gives the absolute,
swizzled SMEM byte address of every (row, byte-along-K) of an MMA operand read through a descriptor
(canonical layouts of PTX ISA 9.7.16.3.3; swizzle = CuTe `Swizzle<B,M,S>` on the byte address).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ptxlab.desc.fields import BitLayout, DescError, Decoded, Field

__all__ = [
    "SMEM_DESC",
    "SWIZZLE_CODES",
    "SWIZZLE_WIDTH",
    "SmemDesc",
    "swizzle_address",
    "smem_operand_addresses",
]

# Table 40 layout-type codes (3 bits, 61..63). 3, 5, 7 are invalid.
SWIZZLE_CODES: dict[int, str] = {0: "NONE", 1: "128B_BASE32B", 2: "128B", 4: "64B", 6: "32B"}
# Bytes of one swizzle atom row along the contiguous dimension (NONE: one 16-B core-matrix row).
SWIZZLE_WIDTH: dict[str, int] = {"NONE": 16, "32B": 32, "64B": 64, "128B": 128, "128B_BASE32B": 128}
_ADDR_MASK = 0x3FFFF  # 18-bit shared-window byte address, stored >> 4 in 14 bits

SMEM_DESC = BitLayout(
    name="smem_desc",
    nbits=64,
    source="PTX ISA 9.7.16.4.1 Table 40; CUTLASS cute/arch/mma_sm100_desc.hpp UMMA::SmemDescriptor",
    fields=(
        Field("start_address", 0, 14, "matrix start address (16-B aligned smem byte address)",
              shift=4, pre_mask=_ADDR_MASK, unit=" B"),
        Field("_rsv14", 14, 2, "reserved", fixed=0),
        Field("lbo", 16, 14, "leading-dimension byte offset (absolute address if lbo_mode=1)",
              shift=4, pre_mask=_ADDR_MASK, unit=" B"),
        Field("_rsv30", 30, 2, "reserved", fixed=0),
        Field("sbo", 32, 14, "stride-dimension byte offset", shift=4, pre_mask=_ADDR_MASK, unit=" B"),
        Field("version", 46, 3, "fixed constant 0b001 (Blackwell descriptor version, bit 46)", fixed=1),
        Field("base_offset", 49, 3, "matrix base offset (swizzle pattern phase)"),
        Field("lbo_mode", 52, 1, "LBO mode", enum={0: "relative", 1: "absolute"}),
        Field("_rsv53", 53, 8, "fixed 0", fixed=0),
        Field("swizzle", 61, 3, "swizzling / layout type", enum=SWIZZLE_CODES),
    ),
)

_T40 = "(PTX ISA 9.7.16.4.1 Table 40)"


def _norm_swizzle(s: str | int) -> str | int:
    if isinstance(s, str):
        t = s.upper().replace("SWIZZLE_", "").replace("SW", "").replace("INTERLEAVE", "NONE")
        if t in ("0", ""):
            return "NONE"
        if t.isdigit():
            t = t + "B"
        return t
    return s


def _semantic_errors(d: Decoded, major: Optional[str], arch: str) -> list[str]:
    errs = []
    for i, e in enumerate(d.errors):
        if e.startswith("smem_desc.version") and d.codes["version"] == 0:
            errs.append(
                "smem_desc.version: bits 48..46 are 0 but must be 0b001 (missing version bit 46). A Hopper wgmma "
                f"descriptor has no version field; set bit 46 for tcgen05 {_T40}"
            )
        elif e.startswith("smem_desc.swizzle"):
            code = d.codes["swizzle"]
            errs.append(
                f"smem_desc.swizzle: code {code} in bits 63..61 is invalid; Blackwell codes are 0=NONE, "
                f"1=128B_BASE32B, 2=128B, 4=64B, 6=32B. Hopper's 2-bit codes (1=128B, 2=64B, 3=32B) belong in "
                f"bits 63..62, i.e. code<<1 in this 3-bit field {_T40}"
            )
        else:
            errs.append(e + " " + _T40)
    if d.codes["lbo_mode"] == 1:
        if arch != "sm_103a":
            errs.append(
                f"smem_desc.lbo_mode: 1 (absolute LBO address) is sm_103a only, target is {arch} {_T40}"
            )
        if d.codes["swizzle"] != 2 or d.codes["base_offset"] != 0:
            errs.append(f"smem_desc.lbo_mode: absolute mode needs swizzle 128B and base_offset 0 {_T40}")
    if major is not None and major.upper() == "K" and d.codes["swizzle"] == 1:
        errs.append(
            "smem_desc.swizzle: 128B_BASE32B (code 1) is MN-major only (CUTLASS make_umma_desc static_assert). "
            "If you meant 128B: Blackwell code is 2 (Hopper's 128B code 1 shifted into a 3-bit field gives this bug)"
        )
    return errs


class SmemDesc:
    """Encode / decode / validate / pretty-print the 64-bit tcgen05 shared-memory matrix descriptor."""

    layout = SMEM_DESC

    @staticmethod
    def encode(
        start_address: int,
        lbo: int = 0,
        sbo: int = 0,
        swizzle: str | int = "128B",
        base_offset: int = 0,
        lbo_mode: int = 0,
        *,
        arch: str = "sm_100a",
    ) -> int:
        """Build the descriptor from byte values (addresses/offsets in bytes, 16-B aligned). Raises DescError."""
        sw = _norm_swizzle(swizzle)
        word = SMEM_DESC.pack(
            dict(start_address=start_address, lbo=lbo, sbo=sbo, swizzle=sw, base_offset=base_offset,
                 lbo_mode=lbo_mode)
        )
        errs = SmemDesc.validate(word, arch=arch)
        if errs:
            raise DescError("; ".join(errs), errs)
        return word

    @staticmethod
    def decode(desc: int, *, major: Optional[str] = None, arch: str = "sm_100a") -> Decoded:
        """Fields (byte values; `swizzle` as code, name in `.swizzle_name`) plus `.errors` (empty if legal)."""
        d = SMEM_DESC.unpack(desc)
        d.errors = _semantic_errors(d, major, arch)
        d.swizzle_name = SWIZZLE_CODES.get(d.codes["swizzle"], f"invalid({d.codes['swizzle']})")  # type: ignore[attr-defined]
        return d

    @staticmethod
    def validate(desc: int, *, major: Optional[str] = None, arch: str = "sm_100a") -> list[str]:
        """List of broken rules (each names the field and the rule); empty list = legal."""
        return SmemDesc.decode(desc, major=major, arch=arch).errors

    @staticmethod
    def check(desc: int, *, major: Optional[str] = None, arch: str = "sm_100a") -> Decoded:
        """Decode and raise DescError if any rule is broken."""
        d = SmemDesc.decode(desc, major=major, arch=arch)
        if d.errors:
            raise DescError(f"invalid smem descriptor {desc:#018x}: " + "; ".join(d.errors), d.errors)
        return d

    @staticmethod
    def pretty(desc: int) -> str:
        """Plain-text field table (the CLI renders the same rows with rich)."""
        lines = [f"smem descriptor {desc:#018x}"]
        for bits, name, code, value, meaning in SMEM_DESC.rows(desc):
            if name.startswith("_"):
                continue
            lines.append(f"  [{bits:>6}] {name:<14} = {value:<12} (code {code}) {meaning}")
        for e in SmemDesc.validate(desc):
            lines.append(f"  ERROR: {e}")
        return "\n".join(lines)


def swizzle_address(addr: np.ndarray | int, swizzle: str) -> np.ndarray | int:
    """Apply the swizzle to absolute SMEM byte addresses (CuTe Swizzle<B,M,S>: a ^= (a & (mask<<(M+S))) >> S).

    32B = Swizzle<1,4,3>, 64B = <2,4,3>, 128B = <3,4,3> (16-B chunk c of 128-B line L -> c ^ (L % 8)),
    128B_BASE32B = <2,5,2> (32-B chunks) — PTX ISA 9.7.16.3.3 / 5.5.7; CUTLASS mma_traits_sm100.hpp layout_type().
    """
    sw = _norm_swizzle(swizzle)
    b, m, s = {"NONE": (0, 4, 3), "32B": (1, 4, 3), "64B": (2, 4, 3), "128B": (3, 4, 3),
               "128B_BASE32B": (2, 5, 2)}[sw]  # type: ignore[index]
    if b == 0:
        return addr
    mask = ((1 << b) - 1) << (m + s)
    return addr ^ ((addr & mask) >> s)


def smem_operand_addresses(desc: int, rows: int, k_bytes: int, major: str = "K") -> np.ndarray:
    """Absolute swizzled SMEM byte address of each element byte of an MMA operand read through `desc`.

    major="K": result[r, kb] = address of byte kb along K of row r (M or N index), shape [rows, k_bytes].
      NONE:  start + (r%8)*16 + (r//8)*SBO + (kb%16) + (kb//16)*LBO        (core matrices 8 x 16 B)
      SWxx:  start + (r%8)*xx + (r//8)*SBO + kb, kb < xx                    (LBO unused)
    major="MN": `rows` = number of bytes along M/N (mn_bytes) and `k_bytes` = number of K rows (k);
      result[mnb, k] = address of byte mnb along M/N of K-row k, shape [mn_bytes, k].
      NONE:  start + (mnb%16) + (mnb//16)*SBO + (k%8)*16 + (k//8)*LBO
      SWxx:  start + (mnb%xx) + (mnb//xx)*LBO + (k%8)*xx + (k//8)*SBO
      128B_BASE32B: start + (mnb%128) + (mnb//128)*LBO + (k%4)*128 + (k//4)*SBO, Swizzle<2,5,2>
    The swizzle is then applied to the absolute address (PTX ISA 9.7.16.3.3; proven against CuTe in
    tests/desc/test_desc_cutlass.py). Raises DescError for illegal descriptors and for UNCONFIRMED cases:
    base_offset != 0, lbo_mode = 1.
    """
    d = SmemDesc.check(desc, major=major)
    where = f"smem_operand_addresses(desc={desc:#018x}, major={major})"
    if d["base_offset"] != 0:
        raise DescError(
            f"{where}: base_offset={d['base_offset']} is UNCONFIRMED (swizzle phase model with a non-zero matrix "
            "base offset is not settled by PTX ISA 9.7.16.4.1; see ptx_docs/descriptors.md). Place the swizzle "
            "atom on its natural boundary (1024/512/256 B) and use base_offset 0"
        )
    if d["lbo_mode"] != 0:
        raise DescError(f"{where}: lbo_mode=1 (absolute LBO, sm_103a) is UNCONFIRMED here; use lbo_mode 0")
    sw = SWIZZLE_CODES[d.codes["swizzle"]]
    start, lbo, sbo = d["start_address"], d["lbo"], d["sbo"]
    w = SWIZZLE_WIDTH[sw]
    if rows <= 0 or k_bytes <= 0:
        raise DescError(f"{where}: rows={rows} and k_bytes={k_bytes} must be positive")
    if major.upper() == "K":
        r = np.arange(rows, dtype=np.int64)[:, None]
        kb = np.arange(k_bytes, dtype=np.int64)[None, :]
        if sw == "NONE":
            off = (r % 8) * 16 + (r // 8) * sbo + (kb % 16) + (kb // 16) * lbo
        else:
            if k_bytes > w:
                raise DescError(
                    f"{where}: k_bytes={k_bytes} exceeds the {sw} swizzle atom width {w} B; a K-major swizzled "
                    "descriptor covers one atom along K (advance the start address for the next K slice)"
                )
            off = (r % 8) * w + (r // 8) * sbo + kb
    elif major.upper() == "MN":
        mnb = np.arange(rows, dtype=np.int64)[:, None]
        k = np.arange(k_bytes, dtype=np.int64)[None, :]
        if sw == "NONE":
            off = (mnb % 16) + (mnb // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo
        elif sw == "128B_BASE32B":
            off = (mnb % 128) + (mnb // 128) * lbo + (k % 4) * 128 + (k // 4) * sbo
        else:
            off = (mnb % w) + (mnb // w) * lbo + (k % 8) * w + (k // 8) * sbo
    else:
        raise DescError(f"{where}: major must be 'K' or 'MN'")
    return np.asarray(swizzle_address(start + off, sw), dtype=np.int64)
