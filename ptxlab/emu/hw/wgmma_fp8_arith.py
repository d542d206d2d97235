"""The arithmetic of one FP8 ``wgmma.mma_async`` (PTX ISA 9.7.15.5.2, ``.e4m3`` / ``.e5m2`` A and B, f32 or f16 D)
as the H100 computes it: Hopper's reduced-precision FP8 accumulation.

The PTX ISA does not state how a warpgroup MMA rounds. This rule was fitted to the H100's outputs of the corpus
entry ``wgmma_fp8`` (tests/corpus/kernels_wgmma.py; run 2026-11-28, seed 20261127, 6 cases: e4m3 x e5m2 and
e4m3 x e4m3 with f32 D, e5m2 x e4m3 with f16 D and imm-scale-a -1, SS and RS A, N 16 / 32) and reproduces every
one of their 6,144 output words, 1,987 of them from full-range random codes (ptx_docs/isa_coverage_notes.md):

1. exact products; each product's *raw* exponent is the sum of its factors' raw exponents (the minimum normal
   exponent for a subnormal factor), as in the B200 window model (ptxlab/mma);
2. E = max(largest raw exponent of a nonzero product, exponent of C if C != 0); every product and C is truncated
   toward zero to a multiple of 2**(E - 13) (a 13-bit window below E) and the truncated terms are summed exactly;
3. f32 D: the sum is truncated toward zero to 14 significant bits, and that value is D (exact in f32);
4. f16 D: the windowed sum of step 2 (NOT truncated to 14 bits) rounded to nearest even (overflow to +-Inf); an
   exact zero is +0. The first fit truncated to 14 bits for f16 too; the probe ``wgmma_fp8_probe`` (H100, 2026-11-28,
   seed 20261127) found 24 of 2048 f16 words 1 ulp above it, and every f16 word of both runs fits when the sum keeps
   >= 18 significant bits before the rounding (data: tests/fidelity/isa/data/h100_20261128_fp8_probe_f16.npz);
5. NaN / Inf as the window model (any NaN input in the dot product, Inf x 0 or +Inf + -Inf -> NaN; otherwise an
   infinite product or C gives that Inf): 0x7FFFFFFF / 0x7FFF, +-Inf.

Not covered by the measured data, so refused (ModelSilent, the caller raises "not implemented"): an instruction
where every product of a dot product is zero while C is not (E would come from C alone), a C that decides E while
subnormal, an f32 result outside the normal range (subnormal or >= 2**128), and a negative value that rounds to
zero. C = 0 (scale-d = 0) is "no term": confirmed by the probe's scale-d 0 variants (``wg_e4m3_n16_nod``, H100
2026-11-28, every word equal).
"""
from __future__ import annotations

import numpy as np

from ...mma.codec import ModelSilent, bit_length, decode_c, decode_elem, encode_f16_rne, trunc_units
from ...mma.steps import _max_nz, apply_specials, products, specials

WINDOW = 13          # bits of the product window below the largest raw exponent (H100 fit, 2026-11-28)
SIGNIFICANT = 14     # significant bits the sum keeps (truncated toward zero)
_MIN_NORMAL = {"f32": -126, "f16": -14}


def mma_fp8_hopper(a: np.ndarray, b: np.ndarray, c: np.ndarray, atype: str, btype: str, dtype: str) -> np.ndarray:
    """One problem: a (M, K), b (K, N) FP8 element codes, c (M, N) raw C words (f32, or f16 in the low half)
    -> D words (module doc)."""
    da = decode_elem(atype, a)
    db = decode_elem(btype, np.ascontiguousarray(b.T))
    cw = np.asarray(c).astype(np.uint32)
    dc = decode_c(dtype, cw)
    masks = specials(da, db, dc, None)
    live = ~(masks[0] | masks[1] | masks[2])
    pm, pv, pr, _ = products(da, db)
    nz = pm != 0
    cnz = dc.mant != 0
    R = _max_nz(pr, nz)
    hasp = nz.any(-1)
    cdom = cnz & (dc.rexp >= R)
    if (live & cnz & ~hasp).any():
        raise ModelSilent("FP8 wgmma with every product zero and C != 0: not measured on the H100")
    c_sub = cnz & ((dc.mant == 0) | (np.abs(dc.mant) < (1 << (23 if dtype == "f32" else 10))))
    if (live & cdom & c_sub).any():
        raise ModelSilent("FP8 wgmma whose window is set by a subnormal C: not measured on the H100")
    E = np.where(cdom, dc.rexp, R)
    q = E - WINDOW
    units = trunc_units(pm.astype(np.int64), pv - q[..., None]).sum(-1) + trunc_units(dc.mant, dc.vexp - q)
    if dtype == "f32":       # step 3: f32 D keeps 14 significant bits; f16 D rounds the whole windowed sum (step 4)
        drop = np.maximum(bit_length(np.abs(units)) - SIGNIFICANT, 0)
        units = trunc_units(units, -drop)
        q = q + drop
    if dtype == "f16":
        d, neg0 = encode_f16_rne(units, q)
        if (neg0 & live).any():
            raise ModelSilent("FP8 wgmma: a negative f16 result rounds to zero (sign of the zero not measured)")
    else:
        d = _encode_f32_normal(units, q, live)
    return apply_specials(d.astype(np.uint32), masks, dtype)


def _encode_f32_normal(units: np.ndarray, q: np.ndarray, live: np.ndarray) -> np.ndarray:
    """units * 2**q (at most 14 significant bits) as F32 bits; exact zero +0; outside the normal range refused."""
    mag = np.abs(units)
    bl = bit_length(mag)
    e = bl - 1 + q
    bad = live & (mag != 0) & ((e < _MIN_NORMAL["f32"]) | (e > 127))
    if bad.any():
        raise ModelSilent("FP8 wgmma with an f32 result outside the normal range: not measured on the H100")
    frac = (mag << np.clip(24 - bl, 0, 63)) & 0x7FFFFF          # bl <= 14: the value is exact
    out = np.where(mag == 0, 0, ((e + 127) << 23) | frac)
    return np.where(units < 0, out | 0x80000000, out).astype(np.uint32)
