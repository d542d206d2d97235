// blocks/cluster_splitk.cuh -- split-K inside a thread-block cluster: the KS CTAs that hold the partial fp32 sums of
// one output tile (K blocks [floor(s KB / KS), floor((s+1) KB / KS)) for split s, the split of ptxlab.production.gemm
// model_c_splitk) are in ONE cluster, so they run at the same time and one cluster barrier orders their exchange;
// no counter, no "last arriver", no serial fixup (sm_90+ PTX; TMEM / TMA-store parts sm_100a).
//
// Verified by stage F6 (stages/F_gemm: the exchange and its ordered sum against a host reference, with broken
// variants). Used by the cluster GEMM (nvfp4_gemm_cluster.cu) when it is built with -DGEMM_SPLITS=KS, KS >= 2.
//
// The tile's BN columns are cut into KS parts of PC = BN / KS columns (PC a multiple of 32); split s OWNS part s:
//   1. put_partials: every epilogue thread (row 32 q + lane of the accumulator, q = warp % 4) loads each part j != s
//      of its row from TMEM (tcgen05.ld.32x32b.x32) and stores it with plain 16-B stores into slot (j, s) of the
//      tile's workspace, chunk-major ([4-column chunk][row][4] fp32: a warp's 32 rows are 512 contiguous bytes,
//      blocks/splitk.cuh slot_v4);
//   2. every thread of every CTA of the cluster: barrier.cluster.arrive.release + barrier.cluster.wait.acquire
//      (PTX ISA 9.7.13.3: the release / acquire pattern at cluster scope orders each thread's stores of step 1
//      before every peer thread's loads of step 3);
//   3. reduce_store_tma (load_peer_parts, sum_group): the owner sums its part in split order ((p_0 + p_1) + ..) + p_{KS-1} with add.rn.f32 (its own
//      p_s from TMEM, never stored; the others with ld.relaxed.gpu from slots (s, 0..KS-1), all issued before the first
//      add), converts to fp16 and stores it with the TMA-store epilogue (blocks/tma_store.cuh).
// So c has the same bits whatever order the CTAs run in (deterministic) and equals model_c_splitk bit for bit. Slots
// need no zeroing: each is written before the barrier and read after it, in the same launch.
// Workspace: per tile KS x KS slots of 128 x PC fp32 (the diagonal unused), tiles in (l, m_tile, n_tile) order.
//
// The SIGNALLED exchange (the default since issue 22 round 4; verified by stage F7) replaces step 2's cluster barrier,
// which every thread of every CTA must reach, by one mbarrier per CTA (xchg, count xchg_arrivals(KS) = KS-1):
//   2'. after their stores, the 128 epilogue threads pass one named barrier (bar.sync XCHG_BAR_ID, 128: memory
//      ordering among the participating threads, PTX ISA 9.7.13.1), then lane 0 of epilogue warp i arrives on the
//      xchg barrier of owner i (i-th split other than this one; warp i also takes owners i + 4, ..) with
//      mapa + mbarrier.arrive.release.cluster.shared::cluster (9.7.13.15.13; the release is cumulative, so it orders
//      every stores the named barrier ordered before it), and the owner's epilogue threads wait for xchg's phase 0
//      with .acquire.cluster (wait_peers; blocks/mbarrier.cuh mbar_wait_acquire_cluster), then run step 3 as before.
// One release.cluster arrive per (peer, owner), issued by different warps in parallel: each such arrive holds its warp
// until its earlier memory operations are visible cluster-wide (~670 clk measured on the H100 per arrive, also for
// arrives in a row: ptxlab/timing/params.py cluster_release_clk), so per-thread or per-warp arrives cost KS-1 holds
// in a row per warp (stage F7's first form predicted 10.10 µs on 128x4096x7168 vs 9.40 with the cluster barrier).
// An owner waits only for the KS-1 peers that write ITS part, not for the whole cluster; the producer / MMA warps
// take no part. Requirements: xchg initialised (mbarrier.init + fence.mbarrier_init.release.cluster) and a cluster
// barrier after it before any peer's arrive (the kernel's start-up barrier); the owner cannot exit before all
// arrives on its barrier landed (it waits for them), so no CTA's SMEM is accessed after it exits.
#pragma once
#include "common.cuh"
#include "mbarrier.cuh"
#include "cluster.cuh"
#include "tmem.cuh"
#include "splitk.cuh"
#include "tma_store.cuh"

