"""Emulator mbarrier handlers (PTX ISA 9.7.13.15) with NVRTC-compiled CUDA kernels (sm_90a)."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

HDR = r'''
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned long long W(unsigned x) {
    unsigned long long r; asm("mul.wide.u32 %0, %1, 1;" : "=l"(r) : "r"(x)); return r;
}
__device__ __forceinline__ void init(unsigned b, unsigned n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(n) : "memory");
}
__device__ __forceinline__ unsigned long long arrive(unsigned b) {
    unsigned long long s; asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(s) : "r"(b) : "memory");
    return s;
}
__device__ __forceinline__ unsigned test_tok(unsigned b, unsigned long long s) {
    unsigned d;
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(d) : "r"(b), "l"(s) : "memory");
    return d;
}
__device__ __forceinline__ void wait_parity(unsigned b, unsigned ph) {
    asm volatile("{\n\t.reg .pred p;\n\tL_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
                 "@!p bra L_%=;\n\t}" :: "r"(b), "r"(ph) : "memory");
}
'''

SRC = HDR + r'''
// Phase ping-pong: every round, all threads arrive and spin with test_wait on their token; out counts rounds and
// records pending_count from a noComplete arrive of thread 0 on a second barrier.
extern "C" __global__ void rounds(unsigned* out, int nrounds) {
    __shared__ __align__(8) unsigned long long bar, bar2;
    const unsigned b = sa(&bar), b2 = sa(&bar2);
    if (threadIdx.x == 0) { init(b, blockDim.x); init(b2, 5); }
    __syncthreads();
    unsigned polls = 0;
    for (int r = 0; r < nrounds; ++r) {
        unsigned long long s = arrive(b);
        while (!test_tok(b, s)) ++polls;
    }
    if (threadIdx.x == 0) {
        unsigned long long s; unsigned pc;
        asm volatile("mbarrier.arrive.noComplete.shared::cta.b64 %0, [%1], 2;" : "=l"(s) : "r"(b2) : "memory");
        asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pc) : "l"(s));
        out[W(blockDim.x)] = pc;
    }
    out[W(threadIdx.x)] = polls;
}

// arrive_drop: threads >= keep drop out; the rest keep completing phases with the reduced count.
extern "C" __global__ void drop(unsigned* out, unsigned keep, int nrounds) {
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    if (threadIdx.x == 0) init(b, blockDim.x);
    __syncthreads();
    if (threadIdx.x >= keep) {
        asm volatile("mbarrier.arrive_drop.shared::cta.b64 _, [%0];" :: "r"(b) : "memory");
        return;
    }
    for (int r = 0; r < nrounds; ++r) {
        arrive(b);
        wait_parity(b, r & 1);
    }
    out[W(threadIdx.x)] = 1000 + nrounds;
}

// complete_tx without a copy: thread 0 arrives expecting bytes, thread 1 completes them in two parts. release=1: the
// default semantics spelled out (.release.cta, the CuTe DSL 4.3 pipelines) and a second arrival (thread 2; count 2)
extern "C" __global__ void tx(unsigned* out, unsigned bytes, unsigned release) {
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    if (threadIdx.x == 0) init(b, 1 + release);
    __syncthreads();
    if (threadIdx.x == 0 && !release)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
    if (threadIdx.x == 0 && release)
        asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
    __syncthreads();
    unsigned before;                                // phase 0 still pending (the bytes are missing): 0
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(before) : "r"(b) : "memory");
    __syncthreads();
    if (threadIdx.x == 1) {
        asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(bytes / 2) : "memory");
        asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(bytes - bytes / 2) : "memory");
    }
    if (threadIdx.x == 2 && release)
        asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(b) : "memory");
    wait_parity(b, 0);
    out[W(threadIdx.x)] = 7 + before;
}

extern "C" __global__ void uninit(unsigned* out) {
    __shared__ __align__(8) unsigned long long bar;
    arrive(sa(&bar));
}

extern "C" __global__ void wrong_parity(unsigned* out) {
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x == 0) init(sa(&bar), 2);
    __syncthreads();
    if (threadIdx.x == 0) arrive(sa(&bar));     // only one of the two expected arrivals
    wait_parity(sa(&bar), 0);
}

// mode 0: all lanes of warp 0 initialise the barrier alike (the CuTe DSL's pipelines before 4.6.0); 1: with counts
// that differ between lanes; 2: alike, then lane 0 initialises it again (a second instruction)
extern "C" __global__ void lanes_init(unsigned* out, unsigned mode) {
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    if (threadIdx.x < 32) init(b, blockDim.x + (mode == 1 ? (threadIdx.x & 1) : 0));
    if (mode == 2 && threadIdx.x == 0) init(b, blockDim.x);
    __syncthreads();
    arrive(b);
    wait_parity(b, 0);
    out[W(threadIdx.x)] = 100 + threadIdx.x;
}

extern "C" __global__ void stale(unsigned* out) {
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x == 0) {
        init(sa(&bar), 1);
        unsigned long long s0 = arrive(sa(&bar));
        arrive(sa(&bar));
        out[0] = test_tok(sa(&bar), s0);
    }
}
'''


@pytest.fixture(scope="module")
def env():
    return ptxlab.open_device("emu"), ptxlab.compile(SRC, arch="sm_90a", name="mbar.cu")


def test_rounds_and_pending_count(env, rng) -> None:
    dev, mod = env
    n = int(rng.integers(2, 5)) * 32
    rounds = int(rng.integers(2, 6))
    y = dev.empty(4 * (n + 1))
    dev.memset(y, 0xFF)
    dev.launch(mod, "rounds", grid=1, block=n, args=[y, np.int32(rounds)])
    got = dev.to_host(y, np.uint32, (n + 1,))
    assert got[n] == 5                      # pending count before the noComplete arrive of 2 (init 5)
    assert np.all(got[:n] < 1000)           # every thread finished every round (no stray values)


def test_arrive_drop(env, rng) -> None:
    dev, mod = env
    keep = int(rng.integers(1, 64))
    rounds = int(rng.integers(1, 5))
    y = dev.empty(4 * 64)
    dev.memset(y, 0x00)
    dev.launch(mod, "drop", grid=1, block=64, args=[y, np.uint32(keep), np.int32(rounds)])
    got = dev.to_host(y, np.uint32, (64,))
    assert np.all(got[:keep] == 1000 + rounds) and np.all(got[keep:] == 0)


@pytest.mark.parametrize("release", [0, 1])
def test_complete_tx_instruction(env, rng, release) -> None:
    dev, mod = env
    y = dev.empty(4 * 32)
    dev.memset(y, 0xFF)
    dev.launch(mod, "tx", grid=1, block=32, args=[y, np.uint32(int(rng.integers(16, 1 << 19))), np.uint32(release)])
    assert np.all(dev.to_host(y, np.uint32, (32,)) == 7)


def test_uninitialized_barrier(env) -> None:
    dev, mod = env
    with pytest.raises(EmuError, match="no initialized mbarrier"):
        dev.launch(mod, "uninit", grid=1, block=32, args=[dev.empty(4)])


def test_missing_arrival_deadlock_report(env) -> None:
    dev, mod = env
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "wrong_parity", grid=1, block=32, args=[dev.empty(4)])
    msg = str(ei.value)
    assert "deadlock" in msg and "32 thread(s) wait on mbarrier" in msg and "pending arrivals 1/2" in msg, msg


def test_stale_token(env) -> None:
    dev, mod = env
    with pytest.raises(EmuError, match="only the current or the immediately preceding"):
        dev.launch(mod, "stale", grid=1, block=32, args=[dev.empty(4)])


def test_lanes_of_one_warp_initialising_one_barrier_alike(env, rng) -> None:
    """Fidelity rule mbarrier_init_lanes: 32 lanes of warp 0 run one mbarrier.init on the same barrier with the same
    count (the CuTe DSL's pipelines before 4.6.0). Default: a warning, one init, the barrier works; strict: a fault.
    Lanes with different counts, or a second init instruction, stay faults (undefined, PTX ISA 9.7.13.15.9)."""
    from ptxlab.emu.checks.fidelity import EmuFidelityWarning

    dev, mod = env
    n = int(rng.integers(2, 5)) * 32
    y = dev.empty(4 * n)
    dev.memset(y, 0xFF)
    with pytest.warns(EmuFidelityWarning, match=r"\[mbarrier_init_lanes\] mbarrier.init: lanes of one warp initialise"):
        dev.launch(mod, "lanes_init", grid=1, block=n, args=[y, np.uint32(0)])
    np.testing.assert_array_equal(dev.to_host(y, np.uint32, (n,)), 100 + np.arange(n))
    with dev.strict_rules("mbarrier_init_lanes"), pytest.raises(EmuError, match="strict rule 'mbarrier_init_lanes'"):
        dev.launch(mod, "lanes_init", grid=1, block=n, args=[y, np.uint32(0)])
    for mode in (1, 2):
        with pytest.raises(EmuError, match="already holds a valid mbarrier"):
            dev.launch(mod, "lanes_init", grid=1, block=n, args=[y, np.uint32(mode)])
