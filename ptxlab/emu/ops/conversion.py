"""cvt: conversions between integer and floating-point types, and the packed narrow-float forms
(PTX ISA 9.7.9.21 'Data Movement and Conversion Instructions: cvt').

Every float conversion is computed from bits by one vectorized rounding core (``_encode``): a value is decoded to
(sign, integer significand m ≥ 0 as uint64, exponent e) with value = m·2^e exactly, then rounded once into the target
format with the requested mode (.rn ties-to-even, .rna ties-away, .rz, .rm, .rp; integer modes .rni/.rzi/.rmi/.rpi
round at quantum 2^0).  No numpy casting is involved, so directed modes, subnormals and double-rounding hazards are exact.

Choices where PTX leaves bits unspecified (all UNCONFIRMED until the H100 comparison of tests/kernels/cvt_*.cu):
- A NaN result is the canonical positive NaN of the format: all bits but the sign set (f32 0x7FFFFFFF, f16 0x7FFF,
  bf16 0x7FFF, f64 0x7FFFFFFFFFFFFFFF, e4m3/e5m2 0x7F, tf32 0x7FFFE000), except ``cvt.f32.bf16`` which is the
  exact bit widening (bits << 16; PTX: 'NaN input yields unspecified NaN'), payload kept.
- .relu: negative results and -0 become +0; NaN stays (canonical) NaN.
- .sat (float destinations): clamp to [+0.0, 1.0]; NaN → +0.0; -0 → +0.
- ue8m0 from a negative finite input: converted from |x| (the sign cannot be represented).
Documented rules implemented as written: float→int saturates by default; NaN → 0, except f64 sources and 64-bit
destinations where NaN → 1 << (width-1); .satfinite: |x| > MAX_NORM (Inf included) → ±MAX_NORM, and NaN →
+MAX_NORM for the e2m1/e2m3/e3m2 formats that have no NaN; .ftz flushes f32 subnormal inputs and results.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import ir
from ..core.isa import Ctx, Unsupported, register
from ..core.types import BITS, DTYPE

_INTS = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64")
_U64 = np.uint64
_IRND = {"rni": "rn", "rzi": "rz", "rmi": "rm", "rpi": "rp"}
_FRND = ("rn", "rna", "rz", "rm", "rp")


@dataclass(frozen=True)
class Fmt:
    name: str
    ebits: int
    mbits: int
    bias: int
    kind: str            # 'ieee' (Inf/NaN), 'fn' (NaN = all ones, no Inf: e4m3), 'fin' (no Inf/NaN: e2m1/e2m3/e3m2)
    signed: bool = True

    @property
    def emin(self):
        return 1 - self.bias

    @property
    def maxcode(self):
        top = (1 << (self.ebits + self.mbits)) - 1
        if self.kind == "ieee":
            return top - (1 << self.mbits)          # exponent all-ones is Inf/NaN
        if self.kind == "fn":
            return top - 1                           # S.1111.111 is NaN
        return top

    @property
    def infcode(self):
        return ((1 << self.ebits) - 1) << self.mbits

    @property
    def nancode(self):
        return (1 << (self.ebits + self.mbits)) - 1  # canonical: every bit but the sign

    @property
    def signbit(self):
        return self.ebits + self.mbits


F16 = Fmt("f16", 5, 10, 15, "ieee")
BF16 = Fmt("bf16", 8, 7, 127, "ieee")
F32 = Fmt("f32", 8, 23, 127, "ieee")
F64 = Fmt("f64", 11, 52, 1023, "ieee")
TF32 = Fmt("tf32", 8, 10, 127, "ieee")
E4M3 = Fmt("e4m3", 4, 3, 7, "fn")
E5M2 = Fmt("e5m2", 5, 2, 15, "ieee")
E2M1 = Fmt("e2m1", 2, 1, 1, "fin")
E2M3 = Fmt("e2m3", 2, 3, 1, "fin")
E3M2 = Fmt("e3m2", 3, 2, 3, "fin")
FLOATS = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64}
NARROW = {"e4m3x2": E4M3, "e5m2x2": E5M2, "e2m1x2": E2M1, "e2m3x2": E2M3, "e3m2x2": E3M2}
_ALLTYPES = set(BITS) | set(NARROW) | {"ue8m0x2"}
_RS_DEST = ("f16x2", "bf16x2", "e4m3x4", "e5m2x4", "e2m3x4", "e3m2x4", "e2m1x4")


# ---------------------------------------------------------------------------------------------------------------
# bit helpers
# ---------------------------------------------------------------------------------------------------------------
def _msb64(m):
    """Most significant set bit of uint64 values (-1 for 0); exact (float64 frexp on 32-bit halves)."""
    hi = (m >> _U64(32)).astype(np.float64)
    lo = (m & _U64(0xFFFFFFFF)).astype(np.float64)
    eh = np.frexp(hi)[1].astype(np.int64)
    el = np.frexp(lo)[1].astype(np.int64)
    return np.where(eh > 0, eh + 31, el - 1)


def _shr(m, s):
    """m >> s for uint64 m and int64 s in [0, 64] (64 → 0)."""
    s = np.asarray(s)
    return np.where(s >= 64, _U64(0), m >> np.minimum(s, 63).astype(np.uint64))


def _lowmask(k):
    """(1 << k) - 1 as uint64 for int64 k in [0, 64]."""
    k = np.asarray(k)
    return np.where(k >= 64, _U64(0xFFFFFFFFFFFFFFFF),
                    (_U64(1) << np.clip(k, 0, 63).astype(np.uint64)) - _U64(1))


# ---------------------------------------------------------------------------------------------------------------
# decode: bits / integers → (neg, m, e, nan, inf) with value = (-1)^neg · m · 2^e
# ---------------------------------------------------------------------------------------------------------------
def _decode_float(bits, F: Fmt, ftz: bool = False):
    u = np.asarray(bits).astype(np.uint64)
    expf = ((u >> _U64(F.mbits)) & _U64((1 << F.ebits) - 1)).astype(np.int64)
    frac = u & _U64((1 << F.mbits) - 1)
    neg = ((u >> _U64(F.signbit)) & _U64(1)).astype(bool) if F.signed else np.zeros(u.shape, bool)
    allones = (1 << F.ebits) - 1
    if F.kind == "ieee":
        special = expf == allones
        nan = special & (frac != 0)
        inf = special & (frac == 0)
    elif F.kind == "fn":
        nan = (expf == allones) & (frac == (1 << F.mbits) - 1)
        inf = np.zeros(u.shape, bool)
    else:
        nan = inf = np.zeros(u.shape, bool)
    sub = expf == 0
    m = np.where(sub, frac, frac | _U64(1 << F.mbits))
    e = np.where(sub, F.emin - F.mbits, expf - F.bias - F.mbits)
    if ftz:
        m = np.where(sub, _U64(0), m)
    return neg, m, e, nan, inf


# ---------------------------------------------------------------------------------------------------------------
# NaN results of float -> float cvt.  Without an .f64 operand the H100 returns the canonical NaN (f32 0x7FFFFFFF,
# f16/bf16 0x7FFF: cvt.f32.f16, cvt.rn.bf16.f16, cvt.rni.f16.f16 on NaN inputs).  With an .f64 source or
# destination (F2F.F64 / FRND.F64 on the hardware) the NaN keeps its sign and its payload, MSB-aligned (truncated
# when narrowing, zero-extended when widening) and quieted: cvt.f64.f16 0xfe90 -> 0xfffa400000000000,
# cvt.f64.f32 0xffc00001 -> 0xfff8000020000000, cvt.rn.f32.f64 0xfff0000000000001 -> 0xffc00000,
# cvt.rn.f16.f64 / cvt.rp.bf16.f64 0x7ff8000000000000 -> 0x7e00 / 0x7fc0, cvt.rmi.f64.f64 keeps the quieted input.
# Measured: H100 80GB HBM3, driver 580.159.04, 2026-11-22, corpus seed 20261122 (cvt_ops, float_edge).  The
# narrowing direction was only seen with f64 payloads whose kept upper bits are zero (the truncation of non-zero
# upper payload bits is inferred from the widening direction, which the data show bit for bit).
# ---------------------------------------------------------------------------------------------------------------
def _nan_keep_payload(bits, S: Fmt, D: Fmt):
    """NaN source bits in format S -> quieted, sign- and payload-preserving NaN code in format D (uint64)."""
    u = np.asarray(bits).astype(np.uint64)
    frac = u & _U64((1 << S.mbits) - 1)
    if D.mbits >= S.mbits:
        pay = frac << _U64(D.mbits - S.mbits)
    else:
        pay = frac >> _U64(S.mbits - D.mbits)
    neg = (u >> _U64(S.signbit)) & _U64(1)
    return (neg << _U64(D.signbit)) | _U64(D.infcode) | _U64(1 << (D.mbits - 1)) | pay


def _is_nan_bits(bits, S: Fmt):
    u = np.asarray(bits).astype(np.uint64)
    return (((u >> _U64(S.mbits)) & _U64((1 << S.ebits) - 1)) == _U64((1 << S.ebits) - 1)) & \
        ((u & _U64((1 << S.mbits) - 1)) != _U64(0))


def _decode_int(x, ty):
    x = np.asarray(x)
    if ty.startswith("s"):
        neg = x < 0
        u = x.astype(np.int64).view(np.uint64) if x.ndim else np.asarray(x.astype(np.int64)).view(np.uint64)
        m = np.where(neg, _U64(0) - u, u)              # |INT64_MIN| = 2^63 fits in uint64
    else:
        neg = np.zeros(x.shape, bool)
        m = x.astype(np.uint64)
    z = np.zeros(x.shape, bool)
    return neg, m, np.zeros(x.shape, np.int64), z, z


# ---------------------------------------------------------------------------------------------------------------
# the rounding core
# ---------------------------------------------------------------------------------------------------------------
def _round_at(neg, m, e, q, mode, rand=None):
    """Round m·2^e to a multiple of 2^q: returns the integer n (uint64) with result n·2^q, and inexact flags.
    mode "rs" (stochastic, PTX ISA 9.7.9.21 .rs): ``rand = (R, nr)``, R an nr-bit random integer per element: the
    magnitude truncated to nr bits below the result's last place, plus R, truncated to the last place."""
    s = q - e                                       # bits to drop (<= 0: exact, shift left)
    if mode == "rs":
        R, nr = rand
        sh = s - nr                                 # keep nr bits below the last place
        t = np.where(sh >= 0, _shr(m, np.clip(sh, 0, 64)), m << np.clip(-sh, 0, 63).astype(np.uint64))
        return (t + np.asarray(R, dtype=np.uint64)) >> _U64(nr), np.zeros(np.shape(t), bool)
    n_exact = m << np.clip(-s, 0, 63).astype(np.uint64)
    far = s > 64                                    # every bit is below the round position
    sr = np.clip(s, 0, 64)
    n = np.where(s <= 0, n_exact, _shr(m, sr))
    rb = np.where((s >= 1) & ~far, _shr(m, np.clip(sr - 1, 0, 64)) & _U64(1), _U64(0)).astype(bool)
    sticky = np.where(far, m != 0, np.where(s >= 2, (m & _lowmask(np.clip(sr - 1, 0, 64))) != 0, False))
    inexact = rb | sticky
    if mode == "rn":
        up = rb & (sticky | (n & _U64(1)).astype(bool))
    elif mode == "rna":
        up = rb
    elif mode == "rz":
        up = np.zeros(n.shape, bool)
    elif mode == "rp":
        up = inexact & ~neg
    elif mode == "rm":
        up = inexact & neg
    else:
        raise Unsupported(f"rounding mode .{mode}")
    return n + up.astype(np.uint64), inexact


