"""Decode the hardware ``CUtensorMap`` image that the CuTe DSL's host code encodes itself (without calling
``cuTensorMapEncodeTiled``), so the emulator's TMA can run DSL kernels unmodified. Layout: ptx_docs/tensor_maps.md
"Hardware image (CuTe DSL)".

Sources: the data-format field (bits 71..74, ``TmaDataFormat``) is documented in the DSL's own enum
(``cutlass._mlir.dialects._cute_nvgpu_enum_gen.TmaDataFormat``: "Bits 74-71 of the TMA descriptor"); every other
field was measured on the DSL 4.8.1 encoder (``tools/probes/cute_tmap_probe.py``: rank 2..5, 4 data types, strides
from 128 B to 256 MiB, boxes 8..128, all four swizzles). Not yet checked against a GPU driver's
``cuTensorMapEncodeTiled`` (the probe's ``--driver`` mode does that on a GPU). Only the first 64 bytes are written
by the DSL (the rest is whatever was on its stack); they are the only ones read.

Unknown bits are refused, never guessed: a map with a bit set outside the decoded fields (element strides other
than 1, interleave, NaN fill, ``128B_ATOM_*`` swizzles, strides >= 64 GiB ...) raises a TensorMapError naming the
bits, so a wrong decode cannot pass silently.
"""
from __future__ import annotations

from ptxlab.errors import TensorMapError
from ptxlab.tensormap import EMU_MAGIC, TensorMapSpec, decode_emu, replace_field_emu

__all__ = ["FIELDS", "IGNORED_BITS", "TMA_DATA_FORMAT", "decode_hw", "looks_like_hw", "decode_any", "replace_field",
           "ELEMTYPE"]

# name -> (first bit, width) in the 512-bit little-endian integer of bytes 0..63
FIELDS = {
    "global_address": (0, 64),
    "tiled": (65, 1),                 # set in every DSL map (tile mode)
    "rank_m1": (68, 3),
    "data_format": (71, 4),           # TmaDataFormat (documented by the DSL)
    "swizzle": (77, 3),               # 0 none, 1 32B, 2 64B, 3 128B (measured; 4..6 not seen)
    "stride1": (96, 32), "stride2": (128, 32), "stride3": (160, 32), "stride4": (192, 32),   # bytes >> 4
    "dim0_m1": (256, 32), "dim1_m1": (288, 32), "dim2_m1": (320, 32), "dim3_m1": (352, 32), "dim4_m1": (384, 32),
    "box0_m1": (440, 8), "box1_m1": (448, 8), "box2_m1": (456, 8), "box3_m1": (464, 8), "box4_m1": (472, 8),
}
# Bits set by the DSL whose meaning does not change what a load or store moves: bit 82 is set in every map
# (an L2 promotion / cache hint, presumably), bit 85 when the tensor spans >= 128 KiB.
IGNORED_BITS = (82, 85)
# TmaDataFormat -> ptxlab.tensormap dtype name
TMA_DATA_FORMAT = {
    0: "UINT8", 1: "UINT16", 2: "UINT32", 3: "INT32", 4: "UINT64", 5: "INT64", 6: "FLOAT16", 7: "FLOAT32",
    8: "FLOAT32_FTZ", 9: "FLOAT64", 10: "BFLOAT16", 11: "16U4_ALIGN8B", 12: "16U4_ALIGN16B", 13: "16U6_ALIGN16B",
    14: "TFLOAT32", 15: "TFLOAT32_FTZ",
}
_SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}


def _known_mask() -> int:
    m = 0
    for lo, w in FIELDS.values():
        m |= ((1 << w) - 1) << lo
    for b in IGNORED_BITS:
        m |= 1 << b
    return m


_KNOWN = _known_mask()


def _field(v: int, name: str) -> int:
    lo, w = FIELDS[name]
    return (v >> lo) & ((1 << w) - 1)


def looks_like_hw(raw: bytes) -> bool:
    """True when the tiled-mode bit is set (an emulator image starts with the ASCII magic 'PTXLTMAP')."""
    v = int.from_bytes(bytes(raw)[:64], "little")
    return bool(_field(v, "tiled"))


def decode_hw(raw: bytes) -> TensorMapSpec:
    """The TensorMapSpec of a hardware tensor-map image (validated by ptxlab.tensormap's rules)."""
    raw = bytes(raw)
    if len(raw) != 128:
        raise TensorMapError(f"hardware tensor map: expected 128 bytes, got {len(raw)}")
    v = int.from_bytes(raw[:64], "little")
    if not _field(v, "tiled"):
        raise TensorMapError("hardware tensor map: the tile-mode bit (65) is clear; ptxlab decodes only tiled maps "
                             "encoded like the CuTe DSL's (ptx_docs/tensor_maps.md)")
    unknown = v & ~_KNOWN
    if unknown:
        bits = [i for i in range(512) if unknown >> i & 1]
        raise TensorMapError(f"hardware tensor map: bits {bits} are set, which ptxlab does not decode (element "
                             "strides, interleave, NaN fill, 128B_ATOM swizzles or strides >= 64 GiB); refusing "
                             "rather than guessing (ptx_docs/tensor_maps.md)")
    rank = _field(v, "rank_m1") + 1
    if rank > 5:
        raise TensorMapError(f"hardware tensor map: rank {rank} > 5")
    fmt = _field(v, "data_format")
    sw = _field(v, "swizzle")
    if sw not in _SWIZZLE:
        raise TensorMapError(f"hardware tensor map: swizzle code {sw} is not decoded by ptxlab (only none/32B/64B/128B "
                             "were measured)")
    dims = [_field(v, f"dim{i}_m1") + 1 for i in range(5)]
    box = [_field(v, f"box{i}_m1") + 1 for i in range(5)]
    strides = [_field(v, f"stride{i}") << 4 for i in range(1, 5)]
    for i in range(rank, 5):
        if dims[i] != 1 or box[i] != 1 or (i >= 1 and strides[i - 1]):
            raise TensorMapError(f"hardware tensor map: dimension {i} is set but the rank is {rank}")
    spec = TensorMapSpec.make(TMA_DATA_FORMAT[fmt], _field(v, "global_address"), dims[:rank], strides[:rank - 1],
                              box[:rank], None, "none", _SWIZZLE[sw], "none", "none")
    spec.validate()
    return spec


