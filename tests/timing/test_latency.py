"""Latency hiding in the SASS issue model (issue 21 items 2 and 5): ILP within a warp, issue limits with many warps,
the per-warp table adding up with several CTAs per SM, and trace events naming the real source line (CPU only)."""
from __future__ import annotations

import linecache

import numpy as np
import pytest

import ptxlab
from ptxlab.timing import params as P
from ptxlab.timing import synthetic_series as SS

pytestmark = pytest.mark.filterwarnings("ignore::ptxlab.timing.predict.TimingSampleWarning")

ITERS = 512


def _ilp(chains: int, warps_per_smsp: int, iters: int = ITERS):
    mod = ptxlab.compile(SS._defines(CHAINS=chains, ITERS=iters) + SS.ILP, arch="sm_90a", name="ilp.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    out = dev.empty(132 * 128 * warps_per_smsp * 4)
    dev.launch(mod, "ilp", grid=(132, 1, 1), block=(128 * warps_per_smsp, 1, 1),
               args=[out, np.float32(0.999), np.float32(0.5)])
    t = dev.last_timing
    return t, t.sim_us * P.H100.clock_ghz * 1e3


def test_independent_chains_hide_the_fma_latency():
    """One warp per SM sub-partition: a dependent FMA chain waits its latency (ptxas's stall count, 4 clk) per FMA,
    2 or 4 independent chains fill those cycles (about the same time), 8 chains are issue-bound (twice the time).
    H100: 12.29 / 12.38 / 13.12 / 22.18 us for 4096 iterations (tools/probes/timing_model_h100.py)."""
    # cycles per iteration: the difference of two loop lengths (the prologue and the store cancel)
    cyc = {c: (_ilp(c, 1, 2 * ITERS)[1] - _ilp(c, 1)[1]) / ITERS for c in (1, 2, 4, 8)}
    assert cyc[1] == pytest.approx(4.0, rel=0.1), cyc
    assert cyc[2] == pytest.approx(cyc[1], rel=0.15) and cyc[4] == pytest.approx(cyc[1], rel=0.2), cyc
    assert cyc[8] == pytest.approx(2 * cyc[1], rel=0.2), cyc


def test_many_warps_are_issue_bound_and_reported_so():
    """Eight warps per sub-partition with 4 chains each: every cycle has an FMA to issue, so the kernel is bound by
    instruction issue (not latency): 8 warps x 4 x ITERS FMAs at one per clock per sub-partition."""
    t, cyc = _ilp(4, 8)
    assert t.bound == "instruction issue", t.utilization
    assert cyc == pytest.approx(8 * 4 * ITERS, rel=0.2), cyc


def test_per_warp_table_adds_up_with_several_ctas_per_sm():
    """The production GEMV at 512x4096x2 runs 6 CTAs per SM: for every warp index, the issue cycles plus every wait
    equal the warp's life (start to exit), and no warp outlives the simulated SM; the events name the real kernel
    file (ptxlab/kernels/nvfp4_gemv_cudacore.cu), not the name it was compiled under, at lines holding code."""
    from ptxlab.timing.cli import run_problem
    t = run_problem("nvfp4_gemv", (512, 4096, 2), "h100")
    assert t.ctas_per_sm >= 2
    cyc = t.clock_ghz * 1e3
    for wi, s in t.warps.items():
        assert s["issue_clk"] + sum(s["waits"].values()) == pytest.approx(s["span_clk"], rel=1e-9), (wi, s)
        assert 0 < s["span_clk"] <= t.sim_us * cyc + 1e-6
    srcs = {e["src"] for e in t.events if "src" in e}
    assert srcs and all(s.startswith("ptxlab/kernels/") or "/ptxlab/kernels/" in s for s in srcs), srcs
    for s in srcs:
        f, n = s.rsplit(":", 1)
        assert linecache.getline(f, int(n)).strip(), s
    assert t.hot and all("nvfp4_gemv_cudacore.cu:" in h[2] for h in t.hot[:3])