def _encode(neg, m, e, nan, inf, F: Fmt, mode: str, satfinite=False, relu=False, ftz=False, sat=False, rand=None):
    """Round (-1)^neg·m·2^e into format F; returns uint64 codes (sign included).  ``rand``: see _round_at."""
    zero = m == 0
    mm = np.where(zero, _U64(1), m)
    E = _msb64(mm) + e
    huge = E > F.bias + 1                           # beyond every finite value of F (keeps the code in uint64)
    Ec = np.minimum(E, F.bias + 1)
    ec = e - (E - Ec)
    q = np.maximum(Ec, F.emin) - F.mbits
    n, _ = _round_at(neg, mm, ec, q, mode, rand)
    code = ((q - (F.emin - F.mbits)).astype(np.uint64) << _U64(F.mbits)) + n
    maxc, infc = _U64(F.maxcode), _U64(F.infcode)
    code = np.where(zero, _U64(0), np.where(huge, maxc + _U64(1), code))
    over = code > maxc
    if F.kind == "ieee" and not satfinite:
        # IEEE overflow: to Inf unless the mode rounds toward zero for this sign
        if mode == "rz":
            to_max = np.ones(code.shape, bool)
        elif mode == "rp":
            to_max = neg
        elif mode == "rm":
            to_max = ~neg
        else:
            to_max = np.zeros(code.shape, bool)
        code = np.where(over, np.where(to_max, maxc, infc), code)
        code = np.where(inf, infc, code)
    else:
        code = np.where(over | inf, maxc, code)
    if ftz and F is F32:
        code = np.where(code < _U64(1 << F.mbits), _U64(0), code)      # subnormal results → signed zero
    code = code | (neg.astype(np.uint64) << _U64(F.signbit))
    if sat:   # .sat: clamp to [0, 1], NaN → +0 (PTX ISA 9.7.9.21 floating point notes)
        one = _U64((F.bias << F.mbits))
        code = np.where(neg | nan, _U64(0), np.minimum(code, one))
        nan = np.zeros(code.shape, bool)
    if relu:
        code = np.where(neg, _U64(0), code)
    if F.kind == "fin":
        code = np.where(nan, maxc, code)                                # no NaN: positive MAX_NORM
    else:
        code = np.where(nan, _U64(F.nancode), code)
    return code


