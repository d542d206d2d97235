"""Tests for ptxlab.mma: frozen B200 vectors, hand-worked rule cases, exact-sum properties, bounds.

Random tests draw a fresh seed from os.urandom; it is printed in every assertion message.
Test-side value decoding uses ml_dtypes / numpy views, not the module's decoders.
"""
from __future__ import annotations

import math
import os
import random

import ml_dtypes
import numpy as np
import pytest

from ptxlab.mma import ModelSilent, exact_regime, mma, mma_exact

U8, U16, U32 = np.uint8, np.uint16, np.uint32


def seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


def f32bits(x: float) -> int:
    return int(np.array([x], np.float32).view(U32)[0])


def one(kind: str, a: list[int], b: list[int], **kw) -> int:
    """D word of a 1x1 MMA with A row a and B row b."""
    dt = {"f16": U16, "bf16": U16, "tf32": U32}.get(kw.get("a_fmt"), U8)
    dtb = {"f16": U16, "bf16": U16, "tf32": U32}.get(kw.get("b_fmt"), U8)
    if "c" in kw and isinstance(kw["c"], int):
        kw["c"] = np.array([[kw["c"]]], U32)
    for s in ("sfa", "sfb"):
        if s in kw:
            kw[s] = np.array([kw[s]], U8)
    return int(mma(kind, np.array([a], dt), np.array([b], dtb), **kw)[0, 0])


def pad(vals: dict[int, int], k: int) -> list[int]:
    out = [0] * k
    for i, v in vals.items():
        out[i] = v
    return out


# ----------------------------------------------------------------------------------------------------------
# Frozen B200 result words. Source: sf-tensor/tcgen05, tcgen05_model/validation.py (MIT, (c) sf-tensor).
# Inputs are regenerated from the recipe there (random.Random(seed) draws, in that order); the expected words
# are the B200 hardware results frozen in that file.
# ----------------------------------------------------------------------------------------------------------

def _ff32(rng: random.Random) -> int:
    bits = rng.getrandbits(32)
    return bits & 0x807FFFFF if bits & 0x7F800000 == 0x7F800000 else bits


UNSCALED = [  # fmt, kind, K, seed, element draw, expected words
    ("tf32", "tf32", 8, 104, _ff32, (0xFF800000, 0xFC347E7C)),
    ("bf16", "f16", 16, 104, _ff32, (0x7F800000, 0x7F800000)),
    ("f16", "f16", 16, 103, lambda r: r.getrandbits(16), (0x7FFFFFFF, 0x49776BBA)),
    ("e4m3", "f8f6f4", 32, 104, lambda r: r.randrange(0x7F), (0xEC63D12A, 0x452AF963)),
    ("e5m2", "f8f6f4", 32, 300, lambda r: r.randrange(0x7C), (0x4D92B09A, 0x4C9C1102)),
    ("e2m3", "f8f6f4", 32, 301, lambda r: r.randrange(0x40), (0xC29DD800, 0x449D14C1)),
    ("e3m2", "f8f6f4", 32, 302, lambda r: r.randrange(0x40), (0x52C9EC63, 0xC33B7700)),
    ("e2m1", "f8f6f4", 32, 303, lambda r: r.randrange(0x10), (0xC1FE0000, 0xDC3B62A3)),
]


@pytest.mark.parametrize("fmt,kind,k,sd,draw,expected", UNSCALED, ids=[u[0] for u in UNSCALED])
def test_frozen_unscaled(fmt, kind, k, sd, draw, expected):
    rng = random.Random(sd)
    for i, want in enumerate(expected):
        a = [draw(rng) for _ in range(k)]
        b = [draw(rng) for _ in range(k)]
        c = _ff32(rng)
        if fmt == "bf16":          # the recipe draws F32 containers; bf16 is their high half
            a, b = [x >> 16 for x in a], [x >> 16 for x in b]
        got = one(kind, a, b, a_fmt=fmt, b_fmt=fmt, c=c)
        assert got == want, f"{fmt}-{i}: got {got:#010x}, B200 {want:#010x}"


INTEGER = [("u8", "u8", False, 500, 0x078A5C64), ("s8", "u8", False, 501, 0xF66E2FA6),
           ("u8", "s8", False, 502, 0xD73F1A46), ("s8", "s8", True, 503, 0x8063D12F),
           ("s8", "s8", False, 504, 0xA4679E93), ("u8", "u8", True, 505, 0x55DB8BB8),
           ("s8", "u8", True, 506, 0xB47F6330), ("u8", "s8", True, 507, 0x8533C14D)]


@pytest.mark.parametrize("at,bt,sat,sd,want", INTEGER)
def test_frozen_integer(at, bt, sat, sd, want):
    rng = random.Random(sd)
    a = [rng.randrange(256) for _ in range(32)]
    b = [rng.randrange(256) for _ in range(32)]
    c = _ff32(rng)
    assert one("i8", a, b, a_fmt=at, b_fmt=bt, d_fmt="s32", c=c, saturate=sat) == want


def test_frozen_nvfp4():
    rng = random.Random(700)
    for want in (0x4429730B, 0xC30545D3):
        a = [rng.randrange(16) for _ in range(64)]
        b = [rng.randrange(16) for _ in range(64)]
        c = _ff32(rng)
        sa = [rng.randrange(0x77) for _ in range(4)]
        sb = [rng.randrange(0x77) for _ in range(4)]
        got = one("mxf4nvf4", a, b, a_fmt="e2m1", b_fmt="e2m1", c=c, sfa=sa, sfb=sb, scale_fmt="ue4m3")
        assert got == want, f"got {got:#010x}, B200 {want:#010x}"


