"""The SASS side of the timing model (issue 21 item 1): control codes, the PTX line table, the PTX-SASS join and
instruction counts that differ between PTX and SASS (CPU only: NVRTC + nvdisasm + the emulator)."""
from __future__ import annotations

import collections
import re

import numpy as np
import pytest

import ptxlab
from ptxlab.timing import sass_build, sass_text
from ptxlab.timing import synthetic_series as SS

pytestmark = pytest.mark.filterwarnings("ignore::ptxlab.timing.predict.TimingSampleWarning")


def _sgemm(kernel: str, n: int):
    mod = ptxlab.compile(SS.SGEMM, arch="sm_90a", name="sgemm.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    rng = np.random.default_rng()
    a = dev.to_device(rng.standard_normal(n * n).astype(np.float32))
    b = dev.to_device(rng.standard_normal(n * n).astype(np.float32))
    c = dev.empty(n * n * 4)
    g, blk = SS.sgemm_launch(kernel, n)
    dev.launch(mod, kernel, grid=g, block=blk, args=[a, b, c, np.int32(n), np.int32(n), np.int32(n)])
    return mod, dev.last_timing


def test_control_codes_tie_each_load_to_its_consumer():
    """The scoreboard an LDG sets (write barrier) is in the wait mask of the first instruction that reads its
    destination register; -lineinfo adds a PTX line to every instruction and does not change the code."""
    mod = ptxlab.compile(SS.REM, arch="sm_90a", name="rem.cu")
    view = sass_build.kernel_sass(mod, "rem_index", "sm_90a")
    assert view is not None and view.matched == 1.0
    ins = view.kernel.instrs
    assert [i.op for i in ins] == [i.op for i in sass_text.parse(_plain_listing(mod))["rem_index"].instrs]
    loads = [i for i in ins if i.base == "LDG"]
    assert loads
    for ld in loads:
        assert ld.ctrl.wbar != 7, ld.text
        dst = ld.args.split(",")[0].strip()
        use = next(j for j in ins[ld.idx + 1:] if dst in j.args.split(",", 1)[-1] or j.args.startswith(dst + ","))
        assert use.ctrl.wait >> ld.ctrl.wbar & 1, (ld.text, use.text, use.ctrl)
    lines = mod.ptx.splitlines()
    assert all("ld.global" in lines[view.ptx_line[i.idx] - 1] for i in loads)


def _plain_listing(mod) -> str:
    """The module's own cubin (no -lineinfo) as nvdisasm -c -hex prints it."""
    import subprocess
    import tempfile
    from pathlib import Path

    from ptxlab.toolchain.paths import nvdisasm_path
    with tempfile.TemporaryDirectory() as td:
        p = Path(td) / "k.cubin"
        p.write_bytes(mod.cubin)
        return subprocess.run([str(nvdisasm_path()), "-c", "-hex", str(p)], capture_output=True, text=True).stdout


def test_four_ld_shared_f32_issue_as_one_lds128_with_merged_events():
    """reg2d's k-loop has 64 scalar ld.shared.f32 per k-tile in PTX; ptxas makes 16 LDS.128 of them.  Each warp
    issues exactly 16 LDS.128 per k-tile, and the 48 other PTX loads' events are merged into them."""
    n = 128
    mod, t = _sgemm("reg2d", n)
    join, streams, stats = t._replay[7][1], t._replay[7][2], t._replay[7][3]
    ptx = mod.ptx[mod.ptx.index(".entry reg2d("):]
    ptx = ptx[:ptx.find(".entry", 10)] if ".entry" in ptx[10:] else ptx
    assert ptx.count("ld.shared.f32") == 64
    ktiles = n // 8
    for key, st in streams.items():
        ops = collections.Counter(join.sass[i].op for i, _, _ in st if i < join.nsass)
        assert ops["LDS.128"] == 16 * ktiles, (key, ops["LDS.128"])
        assert ops.get("LDS", 0) == 0
    assert stats.merged == 48 * ktiles * len(streams)
    assert stats.ptx_events == 0


def test_rem_u32_costs_its_sass_expansion():
    """`% m` with a run-time m: one PTX rem.u32 becomes several SASS instructions (IMAD.HI / IADD3 / ISETP / SEL),
    so each warp issues more SASS than PTX instructions in the loop; the PTX model issued one per rem."""
    mod = ptxlab.compile(SS.REM, arch="sm_90a", name="rem.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    rng = np.random.default_rng()
    a = dev.to_device(rng.standard_normal(4096).astype(np.float32))
    b = dev.empty(256 * 4)
    iters = int(rng.integers(16, 40))
    dev.launch(mod, "rem_index", grid=(1, 1, 1), block=(256, 1, 1), args=[a, b, np.uint32(iters), np.uint32(4093)])
    t = dev.last_timing
    trace, join, streams = t._replay[0], t._replay[7][1], t._replay[7][2]
    for key, st in streams.items():
        sass_n = sum(1 for i, _, _ in st if i < join.nsass)
        assert sass_n > 1.5 * len(trace.streams[key]), (sass_n, len(trace.streams[key]))
    rems = mod.ptx.count("rem.u32")     # the module has this one kernel
    assert rems >= 1
    # one unrolled loop body: its SASS holds the expansion (IMAD.HI for each rem), emitted once per PTX pass
    hi = sum(1 for i in join.sass if i.op.startswith("IMAD.HI"))
    assert hi >= rems


def test_no_sass_falls_back_to_ptx_issue_and_says_so(monkeypatch):
    monkeypatch.setenv("PTXLAB_TIMING_ISSUE", "ptx")
    mod = ptxlab.compile(SS.REM, arch="sm_90a", name="rem.cu")
    dev = ptxlab.open_device("emu", timing="h100")
    a = dev.to_device(np.ones(1024, np.float32))
    b = dev.empty(128 * 4)
    dev.launch(mod, "rem_index", grid=(1, 1, 1), block=(128, 1, 1), args=[a, b, np.uint32(4), np.uint32(1000)])
    assert dev.last_timing.issue.startswith("PTX issue")


STRIDE = r"""
extern "C" __global__ void stride_sum(const float* __restrict__ x, float* y, int rows, int n) {
    float acc = 0.f;
    for (int r = blockIdx.x; r < rows; r += gridDim.x)      // uniform trip count: a uniform-predicate branch
        acc += x[(size_t)r * n + threadIdx.x] * 1.5f;
    y[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""


def test_sm100_uniform_predicate_branch_keeps_the_loop():
    """sm_100a writes a uniform loop's branch as ``BRA.U UP0, target`` (the predicate an operand, no guard): it is
    conditional, so the loop body after it is reachable and each PTX ld.global issues one LDG, none dropped."""
    mod = ptxlab.compile(STRIDE, arch="sm_100a", name="stride.cu")
    view = sass_build.kernel_sass(mod, "stride_sum", "sm_100a")
    assert view is not None
    bras = [i for i in view.kernel.instrs if i.base == "BRA" and re.match(r"\s*!?U?P[0-9T]\s*,", i.args)]
    assert bras and not any(b.unconditional for b in bras if "PT," not in b.args)
    dev = ptxlab.open_device("emu", timing="b200")
    rng = np.random.default_rng()
    grid, rows, n = 4, int(rng.integers(9, 20)), 128
    x = dev.to_device(rng.standard_normal(rows * n).astype(np.float32))
    y = dev.empty(grid * n * 4)
    dev.launch(mod, "stride_sum", grid=(grid, 1, 1), block=(n, 1, 1), args=[x, y, np.int32(rows), np.int32(n)])
    t = dev.last_timing
    trace, join, streams, stats = t._replay[0], t._replay[7][1], t._replay[7][2], t._replay[7][3]
    assert stats.dropped == 0 and stats.ptx_events == 0
    for key, st in streams.items():
        ptx_loads = sum(1 for pc, k, _ in trace.streams[key] if k != 0 and "ld.global" in t._replay[1].code[pc].ins.text)
        ldg = sum(1 for i, _, _ in st if i < join.nsass and join.sass[i].base == "LDG")
        assert ptx_loads >= 1 and ldg == ptx_loads, (key, ldg, ptx_loads)


def test_sass_cache_key_follows_the_modules_own_ptx(monkeypatch):
    """A header edit changes the module's PTX but not its top-level source: the SASS cache must not serve the SASS
    of the old header (the key holds the module's PTX digest)."""
    from ptxlab.timing import sass_build
    from ptxlab.toolchain import cache
    keys = []
    monkeypatch.setattr(cache, "load", lambda k: keys.append(k) or ("ptx", None, "listing"))

    class Mod:
        source, name, options = '#include "blk.cuh"\n__global__ void k() { blk(); }\n', "k.cu", ["-arch=sm_90a"]

    old, new = Mod(), Mod()
    old.ptx, new.ptx = ".version 8.8\n// blk v1\n", ".version 8.8\n// blk v2\n"
    sass_build._build(old, "sm_90a")
    sass_build._build(new, "sm_90a")
    sass_build._build(old, "sm_90a")
    assert keys[0] != keys[1] and keys[0] == keys[2]
