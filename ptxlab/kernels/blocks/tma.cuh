// ptxlab/kernels/blocks/tma.cuh -- TMA tensor tile loads (global -> shared, mbarrier completion).
//
// cp.async.bulk.tensor.{2,3}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// [PTX ISA 9.7.9.25.5.2; restrictions 9.7.9.25.5.1]. Coordinates are s32 elements, innermost (dim 0) first.
// On completion the unit performs complete-tx(bytes of the box, OOB fill included) on `bar`.
// `dst` is a .shared::cta address used as .shared::cluster (valid for the executing CTA [PTX ISA 5.1.6]);
// it must be 128-B aligned, and 1024-B aligned for SWIZZLE_128B boxes (swizzle pattern on absolute address bits,
// PTX ISA 5.5.7).
#pragma once
#include "common.cuh"

namespace ptxlab {

__device__ __forceinline__ void tma_load_2d(u32 dst, const TmaDesc* tmap, u32 bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];"
        :: "r"(dst), "l"(tmap_addr(tmap)), "r"(bar), "r"(c0), "r"(c1) : "memory");
}

__device__ __forceinline__ void tma_load_3d(u32 dst, const TmaDesc* tmap, u32 bar, int c0, int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5}], [%2];"
        :: "r"(dst), "l"(tmap_addr(tmap)), "r"(bar), "r"(c0), "r"(c1), "r"(c2) : "memory");
}

// Prefetch the tensor map into the descriptor cache [PTX ISA 9.7.9 prefetch, .tensormap form] (CUTLASS prefetch_tma_descriptor).
__device__ __forceinline__ void tma_prefetch_desc(const TmaDesc* tmap) {
    asm volatile("prefetch.tensormap [%0];" :: "l"(tmap_addr(tmap)) : "memory");
}

}  // namespace ptxlab
