"""Emulator integer/logic/shift/compare family vs independent Python-int references, bit for bit.

Kernels live in tests/kernels/int_*.cu (inline PTX, rerunnable on a GPU for a bit-exact comparison).  Inputs are
fresh random draws mixed with edge values (0, ±1, INT_MIN/MAX, shift counts around the width); outputs are poisoned.
Division by zero gives all ones (ops.integer.build_divrem), as the H100 does (H100 80GB HBM3, driver 580.159.04,
2026-11-22, corpus seed 20261122).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import ptxlab

KDIR = Path(__file__).resolve().parents[2] / "kernels"
M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
EDGE32 = [0, 1, 2, 3, 0xFFFFFFFF, 0xFFFFFFFE, 0x80000000, 0x7FFFFFFF, 0x80000001, 0x8000, 0xFFFF, 0x7FFF, 0x10000,
          0xFF, 0x80, 0x7F, 0x800000, 0xFFFFFF, 0x7FFFFF, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 0xFF00FF00]


def mixed32(rng, n):
    """Random uint32 values: 40% uniform, 20% small (0..70), 40% edge values."""
    kind = rng.integers(0, 10, n)
    v = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    small = rng.integers(0, 71, n).astype(np.uint32)
    edge = np.array(EDGE32, dtype=np.uint32)[rng.integers(0, len(EDGE32), n)]
    return np.where(kind < 4, v, np.where(kind < 6, small, edge)).astype(np.uint32)


def op_names(fname: str, macros: str) -> list:
    text = "\n".join(line for line in (KDIR / fname).read_text().splitlines() if not line.lstrip().startswith("#"))
    return re.findall(rf"\b(?:{macros})\((\w+),", text)


def s32(u):
    return u - (1 << 32) if u & 0x80000000 else u


def s16(u):
    u &= 0xFFFF
    return u - (1 << 16) if u & 0x8000 else u


def s24(u):
    u &= 0xFFFFFF
    return u - (1 << 24) if u & 0x800000 else u


def sat32(v):
    return max(-2**31, min(2**31 - 1, v)) & M32


def tdiv(a, b):
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def trem(a, b):
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def bfind(a, signed, bits, shiftamt):
    if signed and a < 0:
        a = ~a
    d = a.bit_length() - 1
    if d < 0:
        return M32
    return bits - 1 - d if shiftamt else d


# bfe/bfi pos and len: PTX ISA 9.7.1.19/20 takes them mod 256; the H100 does so for the 32-bit forms but uses the full
# 32-bit unsigned pos/len for the 64-bit forms (H100 80GB HBM3, driver 580.159.04, 2026-11-22, corpus seed 20261122:
# int_ops64 bfe_u64/bfe_s64/bfi_b64 on 256 inputs).  sbit index min(pos+len-1, msb) without 32-bit wrap-around.
BF_FIELD_MASK = {32: 0xFF, 64: M32}


def bfe(a, pos, ln, signed, bits):
    pos, ln = pos & BF_FIELD_MASK[bits], ln & BF_FIELD_MASK[bits]
    sbit = 0 if (not signed or ln == 0) else (a >> min(pos + ln - 1, bits - 1)) & 1
    d = 0
    for i in range(bits):
        bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= bits - 1) else sbit
        d |= bit << i
    return d


def bfi(a, b, pos, ln, bits):
    pos, ln = pos & BF_FIELD_MASK[bits], ln & BF_FIELD_MASK[bits]
    f = b
    i = 0
    while i < ln and pos + i <= bits - 1:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


def fns(mask, base, offset):
    offset = s32(offset)
    if offset == -2**31:
        # PTX ISA: not found -> 0xffffffff; the H100 returns 0 for offset INT_MIN (any mask, base 0..31): H100 80GB
        # HBM3, driver 580.159.04, 2026-11-22, corpus seed 20261122 (int_ops32 fns_b32).
        return 0
    if offset == 0:
        return base if (mask >> base) & 1 else M32
    pos, count, inc = base, abs(offset) - 1, (1 if offset > 0 else -1)
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return M32


def szext(a, b, clamp, signed):
    b1 = b & 0x1F
    too = b >= 32 and clamp
    mask = 0 if too else (M32 << b1) & M32
    sign = 0 if (b1 == 0 or too or not signed) else (a >> ((b1 - 1) & 0x1F)) & 1
    return (a & ~mask & M32) | (mask if sign else 0)


def bmsk(a, b, clamp):
    a1, b1 = a & 0x1F, b & 0x1F
    mask0 = (M32 << a1) & M32
    s = a1 + b1
    mask1 = (M32 << s) & M32 if s < 32 else 0
    ovf = s >= 32
    if clamp:
        if a >= 32:
            mask0 = 0
            ovf = True
        if b >= 32:
            ovf = True
    if ovf:
        mask1 = 0
    elif b1 == 0:
        mask1 = M32
    return mask0 & ~mask1 & M32


def lanes(v, w, n, signed):
    out = [(v >> (w * j)) & ((1 << w) - 1) for j in range(n)]
    return [x - (1 << w) if signed and x >> (w - 1) else x for x in out]


def unlanes(vals, w):
    return sum((x & ((1 << w) - 1)) << (w * j) for j, x in enumerate(vals))


def dp(a, b, two, hi, asig, bsig):
    va = lanes(a, 16 if two else 8, 2 if two else 4, asig)
    vb = lanes(b, 8, 4, bsig)
    if two:
        vb = vb[2:] if hi else vb[:2]
    return sum(p * q for p, q in zip(va, vb))


# PTX ISA 9.7.9.7 mode table, transcribed as printed (d.b3 d.b2 d.b1 d.b0 for selector 0..3)
PRMT_TABLE = {
    "f4e": ["3210", "4321", "5432", "6543"], "b4e": ["5670", "6701", "7012", "0123"],
    "rc8": ["0000", "1111", "2222", "3333"], "ecl": ["3210", "3211", "3222", "3333"],
    "ecr": ["0000", "1110", "2210", "3210"], "rc16": ["1010", "3232", "1010", "3232"],
}


def prmt(a, b, c, mode):
    src = [((b << 32 | a) >> (8 * j)) & 0xFF for j in range(8)]
    d = 0
    for j in range(4):
        if mode is None:
            sel = (c >> (4 * j)) & 0xF
            byte = src[sel & 7]
            if sel & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            byte = src[int(PRMT_TABLE[mode][c & 3][3 - j])]
        d |= byte << (8 * j)
    return d


def shf(a, b, c, left, clamp):
    n = min(c, 32) if clamp else c & 31
    v = (b << 32) | a
    return ((v << n) >> 32) & M32 if left else (v >> n) & M32


def pq(t, c, op):
    f = {"and": lambda p, q: p and q, "or": lambda p, q: p or q, "xor": lambda p, q: p != q}[op]
    return int(f(t, c)) + 2 * int(f(not t, c))


def _u16(v):
    return v & 0xFFFF


REF32 = {
    "add_u32": lambda x, y, z, v: (x + y) & M32,
    "sub_s32": lambda x, y, z, v: (x - y) & M32,
    "add_sat_s32": lambda x, y, z, v: sat32(s32(x) + s32(y)),
    "sub_sat_s32": lambda x, y, z, v: sat32(s32(x) - s32(y)),
    "mul_lo_u32": lambda x, y, z, v: (x * y) & M32,
    "mul_hi_u32": lambda x, y, z, v: (x * y) >> 32,
    "mul_hi_s32": lambda x, y, z, v: ((s32(x) * s32(y)) >> 32) & M32,
    "mad_lo_s32": lambda x, y, z, v: (x * y + z) & M32,
    "mad_hi_u32": lambda x, y, z, v: (((x * y) >> 32) + z) & M32,
    "mad_hi_s32": lambda x, y, z, v: (((s32(x) * s32(y)) >> 32) + z) & M32,
    "mad_hi_sat_s32": lambda x, y, z, v: sat32(((s32(x) * s32(y)) >> 32) + s32(z)),
    "mul24_lo_u32": lambda x, y, z, v: ((x & 0xFFFFFF) * (y & 0xFFFFFF)) & M32,
    "mul24_lo_s32": lambda x, y, z, v: (s24(x) * s24(y)) & M32,
    "mul24_hi_u32": lambda x, y, z, v: (((x & 0xFFFFFF) * (y & 0xFFFFFF)) >> 16) & M32,
    "mul24_hi_s32": lambda x, y, z, v: ((s24(x) * s24(y)) >> 16) & M32,
    "mad24_lo_s32": lambda x, y, z, v: (s24(x) * s24(y) + z) & M32,
    "mad24_hi_u32": lambda x, y, z, v: ((((x & 0xFFFFFF) * (y & 0xFFFFFF)) >> 16) + z) & M32,
    "mad24_hi_sat_s32": lambda x, y, z, v: sat32(((s24(x) * s24(y)) >> 16) + s32(z)),
    "sad_u32": lambda x, y, z, v: (z + abs(x - y)) & M32,
    "sad_s32": lambda x, y, z, v: (z + abs(s32(x) - s32(y))) & M32,
    "addc_sum": lambda x, y, z, v: (z + v + ((x + y) >> 32)) & M32,
    "addc_cf": lambda x, y, z, v: (z + v + ((x + y) >> 32)) >> 32,
    "subc_diff": lambda x, y, z, v: (z - v - int(x < y)) & M32,
    "subc_bf": lambda x, y, z, v: M32 if z < v + int(x < y) else 0,
    "madc_hi": lambda x, y, z, v: (((x * y) >> 32) + v + ((((x * y) & M32) + z) >> 32)) & M32,
    "madc_cf": lambda x, y, z, v: (((x * y) & M32) + v + ((((x * y) >> 32) + z) >> 32)) >> 32,
    "div_u32": lambda x, y, z, v: M32 if y == 0 else x // y,
    "div_s32": lambda x, y, z, v: M32 if y == 0 else tdiv(s32(x), s32(y)) & M32,
    "rem_u32": lambda x, y, z, v: M32 if y == 0 else x % y,
    "rem_s32": lambda x, y, z, v: M32 if y == 0 else trem(s32(x), s32(y)) & M32,
    "abs_s32": lambda x, y, z, v: abs(s32(x)) & M32,
    "neg_s32": lambda x, y, z, v: (-x) & M32,
    "min_u32": lambda x, y, z, v: min(x, y),
    "min_s32": lambda x, y, z, v: min(s32(x), s32(y)) & M32,
    "max_u32": lambda x, y, z, v: max(x, y),
    "max_s32": lambda x, y, z, v: max(s32(x), s32(y)) & M32,
    "min_relu_s32": lambda x, y, z, v: max(0, min(s32(x), s32(y))),
    "max_relu_s32": lambda x, y, z, v: max(0, max(s32(x), s32(y))),
    "min_u16x2": lambda x, y, z, v: unlanes([min(p, q) for p, q in zip(lanes(x, 16, 2, 0), lanes(y, 16, 2, 0))], 16),
    "max_s16x2": lambda x, y, z, v: unlanes([max(p, q) for p, q in zip(lanes(x, 16, 2, 1), lanes(y, 16, 2, 1))], 16),
    "min_relu_s16x2": lambda x, y, z, v: unlanes([max(0, min(p, q)) for p, q in
                                                  zip(lanes(x, 16, 2, 1), lanes(y, 16, 2, 1))], 16),
    "add_u16x2": lambda x, y, z, v: unlanes([p + q for p, q in zip(lanes(x, 16, 2, 0), lanes(y, 16, 2, 0))], 16),
    "add_s16x2": lambda x, y, z, v: unlanes([p + q for p, q in zip(lanes(x, 16, 2, 1), lanes(y, 16, 2, 1))], 16),
    "popc_b32": lambda x, y, z, v: bin(x).count("1"),
    "clz_b32": lambda x, y, z, v: 32 - x.bit_length(),
    "bfind_u32": lambda x, y, z, v: bfind(x, False, 32, False),
    "bfind_s32": lambda x, y, z, v: bfind(s32(x), True, 32, False),
    "bfind_sa_u32": lambda x, y, z, v: bfind(x, False, 32, True),
    "bfind_sa_s32": lambda x, y, z, v: bfind(s32(x), True, 32, True),
    "brev_b32": lambda x, y, z, v: int(f"{x:032b}"[::-1], 2),
    "bfe_u32": lambda x, y, z, v: bfe(x, y, z, False, 32),
    "bfe_s32": lambda x, y, z, v: bfe(x, y, z, True, 32),
    "bfi_b32": lambda x, y, z, v: bfi(x, y, z, v, 32),
    "fns_b32": lambda x, y, z, v: fns(x, y & 31, v),
    "szext_clamp_s32": lambda x, y, z, v: szext(x, y, True, True),
    "szext_wrap_u32": lambda x, y, z, v: szext(x, y, False, False),
    "bmsk_clamp": lambda x, y, z, v: bmsk(y, z, True),
    "bmsk_wrap": lambda x, y, z, v: bmsk(y, z, False),
    "dp4a_u_u": lambda x, y, z, v: (z + dp(x, y, False, False, 0, 0)) & M32,
    "dp4a_s_u": lambda x, y, z, v: (s32(z) + dp(x, y, False, False, 1, 0)) & M32,
    "dp2a_lo_s_s": lambda x, y, z, v: (s32(z) + dp(x, y, True, False, 1, 1)) & M32,
    "dp2a_hi_u_s": lambda x, y, z, v: (s32(z) + dp(x, y, True, True, 0, 1)) & M32,
    "and_b32": lambda x, y, z, v: x & y,
    "or_b32": lambda x, y, z, v: x | y,
    "xor_b32": lambda x, y, z, v: x ^ y,
    "not_b32": lambda x, y, z, v: x ^ M32,
    "cnot_b32": lambda x, y, z, v: int(x == 0),
    "pred_logic": lambda x, y, z, v: ((x < y) & (y < z)) + 2 * ((x < y) | (y < z)) + 4 * ((x < y) ^ (y < z))
    + 8 * (not x < y) + 16 * (not y < z),
    "shl_b32": lambda x, y, z, v: 0 if y >= 32 else (x << y) & M32,
    "shr_u32": lambda x, y, z, v: 0 if y >= 32 else x >> y,
    "shr_s32": lambda x, y, z, v: (s32(x) >> min(y, 40)) & M32,
    "shr_b32": lambda x, y, z, v: 0 if y >= 32 else x >> y,
    "shf_l_clamp": lambda x, y, z, v: shf(x, y, z, True, True),
    "shf_l_wrap": lambda x, y, z, v: shf(x, y, z, True, False),
    "shf_r_clamp": lambda x, y, z, v: shf(x, y, z, False, True),
    "shf_r_wrap": lambda x, y, z, v: shf(x, y, z, False, False),
    "lop3_pred_or": lambda x, y, z, v: (x ^ y ^ z) ^ ((int((x ^ y ^ z) != 0 or (v & 1) == 1)) << 31),
    "lop3_pred_and": lambda x, y, z, v: int((x & y & z) != 0 and (v & 1) == 1),
    "prmt": lambda x, y, z, v: prmt(x, y, z, None),
    **{f"prmt_{md}": (lambda md: lambda x, y, z, v: prmt(x, y, z, md))(md) for md in PRMT_TABLE},
    "setp_eq_s32": lambda x, y, z, v: int(x == y),
    "setp_ne_s32": lambda x, y, z, v: int(x != y),
    "setp_lt_s32": lambda x, y, z, v: int(s32(x) < s32(y)),
    "setp_le_s32": lambda x, y, z, v: int(s32(x) <= s32(y)),
    "setp_gt_s32": lambda x, y, z, v: int(s32(x) > s32(y)),
    "setp_ge_s32": lambda x, y, z, v: int(s32(x) >= s32(y)),
    "setp_lt_u32": lambda x, y, z, v: int(x < y),
    "setp_ge_u32": lambda x, y, z, v: int(x >= y),
    "setp_lo_u32": lambda x, y, z, v: int(x < y),
    "setp_ls_u32": lambda x, y, z, v: int(x <= y),
    "setp_hi_u32": lambda x, y, z, v: int(x > y),
    "setp_hs_u32": lambda x, y, z, v: int(x >= y),
    "setp_ne_b32": lambda x, y, z, v: int(x != y),
    "setp_lt_and_s32": lambda x, y, z, v: pq(s32(x) < s32(y), z & 1 == 1, "and"),
    "setp_hi_or_u32": lambda x, y, z, v: pq(x > y, z & 1 == 1, "or"),
    "setp_eq_xor_b32": lambda x, y, z, v: pq(x == y, z & 1 == 1, "xor"),
    "setp_ge_pq_s32": lambda x, y, z, v: int(s32(x) >= s32(y)) + 2 * int(not s32(x) >= s32(y)),
    "set_lt_u32_s32": lambda x, y, z, v: M32 if s32(x) < s32(y) else 0,
    "set_hs_f32_u32": lambda x, y, z, v: 0x3F800000 if x >= y else 0,
    "selp_b32": lambda x, y, z, v: x if z & 1 else y,
    "slct_b32_s32": lambda x, y, z, v: x if s32(z) >= 0 else y,
    "add_u16": lambda x, y, z, v: _u16(x + y),
    "sub_s16": lambda x, y, z, v: _u16(x - y),
    "mul_lo_s16": lambda x, y, z, v: _u16(s16(x) * s16(y)),
    "mul_hi_u16": lambda x, y, z, v: (_u16(x) * _u16(y)) >> 16,
    "mul_hi_s16": lambda x, y, z, v: _u16((s16(x) * s16(y)) >> 16),
    "mul_wide_u16": lambda x, y, z, v: _u16(x) * _u16(y),
    "mul_wide_s16": lambda x, y, z, v: (s16(x) * s16(y)) & M32,
    "mad_lo_u16": lambda x, y, z, v: _u16(_u16(x) * _u16(y) + z),
    "div_s16": lambda x, y, z, v: 0xFFFF if _u16(y) == 0 else _u16(tdiv(s16(x), s16(y))),
    "rem_u16": lambda x, y, z, v: 0xFFFF if _u16(y) == 0 else _u16(x) % _u16(y),
    "min_s16": lambda x, y, z, v: _u16(min(s16(x), s16(y))),
    "abs_s16": lambda x, y, z, v: _u16(abs(s16(x))),
    "shl_b16": lambda x, y, z, v: 0 if y >= 16 else _u16(x << y),
    "shr_s16": lambda x, y, z, v: _u16(s16(x) >> min(y, 20)),
    "shr_u16": lambda x, y, z, v: 0 if y >= 16 else _u16(x) >> y,
    "and_b16": lambda x, y, z, v: _u16(x & y),
    "not_b16": lambda x, y, z, v: _u16(~x),
    "setp_lt_s16": lambda x, y, z, v: int(s16(x) < s16(y)),
}


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


def _check(name, got, want, ins, seed_info):
    bad = np.nonzero(got != want)[0]
    if bad.size:
        j = bad[0]
        args = ", ".join(f"0x{int(a[j]):x}" for a in ins)
        pytest.fail(f"{name}: {bad.size} mismatches; first at i={j} ({args}): got 0x{int(got[j]):x}, "
                    f"want 0x{int(want[j]):x}  [{seed_info}]")


def test_int_ops32(dev, rng, request):
    names = op_names("int_ops32.cu", "R|H|P1|PQ")
    assert len(names) == len(set(names)) and set(names) == set(REF32), set(names) ^ set(REF32)
    n = 1024
    a, b, c, d = (mixed32(rng, n) for _ in range(4))
    mod = ptxlab.compile((KDIR / "int_ops32.cu").read_text(), arch="sm_90a")
    xs = [dev.to_device(v) for v in (a, b, c, d)]
    out = dev.empty(len(names) * n * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "int_ops32", grid=((n + 127) // 128, 1, 1), block=(128, 1, 1),
               args=[*xs, out, np.uint32(n)])
    res = dev.to_host(out, np.uint32).reshape(len(names), n)
    seed = dict(request.node.user_properties).get("rng_seed")
    al, bl, cl, dl = (v.tolist() for v in (a, b, c, d))
    for k, name in enumerate(names):
        f = REF32[name]
        want = np.array([f(x, y, z, v) for x, y, z, v in zip(al, bl, cl, dl)], dtype=np.uint64)
        _check(name, res[k].astype(np.uint64), want, (a, b, c, d), f"seed {seed}")


def test_lop3_all_luts(dev, rng, request):
    n = 256
    a, b, c = (rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    mod = ptxlab.compile((KDIR / "int_lop3.cu").read_text(), arch="sm_90a")
    out = dev.empty(256 * n * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "int_lop3", grid=(2, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(a), dev.to_device(b), dev.to_device(c), out, np.uint32(n)])
    res = dev.to_host(out, np.uint32).reshape(256, n)
    seed = dict(request.node.user_properties).get("rng_seed")
    for lut in range(256):
        # independent reference: evaluate the truth table bit by bit (PTX ISA 9.7.8.6, ta=0xF0 tb=0xCC tc=0xAA)
        want = np.zeros(n, dtype=np.uint32)
        for bit in range(32):
            ia = (a >> bit) & 1
            ib = (b >> bit) & 1
            ic = (c >> bit) & 1
            idx = (ia << 2) | (ib << 1) | ic
            want |= ((np.uint32(lut) >> idx) & 1).astype(np.uint32) << np.uint32(bit)
        _check(f"lop3 0x{lut:02x}", res[lut], want, (a, b, c), f"seed {seed}")


def s64(u):
    return u - (1 << 64) if u >> 63 else u


def mixed64(rng, n):
    """Random uint64 values: uniform, random bit-length, 32-bit patterns, edges (0, ±1, INT64_MIN/MAX, small)."""
    k = rng.integers(0, 5, n)
    v = rng.integers(0, 2**64, n, dtype=np.uint64)
    bl = rng.integers(1, 65, n).astype(np.uint64)
    short = v >> (np.uint64(64) - bl)
    short = np.where(rng.integers(0, 2, n) == 0, short, np.uint64(0) - short)
    e = np.array([0, 1, 2, M64, M64 - 1, 1 << 63, (1 << 63) - 1, (1 << 63) + 1, M32, 1 << 32, 63, 64, 65, 31, 32,
                  0x80000000, 0xFFFFFFFF80000000], dtype=np.uint64)
    return np.select([k < 2, k < 3, k == 3], [v, short, mixed32(rng, n).astype(np.uint64)],
                     e[rng.integers(0, len(e), n)]).astype(np.uint64)


def _clz64(x):
    return 64 - x.bit_length()


REF64 = {
    "add_u64": lambda x, y, z: (x + y) & M64,
    "sub_s64": lambda x, y, z: (x - y) & M64,
    "mul_lo_u64": lambda x, y, z: (x * y) & M64,
    "mul_hi_u64": lambda x, y, z: (x * y) >> 64,
    "mul_hi_s64": lambda x, y, z: ((s64(x) * s64(y)) >> 64) & M64,
    "mad_lo_s64": lambda x, y, z: (x * y + z) & M64,
    "mad_hi_u64": lambda x, y, z: (((x * y) >> 64) + z) & M64,
    "mad_hi_s64": lambda x, y, z: (((s64(x) * s64(y)) >> 64) + z) & M64,
    "mul_wide_u32": lambda x, y, z: (x & M32) * (y & M32),
    "mul_wide_s32": lambda x, y, z: (s32(x & M32) * s32(y & M32)) & M64,
    "mad_wide_s32": lambda x, y, z: (s32(x & M32) * s32(y & M32) + z) & M64,
    "mad_wide_u32": lambda x, y, z: ((x & M32) * (y & M32) + z) & M64,
    "addc_sum64": lambda x, y, z: (z + ((x + y) >> 64)) & M64,
    "subc_bf64": lambda x, y, z: (z - int(x < y)) & M64,
    "madc_lo64": lambda x, y, z: (((x * y) & M64) + ((((x * y) >> 64) + z) >> 64)) & M64,
    "div_u64": lambda x, y, z: M64 if y == 0 else x // y,
    "div_s64": lambda x, y, z: M64 if y == 0 else tdiv(s64(x), s64(y)) & M64,
    "rem_u64": lambda x, y, z: M64 if y == 0 else x % y,
    "rem_s64": lambda x, y, z: M64 if y == 0 else trem(s64(x), s64(y)) & M64,
    "abs_s64": lambda x, y, z: abs(s64(x)) & M64,
    "neg_s64": lambda x, y, z: (-x) & M64,
    "min_s64": lambda x, y, z: min(s64(x), s64(y)) & M64,
    "max_u64": lambda x, y, z: max(x, y),
    "sad_s64": lambda x, y, z: (z + abs(s64(x) - s64(y))) & M64,
    "popc_b64": lambda x, y, z: bin(x).count("1"),
    "clz_b64": lambda x, y, z: _clz64(x),
    "bfind_u64": lambda x, y, z: bfind(x, False, 64, False),
    "bfind_s64": lambda x, y, z: bfind(s64(x), True, 64, False),
    "bfind_sa_s64": lambda x, y, z: bfind(s64(x), True, 64, True),
    "brev_b64": lambda x, y, z: int(f"{x:064b}"[::-1], 2),
    "bfe_u64": lambda x, y, z: bfe(x, y & M32, z & M32, False, 64),
    "bfe_s64": lambda x, y, z: bfe(x, y & M32, z & M32, True, 64),
    "bfi_b64": lambda x, y, z: bfi(x, y, z & M32, z >> 32, 64),
    "shl_b64": lambda x, y, z: 0 if (y & M32) >= 64 else (x << (y & M32)) & M64,
    "shr_s64": lambda x, y, z: (s64(x) >> min(y & M32, 80)) & M64,
    "shr_u64": lambda x, y, z: 0 if (y & M32) >= 64 else x >> (y & M32),
    "xor_b64": lambda x, y, z: x ^ y,
    "not_b64": lambda x, y, z: x ^ M64,
    "cnot_b64": lambda x, y, z: int(x == 0),
    "setp_lt_s64": lambda x, y, z: int(s64(x) < s64(y)),
    "setp_hs_u64": lambda x, y, z: int(x >= y),
    "selp_b64": lambda x, y, z: x if z & 1 else y,
    "cvt_s64_s32": lambda x, y, z: s32(x & M32) & M64,
    "cvt_u64_u32": lambda x, y, z: x & M32,
    "cvt_sat_s32_s64": lambda x, y, z: max(-2**31, min(2**31 - 1, s64(x))) & M32,
    "cvt_sat_u32_s64": lambda x, y, z: max(0, min(M32, s64(x))),
    "cvt_u8_s64": lambda x, y, z: s16(((x & 0xFF) ^ 0x80) - 0x80) & 0xFFFF,
    "cvt_sat_s8_u64": lambda x, y, z: min(x, 127),
}


def test_int_ops64(dev, rng, request):
    names = op_names("int_ops64.cu", "Q|W")
    assert len(names) == len(set(names)) and set(names) == set(REF64), set(names) ^ set(REF64)
    n = 768
    a, b, c = (mixed64(rng, n) for _ in range(3))
    mod = ptxlab.compile((KDIR / "int_ops64.cu").read_text(), arch="sm_90a")
    out = dev.empty(len(names) * n * 8)
    dev.memset(out, 0xFF)
    dev.launch(mod, "int_ops64", grid=((n + 127) // 128, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(a), dev.to_device(b), dev.to_device(c), out, np.uint32(n)])
    res = dev.to_host(out, np.uint64).reshape(len(names), n)
    seed = dict(request.node.user_properties).get("rng_seed")
    al, bl, cl = (v.tolist() for v in (a, b, c))
    for k, name in enumerate(names):
        f = REF64[name]
        want = np.array([f(x, y, z) for x, y, z in zip(al, bl, cl)], dtype=np.uint64)
        _check(name, res[k], want, (a, b, c), f"seed {seed}")


# ----------------------------------------------------------------------------------------------------------------
# float comparisons (PTX ISA 9.7.6, 9.7.7): NaN rules, .ftz, half-precision lanes
# ----------------------------------------------------------------------------------------------------------------
import math  # noqa: E402
import struct  # noqa: E402


def _f32(u):
    return struct.unpack("<f", struct.pack("<I", u & M32))[0]


def _f64(u):
    return struct.unpack("<d", struct.pack("<Q", u))[0]


def _f16(u):
    return float(np.array(u & 0xFFFF, np.uint16).view(np.float16))


def _bf16(u):
    return _f32((u & 0xFFFF) << 16)


def _flush(v, tiny):
    return math.copysign(0.0, v) if abs(v) < tiny else v


def fcmp(op, a, b):
    un = math.isnan(a) or math.isnan(b)
    base = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}
    if op in base:
        return base[op] and not un
    if op == "num":
        return not un
    if op == "nan":
        return un
    return un or base[op[:-1]]


F16_POOL = [0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x3C00, 0xBC00, 0x0001, 0x8001, 0x03FF, 0x7BFF]
F32_POOL = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x3F800000, 0xBF800000, 0x00000001,
            0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F800001]


def mixed_fbits(rng, n):
    k = rng.integers(0, 3, n)
    rnd = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    p32 = np.array(F32_POOL, np.uint32)[rng.integers(0, len(F32_POOL), n)]
    p16 = np.array(F16_POOL, np.uint32)
    pair = (p16[rng.integers(0, len(p16), n)] << 16) | p16[rng.integers(0, len(p16), n)]
    return np.select([k == 0, k == 1], [rnd, p32], pair).astype(np.uint32)


def mixed_dbits(rng, n):
    pool = np.array([0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 1,
                     0x3FF0000000000000, 0xBFF0000000000000, 0x000FFFFFFFFFFFFF], np.uint64)
    k = rng.integers(0, 2, n)
    rnd = rng.integers(0, 2**64, n, dtype=np.uint64)
    return np.where(k == 0, rnd, pool[rng.integers(0, len(pool), n)]).astype(np.uint64)


def _lanes_cmp(op, x, y, bf):
    dec = _bf16 if bf else _f16
    return [fcmp(op, dec(x >> (16 * j)), dec(y >> (16 * j))) for j in (0, 1)]


T32 = 2.0 ** -126
REFC = {}
for _op in ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"):
    REFC[f"f32_{_op}"] = (lambda op: lambda x, y, u, v: int(fcmp(op, _f32(x), _f32(y))))(_op)
    REFC[f"f64_{_op}"] = (lambda op: lambda x, y, u, v: int(fcmp(op, _f64(u), _f64(v))))(_op)
    REFC[f"f16_{_op}"] = (lambda op: lambda x, y, u, v: int(fcmp(op, _f16(x), _f16(y))))(_op)
    REFC[f"bf16_{_op}"] = (lambda op: lambda x, y, u, v: int(fcmp(op, _bf16(x), _bf16(y))))(_op)
REFC.update({
    "f32_ftz_eq": lambda x, y, u, v: int(fcmp("eq", _flush(_f32(x), T32), _flush(_f32(y), T32))),
    "f32_ftz_lt": lambda x, y, u, v: int(fcmp("lt", _flush(_f32(x), T32), _flush(_f32(y), T32))),
    "f16_ftz_le": lambda x, y, u, v: int(fcmp("le", _flush(_f16(x), 2.0**-14), _flush(_f16(y), 2.0**-14))),
    "f16x2_lt_pq": lambda x, y, u, v: sum(int(t) << j for j, t in enumerate(_lanes_cmp("lt", x, y, False))),
    "bf16x2_equ_and": lambda x, y, u, v: sum(int(t and (u & 1) == 1) << j
                                             for j, t in enumerate(_lanes_cmp("equ", x, y, True))),
    "f32_gt_or_pq": lambda x, y, u, v: pq(fcmp("gt", _f32(x), _f32(y)), (u & 1) == 1, "or"),
    "set_lt_u32_f32": lambda x, y, u, v: M32 if fcmp("lt", _f32(x), _f32(y)) else 0,
    "set_geu_f32_f32": lambda x, y, u, v: 0x3F800000 if fcmp("geu", _f32(x), _f32(y)) else 0,
    "set_ne_f32_f64": lambda x, y, u, v: 0x3F800000 if fcmp("ne", _f64(u), _f64(v)) else 0,
    "set_lt_f16x2_f16x2": lambda x, y, u, v: sum((0x3C00 if t else 0) << (16 * j)
                                                 for j, t in enumerate(_lanes_cmp("lt", x, y, False))),
    "set_nan_u32_bf16x2": lambda x, y, u, v: sum((0xFFFF if t else 0) << (16 * j)
                                                 for j, t in enumerate(_lanes_cmp("nan", x, y, True))),
    "slct_f32": lambda x, y, u, v: y if (_f32(x) >= 0) else (u & M32),
    "slct_ftz_f32": lambda x, y, u, v: y if (_flush(_f32(x), T32) >= 0) else (u & M32),
    "selp_f32": lambda x, y, u, v: x if u & 1 else y,
})


def test_cmp_float(dev, rng, request):
    names = op_names("cmp_float.cu", "S|R")
    assert len(names) == len(set(names)) and set(names) <= set(REFC), set(names) - set(REFC)
    n = 1024
    x, y = mixed_fbits(rng, n), mixed_fbits(rng, n)
    u, v = mixed_dbits(rng, n), mixed_dbits(rng, n)
    mod = ptxlab.compile((KDIR / "cmp_float.cu").read_text(), arch="sm_90a")
    out = dev.empty(len(names) * n * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "cmp_float", grid=((n + 127) // 128, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(x), dev.to_device(y), dev.to_device(u), dev.to_device(v), out, np.uint32(n)])
    res = dev.to_host(out, np.uint32).reshape(len(names), n).astype(np.uint64)
    seed = dict(request.node.user_properties).get("rng_seed")
    xl, yl, ul, vl = (t.tolist() for t in (x, y, u, v))
    for k, name in enumerate(names):
        f = REFC[name]
        want = np.array([f(*t) for t in zip(xl, yl, ul, vl)], dtype=np.uint64)
        _check(name, res[k], want, (x, y, u, v), f"seed {seed}")


_DP4A_VECTOR_SRC = r"""
extern "C" __global__ void dp4a_vec(const unsigned* in, int* out) {
  __shared__ unsigned s[4 * 64];
  const int t = threadIdx.x;
  for (int i = 0; i < 4; ++i) s[4 * t + i] = in[4 * t + i];
  __syncthreads();
  unsigned x, y, z, w, base;
  asm("{\n\t.reg .u64 p;\n\tcvta.to.shared.u64 p, %1;\n\tcvt.u32.u64 %0, p;\n\t}" : "=r"(base) : "l"(s));
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(base + 16 * t));
  int d;
  asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(y), "r"((int)z));
  asm("dp4a.u32.s32 %0, %1, %2, %0;" : "+r"(d) : "r"(w), "r"(z));
  out[t] = d;
}
"""


def test_dp4a_on_vector_load_components(dev, rng):
    """dp4a/dp2a operands that are components of a vector load (strided views inside the emulator) -- regression:
    they raised 'the last axis must be contiguous' (found by the CUDA-core GEMV's shared-memory table reads)."""
    mod = ptxlab.compile(_DP4A_VECTOR_SRC, arch="sm_90a", name="dp4a_vec.cu")
    inp = rng.integers(0, 1 << 32, size=4 * 64, dtype=np.uint32)
    a, o = dev.to_device(inp), dev.empty(64 * 4)
    dev.launch(mod, "dp4a_vec", grid=1, block=64, args=[a, o])
    got = dev.to_host(o, np.int32, (64,)).astype(np.int64)
    v = inp.reshape(64, 4)
    s8 = v.view(np.int8).reshape(64, 4, 4).astype(np.int64)
    u8 = v.view(np.uint8).reshape(64, 4, 4).astype(np.int64)
    want = (s8[:, 0] * s8[:, 1]).sum(1) + v[:, 2].view(np.int32) + (u8[:, 3] * s8[:, 2]).sum(1)
    want = ((want + (1 << 31)) % (1 << 32)) - (1 << 31)
    assert np.array_equal(got, want)
