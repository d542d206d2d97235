"""Emulator cvt (PTX ISA 9.7.9.21) vs independent references, bit for bit.

References: narrow destinations (f16, bf16, e4m3, e5m2, e2m1, e2m3, e3m2, tf32-by-truncation) round against a sorted
table of every finite value of the format (values decoded by numpy/ml_dtypes), with exact Python float/int comparisons;
f32 destinations pick among numpy's RNE result and its nextafter neighbours; float→int uses Python Fractions.
Unspecified-by-PTX bits (NaN payloads, -0 under .relu/.sat) follow the emulator's documented choices (ops/conversion.py
docstring); the NaN results of float->float cvt follow the H100 run (nan_keep below).
"""
from __future__ import annotations

import bisect
import math
import re
import struct
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ptxlab

KDIR = Path(__file__).resolve().parents[2] / "kernels"
INF = math.inf


def op_names(fname: str) -> list:
    text = "\n".join(line for line in (KDIR / fname).read_text().splitlines() if not line.lstrip().startswith("#"))
    return re.findall(r"\bR(?:8|16|32|64)\((\w+),", text)


def f32v(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def f64v(u):
    return struct.unpack("<d", struct.pack("<Q", u))[0]


def f32bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f64bits(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def f16v(u):
    return float(np.array(u, np.uint16).view(np.float16))


def bf16v(u):
    return f32v((u & 0xFFFF) << 16)


def is_neg(x):
    return x < 0 or (x == 0 and math.copysign(1.0, x) < 0)


class Table:
    """Every finite non-negative value of a small float format, with its code (sign bit separate)."""

    def __init__(self, nbits, decode, signbit, nan, inf, maxcode, unsigned=False):
        vals = {}
        for c in range(1 << (nbits - (0 if unsigned else 1))):
            v = decode(c)
            if math.isfinite(v):
                vals.setdefault(v, c)
        self.vals = sorted(vals)
        self.codes = [vals[v] for v in self.vals]
        self.signbit, self.nan, self.inf, self.maxcode = signbit, nan, inf, maxcode

    def round(self, x, mode, satfinite=False, relu=False, sat=False):
        """Code of x (Python float or int) rounded into the format."""
        if isinstance(x, float) and math.isnan(x):
            if sat:
                return 0
            return self.nan if self.nan is not None else self.maxcode
        neg = is_neg(x)
        a = -x if x < 0 else x
        vals, codes = self.vals, self.codes
        if a == INF:
            code = self.maxcode if (satfinite or self.inf is None) else self.inf
        else:
            i = bisect.bisect_right(vals, a) - 1
            lo = vals[i]
            if a == lo:
                code = codes[i]
            else:
                if i == len(vals) - 1:           # beyond MAX_NORM: the next value would be 2^(emax+1) (Inf code)
                    hi = lo + (lo - vals[i - 1])
                    hicode = None
                else:
                    hi, hicode = vals[i + 1], codes[i + 1]
                mid = (lo + hi) / 2
                away = {"rn": a > mid or (a == mid and (codes[i] & 1) == 1),
                        "rna": a >= mid, "rz": False, "rp": not neg, "rm": neg}[mode]
                if not away:
                    code = codes[i]
                elif hicode is not None:
                    code = hicode
                else:
                    code = self.maxcode if (satfinite or self.inf is None) else self.inf
        if sat:
            if neg:
                return 0
            one = codes[vals.index(1.0)]
            return min(code, one)
        if relu and neg:
            return 0
        return code | (self.signbit if neg else 0)


def _mk(dt, nbits, signbit, nan, inf, maxcode):
    st = np.uint16 if nbits > 8 else np.uint8
    return Table(nbits, lambda c: float(np.array(c, st).view(dt)), signbit, nan, inf, maxcode)


T_F16 = _mk(np.float16, 16, 0x8000, 0x7FFF, 0x7C00, 0x7BFF)
T_BF16 = Table(16, bf16v, 0x8000, 0x7FFF, 0x7F80, 0x7F7F)
T_E4M3 = _mk(ml_dtypes.float8_e4m3fn, 8, 0x80, 0x7F, None, 0x7E)
T_E5M2 = _mk(ml_dtypes.float8_e5m2, 8, 0x80, 0x7F, 0x7C, 0x7B)
T_E2M1 = Table(4, lambda c: float(np.array(c, np.uint8).view(ml_dtypes.float4_e2m1fn)), 0x8, None, None, 0x7)
T_E2M3 = Table(6, lambda c: float(np.array(c, np.uint8).view(ml_dtypes.float6_e2m3fn)), 0x20, None, None, 0x1F)
T_E3M2 = Table(6, lambda c: float(np.array(c, np.uint8).view(ml_dtypes.float6_e3m2fn)), 0x20, None, None, 0x1F)
FLT_MAX = float(np.finfo(np.float32).max)
TINY32 = float(np.finfo(np.float32).tiny)


def to_f32(x, mode):
    """Bits of x (Python float or int) rounded to f32 with the mode; NaN → 0x7FFFFFFF."""
    if isinstance(x, float) and math.isnan(x):
        return 0x7FFFFFFF
    with np.errstate(over="ignore"):
        r = float(np.float32(x))
    if r == x:
        return f32bits(r)
    c = [float(np.nextafter(np.float32(r), np.float32(-INF))), r, float(np.nextafter(np.float32(r), np.float32(INF)))]
    if mode == "rn":
        out = r
    else:
        down = max(v for v in c if v <= x)
        up = min(v for v in c if v >= x)
        if mode == "rz":
            out = down if x > 0 else up
        else:
            out = down if mode == "rm" else up
        if abs(out) == INF and mode in ("rz", "rm", "rp") and abs(x) != INF:
            if (mode == "rz") or (mode == "rm" and x > 0) or (mode == "rp" and x < 0):
                out = math.copysign(FLT_MAX, x)
    return f32bits(out)


def to_f64(x, mode):
    """Bits of an integer x rounded to f64 with the mode."""
    r = float(x)          # Python int → float is correctly rounded (RNE)
    if r == x or mode == "rn":
        return f64bits(r)
    down = r if r < x else math.nextafter(r, -INF)
    up = r if r > x else math.nextafter(r, INF)
    out = {"rz": down if x > 0 else up, "rm": down, "rp": up}[mode]
    return f64bits(out)


def to_int(x, mode, bits, signed, f64src, ftz=False):
    if isinstance(x, float) and math.isnan(x):
        return (1 << (bits - 1)) if (f64src or bits == 64) else 0
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if x in (INF, -INF):
        v = hi if x > 0 else lo
    else:
        if ftz and abs(x) < TINY32:
            x = 0.0
        fr = Fraction(x)
        v = {"rni": round(fr), "rzi": math.trunc(fr), "rmi": math.floor(fr), "rpi": math.ceil(fr)}[mode]
        v = max(lo, min(hi, v))
    return v & ((1 << bits) - 1)


def integral(x, mode, fmt_bits, ftz=False):
    """cvt.rXi.fN.fN: an integral value in the same format; returns the Python float."""
    if ftz and abs(x) < TINY32:
        x = math.copysign(0.0, x)
    if math.isinf(x) or math.isnan(x) or x == 0:
        return x
    fr = Fraction(x)
    v = {"rni": round(fr), "rzi": math.trunc(fr), "rmi": math.floor(fr), "rpi": math.ceil(fr)}[mode]
    return math.copysign(float(v), x)


def s64(u):
    return u - (1 << 64) if u >> 63 else u


def s32(u):
    return u - (1 << 32) if u >> 31 else u


def canon32(v):
    return 0x7FFFFFFF if math.isnan(v) else f32bits(v)


def canon64(v):
    return 0x7FFFFFFFFFFFFFFF if math.isnan(v) else f64bits(v)


# NaN through a cvt with an .f64 source or destination keeps sign and payload (MSB-aligned: truncated when narrowing,
# zero-extended when widening) and is quieted; other float cvts give the canonical NaN.  H100 80GB HBM3, driver
# 580.159.04, 2026-11-22, corpus seed 20261122: cvt.f64.f16 0xfe90 -> 0xfffa400000000000, cvt.f64.f32
# 0xffc00001 -> 0xfff8000020000000, cvt.rn.f32.f64 0xfff0000000000001 -> 0xffc00000, cvt.rn.f16.f64 0x7ff8.. -> 0x7e00,
# cvt.rp.bf16.f64 0x7ff8.. -> 0x7fc0, cvt.rmi.f64.f64 NaN -> the quieted input.
_FMT_ME = {"f16": (10, 5), "bf16": (7, 8), "f32": (23, 8), "f64": (52, 11)}


def nan_keep(bits, src, dst):
    sm, se = _FMT_ME[src]
    dm, de = _FMT_ME[dst]
    frac = bits & ((1 << sm) - 1)
    pay = frac << (dm - sm) if dm >= sm else frac >> (sm - dm)
    sign = (bits >> (sm + se)) & 1
    return (sign << (dm + de)) | (((1 << de) - 1) << dm) | (1 << (dm - 1)) | pay


def ftz32(bits):
    return bits & 0x80000000 if (bits & 0x7F800000) == 0 else bits


def half_in(h, bf):
    return bf16v(h) if bf else f16v(h)


def narrow_to_f16(code, T, bits):
    """Value of a narrow code widened exactly to f16 (NaN → 0x7FFF)."""
    v = float(np.array(code, np.uint8).view(T))
    return T_F16.round(v, "rn") if not math.isnan(v) else 0x7FFF


def REF(name, x, y, d, l, h):
    fx, fy, fd = f32v(x), f32v(y), f64v(d)
    fh, bh = f16v(h), bf16v(h)
    sl = s64(l)
    m = re.match(r"(s|u)(\d+)_(f32|f64|f16|bf16)_(r[nzmp]i)(_ftz)?$", name)
    if m:
        src = {"f32": fx, "f64": fd, "f16": fh, "bf16": bh}[m.group(3)]
        return to_int(src, m.group(4), int(m.group(2)), m.group(1) == "s", m.group(3) == "f64", bool(m.group(5)))
    m = re.match(r"(f32|f64|f16|bf16)_(s|u)(32|64)_(r[nzmp])$", name)
    if m:
        iv = (sl if m.group(3) == "64" else s32(x)) if m.group(2) == "s" else (l if m.group(3) == "64" else x)
        dst, mode = m.group(1), m.group(4)
        if dst == "f32":
            return to_f32(iv, mode)
        if dst == "f64":
            return to_f64(iv, mode)
        return (T_F16 if dst == "f16" else T_BF16).round(iv, mode)
    m = re.match(r"(f16|bf16)_(f32|f64)_(r[nzmp])(_relu)?(_satfinite)?(_sat)?$", name)
    if m:
        src = fx if m.group(2) == "f32" else fd
        if m.group(2) == "f64" and m.group(1) == "bf16":
            pass
        T = T_F16 if m.group(1) == "f16" else T_BF16
        if m.group(2) == "f64" and math.isnan(fd) and not any(m.group(k) for k in (4, 5, 6)):
            return nan_keep(d, "f64", m.group(1))
        return T.round(src, m.group(3), satfinite=bool(m.group(5)), relu=bool(m.group(4)), sat=bool(m.group(6)))
    m = re.match(r"f32_f64_(r[nzmp])(_ftz)?$", name)
    if m:
        if math.isnan(fd):
            return nan_keep(d, "f64", "f32")
        r = to_f32(fd, m.group(1))
        return ftz32(r) if m.group(2) else r
    m = re.match(r"f32_f32_(r[nzmp]i)(_ftz)?$", name)
    if m:
        return canon32(integral(fx, m.group(1), 32, bool(m.group(2))))
    simple = {
        "f64_s32": lambda: f64bits(float(s32(x))),
        "bf16_f16_rn": lambda: T_BF16.round(fh, "rn"),
        "f16_bf16_rz": lambda: T_F16.round(bh, "rz"),
        "f32_f16": lambda: canon32(fh),
        "f32_bf16": lambda: (h & 0xFFFF) << 16,
        "f64_f32": lambda: nan_keep(x, "f32", "f64") if math.isnan(fx) else f64bits(fx),
        "f64_f16": lambda: nan_keep(h & 0xFFFF, "f16", "f64") if math.isnan(fh) else f64bits(fh),
        "f32_f32_ftz": lambda: 0x7FFFFFFF if math.isnan(fx) else ftz32(x),
        "f32_f32_sat": lambda: 0 if (math.isnan(fx) or is_neg(fx)) else f32bits(min(fx, 1.0)),
        "f64_f64_rmi": lambda: d | (1 << 51) if math.isnan(fd) else f64bits(integral(fd, "rmi", 64)),
        "f16_f16_rni": lambda: 0x7FFF if math.isnan(fh) else T_F16.round(integral(fh, "rni", 16), "rn"),
        "bf16_bf16_rpi": lambda: 0x7FFF if math.isnan(bh) else T_BF16.round(integral(bh, "rpi", 16), "rn"),
        "f16x2_f32_rn": lambda: T_F16.round(fx, "rn") << 16 | T_F16.round(fy, "rn"),
        "f16x2_f32_rz_relu": lambda: T_F16.round(fx, "rz", relu=True) << 16 | T_F16.round(fy, "rz", relu=True),
        "bf16x2_f32_rn": lambda: T_BF16.round(fx, "rn") << 16 | T_BF16.round(fy, "rn"),
        "bf16x2_f32_rz_satfinite": lambda: T_BF16.round(fx, "rz", True) << 16 | T_BF16.round(fy, "rz", True),
        "e4m3x2_f32": lambda: T_E4M3.round(fx, "rn", True) << 8 | T_E4M3.round(fy, "rn", True),
        "e5m2x2_f32": lambda: T_E5M2.round(fx, "rn", True) << 8 | T_E5M2.round(fy, "rn", True),
        "e4m3x2_f32_relu": lambda: T_E4M3.round(fx, "rn", True, True) << 8 | T_E4M3.round(fy, "rn", True, True),
        "e4m3x2_f16x2": lambda: T_E4M3.round(f16v(x >> 16), "rn", True) << 8 | T_E4M3.round(f16v(x & 0xFFFF), "rn", True),
        "e5m2x2_f16x2_relu": lambda: (T_E5M2.round(f16v(x >> 16), "rn", True, True) << 8
                                      | T_E5M2.round(f16v(x & 0xFFFF), "rn", True, True)),
        "f16x2_e4m3x2": lambda: (narrow_to_f16(h >> 8, ml_dtypes.float8_e4m3fn, 8) << 16
                                 | narrow_to_f16(h & 0xFF, ml_dtypes.float8_e4m3fn, 8)),
        "f16x2_e5m2x2": lambda: (narrow_to_f16(h >> 8, ml_dtypes.float8_e5m2, 8) << 16
                                 | narrow_to_f16(h & 0xFF, ml_dtypes.float8_e5m2, 8)),
        "f16x2_e4m3x2_relu": lambda: (relu16(narrow_to_f16(h >> 8, ml_dtypes.float8_e4m3fn, 8)) << 16
                                      | relu16(narrow_to_f16(h & 0xFF, ml_dtypes.float8_e4m3fn, 8))),
        "tf32_f32_rna": lambda: tf32(fx, "rna", False),
        "tf32_f32_rna_satfinite": lambda: tf32(fx, "rna", True),
    }
    return simple[name]()


def relu16(c):
    return 0 if (c & 0x8000 and c != 0x7FFF) else c


# tf32 = f32 with 10 mantissa bits: table over the exponent range via a scaled f16-like construction is too big, so
# round explicitly with Fractions (8-bit exponent, 10-bit mantissa, subnormals at 2^-126 * m/1024).
def tf32(x, mode, satfinite):
    if math.isnan(x):
        return 0x7FFFE000
    neg = is_neg(x)
    a = abs(x)
    maxv = (2 - 2**-10) * 2.0**127
    if a == INF:
        v = maxv if satfinite else INF
    else:
        e = max(math.frexp(a)[1] - 1, -126) if a else -126
        q = Fraction(2) ** (e - 10)
        n = Fraction(a) / q
        fl = math.floor(n)
        rem = n - fl
        if mode == "rna":
            fl += 1 if rem >= Fraction(1, 2) else 0
        elif mode == "rn":
            fl += 1 if (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2)) else 0
        v = float(fl * q) if fl * q <= Fraction(maxv) else (maxv if (satfinite or mode == "rz") else INF)
    return f32bits(-v if neg else v)


def mixed_f32(rng, n):
    """f32 bit patterns: random bits, moderate values, ties of f16/bf16/e4m3/e2m1 and ints, edges."""
    k = rng.integers(0, 8, n)
    rnd = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    mod = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 6, n)).astype(np.float32).view(np.uint32)
    tabs = [T_F16, T_BF16, T_E4M3, T_E5M2, T_E2M1, T_E2M3, T_E3M2]
    ties = np.empty(n, np.float32)
    for j in range(n):
        T = tabs[j % len(tabs)]
        i = int(rng.integers(0, len(T.vals) - 1))
        t = np.float32((T.vals[i] + T.vals[i + 1]) / 2)
        t = [t, np.nextafter(t, np.float32(INF)), np.nextafter(t, np.float32(-INF)), np.float32(T.vals[i])][j % 4]
        ties[j] = -t if rng.integers(0, 2) else t
    ints = (rng.integers(-2**33, 2**33, n).astype(np.float64) / 2.0 ** rng.integers(0, 3, n)).astype(np.float32)
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 65504.0, 65520.0,
                     65519.99, 448.0, 464.0, 57344.0, 61440.0, 6.0, 7.0, 2**31, -2**31, 2**32, 2**32 - 256, 2**63,
                     -2**63, 2**64, 3.4e38, 1e-40, -1e-40, 1e-45, 1.17549435e-38, 6e-8, 3e-8, 2.0**-127],
                    dtype=np.float32).view(np.uint32)
    edges = edge[rng.integers(0, len(edge), n)]
    out = np.select([k < 2, k < 4, k < 6, k < 7], [rnd, mod, ties.view(np.uint32), ints.view(np.uint32)], edges)
    return out.astype(np.uint32)


