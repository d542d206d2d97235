// Stage B2: tcgen05.st / tcgen05.ld (32x32b.x32) round trip over all 128 lanes x ncols columns.
// 4 warps; warp w owns lanes 32w..32w+31 (its quarter, PTX 9.7.16.8.1); thread t of warp w is lane 32w + t.
// in/out are lanes x ncols row-major u32 (ncols a multiple of 32). Each warp stores its quarter (ascending column
// chunks), waits (wait::st), the CTA synchronizes (fence::before_thread_sync, bar, fence::after_thread_sync), then
// each warp reads its quarter back in DESCENDING chunk order and writes it out.
// Broken variants: PTXLAB_BROKEN_WRONG_QUARTER (warp w reads lanes of quarter (w+1)%4),
//                  PTXLAB_BROKEN_NO_WAIT_LD (uses the tcgen05.ld registers without tcgen05.wait::ld).
#include "blocks/tmem.cuh"
using namespace ptxlab;

extern "C" __global__ void b2_roundtrip(const u32* in, u32* out, u32 ncols) {
    __shared__ u32 slot;
    const u32 base = tmem_alloc_cta(smem_u32(&slot), ncols, 0u, true);
    const u32 w = warp_idx_sync(), t = threadIdx.x % 32u;
    const u32 lane = 32u * (w % 4u) + t;
    const u32 taddr = tmem_warp_lane_base(base);

    for (u32 c = 0; c < ncols; c += 32u) {
        u32 r[32];
#pragma unroll
        for (int j = 0; j < 32; ++j) r[j] = in[lane * ncols + c + j];
        tmem_st_32x32b<32>(taddr + c, r);
    }
    tmem_wait_st();
    tmem_sync_cta();

#ifdef PTXLAB_BROKEN_WRONG_QUARTER
    const u32 raddr = base + ((32u * ((w + 1u) % 4u)) << 16);
#else
    const u32 raddr = taddr;
#endif
    for (u32 cc = ncols; cc >= 32u; cc -= 32u) {
        const u32 c = cc - 32u;
        u32 r[32];
        tmem_ld_32x32b<32>(raddr + c, r);
#ifndef PTXLAB_BROKEN_NO_WAIT_LD
        tmem_wait_ld();
#endif
#pragma unroll
        for (int j = 0; j < 32; ++j) out[lane * ncols + c + j] = r[j];
    }
    tmem_dealloc_cta(base, ncols, 0u);
}
