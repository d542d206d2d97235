"""The hardware CUtensorMap image as the CuTe DSL 4.8.1 encodes it (ptxlab/tensormap_hw.py): decoding images the DSL
wrote (recorded from kernel launches under lab.py exec, tools/probes/cute_tmap_probe.py), refusing unknown bits, and
tensormap.replace field edits on both image kinds."""
from __future__ import annotations

import pytest

from ptxlab import tensormap as T
from ptxlab.errors import TensorMapError
from ptxlab.tensormap_hw import decode_any, decode_hw, replace_field

# (first 64 bytes as written by the DSL, dtype, dims innermost first, byte strides, box, swizzle)
DSL_IMAGES = [
    ("00010000007f00001263040008000000000000000000000000000000000000003f0000007f0000000000000000000000000000000000003f3f"
     "00000000000000", "FLOAT16", (64, 128), (128,), (64, 64), "128B", 0x7F0000000100),
    ("003c0200007f00001243040008000000000000000000000000000000000000003f0000007f0000000000000000000000000000000000001f3f"
     "00000000000000", "FLOAT16", (64, 128), (128,), (32, 64), "64B", 0x7F0000023C00),
    ("00c40200007f00001203040008000000000000000000000000000000000000003f0000007f000000000000000000000000000000000000073f"
     "00000000000000", "FLOAT16", (64, 128), (128,), (8, 64), "none", 0x7F000002C400),
    ("00080300007f00009263040010000000000000000000000000000000000000003f0000007f0000000000000000000000000000000000001f3f"
     "00000000000000", "FLOAT32", (64, 128), (256,), (32, 64), "128B", 0x7F0000030800),
    ("00d20300007f00001265040008000000000000000000000000000000000000003f0000007f0000000000000000000000000000000000003f3f"
     "00000000000000", "BFLOAT16", (64, 128), (128,), (64, 64), "128B", 0x7F000003D200),
    ("00160400007f000012630400080000000000000000000000000000000000000027000000630000000000000000000000000000000000003f3f"
     "00000000000000", "FLOAT16", (40, 100), (128,), (64, 64), "128B", 0x7F0000041600),
    ("00450500007f0000426324000800000000040000000c0000003c0000000000003f0000007f0000000200000004000000010000000000003f3f"
     "00000000000000", "FLOAT16", (64, 128, 3, 5, 2), (128, 16384, 49152, 245760), (64, 64, 1, 1, 1), "128B",
     0x7F0000054500),
    ("00c81c00007f00001263240000000001000000000000000000000000000000003f000000010000000000000000000000000000000000003f3f"
     "00000000000000", "FLOAT16", (64, 2), (268435456,), (64, 64), "128B", 0x7F00001CC800),
]


def _image(hex64: str, tail: bytes = b"\x5a" * 64) -> bytes:
    return bytes.fromhex(hex64) + tail          # bytes 64..127 are never written by the DSL: any content


@pytest.mark.parametrize("hex64,dtype,dims,strides,box,swizzle,addr", DSL_IMAGES)
def test_decode_dsl_images(hex64, dtype, dims, strides, box, swizzle, addr):
    spec = decode_hw(_image(hex64))
    assert (spec.dtype, spec.global_shape, spec.global_strides, spec.box, spec.swizzle, spec.global_address) == \
        (dtype, dims, strides, box, swizzle, addr)
    assert spec.element_strides == (1,) * len(dims) and spec.interleave == "none" and spec.oob_fill == "none"
    assert decode_any(_image(hex64)) == spec


@pytest.mark.parametrize("bit", [0, 66, 75, 80, 86, 224, 420, 480, 511])
def test_unknown_bits_are_refused(bit):
    v = int.from_bytes(bytes.fromhex(DSL_IMAGES[0][0]), "little")
    if bit in (0,):
        with pytest.raises(TensorMapError, match="16-byte aligned|must be"):   # an address bit: alignment rule
            decode_hw(_image((v | 1 << 3).to_bytes(64, "little").hex()))
        return
    with pytest.raises(TensorMapError, match=rf"bits \[{bit}\] are set, which ptxlab does not decode"):
        decode_hw(_image((v | 1 << bit).to_bytes(64, "little").hex()))


def test_emulator_images_still_decode():
    spec = T.TensorMapSpec.make("FLOAT16", 0x7F0000000100, (64, 128), None, (64, 64), swizzle="128B")
    assert decode_any(T.encode_emu(spec)) == spec


@pytest.mark.parametrize("kind", ["hw", "emu"])
def test_replace_fields(kind, rng):
    base = decode_hw(_image(DSL_IMAGES[6][0]))
    raw = _image(DSL_IMAGES[6][0]) if kind == "hw" else T.encode_emu(base)
    addr = 0x7F0000000000 + 16 * int(rng.integers(1, 1 << 20))
    m, k = int(rng.integers(1, 1000)), 16 * int(rng.integers(1, 300))
    stride = 16 * int(rng.integers(1, 1 << 16))        # stride * m < 64 GiB: the hardware field is 32 bits of bytes >> 4
    raw = replace_field(raw, "global_address", 0, addr)
    raw = replace_field(raw, "global_dim", 0, k)
    raw = replace_field(raw, "global_dim", 1, m)
    raw = replace_field(raw, "global_stride", 0, stride)
    raw = replace_field(raw, "global_stride", 1, stride * m)
    raw = replace_field(raw, "box_dim", 0, 32)
    raw = replace_field(raw, "box_dim", 1, 16)
    raw = replace_field(raw, "swizzle_mode", 0, 2)                    # 64B swizzle (PTX ISA Table 33)
    raw = replace_field(raw, "elemtype", 0, 10)                       # .bf16
    raw = replace_field(raw, "element_stride", 0, 1)                  # the modelled value: a no-op
    spec = decode_any(raw)
    assert spec.global_address == addr and spec.global_shape[:2] == (k, m)
    assert spec.global_strides[:2] == (stride, stride * m) and spec.box[:2] == (32, 16)
    assert spec.swizzle == "64B" and spec.dtype == "BFLOAT16" and spec.global_shape[2:] == base.global_shape[2:]


def test_replace_refuses_what_is_not_modelled():
    raw = _image(DSL_IMAGES[0][0])
    with pytest.raises(TensorMapError, match="not a multiple of 16"):
        replace_field(raw, "global_stride", 0, 100)
    with pytest.raises(TensorMapError, match="models only 0"):
        replace_field(raw, "fill_mode", 0, 1)
    with pytest.raises(TensorMapError, match="models only 1"):
        replace_field(raw, "element_stride", 1, 2)
