"""Floating-point arithmetic (PTX ISA 9.7.3 single/double precision, 9.7.4 half precision incl. bf16).

Bit-exact model of the correctly rounded operations:

* Every exact result is represented as an f64 value ``x`` plus the *direction* of the (tiny) remainder
  ``exact - x`` (-1, 0, +1).  Rounding to the target format first rounds ``x`` *to odd* in f64 (a nonzero remainder
  sets the last significand bit, moving toward the remainder), then rounds that with the requested mode (.rn/.rz/.rm/
  .rp).  Rounding to odd at precision p' >= p + 2 followed by any rounding to p bits equals a single correct rounding
  (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd").  f64 has
  53 bits; f32 needs 24 + 2, bf16/f16 go through an f32 rounded to odd (24 >= 11 + 2).
* f32 add/sub: two-sum error term in f64.  f32 mul: exact in f64 (24 + 24 bits).  fma.rn.f32: exact f64 product,
  two-sum with c.  div/sqrt/rcp: f64 result plus the sign of the exact remainder (Dekker product, Sterbenz subtract).
* f64: .rn add/sub/mul/div/sqrt are numpy (IEEE); fma.f64 and directed modes use an error-free transformation
  (Dekker two-product + two-sum + round-to-odd), and lanes with extreme exponents (where the transformations could
  under/overflow) take an exact Python-integer path.
* NaN results are the canonical NaN: f32 0x7FFFFFFF, f16/bf16 0x7FFF (PTX ISA 9.7.4 "NaN results are canonical"),
  neg/abs of a NaN included (H100-confirmed); f64 arithmetic 0x7FFFFFFFFFFFFFFF (the H100 propagates a quieted input
  NaN instead: compared by class, see ptx_docs/emulator_approximations.md), f64 neg/abs: the quieted input.
* ``.ftz`` (f32/f16): subnormal inputs and results become sign-preserving zero (result flushed after rounding;
  mul.ftz.f32 flushes on the exact product, before rounding, as the H100 does).
* ``.approx`` transcendental ops are modelled as the correctly rounded f32 value of the f64 math function; the
  documented hardware error bounds are listed in ptx_docs/emulator_approximations.md.
"""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np

from ..core import ir
from ..core.isa import Ctx, Unsupported, imm_value, register

F32_NAN = np.uint32(0x7FFFFFFF)
F64_NAN = np.uint64(0x7FFFFFFFFFFFFFFF)
H_NAN = np.uint16(0x7FFF)
_ROUND = ("rn", "rz", "rm", "rp")
_HALF = ("f16", "f16x2", "bf16", "bf16x2")
_ALL_T = ("f32", "f64") + _HALF
_BITS_T = {"f32": "b32", "f64": "b64", "f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}


# ----------------------------------------------------------------------------------------------------------------
# operand access (bits)
# ----------------------------------------------------------------------------------------------------------------
def _reader(ctx: Ctx, op, ty: str):
    """fn(st) -> raw bits (uint array/scalar) of a float operand of type ty."""
    bt = _BITS_T[ty]
    if isinstance(op, ir.Imm):
        if op.kind == "int" and ty in _HALF:
            v = np.array(imm_value(op, bt))                     # packed half literals are bit patterns
        elif ty in ("f16x2", "bf16x2"):
            raise Unsupported(f"float literal {op.text} for .{ty} is not allowed (PTX ISA 9.7.4)")
        else:
            v = np.array(imm_value(op, ty)).view(np.dtype(f"u{int(bt[1:]) // 8}"))
        return lambda st: v[()]
    return ctx.read(op, bt)


def _b(x, n):
    return np.asarray(x).view(np.dtype(f"u{n // 8}")) if np.asarray(x).dtype.kind == "f" or \
        np.asarray(x).dtype == ml_dtypes.bfloat16 else np.asarray(x)


# ----------------------------------------------------------------------------------------------------------------
# rounding core
# ----------------------------------------------------------------------------------------------------------------
_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp split for f64)


def two_sum(a, b):
    with np.errstate(invalid="ignore", over="ignore"):
        s = a + b
        bb = s - a
        e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


def _split(a):
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b):
    """p + e == a*b exactly (Dekker), valid without under/overflow (callers route extreme lanes elsewhere)."""
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, np.where(np.isfinite(p), e, 0.0)


def _odd64(x, d):
    """Round-to-odd adjustment: x (f64) with remainder direction d (sign array) → f64 rounded to odd."""
    d = np.asarray(d)
    xb = np.asarray(x, dtype=np.float64).view(np.uint64)
    fix = (d != 0) & ((xb & np.uint64(1)) == 0) & np.isfinite(x)
    if not np.any(fix):
        return np.asarray(x, dtype=np.float64)
    away = (d > 0) == (np.asarray(x) > 0)          # remainder moves the magnitude up (x != 0 when d != 0)
    adj = np.where(away, xb + np.uint64(1), xb - np.uint64(1))
    return np.where(fix, adj.view(np.float64), x)


def _directed(r, exact_dir, mode):
    """r: rounded-to-nearest candidate (float array); exact_dir: sign(exact - r).  Apply directed mode."""
    if mode == "rn":
        return r
    ft = r.dtype.type
    if mode == "rz":
        mv = (exact_dir != 0) & ((exact_dir > 0) != (r > 0)) & (r != 0)
        tgt = ft(0)
    elif mode == "rm":
        mv = exact_dir < 0
        tgt = ft(-np.inf)
    else:
        mv = exact_dir > 0
        tgt = ft(np.inf)
    if not np.any(mv):
        return r
    with np.errstate(over="ignore"):
        return np.where(mv, np.nextafter(r, tgt), r)


def round_f32(x, d, mode="rn", ftz=False):
    """Exact value x (f64) + remainder direction d → f32 bits (uint32) rounded with mode.  NaN → canonical."""
    x = np.asarray(x, dtype=np.float64)
    xo = _odd64(x, d) if d is not None else x
    with np.errstate(over="ignore", invalid="ignore"):
        r = xo.astype(np.float32)
        if mode != "rn":
            back = r.astype(np.float64)
            dd = np.sign(xo - back)
            dd = np.where(np.isfinite(back), dd, np.where(np.isinf(back) & np.isfinite(xo), -np.sign(back), 0))
            r = _directed(r, dd, mode)
    bits = r.view(np.uint32)
    if ftz:
        bits = ftz32(bits)
    return np.where(np.isnan(x), F32_NAN, bits)


