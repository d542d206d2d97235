// Stage D4: one 2-SM MMA. A CTA pair (cluster (2,1,1) or (4,1,1), grid (2P,1,1), 4 warps per CTA) issues ONE
// tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.block16 of M=256 x N=NB x K=64 (blocks/pair.cuh has the
// placement): pair p = blockIdx.x / 2 computes rows 256p .. 256p+255 of A x B^T; its CTA v = %cluster_ctarank & 1
// stages A rows 256p + 128v.. and B rows (NB/2)v.. (K-major SWIZZLE_NONE, LBO 128, SBO 256), its SFA block
// (rows 256p + 128v..) and ALL NB rows of SFB (gpu-mode blocked 512-B blocks); warp 0 of each CTA allocates the
// pair's TMEM (alloc.cta_group::2); after a cluster barrier one thread of the EVEN CTA copies the SFs into both CTAs'
// TMEM (cp.cta_group::2), issues the MMA and commits with .multicast::cluster to both CTAs' mbarrier; every warp of
// both CTAs waits on its own barrier and reads back its CTA's D rows: d[(256p + 128v + lane) * NB + n] (fp32 bits).
// BROKEN (0 = correct; the driver's names): 1 odd_issuer (the odd CTA issues), 2 alloc_cta_group1 (alloc with
// .cta_group::1, the rest ::2), 3 peer_no_alloc (only the even CTA's warp allocates), 4 no_multicast (commit to the
// issuer's own barrier only), 6 b_not_split (both CTAs stage B rows 0..NB/2-1), 7 peer_no_proxy_fence (the odd CTA
// skips fence.proxy.async: the even CTA's cp/mma reads its generic stores). 5 no_cluster is a host-side launch
// without a cluster.
#include "blocks/mma.cuh"
#include "blocks/tmem.cuh"
#include "blocks/mbarrier.cuh"
#include "blocks/scales.cuh"
#include "blocks/pair.cuh"

#ifndef NB
#define NB 64
#endif
#ifndef BROKEN
#define BROKEN 0
#endif
#ifndef REPS
#define REPS 1
#endif
using namespace ptxlab;

enum : unsigned { SFB_BLOCKS = (NB + 127) / 128, D_COL = 0u, SFA_COL = NB, SFB_COL = NB + 4u,
                  NEED = NB + 4u + 4u * SFB_BLOCKS,
                  TMEM_COLS = NEED <= 32u ? 32u : NEED <= 64u ? 64u : NEED <= 128u ? 128u
                            : NEED <= 256u ? 256u : 512u };

// rows x 32 B (one K chunk of 64 e2m1) -> K-major SWIZZLE_NONE core matrices: row r, byte kb at
// (r%8)*16 + (r/8)*256 (SBO) + kb%16 + (kb/16)*128 (LBO).
__device__ __forceinline__ void stage_rows(unsigned char* dst, const unsigned char* src, unsigned rows) {
  for (unsigned i = threadIdx.x; i < rows * 8u; i += blockDim.x) {
    const unsigned r = i >> 3, kb = (i & 7u) * 4u;
    *reinterpret_cast<unsigned*>(dst + (r & 7u) * 16u + (r >> 3) * 256u + (kb & 15u) + (kb >> 4) * 128u) =
        *reinterpret_cast<const unsigned*>(src + r * 32u + kb);
  }
}

