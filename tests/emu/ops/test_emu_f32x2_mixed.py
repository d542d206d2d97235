"""sm_100 scalar additions against an independent host reference (exact rationals, written here from the PTX ISA
text): add/sub/mul/fma{.rnd}{.ftz}.f32x2 (PTX ISA 9.7.3.3-6) and the mixed-precision
add/sub{.rnd}{.sat}.f32.{f16,bf16}, fma.rnd{.sat}.f32.{f16,bf16} (9.7.5.1-3).  Every modifier combination of every
form runs in one kernel on fresh random inputs (seed printed) with NaN, Inf, zeros, subnormals and cancellation.

Reference rules (the ISA's, plus two points the ISA leaves open, which the emulator takes from the H100's scalar
.f32 behaviour and ptx_docs/isa_coverage_notes.md lists as unconfirmed on sm_100): a NaN result is 0x7FFFFFFF;
mul.ftz flushes when the exact product is below 2^-126 (before rounding), add/fma.ftz flush the rounded result.
"""
from __future__ import annotations

import os
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import ptxlab

SEED = int.from_bytes(os.urandom(4), "little")
N = 192
RND = ("", "rn", "rz", "rm", "rp")
TINY = Fraction(1, 2 ** 126)


# ---------------------------------------------------------------------------------------------- reference
def val32(bits: int, ftz: bool):
    s = -1 if bits >> 31 else 1
    e, m = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if e == 0xFF:
        return "nan" if m else ("inf", s)
    if e == 0:
        if ftz or m == 0:
            return ("zero", s)
        return Fraction(s * m, 2 ** 149)
    return Fraction(s * (m | 0x800000), 2 ** 150) * 2 ** e


def val16(bits: int, fmt: str):
    if fmt == "bf16":
        return val32(bits << 16, False)
    s = -1 if bits >> 15 else 1
    e, m = (bits >> 10) & 0x1F, bits & 0x3FF
    if e == 0x1F:
        return "nan" if m else ("inf", s)
    if e == 0:
        return ("zero", s) if m == 0 else Fraction(s * m, 2 ** 24)
    return Fraction(s * (m | 0x400), 2 ** 25) * 2 ** e


def round32(q: Fraction, mode: str) -> int:
    """Correctly round a nonzero rational to binary32 with mode rn/rz/rm/rp (overflow to Inf or MAX)."""
    s = 1 if q < 0 else 0
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, -126)
    ulp = Fraction(2) ** (e - 23)
    n, rem = divmod(a, ulp)
    n = int(n)
    half = Fraction(1, 2) * ulp
    up = {"rn": rem > half or (rem == half and n % 2 == 1), "rz": False,
          "rp": rem > 0 and not s, "rm": rem > 0 and bool(s)}[mode]
    n += up
    if n == 2 ** 24:
        n, e = 2 ** 23, e + 1
    if e > 127:
        inf = mode == "rn" or (mode == "rp" and not s) or (mode == "rm" and s)
        return (s << 31) | (0x7F800000 if inf else 0x7F7FFFFF)
    if n < 2 ** 23:                      # subnormal (e == -126)
        return (s << 31) | n
    return (s << 31) | ((e + 127) << 23) | (n - 2 ** 23)


def sign_zero(neg: bool) -> int:
    return 0x80000000 if neg else 0


def is_sign_neg(x) -> bool:
    return x[1] < 0 if isinstance(x, tuple) else x < 0


def ref_op(op: str, xs: list, mode: str, ftz: bool, sat: bool = False) -> int:
    """One .f32 result of add/sub/mul/fma on decoded operands (Fractions or ('zero'|'inf', sign) or 'nan')."""
    if any(x == "nan" for x in xs):
        r = 0x7FFFFFFF
    else:
        r = _ref_finite_or_inf(op, xs, mode, ftz)
    if sat:
        if r == 0x7FFFFFFF or (r >> 31):
            return 0
        return min(r, 0x3F800000)
    return r


