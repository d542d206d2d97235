"""The fused tcgen05 GEMV (production source verified by stages D3/E1/E2) on the emulator: exact on gpu-mode data,
operands staged by TMA (tensor maps built by the production launcher, SASS UTMALDG)."""
import re

import numpy as np
import pytest

from ptxlab import gpumode
from ptxlab.kernels import BLOCKS_DIR, read
from ptxlab.production import gemv_tcgen05 as G
from ptxlab.toolchain.sass import require


@pytest.mark.parametrize("m,k,l", [(128, 256, 1), (256, 1536, 2)])
def test_fused_gemv_exact_on_emulator(m, k, l, rng):
    p = gpumode.generate_gemv(m, k, l, seed=int(rng.integers(1 << 31)))
    rep = {}
    out = G.run_gemv_tcgen05(p, "emu", report=rep)
    ref = gpumode.reference_gemv(p)
    assert out.shape == ref.shape
    assert np.array_equal(out.view(np.uint16), ref.view(np.uint16)), gpumode.check_close(out, ref)[:3]
    assert rep == {"grid": (m // 128, l, 1), "shared_bytes": G.STAGES * 22528 + 1024, "tx_bytes": 22528,
                   "stages": G.STAGES}


@pytest.mark.parametrize("m,k,l,stages", [
    (128, 64, 1, 2),     # K/2 = 32 B: the A/B boxes (128 B wide) are mostly out of bounds (zero fill, full tx count)
    (128, 320, 2, 2),    # partial last tile (1 chunk) + its OOB fill
    (128, 2304, 1, 2),   # 9 tiles through 2 slots: the ring wraps 4 times (phase flips on full/empty)
    (256, 1792, 1, 3),   # 7 tiles through 3 slots
])
def test_fused_gemv_ring_and_partial_tiles(m, k, l, stages, rng):
    p = gpumode.generate_gemv(m, k, l, seed=int(rng.integers(1 << 31)))
    out = G.run_gemv_tcgen05(p, "emu", stages=stages)
    ref = gpumode.reference_gemv(p)
    assert np.array_equal(out.view(np.uint16), ref.view(np.uint16)), gpumode.check_close(out, ref)[:3]


def test_bounded_wait_build(rng):
    """Hardware bring-up build (-DPTXLAB_WAIT_PROBES): exact with a generous probe limit; with one probe a wait that
    has to block gives up and the launch ends with a trap instead of hanging."""
    p = gpumode.generate_gemv(128, 1536, 1, seed=int(rng.integers(1 << 31)))
    ref = gpumode.reference_gemv(p).view(np.uint16)
    assert np.array_equal(G.run_gemv_tcgen05(p, "emu", stages=2, wait_probes=1 << 22).view(np.uint16), ref)
    with pytest.raises(Exception, match="trap"):
        G.run_gemv_tcgen05(p, "emu", stages=2, wait_probes=1)


def test_fused_gemv_sass_and_report():
    counts = require(G.compile_gemv_tcgen05(), ["UTMALDG", "UTCOMMA", "UTCCP", "UTCBAR", "LDTM"])
    assert all(v > 0 for v in counts.values())
    rep = G.graduation_report()          # fresh test state: nothing graduated
    assert rep == {"stages": [], "blocks": []}


def test_kernel_built_from_blocks_only():
    src = read(G.KERNEL_FILE)
    incs = re.findall(r'^\s*#\s*include\s+"([^"]+)"', src, re.M)
    assert sorted(incs) == sorted(f"blocks/{b}" for b in G.BLOCKS_USED)
    assert all((BLOCKS_DIR / b).exists() for b in G.BLOCKS_USED)
    code = re.sub(r"//[^\n]*", "", src)
    assert "asm" not in code, "the fused GEMV must get all its PTX from the blocks"
    assert "tma_load_3d" in code and "mbar_arrive_expect_tx" in code  # operands arrive by TMA


def test_tensor_map_boxes_match_kernel_tx():
    import ptxlab

    assert G.tx_bytes() == G.stage_bytes() == 22528
    assert G.tx_bytes(8) == 22528 - 8 * 128
    dev = ptxlab.open_device("emu", arch="sm_100a")
    try:
        m, k, l = 256, 1088, 2
        bufs = [dev.empty(n) for n in (l * m * k // 2, l * 128 * k // 2, l * 2 * 17 * 512, l * 17 * 512)]
        tm_a, tm_b, tm_sfa, tm_sfb = G.make_tensor_maps(dev, *bufs, m, k, l, 128)
        assert (tuple(tm_a.spec.box), tm_a.spec.swizzle) == ((128, 128, 1), "128B")
        assert (tuple(tm_b.spec.box), tm_b.spec.swizzle) == ((128, 16, 1), "128B")
        assert tuple(tm_b.spec.global_shape) == (k // 2, 128, l)
        assert tuple(tm_sfa.spec.box) == tuple(tm_sfb.spec.box) == (128, 16)
        assert tuple(tm_sfa.spec.global_shape) == (128, l * 2 * 17 * 4)
        assert tuple(tm_sfb.spec.global_shape) == (128, l * 17 * 4)
    finally:
        dev.close()


def test_fused_gemv_rejects_unsupported_shapes():
    p = gpumode.generate_gemv(128, 256, 1, seed=1)
    p.m = 100
    with pytest.raises(ValueError, match="M % 128"):
        G.run_gemv_tcgen05(p, "emu")
    with pytest.raises(ValueError, match="b has 8 rows"):
        G.check_shape(128, 256, 1, 8)


def test_caller_device_buffers_released(rng):
    """On a device the caller passes (and keeps), run_gemv_tcgen05 frees what it allocated."""
    import ptxlab

    p = gpumode.generate_gemv(128, 256, 1, seed=int(rng.integers(1 << 31)))
    dev = ptxlab.open_device("emu", arch="sm_100a")
    try:
        live = len(dev._live)
        out = G.run_gemv_tcgen05(p, dev)
        assert len(dev._live) == live
        assert np.array_equal(out.view(np.uint16), gpumode.reference_gemv(p).view(np.uint16))
    finally:
        dev.close()