def test_frozen_ue8m0():
    rng = random.Random(910)
    a = [rng.randrange(16) for _ in range(32)]
    b = [rng.randrange(16) for _ in range(32)]
    sa, sb = rng.randrange(115, 140), rng.randrange(115, 140)
    assert one("mxf8f6f4", a, b, a_fmt="e2m1", b_fmt="e2m1", sfa=[sa], sfb=[sb]) == 0x3F094000
    for kind, blk, sd, cnt, want in (("mxf4", 32, 920, 2, 0x46BA8000), ("mxf4nvf4", 32, 921, 2, 0x40580000),
                                     ("mxf4nvf4", 16, 922, 4, 0xC6A88896)):
        rng = random.Random(sd)
        a = [rng.randrange(16) for _ in range(64)]
        b = [rng.randrange(16) for _ in range(64)]
        sa = [rng.randrange(115, 140) for _ in range(cnt)]
        sb = [rng.randrange(115, 140) for _ in range(cnt)]
        got = one(kind, a, b, a_fmt="e2m1", b_fmt="e2m1", sfa=sa, sfb=sb, scale_fmt="ue8m0", block=blk)
        assert got == want, f"{kind} block{blk}: got {got:#010x}, B200 {want:#010x}"


EDGE = [  # fmt, kind, K, one, min subnormal, NaN, Inf, expected(min subnormal x one)
    ("tf32", "tf32", 8, 0x3F800000, 0x00002000, 0x7FC00000, 0x7F800000, 0x00002000),
    ("bf16", "f16", 16, 0x3F80, 0x0001, 0x7FC0, 0x7F80, 0x00010000),
    ("f16", "f16", 16, 0x3C00, 0x0001, 0x7E00, 0x7C00, 0x33800000),
    ("e4m3", "f8f6f4", 32, 0x38, 0x01, 0x7F, None, 0x3B000000),
    ("e5m2", "f8f6f4", 32, 0x3C, 0x01, 0x7F, 0x7C, 0x37800000),
]


@pytest.mark.parametrize("fmt,kind,k,o,sub,nan,inf,subres", EDGE, ids=[e[0] for e in EDGE])
def test_frozen_edges(fmt, kind, k, o, sub, nan, inf, subres):
    kw = dict(a_fmt=fmt, b_fmt=fmt)
    assert one(kind, pad({}, k), pad({}, k), c=0x80000000, **kw) == 0           # -0 C, zero products -> +0
    assert one(kind, pad({0: sub}, k), pad({0: o}, k), **kw) == subres
    assert one(kind, pad({0: nan}, k), pad({0: o}, k), **kw) == 0x7FFFFFFF
    if inf is not None:
        assert one(kind, pad({0: inf}, k), pad({0: o}, k), **kw) == 0x7F800000
        assert one(kind, pad({0: inf}, k), pad({}, k), **kw) == 0x7FFFFFFF
    if fmt == "tf32":    # payload only in the 13 cleared bits: NaN becomes Inf at the input
        assert one(kind, pad({0: 0x7F800001}, k), pad({0: o}, k), **kw) == 0x7F800000


def test_frozen_edges_scaled_and_f16d():
    nvfp4 = one("mxf4nvf4", [1] * 64, [1] * 64, a_fmt="e2m1", b_fmt="e2m1", sfa=[0x7F, 0x38, 0x38, 0x38],
                sfb=[0x38] * 4, scale_fmt="ue4m3")
    assert nvfp4 == 0x7FFFFFFF
    a = bytes.fromhex("0e 0e 0b 06 00 08 0f 09 0a 0b 03 09 0f 07 0e 00 02 06 01 05 0a 08 06 04 07 0c 06 0b 01 0c 06 0d "
                      "0b 0b 08 06 0c 08 0c 05 00 04 01 0f 01 06 0f 05 02 04 06 05 0a 07 0b 07 00 01 0a 0d 0b 0f 0e 07")
    b = bytes.fromhex("06 0c 0b 02 08 09 0b 04 03 0d 02 09 09 0c 01 08 07 02 06 03 0d 02 09 0a 05 09 0f 05 0a 08 06 00 "
                      "08 0d 0d 02 0c 0c 05 02 08 03 04 0f 0f 01 01 0a 0b 0a 05 0b 0f 03 0b 0e 0a 05 07 01 01 07 08 0a")
    got = one("mxf4nvf4", list(a), list(b), a_fmt="e2m1", b_fmt="e2m1", c=0x094E5986,
              sfa=[0x09, 0x7C, 0x6D, 0x44], sfb=[0x07, 0x78, 0x26, 0x79], scale_fmt="ue4m3")
    assert got == 0x49FCAFB7, f"nvfp4-k4-product-carry: {got:#010x}"
    assert one("mxf8f6f4", [1] * 32, [1] * 32, a_fmt="e2m1", b_fmt="e2m1", sfa=[0xFF], sfb=[0x7F]) == 0x7FFFFFFF
    kw = dict(a_fmt="e2m1", b_fmt="e4m3", d_fmt="f16")
    assert one("f8f6f4", [1] * 32, pad({0: 0x7F}, 32), **kw) == 0x7FFF
    assert one("f8f6f4", [0] * 32, [0] * 32, c=0x7E00, **kw) == 0x7FFF


# ----------------------------------------------------------------------------------------------------------
# Hand-worked cases, one per rule.
# ----------------------------------------------------------------------------------------------------------

F16 = dict(a_fmt="f16", b_fmt="f16")


def test_window_truncation_drops_low_bits():
    # f16 1.0 (0x3c00) x 1.0: r = 0. Eight products 2**-14 (0x0400, raw -14) x 2**-12 (0x0c00, raw -12) = 2**-26,
    # r = -26. q = max(r) - 25 = -25, each 2**-26 is half a unit -> truncated to 0. Units = 2**25 -> 1.0.
    # The exact sum 1 + 8*2**-26 = 1 + 2**-23 is an F32 (0x3f800001): the window, not final rounding, lost it.
    a = pad({0: 0x3C00, **{i: 0x0400 for i in range(1, 9)}}, 16)
    b = pad({0: 0x3C00, **{i: 0x0C00 for i in range(1, 9)}}, 16)
    assert one("f16", a, b, **F16) == 0x3F800000
    assert mma_exact("f16", np.array([a], U16), np.array([b], U16), **F16)[0, 0] == 1 + 2.0**-23


