"""The H100's lowerings of FP8 m16n8k32 and m8n8k4 mma.sync (ptxlab/emu/hw/warp_mma_sm90.py) against the H100's
own outputs: every word of the corpus entries mma_sync_fp8, mma_sync_m8n8k4_f32, mma_sync_m8n8k4 and
mma_sync_m8n8k4_rounding (tests/fidelity/isa/data/README.md), then constructed cases where the lowering differs from
the one-window tensor-core rule."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ptxlab.emu.hw.warp_mma_arith import mma_float
from ptxlab.emu.hw.warp_mma_sm90 import mma_fp8_sm90, mma_m8n8k4_f16_sm90, mma_m8n8k4_f32_sm90

DATA = Path(__file__).resolve().parents[2] / "fidelity" / "isa" / "data" / "h100_20261128_fp8_mma.npz"
DATA_F16 = DATA.with_name("h100_20261128_m8n8k4_f16.npz")
FP8 = [f"{a}_{b}" for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2")]
M884 = [f"a{a}b{b}f1" for a in (0, 1) for b in (0, 1)]


@pytest.mark.parametrize("case", FP8)
def test_fp8_every_h100_word(case):
    z = np.load(DATA)
    at, bt = case.split("_")
    a, b, c = (z[f"mma_sync_fp8::in::mma_m16n8k32_{case}_{x}"] for x in "abc")
    hw = z[f"mma_sync_fp8::out::mma_m16n8k32_{case}"]
    for p in range(hw.shape[0]):                 # problem 0 exact regime, problem 1 full range (NaN / Inf codes)
        np.testing.assert_array_equal(mma_fp8_sm90(a[p], b[p].T, c[p], at, bt), hw[p])
    assert (hw[1] == 0x7FFFFFFF).any()          # the full-range problem reached the NaN rule


@pytest.mark.parametrize("key", M884)
def test_m8n8k4_f32_every_h100_word(key):
    z = np.load(DATA)
    a, b, c = (z[f"mma_sync_m8n8k4_f32::in::{key}_{x}"] for x in "abc")
    hw = z[f"mma_sync_m8n8k4_f32::out::{key}"]
    for p in range(hw.shape[0]):                 # problems 0-3 exact, 4-7 full range
        np.testing.assert_array_equal(mma_m8n8k4_f32_sm90(a[p], b[p].T, c[p]), hw[p])


@pytest.mark.parametrize("seed", [271828, 161803])
def test_m8n8k4_f16_every_h100_word(seed):
    """f16 C and D: the f32 tree then one f16 rounding reproduces every word of both seeds; the one-window rule
    (what the emulator used before) misses the probe's double-rounding cases."""
    z = np.load(DATA_F16)
    cases = [("mma_sync_m8n8k4_rounding", "a0b1f0")] + [("mma_sync_m8n8k4", f"a{a}b{b}f0") for a in (0, 1)
                                                          for b in (0, 1)]
    window_misses = 0
    for entry, key in cases:
        a, b, c = (z[f"s{seed}/{entry}::in::{key}_{x}"].astype(np.uint32) for x in "abc")
        hw = z[f"s{seed}/{entry}::out::{key}"].astype(np.uint32)
        for p in range(hw.shape[0]):
            np.testing.assert_array_equal(mma_m8n8k4_f16_sm90(a[p], b[p].T, c[p]), hw[p], err_msg=f"{entry} {key} {p}")
            if entry.endswith("rounding"):
                window_misses += int((mma_float(a[p], b[p].T, c[p], "f16", "f16", "f16") != hw[p]).sum())
    assert window_misses == 232
    assert (hw == 0x7FFF).any()                  # the full-range problems reached the NaN rule


def test_m8n8k4_f16_pair_order_of_the_sass():
    """C + (p0 + p1) first, then + (p2 + p3), then F2FP (the SASS's register trace; the H100 words fit either order).
    C = 1.5, p = (-2**-11, 2**-24, -2**-23, 0): 1.5 - 2**-11 + 2**-24 ties to even in f32 (1.5 - 2**-11), minus 2**-23
    lies below the f16 midpoint -> 1.5 - 2**-10; the other pair first ends on the midpoint itself -> 1.5 (even)."""
    f16 = lambda x: np.asarray(x, np.float16).view(np.uint16).astype(np.uint32)       # noqa: E731
    a = np.zeros((8, 4), np.float16)
    b = np.ones((4, 8), np.float16)
    a[0] = [-2.0 ** -11, 2.0 ** -24, -2.0 ** -23, 0.0]
    a[1] = [-2.0 ** -23, 0.0, -2.0 ** -11, 2.0 ** -24]     # the pairs swapped: the other result
    c = np.full((8, 8), 1.5, np.float16)
    d = mma_m8n8k4_f16_sm90(f16(a), f16(b), f16(c)).astype(np.uint16).view(np.float16)
    f32 = np.float32
    sass = (f32(1.5) + (f32(-2.0 ** -11) + f32(2.0 ** -24))) + (f32(-2.0 ** -23) + f32(0.0))
    other = (f32(1.5) + (f32(-2.0 ** -23) + f32(0.0))) + (f32(-2.0 ** -11) + f32(2.0 ** -24))
    assert (np.float16(sass), np.float16(other)) == (np.float16(1.5 - 2.0 ** -10), np.float16(1.5))
    assert np.all(d[0] == np.float16(sass)) and np.all(d[1] == np.float16(other))
    assert np.all(d[2:] == 1.5)


