"""The H100's lowerings of FP8 m16n8k32 and m8n8k4 f32 mma.sync (ptxlab/emu/hw/warp_mma_sm90.py) against the H100's
own outputs: every word of the corpus entries mma_sync_fp8 and mma_sync_m8n8k4_f32 (tests/fidelity/isa/data/README.md),
then constructed cases where the lowering differs from the one-window tensor-core rule."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ptxlab.emu.hw.warp_mma_arith import mma_float
from ptxlab.emu.hw.warp_mma_sm90 import mma_fp8_sm90, mma_m8n8k4_f32_sm90
from ptxlab.mma.codec import ModelSilent

DATA = Path(__file__).resolve().parents[2] / "fidelity" / "isa" / "data" / "h100_20261128_fp8_mma.npz"
FP8 = [f"{a}_{b}" for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2")]
M884 = [f"a{a}b{b}f1" for a in (0, 1) for b in (0, 1)]


@pytest.mark.parametrize("case", FP8)
def test_fp8_every_h100_word(case):
    z = np.load(DATA)
    at, bt = case.split("_")
    a, b, c = (z[f"mma_sync_fp8::in::mma_m16n8k32_{case}_{x}"] for x in "abc")
    hw = z[f"mma_sync_fp8::out::mma_m16n8k32_{case}"]
    for p in range(hw.shape[0]):                 # problem 0 exact regime, problem 1 full range (NaN / Inf codes)
        np.testing.assert_array_equal(mma_fp8_sm90(a[p], b[p].T, c[p], at, bt), hw[p])
    assert (hw[1] == 0x7FFFFFFF).any()          # the full-range problem reached the NaN rule


@pytest.mark.parametrize("key", M884)
def test_m8n8k4_f32_every_h100_word(key):
    z = np.load(DATA)
    a, b, c = (z[f"mma_sync_m8n8k4_f32::in::{key}_{x}"] for x in "abc")
    hw = z[f"mma_sync_m8n8k4_f32::out::{key}"]
    for p in range(hw.shape[0]):                 # problems 0-3 exact, 4-7 full range
        np.testing.assert_array_equal(mma_m8n8k4_f32_sm90(a[p], b[p].T, c[p]), hw[p])


def _e4m3(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.float8_e4m3fn).view(np.uint8).astype(np.uint32)


def test_fp8_groups_then_c_by_add_rn(rng):
    """k % 4 < 2 first (a 25-bit window, truncated), then k % 4 >= 2, then C rounded to nearest: a product of 2**16
    in the first group truncates 2**-10 to nothing; in the second group's window it survives as part of the f32
    accumulator; C = 2**-9 is added by add.rn."""
    a = np.zeros((16, 32), np.float32)
    b = np.zeros((32, 8), np.float32)
    a[0, 0], b[0, 0] = 256.0, 256.0              # 2**16, group 1 (k = 0)
    a[0, 1], b[1, 0] = 2.0 ** -5, 2.0 ** -5      # 2**-10, group 1: below 2**(16 - 25): truncated away
    a[0, 2], b[2, 0] = 2.0 ** -5, 2.0 ** -4      # 2**-9, group 2 (k = 2): window of 2**16 again: truncated away
    c = np.zeros((16, 8), np.float32)
    c[0, 0] = np.float32(3.0)
    d = mma_fp8_sm90(_e4m3(a), _e4m3(b), c.view(np.uint32), "e4m3", "e4m3").view(np.float32)
    assert d[0, 0] == np.float32(65536.0 + 3.0)
    one = mma_float(_e4m3(a), _e4m3(b), c.view(np.uint32), "e4m3", "e4m3", "f32").view(np.float32)
    assert one[0, 0] == d[0, 0]                  # one window gives the same here ...
    c[0, 0] = np.float32(2.0 ** -8 + 2.0 ** -30)   # ... but C is rounded to nearest only by the lowering's add
    cw = c.view(np.uint32)
    d = mma_fp8_sm90(_e4m3(a), _e4m3(b), cw, "e4m3", "e4m3").view(np.float32)[0, 0]
    assert d == np.float32(65536.0) + np.float32(2.0 ** -8 + 2.0 ** -30)
    assert mma_float(_e4m3(a), _e4m3(b), cw, "e4m3", "e4m3", "f32").view(np.float32)[0, 0] == np.float32(65536.0)
    rand = rng.integers(0, 256, (2, 16, 32)).astype(np.uint32)
    rand[rand & 0x7F == 0x7F] = 0x38                # no NaN codes: a finite random problem agrees with float64
    d = mma_fp8_sm90(rand[0], rand[1].T[:, :8].copy(), np.zeros((16, 8), np.uint32), "e4m3", "e4m3").view(np.float32)
    av, bv = (x.astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64) for x in (rand[0], rand[1].T[:, :8]))
    ref = av @ bv                                 # each step loses < 2 units of 2**-23 relative to the largest term
    assert np.all(np.abs(d - ref) <= (np.abs(av) @ np.abs(bv)) * 2.0 ** -20)


def test_m8n8k4_f32_is_an_fma_chain_then_add(rng):
    """d = a0 b0; d = fma.rn(a_k, b_k, d) for k = 1..3; D = d + C (round to nearest): a case where every step rounds."""
    f16 = lambda x: np.asarray(x, np.float16).view(np.uint16).astype(np.uint32)       # noqa: E731
    a = np.ones((8, 4), np.float16)
    b = np.ones((4, 8), np.float16)
    a[0] = [2048.0, 2.0 ** -13, 2.0 ** -13, 0.0]   # half an f32 ulp of 2048 twice: each step rounds to even
    c = np.full((8, 8), np.float32(1.0))
    c[0, 0] = np.float32(0.0)
    d = mma_m8n8k4_f32_sm90(f16(a), f16(b), c.view(np.uint32)).view(np.float32)
    assert d[0, 0] == np.float32(2048.0)
    assert np.float32(2048.0 + 2.0 ** -12) != np.float32(2048.0)           # the exact sum is one ulp higher
    one = mma_float(f16(a), f16(b), c.view(np.uint32), "f16", "f16", "f32").view(np.float32)
    assert one[0, 0] == np.float32(2048.0 + 2.0 ** -12)                     # the one-window rule keeps it
    assert np.all(d[1:] == np.float32(5.0))


def test_m8n8k4_f32_refuses_an_unmeasured_zero_sign():
    a = np.zeros((8, 4), np.uint32)
    a[0, 0] = 0x8000                              # -0.0 x +0.0: every product and C zero, one of them negative
    with pytest.raises(ModelSilent, match="sign of the zero"):
        mma_m8n8k4_f32_sm90(a, np.zeros((4, 8), np.uint32), np.zeros((8, 8), np.uint32))
