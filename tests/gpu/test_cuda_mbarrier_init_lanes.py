"""Fidelity rule mbarrier_init_lanes on the GPU: the 32 lanes of warp 0 run one mbarrier.init on the same barrier with
the same count (the CuTe DSL's pipelines before 4.6.0), then every thread arrives and waits on it; and the
``.release.cta`` arrive spellings of the DSL 4.3 (kernels of tests/emu/ops/test_emu_mbarrier.py). The GPU and the
emulator (which warns and initialises once) must give the same output."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from emu_sources import emu_ops_source
from ptxlab.emu.checks.fidelity import EmuFidelityWarning

SRC = emu_ops_source("test_emu_mbarrier")


def test_lanes_init_and_release_spellings_match_the_gpu(cuda_dev) -> None:
    mod = ptxlab.compile(SRC, arch=f"sm_{cuda_dev.cc[0]}{cuda_dev.cc[1]}", name="mbar.cu")
    rng = np.random.default_rng()
    n, nbytes = int(rng.integers(2, 5)) * 32, int(rng.integers(16, 1 << 19))
    got = []
    emu = ptxlab.open_device("emu")
    for dev in (cuda_dev, emu):
        y, t = dev.empty(4 * n), dev.empty(4 * 32)
        dev.memset(y, 0xA5)
        dev.memset(t, 0xA5)
        if dev is emu:
            with pytest.warns(EmuFidelityWarning, match="mbarrier_init_lanes"):
                dev.launch(mod, "lanes_init", grid=1, block=n, args=[y, np.uint32(0)])
        else:
            dev.launch(mod, "lanes_init", grid=1, block=n, args=[y, np.uint32(0)])
        dev.launch(mod, "tx", grid=1, block=32, args=[t, np.uint32(nbytes), np.uint32(1)])
        got.append((dev.to_host(y, np.uint32), dev.to_host(t, np.uint32)))
    (g_y, g_t), (e_y, e_t) = got
    np.testing.assert_array_equal(g_y, 100 + np.arange(n, dtype=np.uint32))
    np.testing.assert_array_equal(g_y, e_y)
    np.testing.assert_array_equal(g_t, e_t)
