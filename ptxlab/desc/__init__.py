"""tcgen05 descriptor codecs: SMEM matrix descriptor, instruction descriptor, TMEM address.

Every layout is one table of fields (`ptxlab.desc.fields.BitLayout`); encode, decode, validate and pretty
all read that table, so they cannot disagree. Illegal values raise `DescError` (a `PtxlabError` and
`ValueError`) whose `.errors` lists every broken rule, each naming the field, the rule and the PTX ISA section.

SMEM matrix descriptor (64-bit, PTX ISA 9.7.16.4.1 Table 40)::

    d = SmemDesc.encode(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", base_offset=0, lbo_mode=0)
    SmemDesc.decode(d)        # Decoded: d["sbo"] == 1024 (bytes), d.codes[...] raw codes, d.errors
    SmemDesc.validate(d)      # list[str], empty when legal (major="K" also rejects 128B_BASE32B)
    SmemDesc.pretty(d)        # text table
    smem_operand_addresses(d, rows=128, k_bytes=32, major="K")   # int64 [rows, k_bytes] swizzled byte addresses
    smem_operand_addresses(d, rows=mn_bytes, k_bytes=k_rows, major="MN")  # [mn_bytes, k_rows]
    tile_desc(base, "K", "128B", elem_bits=4, mn=128, k=256, kblock=1)  # descriptor CUTLASS builds for a tile

swizzle accepts "NONE", "32B", "64B", "128B", "128B_BASE32B" (also "SWIZZLE_128B", "SW128", or a code).
smem_operand_addresses raises DescError for UNCONFIRMED cases: base_offset != 0, lbo_mode = 1.

Instruction descriptor (32-bit, PTX ISA 9.7.16.4.2 Tables 42-44), kinds f16 tf32 f8f6f4 i8 mxf8f6f4 mxf4 mxf4nvf4::

    i = InstrDesc.encode("mxf4nvf4", m=128, n=128)                     # 0x08200480
    i = InstrDesc.encode("f16", 128, 256, a_fmt="BF16", b_fmt="BF16")   # 0x08400490
    info = decode_idesc("mxf4nvf4", i)   # IdescInfo: m n k a_fmt b_fmt d_fmt scale_fmt negate_a/b a_major/b_major
                                         # sfa_id sfb_id sparse sparse_id2 saturate max_shift k_size; raises if illegal
    InstrDesc.validate(kind, i, cta_group=1, ws=False, block=None)      # list[str]; block = 16/32 if known
    InstrDesc.pretty(kind, i)

TMEM address (lane bits 31..16, column 15..0)::

    TmemAddr.encode(lane=32, col=64); TmemAddr.decode(a)["lane"]; TmemAddr.validate(a); TmemAddr.pretty(a)

CLI: `python -m ptxlab.desc.cli smem 0x4000404000010040` (see `ptxlab.desc.cli.main`).
"""
from __future__ import annotations

from ptxlab.desc.canonical import tile_desc, tile_desc_fields
from ptxlab.desc.fields import BitLayout, DescError, Decoded, Field
from ptxlab.desc.idesc import (
    BLOCK_SCALED,
    IDESC_LAYOUTS,
    KINDS,
    IdescInfo,
    InstrDesc,
    decode_idesc,
    validate_idesc,
)
from ptxlab.desc.smem import SMEM_DESC, SmemDesc, smem_operand_addresses, swizzle_address
from ptxlab.desc.tmem import TMEM_ADDR, TmemAddr

__all__ = [
    "BitLayout",
    "BLOCK_SCALED",
    "Decoded",
    "DescError",
    "Field",
    "IDESC_LAYOUTS",
    "IdescInfo",
    "InstrDesc",
    "KINDS",
    "SMEM_DESC",
    "SmemDesc",
    "TMEM_ADDR",
    "TmemAddr",
    "decode_idesc",
    "smem_operand_addresses",
    "swizzle_address",
    "tile_desc",
    "tile_desc_fields",
    "validate_idesc",
]
