// blocks/tma_store.cuh -- TMA-store epilogue: accumulator (TMEM, fp32) -> fp16 -> swizzled SMEM tile -> one
// cp.async.bulk.tensor store per 32 x 32 sub-tile (sm_100a, M = 128 accumulators, cta_group::1).
//
// Verified by stage F2 (stages/F_cluster). Used by the cluster GEMM (nvfp4_gemm_cluster.cu).
// Per warp w (lane quarter q = w % 4, accumulator rows 32q .. 32q+31, thread = row), per 32 accumulator columns:
//   tcgen05.ld.32x32b.x32 -> tcgen05.wait::ld -> 16 x cvt.rn.f16x2.f32 (column 2i in the low half, as memory order
//   wants) -> 4 x st.shared.v4 into a 2 KiB sub-tile laid out as the TMA SWIZZLE_64B image of a {32 fp16, 32 rows}
//   box (row r at 64 r, 16-B chunk c at ((c ^ (r/2 % 4)) * 16): PTX ISA 5.5.7; conflict-free: 4 wavefronts per
//   512 B) -> fence.proxy.async.shared::cta (generic SMEM writes before the async proxy reads them, PTX ISA 9.7.13.4)
//   -> __syncwarp -> one lane: cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group per sub-tile,
//   cp.async.bulk.commit_group, cp.async.bulk.wait_group.read 0 (the SMEM may be reused / the CTA may exit only
//   after the bulk copies have read it: PTX ISA 9.7.9.25.5.2, 9.7.9.27-28).
// The output tensor map: fp16 (L, M, N) memory order -> 3-D {N, M, L}, box {32, 32, 1}, SWIZZLE_64B.
#pragma once
#include "common.cuh"
#include "tmem.cuh"

namespace ptxlab {
namespace tstore {

constexpr u32 SUB_COLS = 32;                    // fp16 columns per sub-tile (64 B: the SWIZZLE_64B span)
constexpr u32 SUB_ROWS = 32;                    // rows per sub-tile (one warp's lane quarter)
constexpr u32 SUB_BYTES = SUB_COLS * SUB_ROWS * 2;

// SMEM -> global tensor tile store (bulk-group completion) [PTX ISA 9.7.9.25.5.2].
__device__ __forceinline__ void tma_store_3d(const TmaDesc* tmap, u32 src, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
                 :: "l"(tmap_addr(tmap)), "r"(src), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
// Close this thread's open bulk copies into a group [PTX ISA 9.7.9.27 cp.async.bulk.commit_group].
__device__ __forceinline__ void commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Wait until every committed group of this thread has finished READING its source [PTX ISA 9.7.9.28, .read].
__device__ __forceinline__ void wait_group_read0() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
// Wait until every committed group of this thread is complete (writes visible) [PTX ISA 9.7.9.28].
__device__ __forceinline__ void wait_group0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

__device__ __forceinline__ void fence_proxy_async_smem() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// fp32 bits (lo = lower column) -> packed f16x2 (lo in bits 0-15), round to nearest even [PTX ISA 9.7.9.21 cvt].
__device__ __forceinline__ u32 pack_f16x2(u32 lo, u32 hi) {
    u32 d;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(__uint_as_float(hi)), "f"(__uint_as_float(lo)));
    return d;
}

// Byte offset of 16-B chunk c (0..3) of row r (0..31) in a SWIZZLE_64B sub-tile whose base is 512-B aligned.
__device__ __forceinline__ u32 sw64_offset(u32 r, u32 c) { return r * 64u + (((c ^ (r >> 1)) & 3u) << 4); }

// 32 fp32 values of this thread's row (columns 0..31 of a sub-tile, as tcgen05.ld.32x32b.x32 returns them) -> fp16
// row of the SWIZZLE_64B sub-tile at SMEM address sub (512-B aligned). All 32 lanes (lane = row of the sub-tile).
__device__ __forceinline__ void regs_to_smem_sub(const u32 (&r)[32], u32 sub) {
    const u32 row = threadIdx.x & 31u;
#pragma unroll
    for (u32 c = 0; c < 4; ++c) {
        const u32 a = sub + sw64_offset(row, c);
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};"
                     :: "r"(a), "r"(pack_f16x2(r[8 * c + 0], r[8 * c + 1])), "r"(pack_f16x2(r[8 * c + 2], r[8 * c + 3])),
                        "r"(pack_f16x2(r[8 * c + 4], r[8 * c + 5])), "r"(pack_f16x2(r[8 * c + 6], r[8 * c + 7]))
                     : "memory");
    }
}

// This warp's 32 accumulator rows, columns d_col .. d_col + 31 -> fp16 sub-tile at SMEM address sub (512-B aligned).
// All 32 lanes; the caller has waited for the accumulator (mbarrier) already.
__device__ __forceinline__ void accum_to_smem_sub(u32 tmem_base, u32 d_col, u32 sub) {
    u32 r[32];
    tmem_fence_after_sync();
    tmem_ld_32x32b<32>(tmem_warp_lane_base(tmem_base) + d_col, r);
    tmem_wait_ld();
    regs_to_smem_sub(r, sub);
}

// nsub fp16 sub-tiles of this warp at SMEM smem (2 KiB apart, written by its lanes) -> TMA stores of box {32, 32, 1}
// at (n0 + 32 j, m0, l). Returns after the stores have read the SMEM.
__device__ __forceinline__ void store_subtiles_tma(u32 smem, u32 nsub, const TmaDesc* tmap, u32 n0, u32 m0, u32 l) {
    fence_proxy_async_smem();
    __syncwarp();
    if ((threadIdx.x & 31u) == 0) {
        for (u32 j = 0; j < nsub; ++j) tma_store_3d(tmap, smem + j * SUB_BYTES, (int)(n0 + j * SUB_COLS), (int)m0, (int)l);
        commit_group();
        wait_group_read0();
    }
    __syncwarp();
}

// The whole per-warp epilogue: ncols (multiple of 32) accumulator columns from d_col of this warp's lane quarter ->
// fp16 sub-tiles at SMEM smem (ncols/32 x 2 KiB, 1024-B aligned, private to the warp) -> TMA stores of box
// {32, 32, 1} at coordinates (n0 + 32 j, m0 + 32 q, l) of tmap. Returns after the stores have read the SMEM.
__device__ __forceinline__ void store_accum_tma(u32 tmem_base, u32 d_col, u32 ncols, u32 smem, const TmaDesc* tmap,
                                                u32 n0, u32 m0, u32 l) {
    const u32 q = (threadIdx.x >> 5) & 3u;
#pragma unroll 1
    for (u32 j = 0; j < ncols / SUB_COLS; ++j) accum_to_smem_sub(tmem_base, d_col + j * SUB_COLS, smem + j * SUB_BYTES);
    store_subtiles_tma(smem, ncols / SUB_COLS, tmap, n0, m0 + 32u * q, l);
}

}  // namespace tstore
}  // namespace ptxlab
