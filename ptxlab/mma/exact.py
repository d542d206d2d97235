"""Exact reference (float64) and the exact-regime predicate for :mod:`ptxlab.mma`."""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ptxlab.mma.codec import (Decoded, bit_length, ctz, decode_c, encode_f16_rne, encode_f32_rz,
                                    trunc_units)
from ptxlab.mma.steps import NEG, products, specials

__all__ = ["exact_sum", "regime"]


def _values(d: Decoded) -> npt.NDArray[np.float64]:
    return np.ldexp(d.mant.astype(np.float64), d.vexp)     # exact: |mant| < 2**24, exponent in float64 range


def _scaled(p, which: str) -> npt.NDArray[np.float64]:
    v = _values(p.a if which == "a" else p.b)
    s = p.sa if which == "a" else p.sb
    return v if s is None else v * _values(s)                 # exact: at most 11 + 4 significant bits


def exact_sum(p) -> npt.NDArray[np.float64]:
    """Exact A.B (+ scales) + C over the whole K, correctly rounded to float64 (math.fsum of exact products)."""
    c_bits = p.c_bits.astype(np.int64)
    if p.kind == "i8":
        cs = np.where(c_bits >= (1 << 31), c_bits - (1 << 32), c_bits)
        return (cs + p.a @ p.b.T).astype(np.float64)          # exact while |sum| < 2**53
    cd = decode_c(p.d_fmt, c_bits)
    scale_nan = None
    if p.sa is not None:
        scale_nan = p.sa.nan.any(1)[:, None] | p.sb.nan.any(1)[None, :]
    nan, pinf, ninf = specials(p.a, p.b, cd, scale_nan)
    av, bv = _scaled(p, "a"), _scaled(p, "b")
    av = np.where(np.isfinite(av), av, 0.0)
    bv = np.where(np.isfinite(bv), bv, 0.0)
    cv = _values(cd)
    M, N = cv.shape
    out = np.empty((M, N), np.float64)
    for m in range(M):
        prod = av[m][None, :] * bv                            # (N, K), each product exact in float64
        for n in range(N):
            out[m, n] = math.fsum((*prod[n].tolist(), float(cv[m, n])))
    out = np.where(pinf, np.inf, np.where(ninf, -np.inf, out))
    return np.where(nan, np.nan, out)


def _is_special(p) -> bool:
    if p.kind == "i8":
        return False
    bad = any(x.nan.any() or x.inf.any() for x in (p.a, p.b))
    if p.sa is not None:
        bad = bad or p.sa.nan.any() or p.sb.nan.any()
    cd = decode_c(p.d_fmt, p.c_bits)
    return bool(bad or cd.nan.any() or cd.inf.any())


def regime(p) -> bool:
    """Sufficient condition for mma == exact sum (see ptxlab.mma.model.exact_regime)."""
    if _is_special(p):
        return False
    c_bits = p.c_bits
    if p.kind == "i8":
        total = np.where(c_bits >= (1 << 31), c_bits.astype(np.int64) - (1 << 32), c_bits.astype(np.int64))
        for i in range(p.steps):
            lo, hi = i * p.k0, (i + 1) * p.k0
            total = total + p.a[:, lo:hi] @ p.b[:, lo:hi].T
            if (total < -(1 << 31)).any() or (total >= (1 << 31)).any():
                return False
        return True
    wide = p.kind in ("mxf4", "mxf4nvf4")
    for i in range(p.steps):
        lo, hi = i * p.k0, (i + 1) * p.k0
        cut = [None if x is None else Decoded(*(f[:, lo:hi] for f in
               (x.mant, x.vexp, x.rexp, x.nan, x.inf, x.neg))) for x in (p.a, p.b, p.sa, p.sb)]
        pm, pv, pr, sr = products(*cut)
        cd = decode_c(p.d_fmt, c_bits)
        nz, cnz = pm != 0, cd.mant != 0
        if p.sa is not None and ((~nz.any(-1)) & ((c_bits & 0xFFFFFFFF) == 0x80000000)).any():
            return False                                      # mma raises ModelSilent here
        R = np.where(nz, pr, NEG).max(-1)
        top = np.maximum(R, np.where(cnz, cd.rexp, NEG))
        if wide:    # every quantum any path may use: product window, scale floor, C-relative 35-bit window
            S = np.where(nz, sr, NEG).max(-1)
            q = np.maximum(np.maximum(top - 39, S - 35), np.where(cnz, cd.rexp - 35, NEG))
        else:
            q = top - 25
        lsb_p = np.where(nz, pv + ctz(pm), 1 << 40).min(-1)
        lsb_c = np.where(cnz, cd.vexp + ctz(cd.mant), 1 << 40)
        if (np.minimum(lsb_p, lsb_c) < q).any():
            return False
        units = trunc_units(pm, pv - q[..., None]).sum(-1) + trunc_units(cd.mant, cd.vexp - q)  # exact here
        mag = np.abs(units)
        sig = bit_length(mag) - ctz(mag)
        e = bit_length(mag) - 1 + q
        if p.d_fmt == "f16":
            ok = (mag == 0) | ((sig <= 11) & (e >= -14) & (e <= 15))
            c_bits = encode_f16_rne(units, q)[0]
        else:
            ok = (mag == 0) | ((sig <= 24) & (e >= -126) & (e <= 127))
            c_bits = encode_f32_rz(units, q)[0]
        if not ok.all():
            return False
    return True