def _encode_ue8m0(neg, m, e, nan, inf, mode, satfinite):
    """ue8m0 = 2^(code-127), 0xFF = NaN, no zero and no sign (PTX ISA 5.2.5.x); .rz/.rp only."""
    zero = m == 0
    mm = np.where(zero, _U64(1), m)
    p = _msb64(mm)
    E = p + e
    exact = (mm & _lowmask(p)) == 0                 # a power of two
    if mode == "rp":
        E = np.where(exact, E, E + 1)
    code = np.clip(E + 127, 0, 255)
    code = np.where(zero, 0, code)
    over = (code > 254) | inf
    code = np.where(over, 254 if satfinite else 255, code)
    return np.where(nan, 255, code).astype(np.uint64)


def _to_int(neg, m, e, nan, inf, dty, mode, ftz_src, f64_src):
    """Float → integer: round at 2^0, saturate to the destination range (the default), NaN rule of 9.7.9.21."""
    bits = BITS[dty]
    signed = dty.startswith("s")
    mm = np.where(m == 0, _U64(1), m)
    E = _msb64(mm) + e
    big = (E >= 64) | inf                           # certainly out of every destination range
    e_ok = np.where(big, 0, e)
    n, _ = _round_at(neg, np.where(big, _U64(0), m), e_ok, np.zeros_like(e_ok), mode)
    if signed:
        lim_pos = _U64((1 << (bits - 1)) - 1)
        lim_neg = _U64(1 << (bits - 1))
        mag = np.where(neg, np.minimum(n, lim_neg), np.minimum(n, lim_pos))
        mag = np.where(big, np.where(neg, lim_neg, lim_pos), mag)
        r = np.where(neg, _U64(0) - mag, mag)
    else:
        lim = _U64((1 << bits) - 1) if bits < 64 else _U64(0xFFFFFFFFFFFFFFFF)
        r = np.where(neg, _U64(0), np.where(big, lim, np.minimum(n, lim)))
    nanv = _U64(1 << (bits - 1)) if (f64_src or bits == 64) else _U64(0)
    r = np.where(nan, nanv, r)
    return r.astype(np.uint64).astype(np.dtype(f"u{bits // 8}")).view(DTYPE[dty])