def _e4m3(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.float8_e4m3fn).view(np.uint8).astype(np.uint32)


def test_fp8_groups_then_c_by_add_rn(rng):
    """k % 4 < 2 first (a 25-bit window, truncated), then k % 4 >= 2, then C rounded to nearest: a product of 2**16
    in the first group truncates 2**-10 to nothing; in the second group's window it survives as part of the f32
    accumulator; C = 2**-9 is added by add.rn."""
    a = np.zeros((16, 32), np.float32)
    b = np.zeros((32, 8), np.float32)
    a[0, 0], b[0, 0] = 256.0, 256.0              # 2**16, group 1 (k = 0)
    a[0, 1], b[1, 0] = 2.0 ** -5, 2.0 ** -5      # 2**-10, group 1: below 2**(16 - 25): truncated away
    a[0, 2], b[2, 0] = 2.0 ** -5, 2.0 ** -4      # 2**-9, group 2 (k = 2): window of 2**16 again: truncated away
    c = np.zeros((16, 8), np.float32)
    c[0, 0] = np.float32(3.0)
    d = mma_fp8_sm90(_e4m3(a), _e4m3(b), c.view(np.uint32), "e4m3", "e4m3").view(np.float32)
    assert d[0, 0] == np.float32(65536.0 + 3.0)
    one = mma_float(_e4m3(a), _e4m3(b), c.view(np.uint32), "e4m3", "e4m3", "f32").view(np.float32)
    assert one[0, 0] == d[0, 0]                  # one window gives the same here ...
    c[0, 0] = np.float32(2.0 ** -8 + 2.0 ** -30)   # ... but C is rounded to nearest only by the lowering's add
    cw = c.view(np.uint32)
    d = mma_fp8_sm90(_e4m3(a), _e4m3(b), cw, "e4m3", "e4m3").view(np.float32)[0, 0]
    assert d == np.float32(65536.0) + np.float32(2.0 ** -8 + 2.0 ** -30)
    assert mma_float(_e4m3(a), _e4m3(b), cw, "e4m3", "e4m3", "f32").view(np.float32)[0, 0] == np.float32(65536.0)
    rand = rng.integers(0, 256, (2, 16, 32)).astype(np.uint32)
    rand[rand & 0x7F == 0x7F] = 0x38                # no NaN codes: a finite random problem agrees with float64
    d = mma_fp8_sm90(rand[0], rand[1].T[:, :8].copy(), np.zeros((16, 8), np.uint32), "e4m3", "e4m3").view(np.float32)
    av, bv = (x.astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64) for x in (rand[0], rand[1].T[:, :8]))
    ref = av @ bv                                 # each step loses < 2 units of 2**-23 relative to the largest term
    assert np.all(np.abs(d - ref) <= (np.abs(av) @ np.abs(bv)) * 2.0 ** -20)


def test_m8n8k4_f32_is_an_fma_chain_then_add(rng):
    """d = a0 b0; d = fma.rn(a_k, b_k, d) for k = 1..3; D = d + C (round to nearest): a case where every step rounds."""
    f16 = lambda x: np.asarray(x, np.float16).view(np.uint16).astype(np.uint32)       # noqa: E731
    a = np.ones((8, 4), np.float16)
    b = np.ones((4, 8), np.float16)
    a[0] = [2048.0, 2.0 ** -13, 2.0 ** -13, 0.0]   # half an f32 ulp of 2048 twice: each step rounds to even
    c = np.full((8, 8), np.float32(1.0))
    c[0, 0] = np.float32(0.0)
    d = mma_m8n8k4_f32_sm90(f16(a), f16(b), c.view(np.uint32)).view(np.float32)
    assert d[0, 0] == np.float32(2048.0)
    assert np.float32(2048.0 + 2.0 ** -12) != np.float32(2048.0)           # the exact sum is one ulp higher
    one = mma_float(f16(a), f16(b), c.view(np.uint32), "f16", "f16", "f32").view(np.float32)
    assert one[0, 0] == np.float32(2048.0 + 2.0 ** -12)                     # the one-window rule keeps it
    assert np.all(d[1:] == np.float32(5.0))


