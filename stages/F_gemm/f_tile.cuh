// stages/F_gemm/f_tile.cuh -- the one K block of a 128 x 32 NVFP4 tile that stages F1 and F5 share: a 24 KiB SMEM
// stage (A 128 x 128 B SW128 | B 32 x 128 B SW128 | SFA 4 x 512 B | SFB 4 x 512 B of the tile's 128-row SF block),
// its SF blocks copied into the stage's TMEM columns, and 4 tcgen05.mma kind::mxf4nvf4 block16 (N = 32, K = 64) into
// D (blocks/scales.cuh, blocks/mma.cuh). The caller has waited for the stage and then tcgen05.fence::after_thread_sync.
#pragma once
#include "blocks/common.cuh"
#include "blocks/scales.cuh"
#include "blocks/mma.cuh"

namespace fstage {

using ptxlab::u32;
constexpr u32 BN = 32, A_BYTES = 16384, B_BYTES = BN * 128, SF_BYTES = 2048;
constexpr u32 STAGE = A_BYTES + B_BYTES + 2 * SF_BYTES;

// sa: the stage's SMEM address; sfa_t / sfb_t: its TMEM SF columns (4 per K chunk); sfb_shift: columns to the
// tile's 32 rows inside the shared SF block; accumulate: false for the tile's first K block.
__device__ __forceinline__ void k_block_n32(u32 d, u32 sa, u32 sfa_t, u32 sfb_t, u32 sfb_shift, bool accumulate) {
  const u32 sb = sa + A_BYTES, ssfa = sb + B_BYTES, ssfb = ssfa + SF_BYTES;
  for (u32 j = 0; j < 4; ++j) {
    ptxlab::sf_copy_32x128b_warpx4(sfa_t + 4u * j, ptxlab::sf_block_desc(ssfa + 512u * j));
    ptxlab::sf_copy_32x128b_warpx4(sfb_t + 4u * j, ptxlab::sf_block_desc(ssfb + 512u * j));
  }
  const u32 idesc = ptxlab::mma::idesc_nvfp4(BN);
  for (u32 j = 0; j < 4; ++j)
    ptxlab::mma::mma_nvfp4(d, ptxlab::mma::desc_advance_k(ptxlab::mma::smem_desc_sw128(sa), j),
                           ptxlab::mma::desc_advance_k(ptxlab::mma::smem_desc_sw128(sb), j), idesc, sfa_t + 4u * j,
                           sfb_t + 4u * j + sfb_shift, accumulate || j != 0u);
}

}  // namespace fstage