# ---------------------------------------------------------------------------------------------------------------
# builders
# ---------------------------------------------------------------------------------------------------------------
def _int_range(ty):
    bits = BITS[ty]
    if ty.startswith("s"):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _build_int_int(ins, ctx, dty, aty):
    """Integer → integer: wrap (extend by the source signedness, keep the low destination bits); .sat clamps to the
    destination range."""
    sat = "sat" in ins.mods
    a = ctx.read(ins.args[1], aty)
    w = ctx.write(ins.args[0], dty)
    ddt = DTYPE[dty]
    if not sat:
        wide = np.int64 if aty.startswith("s") else np.uint64
        return lambda st, m: w(st, np.asarray(a(st)).astype(wide).astype(ddt), m)
    lo, hi = _int_range(dty)
    if aty.startswith("s"):
        lo64, hi64 = max(lo, -2**63), min(hi, 2**63 - 1)
        return lambda st, m: w(st, np.clip(np.asarray(a(st)).astype(np.int64), lo64, hi64).astype(ddt), m)
    return lambda st, m: w(st, np.minimum(np.asarray(a(st)).astype(np.uint64), np.uint64(hi)).astype(ddt), m)


def _source(ctx, op, aty, ftz):
    """fn(st) -> decoded tuple for a scalar int or float source."""
    if aty in FLOATS:
        F = FLOATS[aty]
        r = ctx.read(op, f"b{BITS[aty]}")
        flush = ftz and aty == "f32"
        return lambda st: _decode_float(r(st), F, flush)
    r = ctx.read(op, aty)
    return lambda st: _decode_int(r(st), aty)


def _bits_out(code, bits):
    return code.astype(np.dtype(f"u{bits // 8}"))


def _rounding(ins, irnd_ok: bool, default=None):
    irnd = [m for m in ins.mods if m in _IRND]
    frnd = [m for m in ins.mods if m in _FRND]
    if len(irnd) + len(frnd) > 1:
        raise Unsupported(f"{ins.name}: more than one rounding modifier (PTX ISA 9.7.9.21)")
    if irnd and not irnd_ok:
        raise Unsupported(f"{ins.name}: integer rounding is illegal here (PTX ISA 9.7.9.21 integer notes)")
    if irnd:
        return "i", _IRND[irnd[0]]
    if frnd:
        return "f", frnd[0]
    return None, default


def _build_scalar(ins, ctx, dty, aty):
    ftz = "ftz" in ins.mods
    sat = "sat" in ins.mods
    relu = "relu" in ins.mods
    satfinite = "satfinite" in ins.mods
    if ftz and "f32" not in (dty, aty):
        raise Unsupported(f"{ins.name}: .ftz needs an .f32 source or destination (PTX ISA 9.7.9.21)")
    src = _source(ctx, ins.args[1], aty, ftz)
    # float → int
    if dty in _INTS:
        kind, mode = _rounding(ins, True)
        if kind != "i":
            raise Unsupported(f"{ins.name}: float-to-int cvt needs .rni/.rzi/.rmi/.rpi (PTX ISA 9.7.9.21)")
        w = ctx.write(ins.args[0], dty)
        if aty in ("f32", "f64") and BITS[dty] <= 32 and not ftz:
            # fast path: float64 holds every f32/f64 integral part below 2^53 exactly; clip before the cast
            r = ctx.read(ins.args[1], aty)
            fn = {"rn": np.rint, "rz": np.trunc, "rm": np.floor, "rp": np.ceil}[mode]
            lo, hi = _int_range(dty)
            nanv = (1 << (BITS[dty] - 1)) if aty == "f64" else 0
            ddt = DTYPE[dty]

            def run_fast(st, m):
                x = np.asarray(r(st)).astype(np.float64)
                with np.errstate(invalid="ignore"):
                    v = np.clip(fn(x), lo, hi)
                    v = np.where(np.isnan(x), nanv, v)
                w(st, v.astype(np.int64).astype(ddt), m)
            return run_fast
        f64 = aty == "f64"
        return lambda st, m: w(st, _to_int(*src(st), dty, mode, ftz, f64), m)
    F = FLOATS[dty]
    bits = BITS[dty]
    w = ctx.write(ins.args[0], f"b{bits}")
    kind, mode = _rounding(ins, dty == aty)
    if kind == "i":      # float → same-size float rounded to an integral value (cvt.rni.f32.f32 ...)
        return _build_round_integral(ins, ctx, F, mode, ftz, sat, w)
    if aty in FLOATS and FLOATS[aty].mbits <= F.mbits and FLOATS[aty].ebits <= F.ebits and dty != aty:
        mode = mode or "rn"          # widening is exact: the mode (optional in PTX) cannot matter
        if dty == "f32" and aty == "bf16" and not (ftz or sat):
            r = ctx.read(ins.args[1], "b16")
            return lambda st, m: w(st, np.asarray(r(st)).astype(np.uint32) << np.uint32(16), m)
    elif dty == aty:
        mode = mode or "rn"          # cvt.f32.f32 (only .ftz/.sat make it do anything)
    elif mode is None:
        raise Unsupported(f"{ins.name}: a floating-point rounding modifier is required (PTX ISA 9.7.9.21)")
    fast = _fast_path(ins, ctx, dty, aty, mode, ftz or sat or relu or satfinite, w)
    if fast is not None:
        return fast
    if satfinite and dty not in ("f16", "bf16"):
        raise Unsupported(f"{ins.name}: .satfinite with a .{dty} destination (PTX ISA 9.7.9.21)")
    if relu and dty not in ("f16", "bf16"):
        raise Unsupported(f"{ins.name}: .relu with a .{dty} destination (PTX ISA 9.7.9.21)")
    if aty in FLOATS and "f64" in (dty, aty) and not (sat or relu or satfinite):
        S = FLOATS[aty]
        raw = ctx.read(ins.args[1], f"b{BITS[aty]}")

        def run_keep(st, m):
            u = raw(st)
            code = _encode(*_decode_float(u, S, ftz and aty == "f32"), F, mode, satfinite, relu, ftz, sat)
            code = np.where(_is_nan_bits(u, S), _nan_keep_payload(u, S, F), code)
            w(st, _bits_out(code, bits), m)
        return run_keep
    return lambda st, m: w(st, _bits_out(_encode(*src(st), F, mode, satfinite, relu, ftz, sat), bits), m)


