"""The fast exact path (ptxlab/mma/fast.py) against the full model, bit for bit: kind::mxf4nvf4 in depth, then
every other F32-D kind (f16, tf32, f8f6f4, mxf8f6f4, mxf4; test_every_f32_kind_fast_equals_model).

Every draw uses a fresh seed (printed on failure). Data families are built to hit each branch: gpu-mode GEMM data
(everything proven: the model must not be called), wide scales where the model truncates (model fallback, row-wise
and block-wise), cancellation to exact zero, subnormal and overflowing results, C = -0 / NaN / Inf, NaN scales,
rows without a nonzero product (C passes through).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxlab.mma.model as MA
from ptxlab.mma import ModelSilent, mma

U8, U32 = np.uint8, np.uint32


def seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


def both(a, b, c, sfa, sfb, monkeypatch):
    kw = dict(a_fmt="e2m1", b_fmt="e2m1", c=c, sfa=sfa, sfb=sfb, scale_fmt="ue4m3")
    monkeypatch.setattr(MA, "FAST", True)
    try:
        fast = mma("mxf4nvf4", a, b, **kw)
    except ModelSilent as e:
        fast = e
    monkeypatch.setattr(MA, "FAST", False)
    try:
        slow = mma("mxf4nvf4", a, b, **kw)
    except ModelSilent as e:
        slow = e
    return fast, slow


def check(a, b, c, sfa, sfb, monkeypatch, s):
    fast, slow = both(a, b, c, sfa, sfb, monkeypatch)
    if isinstance(slow, Exception) or isinstance(fast, Exception):
        assert type(fast) is type(slow), f"seed {s}: fast {fast!r} vs model {slow!r}"
        return
    bad = np.argwhere(fast != slow)
    assert bad.size == 0, (f"seed {s}: {len(bad)} words differ, first {tuple(bad[0])}: "
                           f"fast {int(fast[tuple(bad[0])]):#010x} model {int(slow[tuple(bad[0])]):#010x}")


def draw(rng, m, n, k, sf_hi, c_scale):
    a = rng.integers(0, 16, (m, k)).astype(U8)
    b = rng.integers(0, 16, (n, k)).astype(U8)
    sfa = rng.integers(0, sf_hi, (m, k // 16)).astype(U8)
    sfb = rng.integers(0, sf_hi, (n, k // 16)).astype(U8)
    c = None if c_scale is None else (rng.standard_normal((m, n)) * c_scale).astype(np.float32).view(U32)
    return a, b, c, sfa, sfb


def test_gpumode_data_never_needs_the_model(monkeypatch):
    """gpu-mode nvfp4_gemm data (SF codes 0..3, all e2m1 codes) with C an earlier partial sum (a multiple of the
    smallest product 2**-20, as in a GEMM's K loop): every element proven, model not called."""
    s = seed()
    rng = np.random.default_rng(s)
    calls = []
    real = MA.step_nvfp4
    monkeypatch.setattr(MA, "step_nvfp4", lambda *a, **k: calls.append(1) or real(*a, **k))
    a, b, _, sfa, sfb = draw(rng, 128, 256, 128, 4, None)
    c = np.ldexp(rng.integers(-(1 << 16), 1 << 16, (128, 256)).astype(np.float64), -20).astype(np.float32).view(U32)
    sfa[:, :] = np.maximum(sfa, 1)        # no all-zero-scale rows: no C pass-through either
    sfb[:, :] = np.maximum(sfb, 1)
    fast, slow = both(a, b, c, sfa, sfb, monkeypatch)
    n_fast_calls = len(calls) - 2          # the FAST=False run calls the model once per K step (2 steps)
    assert n_fast_calls == 0, f"seed {s}: fast path fell back to the model {n_fast_calls} times"
    assert (fast == slow).all(), f"seed {s}"


@pytest.mark.parametrize("family", ["gpumode", "gpumode_zero_scales", "wide_scales", "wide_few_rows", "big_c",
                                    "tiny_c"])
def test_fast_equals_model(family, monkeypatch):
    s = seed()
    rng = np.random.default_rng(s)
    if family == "gpumode":
        args = draw(rng, 128, 256, 64, 4, 1e-3)
    elif family == "gpumode_zero_scales":       # many rows/cols without a nonzero product: C passes through
        args = draw(rng, 64, 64, 128, 2, 1.0)
    elif family == "wide_scales":               # scales over the whole UE4M3 range: the window truncates
        args = draw(rng, 64, 128, 64, 0x7F, 10.0)
    elif family == "wide_few_rows":             # a handful of rows with huge scales: row-wise fallback
        a, b, c, sfa, sfb = draw(rng, 128, 64, 64, 4, 1e-3)
        rows = rng.choice(128, 3, replace=False)
        sfa[rows] = rng.integers(0x60, 0x7F, (3, 4)).astype(U8)
        args = (a, b, c, sfa, sfb)
    elif family == "big_c":                     # C dominates: q from C, products truncated
        args = draw(rng, 32, 64, 128, 0x7F, 1e30)
    else:                                       # C and products far apart, results near underflow
        args = draw(rng, 32, 32, 64, 8, 1e-38)
    check(*args, monkeypatch, s)


def test_specials_and_edges(monkeypatch):
    s = seed()
    rng = np.random.default_rng(s)
    a, b, c, sfa, sfb = draw(rng, 32, 48, 64, 4, 1.0)
    cw = c.copy()
    cw[0, 0] = 0x7FC00000          # NaN C
    cw[1, 1] = 0xFF800000          # -Inf C
    cw[2, 2] = 0x7F7FFFFF          # FLT_MAX: + positive products may overflow
    cw[3, :] = 0x00000001          # subnormal C
    sfa2 = sfa.copy()
    sfa2[4, 1] = 0x7F              # NaN scale
    check(a, b, cw, sfa2, sfb, monkeypatch, s)
    # exact cancellation: row 0 of B is the negation of row 1 of B (sign bit 0x8 of e2m1), same scales, C = 0
    b2 = b.copy()
    b2[1] = b2[0] ^ 0x8
    sfb2 = sfb.copy()
    sfb2[1] = sfb2[0]
    a1 = a.copy()
    a1[:, :] = a1[0]
    sfa1 = np.repeat(sfa[:1], 32, 0)
    check(a1, b2, np.zeros((32, 48), U32), sfa1, sfb2, monkeypatch, s)
    # C = -0 with no nonzero product: the model refuses (ModelSilent); the fast path must not answer instead
    z = np.zeros_like(sfa)
    check(a, b, np.full((32, 48), 0x80000000, U32), z, sfb, monkeypatch, s)
    with pytest.raises(ModelSilent):
        mma("mxf4nvf4", a, b, a_fmt="e2m1", b_fmt="e2m1", c=np.full((32, 48), 0x80000000, U32), sfa=z, sfb=sfb,
            scale_fmt="ue4m3")


F8F6F4 = ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]
NARROW_BITS = {"e2m3": 6, "e3m2": 6, "e2m1": 4}


