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


@pytest.fixture
def dev():
    d = ptxlab.open_device("emu", strict=())
    warnings.simplefilter("ignore", category=Warning)
    return d


def _seed(rng) -> int:
    return int(rng.integers(0, 2**31))


def test_example_files_come_from_the_wheel():
    from ptxlab.cutlass.examples import tutorial_dir

    src = tutorial_dir() / "02_mma_tma_sm100.cu"
    assert src.exists() and "gemm_host_f16xf16_f32_f32_tnt" in src.read_text()
    w = (build.WRAPPERS / "tutorial_02.cu").read_text()
    assert '#include "02_mma_tma_sm100.cu"' in w and "gemm_host_f16xf16_f32_f32_tnt(" in w
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


def test_tutorial_02_strict_rules_name_the_missing_wait_ld(dev, rng):
    with dev.strict_rules("tcgen05_wait_ld"), pytest.raises(EmuError, match="tcgen05.wait::ld"):
        pc.run("tutorial_02", dev, seed=_seed(rng))


def test_unknown_example_and_shape_are_refused(dev):
    with pytest.raises(KeyError, match="tutorial_02"):
        pc.run("tutorial_99", dev)
    with pytest.raises(ValueError, match="multiples of the MMA tiler"):
        pc.run("tutorial_02", dev, m=96)
