"""The forward-progress kernels of tests/emu/engine/test_emu_forward_progress.py on the GPU and on the emulator, compared bit
for bit: spin-waits on a flag another warp, lane or CTA sets after its loop complete on the hardware (independent
thread scheduling), and the emulator gives the same flags and outputs (ptx_docs/emulator_checks.md "Forward
progress"). A hang here would be a hardware finding; the kernels bound nothing, so run this file under a time
limit (NOTES.md: `timeout 120 python3 -m pytest tests/gpu/test_cuda_forward_progress.py`)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ptxlab

_spec = importlib.util.spec_from_file_location(
    "emu_forward_progress", Path(__file__).resolve().parents[1] / "emu" / "engine" / "test_emu_forward_progress.py")
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)

# kernel -> (flags, inputs, outputs, grid, block)
CASES = {
    "warp_handoff": (1, 129, 128, 1, 128),
    "lane_handoff": (1, 33, 32, 1, 32),
    "cta_handoff": (1, 129, 128, 2, 64),
    "chain": (4, 128, 128, 1, 128),
}


@pytest.mark.parametrize("kernel", list(CASES))
def test_spin_handoffs_match_the_gpu(cuda_dev, kernel) -> None:
    mod = ptxlab.compile(_mod.SRC, arch=f"sm_{cuda_dev.cc[0]}{cuda_dev.cc[1]}", name="forward_progress.cu")
    nflags, nin, nout, grid, block = CASES[kernel]
    xs = np.random.default_rng().integers(1, 2**31, nin, dtype=np.uint32)
    got = []
    for dev in (cuda_dev, ptxlab.open_device("emu")):
        flag, x, y = dev.to_device(np.zeros(nflags, np.uint32)), dev.to_device(xs), dev.empty(4 * nout)
        dev.memset(y, 0xA5)
        dev.launch(mod, kernel, grid=grid, block=block, args=[flag, x, y])
        got.append((dev.to_host(flag, np.uint32), dev.to_host(y, np.uint32)))
    (gf, gy), (ef, ey) = got
    np.testing.assert_array_equal(gf, ef)
    np.testing.assert_array_equal(gy, ey)


def test_ragged_loop_then_shuffle_matches_the_gpu(cuda_dev) -> None:
    mod = ptxlab.compile(_mod.SRC, arch=f"sm_{cuda_dev.cc[0]}{cuda_dev.cc[1]}", name="forward_progress.cu")
    xs = np.random.default_rng().integers(1, 2**32, 64, dtype=np.uint32)
    got = []
    for dev in (cuda_dev, ptxlab.open_device("emu")):
        x, y = dev.to_device(xs), dev.empty(4 * 64)
        dev.memset(y, 0xA5)
        dev.launch(mod, "ragged", grid=1, block=64, args=[x, y])
        got.append(dev.to_host(y, np.uint32))
    np.testing.assert_array_equal(got[0], got[1])