def _codes(rng, fmt: str, shape, small: bool):
    """Element codes: full-range random bits, or small integers (-8..8) where the fast path can prove exactness."""
    import ml_dtypes

    ints = rng.integers(-8, 9, shape).astype(np.float32)
    if fmt in ("f16", "bf16"):
        if not small:
            return rng.integers(0, 2**16, shape).astype(np.uint16)
        return ints.astype(np.float16).view(np.uint16) if fmt == "f16" else (ints.view(U32) >> 16).astype(np.uint16)
    if fmt == "tf32":
        return ints.view(U32) if small else rng.integers(0, 2**32, shape, dtype=np.uint64).astype(U32)
    if small and fmt in ("e4m3", "e5m2"):
        dt = ml_dtypes.float8_e4m3fn if fmt == "e4m3" else ml_dtypes.float8_e5m2
        return ints.astype(dt).view(U8)
    return rng.integers(0, 1 << NARROW_BITS.get(fmt, 8), shape).astype(U8)


@pytest.mark.parametrize("kind", ["f16", "tf32", "f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4"])
def test_every_f32_kind_fast_equals_model(kind, monkeypatch):
    """The fast path covers every F32-D kind (window rule and mxf4 family): 40 fresh draws per kind, small-integer
    data (mostly proven) and full-range codes/C (mostly the model), negate bits, UE4M3/UE8M0 scales, block16/32."""
    s = seed()
    rng = np.random.default_rng(s)
    for it in range(40):
        k = MA.KIND_K[kind] * int(rng.integers(1, 3))
        m, n = int(rng.integers(1, 24)), int(rng.integers(1, 24))
        small = it % 2 == 0
        if kind == "f16":
            af = bf = str(rng.choice(["f16", "bf16"]))
        elif kind == "tf32":
            af = bf = "tf32"
        elif kind in ("f8f6f4", "mxf8f6f4"):
            af, bf = str(rng.choice(F8F6F4)), str(rng.choice(F8F6F4))
        else:
            af = bf = "e2m1"
        kw = dict(a_fmt=af, b_fmt=bf, negate_a=bool(rng.integers(0, 2)), negate_b=bool(rng.integers(0, 2)))
        if kind in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
            blk = 32
            if kind == "mxf4nvf4":
                sf = str(rng.choice(["ue4m3", "ue8m0"]))
                blk = 16 if sf == "ue4m3" else int(rng.choice([16, 32]))
                kw.update(scale_fmt=sf, block=blk)
            if kw.get("scale_fmt") == "ue4m3":
                lo, hi = (0, 4) if small else (0, 0x7F)
            else:
                lo, hi = (120, 134) if small else (0, 256)
            kw["sfa"] = rng.integers(lo, hi, (m, k // blk)).astype(U8)
            kw["sfb"] = rng.integers(lo, hi, (n, k // blk)).astype(U8)
        if it % 3 == 1:
            kw["c"] = rng.integers(0, 2**32, (m, n), dtype=np.uint64).astype(U32)
        elif it % 3 == 2:
            kw["c"] = np.ldexp(rng.integers(-4096, 4096, (m, n)).astype(np.float64),
                               int(rng.integers(-30, 5))).astype(np.float32).view(U32)
        a, b = _codes(rng, af, (m, k), small), _codes(rng, bf, (n, k), small)
        got = []
        for fast in (True, False):
            monkeypatch.setattr(MA, "FAST", fast)
            try:
                got.append(mma(kind, a, b, **kw))
            except ModelSilent as e:
                got.append(e)
        if isinstance(got[0], Exception) or isinstance(got[1], Exception):
            assert type(got[0]) is type(got[1]), f"seed {s} draw {it}: fast {got[0]!r} vs model {got[1]!r}"
            continue
        diff = np.argwhere(got[0] != got[1])
        assert diff.size == 0, f"seed {s} draw {it} ({kind} {af}x{bf} {kw.get('scale_fmt')}): {len(diff)} words differ"


@pytest.mark.parametrize("scale_fmt", ["ue8m0", "ue4m3"])
def test_scale_pair_window_binds(scale_fmt, monkeypatch):
    """Data where the scale-pair term S - 35 (not R - 39) sets the quantum: block 0 holds the largest scale pair with
    small elements (R = S), the other blocks' products sit 34..37 binades lower, so the model truncates them. The
    fast path must not prove these elements (a q bound without the S term would)."""
    s = seed()
    rng = np.random.default_rng(s)
    m, n, k = 16, 16, 64
    a = rng.integers(0, 16, (m, k)).astype(U8)
    b = rng.integers(0, 16, (n, k)).astype(U8)
    a[:, :16] = rng.integers(1, 4, (m, 16))          # e2m1 0.5, 1, 1.5: raw exponent 0
    b[:, :16] = rng.integers(1, 4, (n, 16))
    if scale_fmt == "ue8m0":
        d = rng.integers(34, 38, (m, 1))
        sfa = np.concatenate([np.full((m, 1), 137), 137 - np.repeat(d, 3, 1)], 1).astype(U8)
        sfb = np.full((n, 4), 127, U8)
        kw = dict(scale_fmt="ue8m0", block=16)
    else:                                            # UE4M3 448 (0x7E) in block 0, subnormals below
        sfa = np.concatenate([np.full((m, 1), 0x7E), rng.integers(1, 8, (m, 3))], 1).astype(U8)
        sfb = np.concatenate([np.full((n, 1), 0x7E), rng.integers(1, 8, (n, 3))], 1).astype(U8)
        kw = dict(scale_fmt="ue4m3")
    got = []
    for fast in (True, False):
        monkeypatch.setattr(MA, "FAST", fast)
        got.append(mma("mxf4nvf4", a, b, a_fmt="e2m1", b_fmt="e2m1", sfa=sfa, sfb=sfb, **kw))
    assert (got[0] == got[1]).all(), f"seed {s}: {(got[0] != got[1]).sum()} words differ"
