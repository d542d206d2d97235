// Stage F2: the TMA-store epilogue of blocks/tma_store.cuh: accumulator (TMEM fp32) -> fp16 -> SWIZZLE_64B SMEM
// sub-tiles -> cp.async.bulk.tensor stores of {32, 32, 1} boxes of the fp16 (L, M, N) output.
//
// 192 threads as in the production kernels: warp 1 allocates TMEM; warps 2..5 (lane quarters 2, 3, 0, 1) each put
// their 32 rows x BN fp32 words (from acc, host data) into TMEM with tcgen05.st, then run the block's steps:
// accum_to_smem_sub per 32 columns (tcgen05.ld.32x32b.x32, cvt.rn.f16x2.f32, st.shared.v4 at the swizzled offsets),
// fence.proxy.async.shared::cta, __syncwarp, one lane: tma_store_3d per sub-tile, commit_group, wait_group.read 0.
// BROKEN (f2.py BROKEN): 1 no proxy fence; 2 SMEM written without the swizzle; 3 f16x2 halves swapped; 4 no
// wait_group.read before the SMEM is reused (the second tile overwrites it); 5 rows stored at 32*(warp-2) instead of
// the warp's lane quarter 32*(warp%4).
#include "blocks/common.cuh"
#include "blocks/tmem.cuh"
#include "blocks/tma_store.cuh"

#ifndef BN
#define BN 64
#endif
#ifndef BROKEN
#define BROKEN 0
#endif

using namespace ptxlab;

// the block's accum_to_smem_sub with the two SMEM-image mistakes of the broken variants
__device__ __forceinline__ void to_smem(u32 tmem, u32 col, u32 sub) {
#if BROKEN == 2 || BROKEN == 3
  u32 r[32];
  tmem_fence_after_sync();
  tmem_ld_32x32b<32>(tmem_warp_lane_base(tmem) + col, r);
  tmem_wait_ld();
  const u32 row = threadIdx.x & 31u;
  for (u32 c = 0; c < 4; ++c) {
#if BROKEN == 2
    const u32 a = sub + row * 64u + c * 16u;
    u32 v[4];
    for (u32 i = 0; i < 4; ++i) v[i] = tstore::pack_f16x2(r[8 * c + 2 * i], r[8 * c + 2 * i + 1]);
#else
    const u32 a = sub + tstore::sw64_offset(row, c);
    u32 v[4];
    for (u32 i = 0; i < 4; ++i) v[i] = tstore::pack_f16x2(r[8 * c + 2 * i + 1], r[8 * c + 2 * i]);
#endif
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" :: "r"(a), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3])
                 : "memory");
  }
#else
  tstore::accum_to_smem_sub(tmem, col, sub);
#endif
}

// Each CTA writes TILES output tiles (128 x BN) one after the other through the same SMEM (m tiles
// blockIdx.x * TILES + t), so SMEM reuse after the stores' reads is exercised.
constexpr u32 TILES = 2;

extern "C" __global__ void __launch_bounds__(192, 1)
f2_tma_store(const __grid_constant__ TmaDesc tm_c, const u32* acc, u32 M, u32 N) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ u32 tmem_slot;
  const u32 base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const u32 warp = warp_idx_sync(), lane = threadIdx.x & 31u;
  const u32 tmem = tmem_alloc_cta(smem_u32(&tmem_slot), BN < 32 ? 32 : BN, 1u, true);
  const u32 n_tile = blockIdx.y, l = blockIdx.z;
  if (warp >= 2) {
    const u32 q = warp & 3u;
    const u32 smem = base + q * (BN / 32u) * tstore::SUB_BYTES;
    for (u32 t = 0; t < TILES; ++t) {
      const u32 m0 = (blockIdx.x * TILES + t) * 128u;
      // this warp's rows of the accumulator: acc is fp32 bits (L, M, N)
      const u32* src = acc + ((u64)l * M + m0 + 32u * q + lane) * N + n_tile * BN;
      for (u32 c = 0; c < BN; c += 32) {
        u32 r[32];
        for (u32 j = 0; j < 32; ++j) r[j] = src[c + j];
        tmem_st_32x32b<32>(tmem_warp_lane_base(tmem) + c, r);
      }
      tmem_wait_st();
      for (u32 c = 0; c < BN; c += 32) to_smem(tmem, c, smem + (c / 32u) * tstore::SUB_BYTES);
#if BROKEN != 1
      tstore::fence_proxy_async_smem();
#endif
      __syncwarp();
      if (lane == 0) {
#if BROKEN == 5
        const u32 row0 = m0 + 32u * (warp - 2u);
#else
        const u32 row0 = m0 + 32u * q;
#endif
        for (u32 c = 0; c < BN; c += 32)
          tstore::tma_store_3d(&tm_c, smem + (c / 32u) * tstore::SUB_BYTES, (int)(n_tile * BN + c), (int)row0, (int)l);
        tstore::commit_group();
#if BROKEN != 4
        tstore::wait_group_read0();
#endif
      }
      __syncwarp();
    }
    if (lane == 0) tstore::wait_group0();
    __syncwarp();
  }
  tmem_dealloc_cta(tmem, BN < 32 ? 32 : BN, 1u);
}
