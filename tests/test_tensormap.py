"""Tensor map spec: one valid and one invalid case per cuTensorMapEncodeTiled rule, emu encode/decode round trips."""
from __future__ import annotations

import dataclasses
import gzip
import json
import math
import struct
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ptxlab.errors import TensorMapError
from ptxlab.tensormap import (DTYPE_CODES, EMU_MAGIC, MAX_BOX_BYTES, TensorMap, TensorMapSpec, decode_emu,
                              encode_emu, normalize_dtype, validate)

BASE = dict(dtype="UINT8", global_address=0x10000, global_shape=[256, 64], global_strides=[256], box=[128, 32])


def spec(**kw) -> TensorMapSpec:
    args = {**BASE, **kw}
    return TensorMapSpec.make(args.pop("dtype"), args.pop("global_address"), args.pop("global_shape"),
                              args.pop("global_strides"), args.pop("box"), **args)


_BIG3, _BIG3_STRIDES = [4096, 256, 256], [4096, 1 << 20]      # the H100 box-limit sweeps' tensor

# (rule, valid overrides, invalid overrides, message fragment)
RULES = [
    ("rank 1..5", dict(global_shape=[16], global_strides=[], box=[16]),
     dict(global_shape=[16] * 6, global_strides=[16] * 5, box=[16] * 6), "rank 6"),
    ("rank >= 3 when interleaved", dict(global_shape=[8, 4, 4], global_strides=[16, 64], box=[8, 4, 4], interleave="16B"),
     dict(interleave="16B"), "rank >= 3"),
    ("array lengths match rank", dict(), dict(global_strides=[256, 256]), "global_strides has 2 entries"),
    ("address 16-B aligned", dict(global_address=0x10010), dict(global_address=0x10008), "16-byte aligned"),
    ("address 32-B aligned for interleave 32B",
     dict(global_address=0x10020, global_shape=[16, 4, 4], global_strides=[32, 128], box=[16, 4, 4], interleave="32B",
          swizzle="32B"),
     dict(global_address=0x10010, global_shape=[16, 4, 4], global_strides=[32, 128], box=[16, 4, 4], interleave="32B",
          swizzle="32B"), "32-byte aligned"),
    ("address 32-B aligned for ALIGN16B types",
     dict(dtype="16U4_ALIGN16B", global_address=0x10020, global_shape=[256, 4], global_strides=[128], box=[128, 4]),
     dict(dtype="16U4_ALIGN16B", global_address=0x10010, global_shape=[256, 4], global_strides=[128], box=[128, 4]),
     "32-byte aligned"),
    ("dims 1..2^32", dict(global_shape=[256, 2**32]), dict(global_shape=[256, 2**32 + 1]), "1..2^32"),
    ("dims non-zero", dict(global_shape=[256, 1]), dict(global_shape=[256, 0]), "1..2^32"),
    ("16U4_ALIGN8B dim0 even", dict(dtype="16U4_ALIGN8B", global_shape=[512, 4], box=[256, 4]),
     dict(dtype="16U4_ALIGN8B", global_shape=[511, 4], box=[256, 4]), "must be even"),
    ("ALIGN16B dim0 multiple of 128",
     dict(dtype="16U6_ALIGN16B", global_address=0x10020, global_shape=[384, 4], global_strides=[288], box=[128, 4]),
     dict(dtype="16U6_ALIGN16B", global_address=0x10020, global_shape=[320, 4], global_strides=[288], box=[128, 4]),
     "multiple of 128"),
    ("strides multiple of 16", dict(global_strides=[272]), dict(global_strides=[264]), "multiple of 16"),
    ("strides multiple of 32 for ALIGN16B",
     dict(dtype="16U4_ALIGN16B", global_address=0x10020, global_shape=[256, 4], global_strides=[160], box=[128, 4]),
     dict(dtype="16U4_ALIGN16B", global_address=0x10020, global_shape=[256, 4], global_strides=[144], box=[128, 4]),
     "multiple of 32"),
    ("strides < 2^40", dict(global_strides=[2**40 - 16]), dict(global_strides=[2**40]), "< 2^40"),
    ("box 1..256", dict(global_shape=[256, 300], box=[16, 256]), dict(global_shape=[256, 300], box=[16, 257]),
     "1..256"),
    ("box non-zero", dict(box=[16, 1]), dict(box=[16, 0]), "1..256"),
    ("inner box bytes multiple of 16", dict(dtype=np.float16, box=[24, 8]), dict(dtype=np.float16, box=[20, 8]),
     "multiple of 16"),
    ("inner box bytes ignore rule when interleaved",
     dict(global_shape=[8, 4, 4], global_strides=[16, 64], box=[6, 4, 4], interleave="16B"),
     dict(global_shape=[8, 4, 4], global_strides=[16, 64], box=[6, 4, 4]), "multiple of 16"),
    ("ALIGN16B box[0] == 128",
     dict(dtype="16U4_ALIGN16B", global_address=0x10020, global_shape=[256, 4], global_strides=[128], box=[128, 4]),
     dict(dtype="16U4_ALIGN16B", global_address=0x10020, global_shape=[256, 4], global_strides=[128], box=[64, 4]),
     "must be 128"),
    ("element strides 1..8", dict(element_strides=[1, 8]), dict(element_strides=[1, 9]), "1..8"),
    ("element strides non-zero", dict(element_strides=[1, 1]), dict(element_strides=[1, 0]), "1..8"),
    ("interleave 32B needs swizzle 32B",
     dict(global_shape=[16, 4, 4], global_strides=[32, 128], box=[16, 4, 4], interleave="32B", swizzle="32B"),
     dict(global_shape=[16, 4, 4], global_strides=[32, 128], box=[16, 4, 4], interleave="32B", swizzle="64B"),
     "requires swizzle 32B"),
    ("inner box <= 32 B for swizzle 32B", dict(box=[32, 8], swizzle="32B"), dict(box=[48, 8], swizzle="32B"),
     "swizzle span"),
    ("inner box <= 64 B for swizzle 64B", dict(box=[64, 8], swizzle="64B"), dict(box=[80, 8], swizzle="64B"),
     "swizzle span"),
    ("inner box <= 128 B for swizzle 128B", dict(box=[128, 8], swizzle="128B"), dict(box=[144, 8], swizzle="128B"),
     "swizzle span"),
    ("inner box <= 128 B for 128B atoms", dict(box=[128, 8], swizzle="128B_ATOM_64B"),
     dict(box=[144, 8], swizzle="128B_ATOM_32B_FLIP_8B"), "swizzle span"),
    ("16U4_ALIGN16B swizzle subset",
     dict(dtype="16U4_ALIGN16B", global_address=0x10020, global_shape=[256, 4], global_strides=[128], box=[128, 4],
          swizzle="128B_ATOM_32B"),
     dict(dtype="16U4_ALIGN16B", global_address=0x10020, global_shape=[256, 4], global_strides=[128], box=[128, 4],
          swizzle="128B_ATOM_64B"), "supports only swizzle"),
    ("16U6_ALIGN16B needs interleave none",
     dict(dtype="16U6_ALIGN16B", global_address=0x10020, global_shape=[128, 4, 4], global_strides=[96, 384],
          box=[128, 4, 4]),
     dict(dtype="16U6_ALIGN16B", global_address=0x10020, global_shape=[128, 4, 4], global_strides=[96, 384],
          box=[128, 4, 4], interleave="16B"), "interleave none"),
    ("oob NaN fill only for floats", dict(dtype=np.float32, box=[32, 8], oob_fill="nan"),
     dict(dtype="UINT32", box=[32, 8], oob_fill="nan"), "floating-point"),
    ("oob NaN fill not for packed types", dict(dtype="BFLOAT16", box=[64, 8], oob_fill="nan"),
     dict(dtype="16U4_ALIGN8B", global_shape=[512, 64], box=[64, 8], oob_fill="nan"), "floating-point"),
    # rule 16, the driver's box limit (H100 driver 580.159.04, 2026-11-22): every pair below was encoded there, the
    # valid case accepted and the invalid one rejected (CUDA_ERROR_INVALID_VALUE)
    ("box bytes <= 228 KiB", dict(global_shape=_BIG3, global_strides=_BIG3_STRIDES, box=[16, 64, 228]),
     dict(global_shape=_BIG3, global_strides=_BIG3_STRIDES, box=[16, 64, 229]), "228 KiB"),
    ("box bytes <= 228 KiB, rank 2 FLOAT64",
     dict(dtype=np.float64, global_shape=[4096, 256], global_strides=[32768], box=[256, 114]),
     dict(dtype=np.float64, global_shape=[4096, 256], global_strides=[32768], box=[256, 115]), "228 KiB"),
    ("box limit divides by element strides, rounding down",
     dict(global_shape=_BIG3, global_strides=_BIG3_STRIDES, box=[256, 256, 15], element_strides=[1, 1, 4]),
     dict(global_shape=_BIG3, global_strides=_BIG3_STRIDES, box=[256, 256, 16], element_strides=[1, 1, 4]),
     "228 KiB"),
    ("box limit counts dim 0's element stride",
     dict(global_shape=[1, 1, 1], global_strides=[16, 16], box=[16, 70, 209], element_strides=[2, 1, 1]),
     dict(global_shape=[1, 1, 1], global_strides=[16, 16], box=[16, 70, 209]), "228 KiB"),
]