extern "C" __global__ void __launch_bounds__(128)
d4_pair(const unsigned char* a, const unsigned char* b, const unsigned* sfa_blk, const unsigned* sfb_blk,
        unsigned* d) {
  __shared__ __align__(1024) unsigned char sA[128 * 32];
  __shared__ __align__(1024) unsigned char sB[(NB / 2) * 32];
  __shared__ __align__(16) unsigned sSFA[128];
  __shared__ __align__(16) unsigned sSFB[128 * SFB_BLOCKS];
  __shared__ __align__(8) unsigned long long bar;
  __shared__ unsigned tmem_slot;
  const unsigned rank = pair::cluster_ctarank(), warp = warp_idx_sync(), lane = threadIdx.x & 31u;
  const unsigned v = rank & 1u, row0 = (blockIdx.x >> 1) * 256u + v * 128u;   // this CTA's 128 rows of A / D
  const unsigned slot = smem_u32(&tmem_slot), bar_a = smem_u32(&bar);

#if BROKEN == 2
  if (warp == 0) { ptxlab::tmem_alloc(slot, TMEM_COLS); ptxlab::tmem_relinquish(); }
#elif BROKEN == 3
  if (warp == 0 && v == 0) { pair::tmem_alloc(slot, TMEM_COLS); pair::tmem_relinquish(); }
#else
  if (warp == 0) { pair::tmem_alloc(slot, TMEM_COLS); pair::tmem_relinquish(); }
#endif
  if (threadIdx.x == 0) { mbar_init(bar_a, 1u); fence_mbarrier_init(); }
  stage_rows(sA, a + row0 * 32u, 128u);
#if BROKEN == 6
  stage_rows(sB, b, NB / 2u);
#else
  stage_rows(sB, b + v * (NB / 2u) * 32u, NB / 2u);
#endif
  sSFA[threadIdx.x] = sfa_blk[(row0 / 128u) * 128u + threadIdx.x];
  for (unsigned i = threadIdx.x; i < 128u * SFB_BLOCKS; i += 128u) sSFB[i] = sfb_blk[i];
#if BROKEN == 7
  if (v == 0) fence_proxy_async_smem();   // only the even CTA fences its generic stores
#else
  fence_proxy_async_smem();        // generic SMEM stores -> read by tcgen05.cp/mma (async proxy), in BOTH CTAs
#endif
  tmem_fence_before_sync();
  pair::cluster_sync();            // both CTAs staged + barrier initialised before the even CTA issues
  tmem_fence_after_sync();
  unsigned base;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(base) : "r"(slot) : "memory");

#if BROKEN == 1
  const unsigned issuer = 1u;
#else
  const unsigned issuer = 0u;
#endif
  if (v == issuer && warp == 0) {
    if (elect_one_sync()) {
      pair::sf_copy_32x128b_warpx4(base + SFA_COL, sf_block_desc(smem_u32(sSFA)));
      for (unsigned c = 0; c < SFB_BLOCKS; ++c)
        pair::sf_copy_32x128b_warpx4(base + SFB_COL + 4u * c, sf_block_desc(smem_u32(sSFB + 128u * c)));
      for (unsigned rep = 0; rep < REPS; ++rep)   // REPS > 1: the same MMA again (timing tests; same result)
        pair::mma_nvfp4(base + D_COL, mma::smem_desc(smem_u32(sA), 128u, 256u, mma::SWZ_NONE),
                      mma::smem_desc(smem_u32(sB), 128u, 256u, mma::SWZ_NONE), pair::idesc_nvfp4_m256(NB),
                      base + SFA_COL, base + SFB_COL, false);
#if BROKEN == 4
      pair::commit(bar_a);
#else
      pair::commit_multicast(bar_a, (unsigned short)(3u << (rank & ~1u)));   // both CTAs of this pair
#endif
    }
    __syncwarp();
  }
  mbar_wait(bar_a, 0u);
  tmem_fence_after_sync();
  const unsigned row = row0 + 32u * warp + lane;
  for (unsigned c0 = 0; c0 < NB; c0 += 16u) {
    unsigned r[16];
    tmem_ld_32x32b<16>(base + ((32u * warp) << 16) + D_COL + c0, r);
    tmem_wait_ld();
    for (unsigned j = 0; j < 16u; ++j) d[row * NB + c0 + j] = r[j];
  }
  tmem_fence_before_sync();
  pair::cluster_sync();            // no TMEM access of the pair is left before the collective dealloc
  if (warp == 0) pair::tmem_dealloc(base, TMEM_COLS);
}