def test_window_truncates_toward_zero_per_term():
    # 1.0*1.0 + (-2**-14)*(2**-12): q = -25, the -2**-26 term is -0.5 unit -> trunc toward zero -> 0 (floor would
    # give -1 unit). Units 2**25 -> 0x3f800000, while RZ of the exact 1 - 2**-26 would be 0x3f7fffff.
    a = pad({0: 0x3C00, 1: 0x8400}, 16)
    b = pad({0: 0x3C00, 1: 0x0C00}, 16)
    assert one("f16", a, b, **F16) == 0x3F800000


def test_final_normalization_truncates_f32():
    # 1*1 + 2**-14*2**-9 + 2**-14*2**-10 (f16 0x0400, 0x1800, 0x1400): q = -25, units 2**25 + 4 + 2 exact.
    # 26 significant bits -> keep 24 by truncation: (2**25 + 6) >> 2 = 2**23 + 1 -> 0x3f800001 (RNE: ...02).
    a = pad({0: 0x3C00, 1: 0x0400, 2: 0x0400}, 16)
    b = pad({0: 0x3C00, 1: 0x1800, 2: 0x1400}, 16)
    assert one("f16", a, b, **F16) == 0x3F800001
    neg = [x ^ 0x8000 if x else 0 for x in a]             # all negative: truncation toward zero -> 0xbf800001
    assert one("f16", neg, b, **F16) == 0xBF800001


def test_negate_a_b():
    # Same as above with idesc negate A: every product flips sign -> 0xbf800001; negate both: unchanged.
    a = pad({0: 0x3C00, 1: 0x0400, 2: 0x0400}, 16)
    b = pad({0: 0x3C00, 1: 0x1800, 2: 0x1400}, 16)
    assert one("f16", a, b, negate_a=True, **F16) == 0xBF800001
    assert one("f16", a, b, negate_a=True, negate_b=True, **F16) == 0x3F800001


def test_f16_d_round_to_nearest_even():
    # kind::f8f6f4 e4m3, F16 D. 1.0 = 0x38*0x38. 2**-11 = 0x08 (2**-6) * 0x10 (2**-5). 3*2**-11 = 0x0c (1.5*2**-6)
    # * 0x18 (2**-4). F16 ulp at 1 is 2**-10.
    kw = dict(a_fmt="e4m3", b_fmt="e4m3", d_fmt="f16")
    # 1 + 2**-11: exact tie between 0x3c00 and 0x3c01 -> even 0x3c00.
    assert one("f8f6f4", pad({0: 0x38, 1: 0x08}, 32), pad({0: 0x38, 1: 0x10}, 32), **kw) == 0x3C00
    # 1 + 3*2**-11: tie between 0x3c01 and 0x3c02 -> even 0x3c02.
    assert one("f8f6f4", pad({0: 0x38, 1: 0x0C}, 32), pad({0: 0x38, 1: 0x18}, 32), **kw) == 0x3C02
    # 1 + 2**-11 + 2**-14: above the tie -> 0x3c01. 2**-14 = 0x01 (2**-9) * 0x10 (2**-5); q = -25 keeps it.
    assert one("f8f6f4", pad({0: 0x38, 1: 0x08, 2: 0x01}, 32), pad({0: 0x38, 1: 0x10, 2: 0x10}, 32), **kw) == 0x3C01
    # F16 overflow: 448*448 (0x7e) = 200704 > 65504 -> +Inf 0x7c00 (IEEE RNE overflow).
    assert one("f8f6f4", pad({0: 0x7E}, 32), pad({0: 0x7E}, 32), **kw) == 0x7C00
    # C in the low half: C = 0x3c00 (1.0) plus 0x38*0x38 = 2.0 -> 0x4000; the high half of C is ignored.
    assert one("f8f6f4", pad({0: 0x38}, 32), pad({0: 0x38}, 32), c=0xABCD3C00, **kw) == 0x4000


def test_special_values_f32_and_f16():
    # F32 D: NaN 0x7fffffff; Inf*0 NaN; +Inf + -Inf NaN; Inf wins over finite; C NaN / C Inf.
    inf, ninf, nan, one_ = 0x7C00, 0xFC00, 0x7E00, 0x3C00
    assert one("f16", pad({0: nan}, 16), pad({0: one_}, 16), **F16) == 0x7FFFFFFF
    assert one("f16", pad({0: inf}, 16), pad({0: 0}, 16), **F16) == 0x7FFFFFFF
    assert one("f16", pad({0: inf, 1: ninf}, 16), pad({0: one_, 1: one_}, 16), **F16) == 0x7FFFFFFF
    assert one("f16", pad({0: inf, 1: one_}, 16), pad({0: 0xBC00, 1: one_}, 16), **F16) == 0xFF800000
    assert one("f16", pad({0: one_}, 16), pad({0: one_}, 16), c=0x7FC00001, **F16) == 0x7FFFFFFF
    assert one("f16", pad({0: ninf}, 16), pad({0: one_}, 16), c=0x7F800000, **F16) == 0x7FFFFFFF
    assert one("f16", pad({0: one_}, 16), pad({0: one_}, 16), c=0xFF800000, **F16) == 0xFF800000
    # e4m3 NaN is only S.1111.111 (0x7f / 0xff); 0x7e = 448 is finite.
    kw = dict(a_fmt="e4m3", b_fmt="e4m3")
    assert one("f8f6f4", pad({0: 0xFF}, 32), pad({0: 0x38}, 32), **kw) == 0x7FFFFFFF
    assert one("f8f6f4", pad({0: 0x7E}, 32), pad({0: 0x38}, 32), **kw) == f32bits(448.0)
    # F16 D (f8f6f4 e5m2): NaN 0x7fff, +Inf 0x7c00, -Inf 0xfc00, Inf*0 0x7fff.
    kw = dict(a_fmt="e5m2", b_fmt="e5m2", d_fmt="f16")
    assert one("f8f6f4", pad({0: 0x7D}, 32), pad({0: 0x3C}, 32), **kw) == 0x7FFF
    assert one("f8f6f4", pad({0: 0x7C}, 32), pad({0: 0x3C}, 32), **kw) == 0x7C00
    assert one("f8f6f4", pad({0: 0x7C}, 32), pad({0: 0xBC}, 32), **kw) == 0xFC00
    assert one("f8f6f4", pad({0: 0x7C}, 32), pad({}, 32), **kw) == 0x7FFF
    # Scale NaN: UE8M0 0xff (mxf4) and UE4M3 0x7f, even when every element is zero.
    assert one("mxf4", [0] * 64, [0] * 64, a_fmt="e2m1", b_fmt="e2m1", sfa=[127, 0xFF], sfb=[127, 127]) == 0x7FFFFFFF
    assert one("mxf4nvf4", [0] * 64, [0] * 64, a_fmt="e2m1", b_fmt="e2m1", sfa=[0x38] * 4,
               sfb=[0x38, 0x38, 0x38, 0x7F], scale_fmt="ue4m3") == 0x7FFFFFFF