def mixed_f64(rng, n):
    k = rng.integers(0, 6, n)
    rnd = rng.integers(0, 2**64, n, dtype=np.uint64)
    with np.errstate(invalid="ignore"):
        f = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32).astype(np.float64)
    nxt = np.nextafter(f.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    tie = (f + nxt) / 2                                              # exact midpoints between adjacent f32 values
    tie = np.where(rng.integers(0, 3, n) == 0, np.nextafter(tie, np.inf), tie)
    ints = rng.integers(-2**62, 2**62, n).astype(np.float64) / 2.0 ** rng.integers(0, 40, n)
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, 2.5, -3.5, 2.0**31 - 0.5, -2.0**31 - 0.5, 2.0**32,
                     2.0**63, -2.0**63, 2.0**64, 1e300, -1e300, 1e-310, 3.4028235677973366e38, 3.4028235e38 * 1.0000001,
                     1.401298464324817e-45, 7.006492321624085e-46, 7.1e-46, 2.0**-150, 65520.0, 1e-8])
    edges = edge[rng.integers(0, len(edge), n)]
    out = np.select([k < 2, k < 3, k < 5], [rnd, f.view(np.uint64), tie.view(np.uint64)],
                    np.where(k == 5, np.where(rng.integers(0, 2, n) == 0, ints, edges), edges).view(np.uint64))
    return out.astype(np.uint64)


