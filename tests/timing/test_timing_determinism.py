"""Predictions depend on emulated work only, never on wall-clock seconds (issue 21 round 2, item 0)."""
from __future__ import annotations

import time as _time

import numpy as np

import pytest

import ptxlab
from ptxlab.timing import predict as PR
from ptxlab.timing import synthetic as S

pytestmark = pytest.mark.filterwarnings("ignore::ptxlab.timing.predict.TimingSampleWarning")


class _SlowClock:
    """A clock on which every reading is 1000 s after the last: a machine loaded beyond any budget."""

    def __init__(self):
        self.t = _time.perf_counter()

    def perf_counter(self):
        self.t += 1000.0
        return self.t

    def __getattr__(self, name):
        return getattr(_time, name)


def _predict(x_host: np.ndarray, n: int):
    mod = ptxlab.compile(S.STREAM, arch="sm_90a", name="stream.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    x = dev.to_device(x_host)
    y = dev.empty(16 * n)
    dev.memset(y, 0xFF)
    # 528 CTAs: the busiest SM runs 4, so the clone-or-emulate decision is taken
    dev.launch(mod, "stream", grid=(528, 1, 1), block=(256, 1, 1), args=[x, y, np.int32(n)])
    t = dev.last_timing
    return t.us, t.sim_us, t.bound, t.sampled, t.footprint, sorted(t.amounts.items())


def test_prediction_bits_do_not_depend_on_machine_load(monkeypatch):
    n = 1 << 18
    x = np.random.default_rng().random(4 * n, dtype=np.float32) + np.float32(0.5)
    idle = _predict(x, n)
    monkeypatch.setattr(PR, "time", _SlowClock())
    loaded = _predict(x, n)
    assert loaded == idle
    assert "copies" not in idle[3], idle[3]   # 4 small CTAs: all emulated, under the work budget


def test_clone_budget_is_a_count_of_thread_instructions(monkeypatch):
    n = 1 << 18
    x = np.random.default_rng().random(4 * n, dtype=np.float32) + np.float32(0.5)
    monkeypatch.setenv("PTXLAB_TIMING_EMU_INSTRS", "1000")
    cloned = _predict(x, n)
    assert "simulated as its copies" in cloned[3] and "PTXLAB_TIMING_EMU_INSTRS" in cloned[3], cloned[3]
    monkeypatch.setattr(PR, "time", _SlowClock())
    assert _predict(x, n) == cloned
