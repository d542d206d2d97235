"""CUTLASS's own Blackwell examples, unmodified, on the emulator through ptxlab.cutlass (ptx_docs/cutlass_examples.md):
the example's host code builds the kernel parameters (TMA encode inputs included) on the emulator, the kernel runs
with them, and its output equals a numpy transcription of the example's host reference bit for bit."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ptxlab
import ptxlab.cutlass as pc
from ptxlab.cutlass import build
from ptxlab.errors import EmuError

# the warnings and reports here are read for rule names, never for a CUDA line: no -lineinfo rebuild of the example
pytestmark = pytest.mark.usefixtures("no_lineinfo_recompile")


@pytest.fixture
def dev():
    d = ptxlab.open_device("emu", strict=())
    warnings.simplefilter("ignore", category=Warning)
    return d


def _seed(rng) -> int:
    return int(rng.integers(0, 2**31))


def test_example_files_come_from_the_wheel():
    from ptxlab.cutlass.runners import tutorial_dir

    src = tutorial_dir() / "02_mma_tma_sm100.cu"
    assert src.exists() and "gemm_host_f16xf16_f32_f32_tnt" in src.read_text()
    w = (build.WRAPPERS / "tutorial_02.cu").read_text()
    assert '#include "02_mma_tma_sm100.cu"' in w and '#include "tutorial_host.cuh"' in w
    assert "gemm_host_f16xf16_f32_f32_tnt(A, layout_A" in (build.WRAPPERS / "tutorial_host.cuh").read_text()
    assert not list(build.HERE.rglob("02_mma_tma_sm100.cu"))          # included by path, never copied
    shim = build.shim_dir() / "cute" / "atom" / "copy_traits_sm90_tma.hpp"
    assert "ptxlab::record_tma_encode" in shim.read_text()           # generated at build time, in the cache


def test_tutorial_02_smallest_shape(dev, rng):
    r = pc.run("tutorial_02", dev, seed=_seed(rng))
    assert r.launch.grid == (1, 1, 1) and r.launch.block == (128, 1, 1) and r.launch.cluster == (1, 1, 1)
    assert np.abs(r.reference).max() > 0 and r.exact, r.mismatches()


def test_tutorial_02_several_k_and_output_tiles(dev, rng):
    r = pc.run("tutorial_02", dev, m=256, n=512, k=192, alpha=2.0, beta=-1.0, seed=_seed(rng))
    assert r.launch.grid == (2, 2, 1)
    assert r.exact, r.mismatches()
    # the tensor maps came from CuTe's encode inputs: A (K, M) and B (K, N) K-major, 64 x {128, 256} boxes, SW128
    specs = [t[2] for t in r.launch.tensor_maps]
    assert [(s["global_shape"], s["global_strides"], s["box"], s["swizzle"]) for s in specs] == [
        ([192, 256], [384], [64, 128], "128B"), ([192, 512], [384], [64, 256], "128B")]


@pytest.mark.slow
@pytest.mark.parametrize("k,beta", [(64, 0.0), (128, -2.0)], ids=["smallest", "two-k-tiles"])
def test_tutorial_03_multicast_cluster(dev, rng, k, beta):
    """4x4 cluster (16 CTAs), TMA .multicast::cluster of A along cluster rows and B along columns; the smallest
    shape (one k-tile) and 2 k-tiles with beta."""
    r = pc.run("tutorial_03", dev, m=512, n=1024, k=k, alpha=1.0, beta=beta, seed=_seed(rng))
    assert r.launch.grid == (4, 4, 1) and r.launch.cluster == (4, 4, 1)
    assert np.abs(r.reference).max() > 0 and r.exact, r.mismatches()


@pytest.mark.parametrize("name", ["tutorial_04", "tutorial_05"])
def test_tutorials_04_05_2sm_smallest_shape(dev, rng, name):
    """2-SM tcgen05.mma (256x256 per CTA pair) in a 4x4 cluster: CuTe's SM100_TMA_2SM_LOAD_MULTICAST
    (.cta_group::2 written before the state spaces, the even CTA's mbarrier through Sm100MmaPeerBitMask); 05 adds
    the TMA-store epilogue.  One k-tile, 16 CTAs (8 pairs)."""
    r = pc.run(name, dev, seed=_seed(rng))
    assert r.launch.grid == (4, 4, 1) and r.launch.cluster == (4, 4, 1)
    assert np.abs(r.reference).max() > 0 and r.exact, r.mismatches()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tutorial_04", "tutorial_05"])
def test_tutorials_04_05_several_k_tiles_and_clusters(dev, rng, name):
    """Two 4x4 clusters (32 CTAs), 3 k-tiles, alpha/beta."""
    r = pc.run(name, dev, m=1024, n=1024, k=192, alpha=2.0, beta=-1.0, seed=_seed(rng))
    assert r.launch.grid == (8, 4, 1) and r.launch.cluster == (4, 4, 1)
    assert r.exact, r.mismatches()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["example_72a", "example_72c"])
@pytest.mark.parametrize("mnk,grid", [((256, 1024, 256), (2, 4, 1)), ((512, 1024, 512), (2, 8, 1))],
                         ids=["one-cluster", "two-clusters-two-k-blocks"])
def test_72a_72c_2sm_block_scaled_gemm_in_a_2x4_cluster(dev, rng, name, mnk, grid):
    """72a (NVFP4 x NVFP4 -> BF16) and 72c (MXFP8 x MXFP4 -> BF16): the example's own run<Gemm>() builds its Params
    on the emulator and launches a 2x4 cluster through ClusterLauncher; 256x256 2-SM MMA tiles, CuTe's 2-SM TMA
    loads (multicast), block scales in both CTAs' TMEM.  72c also needs the padded 4-bit SMEM operand of
    kind::mxf8f6f4 (16U4_ALIGN16B, complete_tx of the packed bytes) and a try_wait that returns False when its
    time limit expires (the single-stage producer peeks its next stage).  alpha/beta with C in the epilogue."""
    m, n, k = mnk
    r = pc.run(name, dev, m=m, n=n, k=k, alpha=2.0, beta=-1.0, seed=_seed(rng))
    assert r.launch.grid == grid and r.launch.cluster == (2, 4, 1)
    assert np.count_nonzero(r.reference) > r.reference.size // 2
    assert r.exact, r.mismatches()


def test_tutorial_02_strict_rules_name_the_missing_wait_ld(dev, rng):
    with dev.strict_rules("tcgen05_wait_ld"), pytest.raises(EmuError, match="tcgen05.wait::ld"):
        pc.run("tutorial_02", dev, seed=_seed(rng))


def test_unknown_example_and_shape_are_refused(dev):
    with pytest.raises(KeyError, match="tutorial_02"):
        pc.run("tutorial_99", dev)
    with pytest.raises(ValueError, match="multiples of the MMA tiler"):
        pc.run("tutorial_02", dev, m=96)


# ------------------------------------------------------------------------------------------------ example 72b
def test_72b_smallest_shape(dev, rng):
    """NVFP4 x NVFP4 -> FP4 D + UE8M0 SFD, one 128x128x256 tile: D and SFD equal the host reference bit for bit."""
    r = pc.run("example_72b", dev, seed=_seed(rng))
    assert r.launch.grid == (1, 1, 1) and r.launch.block == (256, 1, 1)
    assert len(r.launch.args) == 1 and len(r.launch.tensor_maps) >= 5   # Params: A, B, SFA, SFB, C, D maps
    assert r.references["SFD"].min() > 0 and np.count_nonzero(r.references["D"]) > 0
    assert r.exact, r.mismatches()


@pytest.mark.slow
def test_72b_tiles_k_blocks_and_clc_stealing(rng):
    """2x3 output tiles, 2 k-blocks, alpha/beta; waves of one CTA so the CLC scheduler's try_cancel hands
    not-yet-started tiles to running CTAs (default policy every-other): still bit-exact."""
    dev = ptxlab.open_device("emu", strict=(), wave_ctas=1)
    warnings.simplefilter("ignore", category=Warning)
    r = pc.run("example_72b", dev, m=256, n=384, k=512, alpha=2.0, beta=0.5, seed=_seed(rng))
    assert r.launch.grid == (2, 3, 1)
    assert r.stats["clc_canceled"] > 0 and r.stats["waves"] < 6
    assert r.exact, r.mismatches()


def test_72b_reads_tcgen05_ld_without_wait_like_cutlass_ships_it(rng):
    """CUTLASS's SM100 epilogue waits for tcgen05.ld only after the last subtile: a warning by default (hardware
    scoreboards LDTM results), the error in strict mode."""
    from ptxlab.emu.checks.fidelity import EmuFidelityWarning

    dev = ptxlab.open_device("emu", strict=())
    with pytest.warns(EmuFidelityWarning, match="tcgen05_wait_ld"):
        r = pc.run("example_72b", dev, seed=_seed(rng))
    assert r.exact
    with dev.strict_rules("tcgen05_wait_ld"), pytest.raises(EmuError, match="tcgen05.wait::ld"):
        pc.run("example_72b", dev, seed=_seed(rng))


def test_lab_cli_lists_and_runs(capsys, rng):
    from ptxlab.lab.cli import main

    assert main(["cutlass"]) == 0
    out = capsys.readouterr().out
    assert "tutorial_02" in out and "example_72b" in out
    assert main(["cutlass", "tutorial_02", "--seed", str(_seed(rng))]) == 0
    assert "BIT-EXACT: D 0 differing" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------------ examples 70, 71, 48, 49
def test_70_fp16_gemm_2sm_2x2_cluster(dev, rng):
    """Example 70 (FP16 x FP16 -> F32, 2-SM 256x128 tiles, 2x2 cluster, CLC scheduler): its own run<Gemm>() on the
    emulator (global DeviceAllocations bound in allocation order), one cluster, alpha/beta with C."""
    r = pc.run("example_70", dev, alpha=2.0, beta=-1.0, seed=_seed(rng))
    assert r.launch.grid == (2, 2, 1) and r.launch.cluster == (2, 2, 1)
    assert np.count_nonzero(r.reference) > r.reference.size // 2
    assert r.exact, r.mismatches()


def test_48_hopper_tf32_warp_specialized_4x2_cluster(dev, rng):
    """Example 48 (Hopper FP32 GEMM: TF32 wgmma, TMA multicast in a 4x2 cluster, cooperative warp-specialized
    kernel, persistent scheduler over the SM count its args_from_options queries): one cluster, alpha/beta."""
    r = pc.run("example_48", dev, alpha=2.0, beta=-1.0, seed=_seed(rng))
    assert r.launch.grid == (4, 2, 1) and r.launch.cluster == (4, 2, 1) and r.launch.block == (384, 1, 1)
    assert np.count_nonzero(r.reference) > r.reference.size // 2
    assert r.exact, r.mismatches()


@pytest.mark.cutlass_full
@pytest.mark.slow
def test_74_stream_k_scheduler(dev, rng):
    """Example 74 (stream-K tile scheduler, 2-SM 256x128 tiles): its own main() with the command line
    --decomposition=StreamK (the 2x1 cluster as both preferred and fallback shape). (SplitK --splits=2 stops in the
    example's host code: FastDivmod(divisor < 0), not investigated: ptx_docs/cutlass_examples.md.)"""
    r = pc.run("example_74", dev, alpha=2.0, beta=-1.0, seed=_seed(rng), variant=0)
    assert r.launch.cluster == (2, 1, 1)
    assert np.count_nonzero(r.reference) > r.reference.size // 2
    assert r.exact, r.mismatches()


@pytest.mark.cutlass_full
@pytest.mark.slow
@pytest.mark.parametrize("variant", [0, 2, 6])
def test_71_collective_builder_kernels(dev, rng, variant):
    """Example 71: its own main() runs ten FP16 GEMM kernels one after another; the launches before `variant` are
    passed over and launch `variant` runs on the emulator: auto (2-SM), 1-SM with the no-smem epilogue, and the
    custom epilogue visitor tree (three of the ten: each kernel costs its own program build). 2x2 cluster, F16
    C/D."""
    r = pc.run("example_71", dev, alpha=2.0, beta=-1.0, seed=_seed(rng), variant=variant)
    assert r.launch.cluster == (2, 2, 1)
    assert np.count_nonzero(r.reference) > r.reference.size // 2
    assert r.exact, r.mismatches()


@pytest.mark.cutlass_full
@pytest.mark.slow
@pytest.mark.parametrize("variant", [0, 4])
def test_49_hopper_collective_builder_kernels(dev, rng, variant):
    """Example 49: its own main() runs seven Hopper FP16 GEMM kernels one after another (wgmma, TMA); launch
    `variant` runs on the emulator: the automatic schedule (cooperative, persistent) and ping-pong."""
    r = pc.run("example_49", dev, alpha=2.0, beta=-1.0, seed=_seed(rng), variant=variant)
    assert np.count_nonzero(r.reference) > r.reference.size // 2
    assert r.exact, r.mismatches()


def test_variant_is_checked(dev):
    with pytest.raises(ValueError, match="main\\(\\) runs 10 kernels"):
        pc.run("example_71", dev, variant=10)
    with pytest.raises(ValueError, match="one kernel"):
        pc.run("example_70", dev, variant=1)
