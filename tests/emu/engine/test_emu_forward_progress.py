"""Forward progress (ptx_docs/emulator_checks.md "Forward progress"): a spin-wait on a flag that another warp, lane
or CTA of the same wave sets *after* the loop must complete, as on Volta+ hardware with independent thread
scheduling. Before the rule the min-PC scheduler ran the lowest-PC group (the spinners) forever and the watchdog
fired. The same kernels run on the H100 in tests/gpu/test_cuda_forward_progress.py."""
import warnings

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.engine import machine
from ptxlab.errors import EmuError

SRC = r'''
// warps 1..3 wait for warp 0, which writes the flag after the loop (higher PC)
extern "C" __global__ void warp_handoff(volatile unsigned* flag, const unsigned* x, unsigned* y) {
  unsigned t = threadIdx.x;
  if (t >= 32u) { while (flag[0] == 0u) { } }
  if (t == 0u) flag[0] = x[128] | 1u;
  y[t] = x[t] * 3u + (t >= 32u || t == 0u ? flag[0] : 5u);   // only threads ordered after the write read the flag
}

// lane 0 of the warp waits for lane 5 of the same warp (independent thread scheduling inside a warp)
extern "C" __global__ void lane_handoff(volatile unsigned* flag, const unsigned* x, unsigned* y) {
  unsigned t = threadIdx.x;
  if (t == 0u) { while (flag[0] == 0u) { } }
  if (t == 5u) flag[0] = x[32] | 1u;
  __syncwarp();
  y[t] = x[t] ^ flag[0];
}

// CTA 1 waits for CTA 0 (both in one wave)
extern "C" __global__ void cta_handoff(volatile unsigned* flag, const unsigned* x, unsigned* y) {
  unsigned t = threadIdx.x, b = blockIdx.x;
  if (b == 1u) { while (flag[0] == 0u) { } }
  if (b == 0u && t == 0u) { __threadfence(); flag[0] = x[128] | 1u; }
  y[b * 64u + t] = x[b * 64u + t] + (b == 1u || t == 0u ? flag[0] : 9u);
}

// a chain: warp w < 3 waits for warp w + 1, which releases it only after its own wait
extern "C" __global__ void chain(volatile unsigned* flag, const unsigned* x, unsigned* y) {
  unsigned t = threadIdx.x, w = t >> 5;
  if (w < 3u) { while (flag[w + 1u] == 0u) { } }
  if ((t & 31u) == 0u) flag[w] = x[w] | 1u;
  y[t] = x[t] + ((t & 31u) == 0u ? flag[w] : 0u) + (w < 3u ? flag[w + 1u] : 0u);
}

// data-dependent trip counts of up to ~1200 iterations, then a warp shuffle: the lanes that left the loop early may
// run ahead, and shfl.sync still sees every lane's final value
extern "C" __global__ void ragged(const unsigned* x, unsigned* y) {
  unsigned t = threadIdx.x, a = x[t], n = (x[t] >> 3) % 1200u;
  for (unsigned k = 0; k < n; ++k) a = a * 1664525u + 1013904223u;
  y[t] = a ^ __shfl_sync(0xffffffffu, a, (t + 1u) & 31u);
}
'''


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_90a", name="forward_progress.cu")


def _run(mod, kernel, xs, nflags, nout, grid, block, stall=20.0):
    dev = ptxlab.open_device("emu", stall_seconds=stall)
    flag, x, y = dev.to_device(np.zeros(nflags, np.uint32)), dev.to_device(xs), dev.empty(4 * nout)
    dev.memset(y, 0xA5)                                      # poisoned
    with warnings.catch_warnings():
        warnings.simplefilter("error")                       # no warning either
        dev.launch(mod, kernel, grid=grid, block=block, args=[flag, x, y])
    return dev.to_host(flag, np.uint32), dev.to_host(y, np.uint32)


