// Sanitizer-parity corpus (tests/emu/checks/sanitizer/sanitizer_corpus.py): classic kernel bugs, one kernel each, for the
// emulator (CI) and compute-sanitizer on an H100 (tools/audit/sanitizer_parity.py). 128 threads = 4 warps per block
// unless the corpus says otherwise; `in` holds 1024 host-written words, `out` 1024 host-written words.
// HW_BOUNDED (defined by the H100 runner): waits that never complete give up after a bounded number of probes, so a
// bug that hangs the GPU ends the kernel (the emulator builds the unbounded form and reports the deadlock).
#include "blocks/mbarrier.cuh"
using namespace ptxlab;

__device__ __forceinline__ void wait_phase(u32 bar, u32 parity) {
#ifdef HW_BOUNDED
    mbar_wait_bounded(bar, parity, 1u << 10);
#else
    mbar_wait(bar, parity);
#endif
}

// ---------------------------------------------------------------- shared-memory races (racecheck)
// RAW: each thread reads the word another warp wrote, with no barrier in between.
extern "C" __global__ void race_raw_no_barrier(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    s[t] = in[t];
    out[t] = s[(t + 32u) % 128u];
}

// WAR: the classic missing second __syncthreads() of a tiled loop: iteration k+1 overwrites a word another warp may
// still be reading in iteration k.
extern "C" __global__ void race_war_loop(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    u32 acc = 0;
    for (u32 k = 0; k < 4u; ++k) {
        s[t] = in[k * 128u + t];
        __syncthreads();
        acc += s[(t + 32u) % 128u];
    }
    out[t] = acc;
}

// WAW: every warp stores its own (different) values to the same 32 words, unordered.
extern "C" __global__ void race_waw(u32* out, const u32* in) {
    __shared__ u32 s[32];
    const u32 t = threadIdx.x;
    if (t < 32u) s[t] = in[t];
    if (t >= 32u && t < 64u) s[t - 32u] = in[t] ^ 0x55u;
    __syncthreads();
    out[t] = s[t % 32u];
}

// The barrier is there, but before the store instead of between store and load.
extern "C" __global__ void race_barrier_misplaced(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    __syncthreads();
    s[t] = in[t];
    out[t] = s[127u - t];
}

// A fence is not a barrier: __threadfence_block() orders the writer's own accesses, not the other warp's read.
extern "C" __global__ void race_fence_not_barrier(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    s[t] = in[t];
    __threadfence_block();
    out[t] = s[(t + 32u) % 128u];
}

// __syncwarp() orders the lanes of one warp, not the other warps.
extern "C" __global__ void race_syncwarp_cross_warp(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    s[t] = in[t];
    __syncwarp();
    out[t] = s[(t + 32u) % 128u];
}

// Lanes of one warp exchange through shared memory without __syncwarp() (warp-synchronous code, broken since Volta).
extern "C" __global__ void race_intra_warp(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    s[t] = in[t];
    out[t] = s[t ^ 1u];
}

// A flag handshake without synchronization: warp 1 polls a plain shared flag that warp 0 sets after its data.
extern "C" __global__ void race_plain_flag(u32* out, const u32* in) {
    __shared__ u32 s[64];
    __shared__ u32 flag;
    const u32 t = threadIdx.x;
    if (t == 0) flag = 0u;
    __syncthreads();
    if (t < 32u) {
        s[t] = in[t];
        if (t == 0) flag = 1u;
    } else if (t < 64u) {
        out[t] = s[t - 32u] + flag;
    }
}

// Controls (no finding on either side): the same exchanges, correctly synchronized.
extern "C" __global__ void ok_barrier(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[(t + 32u) % 128u];
}

extern "C" __global__ void ok_syncwarp(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    s[t] = in[t];
    __syncwarp();
    out[t] = s[t ^ 1u];
}

extern "C" __global__ void ok_mbarrier_handoff(u32* out, const u32* in) {
    __shared__ u32 s[32];
    __shared__ __align__(8) unsigned long long bar;
    const u32 t = threadIdx.x;
    if (t == 0) mbar_init(smem_u32(&bar), 32u);
    __syncthreads();
    if (t < 32u) {                       // producer warp: data, then one arrive per thread (release)
        s[t] = in[t] * 3u;
        mbar_arrive(smem_u32(&bar));
    } else if (t < 64u) {                // consumer warp: wait (acquire), then read
        wait_phase(smem_u32(&bar), 0u);
        out[t] = s[t - 32u];
    }
}

extern "C" __global__ void ok_loop_two_barriers(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    u32 acc = 0;
    for (u32 k = 0; k < 4u; ++k) {
        s[t] = in[k * 128u + t];
        __syncthreads();
        acc += s[(t + 32u) % 128u];
        __syncthreads();
    }
    out[t] = acc;
}

// ---------------------------------------------------------------- global-memory races (no compute-sanitizer tool)
// Two blocks store different values to the same global words (grid 2).
extern "C" __global__ void race_global_waw(u32* out, const u32* in) {
    out[threadIdx.x] = in[threadIdx.x] + blockIdx.x;
}

