"""Hopper FP8 wgmma arithmetic (ptxlab/emu/hw/wgmma_fp8_arith.py) against the H100's own outputs: every output word
of the corpus entry wgmma_fp8 (tests/fidelity/isa/data/README.md), and the cases the rule refuses."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptxlab.emu.hw.wgmma_fp8_arith import mma_fp8_hopper
from ptxlab.mma.codec import ModelSilent

DATA = Path(__file__).resolve().parents[2] / "fidelity" / "isa" / "data" / "h100_20261128_fp8_mma.npz"
# (variant, A type, B type, D type, imm-scale-a) as tests/kernels/gen_wgmma.py VARIANTS
CASES = [("wg_e4m3_e5m2_n16", "e4m3", "e5m2", "f32", 1), ("wg_e5m2_e4m3_n16_f16", "e5m2", "e4m3", "f16", -1),
         ("wg_e4m3_n32_rs", "e4m3", "e4m3", "f32", 1)]


@pytest.mark.parametrize("mode", ["exact", "full"])
@pytest.mark.parametrize("name,at,bt,dt,sa", CASES, ids=[c[0] for c in CASES])
def test_every_h100_word_of_the_corpus(name, at, bt, dt, sa, mode):
    z = np.load(DATA)
    key = f"{name}_{mode}"
    a, b, c = (z[f"wgmma_fp8::in::{key}_{x}"] for x in "abc")
    hw = z[f"wgmma_fp8::out::{key}"]
    a = a if sa == 1 else a ^ np.uint32(0x80)            # imm-scale-a -1 flips A's sign bits (as the emulator)
    d = mma_fp8_hopper(a, b.T, c, at, bt, dt)
    assert d.shape == hw.shape
    np.testing.assert_array_equal(d, hw)
    if mode == "full":                                   # the full case exercises NaN, Inf and the C-dominant path
        assert (hw & np.uint32(0x7FFFFFFF if dt == "f32" else 0x7FFF)).max() > 0


def _codes(rng, shape, lo=-2, hi=2):
    import ml_dtypes
    return rng.integers(lo, hi + 1, shape).astype(np.float32).astype(ml_dtypes.float8_e4m3fn).view(np.uint8) \
        .astype(np.uint32)


def test_window_and_fourteen_bits_on_a_constructed_case(rng):
    """One large product and small ones: the small ones are truncated to 2**(E-13) units, the sum to 14 bits."""
    import ml_dtypes
    a = np.zeros((1, 32), np.float32)
    b = np.zeros((32, 1), np.float32)
    a[0, 0], b[0, 0] = 448.0, 448.0                 # 200704: raw exponent 8 + 8 = 16, window unit 2**3
    a[0, 1:4], b[1:4, 0] = 1.75, 1.75               # 3.0625 each: truncated to 0 units of 8
    a[0, 4], b[4, 0] = 96.0, 1.5                    # 144 = 18 units of 8, exact
    ac = a.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).astype(np.uint32)
    bc = b.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).astype(np.uint32)
    c = np.array([[np.float32(7.0)]]).view(np.uint32)   # truncated to 0
    d = mma_fp8_hopper(ac, bc, c, "e4m3", "e4m3", "f32").view(np.float32)[0, 0]
    # 200704 + 144 = 200848 (18 significant bits) -> truncated to 14: multiple of 2**4 -> 200848 - 200848 % 16
    assert d == np.float32(200848 - 200848 % 16)
    exact = 200704 + 3 * 3.0625 + 144 + 7
    assert d != exact


def test_unmeasured_cases_are_refused(rng):
    a = _codes(rng, (4, 32))
    b = _codes(rng, (32, 4))
    zero_a = np.zeros_like(a)
    c = np.full((4, 4), np.float32(3.0)).view(np.uint32)
    with pytest.raises(ModelSilent, match="every product zero"):
        mma_fp8_hopper(zero_a, b, c, "e4m3", "e4m3", "f32")
    tiny_a = np.zeros((4, 32), np.uint32)
    tiny_b = np.zeros((32, 4), np.uint32)
    tiny_a[:, 0], tiny_b[0, :] = 0x81, 0x01             # e5m2 -2**-16 x e4m3 2**-9 = -2**-25: rounds to f16 -0
    with pytest.raises(ModelSilent, match="rounds to zero"):
        mma_fp8_hopper(tiny_a, tiny_b, np.zeros((4, 4), np.uint32), "e5m2", "e4m3", "f16")
    # C = 0 with products: taken as no term (UNCONFIRMED, probe wgmma_fp8_probe)
    d = mma_fp8_hopper(a, b, np.zeros((4, 4), np.uint32), "e4m3", "e4m3", "f32")
    ref = a.astype(np.uint8).view(__import__("ml_dtypes").float8_e4m3fn).astype(np.float64) @ \
        b.astype(np.uint8).view(__import__("ml_dtypes").float8_e4m3fn).astype(np.float64)
    np.testing.assert_array_equal(d.view(np.float32), ref.astype(np.float32))   # small integers: exact


PROBE_F16 = DATA.parent / "h100_20261128_fp8_probe_f16.npz"


@pytest.mark.parametrize("mode", ["exact", "full"])
def test_f16_words_of_the_probe(mode):
    """The probe wgmma_fp8_probe (H100, 2026-11-28) found f16 D 1 ulp above a 14-bit truncated sum: f16 D rounds the
    whole windowed sum. Every f16 word of that run."""
    z = np.load(PROBE_F16)
    key = f"wg_e5m2_e4m3_n16_f16_{mode}"
    a, b, c = (z[f"wgmma_fp8_probe::in::{key}_{x}"] for x in "abc")
    hw = z[f"wgmma_fp8_probe::out::{key}"]
    d = mma_fp8_hopper(a ^ np.uint32(0x80), b.T, c, "e5m2", "e4m3", "f16")
    np.testing.assert_array_equal(d, hw)
