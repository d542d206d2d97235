"""Round 3 of the timing model (issue 21; ptx_docs/timing.md "Round 3"): the L2's request rate and the DRAM latency
loaded by the DRAM's use (CPU only)."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.timing import params as P
from ptxlab.timing import synthetic_series as SS
from ptxlab.timing.predict import resimulate
from ptxlab.timing.sim import SharedServer

pytestmark = pytest.mark.filterwarnings("ignore::ptxlab.timing.predict.TimingSampleWarning")

N = 1024


def _transpose(src: str, entry: str):
    mod = ptxlab.compile(src, arch="sm_90a", name=f"{entry}.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    x = np.random.default_rng().standard_normal(N * N).astype(np.float32) + 2.0
    xin, out = dev.to_device(x), dev.empty(N * N * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, entry, grid=(N * N // 256, 1, 1), block=(256, 1, 1), args=[xin, out, np.uint32(N)])
    got = dev.to_host(out, np.float32)
    return dev.last_timing, x.reshape(N, N), got


def test_shared_server_serves_the_longer_of_bytes_and_requests():
    s = SharedServer(rate=64.0, window=0.0, slot_rate=2.0)
    assert s.serve(0.0, 128.0, 1.0) == pytest.approx(2.0)      # 128 B at 64 B/clk: 2 clk; 1 request: 0.5 clk
    assert s.serve(0.0, 32.0, 8.0) == pytest.approx(6.0)       # 8 requests of one sector: 4 clk, not 0.5
    assert s.busy == pytest.approx(6.0) and s.amount == pytest.approx(160.0)
    plain = SharedServer(rate=64.0, window=0.0)                 # no request rate: bytes only
    assert plain.serve(0.0, 32.0, 8.0) == pytest.approx(0.5)


def test_single_sector_accesses_are_bound_by_the_l2_request_rate():
    """A 1-D transpose strided on the load (32 single-sector read requests per warp) and the same strided on the
    store: each is bound by the L2's request rate, not its bytes (H100 ncu of the corpus transposes: ~57 read / 28
    write requests per clock, L2 bytes far below the L2 bandwidth), the store version about twice as slow, and
    without the request rate both come out faster."""
    tr, xr, got_r = _transpose(SS.TRANSPOSE_1D, "transpose_1d")
    tw, xw, got_w = _transpose(SS.TRANSPOSE_1D_W, "transpose_1d_w")
    # both compute out = in^T; the sampled CTAs' outputs (the rest stays poisoned: NaN) are right
    for x, got in ((xr, got_r), (xw, got_w)):
        done = ~np.isnan(got)
        assert done.sum() >= 256 and np.array_equal(got[done], x.T.ravel()[done])
    assert tr.bound == "L2" and tw.bound == "L2", (tr.bound, tr.utilization, tw.bound, tw.utilization)
    clk = P.H100.clock_ghz * 1e3                                          # clk per us
    floor_r = N * N / P.H100.l2_read_req_clk / clk
    floor_w = N * N / P.H100.l2_write_req_clk / clk
    assert floor_r <= tr.us <= 1.6 * floor_r, (tr.us, floor_r)
    assert floor_w <= tw.us <= 1.6 * floor_w, (tw.us, floor_w)
    assert 1.6 <= tw.us / tr.us <= 2.2, (tw.us, tr.us)
    off = P.H100.with_(l2_read_req_clk=0.0, l2_write_req_clk=0.0)
    for t in (tr, tw):
        assert resimulate(t, off).us < 0.8 * t.us


def test_dram_latency_loaded_by_use_when_switched_on():
    """``dram_loaded_by_util`` (off in the frozen round-3 tables, ptx_docs/timing.md "Round 3"): a launch that keeps
    DRAM idle (one warp's dependent chase) sees the idle DRAM latency; the flat factor charges every read the
    loaded latency (idle x dram_loaded_factor)."""
    flat = P.H100
    util = P.H100.with_(dram_loaded_by_util=True)
    assert not P.H100.dram_loaded_by_util and P.H100.dram_loaded_factor > 1.0
    # a latency-bound launch: one CTA of one warp, a dependent chain of loads
    src = r'''
extern "C" __global__ void chase(const unsigned* __restrict__ next, unsigned* out, int steps) {
  unsigned j = threadIdx.x;
  for (int s = 0; s < steps; ++s) j = next[j];
  out[threadIdx.x] = j;
}
'''
    n = 1 << 20
    perm = np.random.default_rng().permutation(n).astype(np.uint32)
    mod = ptxlab.compile(src, arch="sm_90a", name="chase.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    nxt, out = dev.to_device(perm), dev.empty(32 * 4)
    steps = 64
    dev.launch(mod, "chase", grid=(1, 1, 1), block=(32, 1, 1), args=[nxt, out, np.int32(steps)])
    t = dev.last_timing
    j = np.arange(32, dtype=np.uint32)
    for _ in range(steps):
        j = perm[j]
    assert np.array_equal(dev.to_host(out, np.uint32), j)
    per_step_ns = lambda tt: (tt.us - P.H100.launch_us) * 1e3 / steps     # noqa: E731
    idle = P.H100.dram_latency_ns
    assert idle <= per_step_ns(resimulate(t, util)) <= 1.15 * idle, per_step_ns(resimulate(t, util))
    assert per_step_ns(t) >= 0.95 * idle * P.H100.dram_loaded_factor, per_step_ns(t)
    assert resimulate(t, flat).us == t.us
