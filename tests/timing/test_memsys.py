"""The memory hierarchy of the timing model (issue 21 item 3): the grid footprint decides L2 vs DRAM, L1 hits,
shared-memory wavefronts and bank conflicts (CPU only)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.timing import params as P
from ptxlab.timing import synthetic_series as SS
from ptxlab.timing import trace as TR
from ptxlab.timing.trace import smem_wavefronts

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_timing_sass import _sgemm  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::ptxlab.timing.predict.TimingSampleWarning")


def _l2share(shared: int, nct: int = 264, span: int = 256 * 1024):
    mod = ptxlab.compile(SS._defines(SHARED=shared) + SS.L2SHARE, arch="sm_90a", name="l2share.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    rng = np.random.default_rng()
    x = dev.to_device(rng.standard_normal((span * (1 if shared else nct)) // 4).astype(np.float32))
    out = dev.empty(nct * 512 * 4)
    dev.launch(mod, "l2share", grid=(nct, 1, 1), block=(512, 1, 1), args=[x, out, np.int64(span // 16)])
    return dev.last_timing, span, nct


def test_operands_shared_across_sms_are_l2_traffic_not_dram():
    """264 CTAs on 132 SMs each stream the same 256 KB: the grid reads it from DRAM once (the footprint finds the
    set does not move along x; the old one-SM first-touch rule charged every SM's first read, 132 x); CTAs with
    their own 256 KB each read 264 x as much from DRAM.  (H100 ncu, 2 MB version: 2.1 MB vs 554 MB from DRAM.)"""
    ts, span, nct = _l2share(1)
    tp, _, _ = _l2share(0)
    assert "shared along x" in ts.footprint, ts.footprint
    assert "private to each CTA" in tp.footprint, tp.footprint
    assert ts.amounts["dram_bytes"] == pytest.approx(span, rel=0.1), ts.amounts
    assert tp.amounts["dram_bytes"] == pytest.approx(span * nct, rel=0.1), tp.amounts
    tot_s = ts.amounts["dram_bytes"] + ts.amounts["l2_bytes"]
    tot_p = tp.amounts["dram_bytes"] + tp.amounts["l2_bytes"]
    assert 0.4 * tot_p < tot_s <= tot_p       # the second CTA of an SM finds the shared bytes in L1
    assert ts.bound != "DRAM" and tp.bound == "DRAM"
    assert ts.us < 0.7 * tp.us


def test_neighbouring_reads_hit_l1():
    """A radius-4 stencil reads each element 9 times from neighbouring threads: the L1 serves most of it (ncu on the
    H100: 57 % L1 hits), so L2 traffic is a fraction of the L1 traffic and DRAM reads are the input once."""
    n = 1 << 16
    mod = ptxlab.compile(SS._defines(R=4) + SS.L1HIT, arch="sm_90a", name="stencil.cu")
    dev = ptxlab.open_device("emu", timing="h100", timing_sample="all")
    rng = np.random.default_rng()
    xs = rng.standard_normal(n).astype(np.float32)
    x, y = dev.to_device(xs), dev.empty(4 * n)
    dev.memset(y, 0xFF)
    dev.launch(mod, "stencil", grid=(n // 256, 1, 1), block=(256, 1, 1), args=[x, y, np.int32(n)])
    t = dev.last_timing
    got = dev.to_host(y, np.float32)[4:n - 4]
    ref = np.convolve(xs, np.ones(9, np.float32), "valid")
    assert np.allclose(got, ref, rtol=1e-4, atol=1e-4)
    trace = t._replay[0]
    sect = miss = 0
    for st in trace.streams.values():
        for _, k, d in st:
            if k == 1:          # GLD
                sect += d[0]
                miss += d[1]
    assert sect > 0 and miss < 0.5 * sect, (miss, sect)


def test_bank_conflicts_serialise_shared_memory():
    """Column reads of an unpadded 32 x 32 float tile hit one bank 32 times (32 wavefronts per access); padding
    the row by one word removes the conflict.  H100: 1065 vs 44 us (24x); the model must be bound by shared
    memory, its shared-memory busy time over 20x the padded one's (ncu on the H100: 31.5x the wavefronts;
    ptxas turns the first pass's loads into LDS.128, which conflict 16-way per half-warp, so below 32x here)."""
    res = {}
    for pad in (0, 1):
        mod = ptxlab.compile(SS._defines(PAD=pad, REPS=64) + SS.BANK, arch="sm_90a", name="bank.cu")
        dev = ptxlab.open_device("emu", timing="h100")
        x = dev.to_device(np.random.default_rng().standard_normal(528 * 8 * 1024).astype(np.float32))
        y = dev.empty(528 * 8 * 32 * 4)
        dev.launch(mod, "bank", grid=(528, 1, 1), block=(256, 1, 1), args=[x, y])
        res[pad] = dev.last_timing
    assert res[0].bound == "shared memory", res[0].utilization
    busy = [res[k].utilization["smem"] * res[k].sim_us for k in (0, 1)]
    assert 20 * busy[1] < busy[0] < 33 * busy[1], busy
    assert res[0].sim_us > 3 * res[1].sim_us, (res[0].sim_us, res[1].sim_us)


@pytest.mark.parametrize("nbytes,pattern,expect", [
    (4, "consecutive", 1), (4, "broadcast", 1), (4, "stride32", 32), (4, "stride2", 2),
    (8, "consecutive", 2), (8, "broadcast", 1), (16, "consecutive", 4), (16, "broadcast", 2)])
def test_shared_memory_wavefronts(nbytes, pattern, expect):
    """Wavefronts of one warp's shared access: a 128-bit access is served per half-warp (a warp-wide broadcast
    is 2 wavefronts, 32 distinct 16-byte words 4); narrower accesses per warp, one word per bank per wavefront.
    H100 probes (tools/probes/timing_model_h100.py): 32-bit stride 32 32.0 clk per access per SM, stride 2 2.04,
    64-bit consecutive 2.05."""
    lanes = np.arange(32)
    base = int(np.random.default_rng().integers(0, 64)) * 128
    addr = {"consecutive": lanes * nbytes, "broadcast": lanes * 0, "stride32": lanes * 128,
            "stride2": lanes * 8}[pattern] + base
    got = smem_wavefronts(np.zeros(32, np.int64), lanes, addr.astype(np.int64), nbytes, 1)
    assert int(got[0]) == expect


@pytest.mark.parametrize("nbytes", [1, 2, 4, 8, 16])
def test_wavefront_fast_paths_count_as_the_general_one(nbytes):
    """trace._wavefronts_fast / _wavefronts_rows (whole warps) give _wavefronts_unique's counts on random patterns:
    strides, broadcasts, conflicts, windows wider than 128 bytes."""
    rng = np.random.default_rng()
    nw = 6
    for _ in range(40):
        warps = np.sort(rng.choice(nw, size=3, replace=False))
        lanes = np.tile(np.arange(32), warps.size)
        kind = rng.integers(5)
        if kind == 4:       # word-aligned only (the general word count; a real access this wide would fault)
            addr = rng.integers(0, 1 << 12, lanes.size) * 4
        elif kind == 0:
            addr = rng.integers(0, 1 << 14, lanes.size) // nbytes * nbytes
        elif kind == 1:
            addr = (lanes * int(rng.integers(0, 40)) * nbytes + int(rng.integers(0, 64)) * 16) % (1 << 14)
        elif kind == 2:
            addr = rng.integers(0, 8, lanes.size) * int(rng.choice([4, 16, 128, 132])) // nbytes * nbytes
        else:
            addr = (lanes // int(rng.integers(1, 9))) * nbytes
        addr = addr.astype(np.int64)
        w = np.repeat(warps, 32)
        ref = TR._wavefronts_unique(w, lanes, addr, nbytes, nw)
        assert ref[warps].min() >= 1
        got = TR._wavefronts_rows(w, addr, nbytes, nw)
        assert np.array_equal(got, ref), (nbytes, kind, got, ref)
        fast = TR._wavefronts_fast(w, addr, nbytes, nw)
        assert fast is None or np.array_equal(fast, ref)
        assert np.array_equal(smem_wavefronts(w, lanes, addr, nbytes, nw), ref)


COLSTORE = r"""
extern "C" __global__ void colstore(const float* __restrict__ x, float* y, int n, int cols) {
    // thread t writes row t: every warp store touches 32 rows (32 lines), like a TMEM-lane epilogue
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[row];
    for (int c = 0; c < cols; ++c)
        y[(size_t)row * n + c] = v + c;
}
"""


def test_uncoalesced_stores_hold_the_warp_at_the_l1():
    """Nothing waits for a store's result, but the L1 takes one 128-byte line per clock (l1_lines_clk): a warp whose
    stores each touch 32 lines issues them no faster, so the kernel lasts at least its lines per SM / l1_lines_clk
    and the L1 is never busier than the kernel is long (before: the queue outlived the kernel, L1 333 % busy)."""
    mod = ptxlab.compile(COLSTORE, arch="sm_90a", name="colstore.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    rng = np.random.default_rng()
    cols, n, ctas, threads = int(rng.integers(24, 48)), 64, 132, 256
    x = dev.to_device(rng.standard_normal(ctas * threads).astype(np.float32))
    y = dev.empty(ctas * threads * n * 4)
    dev.launch(mod, "colstore", grid=(ctas, 1, 1), block=(threads, 1, 1), args=[x, y, np.int32(n), np.int32(cols)])
    t = dev.last_timing
    p = P.H100
    lines = threads // 32 * cols * 32                    # per SM (one CTA each): warps x stores x 32 lines
    assert t.sim_us * p.clock_ghz * 1e3 >= lines / p.l1_lines_clk
    assert t.utilization["l1"] <= 1.0 + 1e-9, t.utilization
    # round 3: each 4-B store is an L2 write request, and the L2 takes l2_write_req_clk of them per clock GPU-wide
    # (H100 ncu of the corpus transposes), fewer than the SMs' L1s take lines: the L2 binds, at least its requests
    assert t.bound == "L2" and t.utilization["l2"] >= 0.6, (t.bound, t.utilization)
    assert t.sim_us * p.clock_ghz * 1e3 >= 0.95 * lines * p.sms / p.l2_write_req_clk      # GPU-wide requests / rate
    # write-back L2: the 4-B stores to one sector merge; the output (8.7 MB) fits the dirty share of L2, so no DRAM
    # writes (before round 2: every stored sector access was counted, 8x the output, and written back)
    assert t.amounts["dram_bytes"] <= 0.05 * ctas * threads * n * 4, t.amounts


def test_cloned_launch_probes_see_the_whole_footprint(monkeypatch):
    """Round 2 item 1: when the busiest SM's other CTAs are cloned, the probe CTAs still run a whole CTA's work, so
    the translation of the operand tiles is found and DRAM reads stay near the compulsory bytes (the old 0.3x probe
    budget cut the probes short: 'not a translation', every CTA's first touch = DRAM, ~20x here)."""
    n = 640
    monkeypatch.setenv("PTXLAB_TIMING_EMU_INSTRS", "1000")     # clone the busiest SM's 3 other CTAs
    _, t = _sgemm("smem", n)
    assert "simulated as its copies" in t.sampled, t.sampled
    assert "not a translation" not in t.footprint and "stopped early" not in t.footprint, t.footprint
    compulsory = 2 * n * n * 4
    assert t.amounts["dram_bytes"] < 2 * compulsory, (t.amounts["dram_bytes"] / compulsory, t.footprint)


def test_non_translation_reads_are_capped_at_the_compulsory_bytes():
    """Round 2 item 2: a 1-D-indexed naive transpose reads each 32-B sector 8 times (4 useful bytes each, from 8
    CTAs n / 256 apart); its footprint is no translation in blockIdx, and the old rule charged every first touch to
    DRAM (8x the input).  The input (4 MB) fits in L2: DRAM reads are the input once."""
    n = 1024
    mod = ptxlab.compile(SS.TRANSPOSE_1D, arch="sm_90a", name="transpose_1d.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    rng = np.random.default_rng()
    x = rng.standard_normal(n * n).astype(np.float32)
    xin = dev.to_device(x)
    out = dev.empty(n * n * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "transpose_1d", grid=(n * n // 256, 1, 1), block=(256, 1, 1), args=[xin, out, np.uint32(n)])
    t = dev.last_timing
    assert "not a translation" in t.footprint and "capped at the compulsory bytes" in t.footprint, t.footprint
    got = dev.to_host(out, np.float32).reshape(n, n)
    assert np.array_equal(got[0, :256], x.reshape(n, n).T[0, :256])     # CTA 0 (sampled) wrote its 256 elements
    assert 0.9 * n * n * 4 <= t.amounts["dram_bytes"] <= 1.2 * n * n * 4, (t.amounts["dram_bytes"] / (n * n * 4),
                                                                             t.footprint)
