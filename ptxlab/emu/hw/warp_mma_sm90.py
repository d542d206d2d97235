"""The arithmetic of the ``mma.sync`` forms an H100 has no tensor instruction for (PTX ISA 9.7.14.5.14): ptxas
lowers them to other instructions, and the results are those instructions' roundings.  Both rules were derived from
the H100's outputs of the corpus entries ``mma_sync_fp8`` and ``mma_sync_m8n8k4_f32`` (tests/corpus/kernels_mma.py;
run 2026-11-28 01:27 UTC, seed 20261127; data tests/fidelity/isa/data/h100_20261128_fp8_mma.npz) and reproduce every
word of them (ptx_docs/isa_coverage_notes.md "mma.sync forms the H100 lowers"):

* ``m16n8k32 .f32.e4m3/.e5m2.e4m3/.e5m2.f32`` (sm_89 form): A and B converted to f16 (exact), then two f16 tensor-core
  MMAs of 16 products each with C = 0 -- first the k with ``k % 4 < 2``, then ``k % 4 >= 2`` accumulating onto the
  first (the f16 window rule of hw/warp_mma_arith.py, which the H100 matched on f16 mma.sync) -- and last one f32
  add of C, rounded to nearest even (the scalar ``add.rn.f32``: NaN 0x7FFFFFFF, subnormals kept).  1,024 of 1,024
  words (673 finite); C inside the first MMA instead: 990; one 32-product window: 969.
* ``m8n8k4 .f32.f16.f16.f32`` (the sm_70 form): d = +0, then d = fma.rn.f32(a_k, b_k, d) for k = 0..3, then
  D = add.rn.f32(d, C).  2,048 of 2,048 words (804 finite-input ones); the 25-bit window: 1,701; C first: fewer.

``m8n8k4 .f32.f16.f16.f16`` (f16 C): the same chain after widening C exactly (HADD2.F32 in its SASS); matched every
word of the H100 runs of 2026-11-28 05:05 UTC (corpus entry mma_sync_m8n8k4_mixed, seeds 271828 / 314159 / 161803).

``m8n8k4 .f16.f16.f16.f16`` (f16 C and D): an f32 tree per element, then one rounding to f16 (its SASS: HADD2.F32
widenings, FMUL + FFMA for each pair of products, FADD, FADD, F2FP.F16.F32.PACK_AB):
D = f16(add.rn(add.rn(C, add.rn(p0, p1)), add.rn(p2, p3))), every p_k = a_k * b_k exact in f32; an f32 NaN becomes
0x7FFF.  The H100 runs of 2026-11-28 05:05 UTC (seeds 271828 / 161803; data
tests/fidelity/isa/data/h100_20261128_m8n8k4_f16.npz) reproduce on every word, while the one-window rule misses 232
of the 512 words of the probe mma_sync_m8n8k4_rounding per seed.  Those data fit 70 of the 105 f32 addition trees
over (C, p0..p3); the pair order is the register trace of the SASS (C + the k 0-1 pair first; UNCONFIRMED on the
H100: problems 4-7 of the probe entry now tell it from every other tree).

The SASS ptxas (NVRTC 13.0, sm_90a) writes for both is exactly this (tests/emu/hw/test_warp_mma_sm90.py reads it):
FP8: F2FP.F16.E4M3.UNPACK_B of each register's low and high halves, HMMA.16816.F32 with RZ as C on the low halves,
a second HMMA.16816.F32 on the high halves accumulating, FADD of C; m8n8k4: HADD2.F32 widenings, FFMA from RZ in k
order, FADD of C.  So signed zeros follow IEEE through those instructions (the chain starts from +0).
"""
from __future__ import annotations

import numpy as np

from ...mma.codec import decode_elem, encode_f16_rne
from .warp_mma_arith import mma_float

F32_NAN = 0x7FFFFFFF
_K_FIRST = np.array([k for k in range(32) if k % 4 < 2])        # the first f16 MMA's k (H100 fit)
_K_SECOND = np.array([k for k in range(32) if k % 4 >= 2])


def _f16_table(fmt: str) -> np.ndarray:
    """FP8 code -> f16 code (exact: every e4m3 / e5m2 value is an f16 value; NaN -> 0x7E00, Inf -> +-Inf)."""
    codes = np.arange(256)
    d = decode_elem(fmt, codes)
    bits, _ = encode_f16_rne(d.mant, d.vexp)
    bits = np.where(d.mant == 0, 0, bits) | np.where(d.neg, 0x8000, 0)
    bits = np.where(d.inf, np.where(d.neg, 0xFC00, 0x7C00), bits)
    return np.where(d.nan, 0x7E00, bits).astype(np.uint32)


