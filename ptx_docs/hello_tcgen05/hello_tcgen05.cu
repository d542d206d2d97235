// hello tcgen05 (ptx_docs/hello_tcgen05.md): one raw-PTX tcgen05.mma.kind::f16, D[128x16] = A[128x16] * B[16x16]^T,
// f16 inputs, f32 accumulator in TMEM. The host lays A and B out in shared-memory order for their descriptors
// (ptxlab.desc.layout.layout_tile) and passes the descriptors built by `lab.py desc encode` with start address 0:
// the kernel adds its buffers' shared addresses (>> 4, the start_address field in bits 13..0).
#include "blocks/mbarrier.cuh"
#include "blocks/tmem.cuh"
using namespace ptxlab;

extern "C" __global__ void hello_tcgen05(const u32* a_img, const u32* b_img, float* d, u64 a_desc, u64 b_desc,
                                         u32 idesc) {
    __shared__ __align__(1024) u32 sa[1024];          // A: 128 rows x 32 B = 4096 B
    __shared__ __align__(1024) u32 sb[128];           // B:  16 rows x 32 B =  512 B
    __shared__ __align__(8) unsigned long long bar;
    __shared__ u32 slot;
    const u32 t = threadIdx.x;
    for (u32 i = t; i < 1024u; i += 128u) sa[i] = a_img[i];
    if (t < 128u) sb[t] = b_img[t];
    // generic-proxy stores -> visible to the tensor core's async proxy (PTX ISA 8.6 proxies, 9.7.13.4)
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    if (t == 0) mbar_init(smem_u32(&bar), 1u);
    const u32 tmem = tmem_alloc_cta(smem_u32(&slot), 32u, 0u, true);   // 32 columns (>= N = 16), __syncthreads inside
    if (t == 0) {
        const u64 ad = a_desc + (smem_u32(sa) >> 4), bd = b_desc + (smem_u32(sb) >> 4);
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, 0, 0;\n\t"            // enable-input-d = false: D = A*B
                     "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n\t}"
                     :: "r"(tmem), "l"(ad), "l"(bd), "r"(idesc) : "memory");
        tmem_commit(smem_u32(&bar));                    // one arrive when the MMA has completed
    }
    mbar_wait(smem_u32(&bar), 0u);
    tmem_fence_after_sync();
    u32 r[16];
    tmem_ld_32x32b<16>(tmem_warp_lane_base(tmem), r);   // warp w reads TMEM lanes (rows) 32w .. 32w+31
    tmem_wait_ld();
    for (int j = 0; j < 16; ++j) d[t * 16u + j] = __uint_as_float(r[j]);
    tmem_dealloc_cta(tmem, 32u, 0u);
}