def test_m8n8k4_f32_signed_zeros_follow_the_fma_chain_from_plus_zero():
    """FFMA d, a0, b0, RZ: a -0 product becomes +0, so D = +0 + C; with C = -0 the result is +0 too."""
    a = np.zeros((8, 4), np.uint32)
    a[:, :] = 0x8000                              # -0.0 everywhere: every product -0
    b = np.full((4, 8), 0x3C00, np.uint32)        # 1.0
    c = np.zeros((8, 8), np.uint32)
    c[0] = 0x80000000                             # C = -0 in row 0
    c[1] = 0xBF800000                             # C = -1 in row 1
    d = mma_m8n8k4_f32_sm90(a, b, c)
    assert np.all(d[0] == 0) and np.all(d[1] == 0xBF800000) and np.all(d[2:] == 0)


SASS_SRC = r"""
#include <cstdint>
extern "C" __global__ void fp8(const uint32_t* A, uint32_t* D) {
  uint32_t a[4], b[2]; float c[4], d[4];
  for (int i = 0; i < 4; ++i) { a[i] = A[threadIdx.x * 8 + i]; c[i] = __uint_as_float(A[threadIdx.x * 8 + 4 + i]); }
  b[0] = A[256 + threadIdx.x]; b[1] = A[300 + threadIdx.x];
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%10,%11,%12,%13};" : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : "r"(a[0]), "r"(a[1]),
               "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; ++i) D[threadIdx.x * 4 + i] = __float_as_uint(d[i]);
}
extern "C" __global__ void m884(const uint32_t* A, uint32_t* D) {
  uint32_t a[2], b[2]; float c[8], d[8];
  for (int i = 0; i < 2; ++i) { a[i] = A[threadIdx.x * 16 + i]; b[i] = A[threadIdx.x * 16 + 2 + i]; }
  for (int i = 0; i < 8; ++i) c[i] = __uint_as_float(A[threadIdx.x * 16 + 4 + i]);
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, "
               "{%12,%13,%14,%15,%16,%17,%18,%19};" : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]),
               "=f"(d[5]), "=f"(d[6]), "=f"(d[7]) : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
               "f"(c[2]), "f"(c[3]), "f"(c[4]), "f"(c[5]), "f"(c[6]), "f"(c[7]));
  for (int i = 0; i < 8; ++i) D[threadIdx.x * 8 + i] = __float_as_uint(d[i]);
}
extern "C" __global__ void m884h(const uint32_t* A, uint32_t* D) {
  uint32_t a[2], b[2], c[4], d[4];
  for (int i = 0; i < 2; ++i) { a[i] = A[threadIdx.x * 8 + i]; b[i] = A[threadIdx.x * 8 + 2 + i]; }
  for (int i = 0; i < 4; ++i) c[i] = A[threadIdx.x * 8 + 4 + i];
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]),
               "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  for (int i = 0; i < 4; ++i) D[threadIdx.x * 4 + i] = d[i];
}
"""


def _sass_ops(sass: str, fn: str) -> list:
    import re
    body = re.split(r"\n\.text\.(\w+):", sass)
    seg = dict(zip(body[1::2], body[2::2]))[fn]
    return re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);", seg)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptxas_lowers_them_as_modelled(arch):
    """The SASS for sm_90a (and sm_100a, where the emulator applies the same rules) is the lowering the rules describe
    (module doc of hw/warp_mma_sm90.py)."""
    import ptxlab
    sass = ptxlab.compile(SASS_SRC, arch=arch, name="lowering.cu").sass()
    ops = [(o, args) for o, args in _sass_ops(sass, "fp8") if o.startswith(("F2FP", "HMMA", "FADD", "FFMA"))]
    names = [o for o, _ in ops]
    assert names[:12] == ["F2FP.F16.E4M3.UNPACK_B"] * 12, names   # A (4 regs) and B (2 regs): low and high halves
    mmas = [args for o, args in ops if o.startswith("HMMA")]
    assert [o for o in names if o.startswith("HMMA")] == ["HMMA.16816.F32"] * 2
    assert mmas[0].rstrip().endswith("RZ")                      # the first MMA starts from C = 0
    assert names[-4:] == ["FADD"] * 4                           # C added last, one FADD per accumulator
    ops = [o for o, _ in _sass_ops(sass, "m884")]
    assert not any(o.startswith("HMMA") for o in ops)           # no tensor instruction: an FFMA chain
    assert ops.count("FFMA") == 8 * 4 and ops.count("FADD") == 8
    ops = [o for o, _ in _sass_ops(sass, "m884h")]             # f16 C / D: per element FMUL + FFMA per pair of
    assert not any(o.startswith("HMMA") for o in ops)           # products, two FADD, then one F2FP per two elements
    assert (ops.count("FMUL"), ops.count("FFMA"), ops.count("FADD")) == (16, 16, 16)
    assert ops.count("F2FP.F16.F32.PACK_AB") == 4
