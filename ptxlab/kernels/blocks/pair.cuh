// blocks/pair.cuh -- 2-SM (CTA pair, tcgen05 .cta_group::2) building blocks for sm_100a.
//
// A CTA pair is two CTAs of one cluster whose %cluster_ctarank differs in bit 0 [PTX ISA 9.7.16.5.1]. Every tcgen05
// instruction of a kernel that uses these must be .cta_group::2 [PTX ISA 9.7.16.7.1, 9.7.16.10.9]. The placement
// of one M=256 MMA over the pair (ptx_docs/tcgen05_cta_pair.md; CUTLASS SM100_MMA_MXF4_2x1SM_SS):
//   * the even CTA issues (one thread); operand addresses mean the same SMEM offset / TMEM address in both CTAs;
//   * A: CTA v holds rows 128v .. 128v+127 at a_desc; B: CTA v holds rows (N/2)v .. at b_desc (half of N each);
//   * D: CTA v's TMEM lanes 0..127 hold rows 128v.. (N columns); scale_A of its own rows, scale_B of ALL N columns in
//     each CTA's TMEM (tcgen05.cp.cta_group::2 copies each CTA's own SMEM into its own TMEM).
//   * tcgen05.commit.cta_group::2 ... .multicast::cluster signals the barrier at the same offset in the ctaMask CTAs.
// Plain inline PTX, no CUTLASS. Include with include_dirs=[ptxlab.kernels.KERNELS_DIR].
#pragma once
#include "common.cuh"
#include "cluster.cuh"

namespace ptxlab {
namespace pair {

__device__ __forceinline__ u32 cluster_ctarank() { return cluster::ctarank(); }

// barrier.cluster arrive (release) + wait (acquire) by every thread of every CTA of the cluster (blocks/cluster.cuh).
__device__ __forceinline__ void cluster_sync() { cluster::sync(); }

// One warp in EACH CTA of the pair: the same columns are allocated in both TMEMs, the address written to each CTA's
// own smem_slot [PTX ISA 9.7.16.7.1, Table 46: the first warp may block until the peer's warp also executes it].
__device__ __forceinline__ void tmem_alloc(u32 smem_slot, u32 ncols) {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;"
                 :: "r"(smem_slot), "r"(ncols) : "memory");
}
__device__ __forceinline__ void tmem_relinquish() {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
}
// Both warps of the pair, after all TMEM accesses of the pair are over (e.g. after cluster_sync) [Table 47].
__device__ __forceinline__ void tmem_dealloc(u32 taddr, u32 ncols) {
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" :: "r"(taddr), "r"(ncols) : "memory");
}

// The whole pair's TMEM setup, called by ALL threads of BOTH CTAs: warp alloc_warp of each CTA allocates ncols
// (collectively) and relinquishes the permit, then a cluster barrier (bracketed by the tcgen05 fences) makes the
// address -- and every mbarrier.init before the call (with fence.mbarrier_init) -- visible to both CTAs; returns the
// address (the same in both CTAs). Pair with tmem_dealloc_cluster at the end.
__device__ __forceinline__ u32 tmem_alloc_cluster(u32 smem_slot, u32 ncols, u32 alloc_warp) {
    if (warp_idx_sync() == alloc_warp) { tmem_alloc(smem_slot, ncols); tmem_relinquish(); }
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    cluster_sync();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    u32 base;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(base) : "r"(smem_slot) : "memory");
    return base;
}
// ALL threads of BOTH CTAs at the end: a cluster barrier (no TMEM or peer SMEM access of the pair is left, PTX
// Table 47), then warp alloc_warp of each CTA frees the pair's allocation.
__device__ __forceinline__ void tmem_dealloc_cluster(u32 base, u32 ncols, u32 alloc_warp) {
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    cluster_sync();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    if (warp_idx_sync() == alloc_warp) tmem_dealloc(base, ncols);
}

// One thread: one 512-B SF block at the same SMEM offset in each CTA -> that CTA's TMEM (lanes 0..127 x4 replicas,
// 4 columns) [PTX ISA 9.7.16.9.2].
__device__ __forceinline__ void sf_copy_32x128b_warpx4(u32 taddr, u64 desc) {
    asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;" :: "r"(taddr), "l"(desc) : "memory");
}

// kind::mxf4nvf4 idesc (PTX Table 44) for M = 256 over the pair: E2M1 x E2M1, UE4M3, N>>3 at 17, M>>7 = 2 at 27.
__host__ __device__ constexpr u32 idesc_nvfp4_m256(u32 n) {
    return (1u << 7) | (1u << 10) | ((n >> 3) << 17) | ((256u >> 7) << 27);
}

// One thread of the EVEN CTA: D (+)= A x B^T over the pair (M = 256, N, K = 64), UE4M3 block16 scales.
__device__ __forceinline__ void mma_nvfp4(u32 d_tmem, u64 a_desc, u64 b_desc, u32 idesc, u32 sfa_tmem, u32 sfb_tmem,
                                          bool accumulate) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        " tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.block16 [%0], %1, %2, %3, [%5], [%6], p;\n}"
        :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"((u32)accumulate), "r"(sfa_tmem), "r"(sfb_tmem)
        : "memory");
}

// When every earlier .cta_group::2 mma/cp of THIS thread completes: one arrive on the mbarrier at offset `bar` in
// every CTA whose %cluster_ctarank bit is set in cta_mask [PTX ISA 9.7.16.12.1] (CUTLASS umma_arrive_multicast_2x1SM).
__device__ __forceinline__ void commit_multicast(u32 bar, unsigned short cta_mask) {
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;"
                 :: "r"(bar), "h"(cta_mask) : "memory");
}
// Without multicast: one arrive on the barrier at shared::cluster address `bar` (the issuing CTA's own barrier for
// a shared::cta address).
__device__ __forceinline__ void commit(u32 bar) {
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(bar) : "memory");
}

// mapa: blocks/cluster.cuh cluster::mapa (included above).
using cluster::mapa;

// TMA tile loads into this CTA's SMEM (dst: shared::cta address) whose complete_tx goes to the mbarrier at the
// .shared::cluster address bar, which .cta_group::2 allows to be in the peer CTA [PTX ISA 9.7.9.25.5.2] (CUTLASS
// SM100 2-SM loads signal the even CTA's barrier).
__device__ __forceinline__ void tma_load_3d(u32 dst, const TmaDesc* tmap, u32 bar, int c0, int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
        " [%0], [%1, {%3, %4, %5}], [%2];"
        :: "r"(dst), "l"(tmap_addr(tmap)), "r"(bar), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
__device__ __forceinline__ void tma_load_2d(u32 dst, const TmaDesc* tmap, u32 bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
        " [%0], [%1, {%3, %4}], [%2];"
        :: "r"(dst), "l"(tmap_addr(tmap)), "r"(bar), "r"(c0), "r"(c1) : "memory");
}
// The same box to the same SMEM offset in every CTA of cta_mask; with .cta_group::2 each destination's complete_tx
// goes to the barrier at bar's offset in the CTA of its pair with bar's rank parity [PTX ISA 9.7.9.25.5.2].
__device__ __forceinline__ void tma_load_2d_multicast(u32 dst, const TmaDesc* tmap, u32 bar, int c0, int c1,
                                                      unsigned short cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        ".cta_group::2 [%0], [%1, {%3, %4}], [%2], %5;"
        :: "r"(dst), "l"(tmap_addr(tmap)), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask) : "memory");
}

}  // namespace pair
}  // namespace ptxlab
