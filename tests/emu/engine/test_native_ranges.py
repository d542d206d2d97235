"""The native engine's range path for ld / st (engine/native/mem_range.h): one check of the lowest and highest address
of an instruction against one allocation replaces the per-thread checks.  Where the range does not fit one
allocation (threads in two buffers, the gap between them, a never-written byte under the global initcheck), the
per-thread path must decide exactly as before: same values, same report as the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

SRC = r'''
extern "C" __global__ void two(const unsigned* a, const unsigned* b, unsigned* y, unsigned mode) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned* p = (t & 1u) ? a : b;                   // one load over two allocations
  unsigned v = p[t] * 7u + a[t];
  if (mode == 1u) v += y[t + 200u];                        // y: only its first 256 words were written by the host
  if (mode == 2u) v += p[t + 4096u * (t == 76u)];          // thread 76 leaves its buffer: out of bounds
  y[t] = v;
  if (mode == 3u) { y[t + 256u] = v ^ 0x5Au; v += y[t + 256u - (t & 3u)]; y[t] = v; }   // written by this launch
}'''

N = 256


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_90a", name="ranges.cu", options=("-lineinfo",))


def _run(engine, mod, mode, a, b):
    dev = ptxlab.open_device("emu", engine=engine)
    da, db = dev.to_device(a), dev.to_device(b)
    y = dev.empty(4 * 2 * N)
    dev.write(y, np.full(N, 0xDEADBEEF, np.uint32))          # the first half only: the rest is never written
    try:
        dev.launch(mod, "two", grid=(2, 1, 1), block=(N // 2, 1, 1), args=[da, db, y, np.uint32(mode)])
    except EmuError as e:
        return str(e)
    return dev.to_host(y, np.uint32)


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_range_path_agrees_with_the_interpreter(mod, mode, rng):
    a = rng.integers(1, 2**32, N + 8, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(1, 2**32, N, dtype=np.uint64).astype(np.uint32)
    ref = _run("interp", mod, mode, a, b)
    got = _run("native", mod, mode, a, b)
    if mode in (1, 2):
        assert isinstance(ref, str) and ("initcheck" in ref if mode == 1 else "out-of-bounds" in ref), ref
        assert got == ref
    else:
        assert not isinstance(ref, str), ref
        assert np.array_equal(got, ref)
        t = np.arange(N, dtype=np.uint64)
        p = np.where(t & 1, a[:N], b).astype(np.uint64)
        v = (p * 7 + a[:N]) & 0xFFFFFFFF
        if mode == 0:
            assert np.array_equal(ref[:N], v.astype(np.uint32))
