"""Real PTX call/ret (ptxlab/emu/core/callstack.py): recursion through __noinline__ functions, divergent calls, frames
in local memory, the call-depth limit, and unsupported indirect calls."""
import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

REC = r'''
__device__ __noinline__ unsigned fib(unsigned n) { return n < 2u ? n : fib(n - 1u) + fib(n - 2u); }

__device__ __noinline__ unsigned long long fact(unsigned n) { return n <= 1u ? 1ull : n * fact(n - 1u); }

__device__ __noinline__ bool is_odd(unsigned n);
__device__ __noinline__ bool is_even(unsigned n) { return n == 0u ? true : is_odd(n - 1u); }
__device__ __noinline__ bool is_odd(unsigned n) { return n == 0u ? false : is_even(n - 1u); }

// a frame with a dynamically indexed local array (lives in local memory, one copy per activation)
__device__ __noinline__ unsigned mix(const unsigned* x, unsigned n, unsigned k) {
  unsigned buf[8];
  for (unsigned i = 0; i < 8u; ++i) buf[i] = x[i] * (n + 1u) + k;
  if (n == 0u) return buf[k & 7u];
  unsigned below = mix(x, n - 1u, k * 3u + 1u);
  return buf[(k + n) & 7u] ^ (below + buf[n & 7u]);
}

extern "C" __global__ void kfib(const unsigned* x, unsigned* y) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  y[t] = fib(x[t]);
}
extern "C" __global__ void kfact(const unsigned* x, unsigned long long* y) {
  unsigned t = threadIdx.x;
  y[t] = fact(x[t]);
}
extern "C" __global__ void kparity(const unsigned* x, unsigned* y) {
  unsigned t = threadIdx.x;
  y[t] = is_even(x[t]) ? 2u : 1u;
}
extern "C" __global__ void kmix(const unsigned* x, const unsigned* n, unsigned* y) {
  unsigned t = threadIdx.x;
  y[t] = mix(x, n[t], t);
}
extern "C" __global__ void unrelated(const unsigned* x, unsigned* y) {
  unsigned t = threadIdx.x;
  y[t] = x[t] * 2654435761u + 7u;
}
// recursion only in some lanes, then warp- and CTA-wide communication after the divergent call
extern "C" __global__ void kdiverge(const unsigned* x, unsigned* y) {
  __shared__ unsigned s[128];
  unsigned t = threadIdx.x;
  unsigned v = x[t];
  if (v & 1u) v = fib(v % 17u) + 1000u;
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  s[t] = v;
  __syncthreads();
  y[t] = s[127u - t] + v;
}
// depth = 0xFFFFFFF0 - n along the bad(n + 1) path (not a tail call, so it stays a recursion)
__device__ __noinline__ unsigned bad(unsigned n) { return n >= 0xFFFFFFF0u ? n : bad(n + 1u) + bad(n + 3u); }
extern "C" __global__ void kdown(const unsigned* x, unsigned* y) {
  unsigned t = threadIdx.x;
  y[t] = bad(x[t]);
}
'''

INDIRECT = r'''
__device__ __noinline__ unsigned f1(unsigned a) { return a * 3u; }
__device__ __noinline__ unsigned f2(unsigned a) { return a + 11u; }
extern "C" __global__ void kind(const unsigned* x, unsigned* y) {
  unsigned t = threadIdx.x;
  unsigned (* volatile f)(unsigned) = (x[t] & 1u) ? f1 : f2;
  y[t] = f(x[t]);
}
extern "C" __global__ void kdirect(const unsigned* x, unsigned* y) {
  unsigned t = threadIdx.x;
  y[t] = f1(x[t]) + f2(x[t]);
}
'''


def _fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def _mix(x, n, k):
    buf = [(int(x[i]) * (n + 1) + k) & 0xFFFFFFFF for i in range(8)]
    if n == 0:
        return buf[k & 7]
    below = _mix(x, n - 1, (k * 3 + 1) & 0xFFFFFFFF)
    return buf[(k + n) & 7] ^ ((below + buf[n & 7]) & 0xFFFFFFFF)


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(REC, arch="sm_90a", name="rec.cu")


