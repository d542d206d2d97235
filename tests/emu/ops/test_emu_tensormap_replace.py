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
                                                 ("swizzle_mode", 0, 4), ("elemtype", 0, 16), ("fill_mode", 0, 2),
                                                 ("swizzle_atomicity", 0, 1)])
def test_out_of_range_ordinal_or_code_is_refused(field: str, ordinal: int, value: int, monkeypatch) -> None:
    monkeypatch.setattr(tensormap, "validate", lambda spec: None)
    spec = _spec(random.Random(SEED), 3)
    with pytest.raises(TensorMapError, match=field):
        replace_field(encode_emu(spec), field, ordinal, value)


def _edits(rng: random.Random, spec: TensorMapSpec) -> list:
    """One random valid edit of every field: (field, ordinal, value); .rank rewritten to its own value."""
    return [("global_address", 0, 0x10000 + 16 * rng.randrange(1 << 30)),
            ("global_dim", rng.randrange(spec.rank), rng.randrange(1, 1 << 20)),
            ("global_stride", rng.randrange(spec.rank - 1), 16 * rng.randrange(64, 1 << 20)),
            ("box_dim", rng.randrange(spec.rank), rng.randrange(1, 9)),
            ("element_stride", rng.randrange(spec.rank), rng.randrange(1, 9)),
            ("rank", 0, spec.rank - 1), ("elemtype", 0, rng.randrange(1, 16)), ("swizzle_mode", 0, rng.randrange(4)),
            ("interleave_layout", 0, rng.randrange(3)), ("fill_mode", 0, rng.randrange(2)),
            ("swizzle_atomicity", 0, 0)]


def _edit_ptx(edits: list, addr: str) -> list:
    out = []
    for field, ordinal, value in edits:
        wide = field in ("global_address", "global_stride")
        reg = "%rd9" if wide else "%r9"
        ordv = f"{ordinal}, " if field in ("global_dim", "global_stride", "box_dim", "element_stride") else ""
        if field in ("elemtype", "swizzle_mode", "interleave_layout", "fill_mode", "swizzle_atomicity"):
            out.append(f"  tensormap.replace.tile.{field}.b1024.b32 [{addr}], {value};")
        else:
            out.append(f"  mov.b{64 if wide else 32} {reg}, {value};")
            out.append(f"  tensormap.replace.tile.{field}.b1024.b{64 if wide else 32} [{addr}], {ordv}{reg};")
    return out


