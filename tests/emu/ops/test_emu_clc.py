"""clusterlaunchcontrol.try_cancel / query_cancel (PTX ISA 9.7.13, sm_100) and griddepcontrol on the emulator:
a persistent kernel that steals not-yet-started clusters' tiles; the deterministic success policies
(hw/clc.py, ptx_docs/cluster_launch_control.md); the multicast form with a cluster launch; the reported misuses."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError, UsageError

SRC = r'''
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void bar_wait(unsigned b, unsigned parity) {
    asm volatile("{\n\t.reg .pred p;\n\tW_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
                 "@!p bra W_%=;\n\t}" :: "r"(b), "r"(parity) : "memory");
}
// all threads: read the response; returns 1 and the canceled cluster's first ctaid.x when canceled (its ctaid.y,
// 0 in these 1-D grids, is added times 2^20: a wrong ::y sends the tile out of range)
__device__ __forceinline__ unsigned query(unsigned r, unsigned& x) {
    unsigned ok, y = 0;
    asm volatile("{\n\t.reg .b128 q;\n\t.reg .pred p;\n\tld.shared.b128 q, [%3];\n\t"
                 "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, q;\n\tselp.u32 %1, 1, 0, p;\n\t"
                 "@p clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %0, q;\n\t"
                 "@p clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128 %2, q;\n\t}"
                 : "+r"(x), "=r"(ok), "+r"(y) : "r"(r) : "memory");
    x += y << 20;
    return ok;
}
__device__ __forceinline__ void try_cancel(unsigned r, unsigned b) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" :: "r"(b) : "memory");
    asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];"
                 :: "r"(r), "r"(b) : "memory");
}
// Persistent 1-D tile loop: tile x = blockIdx.x first, then every tile a successful try_cancel hands over.
// out[x * blockDim.x + tid] = x * 1000 + tid; who[x] = blockIdx.x of the CTA that did tile x.
extern "C" __global__ void persistent(unsigned* out, unsigned* who, unsigned retry_after_fail) {
    __shared__ __align__(16) unsigned resp[4];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar), r = sa(resp);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    unsigned x = blockIdx.x, phase = 0, fails = 0;
    while (true) {
        out[x * blockDim.x + threadIdx.x] = x * 1000 + threadIdx.x;
        if (threadIdx.x == 0) { who[x] = blockIdx.x; try_cancel(r, b); }
        bar_wait(b, phase);
        phase ^= 1;
        unsigned nx = x;
        unsigned ok = query(r, nx);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();                      // every thread read the response before the next request
        if (!ok && ++fails > retry_after_fail) break;
        if (ok) x = nx;
    }
}
// get_first_ctaid without testing is_canceled (undefined for a failed response)
extern "C" __global__ void unguarded(unsigned* out) {
    __shared__ __align__(16) unsigned resp[4];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar), r = sa(resp);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        try_cancel(r, b);
    }
    __syncthreads();
    bar_wait(b, 0);
    unsigned x;
    asm volatile("{\n\t.reg .b128 q;\n\tld.shared.b128 q, [%1];\n\t"
                 "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%0, _, _, _}, q;\n\t}"
                 : "=r"(x) : "r"(r) : "memory");
    out[threadIdx.x] = x;
}
// Cluster of 2 CTAs, multicast request by rank 0: both CTAs get the response on their own barrier and do the
// canceled cluster's tile of their rank (tile = first ctaid.x + rank).
extern "C" __global__ void __cluster_dims__(2, 1, 1) persistent_mc(unsigned* out, unsigned* who) {
    __shared__ __align__(16) unsigned resp[4];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar), r = sa(resp);
    unsigned rank;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    unsigned x = blockIdx.x, phase = 0;
    while (true) {
        out[x * blockDim.x + threadIdx.x] = x * 1000 + threadIdx.x;
        if (threadIdx.x == 0) {
            who[x] = blockIdx.x;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" :: "r"(b) : "memory");
        }
        // every CTA's barrier expects the bytes before rank 0 requests
        asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
        if (threadIdx.x == 0 && rank == 0)
            asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes"
                         ".multicast::cluster::all.b128 [%0], [%1];" :: "r"(r), "r"(b) : "memory");
        bar_wait(b, phase);
        phase ^= 1;
        unsigned nx = 0;
        unsigned ok = query(r, nx);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
        if (!ok) break;
        x = nx + rank;
    }
}
// griddepcontrol: the dependent reads what the primary wrote after griddepcontrol.wait
extern "C" __global__ void primary(unsigned* buf) {
    buf[blockIdx.x * blockDim.x + threadIdx.x] = 3 * (blockIdx.x * blockDim.x + threadIdx.x) + 1;
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
extern "C" __global__ void dependent(const unsigned* buf, unsigned* out) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = buf[i] * 2;
}
'''

BLOCK = 64


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_100a", name="clc.cu")


def _run(mod, grid: int, retry: int = 0, kernel: str = "persistent", **opts):
    dev = ptxlab.open_device("emu", **opts)
    out, who = dev.empty(grid * BLOCK * 4), dev.empty(grid * 4)
    dev.memset(out, 0xFF)
    dev.memset(who, 0xFF)
    args = [out, who] + ([np.uint32(retry)] if kernel == "persistent" else [])
    kw = {"cluster": (2, 1, 1)} if kernel == "persistent_mc" else {}
    dev.launch(mod, kernel, grid=grid, block=BLOCK, args=args, **kw)
    o = dev.to_host(out, np.uint32).reshape(grid, BLOCK)
    want = np.arange(grid)[:, None] * 1000 + np.arange(BLOCK)[None, :]
    np.testing.assert_array_equal(o, want)      # every tile done exactly by someone (poisoned before)
    return dev.to_host(who, np.uint32), dev.last_stats


def test_ptx_has_the_clc_forms(mod):
    for s in ("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128",
              "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128",
              "clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128",
              "clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128",
              "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128", "ld.shared.b128",
              ".multicast::cluster::all.b128", "griddepcontrol.wait", "griddepcontrol.launch_dependents"):
        assert s in mod.ptx, s


def test_never_every_cta_does_its_own_tile(mod, rng):
    grid = int(rng.integers(3, 9))
    who, stats = _run(mod, grid, clc="never", wave_ctas=2)
    np.testing.assert_array_equal(who, np.arange(grid))
    assert stats["clc_requests"] == grid and stats["clc_canceled"] == 0 and stats["waves"] == -(-grid // 2)


def test_all_first_wave_takes_every_later_cluster(mod, rng):
    grid = int(rng.integers(5, 11))
    who, stats = _run(mod, grid, clc="all", wave_ctas=2)
    assert set(who[:2]) == {0, 1} and set(who[2:]) <= {0, 1}
    assert stats["clc_canceled"] == grid - 2 and stats["waves"] == 1
    assert stats["clc_requests"] == grid      # one failure per CTA that ran (2) + one success per stolen tile


def test_every_other_default_exercises_both_paths(mod):
    grid = 9
    who, stats = _run(mod, grid, wave_ctas=2)
    stolen = int((who != np.arange(grid)).sum())
    assert stolen == stats["clc_canceled"] > 0 and stats["waves"] > 1
    assert stats["clc_requests"] == grid
    # deterministic: request n succeeds iff n is even. Wave 1 = CTAs 0, 1: req0 (CTA0) takes tile 2, req1 (CTA1)
    # fails, req2 (CTA0) takes 3, req3 fails (CTA0 exits). Wave 2 = 4, 5: req4 (CTA4) takes 6, req5 fails (CTA5),
    # req6 (CTA4) takes 7, req7 fails. Wave 3 = CTA 8: req8 would succeed but no cluster is left.
    np.testing.assert_array_equal(who, [0, 1, 0, 0, 4, 5, 4, 4, 8])


def test_first_n_policy(mod):
    who, stats = _run(mod, 6, clc="first:3", wave_ctas=3)
    assert stats["clc_canceled"] == 3 and stats["waves"] == 1
    np.testing.assert_array_equal(who, [0, 1, 2, 0, 1, 2])


def test_env_policy(mod, monkeypatch):
    monkeypatch.setenv("PTXLAB_EMU_CLC", "never")
    monkeypatch.setenv("PTXLAB_EMU_WAVE_CTAS", "1")
    who, stats = _run(mod, 4)
    np.testing.assert_array_equal(who, np.arange(4))
    assert stats["waves"] == 4 and stats["clc_canceled"] == 0


def test_bad_policy_is_refused():
    with pytest.raises(UsageError, match="policy"):      # a bad option is a usage error (ptxlab.settings)
        ptxlab.open_device("emu", clc="sometimes")


def test_multicast_cluster_response(mod):
    """Cluster (2,1,1), 8 CTAs, waves of one cluster: every stolen cluster's two tiles are done by the requester's
    two CTAs (rank r does first ctaid + r)."""
    who, stats = _run(mod, 8, kernel="persistent_mc", clc="all", wave_ctas=2)
    np.testing.assert_array_equal(who, [0, 1, 0, 1, 0, 1, 0, 1])
    assert stats["clc_canceled"] == 3 and stats["waves"] == 1


def test_try_cancel_after_observed_failure_is_reported(mod):
    with pytest.raises(EmuError, match="after this CTA observed a failed request"):
        _run(mod, 2, retry=1, clc="never")


def test_get_first_ctaid_of_failed_response_is_reported(mod):
    """Strict (rule clc_failed_ctaid): an error. Default: a warning, and the undefined value is 0xFFFFFFFF."""
    dev = ptxlab.open_device("emu", clc="never", strict="clc_failed_ctaid")
    out = dev.empty(4 * 32)
    with pytest.raises(EmuError, match="get_first_ctaid of a failed request"):
        dev.launch(mod, "unguarded", grid=1, block=32, args=[out])
    dev = ptxlab.open_device("emu", clc="never")
    out = dev.empty(4 * 32)
    dev.memset(out, 0)
    with pytest.warns(UserWarning, match="get_first_ctaid of a failed request"):
        dev.launch(mod, "unguarded", grid=1, block=32, args=[out])
    assert 0xFFFFFFFF in dev.to_host(out, np.uint32)


def test_griddepcontrol_dependent_sees_primary(mod, rng):
    dev = ptxlab.open_device("emu")
    n = 4 * BLOCK
    buf, out = dev.empty(4 * n), dev.empty(4 * n)
    dev.memset(out, 0xFF)
    dev.launch(mod, "primary", grid=4, block=BLOCK, args=[buf])
    dev.launch(mod, "dependent", grid=4, block=BLOCK, args=[buf, out], pdl=True)
    np.testing.assert_array_equal(dev.to_host(out, np.uint32), (3 * np.arange(n) + 1) * 2)
