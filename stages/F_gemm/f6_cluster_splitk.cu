// stages/F_gemm/f6_cluster_splitk.cu -- stage F6: split-K inside a thread-block cluster (blocks/cluster_splitk.cuh).
//
// Grid (tiles, 1, KS), cluster dims (1, 1, KS), 128 threads (4 warps = the 4 TMEM lane quarters): CTA (tile, split)
// puts its fresh fp32 partial tile (128 x BN, from `parts`) into TMEM with tcgen05.st, then runs the block's exchange:
// put_partials (the parts it does not own -> the owners' workspace slots), one cluster barrier (release / acquire),
// load_peer_parts + sum_group (its own BN / KS columns in split order, its own partial from TMEM), and writes the fp32
// sums to `out` (the production kernel converts them to fp16 and TMA-stores them: stage F2's mechanism).
// Stage F7 builds the same kernel with -DF6_XCHG=1: the signalled exchange (blocks/cluster_splitk.cuh step 2'): an
// xchg mbarrier per CTA (count KS-1), a start-up cluster barrier after its init, and instead of the cluster barrier
// a named barrier of the 128 threads, then one release.cluster arrive per owner (lane 0 of a different warp each),
// then the owner's acquire.cluster wait.
// Defines from the stage: F6_BN, F6_KS, F6_XCHG (0 = cluster barrier, 1 = signalled), BROKEN (0 = correct).
#include "blocks/common.cuh"
#include "blocks/mbarrier.cuh"
#include "blocks/tmem.cuh"
#include "blocks/cluster.cuh"
#include "blocks/cluster_splitk.cuh"

using namespace ptxlab;

constexpr u32 BN = F6_BN, KS = F6_KS;   // (block templates name their parameters BN / KS too)
constexpr u32 PC = BN / KS;
constexpr u32 NCOLS = BN < 32 ? 32 : BN;
#ifndef F6_XCHG
#define F6_XCHG 0
#endif

extern "C" __global__ void __launch_bounds__(128, 1)
f6_cluster_splitk(const u32* parts, float* ws, u32* out, u32 tiles) {
    __shared__ u32 tmem_slot;
    __shared__ __align__(8) unsigned long long xchg;
    const u32 tile = blockIdx.x, split = blockIdx.z;
    const u32 row = threadIdx.x;                               // warp w reads/writes TMEM lanes 32 w .. 32 w + 31
    if (F6_XCHG && threadIdx.x == 0) {   // BROKEN 7: one arrival too many expected (the owner waits forever)
        mbar_init(smem_u32(&xchg), csplit::xchg_arrivals(KS) + (BROKEN == 7 ? 1u : 0u));
        fence_mbarrier_init();
    }
    const u32 tmem = tmem_alloc_cta(smem_u32(&tmem_slot), NCOLS, 0u, true);   // (contains __syncthreads)
    if (F6_XCHG && BROKEN != 6) {        // BROKEN 6: no start-up barrier: a peer may arrive before xchg exists
        cluster::arrive();
        cluster::wait();
    }
    const u32* mine_in = parts + ((unsigned long long)(split * tiles + tile) * 128u + row) * BN;
#pragma unroll 1
    for (u32 g = 0; g < BN / 32u; ++g) {
        u32 r[32];
#pragma unroll
        for (u32 i = 0; i < 32; ++i) r[i] = mine_in[32u * g + i];
        tmem_st_32x32b<32>(tmem_warp_lane_base(tmem) + 32u * g, r);
    }
    tmem_wait_st();

    // 1. the parts this split does not own -> their owners' slots (BROKEN 5: the signal before the stores)
    if (F6_XCHG && BROKEN == 5) csplit::signal_owners<KS>(smem_u32(&xchg), split, 0u, 1u);
    csplit::put_partials<BN, KS>(tmem, 0u, ws, tile, BROKEN == 1 ? (split + 1u) % KS : split);
    __syncwarp();
    // 2. the exchange: F6 the cluster barrier (every thread of every CTA of the cluster); F7 the CTA signals each
    // owner once (named barrier, one release.cluster arrive per owner), then waits for its own peers' signals
    if (F6_XCHG) {
        if (BROKEN != 5) csplit::signal_owners<KS>(smem_u32(&xchg), split, 0u, 1u);
        csplit::wait_peers(smem_u32(&xchg));
    } else if (BROKEN != 2) {
        cluster::arrive();
        cluster::wait();
    }
    // 3. the owned part, in split order
    const u32 own = BROKEN == 4 ? (split + 1u) % KS : split;
    u32 v[KS][PC];
    csplit::load_peer_parts<BN, KS>(ws, tile, own, v);
    u32* o = out + ((unsigned long long)tile * 128u + row) * BN + split * PC;
#pragma unroll
    for (u32 g = 0; g < PC / 32u; ++g) {
        u32 mine[32], acc[32];
        csplit::load_cols32(tmem, split * PC + 32u * g, mine);
        if (BROKEN == 3) {   // own partial first, then the peers in split order: bits depend on who owns the part
#pragma unroll
            for (u32 i = 0; i < 32; ++i) acc[i] = mine[i];
#pragma unroll
            for (u32 s = 0; s < KS; ++s)
                if (s != split)
#pragma unroll
                    for (u32 c = 0; c < 8; ++c) {
                        u32 a4[4] = {acc[4 * c], acc[4 * c + 1], acc[4 * c + 2], acc[4 * c + 3]};
                        u32 x[4] = {v[s][32 * g + 4 * c], v[s][32 * g + 4 * c + 1], v[s][32 * g + 4 * c + 2],
                                    v[s][32 * g + 4 * c + 3]};
                        splitk::add_v4(a4, x);
#pragma unroll
                        for (u32 i = 0; i < 4; ++i) acc[4 * c + i] = a4[i];
                    }
        } else {
            csplit::sum_group<BN, KS>(v, mine, split, g, acc);
        }
#pragma unroll
        for (u32 i = 0; i < 32; ++i) o[32u * g + i] = acc[i];
    }
    tmem_dealloc_cta(tmem, NCOLS, 0u);
}
