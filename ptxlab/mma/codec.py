"""Exact integer decoders and D-format encoders for the tcgen05.mma arithmetic model.

Every finite input decodes to a triple ``(mant, vexp, rexp)`` of int64 arrays with
``value = mant * 2**vexp`` (``mant`` signed) and ``rexp`` the *raw* (encoded, unbiased) exponent,
the minimum normal exponent for subnormals (sf-tensor/tcgen05 MODEL.md §2). Non-finite inputs are
flagged in ``nan`` / ``inf`` masks (``neg`` holds the sign bit). Encoders turn an exact integer sum
``units * 2**q`` into D bits: F32 round-toward-zero (MODEL.md §3), F16 round-to-nearest-even.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]

__all__ = ["Decoded", "decode", "decode_elem", "decode_scale", "decode_c", "trunc_units",
           "bit_length", "ctz", "encode_f32_rz", "encode_f16_rne", "ModelSilent"]


class ModelSilent(NotImplementedError):
    """The published model does not determine the result of this case (see ptx_docs/mma_arithmetic.md)."""


@dataclass
class Decoded:
    """Exact decode of an array of codes (all fields share the input shape)."""

    mant: I64   # signed integer mantissa (0 for non-finite)
    vexp: I64   # value exponent: value = mant * 2**vexp
    rexp: I64   # raw exponent (min normal exponent for subnormals / zero)
    nan: B
    inf: B
    neg: B      # sign bit


# (exponent bits, mantissa bits, bias, special rule). Special rules: "ieee" (max exponent = Inf/NaN),
# "e4m3" (only S.1111.111 is NaN), "none" (all codes finite). MODEL.md §2 decoder table.
ELEM_FORMATS: dict[str, tuple[int, int, int, str]] = {
    "f32": (8, 23, 127, "ieee"),
    "tf32": (8, 10, 127, "ieee"),   # F32 container, low 13 fraction bits cleared first
    "bf16": (8, 7, 127, "ieee"),    # high half of an F32 container
    "f16": (5, 10, 15, "ieee"),
    "e4m3": (4, 3, 7, "e4m3"),
    "e5m2": (5, 2, 15, "ieee"),
    "e2m3": (2, 3, 1, "none"),
    "e3m2": (3, 2, 3, "none"),
    "e2m1": (2, 1, 1, "none"),
}


def decode(code: npt.ArrayLike, ebits: int, mbits: int, bias: int, special: str, signed: bool = True) -> Decoded:
    """Decode sign/exponent/fraction codes (1/ebits/mbits, or 0/ebits/mbits when unsigned)."""
    c = np.asarray(code).astype(np.int64)
    frac = c & ((1 << mbits) - 1)
    e = (c >> mbits) & ((1 << ebits) - 1)
    neg = ((c >> (mbits + ebits)) & 1).astype(bool) if signed else np.zeros(c.shape, bool)
    emax = (1 << ebits) - 1
    if special == "ieee":
        nan = (e == emax) & (frac != 0)
        inf = (e == emax) & (frac == 0)
    elif special == "e4m3":
        nan = (e == emax) & (frac == (1 << mbits) - 1)
        inf = np.zeros(c.shape, bool)
    else:
        nan = np.zeros(c.shape, bool)
        inf = np.zeros(c.shape, bool)
    sub = e == 0
    rexp = np.where(sub, 1 - bias, e - bias)
    mag = np.where(sub, frac, frac | (1 << mbits))
    mag = np.where(nan | inf, 0, mag)
    mant = np.where(neg, -mag, mag)
    return Decoded(mant.astype(np.int64), (rexp - mbits).astype(np.int64), rexp.astype(np.int64), nan, inf, neg)


def decode_elem(fmt: str, code: npt.ArrayLike) -> Decoded:
    """Decode A/B element codes of format ``fmt`` (tf32: uint32 container, bf16/f16: uint16 code)."""
    c = np.asarray(code).astype(np.int64)
    if fmt == "tf32":
        c = (c & 0xFFFFE000) >> 13          # MODEL.md §2: clear F32 fraction bits 0..12 before classifying
    eb, mb, bias, sp = ELEM_FORMATS[fmt]
    return decode(c, eb, mb, bias, sp)


def decode_scale(fmt: str, code: npt.ArrayLike) -> Decoded:
    """Decode UE8M0 (2**(bits-127), 0xff NaN) or UE4M3 (unsigned e4m3, 0x7f NaN) scale codes."""
    c = np.asarray(code).astype(np.int64)
    if fmt == "ue8m0":
        nan = c == 0xFF
        z = np.zeros(c.shape, bool)
        r = c - 127
        return Decoded(np.where(nan, 0, 1).astype(np.int64), r, r, nan, z, z)
    if fmt == "ue4m3":
        return decode(c & 0x7F, 4, 3, 7, "e4m3", signed=False)
    raise ValueError(f"unknown scale format {fmt!r}")


def decode_c(d_fmt: str, c: npt.ArrayLike) -> Decoded:
    """Decode C words: F32 bits, or F16 bits in the low half of the 32-bit word."""
    w = np.asarray(c).astype(np.int64)
    if d_fmt == "f16":
        return decode(w & 0xFFFF, 5, 10, 15, "ieee")
    return decode(w & 0xFFFFFFFF, 8, 23, 127, "ieee")


def trunc_units(mant: npt.ArrayLike, shift: npt.ArrayLike) -> I64:
    """Signed ``trunc_toward_zero(mant * 2**shift)`` (MODEL.md §3 ``units(term, q)`` with shift = vexp - q).

    Shifts are clipped to [-63, 62]; callers guarantee nonzero terms never need a left shift that overflows.
    """
    m = np.asarray(mant, dtype=np.int64)
    s = np.clip(np.asarray(shift, dtype=np.int64), -63, 62)
    mag = np.abs(m)
    r = (mag << np.maximum(s, 0)) >> np.maximum(-s, 0)
    return np.where(m < 0, -r, r)


def bit_length(mag: npt.ArrayLike) -> I64:
    """Bit length of non-negative int64 values (0 -> 0), exact for every int64."""
    m = np.asarray(mag, dtype=np.int64)
    bl = np.frexp(m.astype(np.float64))[1].astype(np.int64)   # may be one too high near powers of two
    too_high = (bl > 0) & ((m >> np.clip(bl - 1, 0, 63)) == 0)
    return np.where(too_high, bl - 1, bl)


def ctz(mant: npt.ArrayLike) -> I64:
    """Count of trailing zero bits of |mant| (64 for zero)."""
    m = np.abs(np.asarray(mant, dtype=np.int64))
    low = m & -m
    return np.where(m == 0, 64, bit_length(low) - 1)


def encode_f32_rz(units: npt.ArrayLike, q: npt.ArrayLike) -> tuple[npt.NDArray[np.uint32], B, B]:
    """Encode ``units * 2**q`` to F32 bits truncating toward zero (MODEL.md §3). Exact zero -> +0.

    A magnitude >= 2**128 gives +-Inf (model.py; confirmed by the frozen B200 vector tf32-0 = 0xff800000).
    Returns (bits, overflow, neg_underflow): overflow marks those Inf results;
    neg_underflow = a negative nonzero value that truncates to zero (sign of the zero not stated).
    """
    u = np.asarray(units, dtype=np.int64)
    qq = np.broadcast_to(np.asarray(q, dtype=np.int64), u.shape)
    mag = np.abs(u)
    bl = bit_length(mag)
    e = bl - 1 + qq
    sh = bl - 24
    m24 = (mag >> np.clip(sh, 0, 63)) << np.clip(-sh, 0, 63)
    normal = ((e + 127) << 23) | (m24 & 0x7FFFFF)
    sub = trunc_units(mag, qq + 149)           # units of 2**-149, RZ
    out = np.where(e >= -126, normal, sub)
    overflow = (mag != 0) & (e > 127)
    out = np.where(overflow, 0x7F800000, out)
    out = np.where(mag == 0, 0, out)
    neg = u < 0
    underflow0 = neg & (out == 0)
    out = np.where(neg & (out != 0), out | 0x80000000, out)
    return out.astype(np.uint32), overflow, underflow0


def _rne_shift(mag: I64, sh: I64) -> I64:
    """round_nearest_even(mag / 2**sh) for sh >= 0, mag << -sh for sh < 0."""
    s = np.clip(sh, 0, 63)
    qv = mag >> s
    rem = mag - (qv << s)
    half = np.where(s > 0, np.int64(1) << np.clip(s - 1, 0, 62), 0)
    up = (s > 0) & ((rem > half) | ((rem == half) & ((qv & 1) == 1)))
    return np.where(sh < 0, mag << np.clip(-sh, 0, 63), qv + up)


def encode_f16_rne(units: npt.ArrayLike, q: npt.ArrayLike) -> tuple[npt.NDArray[np.uint32], B]:
    """Encode ``units * 2**q`` to F16 bits (low half of a uint32), IEEE round-to-nearest-even.

    Overflow gives +-Inf (IEEE RNE). Returns (bits, neg_underflow) where neg_underflow marks negative nonzero
    values rounding to zero (sign of that zero not stated by the model).
    """
    u = np.asarray(units, dtype=np.int64)
    qq = np.broadcast_to(np.asarray(q, dtype=np.int64), u.shape)
    mag = np.abs(u)
    bl = bit_length(mag)
    e = bl - 1 + qq
    m11 = _rne_shift(mag, bl - 11)
    carry = m11 >= (1 << 11)
    e_n = np.where(carry, e + 1, e)
    m11 = np.where(carry, m11 >> 1, m11)
    normal = np.where(e_n > 15, 0x7C00, ((e_n + 15) << 10) | (m11 & 0x3FF))
    sub = _rne_shift(mag, -24 - qq)            # units of 2**-24; 2**10 lands exactly on 0x0400
    out = np.where(e >= -14, normal, sub)
    out = np.where(mag == 0, 0, out)
    neg = u < 0
    underflow0 = neg & (out == 0)
    out = np.where(neg & (out != 0), out | 0x8000, out)
    return out.astype(np.uint32), underflow0