def round_f64(x, d, mode="rn"):
    """x (f64, already round-to-nearest) + sign(exact - x) → f64 bits with mode.  NaN → canonical."""
    x = np.asarray(x, dtype=np.float64)
    if mode != "rn" and d is not None:
        x = _directed(x, np.asarray(d), mode)
    return np.where(np.isnan(x), F64_NAN, x.view(np.uint64))


def _rto_f32(x, d):
    """Round x (f64, remainder direction d) to odd in f32 precision → float32 array (for bf16/f16 targets)."""
    xo = _odd64(x, d) if d is not None else np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = xo.astype(np.float32)
        back = r.astype(np.float64)
        inexact = (back != xo) & np.isfinite(xo)
        if not np.any(inexact):
            return r
        tz = np.where(np.abs(back) > np.abs(xo), np.nextafter(r, np.float32(0)), r)
        tb = tz.view(np.uint32) | np.uint32(1)
    return np.where(inexact, tb.view(np.float32), r)


def round_half(x, d, fmt, ftz=False):
    """Exact value (f64 + direction) → f16/bf16 bits, round to nearest even."""
    r32 = _rto_f32(x, d)
    with np.errstate(over="ignore", invalid="ignore"):
        h = r32.astype(np.float16 if fmt == "f16" else ml_dtypes.bfloat16).view(np.uint16)
    if ftz:
        h = ftz16(h, fmt)
    return np.where(np.isnan(np.asarray(x)), H_NAN, h)


# ----------------------------------------------------------------------------------------------------------------
# flush-to-zero, classification helpers
# ----------------------------------------------------------------------------------------------------------------
def ftz32(bits):
    bits = np.asarray(bits, dtype=np.uint32)
    sub = ((bits & np.uint32(0x7F800000)) == 0)
    return np.where(sub, bits & np.uint32(0x80000000), bits)


def ftz16(bits, fmt):
    bits = np.asarray(bits, dtype=np.uint16)
    em = np.uint16(0x7C00 if fmt == "f16" else 0x7F80)
    return np.where((bits & em) == 0, bits & np.uint16(0x8000), bits)


def _f32(bits, ftz):
    bits = np.asarray(bits, dtype=np.uint32)
    if ftz:
        bits = ftz32(bits)
    with np.errstate(invalid="ignore"):
        return bits.view(np.float32).astype(np.float64)


def _half_vals(bits, fmt, ftz=False):
    bits = np.asarray(bits, dtype=np.uint16)
    if ftz:
        bits = ftz16(bits, fmt)
    with np.errstate(invalid="ignore"):
        return bits.view(np.float16 if fmt == "f16" else ml_dtypes.bfloat16).astype(np.float64)


def _sat01(bits32):
    """.sat for f32 results: clamp to [0, 1], NaN → +0 (PTX ISA 9.7.3)."""
    v = bits32.view(np.float32)
    out = np.where(np.isnan(v), np.float32(0), np.clip(v, np.float32(0), np.float32(1)))
    out = np.where(out == 0, np.float32(0), out)          # -0 → +0
    return out.astype(np.float32).view(np.uint32)


# ----------------------------------------------------------------------------------------------------------------
# exact slow path (Python integers) for f64 lanes where the error-free transformations could fail
# ----------------------------------------------------------------------------------------------------------------
def _frac(x: float) -> Fraction:
    return Fraction(x)


def round_fraction(q: Fraction, mbits: int, emin: int, emax: int, mode: str) -> float:
    """Round nonzero exact rational q to a binary format with mbits significand bits (incl. hidden), minimum normal
    exponent emin, max exponent emax (which must fit in f64).  Returns a Python float (signed zero on underflow)."""
    import math
    if q == 0:
        return 0.0
    s = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - mbits + 1)
    n = a / ulp
    fl = n.numerator // n.denominator
    rem = n - fl
    if mode == "rn":
        up = rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1)
    elif mode == "rz":
        up = False
    elif mode == "rp":
        up = rem > 0 and s > 0
    else:
        up = rem > 0 and s < 0
    r = (fl + (1 if up else 0)) * ulp
    maxv = (2 - Fraction(2) ** (1 - mbits)) * Fraction(2) ** emax
    if r > maxv:
        if mode == "rn" or (mode == "rp" and s > 0) or (mode == "rm" and s < 0):
            return float("inf") * s
        r = maxv
    return math.copysign(float(r), s)


def _zero_sum_sign(p_neg: bool, c_neg: bool, mode: str) -> float:
    """Sign of an exact zero sum (IEEE 754 6.3): equal signs keep it; otherwise +0, or -0 under .rm."""
    if p_neg == c_neg:
        return -0.0 if p_neg else 0.0
    return -0.0 if mode == "rm" else 0.0


def _fma64_exact(a: float, b: float, c: float, mode: str, has_c: bool = True) -> int:
    """Exact a*b(+c) rounded to f64 with mode, finite inputs (Python rationals; slow path)."""
    import math
    p = Fraction(a) * Fraction(b)
    q = p + Fraction(c) if has_c else p
    if q == 0:
        pneg = (math.copysign(1.0, a) * math.copysign(1.0, b)) < 0
        if not has_c:
            z = -0.0 if pneg else 0.0
        elif p == 0 and c == 0:
            z = _zero_sum_sign(pneg, math.copysign(1.0, c) < 0, mode)
        else:
            z = -0.0 if mode == "rm" else 0.0
        return int(np.array(z, dtype=np.float64).view(np.uint64))
    r = round_fraction(q, 53, -1022, 1023, mode)
    return int(np.array(float(r), dtype=np.float64).view(np.uint64))


# ----------------------------------------------------------------------------------------------------------------
# elementwise kernels
# ----------------------------------------------------------------------------------------------------------------
def _rm_zero(s, x, y):
    """Lanes whose exact sum x + y is zero and must be -0 under .rm (not both +0)."""
    return (s == 0) & ~((x == 0) & (y == 0) & ~np.signbit(x) & ~np.signbit(y))


def f32_add(a, b, mode, ftz):
    x, y = _f32(a, ftz), _f32(b, ftz)
    s, e = two_sum(x, y)
    r = round_f32(s, np.sign(e), mode, ftz)
    if mode == "rm":   # an exact zero sum is -0 under round-down unless both terms are +0 (IEEE 754 6.3)
        r = np.where(_rm_zero(s, x, y), np.uint32(0x80000000), r)
    return r


