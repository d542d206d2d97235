"""One tcgen05.mma instruction (one K step) of the arithmetic model, vectorized over (M, N, K).

Rule sources: sf-tensor/tcgen05 ``tcgen05_model/MODEL.md`` (cited as MODEL §n) and its reference
implementation ``tcgen05_model/model.py`` where MODEL.md is terse (cited as model.py). Each function
takes decoded operands (A: (M, K), B: (N, K), per-k scales, C: (M, N)) and returns raw D bits (M, N) uint32.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ptxlab.mma.codec import (Decoded, ModelSilent, encode_f16_rne, encode_f32_rz, trunc_units)

U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
NEG = np.int64(-(1 << 40))        # "no exponent" sentinel for max() reductions

F32_NAN, F32_PINF, F32_NINF = 0x7FFFFFFF, 0x7F800000, 0xFF800000
F16_NAN, F16_PINF, F16_NINF = 0x7FFF, 0x7C00, 0xFC00


def specials(a: Decoded, b: Decoded, c: Decoded, scale_nan: npt.NDArray[np.bool_] | None
             ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """(nan, +inf, -inf) result masks (M, N) per MODEL §4.

    NaN: any input NaN (A, B, C, scale), Inf x 0, or opposite-signed infinite contributions.
    """
    nan = a.nan.any(1)[:, None] | b.nan.any(1)[None, :] | c.nan
    if scale_nan is not None:
        nan = nan | scale_nan
    pinf = c.inf & ~c.neg
    ninf = c.inf & c.neg
    if a.inf.any() or b.inf.any():
        ai, bi = a.inf[:, None, :], b.inf[None, :, :]
        az = (a.mant == 0) & ~a.inf & ~a.nan
        bz = (b.mant == 0) & ~b.inf & ~b.nan
        nan = nan | ((ai & bz[None, :, :]) | (az[:, None, :] & bi)).any(2)
        contrib = ai | bi
        sign = a.neg[:, None, :] ^ b.neg[None, :, :]
        pinf = pinf | (contrib & ~sign).any(2)
        ninf = ninf | (contrib & sign).any(2)
    nan = nan | (pinf & ninf)
    return nan, pinf & ~nan, ninf & ~nan


def apply_specials(d: U32, masks: tuple, d_fmt: str, f16_specials_known: bool = True) -> U32:
    """Override D where a special value results (F32 or F16 destination encodings, MODEL §4)."""
    nan, pinf, ninf = masks
    if not (nan.any() or pinf.any() or ninf.any()):
        return d
    if d_fmt == "f16":
        if not f16_specials_known:
            raise ModelSilent("kind::f16 with F16 D and a NaN/Inf result: the model states F16-D special "
                              "encodings only for kind::f8f6f4 (MODEL §4)")
        codes = (F16_NAN, F16_PINF, F16_NINF)
    else:
        codes = (F32_NAN, F32_PINF, F32_NINF)
    d = np.where(nan, codes[0], np.where(pinf, codes[1], np.where(ninf, codes[2], d)))
    return d.astype(np.uint32)


def products(a: Decoded, b: Decoded, sa: Decoded | None = None, sb: Decoded | None = None
             ) -> tuple[I64, I64, I64, I64 | None]:
    """Exact products (M, N, K): mantissa, value exponent, raw exponent, scale-pair raw exponent.

    With scales, the raw exponent includes both scales (MODEL §5: 'a product's raw exponent includes its scales').
    """
    # int32 halves memory traffic: |mantissa products| < 2**24 and exponents are small for every format.
    i32 = np.int32
    pm = a.mant.astype(i32)[:, None, :] * b.mant.astype(i32)[None, :, :]
    pv = a.vexp.astype(i32)[:, None, :] + b.vexp.astype(i32)[None, :, :]
    pr = a.rexp.astype(i32)[:, None, :] + b.rexp.astype(i32)[None, :, :]
    sr = None
    if sa is not None and sb is not None:
        pm *= sa.mant.astype(i32)[:, None, :] * sb.mant.astype(i32)[None, :, :]
        pv += sa.vexp.astype(i32)[:, None, :] + sb.vexp.astype(i32)[None, :, :]
        sr = sa.rexp.astype(i32)[:, None, :] + sb.rexp.astype(i32)[None, :, :]
        pr += sr
    return pm, pv, pr, sr


def _max_nz(x: I64, nz: npt.NDArray[np.bool_], axis: int = -1) -> I64:
    return np.where(nz, x, np.int32(-(1 << 30))).max(axis=axis).astype(np.int64).clip(NEG)


def group_sum(pm: I64, pv: I64, g: int) -> tuple[I64, I64]:
    """Exact sums of aligned groups of g products along K: (int mantissa, exponent), shape (M, N, K/g)."""
    M, N, K = pm.shape
    pm_g = pm.reshape(M, N, K // g, g)
    pv_g = pv.reshape(M, N, K // g, g)
    emin = pv_g.min(-1)
    s = pv_g - emin[..., None]
    if s.size and s.max() > 40:
        raise AssertionError("group exponent spread too wide for exact int64 group sums")
    return (pm_g.astype(np.int64) << s).sum(-1), emin.astype(np.int64)


def regroup(g: I64, e: I64, f: int) -> tuple[I64, I64]:
    """Exact sums of f consecutive exact group sums (g, e) -> coarser groups."""
    M, N, G = g.shape
    g = g.reshape(M, N, G // f, f)
    e = e.reshape(M, N, G // f, f)
    emin = e.min(-1)
    return (g << (e - emin[..., None])).sum(-1), emin


def _encode(units: I64, q: I64, d_fmt: str) -> tuple[U32, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    if d_fmt == "f16":
        bits, unf = encode_f16_rne(units, q)
        return bits, np.zeros(bits.shape, bool), unf
    return encode_f32_rz(units, q)


def _check_silent(over: npt.NDArray[np.bool_], unf: npt.NDArray[np.bool_], live: npt.NDArray[np.bool_]) -> None:
    if (unf & live).any():
        raise ModelSilent("negative nonzero result that rounds to zero: sign of the zero is not stated by the model")


def _passthrough_c(d: U32, hasp: npt.NDArray[np.bool_], c_bits: npt.NDArray, live: npt.NDArray[np.bool_]) -> U32:
    """Block-scaled kinds with no nonzero product return C's bits (model.py); -0 C conflicts with MODEL §3."""
    cb = np.asarray(c_bits, dtype=np.int64) & 0xFFFFFFFF
    if (~hasp & live & (cb == 0x80000000)).any():
        raise ModelSilent("block-scaled kind with C = -0 and all products zero: model.py passes -0 through, "
                          "MODEL §3 says an exact zero result is +0")
    return np.where(hasp, d, cb).astype(np.uint32)


def step_window(a: Decoded, b: Decoded, c: Decoded, c_bits: npt.NDArray, d_fmt: str,
                sa: Decoded | None = None, sb: Decoded | None = None, scale_nan=None,
                f16_specials_known: bool = True) -> U32:
    """Shared 25-bit raw window (MODEL §3): kinds f16/bf16, tf32, f8f6f4, and mxf8f6f4 (MODEL §5 UE8M0 MX).

    q = max(r_k, r_c) - 25; every product and C truncated toward zero into units of 2**q; exact integer sum;
    F32 RZ (or F16 RNE) normalization.
    """
    masks = specials(a, b, c, scale_nan)
    live = ~(masks[0] | masks[1] | masks[2])
    pm, pv, pr, _ = products(a, b, sa, sb)
    nz = pm != 0
    cnz = c.mant != 0
    r = np.maximum(_max_nz(pr, nz), np.where(cnz, c.rexp, NEG))
    q = r - 25
    units = trunc_units(pm, pv - q[..., None]).sum(-1) + trunc_units(c.mant, c.vexp - q)
    d, over, unf = _encode(units, q, d_fmt)
    _check_silent(over, unf, live)
    if sa is not None:        # mxf8f6f4: no nonzero product -> C bits (model.py block-scaled class)
        d = _passthrough_c(d, nz.any(-1), c_bits, live)
    return apply_specials(d, masks, d_fmt, f16_specials_known)


def step_nvfp4(a: Decoded, b: Decoded, c: Decoded, c_bits: npt.NDArray, sa: Decoded, sb: Decoded,
               scale_nan) -> U32:
    """kind::mxf4nvf4, UE4M3 scales, block16 (scale_vec::4X), F32 D (MODEL §5 'UE4M3 NVFP4').

    Product-dominant: q = max(max(R, r_c) - 39, S - 35); exact aligned K=4 group sums truncated into 2**q.
    C-dominant (C != 0 and r_c >= R): q = r_c - 35; each exact K=16 block sum truncated into 2**q.
    """
    masks = specials(a, b, c, scale_nan)
    live = ~(masks[0] | masks[1] | masks[2])
    pm, pv, pr, sr = products(a, b, sa, sb)
    nz = pm != 0
    hasp = nz.any(-1)
    cnz = c.mant != 0
    M, N, K = pm.shape
    R = _max_nz(pr, nz)
    nzb = nz.reshape(M, N, K // 16, 16).any(-1)
    S = _max_nz(sr[..., ::16], nzb)              # the scale pair is constant inside a K=16 block
    cdom = cnz & (c.rexp >= R)
    q_p = np.maximum(np.maximum(R, np.where(cnz, c.rexp, NEG)) - 39, S - 35)
    q_c = c.rexp - 35
    g4, e4 = group_sum(pm, pv, 4)
    g16, e16 = regroup(g4, e4, 4)                # exact K=16 block sums from the K=4 group sums
    u_p = trunc_units(g4, e4 - q_p[..., None]).sum(-1) + trunc_units(c.mant, c.vexp - q_p)
    u_c = trunc_units(g16, e16 - q_c[..., None]).sum(-1) + trunc_units(c.mant, c.vexp - q_c)
    units = np.where(cdom, u_c, u_p)
    q = np.where(cdom, q_c, q_p)
    d, over, unf = encode_f32_rz(units, q)
    _check_silent(over, unf, live & hasp)
    d = _passthrough_c(d, hasp, c_bits, live)
    return apply_specials(d, masks, "f32")


SUBNORMAL_GROUP_FLOOR = -174      # MODEL §5 'UE8M0 MXF4': observed 2**-174 subnormal group floor


def step_mxf4_ue8m0(a: Decoded, b: Decoded, c: Decoded, c_bits: npt.NDArray, sa: Decoded, sb: Decoded,
                    scale_nan) -> U32:
    """kind::mxf4 / mxf4nvf4 with UE8M0 scales, block32 or block16, F32 D (MODEL §5 'UE8M0 MXF4 and MXF4NVF4').

    R, S as for NVFP4; products merged exactly in K=16 groups.
    C-dominant (C != 0, r_c >= R): q = r_c - 35, group sums truncated into 2**q.
    Otherwise q = max(R - 39, S - 35, r_c - 39); a group that C outranks (r_c >= group R) is first truncated
    through 2**max(q, r_c - 35); if the F32 result is subnormal, groups whose scale pair is below S and whose
    units are below 2**(-174 - q) (or below 1 unit when q >= -174) are dropped (model.py subnormal group floor).
    """
    masks = specials(a, b, c, scale_nan)
    live = ~(masks[0] | masks[1] | masks[2])
    pm, pv, pr, sr = products(a, b, sa, sb)
    nz = pm != 0
    hasp = nz.any(-1)
    cnz = c.mant != 0
    M, N, K = pm.shape
    g16, e16 = group_sum(pm, pv, 16)
    nzg = nz.reshape(M, N, K // 16, 16)
    gR = _max_nz(pr.reshape(M, N, K // 16, 16), nzg)
    R = gR.max(-1)
    ghas = nzg.any(-1)
    gS = np.where(ghas, sr[..., ::16], NEG)      # the scale pair is constant inside a K=16 group
    S = gS.max(-1)
    # global C-dominant path
    cdom = cnz & (c.rexp >= R)
    q_c = c.rexp - 35
    u_c = trunc_units(g16, e16 - q_c[..., None]).sum(-1) + trunc_units(c.mant, c.vexp - q_c)
    # product-dominant path
    q = np.maximum(np.maximum(R, np.where(cnz, c.rexp, NEG)) - 39, S - 35)
    outranked = cnz[..., None] & ghas & (c.rexp[..., None] >= gR)
    bq = np.where(outranked, np.maximum(q[..., None], c.rexp[..., None] - 35), q[..., None])
    bu = trunc_units(g16, e16 - bq) << np.clip(bq - q[..., None], 0, 62)
    cu = trunc_units(c.mant, c.vexp - q)
    u_p = cu + bu.sum(-1)
    d_p, _, _ = encode_f32_rz(u_p, q)
    mag = d_p & 0x7FFFFFFF
    floor = (mag > 0) & (mag < (1 << 23))
    te = np.clip(SUBNORMAL_GROUP_FLOOR - q, 0, 62)
    drop = ghas & (gS < S[..., None]) & (np.abs(bu) < (np.int64(1) << te)[..., None])
    u_p = np.where(floor, cu + np.where(drop, 0, bu).sum(-1), u_p)
    units = np.where(cdom, u_c, u_p)
    qq = np.where(cdom, q_c, q)
    d, over, unf = encode_f32_rz(units, qq)
    _check_silent(over, unf, live & hasp)
    d = _passthrough_c(d, hasp, c_bits, live)
    return apply_specials(d, masks, "f32")


def step_i8(a: I64, b: I64, c_bits: npt.NDArray, saturate: bool) -> U32:
    """kind::i8 (MODEL §6): exact sum of products and S32 C; wrap mod 2**32, or clamp once if saturating."""
    cs = np.asarray(c_bits, dtype=np.int64) & 0xFFFFFFFF
    cs = np.where(cs >= (1 << 31), cs - (1 << 32), cs)
    total = cs + a @ b.T
    if saturate:
        total = np.clip(total, -(1 << 31), (1 << 31) - 1)
    return (total & 0xFFFFFFFF).astype(np.uint32)