def test_integer_wrap_vs_saturate():
    # u8: 32 * 255*255 = 2_080_800 = 0x1fc020; C = 0x7ffffff0. Wrap: 0x7ffffff0 + 0x1fc020 = 0x801fc010.
    # Saturate: exact 2_149_564_432 > 2**31 - 1 -> 0x7fffffff.
    kw = dict(a_fmt="u8", b_fmt="u8", d_fmt="s32", c=0x7FFFFFF0)
    assert one("i8", [255] * 32, [255] * 32, **kw) == 0x801FC010
    assert one("i8", [255] * 32, [255] * 32, saturate=True, **kw) == 0x7FFFFFFF
    # s8 x s8: 32 * (-128)*127 = -520_192 = -0x7f000; C = 0x80000000 (-2**31). Wrap: 0x80000000 - 0x7f000 =
    # 0x7ff81000. Saturate: -> 0x80000000. Saturation clamps once at the end: +/- terms that return into range
    # do not saturate (C = 2**31-1, +127*127 then -128*127 ... net -127 -> 0x7fffff80).
    kw = dict(a_fmt="s8", b_fmt="s8", d_fmt="s32", c=0x80000000)
    assert one("i8", [0x80] * 32, [127] * 32, **kw) == 0x7FF81000
    assert one("i8", [0x80] * 32, [127] * 32, saturate=True, **kw) == 0x80000000
    a = pad({0: 127, 1: 0x80}, 32)
    b = pad({0: 127, 1: 127}, 32)
    assert one("i8", a, b, a_fmt="s8", b_fmt="s8", d_fmt="s32", c=0x7FFFFFFF, saturate=True) == 0x7FFFFF80


def test_nvfp4_k4_grouping_vs_per_product():
    # UE4M3 block16. Block 0: scales 0x7e (448, raw 8); A = [6, 6] (code 7), B = [6, -6] (7, 0xf):
    # products +-36*448**2, raw 2+2+8+8 = 20 -> R = 20, S = 16. Block 1: scales 0x01 (2**-9, raw -6);
    # A = B = 0.5 (code 1) at k = 16..19: products 0.25 * 2**-18 = 2**-20 each.
    # q = max(R - 39, S - 35) = -19. Per-product: 2**-20 = 0.5 unit -> 0. Aligned K=4 group: 4*2**-20 = 2**-18
    # = 2 units. Block 0's group sums to 0. Result 2 * 2**-19 = 2**-18 -> 0x36800000 (per-product would be +0).
    a = pad({0: 7, 1: 7, 16: 1, 17: 1, 18: 1, 19: 1}, 64)
    b = pad({0: 7, 1: 0xF, 16: 1, 17: 1, 18: 1, 19: 1}, 64)
    kw = dict(a_fmt="e2m1", b_fmt="e2m1", sfa=[0x7E, 0x01, 0x38, 0x38], sfb=[0x7E, 0x01, 0x38, 0x38],
              scale_fmt="ue4m3")
    assert one("mxf4nvf4", a, b, **kw) == 0x36800000
    # Spread the four tiny products over two groups (k = 16, 17 and 20, 21): each group is 1 unit -> 2 units,
    # same value; with three per group (k = 16..18, 20..22): 1.5 units -> 1 each -> 2 units (exact: 3 units).
    a3 = pad({0: 7, 1: 7, 16: 1, 17: 1, 18: 1, 20: 1, 21: 1, 22: 1}, 64)
    b3 = pad({0: 7, 1: 0xF, 16: 1, 17: 1, 18: 1, 20: 1, 21: 1, 22: 1}, 64)
    assert one("mxf4nvf4", a3, b3, **kw) == 0x36800000                 # 2 * 2**-19, not 3 * 2**-19


def test_nvfp4_c_dominant_block16():
    # C = -2**20 (0xc9800000, raw 20). Block 0: 4.0 (code 6) x 4.0, scales 0x78 (256, raw 8): product 2**20,
    # raw 2+2+16 = 20 = R. r_c >= R -> C-dominant: q = r_c - 35 = -15. Block 1: sfa 0x01 (2**-9), sfb 0x08
    # (2**-6), both raw -6: 0.5 x 0.5 products = 2**-17 = 0.25 unit, three at k = 16..18, three at k = 20..22.
    # The exact K=16 block sum 6 * 2**-17 = 1.5 units -> 1 unit. C + block 0 = 0, total 2**-15 -> 0x38000000.
    # (K=4 groups in this window: 0.75 + 0.75 -> 0; product-dominant window q = -19: 12 units -> 0x38400000.)
    a = pad({0: 6, 16: 1, 17: 1, 18: 1, 20: 1, 21: 1, 22: 1}, 64)
    b = pad({0: 6, 16: 1, 17: 1, 18: 1, 20: 1, 21: 1, 22: 1}, 64)
    got = one("mxf4nvf4", a, b, a_fmt="e2m1", b_fmt="e2m1", c=0xC9800000, sfa=[0x78, 0x01, 0x38, 0x38],
              sfb=[0x78, 0x08, 0x38, 0x38], scale_fmt="ue4m3")
    assert got == 0x38000000


