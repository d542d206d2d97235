"""Timing recording on the native engine (timing/native_record.py) gives the interpreter's trace, item for item, and
the same prediction (issue 21 item 6, issue 25 item 3)."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.timing import native_record as NR
from ptxlab.timing import synthetic as S
from ptxlab.timing import synthetic_series as SS
from ptxlab.timing.trace import MB_WAIT

pytestmark = pytest.mark.filterwarnings("ignore::ptxlab.timing.predict.TimingSampleWarning")


def _stream(dev, rng):
    mod = ptxlab.compile(S.STREAM, arch="sm_90a", name="stream.cu")
    n = 1 << 13
    x = dev.to_device(rng.random(4 * n, dtype=np.float32) + np.float32(0.5))
    y = dev.empty(16 * n)
    dev.memset(y, 0xFF)
    dev.launch(mod, "stream", grid=(264, 1, 1), block=(128, 1, 1), args=[x, y, np.int32(n)])
    return y


def _sgemm(dev, rng):
    """Shared-memory tiles, bar.sync, guarded stores; one 64 x 64 CTA."""
    mod = ptxlab.compile(SS.SGEMM, arch="sm_90a", name="sgemm.cu")
    n = 64
    g, b = SS.sgemm_launch("reg2d", n)
    a = dev.to_device(rng.random(n * n, dtype=np.float32) - np.float32(0.5))
    bb = dev.to_device(rng.random(n * n, dtype=np.float32) - np.float32(0.5))
    c = dev.empty(n * n * 4)
    dev.memset(c, 0xFF)
    dev.launch(mod, "reg2d", grid=g, block=b, args=[a, bb, c, np.int32(n), np.int32(n), np.int32(n)])
    return c


def _diverge(dev, rng):
    """Shared-memory tree with a run-time modulo: lanes of a warp take different paths each step; atomics."""
    mod = ptxlab.compile(SS.REDUCE, arch="sm_90a", name="reduce.cu")
    n = 4 * 256 - 37
    x = dev.to_device(rng.random(n, dtype=np.float32) + np.float32(0.5))
    out = dev.to_device(np.zeros(1, np.float32))
    dev.launch(mod, "tree_mod", grid=(4, 1, 1), block=(256, 1, 1), args=[x, out, np.int32(n), np.uint32(2)])
    return out


def _pipe(dev, rng):
    """cp.async.bulk into a ring of full / empty mbarriers (try_wait loops)."""
    mod = ptxlab.compile(S.defines(STAGES=2, WORK=3) + S.PIPE, arch="sm_90a", name="pipe.cu")
    chunks, nctas = 5, 2
    src = dev.to_device(rng.integers(1, 255, nctas * chunks * 8192, dtype=np.uint8))
    out = dev.empty(nctas * 32 * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "pipe", grid=(nctas, 1, 1), block=(64, 1, 1), args=[src, out, np.int32(chunks)])
    return out


def _canonical(trace) -> tuple:
    """The trace with mbarrier object ids (id() of the emulator's barrier objects, which differ between runs)
    renamed in order of first appearance."""
    names: dict = {}

    def nm(x):
        return names.setdefault(x, len(names))

    def item(it):
        pc, k, d = it
        if k == MB_WAIT:
            return (pc, k, (nm(d[0]), d[1]))
        if k == -1:
            return (pc, k, [(kk, (nm(dd[0]), dd[1])) if kk == MB_WAIT else (kk, dd) for kk, dd in d])
        return it
    streams = {key: [item(it) for it in s] for key, s in sorted(trace.streams.items())}
    contribs = [(c.key if c.key[0] == "bar" else (nm(c.key[0]),) + tuple(c.key[1:]), c.parts, c.remote,
                 c.release_cluster) for c in trace.contribs]
    return streams, contribs, trace.asyncs, trace.thread_instrs, trace.footprint.note


def _prediction(t) -> tuple:
    return (t.us, t.sim_us, t.bound, t.utilization, t.amounts, t.warps, t.sampled, t.footprint, t.hot, t.issue,
            t.join, t.events)


def _record(kernel, engine: str, seed: int):
    dev = ptxlab.open_device("emu", timing="h100", engine=engine)
    out = kernel(dev, np.random.default_rng(seed))
    t = dev.last_timing
    return _canonical(t._replay[0]), _prediction(t), dev.to_host(out, np.uint8)


@pytest.mark.parametrize("kernel", [_stream, _sgemm, _diverge, _pipe], ids=lambda k: k.__name__[1:])
def test_native_recording_is_the_interpreters(kernel, monkeypatch):
    seed = int(np.random.default_rng().integers(1 << 30))
    ref_trace, ref_pred, ref_out = _record(kernel, "interp", seed)
    made = []
    orig = NR.RecordingScheduler.__init__

    def spy(self, *a, **kw):
        orig(self, *a, **kw)
        made.append(int(self.pyonly.size - self.pyonly.sum()))     # instructions the native code runs and logs
    monkeypatch.setattr(NR.RecordingScheduler, "__init__", spy)
    trace, pred, out = _record(kernel, "native", seed)
    assert made and max(made) > 0, "the native engine did not record"
    assert sum(map(len, ref_trace[0].values())) > 0
    assert trace == ref_trace
    assert pred == ref_pred
    assert np.array_equal(out, ref_out)


def test_a_full_log_is_flushed_in_order(monkeypatch):
    """A log row of 5 entries: the native code returns (R_FLUSH) every 5 logged instructions and resumes."""
    seed = int(np.random.default_rng().integers(1 << 30))
    ref = _record(_sgemm, "interp", seed)
    flushes = []
    orig = NR.RecordingScheduler.flush_log

    def spy(self, log, loglen):
        assert log.shape[1] == 5 and loglen.max() <= 5
        flushes.append(int(loglen.max()))
        orig(self, log, loglen)
    monkeypatch.setattr(NR, "LOG_CAP", 5)
    monkeypatch.setattr(NR.RecordingScheduler, "flush_log", spy)
    assert _record(_sgemm, "native", seed)[:2] == ref[:2]
    assert flushes.count(5) > 10


def test_interpreter_recording_is_one_switch_away(monkeypatch):
    made = []
    monkeypatch.setattr(NR.RecordingScheduler, "__init__", lambda *a, **kw: made.append(1))
    _record(_stream, "interp", 1)
    assert not made
