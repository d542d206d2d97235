// ptxlab/kernels/nvfp4_gemm_pair.cuh -- the 2-SM schedule of nvfp4_gemm_tcgen05.cu (built with -DGEMM_PAIR=1).
//
// Included by nvfp4_gemm_tcgen05.cu after its gemm::Cfg / gemm::Tmem / gemm::wait; uses blocks/pair.cuh for every
// .cta_group::2 instruction (operand placement over the pair: ptx_docs/tcgen05_cta_pair.md).
//
// Launch: cluster (2,1,1), grid (2 * ceil(M/256), N/BN, L), 192 threads. CTA pair p = blockIdx.x / 2 computes output
// rows 256p .. 256p+255 (x BN columns) with one tcgen05.mma.cta_group::2 (M = 256, N = BN, K = 64) per K chunk;
// CTA v = %cluster_ctarank & 1 owns rows 256p + 128v .. (its 128-row m tile = blockIdx.x). Per K block of 256 each CTA
// loads, into its own SMEM stage s:
//   A  box {128 B, 128 rows}        its own 128 rows,
//   B  box {128 B, BN/2 rows}       B rows n_tile*BN + v*BN/2 .. (the pair loads the B tile ONCE, split by N),
//   SFA                             its own 4 x 512-B SF blocks,
//   SFB                             all BN/128 boxes of the tile; with BN = 256 CTA v loads box v and multicasts it
//                                   to both CTAs of the pair (one L2 read per box), with BN = 128 the even CTA does;
// every load completes (.cta_group::2) on the EVEN CTA's full[s], which expects the bytes of both CTAs.
//   warp 0      producer (both CTAs): waits its own empty[s], issues the loads (the even CTA also arrive.expect_tx).
//   warp 1      TMEM: pair alloc / dealloc in both CTAs. Even CTA only: waits full[s], copies the SF blocks of the
//               stage into both CTAs' TMEM (tcgen05.cp.cta_group::2: each CTA its own SMEM), issues 4 pair MMAs,
//               tcgen05.commit.cta_group::2 .multicast::cluster -> empty[s] of both CTAs; at the end -> acc_full of
//               both CTAs.
//   warps 2..5  epilogue (both CTAs): wait their own acc_full, tcgen05.ld their own TMEM, fp16 store of rows
//               m_tile*128 + .. (rows >= M are not stored: with M % 256 == 128 the last pair's odd CTA only helps
//               with B; its A rows are out of bounds, zero-filled by TMA).
// TMEM plan: gemm::Tmem<BN, S> in both CTAs (same columns: the pair allocates collectively).
#pragma once
#include "blocks/pair.cuh"

namespace gemm {

template <u32 BN> struct PairCfg {
  static_assert(BN % 128 == 0 && BN <= 256, "BN: 128 or 256");
  static constexpr u32 A_BYTES = BM * BK_BYTES;                  // 16 KiB: this CTA's 128 rows
  static constexpr u32 B_BYTES = (BN / 2) * BK_BYTES;            // 8 / 16 KiB: this CTA's half of the N tile
  static constexpr u32 SFA_BYTES = SF_BOX_BYTES;
  static constexpr u32 SFB_BYTES = SF_BOX_BYTES * (BN / 128);
  static constexpr u32 STAGE_BYTES = A_BYTES + B_BYTES + SFA_BYTES + SFB_BYTES;
  static constexpr u32 TX_BYTES = 2 * STAGE_BYTES;               // the even CTA's full[s] counts both CTAs' bytes
  static constexpr u32 SFB_CH = 4 * (BN / 128);
  static_assert(STAGE_BYTES % 1024 == 0, "stages must stay 1024-B aligned for SWIZZLE_128B");
};

template <u32 BN, u32 S>
__device__ __forceinline__ void run_pair(const TmaDesc* tm_a, const TmaDesc* tm_b, const TmaDesc* tm_sfa,
                                         const TmaDesc* tm_sfb, unsigned short* c, u32 M, u32 N, u32 K) {
  typedef PairCfg<BN> C;
  typedef Tmem<BN, S> T;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full_bar[S], empty_bar[S], acc_full;
  __shared__ u32 tmem_slot;

  const u32 raw = smem_u32(smem_raw);
  const u32 base = (raw + 1023u) & ~1023u;
  const u32 warp = warp_idx_sync();
  const u32 rank = pair::cluster_ctarank(), v = rank & 1u, even = rank & ~1u;
  const unsigned short pair_mask = (unsigned short)(3u << even);
  const u32 m_tile = blockIdx.x, n_tile = blockIdx.y, l = blockIdx.z;   // m_tile = 2p + v
  const u32 num_kb = K / 256u, rest_k = K / 64u, rest_m = M / 128u, rest_n = N / 128u;

  if (threadIdx.x == 0) {
    for (u32 s = 0; s < S; ++s) {
      mbar_init(smem_u32(&full_bar[s]), 1u);
      mbar_init(smem_u32(&empty_bar[s]), 1u);
    }
    mbar_init(smem_u32(&acc_full), 1u);
    fence_mbarrier_init();                                     // .release.cluster: the peer signals these barriers
  }
  if (warp == 0 && elect_one_sync()) {
    tma_prefetch_desc(tm_a); tma_prefetch_desc(tm_b); tma_prefetch_desc(tm_sfa); tma_prefetch_desc(tm_sfb);
  }
  __syncwarp();
  if (warp == 1) { pair::tmem_alloc(smem_u32(&tmem_slot), T::NCOLS); pair::tmem_relinquish(); }
  tmem_fence_before_sync();
  pair::cluster_sync();                                        // both CTAs' barriers initialised, TMEM allocated
  tmem_fence_after_sync();
  u32 tmem;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(tmem) : "r"(smem_u32(&tmem_slot)) : "memory");

