"""Stages D1-D3, E1-E2 (NVFP4 MMA + epilogue bring-up) on the emulator, small shapes, plus the broken variants each
caught with a message that points at the cause, and the clean refusal on a device without sm_100a."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ptxlab import debug
from ptxlab.errors import DeviceUnavailable
from ptxlab.gpumode import GEMV_TESTS, generate_gemv
from ptxlab.lab.registry import StageContext, discover

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def drivers():
    stages = {s.id: s for s in discover(REPO / "stages")}
    assert {"D1", "D2", "D3", "E1", "E2"} <= set(stages)
    return sys.modules["ptxlab_stages.D_mma.driver"], sys.modules["ptxlab_stages.E_epilogue.driver"]


@pytest.fixture
def ctx(tmp_path):
    return StageContext(backend="emu", dump_dir=tmp_path, debug=debug.current())


def _text(res) -> str:
    return "\n".join(f"{r.name}: {r.ok}: {r.detail}" for r in res.rows)


def test_d1_scalar_exact(drivers, ctx):
    D, _ = drivers
    res = D.run_d1(ctx, shapes=[(128, 256, 1), (256, 320, 2)])
    assert res.passed, _text(res)


def test_d2_per_chunk_readback_exact(drivers, ctx):
    D, _ = drivers
    res = D.run_d2(ctx, shapes=[(128, 320, 1)])
    assert res.passed, _text(res)
    assert res.dump_paths and res.dump_paths[0].exists()


def test_d3_pipeline_exact(drivers, ctx):
    D, _ = drivers
    res = D.run_d3(ctx, shapes=[(128, 1088, 1)])  # 5 K tiles through the 4-slot TMA ring (slot reuse), partial last
    assert res.passed, _text(res)


def test_e1_epilogue(drivers, ctx):
    _, E = drivers
    res = E.run_e1(ctx)
    assert res.passed, _text(res)


def test_e2_fused_gemv_smallest_task_shape(drivers, ctx):
    _, E = drivers
    res = E.run_e2(ctx, cases=[GEMV_TESTS[0]])
    assert res.passed, _text(res)


# ------------------------------------------------------------------------------------------- broken variants
@pytest.mark.parametrize("broken, needles", [
    (1, ["idesc.m", "M=0", "SF ID 2"]),                                # M>>4 written into the M>>7 field
    (2, ["E2M1 is code 1", "5 is the f8f6f4"]),                        # f8f6f4's E2M1 code 5
    (3, ["missing version bit 46"]),                                   # SMEM descriptor without bit 46
    (4, ["first mismatch (chunk 0, lane", "field swizzle = 64B", "needs 128B"]),  # wrong swizzle code
    (5, ["read-before-complete", "wait on its tcgen05.commit mbarrier"]),         # ld before the commit's mbarrier
])
def test_d2_broken_variants_are_caught(drivers, ctx, broken, needles):
    D, _ = drivers
    res = D.run_d2(ctx, shapes=[(128, 256, 1)], broken=broken)
    text = _text(res)
    assert not res.passed, text
    for n in needles:
        assert n in text, f"{n!r} missing from:\n{text}"


def test_e1_swizzled_epilogue_index_is_caught(drivers, ctx):
    _, E = drivers
    res = E.run_e1(ctx, broken_epi=1)
    text = _text(res)
    assert not res.passed
    assert "out-of-bounds global store" in text and "swizzled SW128 SMEM tile layout" in text, text


def test_descriptors_of_correct_kernel_match_host_encoders(drivers, ctx):
    """The blocks' descriptors (dumped by D2 for chunk 0) equal ptxlab.desc's CUTLASS-checked encoders."""
    D, _ = drivers
    import ptxlab

    H = D.H
    dev = ptxlab.open_device("emu")
    mod = H.compile_stage(H.HERE / "d2_chunks.cu", {"NB": 16, "BROKEN": 0})
    p = generate_gemv(128, 64, 1, H.fresh_seed())
    u = H.upload(dev, p)
    desc = H.poisoned(dev, 40)
    dev.launch(mod, "d2_chunks", grid=(1, 1, 1), block=(128, 1, 1),
               args=[u.a, u.b, u.sfa, u.sfb, H.poisoned(dev, 4 * 128 * 16), desc, np.uint32(128), np.uint32(64),
                     np.uint32(u.b_rows)])
    d = dev.to_host(desc, np.uint64)
    assert D.diagnose_descriptors(d) == []
    assert int(d[2]) == 0x08040480  # mxf4nvf4 E2M1 x E2M1, UE4M3, M=128, N=16 (ptx_facts §5b)


# ------------------------------------------------------------------------------------------- refusal
class _Hopper:
    def arch_supported(self, arch: str) -> bool:
        return arch.startswith("sm_90")

    def describe(self) -> str:
        return "the cuda device (NVIDIA H100, sm_90)"


@pytest.mark.parametrize("sid", ["D1", "D2", "D3", "E1", "E2"])
def test_refuses_cleanly_without_sm100a(drivers, tmp_path, sid):
    stages = {s.id: s for s in discover(REPO / "stages")}
    ctx = StageContext(backend="cuda", dump_dir=tmp_path, debug=debug.current(), opener=lambda b: _Hopper())
    res = stages[sid].run(ctx)
    assert not res.passed
    assert "needs an sm_100a GPU or --backend emu" in _text(res)
    assert "needs an sm_100a GPU" in getattr(res, "refused", "needs an sm_100a GPU")
