"""atom/red on the emulator (PTX ISA 9.7.12.3/4) against a sequential Python model.

The emulator serializes the threads of one atomic instruction that hit the same address in increasing thread order
(documented in ops/atomic.py); the reference replays exactly that order.  Float adds use numpy float32/float16/
ml_dtypes.bfloat16/float64 arithmetic (f16/bf16 sums computed in f32 then rounded once are exact: double rounding
from 24 to 11 or 8 bits is innocuous for addition).
"""
from __future__ import annotations

import os
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

KDIR = Path(__file__).resolve().parents[2] / "kernels"
NO32, NO64 = 20, 6
M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


def f32(b):
    return np.array(b, np.uint32).view(np.float32)


def ftz32(b):
    return b & 0x80000000 if (b & 0x7F800000) == 0 else b


def add_f32(a, b, ftz):
    if ftz:
        a, b = ftz32(a), ftz32(b)
    with np.errstate(all="ignore"):
        r = (f32(a) + f32(b)).view(np.uint32)
    r = int(r)
    if np.isnan(f32(r)):
        return 0x7FFFFFFF
    return ftz32(r) if ftz else r


def add_half2(a, b, dt):
    out = 0
    for sh in (0, 16):
        x = np.array((a >> sh) & 0xFFFF, np.uint16).view(dt)
        y = np.array((b >> sh) & 0xFFFF, np.uint16).view(dt)
        with np.errstate(all="ignore"):
            r = int((x + y).astype(dt).view(np.uint16))
        if np.isnan(np.array(r, np.uint16).view(dt)):
            r = 0x7FFF
        out |= r << sh
    return out


def add_f64(a, b):
    with np.errstate(all="ignore"):
        r = int((np.array(a, np.uint64).view(np.float64) + np.array(b, np.uint64).view(np.float64)).view(np.uint64))
    return 0x7FFFFFFFFFFFFFFF if np.isnan(np.array(r, np.uint64).view(np.float64)) else r


def s32(v):
    return v - (1 << 32) if v >> 31 else v


def s64(v):
    return v - (1 << 64) if v >> 63 else v


def op32(k, cur, v):
    """New memory value of 32-bit op k (kernel table) for old value cur and thread input v."""
    return [
        lambda: (cur + v) & M32, lambda: cur & (v | 0x00FF00FF), lambda: cur | (v & 0x01010101), lambda: cur ^ v,
        lambda: min(cur, v), lambda: max(cur, v), lambda: min(s32(cur), s32(v)) & M32,
        lambda: max(s32(cur), s32(v)) & M32,
        lambda: 0 if cur >= (v >> 28) else cur + 1,
        lambda: (v >> 28) if (cur == 0 or cur > (v >> 28)) else cur - 1,
        lambda: v, lambda: v if cur == ((v >> 8) & 3) else cur,
        lambda: add_f32(cur, v & 0x807FFFFF, True), lambda: add_half2(cur, v, np.float16),
        lambda: add_half2(cur, v, ml_dtypes.bfloat16), lambda: (cur + v) & M32,
    ][k]()


SH_OPS = [lambda c, v: (c + v) & M32, lambda c, v: add_f32(c, v, False),
          lambda c, v: v if c == ((v >> 8) & 3) else c, lambda c, v: v,
          lambda c, v: min(s32(c), s32(v)) & M32, lambda c, v: add_f32(c, v & 0x807FFFFF, False)]


def op64(k, cur, w):
    return [lambda: (cur + w) & M64, lambda: min(s64(cur), s64(w)) & M64, lambda: max(s64(cur), s64(w)) & M64,
            lambda: w if cur == ((w >> 40) & 3) else cur,
            lambda: add_f64(cur, w & 0x3FFFFFFFFFFFFFFF), lambda: w][k]()