def test_mxf4_group_outranked_by_c():
    # mxf4nvf4 UE8M0 block16. Group 0 (scales 127, 127 = 2**0): A = [6, 6, 4], B = [6, -6, -1]: products
    # 36 - 36 - 4 = -4, R = raw(6*6) = 4, S = 0. C = 4.0 (0x40800000, raw 2) < R: no global C-dominance.
    # q = max(R - 39, S - 35) = -35. Group 1 (sfa 93 = 2**-34, sfb 127): ten 0.5 x 0.5 products = 2**-36 each,
    # group raw -34 <= r_c -> outranked: truncated through 2**max(q, r_c - 35) = 2**-33: 10 * 2**-36 = 1.25
    # units -> 1 -> 4 units of 2**-35. Total 2**37 - 2**37 + 4 units = 2**-33 -> 0x2f000000 (exact 0x2f200000).
    a = pad({0: 7, 1: 7, 2: 6, **{16 + i: 1 for i in range(10)}}, 64)
    b = pad({0: 7, 1: 0xF, 2: 0xA, **{16 + i: 1 for i in range(10)}}, 64)
    got = one("mxf4nvf4", a, b, a_fmt="e2m1", b_fmt="e2m1", c=0x40800000, sfa=[127, 93, 127, 127],
              sfb=[127, 127, 127, 127], scale_fmt="ue8m0", block=16)
    assert got == 0x2F000000


def test_mxf4_subnormal_group_floor():
    # kind::mxf4 (block32). Block 0: 4.0 x 4.0 (codes 6), scales 52, 52 (2**-75 each): 2**-146, raw -146 = R,
    # S = -150. Block 1 (k = 32): 1.0 (code 2) x -1.0 (0xa), scales 37, 37: -2**-180, pair raw -180.
    # q = max(R - 39, S - 35) = -185. Units 2**39 - 32 -> F32 subnormal 7 * 2**-149 (0x00000007), so the floor
    # applies: threshold 2**(-174 - q) = 2**11 units; group 1 has a lower scale pair and |-32| < 2**11 -> dropped.
    # Result 2**39 units = 2**-146 = 0x00000008 (plain RZ of the exact sum: 0x00000007).
    a = pad({0: 6, 32: 2}, 64)
    b = pad({0: 6, 32: 0xA}, 64)
    got = one("mxf4", a, b, a_fmt="e2m1", b_fmt="e2m1", sfa=[52, 37], sfb=[52, 37])
    assert got == 0x00000008


def test_k_loop_accumulates_per_instruction():
    # f16, K = 32 = two instructions. Step 0: eight 2**-26 products alone: q = -51, exact sum 2**-23 = D0.
    # Step 1: C = 2**-23 (raw -23) + 1.0*1.0: q = -25, C = 4 units -> 2**25 + 4 -> 0x3f800001.
    # (One 32-wide window would truncate the small products: 0x3f800000.)
    a = pad({**{i: 0x0400 for i in range(8)}, 16: 0x3C00}, 32)
    b = pad({**{i: 0x0C00 for i in range(8)}, 16: 0x3C00}, 32)
    assert one("f16", a, b, **F16) == 0x3F800001


def test_block_scaled_zero_products_pass_c():
    # No nonzero product: D = C's bits (exact C + 0).
    got = one("mxf4nvf4", [0] * 64, [3] * 64, a_fmt="e2m1", b_fmt="e2m1", c=0x12345678, sfa=[0x38] * 4,
              sfb=[0x38] * 4, scale_fmt="ue4m3")
    assert got == 0x12345678


# ----------------------------------------------------------------------------------------------------------
# Model-silent cases and validation errors.
# ----------------------------------------------------------------------------------------------------------

def test_model_silent_cases_raise():
    with pytest.raises(NotImplementedError, match="kind::f16 with F16 D"):
        one("f16", [0] * 16, [0] * 16, a_fmt="f16", b_fmt="f16", d_fmt="f16")
    with pytest.raises(NotImplementedError, match="C = -0"):
        one("mxf4", [0] * 64, [0] * 64, a_fmt="e2m1", b_fmt="e2m1", c=0x80000000, sfa=[127, 127], sfb=[127, 127])
    with pytest.raises(NotImplementedError, match="bit 7"):
        one("mxf4nvf4", [0] * 64, [0] * 64, a_fmt="e2m1", b_fmt="e2m1", sfa=[0xB8] * 4, sfb=[0x38] * 4,
            scale_fmt="ue4m3")
    # tf32 2**-100 (0x0d800000) x -2**-100 = -2**-200 truncates to zero in F32: sign of that zero not stated.
    t = 0x0D800000
    with pytest.raises(NotImplementedError, match="rounds to zero"):
        one("tf32", pad({0: t}, 8), pad({0: t | 0x80000000}, 8), a_fmt="tf32", b_fmt="tf32")
    # A positive one is unambiguous: +0.
    assert one("tf32", pad({0: t}, 8), pad({0: t}, 8), a_fmt="tf32", b_fmt="tf32") == 0


def test_validation_errors():
    z = np.zeros((2, 32), U8)
    with pytest.raises(ValueError, match="unknown kind"):
        mma("f4", z, z, a_fmt="e2m1", b_fmt="e2m1")
    with pytest.raises(ValueError, match="not legal for kind::f8f6f4"):
        mma("f8f6f4", z, z, a_fmt="u8", b_fmt="e2m1")
    with pytest.raises(TypeError, match="uint16"):
        mma("f16", z[:, :16], z[:, :16], a_fmt="f16", b_fmt="f16")
    with pytest.raises(ValueError, match="multiple of the instruction K=32"):
        mma("f8f6f4", z[:, :16], z[:, :16], a_fmt="e4m3", b_fmt="e4m3")
    with pytest.raises(ValueError, match="low 4 bits"):
        mma("f8f6f4", z + 16, z, a_fmt="e2m1", b_fmt="e2m1")
    with pytest.raises(ValueError, match="N rows of K"):
        mma("f8f6f4", z, np.zeros((2, 64), U8), a_fmt="e4m3", b_fmt="e4m3")
    with pytest.raises(ValueError, match="d_fmt"):
        mma("i8", z, z, a_fmt="u8", b_fmt="u8")
    with pytest.raises(ValueError, match="d_fmt"):
        mma("tf32", np.zeros((1, 8), U32), np.zeros((1, 8), U32), a_fmt="tf32", b_fmt="tf32", d_fmt="f16")
    with pytest.raises(ValueError, match="needs sfa"):
        mma("mxf8f6f4", z, z, a_fmt="e4m3", b_fmt="e4m3")
    with pytest.raises(ValueError, match="sfa must be uint8 of shape"):
        mma("mxf8f6f4", z, z, a_fmt="e4m3", b_fmt="e4m3", sfa=np.zeros((2, 2), U8), sfb=np.zeros((2, 1), U8))
    with pytest.raises(ValueError, match="block16"):
        mma("mxf4nvf4", np.zeros((1, 64), U8), np.zeros((1, 64), U8), a_fmt="e2m1", b_fmt="e2m1",
            sfa=np.zeros((1, 2), U8), sfb=np.zeros((1, 2), U8), scale_fmt="ue4m3", block=32)
    with pytest.raises(ValueError, match="not block-scaled"):
        mma("f8f6f4", z, z, a_fmt="e4m3", b_fmt="e4m3", sfa=np.zeros((2, 1), U8))
    with pytest.raises(ValueError, match="saturate"):
        mma("f8f6f4", z, z, a_fmt="e4m3", b_fmt="e4m3", saturate=True)
    with pytest.raises(ValueError, match="negate"):
        mma("i8", z, z, a_fmt="u8", b_fmt="u8", d_fmt="s32", negate_a=True)
    with pytest.raises(ValueError, match="c must be uint32"):
        mma("f8f6f4", z, z, a_fmt="e4m3", b_fmt="e4m3", c=np.zeros((2, 2), np.int32))


