"""TMA tile-mode load/store model vs a slow element-by-element reference written here."""
from __future__ import annotations

import importlib.util
import itertools
import json
import os
import sys

import numpy as np
import pytest

from ptxlab.emu.hw import tma as tm
from ptxlab.emu.hw.tma import (
    TmaError, TmaUnconfirmed, check_bulk_copy, complete_tx_bytes, plan_tensor_load, plan_tensor_store,
)
from ptxlab.tensormap import TensorMapSpec

GBASE = 0x7F00_0000_0000
POISON = 0xA5
BITS = {"UINT8": 8, "FLOAT16": 16, "FLOAT32": 32, "16U4_ALIGN8B": 4, "16U4_ALIGN16B": 4, "16U6_ALIGN16B": 6}


def ref_swz(mode: str, a: int) -> int:
    """ptx_facts §9 table: 16-B chunk c of 128-B line L -> c ^ (L & m); ATOM_32B: 32-B pair p -> p ^ (L & 3)."""
    line, off = a >> 7, a & 127
    if mode == "none":
        return a
    if mode == "128B_ATOM_32B":
        return (line << 7) | ((((off >> 5) ^ (line & 3)) << 5) | (off & 31))
    if mode == "128B_ATOM_64B":
        return (line << 7) | ((((off >> 6) ^ (line & 1)) << 6) | (off & 63))
    m = {"32B": 1, "64B": 3, "128B": 7}[mode]
    return (line << 7) | ((((off >> 4) ^ (line & m)) << 4) | (off & 15))