@pytest.mark.parametrize("scope", ["cta", "cluster", "gpu", "sys"])
def test_generic_address_edits_and_cp_fenceproxy(scope: str, monkeypatch) -> None:
    """The generic-address forms (no state space) on a map in global memory, then on a copy in shared memory
    (generic address from cvta), copied out with tensormap.cp_fenceproxy.<scope>: both images are exactly what the
    host encoder makes for the edited maps (sm_100a: .swizzle_atomicity, value 0)."""
    import numpy as np

    import ptxlab
    monkeypatch.setattr(tensormap, "validate", lambda spec: None)
    rng = random.Random(SEED ^ hash(scope) & 0xFFFF)
    spec0 = _spec(rng, rng.randrange(2, 6))
    e1 = _edits(rng, spec0)
    spec1 = spec0
    for f, o, v in e1:
        spec1 = spec1 if f in ("rank", "swizzle_atomicity") else _changed(spec1, f, o, v)
    e2 = _edits(rng, spec1)
    spec2 = spec1
    for f, o, v in e2:
        spec2 = spec2 if f in ("rank", "swizzle_atomicity") else _changed(spec2, f, o, v)
    ptx = "\n".join([
        ".version 8.8", ".target sm_100a", ".address_size 64",
        ".visible .entry k(.param .u64 gmap, .param .u64 out)", "{",
        "  .reg .b32 %r<10>; .reg .b64 %rd<10>; .reg .pred %p<2>;", "  .shared .align 128 .b8 smap[128];",
        "  ld.param.u64 %rd1, [gmap]; ld.param.u64 %rd2, [out]; mov.u32 %r1, %tid.x;",
        "  setp.ne.u32 %p1, %r1, 0;", "  @%p1 bra SKIP1;"] + _edit_ptx(e1, "%rd1") + [
        "SKIP1:", "  bar.sync 0;", "  setp.lt.u32 %p1, %r1, 16;", "  @!%p1 bra SKIP2;",
        "  mul.wide.u32 %rd3, %r1, 8; add.s64 %rd4, %rd1, %rd3; ld.global.b64 %rd5, [%rd4];",
        "  mov.u64 %rd6, smap; add.s64 %rd6, %rd6, %rd3; st.shared.b64 [%rd6], %rd5;",
        "SKIP2:", "  bar.sync 0;", "  mov.u64 %rd7, smap; cvta.shared.u64 %rd8, %rd7;",
        "  setp.ne.u32 %p1, %r1, 0;", "  @%p1 bra SKIP3;"] + _edit_ptx(e2, "%rd8") + [
        "SKIP3:", "  bar.sync 0;",
        f"  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.{scope}.sync.aligned "
        "[%rd2], [smap], 128;", "  ret;", "}"]) + "\n"
    dev = ptxlab.open_device("emu")
    g = dev.to_device(np.frombuffer(encode_emu(spec0), np.uint8).copy())
    out = dev.empty(128)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(ptx, arch="sm_100a"), "k", grid=(1, 1, 1), block=(32, 1, 1), args=[g, out])
    assert dev.to_host(g, np.uint8).tobytes() == encode_emu(spec1)
    assert dev.to_host(out, np.uint8).tobytes() == encode_emu(spec2)
    assert spec1 != spec0 and spec2 != spec1


@pytest.mark.parametrize("space", [".global", ".shared::cta", ""])
def test_elemtype_u8_is_refused(space: str, monkeypatch) -> None:
    """tensormap.replace .elemtype 0 (.u8): the H100 raised CUDA_ERROR_ILLEGAL_INSTRUCTION for every such map
    (corpus tensormap_replace_*_{2,3,4}, 2026-11-27), so the emulator refuses it; .elemtype 1 (.u16) runs."""
    import numpy as np

    import ptxlab
    from ptxlab.errors import EmuError

    def ptx(code: int) -> str:
        return "\n".join([
            ".version 8.8", ".target sm_90a", ".address_size 64", ".visible .entry k(.param .u64 gmap)", "{",
            "  .reg .b64 %rd<4>;", "  .shared .align 128 .b8 smap[128];",
            "  ld.param.u64 %rd1, [gmap];" if space != ".shared::cta" else "  mov.u64 %rd1, smap;",
            f"  tensormap.replace.tile.elemtype{space}.b1024.b32 [%rd1], {code};", "  ret;", "}"]) + "\n"
    monkeypatch.setattr(tensormap, "validate", lambda spec: None)
    spec = _spec(random.Random(SEED), 2)
    dev = ptxlab.open_device("emu", initcheck=False)
    g = dev.to_device(np.frombuffer(encode_emu(spec), np.uint8).copy())
    with pytest.raises(EmuError, match=r"\.elemtype 0 \(\.u8\)"):
        dev.launch(ptxlab.compile(ptx(0), arch="sm_90a"), "k", grid=(1, 1, 1), block=(1, 1, 1), args=[g])
    if space != ".shared::cta":
        dev = ptxlab.open_device("emu")
        g = dev.to_device(np.frombuffer(encode_emu(spec), np.uint8).copy())
        dev.launch(ptxlab.compile(ptx(1), arch="sm_90a"), "k", grid=(1, 1, 1), block=(1, 1, 1), args=[g])
        assert decode_emu(dev.to_host(g, np.uint8).tobytes()).dtype == "UINT16"
