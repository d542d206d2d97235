"""tensormap.replace (PTX ISA 9.7.9.28) on the emulator's 128-byte tensor map image: rewriting any field of a map
gives exactly the image the host encoder makes for the map with that field changed (ptxlab/tensormap.py), for random
valid maps and values.  End to end (every field through a TMA load, shared::cta + cp_fenceproxy and global forms):
the corpus entries 'tensormap_replace_*' (tests/corpus/kernels_async_store.py), which tests/emu/test_corpus.py runs."""
from __future__ import annotations

import dataclasses
import os
import random

import pytest

from ptxlab.tensormap_hw import replace_field
from ptxlab import tensormap
from ptxlab.errors import TensorMapError
from ptxlab.tensormap import TensorMapSpec, decode_emu, encode_emu

SEED = int.from_bytes(os.urandom(4), "little")
print(f"test_emu_tensormap_replace: seed {SEED}")
# the new_val codes of the PTX ISA's tensormap.replace table (.u8 .u16 .u32 .s32 .u64 .s64 .f16 .f32 .f32.ftz .f64
# .bf16 .tf32 .tf32.ftz .b4x16 .b4x16_p64 .b6x16_p32), named as ptxlab/tensormap.py names the CUtensorMap types
ELEMTYPE = ["UINT8", "UINT16", "UINT32", "INT32", "UINT64", "INT64", "FLOAT16", "FLOAT32", "FLOAT32_FTZ", "FLOAT64",
            "BFLOAT16", "TFLOAT32", "TFLOAT32_FTZ", "16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B"]
SWIZZLE = ["none", "32B", "64B", "128B"]          # .swizzle_mode 0..3 (4 = 96B is sm_103a)
INTERLEAVE = ["none", "16B", "32B"]
FILL = ["none", "nan"]                            # .fill_mode: 0 zero fill, 1 OOB NaN fill


def _spec(rng: random.Random, rank: int) -> TensorMapSpec:
    shape = [rng.randrange(1, 300) for _ in range(rank)]
    strides, acc = [], shape[0] * 4
    for d in shape[1:]:
        acc = (acc + 15) // 16 * 16 + 16 * rng.randrange(0, 4)
        strides.append(acc)
        acc *= d
    return TensorMapSpec.make("FLOAT32", 0x10000 + 16 * rng.randrange(1 << 20), shape, strides,
                              [rng.randrange(1, 9) for _ in range(rank)],
                              [rng.randrange(1, 5) for _ in range(rank)])


def _changed(spec: TensorMapSpec, field: str, ordinal: int, value: int) -> TensorMapSpec:
    put = lambda xs: tuple(value if i == ordinal else x for i, x in enumerate(xs))  # noqa: E731
    change = {"global_address": lambda: dict(global_address=value),
              "global_dim": lambda: dict(global_shape=put(spec.global_shape)),
              "global_stride": lambda: dict(global_strides=put(spec.global_strides)),
              "box_dim": lambda: dict(box=put(spec.box)),
              "element_stride": lambda: dict(element_strides=put(spec.element_strides)),
              "elemtype": lambda: dict(dtype=ELEMTYPE[value]), "swizzle_mode": lambda: dict(swizzle=SWIZZLE[value]),
              "interleave_layout": lambda: dict(interleave=INTERLEAVE[value]),
              "fill_mode": lambda: dict(oob_fill=FILL[value])}
    return dataclasses.replace(spec, **change[field]())


@pytest.mark.parametrize("field", ["global_address", "global_dim", "global_stride", "box_dim", "element_stride",
                                   "elemtype", "swizzle_mode", "interleave_layout", "fill_mode", "rank"])
def test_replace_field_is_the_encoder_with_that_field_changed(field: str, monkeypatch) -> None:
    # the image is compared field for field; whether the new map passes the encoder's rules is checked when a TMA
    # instruction uses it (as on hardware), so the encoder's rule check is off here
    monkeypatch.setattr(tensormap, "validate", lambda spec: None)
    rng = random.Random(SEED ^ hash(field) & 0xFFFF)
    for _ in range(40):
        spec = _spec(rng, rng.randrange(2, 6))
        ordinal = 0
        if field == "rank":                                 # new_val = rank - 1; the other bytes are kept
            raw = encode_emu(spec)
            got = replace_field(raw, "rank", 0, spec.rank - 2)
            r = spec.rank - 1
            assert decode_emu(got) == dataclasses.replace(
                spec, rank=r, global_shape=spec.global_shape[:r], global_strides=spec.global_strides[:r - 1],
                box=spec.box[:r], element_strides=spec.element_strides[:r])
            assert got[:11] + got[12:124] == raw[:11] + raw[12:124]
            continue
        if field == "global_address":
            value = 0x10000 + 16 * rng.randrange(1 << 30)
        elif field == "global_dim":
            ordinal, value = rng.randrange(spec.rank), rng.randrange(1, 1 << 20)
        elif field == "global_stride":
            ordinal, value = rng.randrange(spec.rank - 1), 16 * rng.randrange(64, 1 << 20)
        elif field == "box_dim":
            ordinal, value = rng.randrange(spec.rank), rng.randrange(1, 9)
        elif field == "element_stride":
            ordinal, value = rng.randrange(spec.rank), rng.randrange(1, 9)
        elif field == "elemtype":
            value = rng.randrange(16)
        elif field == "swizzle_mode":
            value = rng.randrange(4)
        elif field == "interleave_layout":
            value = rng.randrange(3)
        else:
            value = rng.randrange(2)
        got = replace_field(encode_emu(spec), field, ordinal, value)
        assert got == encode_emu(_changed(spec, field, ordinal, value)), (field, ordinal, value)


@pytest.mark.parametrize("field,ordinal,value", [("box_dim", 5, 1), ("global_stride", 4, 16),
                                                 ("swizzle_mode", 0, 4), ("elemtype", 0, 16), ("fill_mode", 0, 2)])
def test_out_of_range_ordinal_or_code_is_refused(field: str, ordinal: int, value: int, monkeypatch) -> None:
    monkeypatch.setattr(tensormap, "validate", lambda spec: None)
    spec = _spec(random.Random(SEED), 3)
    with pytest.raises(TensorMapError, match=field):
        replace_field(encode_emu(spec), field, ordinal, value)