def _fast_path(ins, ctx, dty, aty, mode, modifiers, w):
    """numpy casts that are exact for these pairs (checked bit for bit by tests/emu/ops/test_emu_cvt.py): f32→f16/bf16 and
    f64→f32 .rn (IEEE RNE casts, subnormals included), exact widenings, and 32-bit int → f32/f64 .rn."""
    if modifiers or mode not in (None, "rn"):
        return None
    pair = (dty, aty)
    if pair in (("f16", "f32"), ("bf16", "f32"), ("f32", "f64"), ("f32", "f16"), ("f64", "f32"), ("f64", "f16")):
        sdt = {"f32": np.float32, "f64": np.float64, "f16": np.float16}[aty]
        r = ctx.read(ins.args[1], f"b{BITS[aty]}")
        ddt = {"f16": np.float16, "bf16": DTYPE["bf16"], "f32": np.float32, "f64": np.float64}[dty]
        ut = np.dtype(f"u{BITS[dty] // 8}")
        nanc = ut.type(FLOATS[dty].nancode)

        keep = "f64" in pair

        def run(st, m):
            x = np.asarray(r(st)).view(sdt) if np.ndim(r(st)) else np.asarray(r(st)).astype(sdt)
            with np.errstate(over="ignore", invalid="ignore"):
                y = x.astype(ddt).view(ut)
            if keep:     # NaN keeps sign and payload through an .f64 cvt (H100, see _nan_keep_payload)
                nanv = _nan_keep_payload(np.atleast_1d(x).view(np.dtype(f"u{BITS[aty] // 8}")), FLOATS[aty],
                                         FLOATS[dty]).astype(ut).reshape(np.shape(x))
                w(st, np.where(np.isnan(x), nanv, y), m)
            else:
                w(st, np.where(np.isnan(x), nanc, y), m)
        return run
    if dty in ("f32", "f64") and aty in ("s32", "u32", "s16", "u16", "s8", "u8"):
        r = ctx.read(ins.args[1], aty)
        fdt = np.float32 if dty == "f32" else np.float64
        ut = np.dtype(f"u{BITS[dty] // 8}")
        # int32 → float32 casts are correctly rounded (RNE); → float64 is exact
        return lambda st, m: w(st, np.asarray(r(st)).astype(fdt).view(ut), m)
    return None


