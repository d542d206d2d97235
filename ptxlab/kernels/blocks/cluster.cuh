// blocks/cluster.cuh -- thread-block cluster building blocks for 1-SM (cta_group::1) kernels on sm_100a: cluster rank
// and barrier, TMA tile loads multicast to several CTAs of the cluster, tcgen05.commit multicast.
//
// Verified by stage F1 (stages/F_cluster: an A operand shared by an N-cluster, loaded once and multicast). Used by the
// cluster GEMM (nvfp4_gemm_cluster.cu). Facts: PTX ISA 9.7.9.25.5.2 (cp.async.bulk.tensor .multicast::cluster: the
// box lands at the same CTA-relative SMEM offset in every CTA whose bit is set in the 16-bit ctaMask, and each
// destination's complete_tx goes to the mbarrier at the same offset in that CTA), 9.7.16.12.1 (tcgen05.commit
// .multicast::cluster: one arrive on the mbarrier at the same offset in every ctaMask CTA), 9.7.13.1 (barrier.cluster).
// Plain inline PTX; include with include_dirs=[ptxlab.kernels.KERNELS_DIR].
#pragma once
#include "common.cuh"

namespace ptxlab {
namespace cluster {

// %cluster_ctarank: this CTA's rank in its cluster [PTX ISA 10.12 special registers].
__device__ __forceinline__ u32 ctarank() {
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// barrier.cluster arrive (release) + wait (acquire), executed by every thread of every CTA of the cluster
// [PTX ISA 9.7.13.1]. After it, every CTA's earlier mbarrier.init (published with fence.mbarrier_init) is visible to
// its peers, so they may multicast into its SMEM and signal its barriers.
__device__ __forceinline__ void sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The two halves of that barrier, for overlapping it with work: every thread of the cluster arrives once (all lanes
// of a warp together: .aligned), then each thread waits once before it relies on its peers (any subset of a warp
// may wait: no .aligned) [PTX ISA 9.7.13.3: arrive and wait alternate per thread].
__device__ __forceinline__ void arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void wait() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }

// .shared::cluster address of the variable at shared::cta address `a` in the CTA of cluster rank `rank`
// [PTX ISA 9.7.9.22 mapa].
__device__ __forceinline__ u32 mapa(u32 a, u32 rank) {
    u32 r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
    return r;
}

// Mask of `count` consecutive ranks starting at `first` (count <= 16).
__device__ __forceinline__ unsigned short rank_mask(u32 first, u32 count) {
    return (unsigned short)(((1u << count) - 1u) << first);
}

// TMA tile loads, one box multicast to every CTA of cta_mask (same SMEM offset dst, complete_tx on the mbarrier at
// offset bar in each destination CTA) [PTX ISA 9.7.9.25.5.2; CUTLASS SM90_TMA_LOAD_MULTICAST].
__device__ __forceinline__ void tma_load_2d_multicast(u32 dst, const TmaDesc* tmap, u32 bar, int c0, int c1,
                                                      unsigned short cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;"
        :: "r"(dst), "l"(tmap_addr(tmap)), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask) : "memory");
}
__device__ __forceinline__ void tma_load_3d_multicast(u32 dst, const TmaDesc* tmap, u32 bar, int c0, int c1, int c2,
                                                      unsigned short cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4, %5}], [%2], %6;"
        :: "r"(dst), "l"(tmap_addr(tmap)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask) : "memory");
}

// When every earlier tcgen05.mma/cp of THIS thread completes: one arrive on the mbarrier at offset `bar` in every CTA
// of cta_mask [PTX ISA 9.7.16.12.1] (CUTLASS umma_arrive_multicast). A consumer releases a stage that several
// producers of the cluster fill.
__device__ __forceinline__ void commit_multicast(u32 bar, unsigned short cta_mask) {
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;"
                 :: "r"(bar), "h"(cta_mask) : "memory");
}

}  // namespace cluster
}  // namespace ptxlab