def mixed_i64(rng, n):
    bl = rng.integers(1, 65, n)
    v = rng.integers(0, 2**63, n, dtype=np.uint64) >> (64 - bl).astype(np.uint64)
    v = np.where(rng.integers(0, 2, n) == 0, v, np.uint64(0) - v)
    tie = (np.uint64(1) << rng.integers(24, 63, n).astype(np.uint64)) | np.uint64(1)     # ties / near-ties for f32
    edge = np.array([0, 1, 2**63, 2**63 - 1, 2**64 - 1, 2**24 + 1, 2**53 + 1, 2**32, 2**31], dtype=np.uint64)
    k = rng.integers(0, 4, n)
    return np.select([k < 2, k == 2], [v, tie], edge[rng.integers(0, len(edge), n)]).astype(np.uint64)


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


def _compare(names, res, ref_fn, ins, seed):
    failures = []
    for k, name in enumerate(names):
        want = np.array([ref_fn(name, *args) for args in zip(*ins)], dtype=np.uint64)
        bad = np.nonzero(res[k] != want)[0]
        if bad.size:
            j = bad[0]
            args = ", ".join(f"0x{int(a[j]):x}" for a in ins)
            failures.append(f"{name}: {bad.size} mismatches, first at i={j} ({args}): got 0x{int(res[k][j]):x} "
                            f"want 0x{int(want[j]):x}")
    assert not failures, f"[seed {seed}]\n" + "\n".join(failures)


