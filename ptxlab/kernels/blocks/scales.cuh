// ptxlab/kernels/blocks/scales.cuh -- scale-factor (SF) blocks SMEM -> TMEM with tcgen05.cp.32x128b.warpx4.
//
// Owned by the Stage C engineer; verified by stage C1. Facts: the shared reference ptx_facts.md §3 (tcgen05.cp),
// §4 (SMEM descriptor), §6 (SF TMEM layout), §7 (proxy fence, commit).
//
// One SF block = 512 B = the SFs of 128 rows x 4 K-blocks of 16 elements (one M=128 x K=64 MMA), in the gpu-mode
// permuted ("blocked") layout: byte(r, j) = 16*(r%32) + 4*(r/32) + j. The copy reads it as 32 lines of 16 B (K-major,
// SWIZZLE_NONE, SBO = 128 B between 8-line groups, LBO unused = 0) and writes line i to TMEM lanes i, i+32, i+64,
// i+96 (all four warp quarters, as the block-scaled MMA requires), bytes 4c..4c+3 of the line to column C0 + c.
// Hence word (lane i + 32q, column C0 + c), byte j = SF of row 32c + i, K-block j. 4 columns per block.
//
// Protocol (the caller's job): generic-proxy stores to the SMEM block -> fence_sf_smem_to_async() by the writing
// threads -> CTA barrier -> ONE thread issues sf_copy_32x128b_warpx4 (+ tmem_commit(bar) from tmem.cuh) -> wait
// on the mbarrier -> tcgen05.fence::after_thread_sync -> TMEM readable / usable by tcgen05.mma.
#pragma once
#include "common.cuh"

namespace ptxlab {

// SMEM matrix descriptor, tcgen05 (Blackwell) format [PTX ISA 9.7.16.4.1 Table 40; ptx_facts §4]:
// bits 0-13 start >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 46 version = 1, 49-51 base offset (0), 52 LBO mode (0),
// 61-63 layout type (0 SWIZZLE_NONE, 1 128B_BASE32B, 2 128B, 4 64B, 6 32B). All of start/LBO/SBO 16-B aligned.
enum SmemLayout : u32 { SMEM_SWIZZLE_NONE = 0, SMEM_SWIZZLE_128B_BASE32B = 1, SMEM_SWIZZLE_128B = 2,
                        SMEM_SWIZZLE_64B = 4, SMEM_SWIZZLE_32B = 6 };

__host__ __device__ __forceinline__ u64 smem_desc_encode(u32 smem_addr, u32 lbo, u32 sbo, u32 layout) {
    const u64 lo = static_cast<u64>((smem_addr & 0x3FFFFu) >> 4) | (static_cast<u64>((lbo & 0x3FFFFu) >> 4) << 16);
    const u64 hi = static_cast<u64>((sbo & 0x3FFFFu) >> 4) | (1ull << 14) | (static_cast<u64>(layout & 7u) << 29);
    return lo | (hi << 32);
}

// Source descriptor of one 512-B SF block at smem_addr (16-B aligned): SWIZZLE_NONE, SBO 128, LBO 0
// (DeepGEMM make_sf_desc; CUTLASS SM100_UTCCP_4x32dp128bit_1cta). smem 0x8000 -> 0x0000400800000800 (ptx_facts §4).
__device__ __forceinline__ u64 sf_block_desc(u32 smem_addr) {
    return smem_desc_encode(smem_addr, 0u, 128u, SMEM_SWIZZLE_NONE);
}

// Make this thread's generic-proxy SMEM stores visible to the async proxy (tcgen05.cp reads SMEM through it)
// [PTX ISA 9.7.13.4 fence.proxy.async; ptx_facts §7]. Each writing thread, before the CTA barrier.
__device__ __forceinline__ void fence_sf_smem_to_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// tcgen05.cp.cta_group::1.32x128b.warpx4 [taddr], desc: one 512-B SF block -> TMEM lanes 0..127 (x4 replicas),
// columns taddr.col .. +3. Issued by ONE thread; asynchronous: complete it with tmem_commit(bar) + mbarrier wait.
// taddr lane field must be 0 (the copy covers all lanes).
__device__ __forceinline__ void sf_copy_32x128b_warpx4(u32 taddr, u64 desc) {
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" :: "r"(taddr), "l"(desc) : "memory");
}

// Copy one 512-B block from global memory into SMEM with the threads of the CTA (nthreads >= 32, any count):
// 16-B vectors, generic proxy; the caller then calls fence_sf_smem_to_async() and a CTA barrier.
__device__ __forceinline__ void sf_block_gmem_to_smem(void* smem_dst, const void* gmem_src, u32 tid, u32 nthreads) {
    const U32x4* src = static_cast<const U32x4*>(gmem_src);
    U32x4* dst = static_cast<U32x4*>(smem_dst);
    for (u32 i = tid; i < 32u; i += nthreads) dst[i] = src[i];
}

// Byte offset of SF block (batch l, 128-row group mblk, K-chunk kblk) in the gpu-mode permuted tensor's memory
// (physically (L, rest_m, rest_k, 32, 4, 4), ptx_facts §8): ((l * rest_m + mblk) * rest_k + kblk) * 512.
__host__ __device__ __forceinline__ u64 sf_block_offset(u32 l, u32 mblk, u32 kblk, u32 rest_m, u32 rest_k) {
    return ((static_cast<u64>(l) * rest_m + mblk) * rest_k + kblk) * 512ull;
}

}  // namespace ptxlab
