"""The arithmetic of one warp-level / warpgroup MMA problem (mma.sync 9.7.14.5.14, wgmma.mma_async 9.7.15.5.2).

D = A·B + C for one problem: A (M, K), B (K, N), C (M, N) element codes -> D codes.  Rules
(ptx_docs/isa_coverage_notes.md "Warp and warpgroup MMA arithmetic"):

* floating-point A/B (f16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1) with f32 or f16 D: the tensor-core window rule
  of ``ptxlab.mma`` (the B200 model: exact products, one 25-bit window per instruction aligned to the largest
  product or C exponent, truncation toward zero, F32 RZ / F16 RNE normalisation, NaN / Inf rules).  The PTX ISA
  does not state the rounding and accumulation order of Hopper / Ampere tensor cores: this is the hypothesis the
  H100 corpus (tests/corpus/kernels_mma.py) decides;
* integer A/B (u8, s8, u4, s4, b1 with .xor/.and popc): the exact sum, wrapped mod 2^32, or clamped once to the
  s32 range with .satfinite (PTX ISA: "saturates the result ... to MAX_INT / MIN_INT");
* f64: C, then one IEEE round-to-nearest fma per k in k order (UNCONFIRMED order; exact rationals per step).
  NaN results (H100 corpus mma_sync_f64, 2026-11-27, seed 20261127: 22 of 22 invalid-operation NaNs of m16n8k4/k8/k16
  were 0xFFF8000000000000, the 125 NaNs with a NaN operand 0x7FF8000000000000): a NaN operand gives
  ``F64_NAN_IN``; a NaN the instruction creates (Inf x 0, Inf - Inf) gives ``F64_NAN_NEW``.  Only the NaN
  0x7FF8000000000000 was ever an operand there: any other NaN operand raises (payload propagation unconfirmed).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...mma.codec import ModelSilent, decode_c, decode_elem
from ...mma.steps import step_i8, step_window

F64_NAN_IN = 0x7FF8000000000000      # NaN result from a NaN operand (H100: the operand 0x7FF8... kept)
F64_NAN_NEW = 0xFFF8000000000000     # NaN created by Inf x 0 / Inf - Inf (H100, all f64 shapes measured)
FLOATS = ("f16", "bf16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1")


def mma_float(a: np.ndarray, b: np.ndarray, c: np.ndarray, atype: str, btype: str, dtype: str) -> np.ndarray:
    """One problem: a (M, K), b (K, N) element codes, c (M, N) raw C words (f32 bits, or f16 bits) -> D words."""
    da = decode_elem(atype, a)
    db = decode_elem(btype, np.ascontiguousarray(b.T))
    cw = np.asarray(c).astype(np.uint32)
    return step_window(da, db, decode_c(dtype, cw), cw, dtype)


def mma_int(a: np.ndarray, b: np.ndarray, c: np.ndarray, atype: str, btype: str, satfinite: bool,
            bitop: str = "") -> np.ndarray:
    """Integer kinds: a (M, K), b (K, N) element codes (unsigned bit patterns), c (M, N) s32 words -> D words."""
    if atype in ("u8", "s8") and btype in ("u8", "s8") and not bitop:
        return step_i8(_ints(a, atype), np.ascontiguousarray(_ints(b, btype).T), c, satfinite)
    if bitop:
        x = a.astype(np.int64)[:, :, None]
        y = b.astype(np.int64)[None, :, :]
        prod = (x ^ y) if bitop == "xor" else (x & y)
        acc = prod.sum(1)
    else:
        acc = _ints(a, atype) @ _ints(b, btype)
    tot = acc + np.asarray(c).astype(np.uint32).view(np.int32).astype(np.int64)
    if satfinite:
        tot = np.clip(tot, -2 ** 31, 2 ** 31 - 1)
    return (tot & 0xFFFFFFFF).astype(np.uint32)


def _ints(x: np.ndarray, ty: str) -> np.ndarray:
    bits = {"u8": 8, "s8": 8, "u4": 4, "s4": 4}[ty]
    v = np.asarray(x).astype(np.int64) & ((1 << bits) - 1)
    if ty.startswith("s"):
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


def mma_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """f64: a (M, K), b (K, N), c (M, N) uint64 bit patterns -> D bits: d = c; d = fma(a_k, b_k, d) for k in order,
    each rounded to nearest even (IEEE 754 fusedMultiplyAdd; NaN results: F64_NAN_IN / F64_NAN_NEW, module doc)."""
    a, b, c = (np.asarray(x, dtype=np.uint64) for x in (a, b, c))
    for what, x in (("A", a), ("B", b), ("C", c)):
        odd = np.isnan(x.view(np.float64)) & (x != np.uint64(F64_NAN_IN))
        if odd.any():
            raise ModelSilent(f"not implemented: mma.sync .f64 with the NaN operand {what} = "
                              f"{int(x[odd][0]):#018x}: only 0x7ff8000000000000 has been measured as an operand "
                              "(H100 corpus mma_sync_f64; ptx_docs/isa_coverage_notes.md)")
    av = a.view(np.float64)
    bv = np.asarray(b, dtype=np.uint64).view(np.float64)
    cv = np.asarray(c, dtype=np.uint64).view(np.float64)
    M, K = av.shape
    N = bv.shape[1]
    out = np.empty((M, N), np.uint64)
    for i in range(M):
        for j in range(N):
            d = float(cv[i, j])
            for k in range(K):
                d = _fma(float(av[i, k]), float(bv[k, j]), d)
            if math.isnan(d):
                nan_in = np.isnan(av[i]).any() or np.isnan(bv[:, j]).any() or math.isnan(cv[i, j])
                if nan_in and _creates_nan(av[i], bv[:, j], cv[i, j]):
                    # H100 corpus mma_sync_f64_specials (2026-11-27): with a NaN operand AND a NaN the products or
                    # sums create in one dot product, the H100 returns 0x7ff8... or 0xfff8... depending on an
                    # accumulation order measured only for K = 4; refuse rather than guess the sign
                    raise ModelSilent("not implemented: mma.sync .f64 whose dot product has both a NaN operand and "
                                      "an Inf x 0 / Inf - Inf: the H100's NaN sign then depends on its accumulation "
                                      "order, which is not modelled (H100 corpus mma_sync_f64_specials; "
                                      "ptx_docs/isa_coverage_notes.md)")
                out[i, j] = F64_NAN_IN if nan_in else F64_NAN_NEW
            else:
                out[i, j] = np.array(d, np.float64).view(np.uint64)
    return out


def _creates_nan(arow: np.ndarray, bcol: np.ndarray, c: float) -> bool:
    """Whether the non-NaN operands of one dot product create a NaN: some Inf x 0, or +Inf and -Inf among c and the
    products."""
    terms = [] if math.isnan(c) else [float(c)]
    for x, y in zip(arow.tolist(), bcol.tolist()):
        if math.isnan(x) or math.isnan(y):
            continue
        if (math.isinf(x) and y == 0) or (x == 0 and math.isinf(y)):
            return True
        terms.append(x * y)
    return math.inf in terms and -math.inf in terms


def _fma(x: float, y: float, z: float) -> float:
    if math.isnan(x) or math.isnan(y) or math.isnan(z):
        return float("nan")
    if math.isinf(x) or math.isinf(y):
        if x == 0 or y == 0:
            return float("nan")
        p = math.copysign(math.inf, x) * math.copysign(1.0, y)
        if math.isinf(z) and math.copysign(1.0, z) != math.copysign(1.0, p):
            return float("nan")
        return p
    if math.isinf(z):
        return z
    q = Fraction(x) * Fraction(y) + Fraction(z)
    if q == 0:
        pneg = (math.copysign(1.0, x) * math.copysign(1.0, y)) < 0
        zneg = math.copysign(1.0, z) < 0
        if x * y == 0 and z == 0:
            return -0.0 if (pneg and zneg) else 0.0
        return 0.0
    return _round_rn(q)


def _round_rn(q: Fraction) -> float:
    """Nearest-even binary64 of a nonzero rational (overflow to Inf)."""
    s = -1.0 if q < 0 else 1.0
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, -1022)
    ulp = Fraction(2) ** (e - 52)
    n, rem = divmod(a, ulp)
    n = int(n)
    if rem > ulp / 2 or (rem == ulp / 2 and n % 2 == 1):
        n += 1
    v = n * ulp
    if v >= Fraction(2) ** 1024:
        return s * math.inf
    return math.copysign(float(v), s)