@pytest.mark.parametrize("rule,good,bad,msg", RULES, ids=[r[0] for r in RULES])
def test_rule_valid_and_invalid(rule, good, bad, msg):
    s = spec(**good)
    assert s.validate() is s
    with pytest.raises(TensorMapError, match=msg.replace("^", r"\^").replace("(", r"\(")):
        spec(**bad).validate()


def test_unknown_names_rejected():
    with pytest.raises(TensorMapError, match="swizzle"):
        spec(swizzle="16B")
    with pytest.raises(TensorMapError, match="interleave"):
        spec(interleave="64B")
    with pytest.raises(TensorMapError, match="no CUtensorMapDataType"):
        normalize_dtype(np.complex64)
    with pytest.raises(TensorMapError, match="16U4_ALIGN8B"):
        normalize_dtype(ml_dtypes.float4_e2m1fn)
    with pytest.raises(TensorMapError, match="not a CUtensorMapDataType"):
        validate(dataclasses.replace(spec(), dtype="INT8"))


def test_normalize_dtype():
    assert normalize_dtype(np.uint8) == "UINT8"
    assert normalize_dtype(np.dtype("float16")) == "FLOAT16"
    assert normalize_dtype(ml_dtypes.bfloat16) == "BFLOAT16"
    assert normalize_dtype(ml_dtypes.float8_e4m3fn) == "UINT8"
    assert normalize_dtype("16u4_align8b") == "16U4_ALIGN8B"
    assert normalize_dtype("CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ") == "TFLOAT32_FTZ"
    assert normalize_dtype("float32") == "FLOAT32"
    s = spec(swizzle="CU_TENSOR_MAP_SWIZZLE_128B", l2_promotion="L2_256B", oob_fill="NONE")
    assert (s.swizzle, s.l2_promotion, s.oob_fill) == ("128B", "256B", "none")


