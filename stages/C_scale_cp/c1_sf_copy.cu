// Stage C1: SFA / SFB 512-B scale-factor blocks SMEM -> TMEM with tcgen05.cp.cta_group::1.32x128b.warpx4.
// One CTA of 128 threads. For each K-chunk kc < nk:
//   threads copy SF block (l, mblk, kc) of the permuted SFA tensor and (l, nblk, kc) of SFB into SMEM (generic
//   proxy) -> fence.proxy.async -> __syncthreads -> thread 0: cp SFA -> columns 8kc..8kc+3, cp SFB -> 8kc+4..+7,
//   tcgen05.commit -> mbarrier -> everyone waits on phase parity kc&1 (then the SMEM buffer may be refilled).
// Finally warp w reads its quarter (32x32b.x8 per chunk) and writes out[lane][8*nk] (u32).
// Broken variants: PTXLAB_BROKEN_NO_COMMIT_WAIT (__syncthreads instead of the mbarrier wait),
//                  PTXLAB_BROKEN_NO_PROXY_FENCE (no fence.proxy.async between the generic SMEM stores and tcgen05.cp).
#include "blocks/tmem.cuh"
#include "blocks/scales.cuh"
#include "blocks/mbarrier.cuh"
using namespace ptxlab;

#define C1_NCOLS 64u  // 8 columns per K-chunk, nk <= 8

// Pointers first: the emulator lays out `.ptr .align 1` params at 1-B alignment (ptxlab/emu/core/program.py), while
// the device packs them 8-B aligned, so a pointer after an odd number of u32 params is misread there.
extern "C" __global__ void c1_sf_copy(const unsigned char* sfa, const unsigned char* sfb, u32* out, u32 rest_m_a,
                                      u32 rest_m_b, u32 rest_k, u32 l, u32 mblk, u32 nblk, u32 nk) {
    __shared__ __align__(128) U32x4 sbuf[2][32];  // [0] SFA block, [1] SFB block, 512 B each
    __shared__ __align__(8) u64 bar;
    __shared__ u32 slot;
    const u32 tid = threadIdx.x;
    const u32 bar_a = smem_u32(&bar);
    if (tid == 0) {
        mbar_init(bar_a, 1);
        fence_mbarrier_init();
    }
    const u32 base = tmem_alloc_cta(smem_u32(&slot), C1_NCOLS, 0u, true);  // includes the CTA barrier

    for (u32 kc = 0; kc < nk; ++kc) {
        sf_block_gmem_to_smem(sbuf[0], sfa + sf_block_offset(l, mblk, kc, rest_m_a, rest_k), tid, blockDim.x);
        sf_block_gmem_to_smem(sbuf[1], sfb + sf_block_offset(l, nblk, kc, rest_m_b, rest_k), tid, blockDim.x);
#ifndef PTXLAB_BROKEN_NO_PROXY_FENCE
        fence_sf_smem_to_async();
#endif
        __syncthreads();
        if (tid == 0) {
            tmem_fence_after_sync();
            sf_copy_32x128b_warpx4(base + 8u * kc, sf_block_desc(smem_u32(sbuf[0])));
            sf_copy_32x128b_warpx4(base + 8u * kc + 4u, sf_block_desc(smem_u32(sbuf[1])));
            tmem_commit(bar_a);
        }
#ifdef PTXLAB_BROKEN_NO_COMMIT_WAIT
        __syncthreads();
#else
        mbar_wait(bar_a, kc & 1u);
#endif
        tmem_fence_after_sync();
    }

    const u32 w = warp_idx_sync(), lane = 32u * (w % 4u) + tid % 32u;
    const u32 taddr = tmem_warp_lane_base(base);
    for (u32 kc = 0; kc < nk; ++kc) {
        u32 r[8];
        tmem_ld_32x32b<8>(taddr + 8u * kc, r);
        tmem_wait_ld();
#pragma unroll
        for (int j = 0; j < 8; ++j) out[lane * (8u * nk) + 8u * kc + j] = r[j];
    }
    tmem_dealloc_cta(base, C1_NCOLS, 0u);
}