def test_warp_waits_for_a_later_warp(mod, rng):
    xs = rng.integers(1, 2**31, 129, dtype=np.uint32)
    flag, y = _run(mod, "warp_handoff", xs, 1, 128, (1, 1, 1), (128, 1, 1))
    f = xs[128] | 1
    t = np.arange(128)
    assert flag[0] == f and (y == (xs[:128] * 3 + np.where((t >= 32) | (t == 0), f, 5)).astype(np.uint32)).all()


def test_lane_waits_for_a_later_lane_of_its_warp(mod, rng):
    xs = rng.integers(1, 2**31, 33, dtype=np.uint32)
    flag, y = _run(mod, "lane_handoff", xs, 1, 32, (1, 1, 1), (32, 1, 1))
    f = xs[32] | 1
    assert flag[0] == f and (y == xs[:32] ^ f).all()


def test_cta_waits_for_another_cta_of_its_wave(mod, rng):
    xs = rng.integers(1, 2**31, 129, dtype=np.uint32)
    flag, y = _run(mod, "cta_handoff", xs, 1, 128, (2, 1, 1), (64, 1, 1))
    f = xs[128] | 1
    t = np.arange(128)
    assert flag[0] == f and (y == (xs[:128] + np.where((t >= 64) | (t == 0), f, 9)).astype(np.uint32)).all()


def test_chain_of_waiting_warps(mod, rng):
    xs = rng.integers(1, 2**31, 128, dtype=np.uint32)
    flag, y = _run(mod, "chain", xs, 4, 128, (1, 1, 1), (128, 1, 1))
    fl = xs[:4] | 1
    assert (flag == fl).all()
    w = np.arange(128) >> 5
    want = xs + np.where(np.arange(128) % 32 == 0, fl[w], 0) + np.where(w < 3, fl[np.minimum(w + 1, 3)], 0)
    assert (y == want.astype(np.uint32)).all()


def test_ragged_loop_then_shuffle(mod, rng):
    xs = rng.integers(1, 2**32, 64, dtype=np.uint32)
    dev = ptxlab.open_device("emu")
    x, y = dev.to_device(xs), dev.empty(4 * 64)
    dev.memset(y, 0xA5)
    dev.launch(mod, "ragged", grid=(1, 1, 1), block=(64, 1, 1), args=[x, y])
    a = xs.astype(np.uint64)
    n = (xs >> 3) % 1200
    for k in range(int(n.max())):
        a = np.where(k < n, (a * 1664525 + 1013904223) & 0xFFFFFFFF, a)
    a = a.astype(np.uint32)
    t = np.arange(64)
    partner = (t & ~31) | ((t + 1) & 31)
    assert (dev.to_host(y, np.uint32) == a ^ a[partner]).all()


def test_spin_without_writer_still_fires_the_watchdog(mod, rng):
    """The rule lets others run first; it does not hide a spin that can never end: the chain with 3 warps, so warp 2
    waits for a warp 3 that does not exist."""
    dev = ptxlab.open_device("emu", stall_seconds=1.0)
    xs = rng.integers(1, 2**31, 128, dtype=np.uint32)
    flag, x, y = dev.to_device(np.zeros(4, np.uint32)), dev.to_device(xs), dev.empty(4 * 128)
    with pytest.raises(EmuError, match="no forward progress") as ei:
        dev.launch(mod, "chain", grid=(1, 1, 1), block=(96, 1, 1), args=[flag, x, y])
    msg = str(ei.value)
    assert "block (0, 0, 0) warp 2: spinning" in msg
    assert "warp 0: spinning" in msg and "warp 1: spinning" in msg


def test_the_rule_is_what_makes_the_handoff_complete(mod, rng, monkeypatch):
    """With the yield disabled (a pick limit no loop reaches) the old min-PC schedule starves the writer."""
    monkeypatch.setattr(machine, "SPIN_PICKS", 10**12)
    xs = rng.integers(1, 2**31, 129, dtype=np.uint32)
    with pytest.raises(EmuError, match="no forward progress"):
        _run(mod, "warp_handoff", xs, 1, 128, (1, 1, 1), (128, 1, 1), stall=1.0)
