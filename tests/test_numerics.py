"""Codecs in ptxlab.numerics against values computed here from the bit formulas (PTX ISA 5.2.3)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from ptxlab import numerics as nm


@pytest.fixture
def rng() -> np.random.Generator:
    seed = int.from_bytes(os.urandom(8), "little")
    print(f"rng seed = {seed}")  # shown by pytest on failure
    return np.random.default_rng(seed)


def e2m1_formula(c: int) -> float:
    s, e, m = c >> 3, (c >> 1) & 3, c & 1
    mag = m * 0.5 if e == 0 else (1 + m / 2) * 2.0 ** (e - 1)
    return -mag if s else mag


def e4m3_formula(c: int) -> float:
    s, e, m = c >> 7, (c >> 3) & 15, c & 7
    if e == 15 and m == 7:
        return math.nan
    mag = m / 8 * 2.0**-6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
    return -mag if s else mag


def e5m2_formula(c: int) -> float:
    s, e, m = c >> 7, (c >> 2) & 31, c & 3
    if e == 31:
        mag = math.inf if m == 0 else math.nan
    else:
        mag = m / 4 * 2.0**-14 if e == 0 else (1 + m / 4) * 2.0 ** (e - 15)
    return -mag if s else mag


def same(a: float, b: float) -> bool:
    """Equal including NaN == NaN and the sign of zero."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def test_e2m1_all_codes() -> None:
    got = nm.decode_e2m1(np.arange(16, dtype=np.uint8))
    assert got.dtype == np.float32
    for c in range(16):
        assert same(float(got[c]), e2m1_formula(c)), c
    assert [e2m1_formula(c) for c in range(8)] == [0, 0.5, 1, 1.5, 2, 3, 4, 6]  # ptx_facts §8 table


def test_e4m3_and_ue4m3_all_codes() -> None:
    got = nm.decode_e4m3(np.arange(256, dtype=np.uint8))
    for c in range(256):
        assert same(float(got[c]), e4m3_formula(c)), hex(c)
    ue = nm.decode_ue4m3(np.arange(128, dtype=np.uint8))
    for c in range(128):
        assert same(float(ue[c]), e4m3_formula(c)), hex(c)
    assert e4m3_formula(0x7E) == 448.0 and float(ue[0x38]) == 1.0 and float(ue[0x44]) == 3.0


def test_ue4m3_rejects_sign_bit_codes() -> None:
    with pytest.raises(ValueError, match="sign bit"):
        nm.decode_ue4m3(np.array([0x38, 0x80], dtype=np.uint8))


def test_ue8m0_and_e5m2_all_codes() -> None:
    u = nm.decode_ue8m0(np.arange(256, dtype=np.uint8))
    for c in range(255):
        assert float(u[c]) == 2.0 ** (c - 127), c
    assert math.isnan(float(u[255]))
    e = nm.decode_e5m2(np.arange(256, dtype=np.uint8))
    for c in range(256):
        assert same(float(e[c]), e5m2_formula(c)), hex(c)


@pytest.mark.parametrize("codec", ["e2m1", "e4m3", "ue4m3", "ue8m0", "e5m2"])
def test_encode_decode_round_trip_all_codes(codec: str) -> None:
    enc, dec = getattr(nm, f"encode_{codec}"), getattr(nm, f"decode_{codec}")
    n = {"e2m1": 16, "ue4m3": 128}.get(codec, 256)
    codes = np.arange(n, dtype=np.uint8)
    vals = dec(codes)
    keep = ~np.isnan(vals) & ~np.isinf(vals)
    assert np.array_equal(enc(vals[keep]), codes[keep])


def _nearest_even(x: float, table: list[float], sat: float) -> int:
    """Index of the RNE-nearest non-negative table entry to |x| (saturating at sat); ties pick the even code."""
    ax = min(abs(x), sat)
    best = min(range(len(table)), key=lambda i: (abs(table[i] - ax), i & 1))
    return best


def test_encode_e2m1_rounding(rng: np.random.Generator) -> None:
    pos = [e2m1_formula(c) for c in range(8)]
    x = rng.uniform(-8, 8, size=2000)
    x[:8] = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -5.0]  # exact ties
    got = nm.encode_e2m1(x)
    for xi, gi in zip(x, got):
        want = _nearest_even(xi, pos, 6.0) | (8 if xi < 0 else 0)
        assert gi == want, (xi, gi, want)


def test_encode_ue4m3_rounding(rng: np.random.Generator) -> None:
    pos = [e4m3_formula(c) for c in range(127)]
    x = np.concatenate([rng.uniform(0, 448, 1000), 2.0 ** rng.uniform(-12, 8, 1000)])
    got = nm.encode_ue4m3(x)
    for xi, gi in zip(x, got):
        assert gi == _nearest_even(xi, pos, 448.0), (xi, gi)


def test_encoders_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="NaN"):
        nm.encode_e2m1([1.0, np.nan])
    with pytest.raises(ValueError, match="NaN"):
        nm.encode_e2m1([np.inf])
    with pytest.raises(ValueError, match="negative"):
        nm.encode_ue4m3([1.0, -0.5])
    with pytest.raises(ValueError, match="NaN"):
        nm.encode_ue4m3([np.nan])
    with pytest.raises(ValueError, match="NaN"):
        nm.encode_ue4m3([np.inf])
    with pytest.raises(ValueError, match="overflow"):
        nm.encode_ue4m3([500.0])
    assert nm.encode_ue4m3([500.0], saturate=True)[0] == 0x7E
    assert nm.encode_ue4m3([-0.0])[0] == 0
    with pytest.raises(ValueError):
        nm.encode_ue8m0([0.0])
    with pytest.raises(ValueError):
        nm.encode_ue8m0([-2.0])
    with pytest.raises(ValueError):
        nm.decode_e2m1([16])
    with pytest.raises(TypeError):
        nm.decode_e2m1(np.array([1.0]))


def test_pack_unpack(rng: np.random.Generator) -> None:
    codes = rng.integers(0, 16, size=(3, 5, 64)).astype(np.uint8)
    packed = nm.pack_fp4(codes)
    assert packed.shape == (3, 5, 32) and packed.dtype == np.uint8
    for idx in np.ndindex(3, 5):
        for i in range(32):
            assert packed[idx][i] == codes[idx][2 * i] + 16 * codes[idx][2 * i + 1]
    assert np.array_equal(nm.unpack_fp4(packed), codes)
    raw = rng.integers(0, 256, size=(7, 9)).astype(np.uint8)
    assert np.array_equal(nm.pack_fp4(nm.unpack_fp4(raw)), raw)
    vals = nm.decode_fp4x2(raw)
    for r in range(7):
        for i in range(9):
            assert same(float(vals[r, 2 * i]), e2m1_formula(int(raw[r, i]) & 15))
            assert same(float(vals[r, 2 * i + 1]), e2m1_formula(int(raw[r, i]) >> 4))
    with pytest.raises(ValueError, match="even"):
        nm.pack_fp4(np.zeros(3, dtype=np.uint8))