def _ref_finite_or_inf(op, xs, mode, ftz):
    def num(x):
        return Fraction(0) if isinstance(x, tuple) and x[0] == "zero" else x
    if op == "sub":
        b = xs[1]
        xs = [xs[0], ("zero", -b[1]) if isinstance(b, tuple) and b[0] == "zero" else
              (("inf", -b[1]) if isinstance(b, tuple) else -b)]
        op = "add"
    if op in ("add", "fma"):
        if op == "fma":
            a, b, c = xs
            pinf = [t for t in (a, b) if isinstance(t, tuple) and t[0] == "inf"]
            pzero = [t for t in (a, b) if isinstance(t, tuple) and t[0] == "zero"]
            psign = is_sign_neg(a) != is_sign_neg(b)
            if pinf and pzero:
                return 0x7FFFFFFF
            if pinf:
                if isinstance(c, tuple) and c[0] == "inf" and (c[1] < 0) != psign:
                    return 0x7FFFFFFF
                return 0xFF800000 if psign else 0x7F800000
            terms = [("prod", num(a) * num(b), psign), ("c", c)]
        else:
            terms = [("a", xs[0]), ("b", xs[1])]
        infs = [t[1] for t in terms if isinstance(t[1], tuple) and t[1][0] == "inf"]
        if infs:
            if len(infs) == 2 and infs[0][1] != infs[1][1]:
                return 0x7FFFFFFF
            return 0x7F800000 if infs[0][1] > 0 else 0xFF800000
        vals, negs = [], []
        for t in terms:
            if t[0] == "prod":
                vals.append(t[1])
                negs.append(t[2] if t[1] == 0 else t[1] < 0)
            else:
                vals.append(num(t[1]))
                negs.append(is_sign_neg(t[1]))
        q = sum(vals, Fraction(0))
        if q == 0:
            allzero = all(v == 0 for v in vals)
            if allzero and negs[0] == negs[1]:
                return sign_zero(negs[0])
            return sign_zero(mode == "rm")
        r = round32(q, mode)
        if ftz and (r & 0x7F800000) == 0:
            r &= 0x80000000
        return r
    # mul
    a, b = xs
    neg = is_sign_neg(a) != is_sign_neg(b)
    ainf, binf = (isinstance(t, tuple) and t[0] == "inf" for t in (a, b))
    azero, bzero = (isinstance(t, tuple) and t[0] == "zero" or (not isinstance(t, tuple) and t == 0) for t in (a, b))
    if (ainf and bzero) or (binf and azero):
        return 0x7FFFFFFF
    if ainf or binf:
        return 0xFF800000 if neg else 0x7F800000
    if azero or bzero:
        return sign_zero(neg)
    q = a * b
    if ftz and abs(q) < TINY:
        return sign_zero(neg)
    r = round32(q, mode)
    if ftz and (r & 0x7F800000) == 0:
        r &= 0x80000000
    return r


