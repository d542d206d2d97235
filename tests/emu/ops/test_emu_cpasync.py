"""cp.async (sm_80, PTX ISA 9.7.9.25.3) on the emulator: zero-fill, groups, wait_group/wait_all, mbarrier arrive,
and the emulator's lazy completion (reading the destination before the wait sees the old contents)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

KDIR = Path(__file__).resolve().parents[2] / "kernels"


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


@pytest.fixture(scope="module")
def dev_norace():
    """Racecheck off: the emulator's lazy completion becomes observable (checks/asyncread.py reports it when on)."""
    return ptxlab.open_device("emu", racecheck=False)


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile((KDIR / "cpasync_ops.cu").read_text(), arch="sm_90a")


def test_cpasync_groups_zero_fill(dev, mod):
    seed = int.from_bytes(os.urandom(4), "little")
    rng = np.random.default_rng(seed)
    src = rng.integers(1, 256, 4096).astype(np.uint8)        # non-zero so zero-fill is visible
    ssz = rng.integers(0, 17, 64).astype(np.uint32)
    S, Z, O = dev.to_device(src), dev.to_device(ssz), dev.empty(1792)
    dev.memset(O, 0xFF)
    dev.launch(mod, "cpasync_groups", grid=(1, 1, 1), block=(64, 1, 1), args=[S, Z, O])
    out = dev.to_host(O, np.uint8)
    exp_a = np.zeros(1024, np.uint8)
    for t in range(64):
        n = int(ssz[t])
        exp_a[t * 16:t * 16 + n] = src[t * 16:t * 16 + n]
    exp_c = src[2048:2304].copy()
    for t in range(0, 64, 3):
        exp_c[t * 4:t * 4 + 4] = 0
    assert (out[:1024] == exp_a).all(), f"seed {seed}: zero-filled 16-byte copies"
    assert (out[1024:1536] == src[1024:1536]).all(), f"seed {seed}: 8-byte copies"
    assert (out[1536:] == exp_c).all(), f"seed {seed}: ignore-src copies"


@pytest.mark.parametrize("noinc", [1, 0])
def test_cpasync_mbarrier_arrive(dev, mod, noinc):
    seed = int.from_bytes(os.urandom(4), "little")
    rng = np.random.default_rng(seed)
    src = rng.integers(1, 2 ** 32, 256, dtype=np.uint64).astype(np.uint32)
    S, O = dev.to_device(src), dev.empty(1024)
    dev.memset(O, 0xFF)
    dev.launch(mod, "cpasync_mbar", grid=(1, 1, 1), block=(64, 1, 1), args=[S, O, np.int32(noinc)])
    out = dev.to_host(O, np.uint32).reshape(64, 4)
    exp = src.reshape(64, 4)[(np.arange(64) + 1) % 64]
    assert (out == exp).all(), f"seed {seed}"


def _run_src(dev, body, nthreads=32, nbytes=512):
    src = r'''extern "C" __global__ void k(const unsigned* g, unsigned* out) {
      __shared__ __align__(16) unsigned S[128];
      unsigned t = threadIdx.x;
      unsigned s = (unsigned)__cvta_generic_to_shared(S + t * 4);
    ''' + body + "}"
    m = ptxlab.compile(src, arch="sm_90a")
    g = np.arange(1, 129, dtype=np.uint32) * 0x01010101
    G, O = dev.to_device(g), dev.empty(nbytes)
    dev.memset(O, 0xFF)
    dev.launch(m, "k", grid=(1, 1, 1), block=(nthreads, 1, 1), args=[G, O])
    return g, dev.to_host(O, np.uint32)


READ_BEFORE_WAIT = r'''S[t * 4] = 7u; __syncthreads();
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(s), "l"(g + t * 4));
      asm volatile("cp.async.commit_group;");
      out[t] = S[t * 4];
      asm volatile("cp.async.wait_group 0;");
      out[32 + t] = S[t * 4];'''


def test_read_before_wait_is_reported(dev):
    """A load of a cp.async destination before the wait races with the asynchronous write (checks/asyncread.py)."""
    with pytest.raises(EmuError, match=r"(?s)read while an asynchronous copy into it is still in flight.*"
                                       r"cp\.async \(4 bytes x 32 threads\).*cp\.async\.wait_group"):
        _run_src(dev, READ_BEFORE_WAIT)


def test_write_before_wait_is_reported(dev):
    body = r'''asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(s), "l"(g + t * 4));
      S[((t + 1) % 32) * 4] = 3u;
      asm volatile("cp.async.wait_all;");'''
    with pytest.raises(EmuError, match="written while an asynchronous copy into it is still in flight"):
        _run_src(dev, body)


def test_read_before_wait_sees_old_contents(dev_norace):
    """Emulator-specific (laziest legal schedule): the copy lands at the wait, not at issue."""
    g, out = _run_src(dev_norace, READ_BEFORE_WAIT)
    assert (out[:32] == 7).all()
    assert (out[32:64] == g[0:128:4]).all()


def test_wait_group_keeps_newest_pending(dev_norace, dev):
    """wait_group 1 completes the older group only (emulator: the newer stays pending until needed; with racecheck
    on, reading it is reported)."""
    body = r'''S[t * 4] = 5u; S[t * 4 + 1] = 6u; __syncthreads();
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(s), "l"(g + t * 4));
      asm volatile("cp.async.commit_group;");
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(s + 4), "l"(g + t * 4 + 1));
      asm volatile("cp.async.commit_group;");
      asm volatile("cp.async.wait_group 1;");
      out[t] = S[t * 4]; out[32 + t] = S[t * 4 + 1];
      asm volatile("cp.async.wait_group 0;");
      out[64 + t] = S[t * 4 + 1];'''
    with pytest.raises(EmuError, match="read while an asynchronous copy into it is still in flight"):
        _run_src(dev, body, nbytes=512)
    g, out = _run_src(dev_norace, body, nbytes=512)
    assert (out[:32] == g[0:128:4]).all()
    assert (out[32:64] == 6).all()
    assert (out[64:96] == g[1:128:4]).all()


def test_cpasync_diagnostics(dev):
    with pytest.raises(EmuError, match="misaligned cp.async source"):
        _run_src(dev, r'''asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(s), "l"(g + 1));
          asm volatile("cp.async.wait_all;");''')
    with pytest.raises(EmuError, match="src-size"):
        _run_src(dev, r'''asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(s), "l"(g), "r"(t + 5));
          asm volatile("cp.async.wait_all;");''')
    with pytest.raises(EmuError, match="out-of-bounds"):
        _run_src(dev, r'''asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "l"(g + 1024 * t));
          asm volatile("cp.async.wait_all;");''')