def smem_bit(dtype: str, i0: int) -> int:
    """Bit offset of dim-0 element i0 inside its shared row."""
    if dtype == "16U4_ALIGN16B":
        return (i0 // 16) * 128 + (i0 % 16) * 4
    if dtype == "16U6_ALIGN16B":
        return (i0 // 16) * 128 + (i0 % 16) * 6
    return i0 * BITS[dtype]


def row_bits(spec: TensorMapSpec) -> int:
    return smem_bit(spec.dtype, spec.box[0]) if spec.dtype not in ("16U4_ALIGN16B", "16U6_ALIGN16B") \
        else spec.box[0] // 16 * 128


def get_bit(buf: np.ndarray, bit: int) -> int:
    return (int(buf[bit >> 3]) >> (bit & 7)) & 1


def walk(spec: TensorMapSpec, coords):
    """Yield (dense shared bit offset of the element, global bit offset or None if OOB)."""
    counts = [spec.box[0]] + [-(-b // e) for b, e in zip(spec.box[1:], spec.element_strides[1:])]
    rb = row_bits(spec)
    for rev in itertools.product(*[range(n) for n in reversed(counts)]):
        idx = rev[::-1]
        xs = [coords[0] + idx[0]] + [coords[d] + idx[d] * spec.element_strides[d] for d in range(1, spec.rank)]
        row = 0
        for d in range(spec.rank - 1, 0, -1):
            row = row * counts[d] + idx[d]
        sbit = row * rb + smem_bit(spec.dtype, idx[0])
        if all(0 <= x < g for x, g in zip(xs, spec.global_shape)):
            gbyte = sum(x * s for x, s in zip(xs[1:], spec.global_strides))
            yield sbit, gbyte * 8 + xs[0] * BITS[spec.dtype]
        else:
            yield sbit, None


def ref_load(spec, coords, gmem, smem, dst):
    bits = BITS[spec.dtype]
    for sbit, gbit in walk(spec, coords):
        for b in range(bits):
            v = get_bit(gmem, gbit + b) if gbit is not None else 0
            lin = sbit + b
            byte = ref_swz(spec.swizzle, dst + (lin >> 3))
            if b == 0 or (lin & 7) == 0:
                pass
            smem[byte] = (int(smem[byte]) & ~(1 << (lin & 7))) | (v << (lin & 7))


def make_case(rng, dtype: str, swizzle: str, rank: int):
    bits = BITS[dtype]
    span = {"none": 0, "32B": 32, "64B": 64, "128B": 128, "128B_ATOM_32B": 128, "128B_ATOM_64B": 128}[swizzle]
    if dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B"):
        box0 = 128
    elif span:
        box0 = span * 8 // bits
    else:
        box0 = int(rng.integers(1, 5)) * (128 // bits)
    box = [box0] + [int(rng.integers(1, 5)) for _ in range(rank - 1)]
    es = [1] + [int(rng.integers(1, 3)) for _ in range(rank - 1)]
    if dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B"):
        g0 = 128 * int(rng.integers(1, 3))
    else:
        g0 = int(rng.integers(1, 3 * box0)) * (2 if bits == 4 else 1)
    shape = [g0] + [int(rng.integers(1, 7)) for _ in range(rank - 1)]
    align = 32 if dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B") else 16
    row = -(-(g0 * bits // 8) // align) * align + align * int(rng.integers(0, 2))
    strides, acc = [], row
    for d in shape[1:]:
        strides.append(acc)
        acc = acc * d + align * int(rng.integers(0, 2))
    spec = TensorMapSpec.make(dtype, GBASE, shape, strides, box, es, swizzle=swizzle).validate()
    nbytes = spec.gmem_extent() + 64
    gmem = rng.integers(0, 256, size=nbytes, dtype=np.uint8)
    if dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B"):
        c0 = 128 * int(rng.integers(-1, 3))
    else:
        c0 = int(rng.integers(-box0, g0 + 1))
        if bits == 4:
            c0 -= c0 % 2
        if bits == 32:      # 4-byte elements: the box must start on a 16-byte boundary (H100, hw/tma.py)
            c0 -= c0 % 4
    coords = [c0] + [int(rng.integers(-3, s + 2)) for s in shape[1:]]
    return spec, gmem, coords


def reader(gmem):
    def read(addr: int, n: int):
        off = addr - GBASE
        assert 0 <= off and off + n <= gmem.size, f"read outside the tensor: 0x{addr:x}+{n}"
        return gmem[off:off + n]
    return read


CASES = [("UINT8", s) for s in ("none", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_64B")] + \
        [("FLOAT16", "128B"), ("FLOAT16", "none"), ("FLOAT32", "64B"), ("16U4_ALIGN8B", "128B"),
         ("16U4_ALIGN8B", "none"), ("16U4_ALIGN16B", "128B"), ("16U6_ALIGN16B", "none")]


@pytest.mark.parametrize("dtype,swizzle", CASES)
@pytest.mark.parametrize("rank", [1, 2, 3, 5])
def test_load_matches_reference(rng, dtype: str, swizzle: str, rank: int) -> None:
    for _ in range(3):
        spec, gmem, coords = make_case(rng, dtype, swizzle, rank)
        dst = 0x400 + 1024 * int(rng.integers(0, 4))
        plan = plan_tensor_load(spec, coords, dst, reader(gmem))
        got = np.full(dst + 2 * plan.box_bytes + 2048, POISON, dtype=np.uint8)
        got[plan.smem_addrs] = plan.values
        want = np.full_like(got, POISON)
        ref_load(spec, coords, gmem, want, dst)
        if dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B"):   # gap bytes are not written (PTX 5.5.1.1)
            gap_ok = np.ones(got.size, bool)
            for off in range(plan.box_bytes):
                if off % 16 >= (8 if dtype == "16U4_ALIGN16B" else 12):
                    gap_ok[ref_swz(swizzle, dst + off)] = False
            assert np.all(got[~gap_ok] == POISON), "gap bytes were written"
            want[~gap_ok] = POISON
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, f"{spec} coords={coords} dst=0x{dst:x}: first diff at smem 0x{bad[0]:x}"
        assert spec.box_bytes == plan.box_bytes
        if dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B"):   # packed data bytes, gaps not counted (CUTLASS, 72c)
            assert plan.tx_bytes == plan.box_bytes // 16 * (8 if dtype == "16U4_ALIGN16B" else 12)
        else:
            assert plan.tx_bytes == plan.box_bytes


@pytest.mark.parametrize("dtype,swizzle", [("UINT8", "128B"), ("FLOAT16", "64B"), ("16U4_ALIGN8B", "none"),
                                           ("FLOAT32", "128B_ATOM_32B")])
@pytest.mark.parametrize("rank", [1, 2, 4])
def test_store_matches_reference(rng, dtype: str, swizzle: str, rank: int) -> None:
    for _ in range(3):
        spec, gmem, coords = make_case(rng, dtype, swizzle, rank)
        coords = [max(0, c) for c in coords]
        if dtype == "16U4_ALIGN8B":
            coords[0] -= coords[0] % 2
        src = 0x400
        smem = rng.integers(0, 256, size=src + spec.box_bytes + 2048, dtype=np.uint8)
        plan = plan_tensor_store(spec, coords, src)
        got = np.full(gmem.size, POISON, dtype=np.uint8)
        got[plan.gmem_addrs - GBASE] = smem[plan.smem_addrs]
        want = np.full_like(got, POISON)
        bits = BITS[dtype]
        for sbit, gbit in walk(spec, coords):
            if gbit is None:
                continue
            for b in range(bits):
                lin = sbit + b
                v = get_bit(smem, ref_swz(swizzle, src + (lin >> 3)) * 8 + (lin & 7))
                g = gbit + b
                want[g >> 3] = (int(want[g >> 3]) & ~(1 << (g & 7))) | (v << (g & 7))
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, f"{spec} coords={coords}: first diff at global +0x{bad[0]:x}"


def spec2d(**kw) -> TensorMapSpec:
    args = dict(dtype="UINT8", global_address=GBASE, global_shape=[128, 8], global_strides=[128], box=[128, 8])
    args.update(kw)
    return TensorMapSpec.make(**args).validate()


def test_complete_tx_is_full_box_even_when_oob(rng) -> None:
    spec = spec2d(box=[64, 4], element_strides=[1, 3])
    assert complete_tx_bytes(spec) == 64 * 2
    gmem = rng.integers(1, 256, size=2048, dtype=np.uint8)
    plan = plan_tensor_load(spec, [100, 6], 0x400, reader(gmem))
    assert plan.tx_bytes == 128
    assert plan.values.size == 128


def test_narrow_inner_box_rows_sit_one_span_apart(rng) -> None:
    """H100-measured layout (2026-11-22): row r of a narrow swizzled box starts at dst + r * span, swizzled by address."""
    gmem = rng.integers(1, 256, size=8192, dtype=np.uint8)
    for sw, inner in sorted(tm.NARROW_CONFIRMED):
        span = tm.swizzle_span(sw)
        spec = spec2d(global_shape=[256, 16], global_strides=[256], box=[inner, 6], swizzle=sw)
        plan = plan_tensor_load(spec, [16, 3], 0x800, reader(gmem))
        img = np.full(0x800 + 6 * span + 1024, POISON, np.uint8)
        img[plan.smem_addrs] = plan.values
        exp = np.full_like(img, POISON)
        for r in range(6):
            for b in range(inner):
                exp[ref_swz(sw, 0x800 + r * span + b)] = gmem[(3 + r) * 256 + 16 + b]
        assert np.array_equal(img, exp), (sw, inner)
        assert plan.tx_bytes == inner * 6 and plan.box_bytes == span * 6
        # a dense-row layout would differ: the gap bytes must stay untouched
        assert (img[0x800 + inner:0x800 + span] == POISON).all() or inner == span


def test_narrow_unmeasured_or_illegal_inner_boxes() -> None:
    zero = lambda a, n: bytes(n)  # noqa: E731
    with pytest.raises(TmaUnconfirmed, match="Blackwell"):
        plan_tensor_load(spec2d(box=[64, 8], swizzle="128B_ATOM_32B"), [0, 0], 0x400, zero)
    # the H100 rule: a narrow inner box must be a multiple of 32 B; every other one faults (ILLEGAL_INSTRUCTION)
    for sw, inner in [("32B", 16), ("64B", 16), ("64B", 48), ("128B", 16), ("128B", 48), ("128B", 80),
                      ("128B", 112)]:
        with pytest.raises(TmaError, match="ILLEGAL_INSTRUCTION") as ei:
            plan_tensor_load(spec2d(box=[inner, 8], swizzle=sw), [0, 0], 0x400, zero)
        assert not isinstance(ei.value, TmaUnconfirmed)
        assert ("observed for this very pair" in str(ei.value)) == ((sw, inner) in tm.NARROW_ILLEGAL), (sw, inner)
    for sw, inner in [("64B", 32), ("128B", 32), ("128B", 64), ("128B", 96)]:
        assert tm.narrow_inner_legal(sw, inner) and (sw, inner) in tm.NARROW_CONFIRMED
        plan_tensor_load(spec2d(box=[inner, 8], swizzle=sw), [0, 0], 0x400, zero)
    # rule vs every measured pair
    assert not any(tm.narrow_inner_legal(*k) for k in tm.NARROW_ILLEGAL)
    assert all(tm.narrow_inner_legal(*k) for k in tm.NARROW_CONFIRMED | tm.NARROW_STORE_CONFIRMED)
    # narrow stores: every legal pair is measured (runs 2 + 3), illegal inner boxes are errors
    assert tm.NARROW_STORE_CONFIRMED == {(sw, i) for sw in tm.NARROW_MODES for i in range(32, tm.swizzle_span(sw), 32)}
    for sw, inner in sorted(tm.NARROW_STORE_CONFIRMED):
        plan_tensor_store(spec2d(box=[inner, 8], swizzle=sw), [0, 0], 0x400)
    for sw, inner in [("128B", 48), ("64B", 16), ("128B", 80), ("32B", 16)]:
        with pytest.raises(TmaError, match="multiple of 32") as ei:
            plan_tensor_store(spec2d(box=[inner, 8], swizzle=sw), [0, 0], 0x400)
        assert not isinstance(ei.value, TmaUnconfirmed)
        assert ("observed for this very pair (store)" in str(ei.value)) == ((sw, inner) in tm.NARROW_STORE_ILLEGAL)
    assert not any(tm.narrow_inner_legal(*k) for k in tm.NARROW_STORE_ILLEGAL)
    with pytest.raises(TmaUnconfirmed, match="Blackwell"):
        plan_tensor_store(spec2d(box=[64, 8], swizzle="128B_ATOM_64B"), [0, 0], 0x400)


def test_narrow_store_reads_rows_one_span_apart(rng) -> None:
    """H100-measured (run 2): a narrow store reads shared row r from src + r * span, swizzled by address."""
    for sw, inner in sorted(tm.NARROW_STORE_CONFIRMED):
        span = tm.swizzle_span(sw)
        spec = spec2d(global_shape=[256, 16], global_strides=[256], box=[inner, 5], swizzle=sw)
        plan = plan_tensor_store(spec, [16, 3], 0x800)
        exp_s, exp_g = [], []
        for r in range(5):
            for b in range(inner):
                exp_s.append(ref_swz(sw, 0x800 + r * span + b))
                exp_g.append(GBASE + (3 + r) * 256 + 16 + b)
        assert list(plan.smem_addrs) == exp_s and list(plan.gmem_addrs) == exp_g, (sw, inner)


def test_nan_fill_needs_a_measured_pattern(rng, monkeypatch) -> None:
    # H100 runs 2 and 3: one 16-bit pattern 0x7FF7 repeated over the element, for every float type
    assert tm.OOB_NAN_BITS == {"FLOAT16": 0x7FF7, "BFLOAT16": 0x7FF7, "FLOAT32": 0x7FF77FF7,
                               "FLOAT32_FTZ": 0x7FF77FF7, "TFLOAT32": 0x7FF77FF7, "TFLOAT32_FTZ": 0x7FF77FF7,
                               "FLOAT64": 0x7FF77FF77FF77FF7}
    monkeypatch.setitem(tm.OOB_NAN_BITS, "BFLOAT16", None)        # an unmeasured pattern raises
    spec = spec2d(dtype="BFLOAT16", global_shape=[64, 8], box=[64, 8], swizzle="128B", oob_fill="nan")
    gmem = rng.integers(1, 256, size=4096, dtype=np.uint8)
    plan_tensor_load(spec, [0, 0], 0x400, reader(gmem))          # fully in bounds: fine
    with pytest.raises(TmaUnconfirmed, match="OOB-NaN"):
        plan_tensor_load(spec, [0, 5], 0x400, reader(gmem))
    monkeypatch.setitem(tm.OOB_NAN_BITS, "BFLOAT16", 0x7FFF)
    plan = plan_tensor_load(spec, [0, 5], 0x400, reader(gmem))
    img = np.zeros(0x400 + 1024, np.uint8)
    img[plan.smem_addrs] = plan.values
    # rows 3..7 are OOB (rows 5+3 >= 8); their swizzled 128-B lines are entirely 0x7FFF
    assert np.all(img[0x400 + 3 * 128:0x400 + 8 * 128].view(np.uint16) == 0x7FFF)


def test_alignment_and_rule_errors(rng) -> None:
    spec = spec2d(swizzle="128B")
    zero = lambda a, n: bytes(n)  # noqa: E731
    for off in (0x410, 0x420, 0x440):     # H100: CUDA_ERROR_MISALIGNED_ADDRESS below 128 B
        for sw in ("none", "64B", "128B"):
            with pytest.raises(TmaError, match="128-byte"):
                plan_tensor_load(spec2d(swizzle=sw, box=[{"64B": 64}.get(sw, 128), 8]), [0, 0], off, zero)
    # off the natural 1024-B boundary but 128-B aligned: accepted (H100), swizzled by the absolute address
    plan = plan_tensor_load(spec, [0, 0], 0x480, lambda a, n: bytes(range(n)))
    assert list(plan.smem_addrs[:3]) == [ref_swz("128B", 0x480 + i) for i in range(3)]
    assert plan.smem_addrs[128] == ref_swz("128B", 0x500) == 0x500 ^ (2 << 4)
    with pytest.raises(TmaError, match="rank-2"):
        plan_tensor_load(spec, [0, 0, 0], 0x400, zero)
    with pytest.raises(TmaError, match="non-negative"):
        plan_tensor_store(spec, [0, -1], 0x400)
    with pytest.raises(TmaError, match="interleave"):
        s3 = TensorMapSpec.make("UINT8", GBASE, [32, 4, 4], None, [32, 4, 4], interleave="16B").validate()
        plan_tensor_load(s3, [0, 0, 0], 0x400, zero)
    with pytest.raises(TmaError, match=".s32"):
        plan_tensor_load(spec, [2**31, 0], 0x400, zero)
    s4 = TensorMapSpec.make("16U4_ALIGN8B", GBASE, [256, 4], [128], [256, 4], swizzle="128B").validate()
    with pytest.raises(TmaUnconfirmed, match="odd"):
        plan_tensor_load(s4, [1, 0], 0x400, zero)


def test_bulk_copy_rules() -> None:
    assert check_bulk_copy(0x400, GBASE, 4096, direction="global->shared") == 4096
    with pytest.raises(TmaError, match="multiple of 16"):
        check_bulk_copy(0x400, GBASE, 24, direction="global->shared")
    with pytest.raises(TmaError, match="dstMem"):
        check_bulk_copy(0x408, GBASE, 32, direction="global->shared")
    with pytest.raises(TmaError, match="srcMem"):
        check_bulk_copy(0x400, GBASE + 8, 32, direction="global->shared")


# ---------------------------------------------------------------------------------------- H100 replay (2026-11-22)
FIDELITY_TMA = os.path.join(os.path.dirname(__file__), "..", "..", "fidelity", "tma")
H100_DATA = os.path.join(FIDELITY_TMA, "data", "h100_20261122_narrow_align.npz")


def _kit():
    spec = importlib.util.spec_from_file_location(
        "run_tma_fidelity", os.path.join(FIDELITY_TMA, "run_tma_fidelity.py"))
    kit = importlib.util.module_from_spec(spec)
    sys.modules["run_tma_fidelity"] = kit
    spec.loader.exec_module(kit)
    return kit


def _h100_cases():
    kit = _kit()
    z = np.load(H100_DATA)
    return kit, z, [kit.Case(**c) for c in json.loads(str(z["cases_json"]))]


def test_h100_narrow_and_align_images_replay_through_the_model() -> None:
    kit, z, cases = _h100_cases()
    ran = faulted = 0
    for case in cases:
        hw_err = str(z[f"{case.name}:error"])
        if hw_err:                                  # hardware faulted: the model must refuse with a TmaError
            assert "ILLEGAL_INSTRUCTION" in hw_err or "MISALIGNED_ADDRESS" in hw_err, hw_err
            with pytest.raises(TmaError) as ei:
                kit.run_model(case)
            assert not isinstance(ei.value, TmaUnconfirmed), case.name
            faulted += 1
            continue
        res = kit.run_model(case)
        hw = z[f"{case.name}:image"]
        assert res["image"].shape == hw.shape and np.array_equal(res["image"], hw), case.name
        ran += 1
    assert ran == 15 and faulted == 10


def test_h100_narrow_and_align_images_replay_through_the_emulator() -> None:
    import ptxlab

    kit, z, cases = _h100_cases()
    dev = ptxlab.open_device("emu")
    n = 0
    for case in cases:
        if str(z[f"{case.name}:error"]) or case.name.endswith(("off256", "/hi")):
            continue
        res = kit.run_one("emu", case, 64, dev)
        assert res["error"] == "", (case.name, res["error"])
        assert np.array_equal(res["image"], z[f"{case.name}:image"]), case.name
        assert int(res["info"][0]) == 1
        n += 1
    assert n >= 8


# ------------------------------------------------------------------------- second H100 run (2026-11-22, run2)
H100_RUN2 = os.path.join(FIDELITY_TMA, "data", "h100_20261122_run2.npz")


def _run2_cases(prefix: str):
    kit = _kit()
    z = np.load(H100_RUN2)
    assert str(z["backend"]) == "cuda" and int(z["seed"]) == 20261122
    return kit, z, [kit.Case(**c) for c in json.loads(str(z["cases_json"])) if c["name"].startswith(prefix)]


def test_h100_run2_tx_only_the_full_box_completes_the_phase() -> None:
    """complete_tx of partially / fully OOB boxes counts the full box (UNCONFIRMED #10 settled): in each deferred-arrival
    group the hardware completed the phase for expect_tx = full box only, and the model predicts exactly that."""
    kit, z, cases = _run2_cases("tx/")
    groups: dict[str, dict[str, int]] = {}
    for case in cases:
        assert case.tx_mode == 1 and not str(z[f"{case.name}:error"]), case.name
        hw = z[f"{case.name}:info"]
        assert int(hw[6]) == 1, case.name                   # the helper copy issued after the load landed first
        done = int(hw[0])
        assert done == int(kit.run_model(case)["info"][0]), case.name
        assert done == int(tm.complete_tx_bytes(TensorMapSpec.make(
            case.dtype, 0x10000, case.shape, case.strides, case.box, case.estr, swizzle=case.swizzle).validate())
            == kit.expect_bytes(case)), case.name
        groups.setdefault(case.name.rsplit("/", 1)[0], {})[case.expect] = done
    assert len(groups) == 7
    for g, r in groups.items():
        assert r == {"full": 1, "inbound": 0, "fullm16": 0}, g
    assert any(c.inbound_bytes() == 0 for c in cases)                 # the entirely out-of-bounds group is there
    assert all(0 < c.inbound_bytes() < c.box_bytes() for c in cases if "allout" not in c.name)   # partially OOB
    text = kit.tx_verdicts(z, {c.name: c for c in cases})
    assert text.count("complete_tx = FULL box") == 7 and "INCONCLUSIVE" not in text


def test_h100_run2_tx_replays_through_the_emulator() -> None:
    """The same tx cases on the emulator: completion flag bit for bit, and the image of every completed load."""
    import ptxlab

    kit, z, cases = _run2_cases("tx/")
    dev = ptxlab.open_device("emu")
    for case in cases:
        if case.expect == "fullm16":
            continue                                          # same verdict as 'inbound'; keeps the test short
        res = kit.run_one("emu", case, 64, dev)
        assert res["error"] == "", (case.name, res["error"])
        assert int(res["info"][0]) == int(z[f"{case.name}:info"][0]), case.name
        if int(res["info"][0]):
            assert np.array_equal(res["image"], z[f"{case.name}:image"]), case.name


def test_h100_run2_narrow_loads_and_stores_replay_through_the_model() -> None:
    """Every narrow case of run 2: images (loads: shared window, stores: global buffer) bit for bit, and a TmaError
    (not TmaUnconfirmed) for every case that faulted on the H100. Checks the multiple-of-32 rule on all of them."""
    kit, z, cases = _run2_cases("narrow/")
    ran, faulted = [], []
    for case in cases:
        hw_err = str(z[f"{case.name}:error"])
        inner = case.box[0] * kit.BITS[case.dtype] // 8
        assert tm.narrow_inner_legal(case.swizzle, inner) == (not hw_err), case.name
        if hw_err:
            assert "ILLEGAL_INSTRUCTION" in hw_err, hw_err
            with pytest.raises(TmaError) as ei:
                kit.run_model(case)
            assert not isinstance(ei.value, TmaUnconfirmed), case.name
            faulted.append(case.name)
            continue
        res = kit.run_model(case)
        hw = z[f"{case.name}:image"]
        assert res["image"].shape == hw.shape and np.array_equal(res["image"], hw), case.name
        if case.kind == "load":
            assert int(res["info"][0]) == int(z[f"{case.name}:info"][0]) == 1, case.name
        ran.append(case.name)
    assert len(ran) == 12 and len(faulted) == 6
    assert "narrow/128B/inner96/in" in ran and sum("store" in n for n in ran) == 4


def test_h100_run2_narrow_loads_and_stores_replay_through_the_emulator() -> None:
    import ptxlab

    kit, z, cases = _run2_cases("narrow/")
    dev = ptxlab.open_device("emu")
    n = 0
    for case in cases:
        hw_err = str(z[f"{case.name}:error"])
        res = kit.run_one("emu", case, 64, dev)
        if hw_err:
            assert "ILLEGAL_INSTRUCTION" in res["error"] and "multiple of 32" in res["error"], case.name
            continue
        assert res["error"] == "", (case.name, res["error"])
        assert np.array_equal(res["image"], z[f"{case.name}:image"]), case.name
        n += 1
    assert n == 12


def test_h100_run2_nanfill_images_replay_through_the_model_and_the_emulator() -> None:
    """oob_fill='nan': the recorded H100 windows (FLOAT16 / FLOAT32, 128B swizzle, box OOB high) bit for bit."""
    import ptxlab

    kit, z, cases = _run2_cases("nan/")
    assert sorted(c.dtype for c in cases) == ["FLOAT16", "FLOAT32"]
    dev = ptxlab.open_device("emu")
    for case in cases:
        hw = z[f"{case.name}:image"]
        eb = kit.BITS[case.dtype] // 8
        n_oob = (case.box_bytes() - case.inbound_bytes()) // eb
        vals = hw.view(np.uint16 if eb == 2 else np.uint32)
        assert n_oob > 0 and int((vals == tm.OOB_NAN_BITS[case.dtype]).sum()) == n_oob, case.name
        for res in (kit.run_model(case), kit.run_one("emu", case, 64, dev)):
            assert res.get("error", "") == "", res["error"]
            assert np.array_equal(res["image"], hw), case.name
            assert int(res["info"][0]) == int(z[f"{case.name}:info"][0]) == 1


def test_h100_run2_store_images_replay_through_the_model() -> None:
    """The plain TMA stores of run 2 (none/128B UINT8, 64B FLOAT16; 2-D/3-D; in bounds and OOB high): global images
    bit for bit, OOB elements unwritten."""
    kit, z, cases = _run2_cases("store/")
    assert len(cases) == 12
    for case in cases:
        assert not str(z[f"{case.name}:error"]), case.name
        res = kit.run_model(case)
        assert np.array_equal(res["image"], z[f"{case.name}:image"]), case.name


def test_tf32_round_h100_pairs() -> None:
    """TFLOAT32 / TFLOAT32_FTZ loads round each in-bound FP32 to TF32 (H100, TMA kit run 3): literal pairs seen there."""
    pairs = {0x00000001: 0x0, 0x007FFFFF: 0x00800000, 0x00400000: 0x00400000, 0x3F800FFF: 0x3F800000,
             0x3F801000: 0x3F800000, 0x3F801FFF: 0x3F802000, 0x3F803000: 0x3F804000, 0x3F807FFF: 0x3F808000,
             0x3FFFFFFF: 0x40000000, 0x7F7FFFFF: 0x7F800000, 0x7F800000: 0x7F800000, 0xFF800000: 0xFF800000,
             0x7F800001: 0x7FFFE000, 0x7FBFFFFF: 0x7FFFE000, 0x7FC00000: 0x7FFFE000, 0xFFFFFFFF: 0x7FFFE000,
             0x80000001: 0x80000000, 0x04E155B5: 0x04E16000, 0x215D6030: 0x215D6000}
    got = tm.tf32_round(np.array(list(pairs), np.uint32))
    assert [hex(v) for v in got] == [hex(v) for v in pairs.values()]
    spec = spec2d(dtype="TFLOAT32_FTZ", global_shape=[32, 8], box=[32, 8], swizzle="128B")
    raw = np.array(list(pairs) * 14, np.uint32)[:256]
    plan = plan_tensor_load(spec, [0, 0], 0x400, reader(raw.view(np.uint8)))
    img = np.zeros(0x400 + 1024, np.uint8)
    img[plan.smem_addrs] = plan.values
    unswz = img[ref_swz("128B", np.arange(0x400, 0x400 + 1024))].view(np.uint32)
    assert np.array_equal(unswz, tm.tf32_round(raw))
    assert "FLOAT32_FTZ" not in tm.LOAD_CONVERT and "BFLOAT16" not in tm.LOAD_CONVERT   # raw copies (measured)
    with pytest.raises(TmaUnconfirmed, match="TF32"):
        plan_tensor_store(spec, [0, 0], 0x400)


# -------------------------------------------------------------------------- third H100 TMA run (2026-11-22, run3)
H100_RUN3 = os.path.join(FIDELITY_TMA, "data", "h100_20261122_run3.npz")


def _run3_cases(prefix: str):
    kit = _kit()
    z = np.load(H100_RUN3)
    assert str(z["backend"]) == "cuda" and int(z["seed"]) == 20261122
    return kit, z, [kit.Case(**c) for c in json.loads(str(z["cases_json"])) if c["name"].startswith(prefix)]


def test_h100_run3_narrow_loads_and_stores_replay_through_the_model() -> None:
    """Run 3's narrow cases: the predicted faults happened (loads 128B x 80/112 B, stores 128B x 48 B and 64B x 16 B),
    the new stores (128B x 32/96 B) match the model bit for bit; the multiple-of-32 rule agrees with every case."""
    kit, z, cases = _run3_cases("narrow/")
    ran, faulted = [], []
    for case in cases:
        hw_err = str(z[f"{case.name}:error"])
        inner = case.box[0] * kit.BITS[case.dtype] // 8
        assert tm.narrow_inner_legal(case.swizzle, inner) == (not hw_err), case.name
        if hw_err:
            assert "ILLEGAL_INSTRUCTION" in hw_err, hw_err
            with pytest.raises(TmaError, match="observed for this very pair") as ei:
                kit.run_model(case)
            assert not isinstance(ei.value, TmaUnconfirmed), case.name
            faulted.append(case.name)
            continue
        res = kit.run_model(case)
        hw = z[f"{case.name}:image"]
        assert res["image"].shape == hw.shape and np.array_equal(res["image"], hw), case.name
        ran.append(case.name)
    assert len(ran) == 16 and len(faulted) == 10
    assert {"narrow/128B/inner80/in", "narrow/128B/inner112/in", "narrow/store/128B/inner48/in",
            "narrow/store/64B/inner16/in"} <= set(faulted)
    assert sum("store" in n for n in ran) == 8


def test_h100_run3_narrow_replays_through_the_emulator() -> None:
    import ptxlab

    kit, z, cases = _run3_cases("narrow/")
    dev = ptxlab.open_device("emu")
    n = 0
    for case in cases:
        if "store" not in case.name and "inner80" not in case.name and "inner112" not in case.name:
            continue                                  # the other loads repeat run 2 (replayed above)
        hw_err = str(z[f"{case.name}:error"])
        res = kit.run_one("emu", case, 64, dev)
        if hw_err:
            assert "ILLEGAL_INSTRUCTION" in res["error"] and "multiple of 32" in res["error"], case.name
            continue
        assert res["error"] == "", (case.name, res["error"])
        assert np.array_equal(res["image"], z[f"{case.name}:image"]), case.name
        n += 1
    assert n == 8


def test_h100_run3_nanfill_and_conversion_replay_through_the_model_and_the_emulator() -> None:
    """oob_fill='nan' on every float type and in-bound special values: the H100 windows bit for bit (OOB pattern per
    dtype; TFLOAT32 / TFLOAT32_FTZ in-bound data rounded to TF32, the others copied raw)."""
    import ptxlab

    kit, z, cases = _run3_cases("nan/")
    assert len(cases) == 12
    dev = ptxlab.open_device("emu")
    for case in cases:
        hw = z[f"{case.name}:image"]
        eb = kit.BITS[case.dtype] // 8
        vals = hw.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[eb])
        if case.name.endswith("/hi"):
            n_oob = (case.box_bytes() - case.inbound_bytes()) // eb
            assert n_oob > 0 and int((vals == tm.OOB_NAN_BITS[case.dtype]).sum()) == n_oob, case.name
        else:                                         # in bounds: converted iff the dtype converts
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(tm, "LOAD_CONVERT", {})
                raw = kit.run_model(case)["image"]
            assert (not np.array_equal(raw, hw)) == (case.dtype in tm.LOAD_CONVERT), case.name
        for res in (kit.run_model(case), kit.run_one("emu", case, 64, dev)):
            assert res.get("error", "") == "", res["error"]
            assert np.array_equal(res["image"], hw), case.name
            assert int(res["info"][0]) == int(z[f"{case.name}:info"][0]) == 1


def test_h100_run3_txnarrow_counts_the_unpadded_box() -> None:
    """complete_tx of a narrow swizzled box = box bytes (rows x inner), not rows x span: deferred arrival completed
    for expect_tx = box bytes only, on the H100, the model and the emulator."""
    import ptxlab

    kit, z, cases = _run3_cases("tx/narrow/")
    assert len(cases) == 6
    dev = ptxlab.open_device("emu")
    for case in cases:
        hw = int(z[f"{case.name}:info"][0])
        assert hw == int(case.expect == "full"), case.name
        assert int(kit.run_model(case)["info"][0]) == hw, case.name
        res = kit.run_one("emu", case, 64, dev)
        assert res["error"] == "" and int(res["info"][0]) == hw, (case.name, res["error"])
        if hw:
            assert np.array_equal(res["image"], z[f"{case.name}:image"]), case.name