def test_recursive_fibonacci_divergent_depths(mod, rng):
    assert "call.uni" in mod.ptx and ".func" in mod.ptx          # a real recursive call in the PTX (-O3)
    dev = ptxlab.open_device("emu")
    xs = rng.integers(0, 16, 64, dtype=np.uint32)                 # each lane its own recursion depth
    x, y = dev.to_device(xs), dev.empty(4 * 64)
    dev.memset(y, 0xFF)
    dev.launch(mod, "kfib", grid=(2, 1, 1), block=(32, 1, 1), args=[x, y])
    assert (dev.to_host(y, np.uint32) == np.array([_fib(int(v)) for v in xs], np.uint32)).all()


def test_factorial_u64_and_mutual_recursion(mod, rng):
    dev = ptxlab.open_device("emu")
    xs = rng.integers(0, 21, 32, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(8 * 32)
    dev.memset(y, 0xFF)
    dev.launch(mod, "kfact", grid=(1, 1, 1), block=(32, 1, 1), args=[x, y])
    import math
    assert dev.to_host(y, np.uint64).tolist() == [math.factorial(int(v)) for v in xs]
    xs = rng.integers(0, 60, 64, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * 64)
    dev.memset(y, 0xFF)
    dev.launch(mod, "kparity", grid=(1, 1, 1), block=(64, 1, 1), args=[x, y])
    assert (dev.to_host(y, np.uint32) == np.where(xs % 2 == 0, 2, 1)).all()


def test_recursive_frames_keep_their_local_arrays(mod, rng):
    assert ".local" in mod.ptx
    dev = ptxlab.open_device("emu")
    xs = rng.integers(1, 2**32, 8, dtype=np.uint32)
    ns = rng.integers(0, 12, 32, dtype=np.uint32)
    x, n, y = dev.to_device(xs), dev.to_device(ns), dev.empty(4 * 32)
    dev.memset(y, 0xFF)
    dev.launch(mod, "kmix", grid=(1, 1, 1), block=(32, 1, 1), args=[x, n, y])
    assert dev.to_host(y, np.uint32).tolist() == [_mix(xs, int(ns[t]), t) for t in range(32)]


def test_unrelated_kernel_of_a_recursive_module(mod, rng):
    dev = ptxlab.open_device("emu")
    xs = rng.integers(0, 2**32, 32, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * 32)
    dev.launch(mod, "unrelated", grid=(1, 1, 1), block=(32, 1, 1), args=[x, y])
    assert (dev.to_host(y, np.uint32) == xs * np.uint32(2654435761) + np.uint32(7)).all()


@pytest.mark.parametrize("inline", ["1", "0"])
def test_divergent_call_then_shfl_and_barrier(mod, rng, monkeypatch, inline):
    """Half the lanes recurse, the others skip the call; shfl.sync and bar.sync after it see every lane's value.
    With PTXLAB_EMU_INLINE=0 even the non-recursive parts go through real calls."""
    monkeypatch.setenv("PTXLAB_EMU_INLINE", inline)
    dev = ptxlab.open_device("emu")
    xs = rng.integers(0, 2**31, 128, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * 128)
    dev.memset(y, 0xFF)
    dev.launch(mod, "kdiverge", grid=(1, 1, 1), block=(128, 1, 1), args=[x, y])
    v = np.array([_fib(int(a) % 17) + 1000 if a & 1 else int(a) for a in xs], dtype=np.uint64)
    v = (v + v[np.arange(128) ^ 1]) & 0xFFFFFFFF
    ref = ((v[::-1] + v) & 0xFFFFFFFF).astype(np.uint32)
    assert (dev.to_host(y, np.uint32) == ref).all()


def test_non_recursive_calls_still_inline_and_all_real_calls_agree(rng, monkeypatch):
    dev = ptxlab.open_device("emu")
    m = ptxlab.compile(INDIRECT, arch="sm_90a", name="ind.cu")
    xs = rng.integers(0, 2**31, 32, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * 32)
    dev.launch(m, "kdirect", grid=(1, 1, 1), block=(32, 1, 1), args=[x, y])
    ref = xs * np.uint32(3) + xs + np.uint32(11)
    assert (dev.to_host(y, np.uint32) == ref).all()
    assert not dev.program(m, "kdirect").frames                   # inlined (the fast path)
    monkeypatch.setenv("PTXLAB_EMU_INLINE", "0")
    dev2 = ptxlab.open_device("emu")
    x, y = dev2.to_device(xs), dev2.empty(4 * 32)
    dev2.launch(m, "kdirect", grid=(1, 1, 1), block=(32, 1, 1), args=[x, y])
    assert (dev2.to_host(y, np.uint32) == ref).all() and dev2.program(m, "kdirect").frames


def _bad(n):
    return n if n >= 0xFFFFFFF0 else (_bad(n + 1) + _bad(n + 3)) & 0xFFFFFFFF


def test_stack_depth_limit_is_reported(mod, monkeypatch, rng):
    assert "call.uni" in mod.ptx[mod.ptx.index("_Z3badj("):]
    monkeypatch.setenv("PTXLAB_EMU_CALL_DEPTH", "40")
    dev = ptxlab.open_device("emu")
    xs = (0xFFFFFFF0 - rng.integers(0, 12, 32)).astype(np.uint32)
    lane = int(rng.integers(0, 32))
    xs[lane] = int(rng.integers(0, 2**20))                       # this lane recurses (practically) forever
    x, y = dev.to_device(xs), dev.empty(4 * 32)
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "kdown", grid=(1, 1, 1), block=(32, 1, 1), args=[x, y])
    msg = str(ei.value)
    assert "call stack overflow" in msg and "call depth 41, above the limit of 40 frames" in msg
    assert "PTXLAB_EMU_CALL_DEPTH" in msg and "kernel : kdown" in msg and "call.uni" in msg
    assert f"thread : ({lane}, 0, 0)" in msg
    assert "rec.cu:" in msg                                       # the CUDA line (lineinfo.py)
    # within the limit the same kernel works
    xs[lane] = 0xFFFFFFF0 - 14
    x, y = dev.to_device(xs), dev.empty(4 * 32)
    dev.memset(y, 0xFF)
    dev.launch(mod, "kdown", grid=(1, 1, 1), block=(32, 1, 1), args=[x, y])
    assert dev.to_host(y, np.uint32).tolist() == [_bad(int(v)) for v in xs]