# ----------------------------------------------------------------------------------------------------------
# Property tests on fresh random inputs. Values are decoded on the test side with ml_dtypes.
# ----------------------------------------------------------------------------------------------------------

VIEW = {"e2m1": ml_dtypes.float4_e2m1fn, "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
        "e2m3": ml_dtypes.float6_e2m3fn, "e3m2": ml_dtypes.float6_e3m2fn, "f16": np.float16,
        "bf16": ml_dtypes.bfloat16, "ue4m3": ml_dtypes.float8_e4m3fn, "ue8m0": ml_dtypes.float8_e8m0fnu}
EMIN = {"e2m1": 0, "e4m3": -6, "e5m2": -14, "e2m3": 0, "e3m2": -2, "f16": -14, "bf16": -126, "tf32": -126,
        "ue4m3": -6, "ue8m0": -127, "f32": -126}
DT = {"f16": U16, "bf16": U16, "tf32": U32}


def val(fmt: str, codes: np.ndarray) -> np.ndarray:
    """float64 values of codes, decoded by ml_dtypes (tf32: F32 with the low 13 bits cleared)."""
    if fmt == "tf32":
        return (codes.astype(U32) & U32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if fmt == "f32":
        return codes.astype(U32).view(np.float32).astype(np.float64)
    if fmt == "u8":
        return codes.astype(np.float64)
    if fmt == "s8":
        return codes.astype(U8).view(np.int8).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return codes.astype(DT.get(fmt, U8)).view(VIEW[fmt]).astype(np.float64)


def raw(fmt: str, v: np.ndarray) -> np.ndarray:
    """Raw (encoded) exponent of nonzero finite values: floor(log2|v|), at least the format's min normal."""
    e = np.frexp(np.abs(v))[1] - 1
    return np.maximum(e, EMIN[fmt])


def all_codes(fmt: str) -> np.ndarray:
    if fmt == "tf32":                      # every tf32 value: sign/exponent/10 fraction bits, low 13 bits zero
        return (np.arange(1 << 19, dtype=np.int64) << 13).astype(U32)
    n = {"e2m1": 16, "e2m3": 64, "e3m2": 64}.get(fmt, 256 if fmt not in DT else 65536)
    return np.arange(n, dtype=np.int64).astype(DT.get(fmt, U8))


def grid_codes(fmt: str, limit: float, step: float) -> np.ndarray:
    """Codes whose value is finite, |v| <= limit and a multiple of step."""
    c = all_codes(fmt)
    with np.errstate(invalid="ignore"):
        v = val(fmt, c)
        ok = np.isfinite(v) & (np.abs(v) <= limit) & (np.mod(v, step) == 0)
    return c[ok]


def exact_ref(kind: str, a, b, afmt, bfmt, c=None, sfa=None, sfb=None, sfmt=None, block=None, dfmt="f32"):
    """Exact sum per (m, n) with math.fsum of ml_dtypes-decoded exact products (float64)."""
    av, bv = val(afmt, a), val(bfmt, b)
    if sfa is not None:
        av = av * np.repeat(val(sfmt, sfa), block, axis=1)
        bv = bv * np.repeat(val(sfmt, sfb), block, axis=1)
    M, N = a.shape[0], b.shape[0]
    if c is None:
        cv = np.zeros((M, N))
    elif dfmt == "f16":
        cv = (c & U32(0xFFFF)).astype(U16).view(np.float16).astype(np.float64)
    elif dfmt == "s32":
        cv = c.view(np.int32).astype(np.float64)
    else:
        cv = val("f32", c)
    return np.array([[math.fsum([*(av[m] * bv[n]).tolist(), cv[m, n]]) + 0.0 for n in range(N)]
                     for m in range(M)])


def small_c(rng: np.random.Generator, M: int, N: int, lim: int, dfmt: str = "f32") -> np.ndarray:
    ints = rng.integers(-lim, lim + 1, (M, N)).astype(np.float64)
    if dfmt == "f16":
        return ints.astype(np.float16).view(U16).astype(U32)
    return ints.astype(np.float32).view(U32)


EXACT_CASES = [  # kind, a_fmt, b_fmt, d_fmt, (limit, step) for elements, scale codes, block, C limit
    ("f16", "f16", "f16", "f32", (8, 0.25), None, None, 1000),
    ("f16", "bf16", "bf16", "f32", (8, 0.25), None, None, 1000),
    ("f16", "f16", "bf16", "f32", (8, 0.25), None, None, 1000),
    ("tf32", "tf32", "tf32", "f32", (8, 0.25), None, None, 1000),
    ("f8f6f4", "e4m3", "e2m1", "f32", (16, 0.125), None, None, 1000),
    ("f8f6f4", "e5m2", "e3m2", "f32", (16, 0.125), None, None, 1000),
    ("f8f6f4", "e2m3", "e4m3", "f32", (16, 0.125), None, None, 1000),
    ("f8f6f4", "e4m3", "e5m2", "f16", (2, 0.5), None, None, 60),
    ("mxf8f6f4", "e4m3", "e2m3", "f32", (4, 0.25), ("ue8m0", [126, 127, 128]), 32, 1000),
    ("mxf8f6f4", "e2m1", "e3m2", "f32", (4, 0.25), ("ue8m0", [126, 127, 128]), 32, 1000),
    ("mxf4", "e2m1", "e2m1", "f32", (6, 0.5), ("ue8m0", [125, 126, 127, 128, 129]), 32, 1000),
    ("mxf4nvf4", "e2m1", "e2m1", "f32", (6, 0.5), ("ue8m0", [125, 126, 127, 128, 129]), 16, 1000),
    ("mxf4nvf4", "e2m1", "e2m1", "f32", (6, 0.5), ("ue8m0", [125, 126, 127, 128, 129]), 32, 1000),
    ("mxf4nvf4", "e2m1", "e2m1", "f32", (6, 0.5), ("ue4m3", [0x28, 0x30, 0x38, 0x40, 0x48]), 16, 1000),
]


@pytest.mark.parametrize("case", EXACT_CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}-{c[6]}" for c in EXACT_CASES])
def test_exact_regime_model_equals_exact_sum(case):
    # Dyadic grids: every product is a multiple of step_a*step_b*scale_min (>= 2**-10 here) and far above any
    # window quantum (<= max raw - 25 >= 2**-17 below), the sums need <= 22 significant bits (11 for F16 D):
    # the model must equal the exact sum, for two K steps, with and without C.
    kind, af, bf, df, (lim, step), scales, block, clim = case
    s = seed()
    rng = np.random.default_rng(s)
    from ptxlab.mma import KIND_K
    M, N, K = 5, 7, 2 * KIND_K[kind]
    a = rng.choice(grid_codes(af, lim, step), (M, K))
    b = rng.choice(grid_codes(bf, lim, step), (N, K))
    if af == "tf32":                       # garbage in the 13 low bits must be ignored (MODEL §2)
        a = a | rng.integers(0, 1 << 13, a.shape).astype(U32)
    kw = dict(a_fmt=af, b_fmt=bf, d_fmt=df)
    ref_kw = {}
    if scales:
        sf, codes = scales
        sfa = rng.choice(np.array(codes, U8), (M, K // block))
        sfb = rng.choice(np.array(codes, U8), (N, K // block))
        kw.update(sfa=sfa, sfb=sfb, scale_fmt=sf, block=block)
        ref_kw = dict(sfa=sfa, sfb=sfb, sfmt=sf, block=block)
    for c in (None, small_c(rng, M, N, clim, df)):
        exact = exact_ref(kind, a, b, af, bf, c=c, dfmt=df, **ref_kw)
        ftype = np.float16 if df == "f16" else np.float32
        assert np.array_equal(exact.astype(ftype).astype(np.float64), exact), f"test premise (seed {s})"
        want = exact.astype(ftype).view(U16 if df == "f16" else U32).astype(U32)
        got = mma(kind, a, b, c=c, **kw)
        bad = np.argwhere(got != want)
        assert bad.size == 0, f"seed {s}: first mismatch at {bad[0]}: {got[tuple(bad[0])]:#x} vs {want[tuple(bad[0])]:#x}"
        assert exact_regime(kind, a, b, c=c, **kw), f"seed {s}"
        assert np.array_equal(mma_exact(kind, a, b, c=c, **kw), exact), f"seed {s}"


def test_exact_regime_false_when_window_truncates():
    a = np.array([pad({0: 0x3C00, **{i: 0x0400 for i in range(1, 9)}}, 16)], U16)
    b = np.array([pad({0: 0x3C00, **{i: 0x0C00 for i in range(1, 9)}}, 16)], U16)
    assert not exact_regime("f16", a, b, **F16)                   # 2**-26 products below the 2**-25 quantum
    assert exact_regime("f16", a[:, :1].repeat(16, 1), b[:, :1].repeat(16, 1), **F16)  # 16 * 1.0
    big = np.array([[0x7BFF] * 15 + [0]], U16)       # 15 * 65504**2 = 15 * 2047**2 * 2**10: 26 significant bits
    assert not exact_regime("f16", big, big, **F16)
    i8 = np.full((1, 32), 255, U8)
    assert not exact_regime("i8", i8, i8, a_fmt="u8", b_fmt="u8", d_fmt="s32", c=np.array([[0x7FFFFFF0]], U32))
    assert exact_regime("i8", i8, i8, a_fmt="u8", b_fmt="u8", d_fmt="s32")


def rand_f32(rng: np.random.Generator, shape, emin: int, emax: int) -> np.ndarray:
    e = rng.integers(emin + 127, emax + 128, shape).astype(np.uint64)
    bits = (rng.integers(0, 2, shape).astype(np.uint64) << 31) | (e << 23) | rng.integers(0, 1 << 23, shape).astype(np.uint64)
    bits = np.where(rng.random(shape) < 0.1, 0, bits)          # some zeros
    return bits.astype(U32)


def ulp(x: np.ndarray, emin: int, mbits: int) -> np.ndarray:
    e = np.where(x == 0, emin, np.maximum(np.frexp(np.abs(x))[1] - 1, emin))
    return np.ldexp(1.0, e - mbits)


BOUND_CASES = [("f16", "f16", "f16", None, None), ("f16", "bf16", "bf16", None, None),
               ("tf32", "tf32", "tf32", None, None), ("f8f6f4", "e4m3", "e5m2", None, None),
               ("f8f6f4", "e2m3", "e3m2", None, None), ("f8f6f4", "e2m1", "e4m3", None, None),
               ("mxf8f6f4", "e4m3", "e2m1", "ue8m0", 32), ("mxf4", "e2m1", "e2m1", "ue8m0", 32),
               ("mxf4nvf4", "e2m1", "e2m1", "ue8m0", 16), ("mxf4nvf4", "e2m1", "e2m1", "ue4m3", 16)]


@pytest.mark.parametrize("kind,af,bf,sf,block", BOUND_CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in BOUND_CASES])
def test_model_within_truncation_bound(kind, af, bf, sf, block):
    # Full-range random finite codes, one instruction, random C near the product scale. The model may differ
    # from the exact sum only by its truncations: (#truncated terms) * 2**q_max + one final rounding ulp.
    s = seed()
    rng = np.random.default_rng(s)
    from ptxlab.mma import KIND_K
    M, N, K = 6, 6, KIND_K[kind]

    def codes(fmt, n):
        if fmt in ("bf16", "tf32"):
            x = rand_f32(rng, (n, K), -20, 20)
            return (x >> 16).astype(U16) if fmt == "bf16" else x
        c = all_codes(fmt)
        return rng.choice(c[np.isfinite(val(fmt, c))], (n, K))

    a, b = codes(af, M), codes(bf, N)
    kw = dict(a_fmt=af, b_fmt=bf)
    ref_kw, sav, sbv = {}, 1.0, 1.0
    if sf:
        pool = np.arange(100, 150) if sf == "ue8m0" else np.arange(0, 0x7F)
        sfa = rng.choice(pool, (M, K // block)).astype(U8)
        sfb = rng.choice(pool, (N, K // block)).astype(U8)
        kw.update(sfa=sfa, sfb=sfb, scale_fmt=sf, block=block)
        ref_kw = dict(sfa=sfa, sfb=sfb, sfmt=sf, block=block)
        sav = np.repeat(val(sf, sfa), block, 1)
        sbv = np.repeat(val(sf, sfb), block, 1)
    av, bv = val(af, a) * sav, val(bf, b) * sbv
    # raw exponent of each product: raw(A) + raw(B) (+ scale raws)
    ra = raw(af, val(af, a)) + (raw(sf, sav) if sf else 0)
    rb = raw(bf, val(bf, b)) + (raw(sf, sbv) if sf else 0)
    sr_a = raw(sf, sav) if sf else np.zeros_like(ra)
    sr_b = raw(sf, sbv) if sf else np.zeros_like(rb)
    prod = av[:, None, :] * bv[None, :, :]
    nz = prod != 0
    R = np.where(nz, ra[:, None, :] + rb[None, :, :], -10**6).max(-1)
    S = np.where(nz, sr_a[:, None, :] + sr_b[None, :, :], -10**6).max(-1)
    top = int(np.where(nz, ra[:, None, :] + rb[None, :, :], -10**6).max())
    c = rand_f32(rng, (M, N), top - 30, top + 2)
    cv = val("f32", c)
    rc = np.where(cv != 0, raw("f32", cv), -10**6)
    exact = exact_ref(kind, a, b, af, bf, c=c, **ref_kw)
    got = val("f32", mma(kind, a, b, c=c, **kw))
    if kind in ("f16", "tf32", "f8f6f4", "mxf8f6f4"):
        q = np.maximum(R, rc) - 25
        terms = nz.sum(-1) + (cv != 0)
        extra = 0.0
    else:
        q = np.maximum(np.maximum(np.maximum(R, rc) - 39, S - 35), rc - 35)
        terms = K // (4 if sf == "ue4m3" else 16) + 1
        extra = 4 * 2.0**-174                                   # subnormal group floor may drop tiny groups
    bound = terms * np.ldexp(1.0, q) + ulp(np.maximum(np.abs(exact), np.abs(got)), -126, 23) + extra
    err = np.abs(got - exact)
    assert np.isfinite(got).all(), f"seed {s}"
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert (err <= bound).all(), f"seed {s}: at {worst} |{got[worst]} - {exact[worst]}| > {bound[worst]}"


@pytest.mark.parametrize("kind,af,bf,sf,block", BOUND_CASES[:4] + BOUND_CASES[6:],
                         ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in BOUND_CASES[:4] + BOUND_CASES[6:]])
def test_matrix_equals_per_element_and_k_loop(kind, af, bf, sf, block):
    # The (M, N) result equals M*N independent 1x1 calls (no row/column mixing), and K = 2*K0 equals two
    # chained instructions (D of the first is C of the second).
    s = seed()
    rng = np.random.default_rng(s)
    from ptxlab.mma import KIND_K
    M, N, K0 = 3, 4, KIND_K[kind]
    K = 2 * K0

    def codes(fmt, n):
        if fmt in ("bf16", "tf32"):
            x = rand_f32(rng, (n, K), -20, 20)
            return (x >> 16).astype(U16) if fmt == "bf16" else x
        c = all_codes(fmt)
        return rng.choice(c[np.isfinite(val(fmt, c))], (n, K))

    a, b = codes(af, M), codes(bf, N)
    c = rand_f32(rng, (M, N), -5, 10)
    kw = dict(a_fmt=af, b_fmt=bf)
    sfa = sfb = None
    if sf:
        pool = np.arange(100, 150) if sf == "ue8m0" else np.arange(0, 0x7F)
        sfa = rng.choice(pool, (M, K // block)).astype(U8)
        sfb = rng.choice(pool, (N, K // block)).astype(U8)
        kw.update(scale_fmt=sf, block=block)
    full = mma(kind, a, b, c=c, sfa=sfa, sfb=sfb, **kw) if sf else mma(kind, a, b, c=c, **kw)
    nb = K0 // block if sf else 0
    for m in range(M):
        for n in range(N):
            extra = dict(sfa=sfa[m:m + 1], sfb=sfb[n:n + 1]) if sf else {}
            d = mma(kind, a[m:m + 1], b[n:n + 1], c=c[m:m + 1, n:n + 1], **extra, **kw)
            assert d[0, 0] == full[m, n], f"seed {s}: element ({m}, {n})"
    half = dict(sfa=sfa[:, :nb], sfb=sfb[:, :nb]) if sf else {}
    half2 = dict(sfa=sfa[:, nb:], sfb=sfb[:, nb:]) if sf else {}
    d0 = mma(kind, a[:, :K0], b[:, :K0], c=c, **half, **kw)
    d1 = mma(kind, a[:, K0:], b[:, K0:], c=d0, **half2, **kw)
    assert np.array_equal(d1, full), f"seed {s}"
