"""Warp-level ops on the emulator (PTX ISA 9.7.8) against a per-warp Python reference written from the spec."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

KDIR = Path(__file__).resolve().parents[2] / "kernels"
NOPS = 28
POISON = 0xFFFFFFFF


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


def shfl_ref(vals, lane, mode, b, c):
    """PTX ISA 9.7.8.6 pseudo-code for one lane."""
    bval, cval, seg = b & 31, c & 31, (c >> 8) & 31
    max_lane = (lane & seg) | (cval & ~seg)
    min_lane = lane & seg
    if mode == "up":
        j = lane - bval
        p = j >= max_lane
    elif mode == "down":
        j = lane + bval
        p = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        p = j <= max_lane
    else:
        j = min_lane | (bval & ~seg & 31)
        p = j <= max_lane
    if not p:
        j = lane
    return vals[j], int(p)


def warp_ref(x, ctl):
    """Expected out rows (32, NOPS) for one warp with inputs x (32 ints)."""
    out = np.full((32, NOPS), POISON, dtype=np.uint64)
    full = range(32)
    for ln in full:
        for k, (mode, b, c) in enumerate((("up", ctl[0], ctl[1]), ("down", ctl[2], ctl[3]),
                                          ("bfly", ctl[4], ctl[5]), ("idx", x[ln] >> 8, ctl[6]))):
            out[ln, 2 * k], out[ln, 2 * k + 1] = shfl_ref(x, ln, mode, b, c)
    bits = [v & 1 for v in x]
    ballot = sum(1 << ln for ln in full if bits[ln])
    s3 = [v & 3 for v in x]
    ma = [x[ln] & ctl[7] for ln in full]
    x64 = [((v & 1) << 40) | ((v >> 1) & 1) for v in x]
    s32 = [v - (1 << 32) if v >> 31 else v for v in x]
    a_and, a_or, a_xor = 0xFFFFFFFF, 0, 0
    for v in x:
        a_and &= v | 0x0F0F0F0F
        a_or |= v & 0x10101010
        a_xor ^= v
    m4 = sum(1 << ln for ln in full if x[ln] & 4)
    for ln in full:
        out[ln, 8] = ballot
        out[ln, 9] = int(all(bits))
        out[ln, 10] = int(any(not b for b in bits))
        out[ln, 11] = int(all(bits) or not any(bits))
        out[ln, 12] = sum(1 << k for k in full if s3[k] == s3[ln])
        same = all(v == ma[0] for v in ma)
        out[ln, 13] = 0xFFFFFFFF if same else 0
        out[ln, 14] = int(same)
        out[ln, 15] = sum(x) & 0xFFFFFFFF
        out[ln, 16] = min(s32) & 0xFFFFFFFF
        out[ln, 17] = max(x)
        out[ln, 18], out[ln, 19], out[ln, 20] = a_and, a_or, a_xor
        out[ln, 21] = sum(1 << k for k in full if x64[k] == x64[ln])
        if x[ln] & 4:
            members = [k for k in full if m4 >> k & 1]
            out[ln, 22] = m4
            out[ln, 23] = members[0]
            out[ln, 24] = int(ln == members[0])
            out[ln, 25] = sum(x[k] for k in members) & 0xFFFFFFFF
            hi = [k for k in members if k >= 16]
            src = hi[0] if hi else members[0]
            out[ln, 26] = x[src]
            out[ln, 27] = m4
    return out


def test_warp_ops(dev):
    seed = int.from_bytes(os.urandom(4), "little")
    rng = np.random.default_rng(seed)
    mod = ptxlab.compile((KDIR / "warp_ops.cu").read_text(), arch="sm_90a")
    nblk, bs = 3, 128
    n = nblk * bs
    x = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    # make some warps uniform for vote.all/uni and match.all hits
    x[32:64] |= 1
    x[64:96] &= ~np.uint32(1)
    ctl = np.array([rng.integers(0, 40), rng.integers(0, 1 << 13), rng.integers(0, 40), rng.integers(0, 1 << 13),
                    rng.integers(0, 32), rng.integers(0, 1 << 13), rng.integers(0, 1 << 13), 0], dtype=np.uint32)
    # c with segment masks: pick common shapes half of the time (width 8/16 segments)
    if rng.random() < 0.5:
        ctl[1], ctl[3], ctl[5], ctl[6] = 0x1800, 0x181F, 0x101F, 0x181F
    ctl[7] = np.uint32(0x40000000)
    x[96:128] = (x[96:128] & ~np.uint32(0x40000000))         # match.all true in warp 3 of block 0
    X, C = dev.to_device(x), dev.to_device(ctl)
    out = dev.empty(n * NOPS * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "warp_ops", grid=(nblk, 1, 1), block=(bs, 1, 1), args=[X, C, out, np.uint32(n)])
    got = dev.to_host(out, np.uint32).reshape(n, NOPS)
    for w in range(n // 32):
        exp = warp_ref([int(v) for v in x[w * 32:(w + 1) * 32]], [int(v) for v in ctl])
        g = got[w * 32:(w + 1) * 32].astype(np.uint64)
        bad = np.argwhere(g != exp)
        assert bad.size == 0, (f"seed {seed} ctl {ctl.tolist()} warp {w}: first mismatches (lane, op) "
                               f"{bad[:6].tolist()} got {[hex(int(g[tuple(b)])) for b in bad[:6]]} "
                               f"expected {[hex(int(exp[tuple(b)])) for b in bad[:6]]}")


def _launch_src(dev, src, block=32):
    mod = ptxlab.compile(src, arch="sm_90a")
    y = dev.empty(4 * block)
    dev.memset(y, 0xFF)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(block, 1, 1), args=[y])
    return dev.to_host(y, np.uint32)


def test_lane_not_in_membermask_faults(dev):
    src = r'''extern "C" __global__ void k(unsigned* y) { unsigned r;
      asm volatile("shfl.sync.idx.b32 %0, %1, 0, 31, %2;" : "=r"(r) : "r"(threadIdx.x), "r"(0xFFFFu));
      y[threadIdx.x] = r; }'''
    with pytest.raises(EmuError, match="membermask"):
        _launch_src(dev, src)


def test_sync_waits_for_diverged_lanes_and_exited(dev):
    """Lanes 0-15 reach the shfl first; lanes 16-31 do extra work before it: results must still be exchanged.
    Lanes >= 28 exit early: the full-mask shfl must not wait for them (they are exited)."""
    src = r'''extern "C" __global__ void k(unsigned* y) {
      unsigned t = threadIdx.x, v = t * 3 + 1;
      if (t >= 28) return;
      if (t >= 16) { for (int i = 0; i < 5; ++i) v = v * 7 + i; }
      unsigned r = __shfl_sync(0x0FFFFFFFu, v, (t + 1) % 28);
      y[t] = r; }'''
    got = _launch_src(dev, src)
    v = []
    for t in range(28):
        vv = t * 3 + 1
        if t >= 16:
            for i in range(5):
                vv = (vv * 7 + i) & 0xFFFFFFFF
        v.append(vv)
    exp = [v[(t + 1) % 28] for t in range(28)] + [0xFFFFFFFF] * 4
    assert got.tolist() == exp


def _f32_key(b):
    v = np.array(b, np.uint32).view(np.float32)
    return (float(v), 0 if b >> 31 else 1)      # -0 < +0


def test_redux_f32_sm100(dev):
    seed = int.from_bytes(os.urandom(4), "little")
    rng = np.random.default_rng(seed)
    mod = ptxlab.compile((KDIR / "warp_ops.cu").read_text(), arch="sm_100a")
    n = 128
    x = rng.standard_normal(n).astype(np.float32).view(np.uint32)
    x[0:32] = rng.choice(np.array([0, 0x80000000, 0x7FC00000, 0x3F800000, 0xBF800000], np.uint32), 32)
    x[32:64][rng.random(32) < 0.2] = 0x7FC00001                 # some NaNs in warp 1
    x[64:96] = 0x7FC00000                                       # all-NaN warp
    X, O = dev.to_device(x), dev.empty(n * 16)
    dev.memset(O, 0xFF)
    dev.launch(mod, "warp_redux_f32", grid=(1, 1, 1), block=(n, 1, 1), args=[X, O])
    got = dev.to_host(O, np.uint32).reshape(n, 4)
    for w in range(n // 32):
        xs = [int(v) for v in x[w * 32:(w + 1) * 32]]
        isn = [np.isnan(np.array(v, np.uint32).view(np.float32)) for v in xs]
        num = [v for v, q in zip(xs, isn) if not q]
        nums_abs = [v & 0x7FFFFFFF for v in num]
        exp = [min(num, key=_f32_key) if num else 0x7FFFFFFF, max(num, key=_f32_key) if num else 0x7FFFFFFF,
               min(nums_abs, key=_f32_key) if num else 0x7FFFFFFF,
               0x7FFFFFFF if any(isn) else max(num, key=_f32_key)]
        for k in range(4):
            assert (got[w * 32:(w + 1) * 32, k] == exp[k]).all(), \
                f"seed {seed} warp {w} op {k}: got {hex(int(got[w * 32, k]))} expected {hex(exp[k])}"