def f32_mul(a, b, mode, ftz):
    x, y = _f32(a, ftz), _f32(b, ftz)
    with np.errstate(invalid="ignore"):
        p = x * y                                   # exact in f64 (24 x 24 bits, no f64 under/overflow)
        r = round_f32(p, None, mode, ftz)
    if ftz:
        # mul.ftz flushes on the *exact* product (tininess before rounding): a product just below 2^-126 that
        # rounds up to the smallest normal still gives a signed zero.  H100 80GB HBM3, driver 580.159.04, 2026-11-22,
        # corpus seed 20261122 (float_f32 mul.rn.ftz.f32 0x80800000 * 0xbf7fffff -> 0x00000000, not 0x00800000).
        tiny = np.abs(p) < 2.0 ** -126
        r = np.where(tiny, np.signbit(p).astype(np.uint32) << np.uint32(31), r)
    return r


def f32_fma(a, b, c, mode, ftz):
    x, y, z = _f32(a, ftz), _f32(b, ftz), _f32(c, ftz)
    with np.errstate(invalid="ignore"):
        p = x * y
        s, e = two_sum(p, z)
    r = round_f32(s, np.sign(e), mode, ftz)
    if mode == "rm":
        r = np.where(_rm_zero(s, p, z), np.uint32(0x80000000), r)
    return r


def _div_dir(q, a, b):
    """sign(a/b - q) for f64 q ≈ a/b (q finite nonzero, no under/overflow in q*b)."""
    p, e = two_prod(q, b)
    with np.errstate(invalid="ignore", over="ignore"):
        rem = (a - p) - e
    return np.where(np.isfinite(q) & (q != 0), np.sign(rem) * np.sign(b), 0)


def f32_div(a, b, mode, ftz):
    x, y = _f32(a, ftz), _f32(b, ftz)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = x / y
    d = _div_dir(q, x, y) if mode != "rn" else None   # f64 → f32 double rounding is innocuous for ÷ (53 >= 2*24+2)
    return round_f32(q, d, mode, ftz)


def f32_sqrt(a, mode, ftz):
    x = _f32(a, ftz)
    with np.errstate(invalid="ignore"):
        s = np.sqrt(x)
    d = None
    if mode != "rn":
        p, e = two_prod(s, s)
        with np.errstate(invalid="ignore"):
            d = np.where(np.isfinite(s) & (s > 0), np.sign((x - p) - e), 0)
    return round_f32(s, d, mode, ftz)


# f64 ----------------------------------------------------------------------------------------------------------
def _f64(bits):
    return np.asarray(bits, dtype=np.uint64).view(np.float64)


def _extreme(*xs):
    """Lanes where Dekker/two-sum could under/overflow: any finite nonzero |x| outside [2^-900, 2^900]."""
    bad = None
    for x in xs:
        ax = np.abs(x)
        k = np.isfinite(ax) & (ax != 0) & ((ax < 2.0 ** -450) | (ax > 2.0 ** 450))
        bad = k if bad is None else (bad | k)
    return bad


def _slow_fix(out, bad, fn, *arrs):
    if not np.any(bad):
        return out
    out = np.array(np.broadcast_to(out, np.broadcast(*arrs).shape), dtype=np.uint64)
    bs = [np.broadcast_to(a, out.shape) for a in arrs]
    for i in np.flatnonzero(bad):
        out[i] = fn(*(float(b[i]) for b in bs))
    return out


def f64_add(a, b, mode):
    x, y = _f64(a), _f64(b)
    s, e = two_sum(x, y)
    r = round_f64(s, np.sign(e), mode)
    if mode == "rm":
        r = np.where(_rm_zero(s, x, y), np.uint64(0x8000000000000000), r)
    if mode != "rn":   # overflow of finite operands: directed modes give ±max unless rounding away toward the inf
        ovf = np.isinf(s) & np.isfinite(x) & np.isfinite(y)
        if np.any(ovf):
            keep_inf = (mode == "rp") & (s > 0) | (mode == "rm") & (s < 0)
            mx = np.copysign(np.finfo(np.float64).max, s).view(np.uint64)
            r = np.where(ovf & ~keep_inf, mx, r)
    return r


def f64_mul(a, b, mode):
    x, y = _f64(a), _f64(b)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        p = x * y
        if mode == "rn":
            return round_f64(p, None)
        q, e = two_prod(x, y)
    r = round_f64(p, np.sign(e), mode)
    bad = (_extreme(x, y) | (np.abs(p) > 2.0 ** 900) | ((p != 0) & (np.abs(p) < 2.0 ** -800))) & \
        np.isfinite(x) & np.isfinite(y)
    return _slow_fix(r, bad, lambda u, v: _fma64_exact(u, v, 0.0, mode, has_c=False), x, y)


def f64_fma(a, b, c, mode):
    x, y, z = _f64(a), _f64(b), _f64(c)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        ph, pl = two_prod(x, y)
        th, tl = two_sum(z, ph)
        v, ve = two_sum(tl, pl)
        v = _odd64(v, np.sign(ve))
        r, re = two_sum(th, v)
    out = round_f64(r, np.sign(re), mode)
    p = x * y
    spec = ~np.isfinite(x) | ~np.isfinite(y) | ~np.isfinite(z)
    if np.any(spec):
        with np.errstate(invalid="ignore", over="ignore"):
            naive = np.where(np.isfinite(x) & np.isfinite(y), z, p + z)   # finite a*b + ±inf = ±inf exactly
        out = np.where(spec, np.where(np.isnan(naive), F64_NAN, naive.view(np.uint64)), out)
    # lanes the error-free transformation does not cover: extreme exponents, zero results (sign rules), and every
    # lane of a directed rounding mode (the round-to-odd emulation is proved for round-to-nearest)
    bad = (_extreme(x, y, z) | (np.abs(p) > 2.0 ** 900) | ((p != 0) & (np.abs(p) < 2.0 ** -800)) | (r == 0) |
           (mode != "rn")) & ~spec
    return _slow_fix(out, bad, lambda u, v_, w: _fma64_exact(u, v_, w, mode), x, y, z)


