"""Fast exact path for one K step of :mod:`ptxlab.mma` with an F32 destination (every kind but i8).

Every F32-D rule of the model truncates exact products, exact group sums or C into units of ``2**q`` and normalizes
the integer sum to F32 toward zero: ``ptxlab.mma.steps.step_window`` (kinds f16, tf32, f8f6f4, mxf8f6f4:
``q = max(R, r_c) - 25``), ``step_nvfp4`` (mxf4nvf4 with UE4M3) and ``step_mxf4_ue8m0`` (mxf4, mxf4nvf4 with UE8M0),
whose quanta are all at most ``max(R - 39, S - 35, r_c - 35)`` (product-dominant, C-dominant and C-outranked
group windows alike). Wherever every product and C are already multiples of
``2**q``, no truncation drops a bit and the model's result is ``RZ_f32(exact sum)``. This module proves that per
output element with bounds that cost O(M*K + N*K + M*N) plus two float64 matrix products, instead of the model's
O(M*N*K) integer work, and hands only the elements it cannot prove to the model:

* ``q`` is bounded from above by ``q_ub`` (``max(R_ub - 25, r_c - 25)`` for the window rule,
  ``max(R_ub - 39, S_ub - 35, r_c - 35)`` for the mxf4 family) where ``R_ub`` (``S_ub``) is the largest raw exponent of
  a nonzero (scaled) A element of row m plus that of B row n (resp. of their scales), so it bounds the largest
  product (scale pair) raw exponent.
* ``L`` = the lowest set bit any nonzero product can have (row's lowest scaled-A bit + column's lowest scaled-B bit),
  and C's lowest set bit. ``L >= q_ub`` proves that no truncation happens.
* The float64 sum ``A_scaled @ B_scaled^T + C`` is exact when every term is a multiple of ``2**L`` and
  ``sum |terms| < 2**(L + 52)`` (every partial sum of any summation order is then representable): bounded with
  ``|A| @ |B|^T + |C|``.
* F32 round-toward-zero of the exact float64 value: round to nearest, then step one ulp toward zero where that
  rounded away from zero. Only normal F32 results are taken (subnormal, overflow and zero-sign cases go to the model).

An element without a nonzero product returns C's bits in the block-scaled kinds (the model's pass-through) and
``RZ(C)`` otherwise. Everything else the model treats
specially (NaN/Inf inputs, C = -0 without a nonzero product, which the model refuses) is left to the model, so the two paths cannot disagree on it. ``tests/mma/test_mma_arith_fast.py``
compares this path with the model on random data designed to hit every branch.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ptxlab.blas_threads import single_threaded
from ptxlab.mma.codec import Decoded, ctz, decode_c

__all__ = ["fast_step", "WINDOW", "MX"]

U32 = npt.NDArray[np.uint32]
BIG = np.int64(1 << 40)
WINDOW, MX = "window25", "mx"   # the two families of quantum rules (module doc)
ROW_WISE = 8   # up to this many rows with unproven elements are handed to the model row by row


def _scaled(x: Decoded, s: Decoded | None) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64],
                                             npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Per row: scaled values (rows, K), max raw exponent, max scale raw exponent, lowest set bit (all over nonzero
    elements), and whether the row holds a NaN/Inf element or scale."""
    if s is None:
        mant, vexp, rexp, srexp, special = x.mant, x.vexp, x.rexp, np.zeros_like(x.rexp), x.nan | x.inf
    else:       # exact: at most 11 (f16) + 4 (UE4M3) significant bits
        mant, vexp, rexp, srexp = x.mant * s.mant, x.vexp + s.vexp, x.rexp + s.rexp, s.rexp
        special = x.nan | x.inf | s.nan | s.inf
    val = np.ldexp(mant.astype(np.float64), vexp)       # exact in float64 (|vexp| < 300 for every format)
    nz = mant != 0
    rmax = np.where(nz, rexp, -BIG).max(-1)
    smax = np.where(nz, srexp, -BIG).max(-1)
    lsb = np.where(nz, vexp + ctz(mant), BIG).min(-1)
    special = special.any(-1)
    return val, rmax, smax, lsb, special


def fast_step(a: Decoded, b: Decoded, c_bits: npt.NDArray, sa: Decoded | None, sb: Decoded | None, *, rule: str,
              passthrough: bool, model) -> U32:
    """F32 D bits of one K step. rule: WINDOW or MX (module doc); passthrough: an element without a nonzero product
    returns C's bits (block-scaled kinds); ``model(rows, cols)`` computes the model on a row/column subset."""
    av, ra, sra, la, bad_a = _scaled(a, sa)
    bv, rb, srb, lb, bad_b = _scaled(b, sb)
    c_bits = np.asarray(c_bits, dtype=np.uint32)
    c = decode_c("f32", c_bits)
    cv = np.ldexp(c.mant.astype(np.float64), c.vexp)
    cnz = c.mant != 0
    lc = np.where(cnz, c.vexp + ctz(c.mant), BIG)

    if rule == WINDOW:
        q_ub = np.maximum(ra[:, None] + rb[None, :] - 25, np.where(cnz, c.rexp - 25, -BIG))
    elif rule == MX:
        q_ub = np.maximum(np.maximum(ra[:, None] + rb[None, :] - 39, sra[:, None] + srb[None, :] - 35),
                          np.where(cnz, c.rexp - 35, -BIG))
    else:
        raise ValueError(f"unknown quantum rule {rule!r}")
    low = np.minimum(la[:, None] + lb[None, :], lc)
    with single_threaded():     # small products: threads only contend (ptxlab/blas_threads.py)
        hasp = ((av != 0).astype(np.float64) @ (bv != 0).astype(np.float64).T) > 0
        bound = np.abs(av) @ np.abs(bv).T + np.abs(cv)
        v = av @ bv.T + cv
    mag = np.abs(v)
    clean = ~bad_a[:, None] & ~bad_b[None, :] & ~c.nan & ~c.inf
    exact = ((low >= q_ub) & (bound < np.ldexp(1.0, np.clip(low + 52, -1000, 1000)))
             & (((mag >= np.ldexp(1.0, -126)) & (mag < np.ldexp(1.0, 128))) | (mag == 0)))
    if passthrough:     # no nonzero product: C passes through (-0: the model refuses)
        ok = clean & np.where(hasp, exact, c_bits != 0x80000000)
    else:
        ok = clean & exact
    with np.errstate(over="ignore"):
        r = v.astype(np.float32)
    away = np.abs(r.astype(np.float64)) > mag
    r = np.where(away, np.nextafter(r, np.float32(0)), r)
    d = np.where(mag == 0, np.uint32(0), r.view(np.uint32))   # an exact zero sum is +0 (MODEL §3)
    if passthrough:
        d = np.where(hasp, d, c_bits)
    if not ok.all():
        rows = np.flatnonzero(~ok.all(1))
        if len(rows) <= ROW_WISE:       # few rows: the model on each row's failing columns only
            for m in rows:
                cols = np.flatnonzero(~ok[m])
                d[m, cols] = model(np.array([m]), cols)[0]
        else:
            cols = np.flatnonzero(~ok.all(0))
            sub = model(rows, cols)
            blk = d[np.ix_(rows, cols)]
            d[np.ix_(rows, cols)] = np.where(ok[np.ix_(rows, cols)], blk, sub)
    return d