def decode_any(raw: bytes) -> TensorMapSpec:
    """An emulator image (``dev.tensor_map``, ``cuTensorMapEncodeTiled`` of the driver layer) or a hardware image
    (the CuTe DSL's own encoder)."""
    raw = bytes(raw)
    if raw[:8] == EMU_MAGIC or not looks_like_hw(raw):
        return decode_emu(raw)
    return decode_hw(raw)


# tensormap.replace .elemtype new_val (PTX ISA 9.7.9.28, Table 33; not the CUtensorMapDataType values) -> dtype name
ELEMTYPE = {0: "UINT8", 1: "UINT16", 2: "UINT32", 3: "INT32", 4: "UINT64", 5: "INT64", 6: "FLOAT16", 7: "FLOAT32",
            8: "FLOAT32_FTZ", 9: "FLOAT64", 10: "BFLOAT16", 11: "TFLOAT32", 12: "TFLOAT32_FTZ", 13: "16U4_ALIGN8B",
            14: "16U4_ALIGN16B", 15: "16U6_ALIGN16B"}
_FORMAT_OF = {v: k for k, v in TMA_DATA_FORMAT.items()}
# fields whose encoding ptxlab does not decode: only the value the decoders assume is accepted (a no-op)
_DEFAULT_ONLY = {"element_stride": 1, "interleave_layout": 0, "fill_mode": 0, "swizzle_atomicity": 0}


def _set(v: int, name: str, value: int) -> int:
    lo, w = FIELDS[name]
    if not 0 <= value < (1 << w):
        raise TensorMapError(f"tensormap.replace: {name} value {value} does not fit its {w}-bit field")
    return (v & ~(((1 << w) - 1) << lo)) | (value << lo)


def _replace_hw(raw: bytes, field: str, ord_: int, value: int) -> bytes:
    v = int.from_bytes(raw[:64], "little")
    if field == "global_address":
        if value % 16:
            raise TensorMapError(f"tensormap.replace: global_address 0x{value:x} is not 16-byte aligned")
        v = _set(v, "global_address", value)
    elif field == "rank":
        v = _set(v, "rank_m1", value)
    elif field == "global_dim":
        v = _set(v, f"dim{ord_}_m1", value - 1)
    elif field == "box_dim":
        v = _set(v, f"box{ord_}_m1", value - 1)
    elif field == "global_stride":
        if value % 16:
            raise TensorMapError(f"tensormap.replace: global_stride[{ord_}] = {value} bytes is not a multiple of 16")
        v = _set(v, f"stride{ord_ + 1}", value >> 4)
    elif field == "elemtype":
        v = _set(v, "data_format", _FORMAT_OF[ELEMTYPE[value]])
    elif field == "swizzle_mode":
        v = _set(v, "swizzle", value)
    return v.to_bytes(64, "little") + raw[64:]


def replace_field(raw: bytes, field: str, ord_: int, value: int) -> bytes:
    """The 128 bytes of ``raw`` with one field replaced as ``tensormap.replace.tile.<field>`` does (PTX ISA 9.7.9.28:
    natural units -- dimension sizes in elements, strides in bytes, ``.rank`` zero-based, ``.elemtype`` /
    ``.swizzle_mode`` Table 33 codes), for either image."""
    raw = bytes(raw)
    if raw[:8] == EMU_MAGIC or not looks_like_hw(raw):
        if field == "swizzle_atomicity":      # the emulator image has no such field: its TMA swizzles 16-byte units
            if value != _DEFAULT_ONLY[field]:
                raise TensorMapError(f"tensormap.replace .swizzle_atomicity {value}: ptxlab models only 0 (16-byte "
                                     "swizzle atoms) for this field (ptx_docs/tensor_maps.md)")
            return raw
        return replace_field_emu(raw, field, ord_, value)
    if field in _DEFAULT_ONLY:
        if value != _DEFAULT_ONLY[field]:
            raise TensorMapError(f"tensormap.replace .{field} {value}: ptxlab models only {_DEFAULT_ONLY[field]} "
                                 "for this field (ptx_docs/tensor_maps.md)")
        return raw
    if field == "elemtype" and value not in ELEMTYPE or field == "swizzle_mode" and value not in _SWIZZLE:
        raise TensorMapError(f"tensormap.replace .{field} {value}: not a value ptxlab models (PTX ISA Table 33)")
    return _replace_hw(raw, field, ord_, value)
