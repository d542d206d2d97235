// blocks/mma.cuh -- NVFP4 block-scaled MMA building blocks (sm_100a, tcgen05, cta_group::1).
//
//   * SMEM matrix descriptor for a K-major SWIZZLE_128B NVFP4 operand tile and its K advance
//     (ptx_facts §4; PTX ISA 9.7.16.4.1 Table 40).
//   * Instruction descriptor for kind::mxf4nvf4, E2M1 x E2M1, UE4M3 scales, M = 128, K-major (ptx_facts §5b).
//   * Issue of tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 by ONE thread (elect_one in a warp),
//     and tcgen05.commit -> mbarrier::arrive::one (ptx_facts §6, §7).
//
// Operand tile layout that smem_desc_sw128 describes (the TMA SWIZZLE_128B image of a {128 B, rows} box):
//   row r (M or N index inside the tile), byte kb (0..127 along K; 2 e2m1 per byte, element 2i in the low nibble)
//   lives at  base + (r/8)*1024 + (r%8)*128 + (((kb/16) ^ (r%8)) * 16) + kb%16,   base 1024-B aligned.
//   One 128-B row holds K = 256 fp4 = 4 MMA K-chunks of 64 (32 B each): MMA j of the tile uses the descriptor
//   advanced by 32*j bytes (desc.lo += 2*j); SBO = 1024 (8-row group stride), LBO unused for swizzled K-major (16).
//
// Everything is plain inline PTX; no CUTLASS. Include "blocks/mma.cuh" with include_dirs=[ptxlab.kernels.KERNELS_DIR].
#pragma once
#include "common.cuh"

namespace ptxlab {
namespace mma {

// ------------------------------------------------------------------------------------------ SMEM descriptor
// Fields (64-bit): [0,14) start>>4, [16,30) LBO>>4, [32,46) SBO>>4, bit 46 version = 1, [49,52) base offset = 0,
// bit 52 LBO mode = 0, [61,64) layout type: 0 NONE, 1 128B_BASE32B, 2 128B, 4 64B, 6 32B.
enum : unsigned { SWZ_NONE = 0u, SWZ_128B = 2u, SWZ_64B = 4u, SWZ_32B = 6u };
enum : unsigned { TILE_ROW_BYTES = 128u, TILE_GROUP_BYTES = 1024u, K_CHUNK_BYTES = 32u, K_CHUNK_ELEMS = 64u,
                  CHUNKS_PER_ROW = 4u };

__device__ __forceinline__ unsigned long long smem_desc(unsigned smem_addr, unsigned lbo, unsigned sbo,
                                                        unsigned layout, unsigned version = 1u) {
  const unsigned lo = ((smem_addr & 0x3FFFFu) >> 4) | (((lbo & 0x3FFFFu) >> 4) << 16);
  const unsigned hi = ((sbo & 0x3FFFFu) >> 4) | ((version & 1u) << 14) | ((layout & 7u) << 29);
  return ((unsigned long long)hi << 32) | lo;
}

// K-major SWIZZLE_128B NVFP4 tile at smem_addr (shared::cta address, 1024-B aligned).
__device__ __forceinline__ unsigned long long smem_desc_sw128(unsigned smem_addr) {
  return smem_desc(smem_addr, 16u, TILE_GROUP_BYTES, SWZ_128B);
}

// Descriptor of K-chunk `chunk` (0..3) inside the 128-B swizzle row: start address + 32*chunk bytes.
// The swizzle XOR uses address bits 7..9, which a < 128 B advance does not touch (ptx_facts §4 "Advancing along K").
__device__ __forceinline__ unsigned long long desc_advance_k(unsigned long long desc, unsigned chunk) {
  return desc + (unsigned long long)((chunk * K_CHUNK_BYTES) >> 4);
}

// Byte offset of (row r, byte kb) inside a K-major SW128 tile whose base is 1024-B aligned (for staging stores).
__device__ __forceinline__ unsigned sw128_offset(unsigned r, unsigned kb) {
  return (r >> 3) * TILE_GROUP_BYTES + (r & 7u) * TILE_ROW_BYTES + ((((kb >> 4) ^ r) & 7u) << 4) + (kb & 15u);
}

// ------------------------------------------------------------------------------------------ instruction descriptor
// kind::mxf4nvf4 (PTX Table 44): bits 7-9 A fmt (E2M1 = 1), 10-11 B fmt (E2M1 = 1), 17-22 N>>3, bit 23 scale
// type (UE4M3 = 0), 27-28 M>>7, SF IDs 0 (bits 4-5, 29-30), dense, K-major, no negate.  N=16 -> 0x08040480.
__host__ __device__ constexpr unsigned idesc_nvfp4(unsigned n, unsigned m = 128u) {
  return (1u << 7) | (1u << 10) | ((n >> 3) << 17) | (0u << 23) | ((m >> 7) << 27);
}

// ------------------------------------------------------------------------------------------ issue / commit
// One thread of the warp returns true (blocks/common.cuh elect_one_sync). All 32 lanes must execute it converged.
__device__ __forceinline__ bool elect_one() { return elect_one_sync(); }

// D[tmem d] (+)= A(desc) x B(desc)^T with UE4M3 block16 scales from TMEM (sfa/sfb column bases, 4 cols each for
// M=128 / N<=128). accumulate = enable-input-d (false on the first K chunk of a tile).
__device__ __forceinline__ void mma_nvfp4(unsigned d_tmem, unsigned long long a_desc, unsigned long long b_desc,
                                          unsigned idesc, unsigned sfa_tmem, unsigned sfb_tmem, bool accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
      " tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 [%0], %1, %2, %3, [%5], [%6], p;\n}"
      :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"((unsigned)accumulate), "r"(sfa_tmem),
         "r"(sfb_tmem)
      : "memory");
}

// All earlier tcgen05.mma/cp of THIS thread complete -> one arrive on the mbarrier (shared::cta address).
__device__ __forceinline__ void commit_arrive(unsigned mbar_smem) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
               :: "r"(mbar_smem) : "memory");
}

// Issue the MMAs of one staged K tile: `nchunks` (1..4) K-chunks of 64 read from the SW128 tiles at a_smem / b_smem,
// chunk j using scale columns sfa_col0 + 4j / sfb_col0 + 4j. first_tile => enable-input-d = 0 for chunk 0.
__device__ __forceinline__ void mma_tile_nvfp4(unsigned d_tmem, unsigned a_smem, unsigned b_smem, unsigned idesc,
                                               unsigned sfa_col0, unsigned sfb_col0, unsigned nchunks,
                                               bool first_tile) {
  const unsigned long long da = smem_desc_sw128(a_smem), db = smem_desc_sw128(b_smem);
  for (unsigned j = 0; j < nchunks; ++j)
    mma_nvfp4(d_tmem, desc_advance_k(da, j), desc_advance_k(db, j), idesc, sfa_col0 + 4u * j, sfb_col0 + 4u * j,
              !(first_tile && j == 0));
}

}  // namespace mma
}  // namespace ptxlab
