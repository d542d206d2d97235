"""Diagnostics do not depend on the engine: a fault the native engine meets is re-run by the interpreter's handler,
which raises the report; every report here must be the interpreter's, word for word (PTX line, CUDA line, block,
thread, warp, lane, the count of other faulting threads, the rule and what to do)."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

SRC = r'''
extern "C" __global__ void faults(unsigned* x, unsigned* y, unsigned mode, unsigned n) {
  __shared__ unsigned s[64];
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned v = x[t % n] * 3u + mode;
  if (mode == 0u) { y[t + (t > 40u ? 4096u : 0u)] = v; }                    // global store past the end
  if (mode == 1u) { v += x[t * 977u]; }                                      // global load past the end
  if (mode == 2u) { v += *(unsigned*)((char*)x + (t & 3u) + 1u); }           // misaligned load
  if (mode == 3u) { s[t] = v; v += s[t ^ 1u]; }                              // shared store past 64 words
  if (mode == 4u) { *(unsigned*)((char*)y + 2u * t) = v; }                   // misaligned store
  if (mode == 5u) { if (t == 37u) __trap(); }                                // trap
  if (mode == 6u) { while (v != 0u) { v = v * 1664525u + 1013904223u; } }    // runaway loop (budget)
  if (mode == 7u) { if (threadIdx.x < 33u) __syncthreads(); }                // part of the CTA at a barrier
  if (mode == 8u) { unsigned* p = (unsigned*)(0x1000ull + t); v += *p; }     // wild generic pointer
  y[t] = v;
}'''


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_90a", name="faults.cu", options=("-lineinfo",))


def _report(engine, mod, mode, data, **dev_kw):
    dev = ptxlab.open_device("emu", engine=engine, **dev_kw)
    x = dev.to_device(data)
    y = dev.empty(4 * 128)
    dev.memset(y, 0)
    with pytest.raises(EmuError) as e:
        dev.launch(mod, "faults", grid=(2, 1, 1), block=(64, 1, 1), args=[x, y, np.uint32(mode), np.uint32(64)])
    return str(e.value)


@pytest.mark.parametrize("mode", range(9))
def test_fault_reports_are_the_interpreters(mod, mode, rng):
    data = rng.integers(1, 2**32, 64, dtype=np.uint64).astype(np.uint32) | np.uint32(1)
    kw = {"budget": 2_000_000} if mode == 6 else ({"strict": "all"} if mode == 7 else {})
    ref = _report("interp", mod, mode, data, **kw)
    got = _report("native", mod, mode, data, **kw)
    assert got == ref
    assert "faults.cu:" in got or mode in (6, 7)      # the CUDA line is named (runaway / barrier: their own form)


def test_shared_initcheck_report(rng):
    src = r'''
extern "C" __global__ void k(unsigned* y) {
  __shared__ unsigned s[128];
  if (threadIdx.x != 5u) s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  y[threadIdx.x] = s[(threadIdx.x + 1u) & 127u];
}'''
    m = ptxlab.compile(src, arch="sm_90a", name="ic.cu")
    reps = []
    for engine in ("interp", "native"):
        dev = ptxlab.open_device("emu", engine=engine, initcheck=True)
        y = dev.empty(4 * 128)
        with pytest.raises(EmuError) as e:
            dev.launch(m, "k", grid=(1, 1, 1), block=(128, 1, 1), args=[y])
        reps.append(str(e.value))
    assert reps[0] == reps[1] and "initcheck" in reps[0]
