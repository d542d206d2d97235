"""Timing model with thread-block clusters (ptxlab/timing/cluster_trace.py, sim.py; ptx_docs/timing.md "Clusters"):
timed cluster launches, multicast TMA, DSMEM latency, barrier.cluster and the cta_group::2 pair MMA (CPU only)."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.numerics import pack_fp4
from ptxlab.scales import to_blocked
from ptxlab.timing import params as P
from ptxlab.timing import synthetic as S
from ptxlab.timing import synthetic_cluster as SC
from ptxlab.timing.predict import resimulate

# these tests sample on purpose (timing only); test_timing_only_sample_warns_once_per_kernel checks the warning
pytestmark = pytest.mark.filterwarnings("ignore::ptxlab.timing.predict.TimingSampleWarning")

REPO = Path(__file__).resolve().parents[2]


def _mcast(cl: int, nctas: int = 264, chunks: int = 8, rel: int = 0):
    mod = ptxlab.compile(S.defines(CL=cl, REL=rel) + SC.MCAST, arch="sm_90a", name=f"mcast{cl}.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    rng = np.random.default_rng()
    src = dev.to_device(rng.integers(1, 255, (nctas // cl) * chunks * 8192, dtype=np.uint8))
    out = dev.empty(nctas * 128 * 4)
    dev.launch(mod, "mcast", grid=(nctas, 1, 1), block=(160, 1, 1), args=[src, out, np.int32(chunks)],
               cluster=(cl, 1, 1) if cl > 1 else None)
    return dev.last_timing


def test_timed_cluster_launch_runs_and_computes():
    """A timed launch with cluster= no longer raises; with the whole grid emulated its results are exact."""
    mod = ptxlab.compile(S.defines(CL=2) + SC.DSMEM_CHASE, arch="sm_90a", name="chase.cu")
    dev = ptxlab.open_device("emu", timing="h100", timing_sample="all")
    rng = np.random.default_rng()
    step, iters = int(rng.integers(1, 1023)), int(rng.integers(5, 40))
    out = dev.empty(4 * 2 * 64)
    dev.memset(out, 0xA5)
    dev.launch(mod, "dsmem_chase", grid=(2, 1, 1), block=(64, 1, 1), args=[out, np.uint32(step), np.int32(iters)],
               cluster=(2, 1, 1))
    t = dev.last_timing
    assert t is not None and t.us > t.launch_us and "clusters of 2" in t.sampled
    got = dev.to_host(out, np.uint32).reshape(2, 64)
    exp = (np.arange(64) + iters * step) % 1024
    assert np.array_equal(got, np.stack([exp, exp])), got
    assert not any("unresolved" in k for w in t.warps.values() for k in w["waits"])


@pytest.mark.parametrize("cl", [2, 4])
def test_multicast_stream_reads_one_cth_of_the_dram_bytes(cl):
    base, mc = _mcast(1), _mcast(cl)
    assert base.bound == "DRAM", base.utilization
    ratio = mc.amounts["dram_bytes"] / base.amounts["dram_bytes"]
    # (each CTA also stores 128 floats: 135 KB in all, kept in L2 by write-back, memsys.WRITE_BACK_L2)
    assert ratio == pytest.approx(1.0 / cl, rel=0.01), ratio
    # the same SMEM bytes are delivered per CTA, DRAM-bound -> faster
    assert mc.us < base.us * 0.85, (mc.us, base.us)
    assert not any("unresolved" in k for w in mc.warps.values() for k in w["waits"])


def test_dsmem_chase_follows_the_sm_to_sm_latency():
    mod = ptxlab.compile(S.defines(CL=2) + SC.DSMEM_CHASE, arch="sm_90a", name="chase.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    out = dev.empty(4 * 2 * 32)
    iters = 64
    dev.launch(mod, "dsmem_chase", grid=(2, 1, 1), block=(32, 1, 1), args=[out, np.uint32(7), np.int32(iters)],
               cluster=(2, 1, 1))
    t = dev.last_timing
    slow = resimulate(t, replace(P.H100, dsmem_latency_clk=2 * P.H100.dsmem_latency_clk))
    added = (slow.sim_us - t.sim_us) * P.H100.clock_ghz * 1e3
    # each of the iters dependent loads waits one more latency
    assert added == pytest.approx(iters * P.H100.dsmem_latency_clk, rel=0.1), added
    assert t.sim_us * P.H100.clock_ghz * 1e3 > iters * P.H100.dsmem_latency_clk


def test_cluster_barrier_loop_pays_the_cluster_barrier_latency():
    iters = 32
    mod = ptxlab.compile(S.defines(CL=4, WORK=2) + SC.CBAR, arch="sm_90a", name="cbar.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    out = dev.empty(4 * 4 * 64)
    dev.launch(mod, "cbar", grid=(4, 1, 1), block=(64, 1, 1), args=[out, np.int32(iters), np.float32(1.0001)],
               cluster=(4, 1, 1))
    t = dev.last_timing
    slow = resimulate(t, replace(P.H100, cluster_bar_latency_clk=P.H100.cluster_bar_latency_clk + 100))
    added = (slow.sim_us - t.sim_us) * P.H100.clock_ghz * 1e3
    assert added == pytest.approx(iters * 100, rel=0.1), added
    assert any("barrier.cluster" in k for w in t.warps.values() for k in w["waits"]), t.warps


@pytest.fixture(scope="module")
def d4():
    from ptxlab.lab.registry import discover
    assert "D4" in {s.id for s in discover(REPO / "stages")}
    return sys.modules["ptxlab_stages.D_mma.d4"]


def test_pair_mma_runs_at_the_rate_of_an_m256_tile(d4):
    """REPS tcgen05.mma.cta_group::2 (M=256, N=128, K=64 mxf4nvf4) occupy BOTH SMs' tensor pipes for
    2*256*N*K / (2 x per-SM rate) cycles each; the result is still exact (the same MMA repeated)."""
    H = sys.modules["ptxlab_stages.D_mma.host"]
    reps, n = 6, 128
    mod = H.compile_stage(REPO / "stages" / "D_mma" / "d4_pair.cu", {"NB": n, "REPS": reps})
    dev = ptxlab.open_device("emu", timing="b200")
    a, b, sfa, sfb = d4._problem(H.fresh_seed(), 256, n)
    d = H.poisoned(dev, 4 * 256 * n)
    dev.launch(mod, "d4_pair", grid=(2, 1, 1), block=(128, 1, 1), cluster=(2, 1, 1),
               args=[dev.to_device(pack_fp4(a)), dev.to_device(pack_fp4(b)),
                     dev.to_device(to_blocked(sfa).view(np.uint32)),
                     dev.to_device(to_blocked(sfb).view(np.uint32)), d])
    exact, _ = d4.references(a, b, sfa, sfb)
    assert np.array_equal(dev.to_host(d, np.uint32).reshape(256, n), exact)
    t = dev.last_timing
    per = 2.0 * 256 * n * 64 / (2 * P.B200.tc_flops_clk["mxf4nvf4"])      # cycles per pair MMA on each SM
    mmas = [e for e in t.events if e["cat"] == "tensor" and "cta_group::2" in e["name"]]
    tracks = {e["track"] for e in mmas}
    assert tracks == {"tensor pipe (SM 0)", "tensor pipe (SM 1)"}, tracks
    for tr in tracks:
        mine = sorted((e for e in mmas if e["track"] == tr), key=lambda e: e["t0"])
        assert len(mine) == reps
        assert sum(e["t1"] - e["t0"] for e in mine) == pytest.approx(reps * per, rel=1e-6)
        assert mine[-1]["t1"] - mine[0]["t0"] == pytest.approx(reps * per, rel=1e-6)   # back to back
    # tensor-core FLOP GPU-wide per pair: reps x 2*256*N*K over the two SMs
    assert t.amounts["tensor_flops"] / t.busy_sms * 2 == pytest.approx(reps * 2.0 * 256 * n * 64)


def test_release_cluster_arrives_hold_the_consumer():
    """mbarrier.arrive.release.cluster holds the issuing warp for cluster_release_clk (one per remote arrive): the
    REL=1 multicast ring is slower than CUTLASS's arrive form and gets slower with the cluster size (as measured on
    the H100, ptx_docs/timing.md "Clusters")."""
    plain, rel2, rel4 = _mcast(2, rel=0), _mcast(2, rel=1), _mcast(4, rel=1)
    assert rel2.us > plain.us and rel4.us > rel2.us, (plain.us, rel2.us, rel4.us)
    assert any("release.cluster" in k for w in rel2.warps.values() for k in w["waits"])
    # 264 CTAs = 2 per SM: the shared-SM hold applies (ptx_docs/timing.md "Clusters", load law)
    slow = resimulate(rel2, replace(P.H100, cluster_release_clk=2 * P.H100.cluster_release_clk,
                                    cluster_release_shared_clk=2 * P.H100.cluster_release_shared_clk))
    assert slow.us > rel2.us * 1.2


def _counts() -> tuple:
    """Two random loop iteration counts (n1, n1 + 24..39)."""
    rng = np.random.default_rng()
    n1 = int(rng.integers(8, 16))
    return n1, n1 + int(rng.integers(24, 40))


def _per_iter_clk(src: str, entry: str, cl: int, grid: int, block: int, args, p=P.H100, ns=None) -> float:
    """Predicted cycles per loop iteration: the difference of two random iteration counts (the launch cancels).
    ``ns``: the counts (default: fresh ones); two launches whose difference is asserted must share them (the period
    of a short loop wobbles by a few clk with the count: independent counts failed a 2 % check 8 % of the time)."""
    mod = ptxlab.compile(src, arch="sm_90a", name=entry + ".cu")
    n1, n2 = ns or _counts()
    us = {}
    for n in (n1, n2):
        dev = ptxlab.open_device("emu", timing=p)
        out = dev.empty(4 * grid * block)
        dev.launch(mod, entry, grid=(grid, 1, 1), block=(block, 1, 1), args=[out, *args(n)], cluster=(cl, 1, 1))
        us[n] = dev.last_timing.sim_us
    return (us[n2] - us[n1]) * p.clock_ghz * 1e3 / (n2 - n1)


@pytest.mark.parametrize("cl,warps", [(2, 1), (4, 4), (8, 2)])
def test_cluster_barrier_latency_follows_the_probe_law(cl, warps):
    """barrier.cluster costs a + b x cluster size + c x warps per CTA (params.cluster_bar_clk, fitted to the H100
    probes of 2/4/8 CTAs x 1/4/8 warps): the loop's period minus its period with the law zeroed is the law's value."""
    src = S.defines(CL=cl, WORK=0) + SC.CBAR
    args = lambda n: [np.int32(n), np.float32(1.0)]  # noqa: E731
    ns = _counts()
    full = _per_iter_clk(src, "cbar", cl, cl, 32 * warps, args, ns=ns)
    zero = _per_iter_clk(src, "cbar", cl, cl, 32 * warps, args,
                         replace(P.H100, cluster_bar_latency_clk=0.0, cluster_bar_per_cta_clk=0.0,
                                 cluster_bar_per_warp_clk=0.0), ns=ns)
    law = P.H100.cluster_bar_clk(cl, warps)
    assert law > P.H100.cluster_bar_clk(2, 1) or (cl, warps) == (2, 1)
    assert full - zero == pytest.approx(law, rel=0.02), (full, zero, law)


def test_release_cluster_arrives_load_law():
    """Each .release.cluster arrive holds its warp cluster_release_clk while its SM runs only its cluster's CTA,
    cluster_release_shared_clk while CTAs of other clusters share the SM (H100 load probes: 987-988 clk for 2 or 4
    CTAs per SM, 1 .. 16 arriving warps), and takes cluster_release_cta_clk of its CTA's release path (8 warps of one
    CTA: 972 clk)."""
    L, LS, X = P.H100.cluster_release_clk, P.H100.cluster_release_shared_clk, P.H100.cluster_release_cta_clk
    assert LS > L and 8 * X > L
    src = S.defines(CL=2, K=1, SEM=1) + SC.ARRIVE
    one = _per_iter_clk(src, "arrive_probe", 2, 2, 32, lambda n: [np.int32(n)])
    assert one == pytest.approx(L, rel=0.05), (one, L)
    # 1 CTA per SM (132 CTAs) x 8 warps: the CTA's release path binds
    eight = _per_iter_clk(src, "arrive_probe", 2, P.H100.sms, 256, lambda n: [np.int32(n)])
    assert eight == pytest.approx(8 * X, rel=0.05), (eight, 8 * X)
    # 2 CTAs per SM (264 CTAs) x 1 or 4 warps: the shared-SM hold, whatever the warps (the path does not bind)
    for warps in (1, 4):
        shared = _per_iter_clk(src, "arrive_probe", 2, 2 * P.H100.sms, 32 * warps, lambda n: [np.int32(n)])
        assert shared == pytest.approx(LS, rel=0.05), (warps, shared, LS)
    relaxed = _per_iter_clk(S.defines(CL=2, K=1, SEM=2) + SC.ARRIVE, "arrive_probe", 2, 2, 32, lambda n: [np.int32(n)])
    assert relaxed < 0.1 * L, relaxed


@pytest.mark.parametrize("cl,warps,per_sm", [(2, 8, 2), (4, 4, 4)])
def test_cluster_barrier_is_slower_on_a_shared_sm(cl, warps, per_sm):
    """barrier.cluster (a .release at .cluster scope by default) on SMs that also run other clusters' CTAs costs the
    law + the shared-SM increment of its warps and CTAs per SM (params.cluster_bar_shared; H100 load probes: 2-CTA
    clusters x 8 warps, 1 CTA per SM 894 clk, 2 per SM 1349; the number of busy SMs alone changes little: 4-CTA
    clusters x 8 warps on 4 .. 96 SMs 865-881 clk)."""
    p = P.H100
    src = S.defines(CL=cl, WORK=0) + SC.CBAR
    args = lambda n: [np.int32(n), np.float32(1.0)]  # noqa: E731
    grid = p.sms // cl * cl
    alone = _per_iter_clk(src, "cbar", cl, grid, 32 * warps, args)          # 1 CTA per SM, every SM busy
    shared = _per_iter_clk(src, "cbar", cl, grid * per_sm, 32 * warps, args)
    extra = P.cluster_bar_shared(p.cluster_bar_shared_clk, warps, per_sm)
    assert extra > 200
    # within 15 %: under SASS issue the barrier's ~12 SASS instructions also contend for issue on the busier SM
    # (the model gives +5 % at (2, 8, 2) and +9 to +10 % at (4, 4, 4), depending on the random iteration counts)
    assert shared - alone == pytest.approx(extra, rel=0.15), (alone, shared, extra)
    assert p.cluster_bar_clk(cl, warps, per_sm) - p.cluster_bar_clk(cl, warps) == pytest.approx(extra)


@pytest.mark.parametrize("warps,per_sm,probe_clk", [(8, 2, 1349.1), (16, 2, 1381.6), (32, 2, 1494.4),
                                                    (8, 4, 1185.8), (16, 4, 1405.7)])
def test_cluster_barrier_shared_increment_depends_on_warps_and_ctas_per_sm(warps, per_sm, probe_clk):
    """timing5: the shared-SM barrier.cluster increment is a function of the warps per CTA and the CTAs per SM, not a
    constant (H100 probes, 2-CTA clusters on all SMs: +494 clk at 8 warps x 2 per SM, +339 at 8 x 4, +79 / +116 at
    16 x 2 / 4, +76 at 32 x 2; one cluster of 16 / 32 warps already costs 1296 / 1402 clk).  The predicted loop
    period matches the probe within 3 % (main's constant +292 clk: 1289 clk at 32 warps x 2 per SM, -14 %)."""
    p = P.H100
    src = S.defines(CL=2, WORK=0) + SC.CBAR
    args = lambda n: [np.int32(n), np.float32(1.0)]  # noqa: E731
    shared = _per_iter_clk(src, "cbar", 2, p.sms * per_sm, 32 * warps, args)
    assert shared == pytest.approx(probe_clk, rel=0.03), (warps, per_sm, shared, probe_clk)
    inc = {(w, n): P.cluster_bar_shared(p.cluster_bar_shared_clk, w, n) for w in (8, 32) for n in (2, 4)}
    assert inc[(32, 2)] < 0.5 * inc[(8, 2)] and inc[(8, 4)] < inc[(8, 2)]
    # the law itself: the wide-CTA term is 0 up to 8 warps, the shared term 0 on an SM of one cluster
    assert p.cluster_bar_clk(2, 8) == pytest.approx(p.cluster_bar_latency_clk + 2 * p.cluster_bar_per_cta_clk
                                                    + 8 * p.cluster_bar_per_warp_clk)
    assert p.cluster_bar_clk(2, warps, per_sm) - p.cluster_bar_clk(2, warps) == pytest.approx(
        P.cluster_bar_shared(p.cluster_bar_shared_clk, warps, per_sm))


@pytest.mark.parametrize("ctas,probe_clk", [(132, 350.7), (264, 690.1)])
def test_dsmem_narrow_loads_use_the_narrow_port_rate(ctas, probe_clk):
    """timing5: DSMEM loads of 4 B per thread pass the SM-to-SM port at dsmem_narrow_bytes_clk (H100 probe: the
    dependent chase with 1024-thread CTAs of 2-CTA clusters, 1 / 2 per SM: 350.7 / 690.1 clk per hop = 11.7 / 11.9
    B/clk), 16-B loads at dsmem_bytes_clk (8.2 B/clk); main's single rate predicted 499 / 999 clk (+42 / +45 %)."""
    p = P.H100
    assert p.dsmem_narrow_bytes_clk > 1.3 * p.dsmem_bytes_clk
    step = int(np.random.default_rng().integers(1, 1023))
    src = S.defines(CL=2) + SC.DSMEM_CHASE
    hop = _per_iter_clk(src, "dsmem_chase", 2, ctas, 1024, lambda n: [np.uint32(step), np.int32(n)])
    assert hop == pytest.approx(probe_clk, rel=0.05), (ctas, hop, probe_clk)
    bw = _per_iter_clk(S.defines(CL=2) + SC.DSMEM_BW, "dsmem_bw", 2, ctas, 1024, lambda n: [np.int32(n)])
    assert bw == pytest.approx(ctas // p.sms * 1024 * 16 / p.dsmem_bytes_clk, rel=0.05), bw
