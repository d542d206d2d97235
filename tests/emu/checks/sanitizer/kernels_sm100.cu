// Sanitizer-parity corpus, Blackwell part (sm_100a, emulator only: no sm_100a GPU here, and compute-sanitizer has
// no TMEM checks to compare with). 128 threads = 4 warps; `in` / `out` hold 1024 host-written words.
#include "blocks/tmem.cuh"
using namespace ptxlab;

// TMEM allocated and never freed before the kernel exits.
extern "C" __global__ void tmem_leak(u32* out, const u32* in) {
    __shared__ u32 slot;
    const u32 base = tmem_alloc_cta(smem_u32(&slot), 32u, 0u, true);
    out[threadIdx.x] = in[threadIdx.x] + (base & 0u);
}

// tcgen05.ld's registers used before tcgen05.wait::ld (a fidelity rule: hardware scoreboards them; warns).
extern "C" __global__ void tmem_ld_without_wait(u32* out, const u32* in) {
    __shared__ u32 slot;
    const u32 base = tmem_alloc_cta(smem_u32(&slot), 32u, 0u, true);
    const u32 taddr = tmem_warp_lane_base(base);
    u32 r[1] = {in[threadIdx.x]};
    tmem_st_32x32b<1>(taddr, r);
    tmem_wait_st();
    u32 v[1];
    tmem_ld_32x32b<1>(taddr, v);
    out[threadIdx.x] = v[0];
    tmem_wait_ld();
    tmem_dealloc_cta(base, 32u, 0u);
}

// Warp w touches the lanes of quarter (w + 1) % 4: outside its own 32-lane quarter.
extern "C" __global__ void tmem_wrong_quarter(u32* out, const u32* in) {
    __shared__ u32 slot;
    const u32 base = tmem_alloc_cta(smem_u32(&slot), 32u, 0u, true);
    const u32 w = threadIdx.x / 32u;
    u32 r[1] = {in[threadIdx.x]};
    tmem_st_32x32b<1>(base + ((32u * ((w + 1u) % 4u)) << 16), r);
    tmem_wait_st();
    out[threadIdx.x] = r[0];
    tmem_dealloc_cta(base, 32u, 0u);
}

// tcgen05.alloc of 48 columns: not a power of 2 in [32, 512].
extern "C" __global__ void tmem_alloc_bad_ncols(u32* out, const u32* in) {
    __shared__ u32 slot;
    const u32 n = 48u + (in[0] & 0u);
    const u32 base = tmem_alloc_cta(smem_u32(&slot), n, 0u, true);
    out[threadIdx.x] = in[threadIdx.x];
    tmem_dealloc_cta(base, n, 0u);
}

// Read back through TMEM after tcgen05.st without tcgen05.wait::st by another warp: the CTA barrier is there,
// but the warp quarter rule makes warp 1 read lanes 0..31, which only warp 0 may access.
extern "C" __global__ void tmem_read_other_quarter(u32* out, const u32* in) {
    __shared__ u32 slot;
    const u32 base = tmem_alloc_cta(smem_u32(&slot), 32u, 0u, true);
    const u32 w = threadIdx.x / 32u;
    u32 r[1] = {in[threadIdx.x]};
    if (w == 0) {
        tmem_st_32x32b<1>(base, r);
        tmem_wait_st();
    }
    tmem_sync_cta();
    if (w == 1) {
        u32 v[1];
        tmem_ld_32x32b<1>(base, v);
        tmem_wait_ld();
        out[threadIdx.x] = v[0];
    }
    tmem_dealloc_cta(base, 32u, 0u);
}

// tcgen05.dealloc with a column count different from the allocation's.
extern "C" __global__ void tmem_dealloc_mismatch(u32* out, const u32* in) {
    __shared__ u32 slot;
    const u32 base = tmem_alloc_cta(smem_u32(&slot), 64u, 0u, true);
    out[threadIdx.x] = in[threadIdx.x];
    tmem_dealloc_cta(base, 32u, 0u);
}
