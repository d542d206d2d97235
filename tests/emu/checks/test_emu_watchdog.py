"""The runaway-launch watchdog (ptxlab/emu/checks/watchdog.py): the instruction budget is per launch, a no-progress
wall-clock limit reports spinning warps with their lines, and hopeless launches are refused with an estimate."""
import re
import time
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.checks import watchdog
from ptxlab.errors import EmuError

ROOT = Path(__file__).resolve().parents[3]

WORK = r'''
extern "C" __global__ void work(const unsigned* x, unsigned* y, unsigned iters) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned a = x[i];
  for (unsigned k = 0; k < iters; ++k) a = a * 1664525u + 1013904223u;
  y[i] = a;
}'''

SPIN = r'''
extern "C" __global__ void spin(volatile unsigned* flag, unsigned* y) {
  while (flag[0] == 0u) { }
  y[threadIdx.x] = 1u;
}'''

BARRIER_LOOP = r'''
extern "C" __global__ void barloop(const unsigned* x, unsigned* y, unsigned iters) {
  __shared__ unsigned s[128];
  unsigned a = x[threadIdx.x];
  for (unsigned k = 0; k < iters; ++k) {
    s[threadIdx.x] = a;
    __syncthreads();
    a += s[(threadIdx.x + 1u) & 127u];
    __syncthreads();
  }
  y[threadIdx.x] = a;
}'''


def _lcg(a: np.ndarray, iters: int) -> np.ndarray:
    a = a.astype(np.uint64)
    for _ in range(iters):
        a = (a * 1664525 + 1013904223) & 0xFFFFFFFF
    return a.astype(np.uint32)


def test_budget_is_per_launch_not_per_wave(rng):
    """8 waves of 8192 threads; each wave alone is under the budget, the launch is not."""
    mod = ptxlab.compile(WORK, arch="sm_90a", name="work.cu")
    n, iters = 64 * 1024, int(rng.integers(200, 260))
    xs = rng.integers(1, 2**32, n, dtype=np.uint32)
    big = ptxlab.open_device("emu")
    x, y = big.to_device(xs), big.empty(4 * n)
    big.memset(y, 0xFF)
    big.launch(mod, "work", grid=(64, 1, 1), block=(1024, 1, 1), args=[x, y, np.uint32(iters)])
    assert (big.to_host(y, np.uint32) == _lcg(xs, iters)).all()
    total = big.last_stats["thread_instrs"]
    assert big.last_stats["waves"] == 8
    small = ptxlab.open_device("emu", budget=int(total * 0.6))     # > one wave (total / 8), < the launch
    x2, y2 = small.to_device(xs), small.empty(4 * n)
    with pytest.raises(EmuError) as ei:
        small.launch(mod, "work", grid=(64, 1, 1), block=(1024, 1, 1), args=[x2, y2, np.uint32(iters)])
    msg = str(ei.value)
    assert "instruction budget exceeded" in msg and "per launch" in msg and "PTXLAB_EMU_BUDGET" in msg


def test_hopeless_launch_is_refused_with_estimate():
    mod = ptxlab.compile(WORK, arch="sm_90a", name="work.cu")
    dev = ptxlab.open_device("emu")
    x, y = dev.empty(16), dev.empty(16)
    t0 = time.monotonic()
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "work", grid=(2**31 - 1, 1, 1), block=(1024, 1, 1), args=[x, y, np.uint32(3)])
    assert time.monotonic() - t0 < 5
    msg = str(ei.value)
    assert "launch refused" in msg and f"{(2**31 - 1) * 1024:,} threads" in msg
    assert "PTXLAB_EMU_BUDGET" in msg and re.search(r"need at least [\d.,]+ (hours|days)", msg)
    # also with an explicitly small budget: 64 x 1024 threads x >= 5 instructions > 1e5, each wave (8192 x ...) is not
    small = ptxlab.open_device("emu", budget=100_000)
    x, y = small.empty(4 * 65536), small.empty(4 * 65536)
    with pytest.raises(EmuError, match="launch refused"):
        small.launch(mod, "work", grid=(64, 1, 1), block=(1024, 1, 1), args=[x, y, np.uint32(0)])


def test_shortest_path_is_a_lower_bound(rng):
    mod = ptxlab.compile(WORK, arch="sm_90a", name="work.cu")
    dev = ptxlab.open_device("emu")
    n = 256
    xs = rng.integers(1, 2**32, n, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * n)
    dev.launch(mod, "work", grid=(2, 1, 1), block=(128, 1, 1), args=[x, y, np.uint32(0)])
    per = watchdog.shortest_path_instrs(dev.program(mod, "work"))
    assert 1 <= per and n * per <= dev.last_stats["thread_instrs"]