def test_cvt_ops(dev, rng, request):
    names = op_names("cvt_ops.cu")
    assert len(names) == len(set(names))
    n = 768
    x, y = mixed_f32(rng, n), mixed_f32(rng, n)
    d, l = mixed_f64(rng, n), mixed_i64(rng, n)
    # f64 NaNs with signs, signalling and non-zero upper payload bits (NaN payload through .f64 cvts, see nan_keep)
    d.view(np.uint64)[::29] = rng.choice(np.array([0x7FF0000000000001, 0xFFF8000000000000, 0x7FF4DEADBEEF1234,
                                                   0xFFFFFFFFFFFFFFFF, 0x7FF0123456789ABC], np.uint64), d[::29].size)
    h = rng.integers(0, 2**16, n, dtype=np.uint64).astype(np.uint32)
    mod = ptxlab.compile((KDIR / "cvt_ops.cu").read_text(), arch="sm_90a")
    out = dev.empty(len(names) * n * 8)
    dev.memset(out, 0xFF)
    dev.launch(mod, "cvt_ops", grid=((n + 127) // 128, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(x), dev.to_device(y), dev.to_device(d), dev.to_device(l), dev.to_device(h), out,
                     np.uint32(n)])
    res = dev.to_host(out, np.uint64).reshape(len(names), n)
    ins = [v.tolist() for v in (x, y, d, l, h)]
    _compare(names, res, REF, ins, dict(request.node.user_properties).get("rng_seed"))


