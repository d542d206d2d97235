// ptxlab/kernels/blocks/tmem.cuh -- Tensor Memory (TMEM) lifecycle and tcgen05.ld/st 32x32b helpers.
//
// Owned by the Stage B engineer; verified by stages B1 (alloc/dealloc/relinquish across CTAs) and B2 (st/ld round
// trip over all 128 lanes). Facts: the shared reference ptx_facts.md §1 (TMEM), §2 (ld/st maps), §7 (fences).
//
// TMEM address: bits 31..16 = lane, bits 15..0 = column [PTX ISA 9.7.16.1.1]. 128 lanes x 512 columns x 32 bit.
// Allocation is by columns only; nCols must be a power of 2 in [32, 512] [PTX ISA 9.7.16.7.1]; every allocation must
// be freed with tcgen05.dealloc before the kernel exits; alloc/dealloc/relinquish are issued by ONE whole warp
// (.sync.aligned: all 32 lanes, same operands). The address is written to SMEM with a weak store, so other warps
// read it only after a barrier, bracketed by tcgen05.fence::before/after_thread_sync [PTX ISA 9.7.16.6.4].
// ld/st: warp w may access only lanes 32*(w%4) .. +31 [PTX ISA 9.7.16.8.1]; tmem_warp_lane_base() gives that base.
#pragma once
#include "common.cuh"

namespace ptxlab {

// ---------------------------------------------------------------------------------------------------------------
// Allocation (one warp).

// tcgen05.alloc: blocks until ncols columns are free, then writes the TMEM address to *SMEM at smem_slot.
// Call with all 32 lanes of ONE warp, warp-uniform ncols (power of 2 in [32, 512]; non-increasing per CTA).
__device__ __forceinline__ void tmem_alloc(u32 smem_slot, u32 ncols) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;"
                 :: "r"(smem_slot), "r"(ncols) : "memory");
}

// tcgen05.relinquish_alloc_permit: this CTA will not allocate again (lets other CTAs on the SM allocate without
// waiting on us). Any later tcgen05.alloc of this CTA is illegal [PTX ISA 9.7.16.7.1]. One whole warp.
__device__ __forceinline__ void tmem_relinquish() {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}

// tcgen05.dealloc: frees an allocation; taddr and ncols must be exactly those of a previous tmem_alloc.
// One whole warp; all tcgen05.ld/st/mma/cp on the columns must have completed (wait::ld/st, commit waited).
__device__ __forceinline__ void tmem_dealloc(u32 taddr, u32 ncols) {
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" :: "r"(taddr), "r"(ncols) : "memory");
}

// ---------------------------------------------------------------------------------------------------------------
// Fences and waits [PTX ISA 9.7.16.6.4, 9.7.16.8.5].

// Order this thread's earlier async tcgen05 ops before the following thread-sync (bar.sync, mbarrier arrive).
__device__ __forceinline__ void tmem_fence_before_sync() {
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}
// Order later async tcgen05 ops after the preceding thread-sync.
__device__ __forceinline__ void tmem_fence_after_sync() {
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}
// Wait for all earlier tcgen05.ld of this thread: their destination registers are valid only after this.
__device__ __forceinline__ void tmem_wait_ld() {
    asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}
// Wait for all earlier tcgen05.st of this thread (before another warp / the tensor pipe reads the cells).
__device__ __forceinline__ void tmem_wait_st() {
    asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
}

// CTA-wide barrier bracketed by the tcgen05 fences: makes TMEM writes (and the alloc's SMEM slot) of one warp
// visible to the others (CUTLASS: fence::before_thread_sync; __syncthreads; fence::after_thread_sync).
__device__ __forceinline__ void tmem_sync_cta() {
    tmem_fence_before_sync();
    __syncthreads();
    tmem_fence_after_sync();
}

// tcgen05.commit: when every earlier tcgen05.mma/cp/shift of THIS thread completes, one arrive on the mbarrier at
// the .shared::cta address bar [PTX ISA 9.7.16.11; ptx_facts §7]. Issue from the thread that issued the ops.
__device__ __forceinline__ void tmem_commit(u32 bar) {
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                 :: "r"(bar) : "memory");
}

// One warp allocates ncols columns (and, when relinquish is true, gives up the alloc permit); every thread of the
// CTA returns the allocated base address (lane 0, start column). Must be called by ALL threads of the CTA (it
// contains __syncthreads). smem_slot is the .shared::cta address of a u32.
__device__ __forceinline__ u32 tmem_alloc_cta(u32 smem_slot, u32 ncols, u32 alloc_warp, bool relinquish) {
    if (warp_idx_sync() == alloc_warp) {
        tmem_alloc(smem_slot, ncols);
        if (relinquish) tmem_relinquish();
    }
    tmem_sync_cta();
    u32 base;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(base) : "r"(smem_slot) : "memory");
    return base;
}

// All threads of the CTA call this at the end: waits for every warp's TMEM use, then alloc_warp frees.
__device__ __forceinline__ void tmem_dealloc_cta(u32 base, u32 ncols, u32 alloc_warp) {
    tmem_sync_cta();
    if (warp_idx_sync() == alloc_warp) tmem_dealloc(base, ncols);
}

// ---------------------------------------------------------------------------------------------------------------
// Addresses.