  if (warp == 0) {
    // ------------------------------------------------------------------ producer (both CTAs)
    if (elect_one_sync()) {
      PipeState<S> ps;
      for (u32 kb = 0; kb < num_kb; ++kb, ps.advance()) {
        const u32 full = pair::mapa(smem_u32(&full_bar[ps.stage]), even);   // the even CTA's full[s]
        wait(smem_u32(&empty_bar[ps.stage]), ps.phase ^ 1u);
        if (v == 0) mbar_arrive_expect_tx(smem_u32(&full_bar[ps.stage]), C::TX_BYTES);
        const u32 dst = base + ps.stage * C::STAGE_BYTES;
        pair::tma_load_3d(dst, tm_a, full, (int)(kb * BK_BYTES), (int)(m_tile * BM), (int)l);
        pair::tma_load_3d(dst + C::A_BYTES, tm_b, full, (int)(kb * BK_BYTES), (int)(n_tile * BN + v * (BN / 2)),
                          (int)l);
        pair::tma_load_2d(dst + C::A_BYTES + C::B_BYTES, tm_sfa, full, 0,
                          (int)(4u * ((l * rest_m + m_tile) * rest_k + 4u * kb)));
#pragma unroll
        for (u32 h = 0; h < BN / 128; ++h)
          if ((BN / 128 == 2 && h == v) || (BN / 128 == 1 && v == 0))
            pair::tma_load_2d_multicast(dst + C::A_BYTES + C::B_BYTES + C::SFA_BYTES + h * SF_BOX_BYTES, tm_sfb, full,
                                        0, (int)(4u * ((l * rest_n + n_tile * (BN / 128) + h) * rest_k + 4u * kb)),
                                        pair_mask);
      }
    }
    __syncwarp();
  } else if (warp == 1) {
    // ------------------------------------------------------------------ MMA issuer (the even CTA of the pair)
    if (v == 0 && elect_one_sync()) {
      const u32 idesc = pair::idesc_nvfp4_m256(BN);
      PipeState<S> ps;
      for (u32 kb = 0; kb < num_kb; ++kb, ps.advance()) {
        const u32 s = ps.stage;
        wait(smem_u32(&full_bar[s]), ps.phase);
        tmem_fence_after_sync();
        const u32 sa = base + s * C::STAGE_BYTES, sb = sa + C::A_BYTES;
        const u32 ssfa = sb + C::B_BYTES, ssfb = ssfa + C::SFA_BYTES;
        const u32 sfa_t = tmem + T::SFA_COL + 16u * s;
        const u32 sfb_t = tmem + T::SFB_COL + 4u * C::SFB_CH * s;
#pragma unroll
        for (u32 j = 0; j < 4; ++j) {
          pair::sf_copy_32x128b_warpx4(sfa_t + 4u * j, sf_block_desc(ssfa + 512u * j));
#pragma unroll
          for (u32 h = 0; h < BN / 128; ++h)
            pair::sf_copy_32x128b_warpx4(sfb_t + C::SFB_CH * j + 4u * h,
                                         sf_block_desc(ssfb + h * SF_BOX_BYTES + 512u * j));
        }
        const u64 da = mma::smem_desc_sw128(sa), db = mma::smem_desc_sw128(sb);
#pragma unroll
        for (u32 j = 0; j < 4; ++j)
          pair::mma_nvfp4(tmem + T::D_COL, mma::desc_advance_k(da, j), mma::desc_advance_k(db, j), idesc,
                          sfa_t + 4u * j, sfb_t + C::SFB_CH * j, (kb | j) != 0u);
        pair::commit_multicast(smem_u32(&empty_bar[s]), pair_mask);   // stage s free in both CTAs
      }
      pair::commit_multicast(smem_u32(&acc_full), pair_mask);         // both CTAs' accumulators complete
    }
    __syncwarp();
  } else {
    // ------------------------------------------------------------------ epilogue (both CTAs, own TMEM)
    wait(smem_u32(&acc_full), 0u);
    unsigned short* c_tile = c + n_tile * BN;
#pragma unroll 1
    for (u32 n0 = 0; n0 < BN; n0 += EPI_COLS)
      epi::store_tile_f16<EPI_COLS>(tmem, T::D_COL + n0, c_tile + n0, m_tile * BM, M, N, EPI_COLS, l);
  }

  tmem_fence_before_sync();
  pair::cluster_sync();                                        // every TMEM / peer access of the pair is over
  tmem_fence_after_sync();
  if (warp == 1) pair::tmem_dealloc(tmem, T::NCOLS);
}

}  // namespace gemm
