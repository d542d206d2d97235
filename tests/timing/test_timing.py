"""Timing model (ptxlab/timing): synthetic kernels whose time is known from first principles (CPU only)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import ptxlab
from ptxlab.timing import params as P
from ptxlab.timing import synthetic as S

# these tests sample on purpose (timing only); test_timing_only_sample_warns_once_per_kernel checks the warning
pytestmark = pytest.mark.filterwarnings("ignore::ptxlab.timing.predict.TimingSampleWarning")


def _dev(gpu="h100", **kw):
    return ptxlab.open_device("emu", timing=gpu, **kw)


def _pipe(stages: int, nctas: int, work: int, chunks: int = 16, gpu: str = "h100"):
    mod = ptxlab.compile(S.defines(STAGES=stages, WORK=work) + S.PIPE, arch="sm_90a", name="pipe.cu")
    dev = _dev(gpu)
    rng = np.random.default_rng()
    src = dev.to_device(rng.integers(1, 255, nctas * chunks * 8192, dtype=np.uint8))
    out = dev.empty(nctas * 32 * 4)
    dev.launch(mod, "pipe", grid=(nctas, 1, 1), block=(64, 1, 1), args=[src, out, np.int32(chunks)])
    prog = dev.program(mod, "pipe")
    full = prog.syms[next(n for n in prog.syms if n.endswith("4full"))][1]
    empty = prog.syms[next(n for n in prog.syms if n.endswith("5empty"))][1]
    return dev.last_timing, full, empty


def _on(waits: dict, base: int, stages: int = 4) -> float:
    """Wait time on the mbarriers base, base + 8, ... (a ring of `stages` barriers)."""
    tot = 0.0
    for k, v in waits.items():
        if k.startswith("mbarrier 0x"):
            a = int(k.split()[1], 16)
            if base <= a < base + 8 * stages:
                tot += v
    return tot


def test_every_parameter_has_a_source():
    for p in P.TABLES.values():
        for name, src in p.sources.items():
            assert src and isinstance(src, str), (p.name, name)
    assert "dram_bw" not in P.UNSOURCED_B200   # SemiAnalysis' TMA throughput gives it
    assert "dram_latency_ns" not in P.UNSOURCED_B200 and "tc_ii_clk" not in P.UNSOURCED_B200
    assert "tc_flops_clk" in P.UNSOURCED_B200  # kind::mxf4nvf4 has no public measurement: varied by --sensitivity
    assert "9a068d853d5c" in P.B200.sources["tc_latency_clk"]


def _stream(n: int):
    """The float4 stream of n elements on 528 CTAs, timed on the H100: (timing, dev, x, y, module, rng)."""
    mod = ptxlab.compile(S.STREAM, arch="sm_90a", name="stream.cu")
    dev = _dev("h100")
    rng = np.random.default_rng()
    x = dev.to_device(rng.random(4 * n, dtype=np.float32))
    y = dev.empty(16 * n)
    dev.memset(y, 0xFF)
    dev.launch(mod, "stream", grid=(528, 1, 1), block=(256, 1, 1), args=[x, y, np.int32(n)])
    return dev.last_timing, dev, x, y, mod, rng


def test_dram_stream_is_bytes_over_bandwidth_plus_overhead():
    n = 1 << 21
    t, dev, x, y, mod, rng = _stream(n)
    p = P.H100
    expect = p.launch_us + 2 * 16 * n / p.dram_bw * 1e6
    assert t.bound == "DRAM"
    assert abs(t.us - expect) / expect < 0.15, (t.us, expect)
    # the sample emulated only the busiest SM's CTAs: CTA 0's elements are written, CTA 1's are not
    got = dev.to_host(y, np.float32).reshape(-1, 4)
    assert got[0, 0] == np.float32(np.float32(dev.to_host(x, np.float32)[0]) + 1)
    assert "timing-only sample" in t.sampled
    # more SMs' worth of DRAM bandwidth (the B200 table) predicts a shorter kernel
    dev2 = _dev("b200")
    x2 = dev2.to_device(rng.random(4 * n, dtype=np.float32))
    y2 = dev2.empty(16 * n)
    dev2.launch(mod, "stream", grid=(528, 1, 1), block=(256, 1, 1), args=[x2, y2, np.int32(n)])
    assert dev2.last_timing.us < t.us


def test_slow_producer_pipeline_consumer_waits_on_full_barrier():
    t, full, empty = _pipe(stages=4, nctas=264, work=1)
    assert t.bound in ("DRAM", "TMA issue", "L2->SM fill")
    cons = t.warps[1]["waits"]
    waits_full = _on(cons, full)
    assert waits_full > 0.5 * sum(cons.values()), cons     # the consumer mostly waits for data
    assert _on(cons, empty) == 0.0                          # it never waits on the empty ring
    # the producer waits for free slots (the empty barriers) as the ring fills up
    assert _on(t.warps[0]["waits"], empty) > 0


def test_slow_consumer_pipeline_is_not_memory_bound():
    t, full, empty = _pipe(stages=4, nctas=132, work=400, chunks=8)
    assert t.bound not in ("DRAM", "TMA issue")
    prod = t.warps[0]["waits"]
    assert _on(prod, empty) > 0.5 * sum(prod.values()), prod   # the producer waits for the consumer
    assert _on(t.warps[1]["waits"], full) < 0.2 * _on(prod, empty)


def test_deeper_ring_helps_a_latency_bound_pipeline():
    t2, _, _ = _pipe(stages=2, nctas=1, work=1)
    t4, _, _ = _pipe(stages=4, nctas=1, work=1)
    assert t2.bound == "latency/sync"
    assert t4.us < 0.85 * t2.us, (t2.us, t4.us)


def test_fma_loop_is_issue_bound_and_scales_with_work():
    res = []
    for iters in (128, 256):
        mod = ptxlab.compile(S.defines(ITERS=iters) + S.FMA, arch="sm_90a", name="fma.cu")
        dev = _dev("h100")
        out = dev.empty(132 * 8 * 256 * 4)
        dev.launch(mod, "fma_loop", grid=(132 * 8, 1, 1), block=(256, 1, 1),
                   args=[out, np.float32(0.999), np.float32(0.5)])
        res.append(dev.last_timing)
    t1, t2 = res
    assert t2.bound == "instruction issue"
    ratio = (t2.us - t2.launch_us) / (t1.us - t1.launch_us)
    assert 1.8 < ratio < 2.2, ratio
    # 8 CTAs x 8 warps x 256 x 8 FMAs per SM at 4 issues/clk: the FMA floor of the simulated SM
    floor = 8 * 8 * 256 * 8 / 4 / (P.H100.clock_ghz * 1e3)
    assert floor <= t2.sim_us < 1.4 * floor, (t2.sim_us, floor)


def test_chrome_trace_and_png(tmp_path, monkeypatch):
    from ptxlab.timing import trace_export

    # compiled without -lineinfo (the default): the events still name their CUDA line, like fault reports
    monkeypatch.setenv("PTXLAB_DEBUG", "")
    monkeypatch.delenv("PTXLAB_EMU_LINEINFO", raising=False)
    t, full, _ = _pipe(stages=2, nctas=1, work=1, chunks=8)
    js = trace_export.write_chrome_trace(t, tmp_path / "t.json")
    data = json.loads(js.read_text())
    evs = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert any(e["name"].startswith("TMA load") for e in evs)
    waits = [e for e in evs if e["name"].startswith("mbarrier 0x") and full <= int(e["name"].split()[1], 16)
             < full + 16]
    assert waits and all("line" in e["args"] for e in waits)
    assert all("src" in e["args"] and "line" in e["args"] and "ptx" in e["args"] for e in evs), evs[:3]
    cuda = (S.defines(STAGES=2, WORK=1) + S.PIPE).splitlines()

    def cuda_line(e):
        f, n = e["args"]["src"].rsplit(":", 1)
        assert f.endswith("pipe.cu"), f
        return cuda[int(n) - 1]
    assert all("cp.async.bulk" in cuda_line(e) for e in evs if e["name"].startswith("TMA load"))
    assert all("__syncthreads" in cuda_line(e) for e in evs if e["name"].startswith("bar.sync"))
    png = trace_export.write_png(t, tmp_path / "t.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_time_script(tmp_path, capsys):
    from ptxlab.lab.cli import main

    script = tmp_path / "k.py"
    script.write_text(
        "import numpy as np, ptxlab\n"
        "from ptxlab.timing import synthetic as S\n"
        "mod = ptxlab.compile(S.STREAM, arch='sm_90a', name='s.cu')\n"
        "dev = ptxlab.open_device('emu')\n"
        "x = dev.to_device(np.ones(4096, np.float32)); y = dev.empty(4 * 4096)\n"
        "dev.launch(mod, 'stream', grid=(4,1,1), block=(256,1,1), args=[x, y, np.int32(1024)])\n")
    rc = main(["time", "--gpu", "h200", "--trace", str(tmp_path / "o.json"), str(script)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "PREDICTED on H200" in out and "stream" in out
    assert (tmp_path / "o.json").exists()
    import os
    assert "PTXLAB_TIMING" not in os.environ


def test_mma_completion_latency_delays_the_commit():
    """tcgen05.commit arrives when the CTA's last MMA has left the tensor pipe plus the fixed completion latency of
    the SemiAnalysis fits (latency = II + b, b = 133.9 clk for 1-SM SS): with b raised by 1000 clk every commit
    the GEMM waits on (one per K chunk ring pass plus the epilogue's) arrives later, so the kernel takes longer."""
    from ptxlab import gpumode
    from ptxlab.production.gemm import nvfp4_gemm
    from ptxlab.timing.predict import resimulate

    dev = _dev("b200")
    nvfp4_gemm(dev, gpumode.generate_gemm(128, 256, 1024, 1, int(np.random.default_rng().integers(1 << 30))))
    t = dev.last_timing
    assert P.B200.tc_ii(1, 128, 256) == 128.0 and P.B200.tc_ii(1, 128, 64) == 48.0
    slow = resimulate(t, P.B200.with_(tc_latency_clk={k: v + 1000.0 for k, v in P.B200.tc_latency_clk.items()}))
    added = (slow.sim_us - t.sim_us) * P.B200.clock_ghz * 1e3
    assert added >= 1000.0 - 1e-6, added          # the last commit at least (float sums)


def test_mma_bound_gemm_runs_at_the_tensor_core_rate():
    """The production tcgen05 GEMM (one 128x256 tile, K = 4096: 64 x tcgen05.mma 128x256x64 mxf4nvf4) replayed with
    memory made free: the tensor pipe bounds it, at 2*M*N*K / rate per MMA; with the real table it is slower.
    Pinned to variant "1sm": the default "cluster" variant (issue 22) splits N = 256 into 8 CTAs of 128x32."""
    from ptxlab import gpumode
    from ptxlab.production.gemm import nvfp4_gemm
    from ptxlab.timing.predict import resimulate

    dev = _dev("b200")
    k = 4096
    rep = {}
    nvfp4_gemm(dev, gpumode.generate_gemm(128, 256, k, 1, int(np.random.default_rng().integers(1 << 30))),
               variant="1sm", report=rep)
    assert (rep["bn"], rep["grid"]) == (256, (1, 1, 1)), rep
    t = dev.last_timing
    # every TMA byte of A (128 x K fp4) and B (256 x K fp4) is charged to the memory system (the engine's one-gather
    # TMA reads once bypassed the recorder: 0 bytes)
    assert t.amounts["dram_bytes"] >= (128 + 256) * k // 2, t.amounts      # first touches: from DRAM
    fast = P.B200.with_(dram_bw=1e15, l2_bw=1e15, sm_dram_bytes_clk=1e6, tma_bytes_clk=1e6, dram_latency_ns=1.0,
                        l2_latency_ns=1.0, tma_latency_ns=0.0, tma_issue_clk=1.0, sm_l1_bytes_clk=1e6,
                        l1_lines_clk=1e6)
    tf = resimulate(t, fast)
    assert tf.bound == "tensor core", tf.utilization
    clk = P.B200.clock_ghz * 1e3
    per_mma = 2 * 128 * 256 * 64 / P.B200.tc_flops_clk["mxf4nvf4"]          # 128 cycles
    mma_cycles = (k // 64) * per_mma
    busy = tf.utilization["tensor"] * tf.sim_us * clk                       # MMAs + tcgen05.cp of the scales
    assert mma_cycles <= busy <= 1.5 * mma_cycles, (busy, mma_cycles)
    assert tf.sim_us * clk <= 1.6 * busy                                     # + prologue / epilogue only
    half = resimulate(t, fast.with_(tc_flops_clk={**fast.tc_flops_clk, "mxf4nvf4": 16384.0}))
    assert half.sim_us - tf.sim_us > 0.9 * mma_cycles / clk                 # every MMA twice as long
    assert t.us > tf.us


def test_cli_time_problem_with_sensitivity(tmp_path, capsys):
    from ptxlab.lab.cli import main

    rc = main(["time", "--problem", "nvfp4_gemv", "--shape", "512,4096,2", "--gpu", "b200", "--sensitivity",
               "--png", str(tmp_path / "g.png")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "nvfp4_gemv_cudacore — PREDICTED on B200" in out
    assert "sensitivity" in out and "launch_us" in out and "x0.5" in out
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("kw,needles", [(dict(timing="a100"), ("'a100'", "h100", "h200", "b200")),
                                        (dict(timing="b200", timing_sample="full"), ("'full'", "'all'"))])
def test_open_device_refuses_unknown_timing_arguments(kw, needles):
    with pytest.raises(ValueError) as ei:
        ptxlab.open_device("emu", **kw)
    for n in needles:
        assert n in str(ei.value), str(ei.value)


def test_timing_only_sample_warns_once_per_kernel():
    """A sampled launch leaves the other CTAs' outputs uncomputed: the API says so (once per device and kernel),
    with the counts and the switch for a full run; a full run ('all') does not warn."""
    import warnings

    from ptxlab.timing.predict import TimingSampleWarning

    mod = ptxlab.compile(S.STREAM, arch="sm_90a", name="stream.cu")
    for sample in ("auto", "all"):
        dev = _dev("h100", timing_sample=sample)
        n = 300 * 256
        x = dev.to_device(np.ones(4 * n, np.float32))
        y = dev.empty(16 * n)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            for _ in range(2):
                dev.launch(mod, "stream", grid=(300, 1, 1), block=(256, 1, 1), args=[x, y, np.int32(n)])
        got = [w for w in rec if issubclass(w.category, TimingSampleWarning)]
        if sample == "all":
            assert not got, [str(w.message) for w in got]
            continue
        assert len(got) == 1, [str(w.message) for w in got]
        msg = str(got[0].message)
        assert "3 of 300 CTAs" in msg and "NOT computed" in msg and "timing_sample='all'" in msg, msg
        assert got[0].filename == __file__           # points at the user's launch
        assert dev.emu_warnings == [msg]


def test_tma_bytes_in_flight_and_per_warp_issue_vs_wait():
    """The ring keeps at most STAGES x 8 KB in flight (its full barriers); each warp's issue + wait time is its
    whole life; the table shows both (issue 13 review)."""
    from rich.console import Console

    from ptxlab.timing import report

    means = []
    for stages in (2, 4):
        t, _, _ = _pipe(stages=stages, nctas=1, work=1, chunks=16)
        mean, peak, unit = t.achieved["TMA bytes in flight"]
        assert peak == stages * 8192 / 1024, (peak, stages)
        assert 0 < mean <= peak and "KB/SM" in unit
        means.append(mean)
        cyc = t.clock_ghz * 1e3
        for wi, s in t.warps.items():
            assert s["issue_clk"] >= s["issued"] > 0
            assert s["issue_clk"] + sum(s["waits"].values()) == pytest.approx(s["span_clk"], rel=1e-9), (wi, s)
            assert s["span_clk"] <= t.sim_us * cyc + 1e-6
    assert means[1] > 1.5 * means[0]
    import io
    con = Console(width=200, record=True, file=io.StringIO())
    report.print_table(t, con)
    txt = con.export_text()
    assert "TMA bytes in flight" in txt and "issue µs" in txt and "wait µs" in txt


def test_no_prediction_moves_bytes_faster_than_dram():
    """Round 2 item 3: a 528-CTA float4 stream (16 MB in, 16 MB out) is DRAM-bound; the SMs' burst credit let its
    simulated SM run ahead of its share for the whole kernel (128 % of the H100's DRAM bandwidth).  Now the span is at
    least bytes / bandwidth, and the prediction is within 15 % of launch + bytes / bandwidth."""
    n = 1 << 20
    t = _stream(n)[0]
    got, peak, _ = t.achieved["DRAM"]
    assert got <= peak * (1 + 1e-9) and t.utilization["dram"] <= 1 + 1e-9, (got, peak, t.utilization)
    p = P.H100
    assert t.us >= p.launch_us + t.amounts["dram_bytes"] / p.dram_bw * 1e6 * (1 - 1e-9)
    expect = p.launch_us + 2 * 16 * n / p.dram_bw * 1e6
    assert abs(t.us - expect) / expect < 0.15, (t.us, expect)
