"""TMA tensor maps: the inputs of cuTensorMapEncodeTiled, their validation, and the emulator's 128-byte encoding.

All arrays are innermost dimension first (dim 0 = contiguous), as in the driver API.
Rules and the emulator layout are documented in ptx_docs/tensor_maps.md.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ptxlab.errors import TensorMapError

__all__ = [
    "DTYPE_CODES",
    "SWIZZLE_CODES",
    "INTERLEAVE_CODES",
    "L2_PROMOTION_CODES",
    "OOB_FILL_CODES",
    "TensorMapSpec",
    "TensorMap",
    "normalize_dtype",
    "validate",
    "encode_emu",
    "decode_emu",
    "EMU_MAGIC",
    "EMU_VERSION",
    "MAX_BOX_BYTES",
]

# CUtensorMapDataType (cuda.h); values checked against cuda.bindings.driver.
DTYPE_CODES: dict[str, int] = {
    "UINT8": 0, "UINT16": 1, "UINT32": 2, "INT32": 3, "UINT64": 4, "INT64": 5,
    "FLOAT16": 6, "FLOAT32": 7, "FLOAT64": 8, "BFLOAT16": 9, "FLOAT32_FTZ": 10,
    "TFLOAT32": 11, "TFLOAT32_FTZ": 12,
    "16U4_ALIGN8B": 13, "16U4_ALIGN16B": 14, "16U6_ALIGN16B": 15,
}
# Bits per element in global memory (packed types: per 4/6-bit value).
_GMEM_BITS: dict[str, int] = {
    "UINT8": 8, "UINT16": 16, "UINT32": 32, "INT32": 32, "UINT64": 64, "INT64": 64,
    "FLOAT16": 16, "FLOAT32": 32, "FLOAT64": 64, "BFLOAT16": 16, "FLOAT32_FTZ": 32,
    "TFLOAT32": 32, "TFLOAT32_FTZ": 32,
    "16U4_ALIGN8B": 4, "16U4_ALIGN16B": 4, "16U6_ALIGN16B": 6,
}
# Bits per element in shared memory: ALIGN16B types land as 16 values per 16 bytes (gaps included).
_SMEM_BITS: dict[str, int] = {**_GMEM_BITS, "16U4_ALIGN16B": 8, "16U6_ALIGN16B": 8}
# cuTensorMapEncodeTiled's box-size limit (not in the driver docs; measured on an H100, driver 580.159.04,
# 2026-11-22, tools/probes/tmap_driver_probe.py, 0 of 23,770 encodes misclassified): the driver rejects
# (CUDA_ERROR_INVALID_VALUE) a map whose prod_i floor(box[i] / element_strides[i]) * element bytes exceeds 228 KiB,
# the shared memory of one SM. Integer division (not the ceil TMA loads) and dim 0's element stride included.
MAX_BOX_BYTES = 228 * 1024
FLOAT_DTYPES = frozenset({"FLOAT16", "FLOAT32", "FLOAT64", "BFLOAT16", "FLOAT32_FTZ", "TFLOAT32", "TFLOAT32_FTZ"})
PACKED_DTYPES = frozenset({"16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B"})
ALIGN16B_DTYPES = frozenset({"16U4_ALIGN16B", "16U6_ALIGN16B"})

SWIZZLE_CODES: dict[str, int] = {
    "none": 0, "32B": 1, "64B": 2, "128B": 3,
    "128B_ATOM_32B": 4, "128B_ATOM_32B_FLIP_8B": 5, "128B_ATOM_64B": 6,
}
SWIZZLE_SPAN: dict[str, int] = {
    "none": 0, "32B": 32, "64B": 64, "128B": 128,
    "128B_ATOM_32B": 128, "128B_ATOM_32B_FLIP_8B": 128, "128B_ATOM_64B": 128,
}
INTERLEAVE_CODES: dict[str, int] = {"none": 0, "16B": 1, "32B": 2}
L2_PROMOTION_CODES: dict[str, int] = {"none": 0, "64B": 1, "128B": 2, "256B": 3}
OOB_FILL_CODES: dict[str, int] = {"none": 0, "nan": 1}

# Swizzle modes the driver accepts for the ALIGN16B packed types (loads; 16U6 also allows ATOM_64B for stores).
_ALIGN16B_SWIZZLES: dict[str, frozenset[str]] = {
    "16U4_ALIGN16B": frozenset({"none", "128B", "128B_ATOM_32B"}),
    "16U6_ALIGN16B": frozenset({"none", "128B", "128B_ATOM_32B", "128B_ATOM_64B"}),
}

_NUMPY_TO_TMA: dict[str, str] = {
    "uint8": "UINT8", "int8": "UINT8", "uint16": "UINT16", "int16": "UINT16",
    "uint32": "UINT32", "int32": "INT32", "uint64": "UINT64", "int64": "INT64",
    "float16": "FLOAT16", "float32": "FLOAT32", "float64": "FLOAT64", "bfloat16": "BFLOAT16",
    # 8-bit floats are copied as bytes by TMA (there is no FP8 code; CUTLASS uses UINT8).
    "float8_e4m3fn": "UINT8", "float8_e5m2": "UINT8", "float8_e8m0fnu": "UINT8",
}


def normalize_dtype(dtype: Any) -> str:
    """Map a numpy dtype/type or a type-name string ("16U4_ALIGN8B", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16") to a key of DTYPE_CODES."""
    if isinstance(dtype, str):
        name = dtype.strip().upper().removeprefix("CU_TENSOR_MAP_DATA_TYPE_")
        if name in DTYPE_CODES:
            return name
        key = dtype.strip().lower()
    else:
        try:
            key = np.dtype(dtype).name
        except TypeError as exc:
            raise TensorMapError(
                f"tensor map dtype {dtype!r} is neither a numpy dtype nor a type name; "
                f"use a numpy type or one of {sorted(DTYPE_CODES)}"
            ) from exc
    if key in _NUMPY_TO_TMA:
        return _NUMPY_TO_TMA[key]
    if key.startswith("float4") or key.startswith("float6"):
        raise TensorMapError(
            f"tensor map dtype {dtype!r}: numpy stores one {key} per byte, TMA wants packed values; "
            "pack two e2m1 per byte into a uint8 buffer and use dtype='16U4_ALIGN8B' (dims count 4-bit values)"
        )
    raise TensorMapError(f"tensor map dtype {dtype!r} has no CUtensorMapDataType; use one of {sorted(DTYPE_CODES)}")


def _norm_choice(value: Any, table: dict[str, int], what: str) -> str:
    """Normalize a swizzle/interleave/l2/oob name ("128B", "none", "NONE", "nan", "NAN_REQUEST_ZERO_FMA")."""
    if isinstance(value, str):
        v = value.strip()
        for key in table:
            if v.upper() == key.upper():
                return key
        up = v.upper()
        for prefix in ("CU_TENSOR_MAP_SWIZZLE_", "CU_TENSOR_MAP_INTERLEAVE_", "CU_TENSOR_MAP_L2_PROMOTION_L2_",
                       "CU_TENSOR_MAP_L2_PROMOTION_", "CU_TENSOR_MAP_FLOAT_OOB_FILL_", "L2_"):
            up = up.removeprefix(prefix)
        if up == "NAN_REQUEST_ZERO_FMA":
            up = "NAN"
        for key in table:
            if up == key.upper():
                return key
    raise TensorMapError(f"tensor map {what} {value!r} is not one of {list(table)}")


@dataclass(frozen=True)
class TensorMapSpec:
    """Every input of cuTensorMapEncodeTiled, innermost dimension first; strides in bytes for dims 1..rank-1."""

    dtype: str
    rank: int
    global_address: int
    global_shape: tuple[int, ...]
    global_strides: tuple[int, ...]
    box: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: str = "none"
    swizzle: str = "none"
    l2_promotion: str = "none"
    oob_fill: str = "none"

    @property
    def elem_bits(self) -> int:
        """Bits per element in global memory (4 or 6 for the packed types)."""
        return _GMEM_BITS[self.dtype]

    @property
    def smem_elem_bits(self) -> int:
        """Bits per element once landed in shared memory (8 for the ALIGN16B types, whose gaps are kept)."""
        return _SMEM_BITS[self.dtype]

    @property
    def box_inner_bytes(self) -> int:
        """Bytes of one box row (dim 0) in shared memory."""
        return self.box[0] * self.smem_elem_bits // 8

    @property
    def box_bytes(self) -> int:
        """Bytes the box occupies in shared memory (= TMA complete_tx bytes for a full load)."""
        n = self.box_inner_bytes
        for b, e in zip(self.box[1:], self.element_strides[1:]):
            n *= -(-b // e)
        return n

    @property
    def driver_box_bytes(self) -> int:
        """The box size cuTensorMapEncodeTiled checks against MAX_BOX_BYTES: prod floor(box[i] / element_strides[i])
        elements (integer division on every dim, dim 0 included) x element bytes in SMEM. Not the bytes a load
        writes (``box_bytes``: ceil on dims >= 1, dim 0 ignores its stride); measured on an H100, see MAX_BOX_BYTES."""
        n = 1
        for b, e in zip(self.box, self.element_strides):
            n *= b // e
        return n * self.smem_elem_bits // 8

    @classmethod
    def make(
        cls,
        dtype: Any,
        global_address: int,
        global_shape: Sequence[int],
        global_strides: Optional[Sequence[int]],
        box: Sequence[int],
        element_strides: Optional[Sequence[int]] = None,
        interleave: Any = "none",
        swizzle: Any = "none",
        l2_promotion: Any = "none",
        oob_fill: Any = "none",
    ) -> "TensorMapSpec":
        """Build a spec with normalized names (not yet validated); strides=None means densely packed rows."""
        name = normalize_dtype(dtype)
        shape = tuple(int(d) for d in global_shape)
        rank = len(shape)
        if global_strides is None:
            strides: list[int] = []
            acc = (shape[0] * _GMEM_BITS[name] + 7) // 8 if rank else 0
            for d in shape[1:]:
                strides.append(acc)
                acc *= d
            global_strides = strides
        es = tuple(int(e) for e in element_strides) if element_strides is not None else (1,) * rank
        return cls(
            dtype=name,
            rank=rank,
            global_address=int(global_address),
            global_shape=shape,
            global_strides=tuple(int(s) for s in global_strides),
            box=tuple(int(b) for b in box),
            element_strides=es,
            interleave=_norm_choice(interleave, INTERLEAVE_CODES, "interleave"),
            swizzle=_norm_choice(swizzle, SWIZZLE_CODES, "swizzle"),
            l2_promotion=_norm_choice(l2_promotion, L2_PROMOTION_CODES, "l2_promotion"),
            oob_fill=_norm_choice(oob_fill, OOB_FILL_CODES, "oob_fill"),
        )

    def validate(self) -> "TensorMapSpec":
        """Check the cuTensorMapEncodeTiled rules; raise TensorMapError naming the rule. Returns self."""
        validate(self)
        return self

    def gmem_extent(self) -> int:
        """Bytes from global_address to one past the last element the map can address."""
        end = (self.global_shape[0] * self.elem_bits + 7) // 8
        for d, s in zip(self.global_shape[1:], self.global_strides):
            end += (d - 1) * s
        return end


def _fail(msg: str) -> None:
    raise TensorMapError(f"tensor map: {msg}")


def validate(spec: TensorMapSpec) -> None:
    """Apply the documented cuTensorMapEncodeTiled requirements (see ptx_docs/tensor_maps.md)."""
    s = spec
    if s.dtype not in DTYPE_CODES:
        _fail(f"dtype {s.dtype!r} is not a CUtensorMapDataType; use one of {sorted(DTYPE_CODES)}")
    for what, value, table in (("interleave", s.interleave, INTERLEAVE_CODES), ("swizzle", s.swizzle, SWIZZLE_CODES),
                               ("l2_promotion", s.l2_promotion, L2_PROMOTION_CODES),
                               ("oob_fill", s.oob_fill, OOB_FILL_CODES)):
        if value not in table:
            _fail(f"{what} {value!r} is not one of {list(table)}")
    interleaved = s.interleave != "none"
    # rank
    if not 1 <= s.rank <= 5:
        _fail(f"rank {s.rank} must be 1..5")
    if interleaved and s.rank < 3:
        _fail(f"rank {s.rank} with interleave={s.interleave}: interleaved maps need rank >= 3")
    for name, arr, want in (("global_shape", s.global_shape, s.rank), ("global_strides", s.global_strides, s.rank - 1),
                            ("box", s.box, s.rank), ("element_strides", s.element_strides, s.rank)):
        if len(arr) != want:
            _fail(f"{name} has {len(arr)} entries but rank {s.rank} needs {want} (innermost dimension first)")
    # address
    need_32 = s.interleave == "32B" or s.dtype in ALIGN16B_DTYPES
    addr_align = 32 if need_32 else 16
    if s.global_address % addr_align:
        _fail(f"global_address 0x{s.global_address:x} must be {addr_align}-byte aligned"
              f"{' (interleave 32B or ALIGN16B dtype)' if need_32 else ''}")
    # global dims
    for i, d in enumerate(s.global_shape):
        if not 1 <= d <= 2**32:
            _fail(f"global_shape[{i}] = {d} must be in 1..2^32")
    if s.dtype in ALIGN16B_DTYPES and s.global_shape[0] % 128:
        _fail(f"global_shape[0] = {s.global_shape[0]} must be a multiple of 128 for {s.dtype}")
    if s.dtype == "16U4_ALIGN8B" and s.global_shape[0] % 2:
        _fail(f"global_shape[0] = {s.global_shape[0]} must be even for 16U4_ALIGN8B (it counts 4-bit values)")
    # strides
    stride_align = 32 if need_32 else 16
    # 0 is accepted (H100 driver 580.159.04, 2026-11-24, tools/probes/tmap_stride0_probe.py: 0-byte strides on
    # dims of size 1 and of size > 1, ranks 2..5, 5 dtypes, all accepted; TMA then reads the same data for every
    # coordinate of that dim). CUTLASS passes 0 for a size-1 batch mode (make_cute_packed_stride with L == 1).
    for i, st in enumerate(s.global_strides):
        if st % stride_align or st < 0:
            _fail(f"global_strides[{i}] (dim {i + 1}) = {st} bytes must be a multiple of {stride_align} (0 allowed)")
        if st >= 2**40:
            _fail(f"global_strides[{i}] (dim {i + 1}) = {st} bytes must be < 2^40")
    # box
    for i, b in enumerate(s.box):
        if not 1 <= b <= 256:
            _fail(f"box[{i}] = {b} must be in 1..256")
    inner_bits = s.box[0] * s.smem_elem_bits
    if not interleaved and inner_bits % (16 * 8):
        _fail(f"box[0] * element size = {inner_bits / 8:g} bytes must be a multiple of 16 (without interleave)")
    if s.dtype in ALIGN16B_DTYPES and s.box[0] != 128:
        _fail(f"box[0] = {s.box[0]} must be 128 for {s.dtype}")
    # element strides
    for i, e in enumerate(s.element_strides):
        if not 1 <= e <= 8:
            _fail(f"element_strides[{i}] = {e} must be in 1..8")
    # interleave / swizzle
    if s.interleave == "32B" and s.swizzle != "32B":
        _fail(f"interleave 32B requires swizzle 32B, got swizzle {s.swizzle}")
    if not interleaved and s.swizzle != "none":
        span = SWIZZLE_SPAN[s.swizzle]
        if inner_bits > span * 8:
            _fail(f"inner box {inner_bits // 8} bytes (box[0] * element size) exceeds the {s.swizzle} swizzle span "
                  f"of {span} bytes; shrink box[0] to <= {span * 8 // s.smem_elem_bits} elements")
    if s.dtype == "16U6_ALIGN16B" and interleaved:
        _fail("16U6_ALIGN16B requires interleave none")
    if s.dtype in _ALIGN16B_SWIZZLES and s.swizzle not in _ALIGN16B_SWIZZLES[s.dtype]:
        _fail(f"{s.dtype} supports only swizzle {sorted(_ALIGN16B_SWIZZLES[s.dtype])}, got {s.swizzle}")
    # box size (driver limit found by measurement; applied where measured: unpacked dtypes, interleave none)
    if not interleaved and s.dtype not in PACKED_DTYPES and s.driver_box_bytes > MAX_BOX_BYTES:
        es = "" if all(e == 1 for e in s.element_strides) else \
            f" / element_strides {list(s.element_strides)} (integer division)"
        _fail(f"box {list(s.box)}{es} = {s.driver_box_bytes} bytes exceeds the {MAX_BOX_BYTES}-byte (228 KiB) box "
              "limit of cuTensorMapEncodeTiled (CUDA_ERROR_INVALID_VALUE; not in the driver docs, measured on an H100 "
              "with driver 580.159.04, ptx_docs/tensor_maps.md rule 16); use a smaller box or several loads")
    # oob fill
    if s.oob_fill == "nan" and s.dtype not in FLOAT_DTYPES:
        _fail(f"oob_fill 'nan' (NAN_REQUEST_ZERO_FMA) needs a floating-point dtype, got {s.dtype}; use oob_fill='none'")


# ---------------------------------------------------------------------------------------------------------------
# Emulator encoding: a self-contained 128-byte little-endian image (layout table in ptx_docs/tensor_maps.md).
EMU_MAGIC = b"PTXLTMAP"
EMU_VERSION = 1
_HDR = struct.Struct("<8sHBBBBBBQ")      # magic, version, dtype, rank, interleave, swizzle, l2, oob, address  (24 B)
_DIMS = struct.Struct("<5Q")             # global_shape                                                   (40 B) @24
_STRIDES = struct.Struct("<4Q")          # global_strides (dims 1..4)                                     (32 B) @64
_BOX = struct.Struct("<5H")              # box                                                            (10 B) @96
_ESTR = struct.Struct("<5B")             # element_strides                                                ( 5 B) @106
_CRC_OFF = 124                           # u32 CRC-32 of bytes [0, 124)                                    @124


def _code_to_name(table: dict[str, int], code: int, what: str) -> str:
    for k, v in table.items():
        if v == code:
            return k
    raise TensorMapError(f"emulator tensor map: unknown {what} code {code}; the 128 bytes are corrupt")


def encode_emu(spec: TensorMapSpec, check: bool = True) -> bytes:
    """Validate spec (unless ``check=False``: an intermediate state of in-kernel ``tensormap.replace`` edits, checked
    when a TMA uses it) and pack it into the emulator's 128-byte tensor map image."""
    if check:
        validate(spec)
    buf = bytearray(128)
    _HDR.pack_into(buf, 0, EMU_MAGIC, EMU_VERSION, DTYPE_CODES[spec.dtype], spec.rank,
                   INTERLEAVE_CODES[spec.interleave], SWIZZLE_CODES[spec.swizzle],
                   L2_PROMOTION_CODES[spec.l2_promotion], OOB_FILL_CODES[spec.oob_fill], spec.global_address)
    pad = lambda xs, n: tuple(xs) + (0,) * (n - len(xs))  # noqa: E731
    _DIMS.pack_into(buf, 24, *pad(spec.global_shape, 5))
    _STRIDES.pack_into(buf, 64, *pad(spec.global_strides, 4))
    _BOX.pack_into(buf, 96, *pad(spec.box, 5))
    _ESTR.pack_into(buf, 106, *pad(spec.element_strides, 5))
    struct.pack_into("<I", buf, _CRC_OFF, zlib.crc32(bytes(buf[:_CRC_OFF])))
    return bytes(buf)


def decode_emu(raw: bytes) -> TensorMapSpec:
    """Unpack an emulator tensor map image; raise TensorMapError if it is not one (or is corrupt)."""
    raw = bytes(raw)
    if len(raw) != 128:
        raise TensorMapError(f"emulator tensor map: expected 128 bytes, got {len(raw)}")
    magic, version, dt, rank, il, sw, l2, oob, addr = _HDR.unpack_from(raw, 0)
    if magic != EMU_MAGIC:
        raise TensorMapError(
            f"not an emulator tensor map (was it encoded by the cuda backend?): magic {magic!r} != {EMU_MAGIC!r}; "
            "build tensor maps with the same device that runs the kernel (dev.tensor_map)")
    if version != EMU_VERSION:
        raise TensorMapError(f"emulator tensor map version {version} is not supported (expected {EMU_VERSION})")
    (crc,) = struct.unpack_from("<I", raw, _CRC_OFF)
    if crc != zlib.crc32(raw[:_CRC_OFF]):
        raise TensorMapError("emulator tensor map: checksum mismatch; the 128 bytes were modified after encoding")
    if not 1 <= rank <= 5:
        raise TensorMapError(f"emulator tensor map: rank {rank} out of range; the 128 bytes are corrupt")
    spec = TensorMapSpec(
        dtype=_code_to_name(DTYPE_CODES, dt, "dtype"),
        rank=rank,
        global_address=addr,
        global_shape=_DIMS.unpack_from(raw, 24)[:rank],
        global_strides=_STRIDES.unpack_from(raw, 64)[: rank - 1],
        box=_BOX.unpack_from(raw, 96)[:rank],
        element_strides=_ESTR.unpack_from(raw, 106)[:rank],
        interleave=_code_to_name(INTERLEAVE_CODES, il, "interleave"),
        swizzle=_code_to_name(SWIZZLE_CODES, sw, "swizzle"),
        l2_promotion=_code_to_name(L2_PROMOTION_CODES, l2, "l2_promotion"),
        oob_fill=_code_to_name(OOB_FILL_CODES, oob, "oob_fill"),
    )
    validate(spec)
    return spec


@dataclass(frozen=True)
class TensorMap:
    """What dev.tensor_map returns: the spec and the 128-byte by-value kernel parameter (driver or emu bytes)."""

    spec: TensorMapSpec
    raw: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if len(self.raw) != 128:
            raise TensorMapError(f"TensorMap.raw must be 128 bytes (a CUtensorMap), got {len(self.raw)}")


# --- tensormap.replace on an emulator image (PTX ISA 9.7.9.28; ptxlab/tensormap_hw.py does hardware images) ---
_ELEMTYPE = ["UINT8", "UINT16", "UINT32", "INT32", "UINT64", "INT64", "FLOAT16", "FLOAT32", "FLOAT32_FTZ",
             "FLOAT64", "BFLOAT16", "TFLOAT32", "TFLOAT32_FTZ", "16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B"]
_SWIZZLE = ["none", "32B", "64B", "128B"]
_INTERLEAVE = ["none", "16B", "32B"]
_FILL = ["none", "nan"]
# (byte offset, struct format) of each field in the image; per-ordinal fields: base offset and element size
_FIELD = {"global_address": (16, "<Q"), "rank": (11, "<B"), "elemtype": (10, "<B"), "interleave_layout": (12, "<B"),
          "swizzle_mode": (13, "<B"), "fill_mode": (15, "<B"), "global_dim": (24, "<Q"), "global_stride": (64, "<Q"),
          "box_dim": (96, "<H"), "element_stride": (106, "<B")}


def _code(field: str, v: int) -> int:
    table = {"elemtype": (_ELEMTYPE, DTYPE_CODES), "swizzle_mode": (_SWIZZLE, SWIZZLE_CODES),
             "interleave_layout": (_INTERLEAVE, INTERLEAVE_CODES), "fill_mode": (_FILL, OOB_FILL_CODES)}[field]
    names, codes = table
    if not 0 <= v < len(names):
        raise TensorMapError(f".{field} value {v} is not in the PTX ISA's Table 33 (or not emulated)")
    return codes[names[v]]


def replace_field_emu(raw: bytes, field: str, ordinal: int, value: int) -> bytes:
    """tensormap.replace (PTX ISA 9.7.9.28) on an emulator image: the 128-byte image with ``field`` (element ``ordinal`` of the per-dimension fields) set to ``value``."""
    buf = bytearray(raw)
    off, fmt = _FIELD[field]
    if field in ("global_dim", "global_stride", "box_dim", "element_stride"):
        limit = 4 if field == "global_stride" else 5
        if not 0 <= ordinal < limit:
            raise TensorMapError(f".{field} ordinal {ordinal} out of range 0..{limit - 1}")
        off += ordinal * struct.calcsize(fmt)
    if field == "rank":
        value += 1                       # the field is zero-based (PTX ISA 9.7.9.28)
    elif field in ("elemtype", "swizzle_mode", "interleave_layout", "fill_mode"):
        value = _code(field, value)
    struct.pack_into(fmt, buf, off, value & ((1 << (8 * struct.calcsize(fmt))) - 1))
    struct.pack_into("<I", buf, 124, zlib.crc32(bytes(buf[:124])))
    return bytes(buf)