# ---------------------------------------------------------------------------------------------- inputs
def f32_inputs(rng, n):
    e = rng.integers(100, 156, n).astype(np.uint32)            # clustered exponents: rounding and cancellation
    x = (rng.integers(0, 2, n, dtype=np.uint32) << 31) | (e << 23) | rng.integers(0, 1 << 23, n, dtype=np.uint32)
    special = np.array([0x7FC00000, 0x7F800001, 0x7F800000, 0xFF800000, 0x0, 0x80000000, 0x00000001, 0x807FFFFF,
                        0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0x00400000], np.uint32)
    k = rng.choice(n, size=n // 4, replace=False)
    x[k] = rng.choice(special, size=k.size)
    tiny = rng.choice(n, size=n // 8, replace=False)               # subnormal and near-underflow operands
    x[tiny] = (x[tiny] & np.uint32(0x807FFFFF)) | (rng.integers(0, 3, tiny.size, dtype=np.uint32) << 23)
    return x


def h_inputs(rng, n, fmt):
    if fmt == "bf16":
        return (f32_inputs(rng, n) >> 16).astype(np.uint16)
    x = rng.integers(0, 1 << 16, n, dtype=np.uint64).astype(np.uint16)
    special = np.array([0x7E00, 0x7C01, 0x7C00, 0xFC00, 0, 0x8000, 1, 0x83FF, 0x3C00], np.uint16)
    k = rng.choice(n, size=n // 4, replace=False)
    x[k] = rng.choice(special, size=k.size)
    return x


# ---------------------------------------------------------------------------------------------- the kernel
def _variants():
    out = []
    for op in ("add", "sub", "mul"):
        for r in RND:
            for ftz in ("", "ftz"):
                out.append(("x2", op, r, ftz, ""))
    for r in RND[1:]:
        for ftz in ("", "ftz"):
            out.append(("x2", "fma", r, ftz, ""))
    for t in ("f16", "bf16"):
        for op in ("add", "sub"):
            for r in RND:
                for sat in ("", "sat"):
                    out.append((t, op, r, "", sat))
        for r in RND[1:]:
            for sat in ("", "sat"):
                out.append((t, "fma", r, "", sat))
    return out


VARIANTS = _variants()


def _name(v):
    kind, op, r, ftz, sat = v
    mods = [x for x in (r, ftz, sat) if x]
    tail = ["f32x2"] if kind == "x2" else ["f32", kind]
    return ".".join([op] + mods + tail)


def _ptx():
    body = []
    for j, v in enumerate(VARIANTS):
        kind, op, *_ = v
        if kind == "x2":
            srcs = "%rdA, %rdB, %rdC" if op == "fma" else "%rdA, %rdB"
            body.append(f"  {_name(v)} %rdD, {srcs};")
            body.append(f"  st.global.b64 [%rdO+{8 * j * N}], %rdD;")
        else:
            reg = "%hA" if kind == "f16" else "%hAb"
            regb = "%hB" if kind == "f16" else "%hBb"
            srcs = f"{reg}, {regb}, %fC" if op == "fma" else f"{reg}, %fC"
            body.append(f"  {_name(v)} %fD, {srcs};")
            body.append(f"  st.global.b64 [%rdO+{8 * j * N}], %rdZ;")    # keep the row layout: 8 bytes per lane
            body.append(f"  st.global.b32 [%rdO+{8 * j * N}], %fD;")
    return f"""
.version 8.8
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 ph, .param .u64 pout) {{
  .reg .b64 %rdA, %rdB, %rdC, %rdD, %rdO, %rdP, %rdZ, %rdT;
  .reg .b32 %r<4>; .reg .f32 %fC, %fD; .reg .b16 %hA, %hB, %hAb, %hBb;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rdT, %r0, 8;
  mov.b64 %rdZ, 0;
  ld.param.u64 %rdP, [pa]; add.u64 %rdP, %rdP, %rdT; ld.global.b64 %rdA, [%rdP];
  ld.param.u64 %rdP, [pb]; add.u64 %rdP, %rdP, %rdT; ld.global.b64 %rdB, [%rdP];
  ld.param.u64 %rdP, [pc]; add.u64 %rdP, %rdP, %rdT; ld.global.b64 %rdC, [%rdP];
  ld.param.u64 %rdP, [ph]; add.u64 %rdP, %rdP, %rdT; ld.global.b16 %hA, [%rdP]; ld.global.b16 %hB, [%rdP+2];
  ld.global.b16 %hAb, [%rdP+4]; ld.global.b16 %hBb, [%rdP+6];
  mov.b64 {{%fC, %fD}}, %rdC;
  ld.param.u64 %rdO, [pout]; add.u64 %rdO, %rdO, %rdT;
{chr(10).join(body)}
  ret;
}}
"""


def test_f32x2_and_mixed_precision_bit_exact():
    rng = np.random.default_rng(SEED)
    a64 = f32_inputs(rng, 2 * N).view(np.uint64)
    b64 = f32_inputs(rng, 2 * N).view(np.uint64)
    c64 = f32_inputs(rng, 2 * N).view(np.uint64)
    h = np.stack([h_inputs(rng, N, "f16"), h_inputs(rng, N, "f16"), h_inputs(rng, N, "bf16"),
                  h_inputs(rng, N, "bf16")], axis=1).copy()
    dev = ptxlab.open_device("emu")
    mod = ptxlab.compile(_ptx(), arch="sm_100a")
    out = dev.empty(8 * N * len(VARIANTS))
    dev.memset(out, 0xFF)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(N, 1, 1),
               args=[dev.to_device(a64), dev.to_device(b64), dev.to_device(c64), dev.to_device(h), out])
    got = dev.to_host(out, np.uint64).reshape(len(VARIANTS), N)
    bad = []
    for j, v in enumerate(VARIANTS):
        kind, op, r, ftz, sat = v
        mode = r or "rn"
        for i in range(N):
            if kind == "x2":
                want = 0
                for lane in (0, 1):
                    sh = 32 * lane
                    xs = [val32((int(t[i]) >> sh) & 0xFFFFFFFF, bool(ftz)) for t in (a64, b64, c64)]
                    w = ref_op(op, xs if op == "fma" else xs[:2], mode, bool(ftz))
                    want |= w << sh
            else:
                ha = int(h[i, 0 if kind == "f16" else 2])
                hb = int(h[i, 1 if kind == "f16" else 3])
                c = val32(int(c64[i]) & 0xFFFFFFFF, False)
                xa, xb = val16(ha, kind), val16(hb, kind)
                xs = [xa, xb, c] if op == "fma" else [xa, c]
                want = ref_op(op, xs, mode, False, bool(sat))
            if int(got[j, i]) != want:
                bad.append(f"{_name(v)} lane-pair {i}: got {int(got[j, i]):#018x} want {want:#018x}")
    assert not bad, f"seed {SEED}: {len(bad)} mismatches, first: " + "; ".join(bad[:6])


def test_mixed_precision_is_not_the_half_fma():
    """fma.rn.f32.f16 must not run as fma.rn.f16 (the issue's silent wrong result): f16 operands whose f16 product
    would overflow give the exact f32 result."""
    ptx = """
.version 8.8
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 out) {
  .reg .b16 %a, %b; .reg .f32 %c, %d; .reg .b64 %o;
  mov.b16 %a, 0x7BFF; mov.b16 %b, 0x4800; mov.f32 %c, 0f3F800000;
  fma.rn.f32.f16 %d, %a, %b, %c;
  ld.param.u64 %o, [out]; st.global.f32 [%o], %d;
  ret;
}
"""
    dev = ptxlab.open_device("emu")
    out = dev.empty(4)
    dev.launch(ptxlab.compile(ptx, arch="sm_100a"), "k", grid=(1, 1, 1), block=(32, 1, 1), args=[out])
    assert dev.to_host(out, np.float32)[0] == np.float32(65504.0 * 8 + 1)


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_reference_decoders_agree_with_ml_dtypes(fmt):
    """The reference's own decoder checked against ml_dtypes on every finite 16-bit pattern."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    vals = bits.view(np.float16 if fmt == "f16" else ml_dtypes.bfloat16).astype(np.float64)
    for b, v in zip(bits[::97], vals[::97]):
        x = val16(int(b), fmt)
        if np.isnan(v):
            assert x == "nan"
        elif np.isinf(v):
            assert x == ("inf", 1 if v > 0 else -1)
        elif v == 0:
            assert isinstance(x, tuple) and x[0] == "zero"
        else:
            assert float(x) == v