def ue8m0(x, mode):
    if math.isnan(x):
        return 0xFF
    a = abs(x)
    if a == INF:
        return 0xFE
    if a == 0:
        return 0
    e = math.frexp(a)[1] - 1
    if mode == "rp" and a != 2.0 ** e:
        e += 1
    return max(0, min(0xFE, e + 127))


def REF4(name, x, y, h):
    fx, fy = f32v(x), f32v(y)
    e2 = lambda c: float(np.array(c, np.uint8).view(ml_dtypes.float4_e2m1fn))  # noqa: E731
    e23 = lambda c: float(np.array(c, np.uint8).view(ml_dtypes.float6_e2m3fn))  # noqa: E731
    e32 = lambda c: float(np.array(c, np.uint8).view(ml_dtypes.float6_e3m2fn))  # noqa: E731
    h6 = h & 0x3F3F

    def bf16_of_e8(e):
        return 0x7FFF if e == 0xFF else (0x0040 if e == 0 else e << 7)
    return {
        "e2m1x2_f32": lambda: T_E2M1.round(fx, "rn", True) << 4 | T_E2M1.round(fy, "rn", True),
        "e2m1x2_f32_relu": lambda: T_E2M1.round(fx, "rn", True, True) << 4 | T_E2M1.round(fy, "rn", True, True),
        "f16x2_e2m1x2": lambda: T_F16.round(e2((h >> 4) & 0xF), "rn") << 16 | T_F16.round(e2(h & 0xF), "rn"),
        "e2m3x2_f32": lambda: T_E2M3.round(fx, "rn", True) << 8 | T_E2M3.round(fy, "rn", True),
        "e3m2x2_f32": lambda: T_E3M2.round(fx, "rn", True) << 8 | T_E3M2.round(fy, "rn", True),
        "f16x2_e2m3x2": lambda: T_F16.round(e23(h6 >> 8), "rn") << 16 | T_F16.round(e23(h6 & 0xFF), "rn"),
        "f16x2_e3m2x2": lambda: T_F16.round(e32(h6 >> 8), "rn") << 16 | T_F16.round(e32(h6 & 0xFF), "rn"),
        "ue8m0x2_f32_rz": lambda: ue8m0(fx, "rz") << 8 | ue8m0(fy, "rz"),
        "ue8m0x2_f32_rp": lambda: ue8m0(fx, "rp") << 8 | ue8m0(fy, "rp"),
        "bf16x2_ue8m0x2": lambda: bf16_of_e8(h >> 8) << 16 | bf16_of_e8(h & 0xFF),
        "tf32_f32_rn_satfinite": lambda: tf32(fx, "rn", True),
        "tf32_f32_rz_satfinite": lambda: tf32(fx, "rz", True),
    }[name]()