def _stalled(src: str, kernel: str, limit_s: float) -> str:
    """The watchdog report of a 128-thread kernel spinning on a flag nobody sets (stall limit 1 s, default budget)."""
    mod = ptxlab.compile(src, arch="sm_90a", name=f"{kernel}.cu", options=("-lineinfo",))
    dev = ptxlab.open_device("emu", stall_seconds=1.0)
    flag, y = dev.to_device(np.zeros(4, np.uint32)), dev.empty(4 * 128)
    t0 = time.monotonic()
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, kernel, grid=(1, 1, 1), block=(128, 1, 1), args=[flag, y])
    assert time.monotonic() - t0 < limit_s
    msg = str(ei.value)
    assert "no forward progress" in msg and "PTXLAB_EMU_STALL_S" in msg, msg
    return msg


def test_spin_loop_reported_by_stall_limit_with_warps_and_lines():
    msg = _stalled(SPIN, "spin", 20)
    for w in range(4):
        assert f"block (0, 0, 0) warp {w}: spinning in PTX line" in msg
    assert "spin.cu:3" in msg                       # the CUDA line of the while loop
    assert "ld.volatile.global" in msg or "setp" in msg or "bra" in msg


def test_progress_resets_the_stall_limit(rng):
    """A kernel that runs several times the stall limit but keeps passing barriers is not stopped."""
    mod = ptxlab.compile(BARRIER_LOOP, arch="sm_90a", name="barloop.cu")
    dev = ptxlab.open_device("emu", stall_seconds=0.2)
    xs = rng.integers(1, 2**20, 128, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * 128)
    dev.memset(y, 0xFF)
    iters = 12000
    t0 = time.monotonic()
    dev.launch(mod, "barloop", grid=(1, 1, 1), block=(128, 1, 1), args=[x, y, np.uint32(iters)])
    elapsed = time.monotonic() - t0
    a = xs.astype(np.uint64)
    for _ in range(iters):
        a = (a + np.roll(a, -1)) & 0xFFFFFFFF
    assert (dev.to_host(y, np.uint32) == a.astype(np.uint32)).all()
    assert elapsed > 0.6, f"the kernel ran {elapsed:.2f} s, too short to show the limit is reset by progress"


BARRIER_SPIN = r'''
extern "C" __global__ void barspin(volatile unsigned* flag, unsigned* y) {
  __shared__ unsigned s[128];
  unsigned k = 0;
  while (flag[0] == 0u) {
    s[threadIdx.x] = k;
    __syncthreads();
    k = s[(threadIdx.x + 1u) & 127u] & 7u;
    __syncthreads();
  }
  y[threadIdx.x] = k;
}'''


def test_spin_loop_with_barriers_is_reported():
    """A spin loop that contains __syncthreads(): barriers complete every iteration (the old progress signal), but the
    wave's state cycles, so the stall limit stops it, naming the loop's PTX and CUDA lines."""
    msg = _stalled(BARRIER_SPIN, "barspin", 30)
    assert "with or without __syncthreads()" in msg, msg
    assert re.search(r"block \(0, 0, 0\) warp \d: spinning in PTX lines? \d+", msg), msg
    assert re.search(r"barspin\.cu:(4|5|6|7|8)", msg), msg          # CUDA lines of the loop body


def test_default_stall_limit_is_the_documented_one(monkeypatch):
    monkeypatch.delenv("PTXLAB_EMU_STALL_S", raising=False)
    assert watchdog.stall_seconds_default() == watchdog.DEFAULT_STALL_S
    assert watchdog.DEFAULT_STALL_S < 60      # a spinning kernel is reported in under a minute by default
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"`PTXLAB_EMU_STALL_S=SECONDS`[^.]*default (\d+) s", readme)
    assert m and float(m.group(1)) == watchdog.DEFAULT_STALL_S
    doc = (ROOT / "ptx_docs" / "emulator_checks.md").read_text()
    assert f"PTXLAB_EMU_STALL_S" in doc and f"{watchdog.DEFAULT_STALL_S:g} s" in doc
    monkeypatch.setenv("PTXLAB_EMU_STALL_S", "7")
    assert watchdog.stall_seconds_default() == 7.0
