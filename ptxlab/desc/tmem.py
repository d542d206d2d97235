"""Tensor Memory address (32-bit): lane in bits 31..16, column in bits 15..0 (PTX ISA 9.7.16.1.1).

Valid range on sm_100a: lane < 128, column < 512 (PTX ISA 9.7.16.1). CUTLASS keeps a sub-word byte index in
bits 31..30 of SF addresses (copied into the idesc SF IDs); `validate` reports such bits instead of ignoring them.
"""
from __future__ import annotations

from ptxlab.desc.fields import BitLayout, DescError, Decoded, Field

__all__ = ["TMEM_ADDR", "TmemAddr"]

TMEM_ADDR = BitLayout(
    name="tmem_addr",
    nbits=32,
    source="PTX ISA 9.7.16.1.1",
    fields=(
        Field("col", 0, 16, "column (32-bit cell index, 0..511)"),
        Field("lane", 16, 16, "lane (row, 0..127)"),
    ),
)
_WHERE = "(PTX ISA 9.7.16.1: 128 lanes x 512 columns)"


class TmemAddr:
    """Encode / decode / validate / pretty-print a TMEM address."""

    layout = TMEM_ADDR

    @staticmethod
    def encode(lane: int, col: int) -> int:
        word = TMEM_ADDR.pack(dict(lane=lane, col=col))
        errs = TmemAddr.validate(word)
        if errs:
            raise DescError("; ".join(errs), errs)
        return word

    @staticmethod
    def decode(addr: int) -> Decoded:
        d = TMEM_ADDR.unpack(addr)
        lane, col = d["lane"], d["col"]
        if lane >= 128:
            hint = " (bits 31..30 set: CUTLASS SF sub-word index? strip it before addressing)" if lane >> 14 else ""
            d.errors.append(f"tmem_addr.lane: lane {lane} >= 128 {_WHERE}{hint}")
        if col >= 512:
            d.errors.append(f"tmem_addr.col: column {col} >= 512 {_WHERE}")
        return d

    @staticmethod
    def validate(addr: int) -> list[str]:
        return TmemAddr.decode(addr).errors

    @staticmethod
    def pretty(addr: int) -> str:
        d = TmemAddr.decode(addr)
        s = f"tmem address {addr:#010x}: lane {d['lane']}, column {d['col']} (warp quarter {d['lane'] // 32 % 4})"
        return "\n".join([s] + [f"  ERROR: {e}" for e in d.errors])
