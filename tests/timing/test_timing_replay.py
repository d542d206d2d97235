"""A replay that cannot finish (ptxlab/timing/replay_check.py) and the SASS-join defect that made one: a CTA-wide
two-pass normalisation whose ``if (threadIdx.x == 0)`` division becomes a chain of SASS blocks (ptxas's division
with its out-of-line slow path).  The join started a group at the chain block holding the most events instead of
the chain's entry, so warp 0 issued its arrival at the next bar.sync generation before this one and no CTA finished
(CPU only: NVRTC + nvdisasm + the emulator)."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.timing import sass_join
from ptxlab.timing.replay_check import TimingReplayError, out_of_order
from ptxlab.timing.trace import BAR

pytestmark = pytest.mark.filterwarnings("ignore::ptxlab.timing.predict.TimingSampleWarning")

WARPS = 8
# written here: each CTA centres one row of 4 * 32 * WARPS floats and scales it by 1 / its RMS deviation
CENTER = r"""
#define WARPS 8
__device__ __forceinline__ float warp_total(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float cta_total(float v, float* slots) {
  v = warp_total(v);
  if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < WARPS ? slots[threadIdx.x & 31] : 0.f;
  for (int o = WARPS / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
extern "C" __global__ void center_scale(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float slots[WARPS];
  __shared__ float mean, scale;
  int at = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  float4 v = *reinterpret_cast<const float4*>(x + at);
  float s = cta_total(v.x + v.y + v.z + v.w, slots);
  if (threadIdx.x == 0) mean = s / (float)n;
  __syncthreads();
  float a = v.x - mean, b = v.y - mean, c = v.z - mean, d = v.w - mean;
  float q = cta_total(a * a + b * b + c * c + d * d, slots);
  if (threadIdx.x == 0) scale = rsqrtf(q / (float)n + 1e-5f);
  __syncthreads();
  *reinterpret_cast<float4*>(y + at) = make_float4(a * scale, b * scale, c * scale, d * scale);
}
"""


def _launch(ctas: int):
    mod = ptxlab.compile(CENTER, arch="sm_90a", name="center_scale.cu")
    dev = ptxlab.open_device("emu", timing="h100", timing_sample="all")
    n = 4 * 32 * WARPS
    rng = np.random.default_rng()
    x = (rng.standard_normal((ctas, n)) * rng.uniform(0.5, 4.0) + rng.uniform(-3, 3)).astype(np.float32)
    xd = dev.to_device(x)
    yd = dev.to_device(np.full(x.shape, np.nan, np.float32))
    dev.launch(mod, "center_scale", grid=(ctas, 1, 1), block=(32 * WARPS, 1, 1), args=[xd, yd, np.int32(n)])
    return dev, x, dev.to_host(yd, dtype=np.float32, shape=x.shape)


def _bar_generations(stream) -> list:
    return [d[1][3] for _, k, data in stream for kk, d in (data if k == -1 else ((k, data),)) if kk == BAR]


def test_chain_entry_keeps_barrier_generations_in_order():
    """Every warp issues its 4 bar.sync arrivals in generation order, every CTA finishes (none "unresolved"), warp 0
    issues the division it computes (MUFU.RCP), and the kernel's output is right."""
    ctas = 3
    dev, x, y = _launch(ctas)
    m = x.astype(np.float64).mean(1, keepdims=True)
    ref = (x - m) / np.sqrt(((x - m) ** 2).mean(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, ref, rtol=2e-4, atol=2e-4)
    t = dev.last_timing
    assert t.issue.startswith("SASS"), t.issue
    trace, join, streams = t._replay[0], t._replay[7][1], t._replay[7][2]
    assert trace.ctas and len(streams) == len(trace.ctas) * WARPS
    for key, st in streams.items():
        assert _bar_generations(st) == [0, 1, 2, 3], key
    assert out_of_order(streams) is None
    assert len(t.cta_spans) == len(trace.ctas)
    assert not any("unresolved" in k for w in t.warps.values() for k in w["waits"])
    for key, st in streams.items():
        rcp = sum(1 for i, _, _ in st if i < join.nsass and join.sass[i].op.startswith("MUFU.RCP"))
        assert rcp == (2 if key[1] == 0 else 0), (key, rcp)     # mean and variance: thread 0's warp only


def test_unfinishable_replay_names_kernel_barrier_and_cause(monkeypatch):
    """A stream that issues a later bar.sync generation first (swapped here on purpose) deadlocks the replay: the
    launch raises TimingReplayError naming the kernel, the generation, the waiting warps and the reordered arrival,
    not a bare ValueError from the round extrapolation."""
    real = sass_join.sass_streams

    def swapped(trace, join):
        streams, stats = real(trace, join)
        key = min(streams)
        st = list(streams[key])
        pos = [i for i, (_, k, data) in enumerate(st) if k == BAR][:2]
        st[pos[0]], st[pos[1]] = st[pos[1]], st[pos[0]]
        streams[key] = st
        return streams, stats
    monkeypatch.setattr(sass_join, "sass_streams", swapped)
    with pytest.raises(TimingReplayError) as e:
        _launch(2)
    msg = str(e.value)
    assert "center_scale" in msg and "finished no CTA" in msg
    assert "barrier 0 generation 0 never completes" in msg
    assert "issues its arrival at CTA 0's barrier 0 generation 1" in msg
    assert "PTXLAB_TIMING_ISSUE=ptx" in msg
