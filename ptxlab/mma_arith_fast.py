"""Fast exact path for one ``kind::mxf4nvf4`` (UE4M3, block16) K step of :mod:`ptxlab.mma_arith`.

The model (``mma_arith_steps.step_nvfp4``) truncates K=4 group sums (or K=16 block sums when C dominates) into units
of ``2**q`` and normalizes the integer sum to F32 toward zero. Wherever every product and C are already multiples of
``2**q``, no truncation drops a bit and the model's result is ``RZ_f32(exact sum)``. This module proves that per
output element with bounds that cost O(M*K + N*K + M*N) plus two float64 matrix products, instead of the model's
O(M*N*K) integer work, and hands only the elements it cannot prove to the model:

* ``q`` is bounded from above by ``q_ub = max(R_ub - 39, S_ub - 35, r_c - 35)`` where ``R_ub`` (``S_ub``) is the
  largest raw exponent of a nonzero scaled A element of row m plus that of B row n (resp. of their scales), so it
  bounds the largest product (scale pair) raw exponent. ``q_ub`` covers both of the model's paths
  (product-dominant ``max(max(R, r_c) - 39, S - 35)`` and C-dominant ``r_c - 35``).
* ``L`` = the lowest set bit any nonzero product can have (row's lowest scaled-A bit + column's lowest scaled-B bit),
  and C's lowest set bit. ``L >= q_ub`` proves that no truncation happens.
* The float64 sum ``A_scaled @ B_scaled^T + C`` is exact when every term is a multiple of ``2**L`` and
  ``sum |terms| < 2**(L + 52)`` (every partial sum of any summation order is then representable): bounded with
  ``|A| @ |B|^T + |C|``.
* F32 round-toward-zero of the exact float64 value: round to nearest, then step one ulp toward zero where that
  rounded away from zero. Only normal F32 results are taken (subnormal, overflow and zero-sign cases go to the model).

An element without a nonzero product returns C's bits, as the model does. Everything else the model treats
specially (NaN/Inf inputs, C = -0 without a nonzero product, which the model refuses) is left to the model, so the two paths cannot disagree on it. ``tests/test_mma_arith_fast.py``
compares this path with the model on random data designed to hit every branch.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ptxlab.blas_threads import single_threaded
from ptxlab.mma_arith_codec import Decoded, ctz, decode_c

__all__ = ["nvfp4_step_fast"]

U32 = npt.NDArray[np.uint32]
BIG = np.int64(1 << 40)
ROW_WISE = 8   # up to this many rows with unproven elements are handed to the model row by row


def _scaled(x: Decoded, s: Decoded) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64],
                                             npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Per row: scaled values (rows, K), max raw exponent, max scale raw exponent, lowest set bit (all over nonzero
    elements), and whether the row holds a NaN/Inf element or scale."""
    mant = x.mant * s.mant                              # exact: 2-bit x 4-bit significands
    vexp = x.vexp + s.vexp
    val = np.ldexp(mant.astype(np.float64), vexp)       # exact in float64
    nz = mant != 0
    rmax = np.where(nz, x.rexp + s.rexp, -BIG).max(-1)
    smax = np.where(nz, s.rexp, -BIG).max(-1)
    lsb = np.where(nz, vexp + ctz(mant), BIG).min(-1)
    special = (x.nan | x.inf | s.nan | s.inf).any(-1)
    return val, rmax, smax, lsb, special


def nvfp4_step_fast(a: Decoded, b: Decoded, c_bits: npt.NDArray, sa: Decoded, sb: Decoded, model) -> U32:
    """D bits of one mxf4nvf4 UE4M3 K step; ``model(rows, cols)`` computes the model on a row/column subset."""
    av, ra, sra, la, bad_a = _scaled(a, sa)
    bv, rb, srb, lb, bad_b = _scaled(b, sb)
    c_bits = np.asarray(c_bits, dtype=np.uint32)
    c = decode_c("f32", c_bits)
    cv = np.ldexp(c.mant.astype(np.float64), c.vexp)
    cnz = c.mant != 0
    lc = np.where(cnz, c.vexp + ctz(c.mant), BIG)

    q_ub = np.maximum(np.maximum(ra[:, None] + rb[None, :] - 39, sra[:, None] + srb[None, :] - 35),
                      np.where(cnz, c.rexp - 35, -BIG))
    low = np.minimum(la[:, None] + lb[None, :], lc)
    with single_threaded():     # small products: threads only contend (ptxlab/blas_threads.py)
        hasp = ((av != 0).astype(np.float64) @ (bv != 0).astype(np.float64).T) > 0
        bound = np.abs(av) @ np.abs(bv).T + np.abs(cv)
        v = av @ bv.T + cv
    mag = np.abs(v)
    clean = ~bad_a[:, None] & ~bad_b[None, :] & ~c.nan & ~c.inf
    ok = clean & np.where(hasp, (low >= q_ub) & (bound < np.ldexp(1.0, np.clip(low + 52, -1000, 1000)))
                          & (((mag >= np.ldexp(1.0, -126)) & (mag < np.ldexp(1.0, 128))) | (mag == 0)),
                          c_bits != 0x80000000)       # no nonzero product: C passes through (-0: the model refuses)
    with np.errstate(over="ignore"):
        r = v.astype(np.float32)
    away = np.abs(r.astype(np.float64)) > mag
    r = np.where(away, np.nextafter(r, np.float32(0)), r)
    d = np.where(mag == 0, np.uint32(0), r.view(np.uint32))   # an exact zero sum is +0 (MODEL §3)
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