def f64_div(a, b, mode):
    x, y = _f64(a), _f64(b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        q = x / y
        if mode == "rn":
            return round_f64(q, None)
        d = _div_dir(q, x, y)
    r = round_f64(q, d, mode)
    fin = np.isfinite(x) & np.isfinite(y) & (y != 0) & (x != 0)
    bad = fin & (_extreme(x, y, q) | (np.abs(q) < 2.0 ** -900) | (np.abs(q) > 2.0 ** 900))

    def slow(u, v):
        q_ = round_fraction(Fraction(u) / Fraction(v), 53, -1022, 1023, mode)
        return int(np.array(float(q_)).view(np.uint64))
    return _slow_fix(r, bad, slow, x, y)


def f64_sqrt(a, mode):
    x = _f64(a)
    with np.errstate(invalid="ignore"):
        s = np.sqrt(x)
    if mode == "rn":
        return round_f64(s, None)
    p, e = two_prod(s, s)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.where(np.isfinite(s) & (s > 0), np.sign((x - p) - e), 0)
    r = round_f64(s, d, mode)
    bad = np.isfinite(x) & (x > 0) & ((x < 2.0 ** -900) | (x > 2.0 ** 900))

    def slow(u):
        import math
        f = Fraction(u)
        k = 600                                   # f * 4^k is an integer for every f64 and sqrt keeps > 60 bits
        n = f * 4 ** k
        ni = n.numerator // n.denominator
        si = math.isqrt(ni)
        exact = si * si == n
        val = Fraction(si, 2 ** k) if exact else Fraction(2 * si + 1, 2 ** (k + 1))   # sticky half-unit
        return int(np.array(float(round_fraction(val, 53, -1022, 1023, mode))).view(np.uint64))
    return _slow_fix(r, bad, slow, x)


# min/max (PTX ISA 9.7.3.10/11, 9.7.4.x) ---------------------------------------------------------------------
def minmax_vals(x, y, is_max, nan_prop):
    """x, y float64 value arrays → float64 result, -0 < +0, NaN rules; NaN result means canonical NaN."""
    xn, yn = np.isnan(x), np.isnan(y)
    # order with -0 < +0: compare (value, signbit)
    xs, ys = np.signbit(x), np.signbit(y)
    if is_max:
        pick_x = (x > y) | ((x == y) & ~xs)
    else:
        pick_x = (x < y) | ((x == y) & xs)
    r = np.where(pick_x, x, y)
    if nan_prop:
        r = np.where(xn | yn, np.nan, r)
    else:
        r = np.where(xn, y, np.where(yn, x, r))
    return r


# ----------------------------------------------------------------------------------------------------------------
# builders
# ----------------------------------------------------------------------------------------------------------------
def _ftype(ins: ir.Instr) -> str:
    for m in reversed(ins.mods):
        if m in _ALL_T:
            return m
    raise Unsupported(f"{ins.name}: no floating-point type ({ins.where()})")


def _mode(ins: ir.Instr, default="rn") -> str:
    for m in ins.mods:
        if m in _ROUND:
            return m
    return default


def _check_mods(ins: ir.Instr, allowed: set):
    extra = [m for m in ins.mods if m not in allowed and m not in _ALL_T]
    if extra:
        raise Unsupported(f"{ins.name}: modifier(s) {', '.join('.' + x for x in extra)} are not supported by the "
                          f"emulator ({ins.where()})")


def _unpack2(bits32):
    """(T,) uint32 packed pair → (T, 2) uint16 [lo, hi]."""
    b = np.ascontiguousarray(np.asarray(bits32, dtype=np.uint32))
    return b.reshape(b.shape + (1,)).view(np.uint16) if b.ndim else b.reshape(1, 1).view(np.uint16)


def _pack2(h):
    return np.ascontiguousarray(h.astype(np.uint16)).view(np.uint32).reshape(h.shape[:-1])


def _half_op(ty, fn, *bits):
    """Apply fn(values...) -> uint16 bits over f16/bf16 scalars or packed pairs."""
    if ty in ("f16x2", "bf16x2"):
        parts = [_unpack2(b) for b in bits]
        shp = np.broadcast(*parts).shape
        parts = [np.broadcast_to(p, shp) for p in parts]
        r = fn(*parts)
        out = _pack2(np.asarray(r, dtype=np.uint16).reshape(shp))
        return out if out.size != 1 or any(np.ndim(b) for b in bits) else out.reshape(())
    return fn(*(np.asarray(b, dtype=np.uint16) for b in bits))


def _fmt(ty):
    return "f16" if ty.startswith("f16") else "bf16"


def _emit(ins, ctx, ty, nargs, compute):
    """Read nargs sources, compute(bits...) → bits, write destination."""
    rds = [_reader(ctx, ins.args[k + 1], ty) for k in range(nargs)]
    w = ctx.write(ins.args[0], _BITS_T[ty])
    if nargs == 1:
        r0 = rds[0]

        def run1(st, m):
            w(st, compute(r0(st)), m)
        return run1
    if nargs == 2:
        r0, r1 = rds

        def run2(st, m):
            w(st, compute(r0(st), r1(st)), m)
        return run2
    r0, r1, r2 = rds

    def run3(st, m):
        w(st, compute(r0(st), r1(st), r2(st)), m)
    return run3


def _sat_half(h, fmt):
    v = _half_vals(h, fmt)
    v = np.where(np.isnan(v), 0.0, np.clip(v, 0.0, 1.0))
    v = np.where(v == 0, 0.0, v)
    return v.astype(np.float16 if fmt == "f16" else ml_dtypes.bfloat16).view(np.uint16)


def _relu_half(h, fmt):
    neg = (h & np.uint16(0x8000)) != 0
    nan = np.isnan(_half_vals(h, fmt))
    return np.where(nan, H_NAN, np.where(neg, np.uint16(0), h))


def build_addsubmul(ins: ir.Instr, ctx: Ctx):
    """add/sub/mul .f32/.f64 (9.7.3.1-3) and .f16/.f16x2/.bf16/.bf16x2 (9.7.4.1-3)."""
    ty = _ftype(ins)
    mode = _mode(ins)
    ftz = ins.has("ftz")
    sat = ins.has("sat")
    _check_mods(ins, {"ftz", "sat"} | set(_ROUND))
    op = ins.opcode
    if ty == "f64" and (ftz or sat):
        raise Unsupported(f"{ins.name}: .ftz/.sat are not defined for .f64")
    if ty in _HALF and mode != "rn":
        raise Unsupported(f"{ins.name}: half-precision {op} supports only .rn (PTX ISA 9.7.4)")
    if ty.startswith("bf16") and (ftz or sat):
        raise Unsupported(f"{ins.name}: .ftz/.sat are not defined for .bf16 (PTX ISA 9.7.4)")
    if ty == "f32":
        if op == "mul":
            f = lambda a, b: f32_mul(a, b, mode, ftz)  # noqa: E731
        else:
            neg = op == "sub"
            f = (lambda a, b: f32_add(a, np.asarray(b, np.uint32) ^ np.uint32(0x80000000), mode, ftz)) if neg \
                else (lambda a, b: f32_add(a, b, mode, ftz))
        g = (lambda a, b: _sat01(f(a, b))) if sat else f
        return _emit(ins, ctx, ty, 2, g)
    if ty == "f64":
        if op == "mul":
            f = lambda a, b: f64_mul(a, b, mode)  # noqa: E731
        elif op == "sub":
            f = lambda a, b: f64_add(a, np.asarray(b, np.uint64) ^ np.uint64(1 << 63), mode)  # noqa: E731
        else:
            f = lambda a, b: f64_add(a, b, mode)  # noqa: E731
        return _emit(ins, ctx, ty, 2, f)
    fmt = _fmt(ty)

    def hf(a, b):
        x, y = _half_vals(a, fmt, ftz), _half_vals(b, fmt, ftz)
        if op == "sub":
            y = -y
        with np.errstate(invalid="ignore"):
            if op == "mul":
                v, d = x * y, None                    # exact in f64 (11+11 or 8+8 significand bits)
            else:
                v, e = two_sum(x, y)                  # bf16 exponent range makes x + y inexact in f64: keep error
                d = np.sign(e)
        h = round_half(v, d, fmt, ftz)
        return _sat_half(h, fmt) if sat else h
    return _emit(ins, ctx, ty, 2, lambda a, b: _half_op(ty, hf, a, b))


def build_fma(ins: ir.Instr, ctx: Ctx):
    """fma (9.7.3.5, 9.7.4.4) and mad.f32/.f64 (9.7.3.6: mad.rnd.f32 is fused, identical to fma)."""
    ty = _ftype(ins)
    mode = _mode(ins)
    ftz, sat, relu = ins.has("ftz"), ins.has("sat"), ins.has("relu")
    _check_mods(ins, {"ftz", "sat", "relu", "oob"} | set(_ROUND))
    if ins.has("oob"):
        raise Unsupported(f"{ins.name}: fma .oob is not supported by the emulator")
    if ty == "f32":
        f = lambda a, b, c: f32_fma(a, b, c, mode, ftz)  # noqa: E731
        g = (lambda a, b, c: _sat01(f(a, b, c))) if sat else f
        return _emit(ins, ctx, ty, 3, g)
    if ty == "f64":
        if ftz or sat:
            raise Unsupported(f"{ins.name}: .ftz/.sat are not defined for .f64")
        return _emit(ins, ctx, ty, 3, lambda a, b, c: f64_fma(a, b, c, mode))
    if mode != "rn":
        raise Unsupported(f"{ins.name}: half-precision fma supports only .rn (PTX ISA 9.7.4.4)")
    fmt = _fmt(ty)

    def hf(a, b, c):
        x, y, z = _half_vals(a, fmt, ftz), _half_vals(b, fmt, ftz), _half_vals(c, fmt, ftz)
        with np.errstate(invalid="ignore"):
            s, e = two_sum(x * y, z)               # product exact (22 bits); sum + error exact
        h = round_half(s, np.sign(e), fmt, ftz)
        if sat:
            h = _sat_half(h, fmt)
        if relu:
            h = _relu_half(h, fmt)
        return h
    return _emit(ins, ctx, ty, 3, lambda a, b, c: _half_op(ty, hf, a, b, c))


def build_div(ins: ir.Instr, ctx: Ctx):
    """div .approx/.full/.rnd (PTX ISA 9.7.3.8)."""
    ty = _ftype(ins)
    ftz = ins.has("ftz")
    _check_mods(ins, {"ftz", "approx", "full"} | set(_ROUND))
    if ty not in ("f32", "f64"):
        raise Unsupported(f"{ins.name}: div is defined for .f32/.f64 only")
    if ty == "f64":
        if ins.has("approx") or ins.has("full") or ftz:
            raise Unsupported(f"{ins.name}: only div.rnd.f64 is supported")
        mode = _mode(ins)
        return _emit(ins, ctx, ty, 2, lambda a, b: f64_div(a, b, mode))
    if ins.has("approx") or ins.has("full"):
        # documented approximation (emulator_approximations.md): the correctly rounded quotient; div.approx returns
        # 0 for 2^126 < |b| < 2^128 like the hardware (PTX ISA 9.7.3.8)
        approx = ins.has("approx")

        def fa(a, b):
            r = f32_div(a, b, "rn", ftz)
            if approx:
                yb = np.asarray(b, np.uint32) & np.uint32(0x7FFFFFFF)
                big = (yb > np.uint32(0x7E800000)) & (yb < np.uint32(0x7F800000))
                xa = _f32(a, ftz)
                zero = ((np.asarray(a, np.uint32) ^ np.asarray(b, np.uint32)) & np.uint32(0x80000000))
                r = np.where(big & np.isfinite(xa), zero, r)
            return r
        return _emit(ins, ctx, ty, 2, fa)
    mode = _mode(ins, None)
    if mode is None:
        raise Unsupported(f"{ins.name}: div.f32 needs .approx, .full or a rounding modifier (PTX ISA 9.7.3.8)")
    return _emit(ins, ctx, ty, 2, lambda a, b: f32_div(a, b, mode, ftz))


def build_rcp(ins: ir.Instr, ctx: Ctx):
    """rcp .approx/.rnd .f32/.f64 (PTX ISA 9.7.3.12, 9.7.3.13 rcp.approx.ftz.f64)."""
    ty = _ftype(ins)
    ftz = ins.has("ftz")
    _check_mods(ins, {"ftz", "approx"} | set(_ROUND))
    one32 = np.uint32(0x3F800000)
    one64 = np.uint64(0x3FF0000000000000)
    if ty == "f32":
        mode = "rn" if ins.has("approx") else _mode(ins)
        return _emit(ins, ctx, ty, 1, lambda a: f32_div(one32, a, mode, ftz))
    if ty == "f64":
        if ins.has("approx"):
            raise Unsupported(f"{ins.name}: rcp.approx.ftz.f64 (a ~2^-? coarse approximation) is not modelled")
        mode = _mode(ins)
        return _emit(ins, ctx, ty, 1, lambda a: f64_div(one64, a, mode))
    raise Unsupported(f"{ins.name}: rcp is defined for .f32/.f64")


def build_sqrt(ins: ir.Instr, ctx: Ctx):
    """sqrt .approx/.rnd (PTX ISA 9.7.3.14)."""
    ty = _ftype(ins)
    ftz = ins.has("ftz")
    _check_mods(ins, {"ftz", "approx"} | set(_ROUND))
    if ty == "f32":
        mode = "rn" if ins.has("approx") else _mode(ins)
        return _emit(ins, ctx, ty, 1, lambda a: f32_sqrt(a, mode, ftz))
    if ty == "f64" and not ins.has("approx"):
        mode = _mode(ins)
        return _emit(ins, ctx, ty, 1, lambda a: f64_sqrt(a, mode))
    raise Unsupported(f"{ins.name}: not supported by the emulator")


def _approx_unary(ins, ctx, fn):
    """f32 .approx op modelled as RN(f(x)) in f64 (documented tolerance in emulator_approximations.md)."""
    ty = _ftype(ins)
    ftz = ins.has("ftz")
    _check_mods(ins, {"ftz", "approx"})
    if ty != "f32" or not ins.has("approx"):
        raise Unsupported(f"{ins.name}: only the .approx{{.ftz}}.f32 form is supported by the emulator")

    def f(a):
        x = _f32(a, ftz)
        with np.errstate(all="ignore"):
            y = fn(x)
        return round_f32(y, None, "rn", ftz)
    return _emit(ins, ctx, ty, 1, f)


def build_rsqrt(ins, ctx):
    """rsqrt.approx.f32 (PTX ISA 9.7.3.15); rsqrt(±0) = ±inf."""
    def f(x):
        with np.errstate(all="ignore"):
            return np.where(x == 0, np.copysign(np.inf, x), 1.0 / np.sqrt(x))
    return _approx_unary(ins, ctx, f)


def build_ex2(ins, ctx):
    """ex2.approx.f32 (PTX ISA 9.7.3.21)."""
    return _approx_unary(ins, ctx, np.exp2)


def build_lg2(ins, ctx):
    """lg2.approx.f32 (PTX ISA 9.7.3.20): lg2(±0) = -inf, lg2(x<0) = NaN."""
    return _approx_unary(ins, ctx, lambda x: np.where(x == 0, -np.inf, np.log2(x)))


def build_sin(ins, ctx):
    """sin.approx.f32 (PTX ISA 9.7.3.18)."""
    return _approx_unary(ins, ctx, np.sin)


def build_cos(ins, ctx):
    """cos.approx.f32 (PTX ISA 9.7.3.19)."""
    return _approx_unary(ins, ctx, np.cos)


def build_tanh(ins, ctx):
    """tanh.approx.f32 (PTX ISA 9.7.3.22; sm_75+)."""
    return _approx_unary(ins, ctx, np.tanh)


def build_negabs(ins: ir.Instr, ctx: Ctx):
    """neg/abs .f32/.f64/.f16/.f16x2/.bf16/.bf16x2 (9.7.3.9/10, 9.7.4.5/6): sign-bit operations on numbers.

    NaN inputs (PTX ISA: "unspecified NaN") do NOT keep their payload on the H100 (ptxas lowers neg/abs to FADD /
    HADD2 / DADD with a negated or absolute operand): f32 gives the canonical 0x7FFFFFFF, f16/bf16 (each half of a
    packed pair) 0x7FFF, and f64 returns the *quieted input with its sign unchanged* (neg.f64 0x7ff0000000000001 ->
    0x7ff8000000000001).  Measured: H100 80GB HBM3, driver 580.159.04, 2026-11-22, corpus seed 20261122 (float_f32,
    float_half, float_f64, float_edge fabsf/-x)."""
    ty = _ftype(ins)
    ftz = ins.has("ftz")
    _check_mods(ins, {"ftz"})
    bits = {"f32": 32, "f64": 64, "f16": 16, "bf16": 16, "f16x2": 32, "bf16x2": 32}[ty]
    ud = np.dtype(f"u{bits // 8}")
    if ty in ("f16x2", "bf16x2"):
        sign = ud.type(0x80008000)
    else:
        sign = ud.type(1 << (bits - 1))
    is_neg = ins.opcode == "neg"

    def f(a):
        a = np.asarray(a, dtype=ud)
        if ftz:
            if ty == "f32":
                a = ftz32(a)
            elif ty in ("f16", "bf16"):
                a = ftz16(a, _fmt(ty))
            elif ty == "f16x2":
                a = _pack2(ftz16(_unpack2(a), "f16"))
        r = (a ^ sign) if is_neg else (a & ~sign)
        if ty == "f32":
            return np.where((a & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000), F32_NAN, r)
        if ty == "f64":
            nan = (a & np.uint64(0x7FFFFFFFFFFFFFFF)) > np.uint64(0x7FF0000000000000)
            return np.where(nan, a | np.uint64(1 << 51), r)
        inf = np.uint16(0x7C00 if ty in ("f16", "f16x2") else 0x7F80)
        if ty in ("f16", "bf16"):
            return np.where((a & np.uint16(0x7FFF)) > inf, H_NAN, r)
        h = _unpack2(r)
        return _pack2(np.where((_unpack2(a) & np.uint16(0x7FFF)) > inf, H_NAN, h))
    return _emit(ins, ctx, ty, 1, f)


def build_minmax(ins: ir.Instr, ctx: Ctx):
    """min/max floating point (PTX ISA 9.7.3.11/12, 9.7.4.8/9): one NaN operand → the other; both NaN → canonical
    NaN; .NaN → canonical NaN if any input is NaN; -0 < +0."""
    ty = _ftype(ins)
    ftz, nanp = ins.has("ftz"), ins.has("NaN")
    is_max = ins.opcode == "max"
    _check_mods(ins, {"ftz", "NaN"})
    if len(ins.args) != 3:
        raise Unsupported(f"{ins.name}: three-input min/max is not supported by the emulator")
    if ty == "f32":
        def f(a, b):
            r = minmax_vals(_f32(a, ftz), _f32(b, ftz), is_max, nanp).astype(np.float32).view(np.uint32)
            return np.where(np.isnan(r.view(np.float32)), F32_NAN, r)
        return _emit(ins, ctx, ty, 2, f)
    if ty == "f64":
        if nanp or ftz:
            raise Unsupported(f"{ins.name}: .NaN/.ftz are not defined for .f64 min/max (PTX ISA 9.7.3.11)")

        def f64m(a, b):
            r = minmax_vals(_f64(a), _f64(b), is_max, nanp)
            return np.where(np.isnan(r), F64_NAN, r.view(np.uint64))
        return _emit(ins, ctx, ty, 2, f64m)
    fmt = _fmt(ty)

    def hf(a, b):
        r = minmax_vals(_half_vals(a, fmt, ftz), _half_vals(b, fmt, ftz), is_max, nanp)
        h = r.astype(np.float16 if fmt == "f16" else ml_dtypes.bfloat16).view(np.uint16)
        return np.where(np.isnan(r), H_NAN, h)
    return _emit(ins, ctx, ty, 2, lambda a, b: _half_op(ty, hf, a, b))


def build_testp(ins: ir.Instr, ctx: Ctx):
    """testp.op.{f32,f64} p, a (PTX ISA 9.7.3.16)."""
    ty = _ftype(ins)
    if ty not in ("f32", "f64"):
        raise Unsupported(f"{ins.name}: testp is defined for .f32/.f64")
    op = next((m for m in ins.mods if m in ("finite", "infinite", "number", "notanumber", "normal",
                                             "subnormal")), None)
    if op is None:
        raise Unsupported(f"{ins.name}: unknown testp operation")
    rd = _reader(ctx, ins.args[1], ty)
    w = ctx.write(ins.args[0], "pred")
    fd = np.float32 if ty == "f32" else np.float64
    tiny = np.finfo(fd).tiny

    def run(st, m):
        x = np.asarray(rd(st)).view(fd)
        with np.errstate(invalid="ignore"):
            if op == "finite":
                p = np.isfinite(x)
            elif op == "infinite":
                p = np.isinf(x)
            elif op == "number":
                p = ~np.isnan(x)
            elif op == "notanumber":
                p = np.isnan(x)
            elif op == "normal":
                p = np.isfinite(x) & (np.abs(x) >= tiny)
                if ty == "f32":
                    # the H100 counts ±0 as normal for testp.normal.f32 (finite and not subnormal): H100 80GB HBM3,
                    # driver 580.159.04, 2026-11-22, corpus seed 20261122 (float_approx testp, x = 0x0 and
                    # 0x80000000).  f64 zero: not measured, kept as IEEE (not normal).
                    p = p | (x == 0)
            else:
                p = (x != 0) & (np.abs(x) < tiny)
        w(st, p, m)
    return run


def build_copysign(ins: ir.Instr, ctx: Ctx):
    """copysign.{f32,f64} d, a, b: d = b with the sign of a (PTX ISA 9.7.3.4)."""
    ty = _ftype(ins)
    if ty not in ("f32", "f64"):
        raise Unsupported(f"{ins.name}: copysign is defined for .f32/.f64")
    ud = np.uint32 if ty == "f32" else np.uint64
    sign = ud(1 << (31 if ty == "f32" else 63))

    def f(a, b):
        return (np.asarray(b, ud) & ~sign) | (np.asarray(a, ud) & sign)
    return _emit(ins, ctx, ty, 2, f)


def _lanes64(bits):
    """(lo, hi) f32 bit patterns of a packed .f32x2 (.b64) operand: lo = bits 0..31 = element 0 (PTX ISA 9.7.3.3)."""
    b = np.asarray(bits, dtype=np.uint64)
    return (b & np.uint64(0xFFFFFFFF)).astype(np.uint32), (b >> np.uint64(32)).astype(np.uint32)


def _pack64(lo, hi):
    return np.asarray(lo, dtype=np.uint32).astype(np.uint64) | (np.asarray(hi, dtype=np.uint32).astype(np.uint64)
                                                               << np.uint64(32))


def build_f32x2(ins: ir.Instr, ctx: Ctx):
    """add/sub/mul/fma{.rnd}{.ftz}.f32x2 (PTX ISA 9.7.3.3-6, sm_100+): two independent .f32 operations on the
    halves of .b64 operands, element i in bits [32i, 32i+31]; each element exactly as the scalar .f32 form
    (same rounding, .ftz, NaN and signed-zero rules)."""
    op = ins.opcode
    mode = ins.fields["rnd"] or "rn"
    ftz = ins.fields["ftz"] == "ftz"
    if op == "mul":
        f = lambda a, b: f32_mul(a, b, mode, ftz)  # noqa: E731
    elif op == "sub":
        f = lambda a, b: f32_add(a, b ^ np.uint32(0x80000000), mode, ftz)  # noqa: E731
    elif op == "add":
        f = lambda a, b: f32_add(a, b, mode, ftz)  # noqa: E731
    else:
        g = lambda a, b, c: f32_fma(a, b, c, mode, ftz)  # noqa: E731
    rds = [ctx.read(x, "b64") for x in ins.args[1:]]
    w = ctx.write(ins.args[0], "b64")
    if op == "fma":
        ra, rb, rc = rds

        def run3(st, m):
            (al, ah), (bl, bh), (cl, ch) = _lanes64(ra(st)), _lanes64(rb(st)), _lanes64(rc(st))
            w(st, _pack64(g(al, bl, cl), g(ah, bh, ch)), m)
        return run3
    ra, rb = rds

    def run2(st, m):
        (al, ah), (bl, bh) = _lanes64(ra(st)), _lanes64(rb(st))
        w(st, _pack64(f(al, bl), f(ah, bh)), m)
    return run2


def _widen_half(bits, fmt):
    """f16 / bf16 bits -> the equal f32 bits (exact: every f16 and bf16 value is an f32 value)."""
    v = _half_vals(np.asarray(bits, dtype=np.uint16), fmt)
    with np.errstate(invalid="ignore"):
        return v.astype(np.float32).view(np.uint32)


def build_mixed(ins: ir.Instr, ctx: Ctx):
    """Mixed precision add/sub/fma{.rnd}{.sat}.f32.{f16,bf16} (PTX ISA 9.7.5.1-3, sm_100+): a (and b for fma) are
    converted exactly to .f32, then d = a + c / a - c / a * b + c with one rounding to .f32 (.rnd; add/sub default
    .rn), .sat clamps to [0, 1] with NaN -> +0.  No .ftz: subnormal inputs and results are kept."""
    op = ins.opcode
    fmt = ins.fields.get("atype") or ins.fields.get("abtype")
    mode = ins.fields["rnd"] or "rn"
    sat = ins.fields["sat"] == "sat"
    ra = ctx.read(ins.args[1], "b16")
    w = ctx.write(ins.args[0], "b32")
    post = _sat01 if sat else (lambda r: r)
    if op == "fma":
        rb = ctx.read(ins.args[2], "b16")
        rc = _reader(ctx, ins.args[3], "f32")

        def run_fma(st, m):
            w(st, post(f32_fma(_widen_half(ra(st), fmt), _widen_half(rb(st), fmt), rc(st), mode, False)), m)
        return run_fma
    rc = _reader(ctx, ins.args[2], "f32")
    neg = op == "sub"

    def run_add(st, m):
        c = np.asarray(rc(st), dtype=np.uint32)
        if neg:
            c = c ^ np.uint32(0x80000000)
        w(st, post(f32_add(_widen_half(ra(st), fmt), c, mode, False)), m)
    return run_add


# ----------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ----------------------------------------------------------------------------------------------------------------
SETS = {"rnd": _ROUND, "half": ("f16", "f16x2"), "bhalf": ("bf16", "bf16x2"), "f3264": ("f32", "f64"),
        "atype": ("f16", "bf16"), "abtype": ("f16", "bf16"),
        "testop": ("finite", "infinite", "number", "notanumber", "normal", "subnormal")}
FORMS = register(SETS, [
    # form                                  PTX ISA    builder
    ("testp.testop.f3264",                "9.7.3.1", build_testp),
    ("copysign.f3264",                      "9.7.3.2", build_copysign),
    ("add{.rnd}{.ftz}{.sat}.f32",           "9.7.3.3", build_addsubmul),
    ("add{.rnd}.f64",                       "9.7.3.3", build_addsubmul),
    ("add{.rnd}{.ftz}.f32x2",               "9.7.3.3", build_f32x2),
    ("sub{.rnd}{.ftz}{.sat}.f32",           "9.7.3.4", build_addsubmul),
    ("sub{.rnd}.f64",                       "9.7.3.4", build_addsubmul),
    ("sub{.rnd}{.ftz}.f32x2",               "9.7.3.4", build_f32x2),
    ("mul{.rnd}{.ftz}{.sat}.f32",           "9.7.3.5", build_addsubmul),
    ("mul{.rnd}.f64",                       "9.7.3.5", build_addsubmul),
    ("mul{.rnd}{.ftz}.f32x2",               "9.7.3.5", build_f32x2),
    ("fma.rnd{.ftz}{.sat}.f32",             "9.7.3.6", build_fma),
    ("fma.rnd.f64",                         "9.7.3.6", build_fma),
    ("fma.rnd{.ftz}.f32x2",                 "9.7.3.6", build_f32x2),
    ("mad.rnd{.ftz}{.sat}.f32",             "9.7.3.7", build_fma),
    ("mad.rnd.f64",                         "9.7.3.7", build_fma),
    ("div.approx{.ftz}.f32",                "9.7.3.8", build_div),
    ("div.full{.ftz}.f32",                  "9.7.3.8", build_div),
    ("div.rnd{.ftz}.f32",                   "9.7.3.8", build_div),
    ("div.rnd.f64",                         "9.7.3.8", build_div),
    ("abs{.ftz}.f32",                       "9.7.3.9", build_negabs),
    ("abs.f64",                             "9.7.3.9", build_negabs),
    ("neg{.ftz}.f32",                       "9.7.3.10", build_negabs),
    ("neg.f64",                             "9.7.3.10", build_negabs),
    ("min{.ftz}{.NaN}.f32",                 "9.7.3.11", build_minmax),
    ("min.f64",                             "9.7.3.11", build_minmax),
    ("max{.ftz}{.NaN}.f32",                 "9.7.3.12", build_minmax),
    ("max.f64",                             "9.7.3.12", build_minmax),
    ("rcp.approx{.ftz}.f32",                "9.7.3.13", build_rcp),
    ("rcp.rnd{.ftz}.f32",                   "9.7.3.13", build_rcp),
    ("rcp.rnd.f64",                         "9.7.3.13", build_rcp),
    ("sqrt.approx{.ftz}.f32",               "9.7.3.15", build_sqrt),
    ("sqrt.rnd{.ftz}.f32",                  "9.7.3.15", build_sqrt),
    ("sqrt.rnd.f64",                        "9.7.3.15", build_sqrt),
    ("rsqrt.approx{.ftz}.f32",              "9.7.3.16", build_rsqrt),
    ("sin.approx{.ftz}.f32",                "9.7.3.18", build_sin),
    ("cos.approx{.ftz}.f32",                "9.7.3.19", build_cos),
    ("lg2.approx{.ftz}.f32",                "9.7.3.20", build_lg2),
    ("ex2.approx{.ftz}.f32",                "9.7.3.21", build_ex2),
    ("tanh.approx.f32",                     "9.7.3.22", build_tanh),
    ("add{.rn}{.ftz}{.sat}.half",           "9.7.4.1", build_addsubmul),
    ("add{.rn}.bhalf",                      "9.7.4.1", build_addsubmul),
    ("sub{.rn}{.ftz}{.sat}.half",           "9.7.4.2", build_addsubmul),
    ("sub{.rn}.bhalf",                      "9.7.4.2", build_addsubmul),
    ("mul{.rn}{.ftz}{.sat}.half",           "9.7.4.3", build_addsubmul),
    ("mul{.rn}.bhalf",                      "9.7.4.3", build_addsubmul),
    ("fma.rn{.ftz}{.sat}.half",             "9.7.4.4", build_fma),
    ("fma.rn{.ftz}.relu.half",              "9.7.4.4", build_fma),
    ("fma.rn{.relu}.bhalf",                 "9.7.4.4", build_fma),
    ("neg{.ftz}.half",                      "9.7.4.5", build_negabs),
    ("neg.bhalf",                           "9.7.4.5", build_negabs),
    ("abs{.ftz}.half",                      "9.7.4.6", build_negabs),
    ("abs.bhalf",                           "9.7.4.6", build_negabs),
    ("min{.ftz}{.NaN}.half",                "9.7.4.7", build_minmax),
    ("min{.NaN}.bhalf",                     "9.7.4.7", build_minmax),
    ("max{.ftz}{.NaN}.half",                "9.7.4.8", build_minmax),
    ("max{.NaN}.bhalf",                     "9.7.4.8", build_minmax),
    ("add{.rnd}{.sat}.f32.atype",           "9.7.5.1", build_mixed),
    ("sub{.rnd}{.sat}.f32.atype",           "9.7.5.2", build_mixed),
    ("fma.rnd{.sat}.f32.abtype",            "9.7.5.3", build_mixed),
])