def _build_round_integral(ins, ctx, F, mode, ftz, sat, w):
    """Same-size float → float with integer rounding: the result is an integral value in the float format."""
    bits = F.ebits + F.mbits + 1
    r = ctx.read(ins.args[1], f"b{bits}")
    fn = {"rn": np.rint, "rz": np.trunc, "rm": np.floor, "rp": np.ceil}[mode]
    ut = np.dtype(f"u{bits // 8}")
    nanc = ut.type(F.nancode)

    def run(st, m):
        u = np.asarray(r(st)).astype(ut)
        if F is F64:
            x = u.view(np.float64)
        elif F is F32:
            x = u.view(np.float32)
        elif F is F16:
            x = u.view(np.float16).astype(np.float32)
        else:
            x = (u.astype(np.uint32) << np.uint32(16)).view(np.float32)
        if ftz and F is F32:
            x = np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), x), x)
        with np.errstate(invalid="ignore"):
            y = fn(x)                                # exact, keeps the sign of zero
        if sat:
            y = np.where(np.isnan(y), 0, np.clip(y, 0, 1)) + 0.0
            y = y.astype(x.dtype)
        if F is F16:
            out = y.astype(np.float16).view(ut)      # integral f16 values convert exactly
        elif F is BF16:
            out = (y.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(ut)
        else:
            out = np.asarray(y).view(ut)
        if F is F64:     # FRND.F64 returns the quieted NaN input (H100, see _nan_keep_payload)
            w(st, np.where(np.isnan(x), u | ut.type(1 << 51), out), m)
        else:
            w(st, np.where(np.isnan(x), nanc, out), m)
    return run


def _build_pack_from_f32(ins, ctx, dty):
    """cvt.{rn,rz,...}{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b and cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2,
    e2m1x2,e2m3x2,e3m2x2}.f32 d, a, b: a → the upper field, b → the lower field (PTX ISA 9.7.9.21 semantics)."""
    kind, mode = _rounding(ins, False)
    relu = "relu" in ins.mods
    satfinite = "satfinite" in ins.mods
    if mode is None:
        raise Unsupported(f"{ins.name}: a rounding modifier is mandatory (PTX ISA 9.7.9.21)")
    if dty in ("f16x2", "bf16x2"):
        F = F16 if dty == "f16x2" else BF16
        if mode not in ("rn", "rz"):
            raise Unsupported(f"{ins.name}: .{dty} from .f32 takes .rn/.rz (.rs is not emulated)")
        fw, wty = 16, "b32"
    else:
        F = NARROW[dty]
        if mode != "rn" or not satfinite:
            raise Unsupported(f"{ins.name}: .{dty} from .f32 is cvt.rn.satfinite (PTX ISA 9.7.9.21)")
        fw = 4 if dty == "e2m1x2" else 8
        wty = "b8" if dty == "e2m1x2" else "b16"
    ra = ctx.read(ins.args[1], "b32")
    rb = ctx.read(ins.args[2], "b32")
    w = ctx.write(ins.args[0], wty)
    ot = np.dtype(f"u{BITS[wty] // 8}")

    def run(st, m):
        ca = _encode(*_decode_float(ra(st), F32), F, mode, satfinite, relu)
        cb = _encode(*_decode_float(rb(st), F32), F, mode, satfinite, relu)
        w(st, ((ca << _U64(fw)) | cb).astype(ot), m)
    return run


def _build_narrow_from_half2(ins, ctx, dty, aty):
    """cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2,e2m1x2,e2m3x2,e3m2x2}.{f16x2,bf16x2} d, a: upper half → upper field."""
    kind, mode = _rounding(ins, False)
    if mode != "rn" or "satfinite" not in ins.mods:
        raise Unsupported(f"{ins.name}: is cvt.rn.satfinite (PTX ISA 9.7.9.21)")
    F = NARROW[dty]
    S = F16 if aty == "f16x2" else BF16
    relu = "relu" in ins.mods
    fw = 4 if dty == "e2m1x2" else 8
    wty = "b8" if dty == "e2m1x2" else "b16"
    r = ctx.read(ins.args[1], "b32")
    w = ctx.write(ins.args[0], wty)
    ot = np.dtype(f"u{BITS[wty] // 8}")

    def run(st, m):
        u = np.asarray(r(st)).astype(np.uint32)
        hi = _encode(*_decode_float(u >> np.uint32(16), S), F, "rn", True, relu)
        lo = _encode(*_decode_float(u & np.uint32(0xFFFF), S), F, "rn", True, relu)
        w(st, ((hi << _U64(fw)) | lo).astype(ot), m)
    return run


def _build_half2_from_narrow(ins, ctx, dty, aty):
    """cvt.rn{.relu}.{f16x2,bf16x2}.{e4m3x2,e5m2x2,e2m1x2,e2m3x2,e3m2x2} d, a: upper field → upper half (exact)."""
    kind, mode = _rounding(ins, False)
    if mode != "rn":
        raise Unsupported(f"{ins.name}: is cvt.rn (PTX ISA 9.7.9.21)")
    if any(x.startswith("scaled") for x in ins.mods):
        raise Unsupported(f"{ins.name}: .scaled::n2::ue8m0 is not emulated")
    S = NARROW[aty]
    D = F16 if dty == "f16x2" else BF16
    relu = "relu" in ins.mods
    satfinite = "satfinite" in ins.mods
    fw = 4 if aty == "e2m1x2" else 8
    r = ctx.read(ins.args[1], "b8" if aty == "e2m1x2" else "b16")
    w = ctx.write(ins.args[0], "b32")
    fmask = np.uint32((1 << fw) - 1)
    vmask = np.uint32((1 << (S.ebits + S.mbits + 1)) - 1)

    def run(st, m):
        u = np.asarray(r(st)).astype(np.uint32)
        hi = _encode(*_decode_float((u >> np.uint32(fw)) & fmask & vmask, S), D, "rn", satfinite, relu)
        lo = _encode(*_decode_float(u & fmask & vmask, S), D, "rn", satfinite, relu)
        w(st, ((hi << _U64(16)) | lo).astype(np.uint32), m)
    return run


def _build_ue8m0(ins, ctx, dty, aty):
    kind, mode = _rounding(ins, False)
    satfinite = "satfinite" in ins.mods
    if dty == "ue8m0x2":
        if mode not in ("rz", "rp"):
            raise Unsupported(f"{ins.name}: .ue8m0x2 takes .rz/.rp (PTX ISA 9.7.9.21)")
        w = ctx.write(ins.args[0], "b16")
        if aty == "f32":
            ra = ctx.read(ins.args[1], "b32")
            rb = ctx.read(ins.args[2], "b32")

            def run(st, m):
                ca = _encode_ue8m0(*_decode_float(ra(st), F32), mode, satfinite)
                cb = _encode_ue8m0(*_decode_float(rb(st), F32), mode, satfinite)
                w(st, ((ca << _U64(8)) | cb).astype(np.uint16), m)
            return run
        r = ctx.read(ins.args[1], "b32")

        def run(st, m):
            u = np.asarray(r(st)).astype(np.uint32)
            ca = _encode_ue8m0(*_decode_float(u >> np.uint32(16), BF16), mode, satfinite)
            cb = _encode_ue8m0(*_decode_float(u & np.uint32(0xFFFF), BF16), mode, satfinite)
            w(st, ((ca << _U64(8)) | cb).astype(np.uint16), m)
        return run
    # cvt.rn.bf16x2.ue8m0x2: byte e → bf16 2^(e-127) (e=0 is the bf16 subnormal 0x0040), 0xFF → NaN
    r = ctx.read(ins.args[1], "b16")
    w = ctx.write(ins.args[0], "b32")

    def one(e):
        return np.where(e == 255, np.uint32(0x7FFF), np.where(e == 0, np.uint32(0x0040), e << np.uint32(7)))

    def run(st, m):
        u = np.asarray(r(st)).astype(np.uint32)
        w(st, (one(u >> np.uint32(8)) << np.uint32(16)) | one(u & np.uint32(0xFF)), m)
    return run


def _build_tf32(ins, ctx):
    """cvt.rna{.satfinite}.tf32.f32 / cvt.{rn,rz}{.satfinite}{.relu}.tf32.f32: an f32 bit pattern whose 13 low
    mantissa bits are zero."""
    kind, mode = _rounding(ins, False)
    if mode not in ("rna", "rn", "rz"):
        raise Unsupported(f"{ins.name}: .tf32 takes .rna/.rn/.rz (PTX ISA 9.7.9.21)")
    satfinite = "satfinite" in ins.mods
    relu = "relu" in ins.mods
    r = ctx.read(ins.args[1], "b32")
    w = ctx.write(ins.args[0], "b32")

    def run(st, m):
        c = _encode(*_decode_float(r(st), F32), TF32, mode, satfinite, relu)
        w(st, (c << _U64(13)).astype(np.uint32), m)
    return run


# .rs (stochastic rounding, sm_100a): the random bits of each source operand inside rbits (PTX ISA 9.7.9.21 text:
# f16x2 13 LSBs of each 16-bit half, a <- upper half; bf16x2 the halves; e4m3x4/e5m2x4/e2m3x4/e3m2x4 upper half for
# a, b and lower half for e, f, one byte each in operand order; e2m1x4 the upper bytes of both halves for a, b and
# the lower bytes for e, f).  The byte order inside a half is the ISA's figures', which are images: the order used
# here (a in the higher byte) is UNCONFIRMED (ptx_docs/isa_coverage_notes.md).
_RS_BITS = {"f16x2": (13, ((16, 0x1FFF), (0, 0x1FFF))), "bf16x2": (16, ((16, 0xFFFF), (0, 0xFFFF))),
            "x4": (8, ((24, 0xFF), (16, 0xFF), (8, 0xFF), (0, 0xFF))),
            "e2m1x4": (8, ((24, 0xFF), (8, 0xFF), (16, 0xFF), (0, 0xFF)))}
_X4 = {"e4m3x4": (E4M3, 8), "e5m2x4": (E5M2, 8), "e2m3x4": (E2M3, 8), "e3m2x4": (E3M2, 8), "e2m1x4": (E2M1, 4)}


def _build_rs(ins, ctx, dty):
    """cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b, rbits and cvt.rs{.relu}.satfinite.<f8/f6/f4>x4.f32
    d, {a, b, e, f}, rbits (PTX ISA 9.7.9.21, sm_100a): stochastic rounding with the operands' random bits."""
    relu = ins.fields["relu"] == "relu"
    satfinite = ins.fields["satfinite"] == "satfinite"
    if dty in ("f16x2", "bf16x2"):
        F, fw, wty, srcs = (F16 if dty == "f16x2" else BF16), 16, "b32", ins.args[1:3]
        nr, lay = _RS_BITS[dty]
    else:
        F, fw = _X4[dty]
        wty = "b16" if dty == "e2m1x4" else "b32"
        srcs = ins.args[1].items if isinstance(ins.args[1], ir.Vec) else ()
        if len(srcs) != 4:
            raise Unsupported(f"{ins.name}: expected a {{a, b, e, f}} source vector ({ins.where()})")
        nr, lay = _RS_BITS["e2m1x4" if dty == "e2m1x4" else "x4"]
    rds = [ctx.read(x, "b32") for x in srcs]
    rr = ctx.read(ins.args[-1], "b32")
    w = ctx.write(ins.args[0], wty)
    ot = np.dtype(f"u{BITS[wty] // 8}")
    k = len(rds)

    def run(st, m):
        rb = np.asarray(rr(st)).astype(np.uint64)
        code = _U64(0)
        for i, (rd, (sh, mk)) in enumerate(zip(rds, lay)):
            R = (rb >> _U64(sh)) & _U64(mk)
            c = _encode(*_decode_float(rd(st), F32), F, "rs", satfinite, relu, rand=(R, nr))
            code = code | (c << _U64(fw * (k - 1 - i)))
        w(st, np.asarray(code).astype(ot), m)
    return run


def _cvt_types(ins):
    tys = [m for m in ins.mods if m in _ALLTYPES]
    if len(tys) != 2:
        raise Unsupported(f"{ins.name}: cvt needs .dtype.atype (PTX ISA 9.7.9.21)")
    return tys


def build_cvt(ins: ir.Instr, ctx: Ctx):
    if "rs" in ins.mods:
        return _build_rs(ins, ctx, next(t for t in ins.mods if t in _RS_DEST))
    dty, aty = _cvt_types(ins)
    if dty in _INTS and aty in _INTS:
        if any(r in ins.mods for r in _FRND + tuple(_IRND)):
            raise Unsupported(f"{ins.name}: rounding modifiers are illegal for int-to-int cvt (PTX ISA 9.7.9.21)")
        return _build_int_int(ins, ctx, dty, aty)
    if (dty in FLOATS or dty in _INTS) and (aty in FLOATS or aty in _INTS):
        return _build_scalar(ins, ctx, dty, aty)
    if dty in ("f16x2", "bf16x2", *NARROW) and aty == "f32":
        return _build_pack_from_f32(ins, ctx, dty)
    if dty in NARROW and aty in ("f16x2", "bf16x2"):
        return _build_narrow_from_half2(ins, ctx, dty, aty)
    if dty in ("f16x2", "bf16x2") and aty in NARROW:
        return _build_half2_from_narrow(ins, ctx, dty, aty)
    if dty == "ue8m0x2" or aty == "ue8m0x2":
        if (dty, aty) not in (("ue8m0x2", "f32"), ("ue8m0x2", "bf16x2"), ("bf16x2", "ue8m0x2")):
            raise Unsupported(f"{ins.name}: unsupported ue8m0x2 conversion (PTX ISA 9.7.9.21)")
        return _build_ue8m0(ins, ctx, dty, aty)
    if dty == "tf32" and aty == "f32":
        return _build_tf32(ins, ctx)
    raise Unsupported(f"{ins.name}: cvt .{dty}.{aty} is not a supported conversion (PTX ISA 9.7.9.21)")


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA 9.7.9.21 notation, core/forms.py); anything else is refused
# ---------------------------------------------------------------------------------------------------------------
SETS = {"ityp": ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"), "irnd": tuple(_IRND),
        "frnd": ("rn", "rz", "rm", "rp"), "frnd2": ("rn", "rz"), "frnd3": ("rz", "rp"), "hf": ("f16", "bf16"),
        "nf32": ("f16", "bf16", "f64"), "f8x2type": ("e4m3x2", "e5m2x2"),
        "f6f4x2type": ("e2m1x2", "e2m3x2", "e3m2x2"), "narrow2": tuple(NARROW), "half2": ("f16x2", "bf16x2"),
        "hfx2": ("f16x2", "bf16x2"),
        # integer -> integer .sat: the pairs whose destination cannot hold every source value (ptxas refuses others)
        "satii": ("u8.u16", "u8.u32", "u8.u64", "u8.s8", "u8.s16", "u8.s32", "u8.s64", "u16.u32", "u16.u64", "u16.s8", "u16.s16", "u16.s32", "u16.s64", "u32.u64", "u32.s8", "u32.s16", "u32.s32", "u32.s64", "u64.s8", "u64.s16", "u64.s32", "u64.s64", "s8.u8", "s8.u16", "s8.u32", "s8.u64", "s8.s16", "s8.s32", "s8.s64", "s16.u16", "s16.u32", "s16.u64", "s16.s32", "s16.s64", "s32.u32", "s32.u64", "s32.s64", "s64.u64"), "x4type": ("e4m3x4", "e5m2x4", "e2m3x4", "e3m2x4", "e2m1x4")}