_TO_F16 = {f: _f16_table(f) for f in ("e4m3", "e5m2")}


def add_rn_f32(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """add.rn.f32 of two arrays of f32 words (IEEE 754 round to nearest even, subnormals kept, NaN 0x7FFFFFFF)."""
    with np.errstate(all="ignore"):
        s = x.view(np.float32) + y.view(np.float32)
    w = s.view(np.uint32)
    return np.where(np.isnan(s), np.uint32(F32_NAN), w).astype(np.uint32)


def mma_fp8_sm90(a: np.ndarray, b: np.ndarray, c: np.ndarray, atype: str, btype: str) -> np.ndarray:
    """One m16n8k32 problem: a (16, 32), b (32, 8) FP8 codes, c (16, 8) f32 words -> D words (module doc)."""
    a16 = _TO_F16[atype][np.asarray(a).astype(np.int64) & 0xFF]
    b16 = _TO_F16[btype][np.asarray(b).astype(np.int64) & 0xFF]
    cw = np.asarray(c).astype(np.uint32)
    acc = np.zeros_like(cw)
    for ks in (_K_FIRST, _K_SECOND):
        acc = mma_float(np.ascontiguousarray(a16[:, ks]), np.ascontiguousarray(b16[ks]), acc, "f16", "f16", "f32")
    return add_rn_f32(acc, cw)


def _rn_f32(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """float32 round-to-nearest-even of the exact x + y (float64 operands): the float64 sum is made round-to-odd
    (TwoSum error as the sticky bit), which then rounds to float32 exactly as the exact sum would."""
    with np.errstate(all="ignore"):
        s = x + y
        bb = s - x
        e = (x - (s - bb)) + (y - bb)
        sb = s.view(np.int64)
        adj = np.isfinite(s) & np.isfinite(e) & (e != 0) & ((sb & 1) == 0)
        sb = np.where(adj, np.where((e > 0) == (s > 0), sb + 1, sb - 1), sb)
        return sb.view(np.float64).astype(np.float32)


def mma_m8n8k4_f32_sm90(a: np.ndarray, b: np.ndarray, c: np.ndarray, ctype: str = "f32") -> np.ndarray:
    """One m8n8k4 problem: a (8, 4), b (4, 8) f16 codes, c (8, 8) C words (f32, or f16 codes: widened exactly first,
    HADD2.F32 in the SASS) -> f32 D words: the fma chain of the module doc (products of two f16 values are exact in
    f32 and float64)."""
    av = np.asarray(a).astype(np.uint16).view(np.float16).astype(np.float64)
    bv = np.asarray(b).astype(np.uint16).view(np.float16).astype(np.float64)
    cw = np.asarray(c).astype(np.uint32)
    if ctype == "f16":
        cw = cw.astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
    with np.errstate(all="ignore"):
        p = av[:, None, :] * bv.T[None, :, :]                   # (8, 8, 4) exact products
        d = np.zeros(p.shape[:2], np.float32)                   # FFMA d, a0, b0, RZ: the chain starts from +0
        for k in range(4):
            d = _rn_f32(p[..., k], d.astype(np.float64))
        out = _rn_f32(d.astype(np.float64), cw.view(np.float32).astype(np.float64))
    w = out.view(np.uint32)
    return np.where(np.isnan(out), np.uint32(F32_NAN), w).astype(np.uint32)


F16_NAN = 0x7FFF


def mma_m8n8k4_f16_sm90(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One m8n8k4 problem with f16 C and D: a (8, 4), b (4, 8), c (8, 8) f16 codes -> f16 D codes, the f32 tree of
    the module doc (float64 holds every f16 product exactly; _rn_f32 rounds each exact sum to f32 once)."""
    av = np.asarray(a).astype(np.uint16).view(np.float16).astype(np.float64)
    bv = np.asarray(b).astype(np.uint16).view(np.float16).astype(np.float64)
    cv = np.asarray(c).astype(np.uint16).view(np.float16).astype(np.float64)
    with np.errstate(all="ignore"):
        p = av[:, None, :] * bv.T[None, :, :]                   # (8, 8, 4) exact products
        lo = _rn_f32(p[..., 0], p[..., 1]).astype(np.float64)   # FMUL p0, FFMA a1 b1 + p0
        hi = _rn_f32(p[..., 2], p[..., 3]).astype(np.float64)
        t = _rn_f32(cv, lo).astype(np.float64)                  # FADD C, (p0 + p1)
        d = _rn_f32(t, hi).astype(np.float16)                   # FADD, then F2FP.F16.F32.PACK_AB (round to nearest)
    return np.where(np.isnan(d), np.uint32(F16_NAN), d.view(np.uint16).astype(np.uint32)).astype(np.uint32)
