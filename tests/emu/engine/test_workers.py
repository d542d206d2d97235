"""Parallel waves (ptxlab/emu/engine/workers.py): the same bits and the same reports as a serial run."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

SRC = r'''
extern "C" __global__ void indep(const unsigned* x, unsigned* y, unsigned n, unsigned bad) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned a = x[i % n];
  for (unsigned k = 0; k < 8u; ++k) a = a * 1664525u + (a >> 13) + k;
  y[i + (i == bad ? (1u << 24) : 0u)] = a;       // bad: one thread of a late wave stores far out of bounds
}
extern "C" __global__ void race(unsigned* y) {  // every CTA writes y[0]: the serial outcome is the last CTA's
  if (threadIdx.x == 0) y[0] = blockIdx.x + 1u;
  y[1 + blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x;
}
extern "C" __global__ void count(unsigned* y) {  // atomics: CTAs of different waves meet at one address
  atomicAdd(y, threadIdx.x + 1u);
}'''

GRID, BLOCK = 64, 512                          # 32768 threads: 4 waves of 8192


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_90a", name="workers.cu")


def _indep(mod, workers, monkeypatch, xs, bad=0xFFFFFFFF):
    monkeypatch.setenv("PTXLAB_EMU_WORKERS", str(workers))
    dev = ptxlab.open_device("emu")
    x, y = dev.to_device(xs), dev.empty(4 * GRID * BLOCK)
    dev.memset(y, 0xFF)
    dev.launch(mod, "indep", grid=(GRID, 1, 1), block=(BLOCK, 1, 1), args=[x, y, np.uint32(xs.size), np.uint32(bad)])
    return dev.to_host(y, np.uint32), dev.last_stats


def test_parallel_waves_are_bit_identical(mod, monkeypatch, rng):
    xs = rng.integers(1, 2**32, 1000, dtype=np.uint64).astype(np.uint32)
    ser, s1 = _indep(mod, 1, monkeypatch, xs)
    par, s2 = _indep(mod, 2, monkeypatch, xs)
    assert s1["workers"] == 1 and s2["workers"] == 2 and s1["waves"] == s2["waves"] == 4
    assert np.array_equal(ser, par) and s1["thread_instrs"] == s2["thread_instrs"]


def test_a_fault_in_a_late_wave_is_the_serial_report(mod, monkeypatch, rng):
    xs = rng.integers(1, 2**32, 1000, dtype=np.uint64).astype(np.uint32)
    reps = []
    for w in (1, 2):
        with pytest.raises(EmuError) as e:
            _indep(mod, w, monkeypatch, xs, bad=3 * 8192 + 77)
        reps.append(str(e.value))
    assert reps[0] == reps[1] and "out-of-bounds global store" in reps[0]


def test_waves_writing_one_address_run_serially(mod, monkeypatch):
    outs = []
    for w in (1, 2):
        monkeypatch.setenv("PTXLAB_EMU_WORKERS", str(w))
        dev = ptxlab.open_device("emu")
        y = dev.empty(4 * (1 + GRID * BLOCK))
        dev.memset(y, 0)
        dev.launch(mod, "race", grid=(GRID, 1, 1), block=(BLOCK, 1, 1), args=[y])
        outs.append(dev.to_host(y, np.uint32))
    assert np.array_equal(outs[0], outs[1]) and outs[1][0] == GRID


def test_atomics_keep_a_launch_serial(mod, monkeypatch):
    monkeypatch.setenv("PTXLAB_EMU_WORKERS", "2")
    dev = ptxlab.open_device("emu")
    y = dev.empty(4)
    dev.memset(y, 0)
    dev.launch(mod, "count", grid=(GRID, 1, 1), block=(BLOCK, 1, 1), args=[y])
    assert dev.last_stats["workers"] == 1
    assert int(dev.to_host(y, np.uint32)[0]) == GRID * BLOCK * (BLOCK + 1) // 2 % 2**32


@pytest.mark.parametrize("pays", [False, True])
def test_default_workers_fork_only_when_it_pays(mod, monkeypatch, rng, pays):
    """With PTXLAB_EMU_WORKERS unset the first wave runs in the parent and decides: a short launch next to a large
    heap stays serial (forking would cost more than it saves), a long one goes parallel; the bits are the same."""
    from ptxlab.emu.engine import workers as W
    xs = rng.integers(1, 2**32, 1000, dtype=np.uint64).astype(np.uint32)
    ref, _ = _indep(mod, 1, monkeypatch, xs)
    monkeypatch.delenv("PTXLAB_EMU_WORKERS")
    monkeypatch.setattr(W, "workers", lambda: 2)
    if pays:
        monkeypatch.setattr(W, "FORK_S", 0.0)
        monkeypatch.setattr(W, "FORK_S_PER_BYTE", 0.0)
    else:
        monkeypatch.setattr(W, "FORK_S", 3600.0)
    dev = ptxlab.open_device("emu")
    x, y = dev.to_device(xs), dev.empty(4 * GRID * BLOCK)
    dev.memset(y, 0xFF)
    dev.launch(mod, "indep", grid=(GRID, 1, 1), block=(BLOCK, 1, 1), args=[x, y, np.uint32(xs.size),
                                                                            np.uint32(0xFFFFFFFF)])
    assert dev.last_stats["workers"] == (2 if pays else 1) and dev.last_stats["waves"] == 4
    assert np.array_equal(dev.to_host(y, np.uint32), ref)


def test_worth_it_weighs_saved_time_against_the_heap():
    from types import SimpleNamespace
    from ptxlab.emu.engine import workers as W
    heap = SimpleNamespace(buf=np.zeros(64 << 20, np.uint8))
    assert W.worth_it(0.013, 15, 2, heap) == 1            # W1 GEMV: 16 waves of ~13 ms next to a 64 MB heap
    assert W.worth_it(2.0, 15, 2, heap) == 2              # the production GEMV: seconds per wave
    assert W.worth_it(100.0, 1, 2, heap) == 1             # one wave left: nothing to share