// Block 1 reads what block 0 writes, with nothing ordering the blocks (grid 2).
extern "C" __global__ void race_global_raw(u32* out, const u32* in) {
    if (blockIdx.x == 0) out[threadIdx.x] = in[threadIdx.x];
    else out[512u + threadIdx.x] = out[threadIdx.x];
}

// ---------------------------------------------------------------- uninitialized memory (initcheck)
// `in` comes from dev.empty (cudaMalloc): never written.
extern "C" __global__ void uninit_global(u32* out, const u32* in) {
    out[threadIdx.x] = in[threadIdx.x] + 1u;
}

// The host wrote only the first 64 words of `in`.
extern "C" __global__ void uninit_global_partial(u32* out, const u32* in) {
    out[threadIdx.x] = in[threadIdx.x] * 2u;
}

// Shared memory read before anything wrote it (compute-sanitizer's initcheck covers global memory only).
extern "C" __global__ void uninit_shared(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    if (t < 64u) s[t] = in[t];
    __syncthreads();
    out[t] = s[127u - t];
}

// ---------------------------------------------------------------- out of bounds / misaligned (memcheck)
// reads one element past the 1024-word buffer
extern "C" __global__ void oob_global_read(u32* out, const u32* in) {
    out[threadIdx.x] = in[threadIdx.x + 1024u - 64u];
}

extern "C" __global__ void oob_global_write(u32* out, const u32* in) {
    out[threadIdx.x + 1024u - 64u] = in[threadIdx.x];
}

// dynamic shared memory of 128 words (launched with 512 bytes); thread t writes word t + 64
extern "C" __global__ void oob_shared(u32* out, const u32* in) {
    extern __shared__ u32 dyn[];
    const u32 t = threadIdx.x;
    dyn[t + 64u] = in[t];
    __syncthreads();
    out[t] = dyn[t];
}

// a null pointer (the host passes 0 as `out`)
extern "C" __global__ void null_global_write(u32* out, const u32* in) {
    out[threadIdx.x] = in[threadIdx.x];
}

extern "C" __global__ void misaligned_global(u32* out, const u32* in) {
    const u32* p = reinterpret_cast<const u32*>(reinterpret_cast<const char*>(in) + 2);
    out[threadIdx.x] = p[threadIdx.x];
}

extern "C" __global__ void misaligned_shared(u32* out, const u32* in) {
    __shared__ u32 s[130];
    const u32 t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    const u32* p = reinterpret_cast<const u32*>(reinterpret_cast<const char*>(s) + 2);
    out[t] = p[t];
}

// ---------------------------------------------------------------- barriers (synccheck)
// whole warps at two different __syncthreads() (the H100 completes it; synccheck reports divergence)
extern "C" __global__ void barrier_divergent_warps(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    s[t] = in[t];
    if (t < 64u) {
        __syncthreads();
        out[t] = s[127u - t];
    } else {
        __syncthreads();
        out[t] = s[127u - t] + 1u;
    }
}

// the lanes of one warp split over two __syncthreads()
extern "C" __global__ void barrier_divergent_lanes(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    s[t] = in[t];
    if ((t % 32u) < 16u) {
        __syncthreads();
        out[t] = s[127u - t];
    } else {
        __syncthreads();
        out[t] = s[127u - t] + 1u;
    }
}

// __syncwarp() with a mask that leaves out executing lanes
extern "C" __global__ void syncwarp_bad_mask(u32* out, const u32* in) {
    __shared__ u32 s[128];
    const u32 t = threadIdx.x;
    s[t] = in[t];
    __syncwarp(0x0000FFFFu);
    out[t] = s[t ^ 1u];
}

// ---------------------------------------------------------------- mbarrier misuse
// the barrier expects 64 arrivals, only one warp (32) arrives: the consumer waits forever
extern "C" __global__ void mbar_missing_arrive(u32* out, const u32* in) {
    __shared__ __align__(8) unsigned long long bar;
    const u32 t = threadIdx.x;
    if (t == 0) mbar_init(smem_u32(&bar), 64u);
    __syncthreads();
    if (t < 32u) mbar_arrive(smem_u32(&bar));
    else if (t < 64u) {
        wait_phase(smem_u32(&bar), 0u);
        out[t] = in[t];
    }
}

// arrive on an mbarrier nobody initialized
extern "C" __global__ void mbar_uninitialized(u32* out, const u32* in) {
    __shared__ __align__(8) unsigned long long bar;
    const u32 t = threadIdx.x;
    if (t < 32u) mbar_arrive(smem_u32(&bar));
    out[t] = in[t];
}

// expect_tx of 1024 bytes, but the bulk copy brings 512: the phase never completes
extern "C" __global__ void mbar_tx_mismatch(u32* out, const u32* in) {
    __shared__ __align__(128) u32 s[256];
    __shared__ __align__(8) unsigned long long bar;
    const u32 t = threadIdx.x;
    if (t == 0) {
        mbar_init(smem_u32(&bar), 1u);
        fence_mbarrier_init();
    }
    __syncthreads();
    if (t == 0) {
        mbar_arrive_expect_tx(smem_u32(&bar), 1024u);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 512, [%2];"
                     :: "r"(smem_u32(s)), "l"(in), "r"(smem_u32(&bar)) : "memory");
    }
    wait_phase(smem_u32(&bar), 0u);
    out[t] = s[t];
}