FORMS = register(SETS, [
    # form                                              PTX ISA     builder
    ("cvt.ityp.ityp",                                   "9.7.9.21", build_cvt),   # integer -> integer
    ("cvt.sat.satii",                                   "9.7.9.21", build_cvt),
    ("cvt.irnd{.ftz}{.sat}.ityp.f32",                   "9.7.9.21", build_cvt),   # float -> integer
    ("cvt.irnd{.sat}.ityp.nf32",                        "9.7.9.21", build_cvt),
    ("cvt.frnd{.ftz}{.sat}.f32.ityp",                   "9.7.9.21", build_cvt),   # integer -> float
    ("cvt.frnd{.sat}.nf32.ityp",                        "9.7.9.21", build_cvt),
    ("cvt.frnd{.sat}.hf.f32",                     "9.7.9.21", build_cvt),   # narrowing float -> float
    ("cvt.frnd{.ftz}.f32.f64",                    "9.7.9.21", build_cvt),
    ("cvt(.rn|.rp).hf.f64",                           "9.7.9.21", build_cvt),
    ("cvt.rz.f16.bf16",                         "9.7.9.21", build_cvt),
    ("cvt.rn.bf16.f16",                         "9.7.9.21", build_cvt),
    ("cvt{.ftz}{.sat}.f32.hf",                          "9.7.9.21", build_cvt),   # widening (exact)
    ("cvt{.ftz}{.sat}.f64.f32",                         "9.7.9.21", build_cvt),
    ("cvt{.sat}.f64.hf",                                "9.7.9.21", build_cvt),
    ("cvt{.ftz}{.sat}.f32.f32",                  "9.7.9.21", build_cvt),   # same type
    ("cvt.irnd{.ftz}.f32.f32",                    "9.7.9.21", build_cvt),   # round to integral
    ("cvt{.frnd}{.sat}.f16.f16",                        "9.7.9.21", build_cvt),
    ("cvt{.frnd}{.sat}.bf16.bf16",                      "9.7.9.21", build_cvt),
    ("cvt{.frnd}{.sat}.f64.f64",                        "9.7.9.21", build_cvt),
    ("cvt.rni.f16.f16",                          "9.7.9.21", build_cvt),
    ("cvt.rpi.bf16.bf16",                        "9.7.9.21", build_cvt),
    ("cvt.rmi.f64.f64",                          "9.7.9.21", build_cvt),
    ("cvt.frnd2{.relu}{.satfinite}.hf.f32",             "9.7.9.21", build_cvt),
    ("cvt.frnd2{.relu}{.satfinite}.hfx2.f32",           "9.7.9.21", build_cvt),
    ("cvt.rna{.satfinite}.tf32.f32",                    "9.7.9.21", build_cvt),
    ("cvt.frnd2.satfinite.tf32.f32",           "9.7.9.21", build_cvt),
    ("cvt.rn.satfinite{.relu}.f8x2type.f32",            "9.7.9.21", build_cvt),
    ("cvt.rn.satfinite{.relu}.f6f4x2type.f32",          "9.7.9.21", build_cvt),
    ("cvt.rn.satfinite{.relu}(.e4m3x2|.e5m2x2).f16x2",           "9.7.9.21", build_cvt),
    ("cvt.rn{.relu}.f16x2.narrow2",                     "9.7.9.21", build_cvt),
    ("cvt.rs{.relu}{.satfinite}.hfx2.f32",              "9.7.9.21", build_cvt),   # stochastic rounding
    ("cvt.rs{.relu}.satfinite.x4type.f32",              "9.7.9.21", build_cvt),
    ("cvt.frnd3{.satfinite}.ue8m0x2.f32",             "9.7.9.21", build_cvt),
    ("cvt.rn.bf16x2.ue8m0x2",                           "9.7.9.21", build_cvt),
])
