// ptxlab/kernels/blocks/mbarrier.cuh -- mbarrier primitives and the multi-stage pipeline state.
//
// All barriers live in .shared::cta, 8-B aligned [PTX ISA 9.7.13.15.1 "Contents of the mbarrier object",
// 9.7.13.15.2 "size and alignment"]. Addresses are 32-bit .shared::cta addresses (smem_u32).
#pragma once
#include "common.cuh"

namespace ptxlab {

// mbarrier.init: phase 0, pending = expected = count, tx-count 0 [PTX ISA 9.7.13.15.9 mbarrier.init].
__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}

// Make mbarrier.init visible to the async proxy (TMA complete_tx) and the cluster
// [PTX ISA 9.7.13.4 membar/fence: fence.mbarrier_init.release.cluster] (CUTLASS fence_barrier_init).
__device__ __forceinline__ void fence_mbarrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Order earlier generic-proxy SMEM accesses of this thread before later async-proxy ones (TMA, tcgen05)
// [PTX ISA 9.7.13.4 fence.proxy.async; 8.6 "Proxies"] (CUTLASS fence_view_async_shared).
__device__ __forceinline__ void fence_proxy_async_smem() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// One arrive (count 1) on the current phase [PTX ISA 9.7.13.15.13 mbarrier.arrive]. State is discarded (`_`).
__device__ __forceinline__ void mbar_arrive(u32 bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}

// expect-tx(bytes) then one arrive [PTX ISA 9.7.13.15.13 mbarrier.arrive .expect_tx; 9.7.13.15.11 expect-tx].
// `bytes` must equal what the TMA copies of this phase deliver (complete_tx), else the phase never completes.
__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}

// expect-tx only (no arrive) [PTX ISA 9.7.13.15.11 mbarrier.expect_tx].
__device__ __forceinline__ void mbar_expect_tx(u32 bar, u32 bytes) {
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}

// One probe: true iff the phase with parity `parity` has completed [PTX ISA 9.7.13.15.16 mbarrier.test_wait/try_wait,
// .parity variant; default .acquire.cta semantics]. Only the current phase and the one before may be asked about:
// right after init (phase 0 running) parity 0 -> false, parity 1 -> true.
__device__ __forceinline__ bool mbar_try_wait(u32 bar, u32 parity) {
    u32 ok;
    asm volatile(
        "{\n\t.reg .pred P;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, P;\n\t}"
        : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
    return ok != 0;
}

// Spin until the phase of parity `parity` completed [PTX ISA 9.7.13.15.16; try_wait may suspend for a
// system-dependent time, so loop]. Unbounded: on the emulator a lost arrive/complete_tx is reported as a deadlock.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
    asm volatile(
        "{\n\t.reg .pred P;\n\t"
        "PTXLAB_MBAR_WAIT_%=:\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t"
        "@!P bra PTXLAB_MBAR_WAIT_%=;\n\t}"
        :: "r"(bar), "r"(parity) : "memory");
}

// Bounded wait for hardware runs: false after `max_probes` failed try_wait probes (the caller records where and
// exits instead of hanging the GPU). Same PTX as mbar_wait plus a counter.
__device__ __forceinline__ bool mbar_wait_bounded(u32 bar, u32 parity, u32 max_probes) {
    for (u32 i = 0; i < max_probes; ++i)
        if (mbar_try_wait(bar, parity)) return true;
    return false;
}

// The production kernels' barrier wait: unbounded (mbar_wait; the emulator reports a lost arrive as a deadlock), or
// with -DPTXLAB_WAIT_PROBES=n (hardware bring-up) one that traps after n failed try_wait probes, so a protocol error
// ends the launch with an error instead of hanging the GPU.
__device__ __forceinline__ void mbar_wait_or_trap(u32 bar, u32 parity) {
#ifdef PTXLAB_WAIT_PROBES
    if (!mbar_wait_bounded(bar, parity, PTXLAB_WAIT_PROBES)) __trap();
#else
    mbar_wait(bar, parity);
#endif
}

// Wait with .acquire at CLUSTER scope [PTX ISA 9.7.13.15.16 .acquire.cluster; 8.9 scopes]: pairs with peer threads'
// mbarrier.arrive.release.cluster on this barrier (blocks/cluster_splitk.cuh's signalled exchange), so their stores
// before the arrive (also to global memory) are visible here. The default (.acquire.cta) would order only this
// CTA's threads' stores. Bounded and trapping with -DPTXLAB_WAIT_PROBES=n like mbar_wait_or_trap.
__device__ __forceinline__ void mbar_wait_acquire_cluster(u32 bar, u32 parity) {
#ifdef PTXLAB_WAIT_PROBES
    for (u32 i = 0; i < PTXLAB_WAIT_PROBES; ++i) {
        u32 ok;
        asm volatile(
            "{\n\t.reg .pred P;\n\t"
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P, [%1], %2;\n\t"
            "selp.u32 %0, 1, 0, P;\n\t}"
            : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
        if (ok) return;
    }
    __trap();
#else
    asm volatile(
        "{\n\t.reg .pred P;\n\t"
        "PTXLAB_MBAR_WAITC_%=:\n\t"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P, [%0], %1;\n\t"
        "@!P bra PTXLAB_MBAR_WAITC_%=;\n\t}"
        :: "r"(bar), "r"(parity) : "memory");
#endif
}

// One arrive, with .release at cluster scope, on the mbarrier at .shared::cluster address `remote_bar` (a peer CTA's
// barrier, from mapa) [PTX ISA 9.7.13.15.13: remote arrive, no state returned]. Orders this thread's earlier memory
// operations before the arrive for any thread that observes the phase with .acquire.cluster.
__device__ __forceinline__ void mbar_arrive_remote_release_cluster(u32 remote_bar) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(remote_bar) : "memory");
}

// Multi-stage producer/consumer ring state (DeepGEMM advance_pipeline / CUTLASS PipelineState):
// `stage` in [0, S), `phase` flips each time stage wraps to 0.
//   consumer: wait full[stage] with parity `phase`          (phase p of full[s] completes when the TMA bytes landed)
//   producer: wait empty[stage] with parity `phase ^ 1`     (first round: parity 1 of a fresh barrier is complete)
template <int S>
struct PipeState {
    u32 stage = 0;
    u32 phase = 0;
    __device__ __forceinline__ void advance() {
        if (++stage == static_cast<u32>(S)) { stage = 0; phase ^= 1u; }
    }
};

}  // namespace ptxlab