def test_sizes():
    s = spec(dtype="16U4_ALIGN8B", global_shape=[512, 64], box=[256, 8], swizzle="128B")
    assert (s.elem_bits, s.box_inner_bytes, s.box_bytes) == (4, 128, 1024)
    s = spec(dtype="16U4_ALIGN16B", global_address=0x10020, global_shape=[256, 4], global_strides=[128], box=[128, 4])
    assert (s.elem_bits, s.smem_elem_bits, s.box_bytes) == (4, 8, 512)
    s = spec(box=[64, 9], element_strides=[1, 2])
    assert s.box_bytes == 64 * 5
    assert spec().gmem_extent() == 256 + 63 * 256
    assert spec(global_strides=None, global_shape=[48, 3, 2], box=[16, 1, 1]).global_strides == (48, 144)


def _random_spec(rng: np.random.Generator) -> TensorMapSpec:
    """A random spec that satisfies every rule by construction."""
    dtype = str(rng.choice([d for d in DTYPE_CODES]))
    bits = {"16U4_ALIGN8B": 4, "16U4_ALIGN16B": 8, "16U6_ALIGN16B": 8}.get(dtype)
    ebits = bits or {"UINT8": 8, "UINT16": 16, "FLOAT16": 16, "BFLOAT16": 16, "UINT64": 64, "INT64": 64,
                     "FLOAT64": 64}.get(dtype, 32)
    align16b = dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B")
    rank = int(rng.integers(1, 6))
    swz = "none" if align16b else str(rng.choice(["none", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_64B"]))
    span = {"none": 256 * ebits // 8, "32B": 32, "64B": 64}.get(swz, 128)
    if align16b:
        box0 = 128
    else:
        unit = 128 // ebits                         # elements per 16 bytes
        box0 = unit * int(rng.integers(1, max(1, min(256 // unit, span * 8 // ebits // unit)) + 1))
    dim0 = 128 * int(rng.integers(1, 4)) if align16b else int(rng.integers(1, 1000)) * 2
    shape = [dim0] + [int(rng.integers(1, 2**32 + 1)) if rng.random() < 0.2 else int(rng.integers(1, 50))
                      for _ in range(rank - 1)]
    strides = [32 * int(rng.integers(1, 2**35)) for _ in range(rank - 1)]
    box = [box0] + [int(rng.integers(1, 257)) for _ in range(rank - 1)]
    es = [int(rng.integers(1, 9)) for _ in range(rank)]
    # rule 16 (driver box limit, H100-measured): prod floor(box/es) * SMEM element bytes <= MAX_BOX_BYTES; applied
    # here to every dtype (validate() checks it for the measured ones only). Shrink outer box dims, half of the time
    # to the largest value that fits, so the GPU fuzz test also probes the boundary itself.
    def elems(skip: int = -1) -> int:
        return math.prod(b // e for k, (b, e) in enumerate(zip(box, es)) if k != skip)
    while elems() * (bits or ebits) > 8 * MAX_BOX_BYTES:
        i = max(range(1, rank), key=lambda k: box[k] // es[k])
        fit = 8 * MAX_BOX_BYTES // (elems(i) * (bits or ebits))        # largest floor(box[i] / es[i]) that fits
        top = max(1, min(box[i] - 1, (fit + 1) * es[i] - 1))
        box[i] = top if rng.random() < 0.5 else int(rng.integers(1, top + 1))
    oob = "nan" if dtype in ("FLOAT16", "FLOAT32", "BFLOAT16", "TFLOAT32") and rng.random() < 0.5 else "none"
    s = TensorMapSpec.make(dtype, 32 * int(rng.integers(0, 2**50)), shape, strides, box, es, "none", swz,
                           str(rng.choice(["none", "64B", "128B", "256B"])), oob)
    return s.validate()


def test_emu_round_trip_random(rng):
    for _ in range(300):
        s = _random_spec(rng)
        raw = encode_emu(s)
        assert isinstance(raw, bytes) and len(raw) == 128 and raw[:8] == EMU_MAGIC
        assert decode_emu(raw) == s
        assert decode_emu(bytearray(raw)) == s     # survives a copy into another buffer


def test_emu_layout_fields(rng):
    s = spec(global_shape=[256, 64, 3], global_strides=[256, 256 * 64], box=[128, 32, 2], swizzle="128B",
             l2_promotion="128B")
    raw = encode_emu(s)
    assert struct.unpack_from("<H", raw, 8)[0] == 1                      # version
    assert raw[10:16] == bytes([DTYPE_CODES["UINT8"], 3, 0, 3, 2, 0])    # dtype rank interleave swizzle l2 oob
    assert struct.unpack_from("<Q", raw, 16)[0] == 0x10000
    assert struct.unpack_from("<5Q", raw, 24) == (256, 64, 3, 0, 0)
    assert struct.unpack_from("<4Q", raw, 64) == (256, 256 * 64, 0, 0)
    assert struct.unpack_from("<5H", raw, 96) == (128, 32, 2, 0, 0)
    assert raw[106:111] == bytes([1, 1, 1, 0, 0])


def test_decode_rejects_foreign_or_corrupt(rng):
    driver_like = rng.integers(0, 256, 128, dtype=np.uint8).tobytes()
    with pytest.raises(TensorMapError, match=r"not an emulator tensor map \(was it encoded by the cuda backend\?\)"):
        decode_emu(driver_like)
    raw = bytearray(encode_emu(spec()))
    i = int(rng.integers(16, 124))
    raw[i] ^= 1 << int(rng.integers(0, 8))
    with pytest.raises(TensorMapError, match="checksum"):
        decode_emu(bytes(raw))
    with pytest.raises(TensorMapError, match="128 bytes"):
        decode_emu(encode_emu(spec())[:64])
    with pytest.raises(TensorMapError, match="128 bytes"):
        TensorMap(spec(), b"\0" * 64)
    with pytest.raises(TensorMapError):
        encode_emu(dataclasses.replace(spec(), box=(0, 8)))


_H100_TMAP = Path(__file__).parent / "fidelity" / "tensormap" / "data" / "h100_20261122_tmap_driver.json.gz"


def test_h100_driver_box_limit_replay():
    """validate() accepts exactly the specs the H100 driver accepted (1820 recorded encodes, README beside the data):
    every rejection of that run is rule 16, the 228-KiB box limit."""
    with gzip.open(_H100_TMAP, "rt") as f:
        data = json.load(f)
    rows = data["rows"]
    assert len(rows) == 1820 and sum(r[-1] for r in rows) == 1285
    wrong = []
    for src, dtype, shape, strides, box, es, swz, l2, oob, addr, accepted in rows:
        s = TensorMapSpec.make(dtype, 0x10000 + addr, shape, strides, box, es, "none", swz, l2, oob)
        try:
            s.validate()
            ok = True
        except TensorMapError as exc:
            assert "228 KiB" in str(exc), f"{src} {s}: rejected by another rule: {exc}"
            ok = False
        if ok != bool(accepted):
            wrong.append((src, s, accepted))
    assert not wrong, f"{len(wrong)} rows disagree with the H100 driver, e.g. {wrong[:3]}"


def test_driver_box_bytes():
    s = spec(global_shape=[4096, 256, 256], global_strides=[4096, 1 << 20], box=[256, 256, 15],
             element_strides=[1, 1, 4])
    assert (s.driver_box_bytes, s.box_bytes) == (256 * 256 * 3, 256 * 256 * 4)   # floor for the driver, ceil loaded
    assert spec(dtype=np.float32, box=[32, 8], element_strides=[3, 2]).driver_box_bytes == 10 * 4 * 4
    # measured only for unpacked dtypes without interleave: packed ones are not checked
    big = spec(dtype="16U4_ALIGN8B", global_shape=[512, 256, 256], global_strides=[256, 65536], box=[256, 256, 8])
    assert big.driver_box_bytes == 128 * 256 * 8 > MAX_BOX_BYTES
    big.validate()