namespace ptxlab {
namespace csplit {

// Slot (owner part j, writer split s) of tile `tile`: 128 x pc fp32.
__device__ __forceinline__ float* part_slot(float* ws, u32 tile, u32 ks, u32 j, u32 s, u32 pc) {
    return ws + ((unsigned long long)(tile * ks + j) * ks + s) * (128ull * pc);
}

// 32 accumulator columns d_col .. d_col + 31 of this thread's row (its warp's lane quarter) into r.
__device__ __forceinline__ void load_cols32(u32 tmem_base, u32 d_col, u32 (&r)[32]) {
    tmem_fence_after_sync();
    tmem_ld_32x32b<32>(tmem_warp_lane_base(tmem_base) + d_col, r);
    tmem_wait_ld();
}

// Step 1 (all 32 lanes of each epilogue warp, after the accumulator is complete): this split's partial of every part
// it does not own -> the owners' slots.
template <u32 BN, u32 KS>
__device__ __forceinline__ void put_partials(u32 tmem_base, u32 d_col, float* ws, u32 tile, u32 own) {
    constexpr u32 PC = BN / KS;
    const u32 row = 32u * ((threadIdx.x >> 5) & 3u) + (threadIdx.x & 31u);
#pragma unroll 1
    for (u32 j = 0; j < KS; ++j) {
        if (j == own) continue;
        float* slot = part_slot(ws, tile, KS, j, own, PC);
#pragma unroll 1
        for (u32 g = 0; g < PC / 32u; ++g) {
            u32 r[32];
            load_cols32(tmem_base, d_col + j * PC + 32u * g, r);
#pragma unroll
            for (u32 c = 0; c < 8; ++c)
                splitk::st_v4(splitk::slot_v4(slot, 8u * g + c, row), r[4 * c], r[4 * c + 1], r[4 * c + 2], r[4 * c + 3]);
        }
    }
}

// Arrivals the signalled exchange's xchg barrier counts: one per peer split.
__host__ __device__ constexpr u32 xchg_arrivals(u32 ks) { return ks - 1u; }
// The named barrier of the 4 epilogue warps (128 threads) before the signal (0 is __syncthreads').
constexpr u32 XCHG_BAR_ID = 1;

// Step 2' (all 128 epilogue threads, warps with (warp % 4) = q, after their put_partials stores): the named barrier,
// then lane 0 of the warp of lane quarter q arrives (release.cluster) on the xchg barrier (shared::cta address
// `xchg`, the same offset in every CTA) of owners i = q, q + 4, .. (< KS-1; owner j = i, or i + 1 from own on), the
// CTA of cluster rank rank0 + j * stride (stage F7: (1,1,KS) clusters, rank0 0, stride 1; the GEMM: (1,C,KS),
// rank0 = rank % C, stride C).
template <u32 KS>
__device__ __forceinline__ void signal_owners(u32 xchg, u32 own, u32 rank0, u32 stride) {
    splitk::bar_sync(XCHG_BAR_ID, 128u);
    if ((threadIdx.x & 31u) == 0u) {
#pragma unroll 1
        for (u32 i = (threadIdx.x >> 5) & 3u; i < KS - 1u; i += 4u) {
            const u32 j = i < own ? i : i + 1u;
            mbar_arrive_remote_release_cluster(cluster::mapa(xchg, rank0 + j * stride));
        }
    }
    __syncwarp();
}

// Step 2' on the owner's side (every epilogue thread, before step 3): all KS-1 peers' parts of this CTA's columns
// are in the workspace and visible (phase 0 of xchg, acquire at cluster scope).
__device__ __forceinline__ void wait_peers(u32 xchg) { mbar_wait_acquire_cluster(xchg, 0u); }

// Step 3a (after the cluster barrier / the xchg wait): every peer partial of this thread's row of the owned part into v[s] (v[own]
// untouched). All PC/4 x (KS-1) 16-B loads are issued before anything uses them, so the exchange costs one memory
// latency, not one per 32 columns.
template <u32 BN, u32 KS>
__device__ __forceinline__ void load_peer_parts(float* ws, u32 tile, u32 own, u32 (&v)[KS][BN / KS]) {
    constexpr u32 PC = BN / KS;
    const u32 row = 32u * ((threadIdx.x >> 5) & 3u) + (threadIdx.x & 31u);
#pragma unroll
    for (u32 s = 0; s < KS; ++s) {
        if (s == own) continue;
        float* slot = part_slot(ws, tile, KS, own, s, PC);
#pragma unroll
        for (u32 c = 0; c < PC / 4u; ++c) {
            u32 x[4];
            splitk::ld_relaxed_v4(splitk::slot_v4(slot, c, row), x);
            v[s][4 * c] = x[0]; v[s][4 * c + 1] = x[1]; v[s][4 * c + 2] = x[2]; v[s][4 * c + 3] = x[3];
        }
    }
}

// Step 3b: columns 32 g .. 32 g + 31 of the owned part: acc = ((p_0 + p_1) + ..) + p_{KS-1} (add.rn.f32), p_own = mine
// (this CTA's accumulator columns, from TMEM), the others from v.
template <u32 BN, u32 KS>
__device__ __forceinline__ void sum_group(const u32 (&v)[KS][BN / KS], const u32 (&mine)[32], u32 own, u32 g,
                                          u32 (&acc)[32]) {
#pragma unroll
    for (u32 s = 0; s < KS; ++s) {
#pragma unroll
        for (u32 c = 0; c < 8; ++c) {
            u32 x[4], a4[4];
#pragma unroll
            for (u32 i = 0; i < 4; ++i) {
                x[i] = s == own ? mine[4 * c + i] : v[s][32 * g + 4 * c + i];
                a4[i] = s == 0 ? x[i] : acc[4 * c + i];
            }
            if (s != 0) splitk::add_v4(a4, x);
#pragma unroll
            for (u32 i = 0; i < 4; ++i) acc[4 * c + i] = a4[i];
        }
    }
}

// Step 3 (all 32 lanes of each epilogue warp, after the cluster barrier / the xchg wait): the owned part, summed in split order, ->
// fp16 sub-tiles at SMEM smem (PC/32 x 2 KiB, private to the warp) -> TMA stores at (n0 + own * PC, m0 + 32 q, l).
template <u32 BN, u32 KS>
__device__ __forceinline__ void reduce_store_tma(u32 tmem_base, u32 d_col, float* ws, u32 tile, u32 own, u32 smem,
                                                 const TmaDesc* tmap, u32 n0, u32 m0, u32 l) {
    constexpr u32 PC = BN / KS;
    const u32 q = (threadIdx.x >> 5) & 3u;
    u32 v[KS][PC];
    load_peer_parts<BN, KS>(ws, tile, own, v);
#pragma unroll
    for (u32 g = 0; g < PC / 32u; ++g) {
        u32 mine[32], acc[32];
        load_cols32(tmem_base, d_col + own * PC + 32u * g, mine);
        sum_group<BN, KS>(v, mine, own, g, acc);
        tstore::regs_to_smem_sub(acc, smem + g * tstore::SUB_BYTES);
    }
    tstore::store_subtiles_tma(smem, PC / 32u, tmap, n0 + own * PC, m0 + 32u * q, l);
}

}  // namespace csplit
}  // namespace ptxlab