UE8M0X2 = r'''
extern "C" __global__ void k(const unsigned* a, const unsigned* b, unsigned short* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned short r, s;
  asm volatile("cvt.rp.ue8m0x2.f32 %0, %1, %2;" : "=h"(r) : "r"(a[i]), "r"(b[i]));
  asm volatile("cvt.rp.satfinite.ue8m0x2.f32 %0, %1, %2;" : "=h"(s) : "r"(a[i]), "r"(b[i]));
  out[2 * i] = r; out[2 * i + 1] = s;
}
'''


def test_cvt_rp_ue8m0x2_without_satfinite(dev, rng):
    """cvt.rp.ue8m0x2.f32 without .satfinite (the CuTe DSL's scale-factor conversion): for positive finite inputs
    whose result is representable and for NaN the same code as with .satfinite (the qualifier only changes
    out-of-range results; PTX ISA 9.7.9.21).  Inputs beyond 2^127 are not tested: the PTX ISA does not give that
    result without .satfinite."""
    n = 512
    e = rng.integers(-126, 127, n)
    vals = (rng.uniform(1.0, 2.0, 2 * n) * np.exp2(np.concatenate([e, e[::-1]]))).astype(np.float32)
    vals[rng.integers(0, 2 * n, 8)] = np.float32(2.0) ** rng.integers(-126, 127, 8).astype(np.float32)   # exact
    vals[rng.integers(0, 2 * n, 4)] = np.nan
    a, b = vals[:n].view(np.uint32), vals[n:].view(np.uint32)
    out = dev.empty(4 * n)
    dev.memset(out, 0xA5)
    dev.launch(ptxlab.compile(UE8M0X2, arch="sm_100a", name="ue8m0x2.cu"), "k", grid=(n // 128, 1, 1),
               block=(128, 1, 1), args=[dev.to_device(a), dev.to_device(b), out, np.uint32(n)])
    got = dev.to_host(out, np.uint16).reshape(n, 2).astype(np.int64)
    code = lambda u: 0xFF if math.isnan(f32v(u)) else ue8m0(f32v(u), "rp")    # noqa: E731
    want = np.array([code(int(x)) << 8 | code(int(y)) for x, y in zip(a, b)])
    assert np.array_equal(got[:, 0], want) and np.array_equal(got[:, 1], want)


def test_cvt_fp4_sm100(dev, rng, request):
    names = op_names("cvt_fp4.cu")
    n = 512
    x, y = mixed_f32(rng, n), mixed_f32(rng, n)
    h = rng.integers(0, 2**16, n, dtype=np.uint64).astype(np.uint32)
    mod = ptxlab.compile((KDIR / "cvt_fp4.cu").read_text(), arch="sm_100a")
    out = dev.empty(len(names) * n * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "cvt_fp4", grid=((n + 127) // 128, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(x), dev.to_device(y), dev.to_device(h), out, np.uint32(n)])
    res = dev.to_host(out, np.uint32).reshape(len(names), n).astype(np.uint64)
    ins = [v.tolist() for v in (x, y, h)]
    _compare(names, res, REF4, ins, dict(request.node.user_properties).get("rng_seed"))
