"""mbarrier.try_wait / test_wait that return False (PTX ISA 9.7.13.15.16) when nothing else can run: the wait's time
limit expires and the thread goes on with False (ops.mbarrier._expire), as CUTLASS's producer_try_acquire relies on
(it peeks the next stage's barrier before issuing the copy that will complete it).  A wait that can never succeed is
still a deadlock report, now saying that the time limits expired without changing anything."""
from __future__ import annotations

import time

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

SRC = r'''
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned try_once(unsigned b, unsigned ph) {      // one try_wait, no loop
    unsigned d;
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(d) : "r"(b), "r"(ph) : "memory");
    return d;
}
__device__ __forceinline__ unsigned test_once(unsigned b, unsigned ph) {     // one test_wait
    unsigned d;
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(d) : "r"(b), "r"(ph) : "memory");
    return d;
}
__device__ __forceinline__ void init_by_thread0(unsigned b, unsigned count) {   // then the whole CTA syncs
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(count) : "memory");
    __syncthreads();
}
__device__ __forceinline__ void wait_parity(unsigned b, unsigned ph) {
    asm volatile("{\n\t.reg .pred p;\n\tL_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
                 "@!p bra L_%=;\n\t}" :: "r"(b), "r"(ph) : "memory");
}

// Every thread peeks the barrier (phase 0 not complete: False), then arrives, then waits for real.
// out[t] = (peek result, test_wait result, value after the wait).  The results are stored BEFORE the arrive: the
// H100 delivers try_wait's predicate through a scoreboard, so a result first used after the thread's own arrive can
// already see the phase that arrive completed (measured, ptx_docs/mbarrier.md "Time limit").
extern "C" __global__ void peek_then_arrive(unsigned* out, unsigned v) {
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    init_by_thread0(b, blockDim.x);
    unsigned p = try_once(b, 0);
    unsigned q = test_once(b, 0);
    out[3 * threadIdx.x] = p;
    out[3 * threadIdx.x + 1] = q;
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory");
    wait_parity(b, 0);
    out[3 * threadIdx.x + 2] = v + threadIdx.x;
}

// The same with the peek's result first used after the arrive (for the H100 record; not compared).
extern "C" __global__ void peek_used_after_arrive(unsigned* out) {
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    init_by_thread0(b, blockDim.x);
    unsigned p = try_once(b, 0);
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory");
    wait_parity(b, 0);
    out[threadIdx.x] = p;
}

// A bounded poll of a barrier nobody arrives at: gives up after `tries` failed try_waits.
extern "C" __global__ void bounded_poll(unsigned* out, unsigned tries) {
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    init_by_thread0(b, 1);
    unsigned n = 0;
    while (n < tries && !try_once(b, 0)) ++n;
    out[threadIdx.x] = n;
}

// An unbounded poll with a counter: the state changes at every expiry, so only the watchdog can stop it.
extern "C" __global__ void unbounded_poll(unsigned* out) {
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    init_by_thread0(b, 1);
    unsigned n = 0;
    while (!try_once(b, 0)) ++n;
    out[threadIdx.x] = n;
}

// A spin on a barrier nobody arrives at: a deadlock.
extern "C" __global__ void spin_forever(unsigned* out) {
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    init_by_thread0(b, 1);
    wait_parity(b, 0);
    out[threadIdx.x] = 1;
}
'''


@pytest.fixture(scope="module")
def env():
    return ptxlab.open_device("emu"), ptxlab.compile(SRC, arch="sm_90a", name="mbar_expiry.cu")


def test_a_single_try_wait_on_an_incomplete_phase_returns_false_and_goes_on(env, rng):
    """Before: the thread was parked until the barrier changed, which only it could do: a false deadlock."""
    dev, mod = env
    n = int(rng.integers(1, 5)) * 32
    v = int(rng.integers(1, 2**31))
    out = dev.empty(12 * n)
    dev.memset(out, 0xA5)
    dev.launch(mod, "peek_then_arrive", grid=1, block=n, args=[out, np.uint32(v)])
    got = dev.to_host(out, np.uint32).reshape(n, 3)
    assert np.array_equal(got[:, 0], np.zeros(n, np.uint32))
    assert np.array_equal(got[:, 1], np.zeros(n, np.uint32))
    assert np.array_equal(got[:, 2], (v + np.arange(n)).astype(np.uint32))


def test_a_bounded_poll_gives_up_after_its_tries(env, rng):
    """Each expiry changes the wave's state (the poll counter), so the emulator keeps letting the time limit expire
    until the loop gives up, as on hardware."""
    dev, mod = env
    tries = int(rng.integers(2, 7))
    out = dev.empty(4 * 32)
    dev.memset(out, 0xA5)
    dev.launch(mod, "bounded_poll", grid=1, block=32, args=[out, np.uint32(tries)])
    assert np.array_equal(dev.to_host(out, np.uint32), np.full(32, tries, np.uint32))


def test_a_wait_that_can_never_succeed_is_still_a_deadlock(env):
    dev, mod = env
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "spin_forever", grid=1, block=32, args=[dev.empty(4 * 32)])
    msg = str(ei.value)
    assert "deadlock" in msg and "32 thread(s) wait on mbarrier" in msg and "pending arrivals 1/1" in msg, msg
    assert "time limit of the parked test_wait/try_wait expired 1 time(s)" in msg, msg


def test_an_unbounded_poll_is_stopped_by_the_stall_watchdog():
    """Expiries are not forward progress (watchdog.py): a poll with a counter that never ends is reported as a spin
    by the no-progress limit, naming the polling warp."""
    mod = ptxlab.compile(SRC, arch="sm_90a", name="mbar_expiry.cu")
    dev = ptxlab.open_device("emu", stall_seconds=1.0)
    t0 = time.monotonic()
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "unbounded_poll", grid=1, block=32, args=[dev.empty(4 * 32)])
    assert time.monotonic() - t0 < 20
    msg = str(ei.value)
    assert "no forward progress" in msg and "block (0, 0, 0) warp 0" in msg, msg
