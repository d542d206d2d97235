// Stage D2: one tcgen05.mma (kind::mxf4nvf4.block16, M=128, N=NB) per 64-wide K chunk, and the accumulator read
// back after EACH chunk. CTA = one 128-row tile of one batch (grid (M/128, L)), 4 warps.
// Every 4 chunks (one 128-B swizzle row of K) the A tile (128 rows) and B tile (NB rows of b) are staged into SMEM as
// K-major SWIZZLE_128B images and the 4 SF blocks (512 B each) of A and B are staged linearly; chunk j of the tile
// is one MMA with the descriptors advanced by 32*j bytes (blocks/mma.cuh). Per chunk: elected thread of warp 0
// copies the chunk's SFA/SFB blocks to TMEM (tcgen05.cp.32x128b.warpx4), issues the MMA (enable-input-d = kc > 0),
// commits to `bar`; all threads wait on bar (parity kc & 1), tcgen05.ld.32x32b.xNB their row, and store the raw fp32
// bits to dump[(((l * mtiles + mt) * nchunks + kc) * 128 + row) * NB + n]. desc_out[0..4] = chunk 0's A/B
// descriptors, idesc and the A/B tile SMEM addresses (CTA (0,0)).
// BROKEN (0 = correct): 1 idesc M>>4 in the M>>7 field, 2 A/B format code 5 (f8f6f4's E2M1), 3 SMEM descriptor
// without version bit 46, 4 swizzle code 64B (4) instead of 128B (2), 5 tcgen05.ld without waiting for the commit.
#include "blocks/mma.cuh"
#include "blocks/epilogue.cuh"
#include "blocks/staging.cuh"

#ifndef NB
#define NB 16
#endif
#ifndef BROKEN
#define BROKEN 0
#endif
using namespace ptxlab;

enum : unsigned { D_COL = 0u, SFA_COL = 32u, SFB_COL = 64u, TMEM_COLS = 128u };

__device__ __forceinline__ unsigned long long operand_desc(unsigned addr) {
#if BROKEN == 3
  return mma::smem_desc(addr, 16u, 1024u, mma::SWZ_128B, /*version=*/0u);
#elif BROKEN == 4
  return mma::smem_desc(addr, 16u, 1024u, mma::SWZ_64B);
#else
  return mma::smem_desc_sw128(addr);
#endif
}

__device__ __forceinline__ unsigned chunk_idesc() {
#if BROKEN == 1
  return (mma::idesc_nvfp4(NB) & ~(3u << 27)) | ((128u >> 4) << 27);
#elif BROKEN == 2
  return (mma::idesc_nvfp4(NB) & ~((7u << 7) | (3u << 10))) | (5u << 7) | (5u << 10);
#else
  return mma::idesc_nvfp4(NB);
#endif
}

extern "C" __global__ void __launch_bounds__(128)
d2_chunks(const unsigned char* a, const unsigned char* b, const unsigned char* sfa_p, const unsigned char* sfb_p,
          unsigned* dump, unsigned long long* desc_out, unsigned M, unsigned K, unsigned b_rows) {
  __shared__ __align__(1024) unsigned char sA[128 * 128];
  __shared__ __align__(1024) unsigned char sB[((NB + 7) / 8) * 1024];
  __shared__ __align__(16) unsigned char sSFA[4 * 512];
  __shared__ __align__(16) unsigned char sSFB[4 * 512];
  __shared__ __align__(8) unsigned long long bar;
  __shared__ unsigned tmem_slot;
  const unsigned warp = threadIdx.x >> 5, mt = blockIdx.x, l = blockIdx.y, mtiles = gridDim.x;
  const unsigned kbytes = K / 2u, nchunks = K / 64u;
  const unsigned rest_m = (M + 127u) / 128u, rest_k = (K / 16u + 3u) / 4u;
  if (warp == 0) dpriv::tmem_alloc<TMEM_COLS>(dpriv::smem_u32(&tmem_slot));
  if (threadIdx.x == 0) { dpriv::mbar_init(dpriv::smem_u32(&bar), 1u); dpriv::fence_mbar_init(); }
  __syncthreads();
  epi::fence_after_thread_sync();
  const unsigned tmem = tmem_slot, bar_a = dpriv::smem_u32(&bar);
  const unsigned char* a_blk = a + ((unsigned long long)l * M + mt * 128u) * kbytes;
  const unsigned char* b_blk = b + (unsigned long long)l * b_rows * kbytes;
  const unsigned char* sfa_blk = sfa_p + ((unsigned long long)l * rest_m + mt) * rest_k * 512u;
  const unsigned char* sfb_blk = sfb_p + (unsigned long long)l * ((b_rows + 127u) / 128u) * rest_k * 512u;
  for (unsigned kc = 0; kc < nchunks; ++kc) {
    const unsigned j = kc & 3u;
    if (j == 0) {  // stage the next 128-B K row (up to 4 chunks)
      const unsigned nch = (nchunks - kc) < 4u ? (nchunks - kc) : 4u;
      dpriv::stage_sw128(sA, a_blk + kc * 32u, kbytes, 128u, nch * 32u);
      dpriv::stage_sw128(sB, b_blk + kc * 32u, kbytes, NB, nch * 32u);
      dpriv::copy_linear(sSFA, sfa_blk + kc * 512u, nch * 512u);
      dpriv::copy_linear(sSFB, sfb_blk + kc * 512u, nch * 512u);
      dpriv::fence_proxy_async();
      __syncthreads();
    }
    if (warp == 0 && mma::elect_one()) {
      epi::fence_after_thread_sync();
      dpriv::sf_copy_512(tmem + SFA_COL + 4u * j, dpriv::smem_u32(sSFA + 512u * j));
      dpriv::sf_copy_512(tmem + SFB_COL + 4u * j, dpriv::smem_u32(sSFB + 512u * j));
      const unsigned long long da = mma::desc_advance_k(operand_desc(dpriv::smem_u32(sA)), j);
      const unsigned long long db = mma::desc_advance_k(operand_desc(dpriv::smem_u32(sB)), j);
      if (kc == 0 && mt == 0 && l == 0) {  // what chunk 0 used, for the host's field-by-field diagnosis
        desc_out[0] = da; desc_out[1] = db; desc_out[2] = chunk_idesc();
        desc_out[3] = dpriv::smem_u32(sA); desc_out[4] = dpriv::smem_u32(sB);
      }
      mma::mma_nvfp4(tmem + D_COL, da, db, chunk_idesc(), tmem + SFA_COL + 4u * j, tmem + SFB_COL + 4u * j,
                     kc > 0);
      mma::commit_arrive(bar_a);
    }
    __syncwarp();
#if BROKEN == 5
    __syncthreads();  // BUG under test: a CTA barrier does not wait for the MMA's commit
#else
    dpriv::mbar_wait(bar_a, kc & 1u);
#endif
    unsigned r[NB];
    epi::load_accum<NB>(tmem, D_COL, r);
    const unsigned row = 32u * (warp & 3u) + (threadIdx.x & 31u);
    unsigned* out = dump + ((((unsigned long long)l * mtiles + mt) * nchunks + kc) * 128u + row) * NB;
    for (int n = 0; n < NB; ++n) out[n] = r[n];
    epi::fence_before_thread_sync();
    __syncthreads();  // everyone read D (and the SMEM tile is no longer needed by the MMA) before the next chunk
  }
  if (warp == 0) dpriv::tmem_dealloc<TMEM_COLS>(tmem);
}