__device__ __forceinline__ u32 tmem_addr(u32 base, u32 lane, u32 col) { return base + (lane << 16) + col; }
__device__ __forceinline__ u32 tmem_lane_of(u32 taddr) { return taddr >> 16; }
__device__ __forceinline__ u32 tmem_col_of(u32 taddr) { return taddr & 0xFFFFu; }
// The lane base this warp may access: 32 * (warp % 4) [PTX ISA 9.7.16.8.1].
__device__ __forceinline__ u32 tmem_warp_lane_base(u32 base) { return base + ((32u * (warp_idx_sync() % 4u)) << 16); }

// ---------------------------------------------------------------------------------------------------------------
// tcgen05.ld / tcgen05.st, shape 32x32b, .xN (N = 1, 2, 4, 8, 16, 32): thread t of the warp <-> lane L0 + t,
// register j <-> column C0 + j (ptx_facts §2; CUTLASS SM100_TMEM_LOAD_32dp32b*). taddr = warp lane base + column.
// tcgen05.ld results are valid only after tmem_wait_ld(); tcgen05.st needs tmem_wait_st() before others read.
// (Specializations below generated by a script: one asm per N; keep them in sync with each other.)

template <int N> struct TmemLd32x32b;
template <int N> struct TmemSt32x32b;

template <> struct TmemLd32x32b<1> {
    __device__ __forceinline__ static void run(u32 taddr, u32* r) {
        asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];"
                     : "=r"(r[0])
                     : "r"(taddr) : "memory");
    }
};

template <> struct TmemSt32x32b<1> {
    __device__ __forceinline__ static void run(u32 taddr, const u32* r) {
        asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};"
                     :: "r"(taddr), "r"(r[0]) : "memory");
    }
};

template <> struct TmemLd32x32b<2> {
    __device__ __forceinline__ static void run(u32 taddr, u32* r) {
        asm volatile("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%0, %1}, [%2];"
                     : "=r"(r[0]), "=r"(r[1])
                     : "r"(taddr) : "memory");
    }
};

template <> struct TmemSt32x32b<2> {
    __device__ __forceinline__ static void run(u32 taddr, const u32* r) {
        asm volatile("tcgen05.st.sync.aligned.32x32b.x2.b32 [%0], {%1, %2};"
                     :: "r"(taddr), "r"(r[0]), "r"(r[1]) : "memory");
    }
};

template <> struct TmemLd32x32b<4> {
    __device__ __forceinline__ static void run(u32 taddr, u32* r) {
        asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(taddr) : "memory");
    }
};

template <> struct TmemSt32x32b<4> {
    __device__ __forceinline__ static void run(u32 taddr, const u32* r) {
        asm volatile("tcgen05.st.sync.aligned.32x32b.x4.b32 [%0], {%1, %2, %3, %4};"
                     :: "r"(taddr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
    }
};

template <> struct TmemLd32x32b<8> {
    __device__ __forceinline__ static void run(u32 taddr, u32* r) {
        asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
                     : "r"(taddr) : "memory");
    }
};

template <> struct TmemSt32x32b<8> {
    __device__ __forceinline__ static void run(u32 taddr, const u32* r) {
        asm volatile("tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8};"
                     :: "r"(taddr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7]) : "memory");
    }
};

template <> struct TmemLd32x32b<16> {
    __device__ __forceinline__ static void run(u32 taddr, u32* r) {
        asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, [%16];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
                     : "r"(taddr) : "memory");
    }
};

template <> struct TmemSt32x32b<16> {
    __device__ __forceinline__ static void run(u32 taddr, const u32* r) {
        asm volatile("tcgen05.st.sync.aligned.32x32b.x16.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16};"
                     :: "r"(taddr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7]), "r"(r[8]), "r"(r[9]), "r"(r[10]), "r"(r[11]), "r"(r[12]), "r"(r[13]), "r"(r[14]), "r"(r[15]) : "memory");
    }
};

template <> struct TmemLd32x32b<32> {
    __device__ __forceinline__ static void run(u32 taddr, u32* r) {
        asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
                     : "r"(taddr) : "memory");
    }
};

template <> struct TmemSt32x32b<32> {
    __device__ __forceinline__ static void run(u32 taddr, const u32* r) {
        asm volatile("tcgen05.st.sync.aligned.32x32b.x32.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32};"
                     :: "r"(taddr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7]), "r"(r[8]), "r"(r[9]), "r"(r[10]), "r"(r[11]), "r"(r[12]), "r"(r[13]), "r"(r[14]), "r"(r[15]), "r"(r[16]), "r"(r[17]), "r"(r[18]), "r"(r[19]), "r"(r[20]), "r"(r[21]), "r"(r[22]), "r"(r[23]), "r"(r[24]), "r"(r[25]), "r"(r[26]), "r"(r[27]), "r"(r[28]), "r"(r[29]), "r"(r[30]), "r"(r[31]) : "memory");
    }
};

// r[0..N) <- TMEM (lane L0 + laneid, columns C0 .. C0+N-1). Asynchronous: call tmem_wait_ld() before using r.
template <int N> __device__ __forceinline__ void tmem_ld_32x32b(u32 taddr, u32* r) { TmemLd32x32b<N>::run(taddr, r); }
// TMEM (lane L0 + laneid, columns C0 .. C0+N-1) <- r[0..N). Call tmem_wait_st() before another warp reads them.
template <int N> __device__ __forceinline__ void tmem_st_32x32b(u32 taddr, const u32* r) { TmemSt32x32b<N>::run(taddr, r); }

}  // namespace ptxlab