def test_indirect_call_raises_when_executed_and_module_loads(rng):
    m = ptxlab.compile(INDIRECT, arch="sm_90a", name="ind.cu")
    dev = ptxlab.open_device("emu")
    xs = rng.integers(0, 2**31, 32, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * 32)
    assert "prototype" in m.ptx                                   # a real indirect call in the PTX
    with pytest.raises(EmuError) as ei:
        dev.launch(m, "kind", grid=(1, 1, 1), block=(32, 1, 1), args=[x, y])
    assert "indirect call" in str(ei.value) and "kernel : kind" in str(ei.value) and "ind.cu:7" in str(ei.value)
    dev.launch(m, "kdirect", grid=(1, 1, 1), block=(32, 1, 1), args=[x, y])
    assert (dev.to_host(y, np.uint32) == xs * np.uint32(3) + xs + np.uint32(11)).all()


PRED_CALL_PTX = r"""
.version 8.0
.target sm_90a
.address_size 64

.func (.param .b32 res) twice(.param .b32 a)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  add.s32 %r2, %r1, %r1;
  st.param.b32 [res], %r2;
  ret;
}

.visible .entry pcall(.param .u64 y, .param .u32 lim)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<5>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [y];
  ld.param.u32 %r5, [lim];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  add.s32 %r6, %r1, 100;
  setp.lt.u32 %p1, %r1, %r5;
  {
  .param .b32 param0;
  st.param.b32 [param0], %r1;
  .param .b32 retval0;
  @%p1 call.uni (retval0), twice, (param0);
  ld.param.b32 %r2, [retval0];
  selp.b32 %r3, %r2, %r6, %p1;
  }
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r3;
  ret;
}
"""


def test_predicated_call(rng):
    """'@%p call' (not emitted by NVRTC, legal PTX): the guarded lanes call, the others continue after it."""
    mod = ptxlab.compile(PRED_CALL_PTX, arch="sm_90a", name="pcall.ptx")
    dev = ptxlab.open_device("emu")
    lim = int(rng.integers(1, 64))
    y = dev.empty(4 * 64)
    dev.memset(y, 0xFF)
    dev.launch(mod, "pcall", grid=(1, 1, 1), block=(64, 1, 1), args=[y, np.uint32(lim)])
    t = np.arange(64, dtype=np.uint32)
    assert (dev.to_host(y, np.uint32) == np.where(t < lim, 2 * t, t + 100)).all()
