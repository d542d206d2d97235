// Stage B1: TMEM alloc / dealloc / relinquish lifecycle, several CTAs, various column counts.
// Per CTA (counts from the host, ncols[3*cta + 0..2]):
//   phase 1: warp 1 allocates n0 then n1 (n1 <= n0; n1 == 0: skipped), both live at once;
//   phase 2: frees both, allocates n2 (<= the last count), relinquishes the alloc permit, frees n2 at the end.
// out[4*cta + 0..2] = the three TMEM addresses (0xFFFFFFFF when skipped), out[4*cta + 3] = cta id ^ 0xB1B1B1B1.
// Broken variants (defines): PTXLAB_BROKEN_NO_DEALLOC (n2 never freed), PTXLAB_BROKEN_ALLOC_AFTER_RELINQUISH.
#include "blocks/tmem.cuh"
using namespace ptxlab;

#define ALLOC_WARP 1u

extern "C" __global__ void b1_lifecycle(const u32* ncols, u32* out) {
    __shared__ u32 slot[3];
    const u32 cta = blockIdx.x;
    const u32 n0 = ncols[3 * cta + 0], n1 = ncols[3 * cta + 1], n2 = ncols[3 * cta + 2];
    const bool aw = warp_idx_sync() == ALLOC_WARP;

    // phase 1: two live allocations
    if (aw) {
        tmem_alloc(smem_u32(&slot[0]), n0);
        if (n1) tmem_alloc(smem_u32(&slot[1]), n1);
    }
    tmem_sync_cta();
    const u32 a0 = slot[0], a1 = n1 ? slot[1] : 0xFFFFFFFFu;

    // phase 2: free, allocate again, give up the permit
    if (aw) {
        if (n1) tmem_dealloc(a1, n1);
        tmem_dealloc(a0, n0);
#ifdef PTXLAB_BROKEN_ALLOC_AFTER_RELINQUISH
        tmem_relinquish();
        tmem_alloc(smem_u32(&slot[2]), n2);
#else
        tmem_alloc(smem_u32(&slot[2]), n2);
        tmem_relinquish();
#endif
    }
    tmem_sync_cta();
    const u32 a2 = slot[2];
    if (threadIdx.x == 0) {
        out[4 * cta + 0] = a0;
        out[4 * cta + 1] = a1;
        out[4 * cta + 2] = a2;
        out[4 * cta + 3] = cta ^ 0xB1B1B1B1u;
    }
    tmem_sync_cta();
#ifndef PTXLAB_BROKEN_NO_DEALLOC
    if (aw) tmem_dealloc(a2, n2);
#endif
}