def gen_x(rng, n):
    hi = (rng.integers(0, 2, n) << 15) | (rng.integers(120, 135, n) << 7) | rng.integers(0, 128, n)
    lo = (rng.integers(0, 2, n) << 15) | (rng.integers(10, 20, n) << 10) | rng.integers(0, 1024, n)
    x = ((hi << 16) | lo).astype(np.uint32)
    k = rng.choice(n, n // 16, replace=False)
    x[k] = rng.integers(0, 2 ** 32, k.size, dtype=np.uint64).astype(np.uint32) & np.uint32(0x807FFFFF)  # subnormals
    return x


def test_atom_ops(dev):
    seed = int.from_bytes(os.urandom(4), "little")
    rng = np.random.default_rng(seed)
    mod = ptxlab.compile((KDIR / "atom_ops.cu").read_text(), arch="sm_90a")
    nblk, bs = 2, 128
    n = nblk * bs
    x = gen_x(rng, n)
    rows32 = NO32 + 6 + nblk * 6
    g32 = rng.integers(0, 2 ** 32, rows32 * 4, dtype=np.uint64).astype(np.uint32)
    g32[11 * 4:12 * 4] = rng.integers(0, 4, 4)
    g32[8 * 4:10 * 4] = rng.integers(0, 20, 8)
    g32[12 * 4:13 * 4] = gen_x(rng, 4) & np.uint32(0x807FFFFF)
    g32[13 * 4:15 * 4] = gen_x(rng, 8)
    g32[(NO32 + 1) * 4:(NO32 + 2) * 4] = gen_x(rng, 4)
    g32[(NO32 + 5) * 4:(NO32 + 6) * 4] = gen_x(rng, 4) & np.uint32(0x807FFFFF)
    g32[(NO32 + 2) * 4:(NO32 + 3) * 4] = rng.integers(0, 4, 4)
    g64 = rng.integers(0, 2 ** 63, NO64 * 4, dtype=np.uint64)
    g64[3 * 4:4 * 4] = rng.integers(0, 4, 4)
    g64[4 * 4:5 * 4] &= np.uint64(0x3FFFFFFFFFFFFFFF)
    G32, G64, X = dev.to_device(g32), dev.to_device(g64), dev.to_device(x)
    O32, O64 = dev.empty(n * NO32 * 4), dev.empty(n * NO64 * 8)
    dev.memset(O32, 0xFF)
    dev.memset(O64, 0xFF)
    dev.launch(mod, "atom_ops", grid=(nblk, 1, 1), block=(bs, 1, 1), args=[G32, G64, X, O32, O64, np.uint32(n)])
    got32, got64 = dev.to_host(G32, np.uint32), dev.to_host(G64, np.uint64)
    old32 = dev.to_host(O32, np.uint32).reshape(n, NO32)
    old64 = dev.to_host(O64, np.uint64).reshape(n, NO64)

    mem = [int(v) for v in g32]
    mem64 = [int(v) for v in g64]
    exp_old32 = np.zeros((n, NO32), np.uint64)
    exp_old64 = np.zeros((n, NO64), np.uint64)
    xs = [int(v) for v in x]
    for k in range(16):                       # each instruction completes for all threads before the next one
        for i in range(n):
            a = k * 4 + xs[i] % 4
            if k < 15:
                exp_old32[i, k] = mem[a]
            mem[a] = op32(k, mem[a], xs[i])
    for b in range(nblk):
        sm = mem[NO32 * 4:(NO32 + 6) * 4]
        for k in range(6):
            for i in range(b * bs, (b + 1) * bs):
                a = k * 4 + xs[i] % 4
                if k < 5:
                    exp_old32[i, 15 + k] = sm[a]
                sm[a] = SH_OPS[k](sm[a], xs[i])
        base = (NO32 + 6 + b * 6) * 4
        mem[base:base + 24] = sm
    ws = [((xs[i] << 32) | xs[(i * 7 + 3) % n]) for i in range(n)]
    for k in range(NO64):
        for i in range(n):
            a = k * 4 + xs[i] % 4
            exp_old64[i, k] = mem64[a]
            mem64[a] = op64(k, mem64[a], ws[i])

    def show(bad, got, exp):
        return [(tuple(int(t) for t in b), hex(int(got[tuple(b)])), hex(int(exp[tuple(b)]))) for b in bad[:6]]
    g = got32.astype(np.uint64).reshape(-1, 4)
    e = np.array(mem, np.uint64).reshape(-1, 4)
    bad = np.argwhere(g != e)
    assert bad.size == 0, f"seed {seed}: final 32-bit memory (row=op, slot): {show(bad, g, e)}"
    bad = np.argwhere(old32.astype(np.uint64) != exp_old32)
    assert bad.size == 0, f"seed {seed}: returned 32-bit olds (thread, op): {show(bad, old32, exp_old32)}"
    e64 = np.array(mem64, np.uint64)
    bad = np.argwhere(got64 != e64)
    assert bad.size == 0, f"seed {seed}: final 64-bit memory: {show(bad, got64, e64)}"
    bad = np.argwhere(old64 != exp_old64)
    assert bad.size == 0, f"seed {seed}: returned 64-bit olds: {show(bad, old64, exp_old64)}"


def test_atom_bounds_and_alignment_diagnostics(dev):
    src = r'''extern "C" __global__ void k(unsigned* p, unsigned off) {
      atomicAdd((unsigned*)((char*)p + off), 1u); }'''
    mod = ptxlab.compile(src, arch="sm_90a")
    buf = dev.empty(64)
    with pytest.raises(EmuError, match="misaligned"):
        dev.launch(mod, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[buf, np.uint32(2)])
    with pytest.raises(EmuError, match="out-of-bounds"):
        dev.launch(mod, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[buf, np.uint32(4096)])


def test_vector_atom_f32(dev):
    """atom.global.v2.f32.add / red.global.v4.f32.add (sm_90): every thread adds to the same vector."""
    src = r'''extern "C" __global__ void k(float* acc, const float* x, float* old) {
      unsigned t = threadIdx.x; float a, b;
      asm volatile("atom.global.v2.f32.add {%0, %1}, [%2], {%3, %4};" : "=f"(a), "=f"(b)
                   : "l"(acc), "f"(x[2 * t]), "f"(x[2 * t + 1]));
      old[2 * t] = a; old[2 * t + 1] = b;
      asm volatile("red.global.v4.f32.add [%0], {%1, %2, %3, %4};" :: "l"(acc + 4), "f"(x[t]), "f"(x[t + 1]),
                   "f"(x[t + 2]), "f"(x[t + 3])); }'''
    seed = int.from_bytes(os.urandom(4), "little")
    rng = np.random.default_rng(seed)
    mod = ptxlab.compile(src, arch="sm_90a")
    x = rng.standard_normal(70).astype(np.float32)
    acc0 = rng.standard_normal(8).astype(np.float32)
    A, X, O = dev.to_device(acc0), dev.to_device(x), dev.empty(64 * 4)
    dev.memset(O, 0xFF)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[A, X, O])
    acc = acc0.copy()
    exp_old = np.zeros(64, np.float32)
    for t in range(32):
        exp_old[2 * t:2 * t + 2] = acc[0:2]
        acc[0:2] = acc[0:2] + x[2 * t:2 * t + 2]
    for t in range(32):
        acc[4:8] = acc[4:8] + x[t:t + 4]
    assert (dev.to_host(A, np.float32).view(np.uint32) == acc.view(np.uint32)).all(), f"seed {seed}"
    assert (dev.to_host(O, np.float32).view(np.uint32) == exp_old.view(np.uint32)).all(), f"seed {seed}"
