// stages/A_tma/a_load.cu -- Stage A kernel: NVFP4 operand tiles (A1) and scale-factor blocks (A2) through TMA and a
// multi-stage mbarrier pipeline; every consumed stage buffer is copied out to global memory for a byte-exact check.
//
// Layout decisions (see stages/A_tma/README.md and ptx_docs/stage_A.md):
//  * A / B: K-major, UINT8 view of the packed fp4 bytes (K/2 bytes per row). 3-D tensor map
//    {K/2 bytes, rows, L}, box {128 B (= 256 fp4 = 4 UMMA K-steps of 64), BM or BN rows, 1}, SWIZZLE_128B.
//    One stage = one such box per operand; every region starts 1024-B aligned (the SW128 pattern repeats every 1024 B,
//    PTX ISA 5.5.7), so row r of a tile sits in 128-B line r and its 16-B chunk c lands at chunk c ^ (r % 8).
//    The UINT8 view (not 16U4_ALIGN8B) is used on every arch: the H100 driver rejects packed 16U4 tensor maps.
//  * SFA / SFB: the gpu-mode permuted scale tensor as it is in memory, (L, rest_m, rest_k, 32, 4, 4) bytes, viewed as
//    a 2-D UINT8 map {128 B, total/128 rows}, box {128, 16} = 4 x 512-B blocks = the SFs of 128 rows x 256 K,
//    SWIZZLE_NONE (tcgen05.cp reads them with a no-swizzle descriptor, ptx_facts section 6).
//
// Roles: warps 0-3 (128 threads) consume, warp 4 produces (one elected lane issues the TMAs).
// Pipeline: full[s] (count 1: the producer's arrive.expect_tx, plus the TMA complete_tx bytes) and empty[s]
// (count 128: every consumer thread arrives after copying the stage out), DeepGEMM-style stage/phase bookkeeping.
#include "blocks/common.cuh"
#include "blocks/mbarrier.cuh"
#include "blocks/tma.cuh"

using namespace ptxlab;

#ifndef A_STAGES
#define A_STAGES 3          // pipeline depth (ring of stage buffers)
#endif
#ifndef A_BN
#define A_BN 16             // rows of B per tile (GEMV: 16, only row 0 matters; GEMM: 128)
#endif
#ifndef A_LOAD_AB
#define A_LOAD_AB 1         // load the A and B operand boxes
#endif
#ifndef A_LOAD_SF
#define A_LOAD_SF 0         // load the SFA and SFB 512-B blocks
#endif

constexpr u32 BM = 128;                                  // A rows per tile (UMMA M)
constexpr u32 BK_BYTES = 128;                            // K bytes per stage: 256 fp4
constexpr u32 A_BYTES = A_LOAD_AB ? BM * BK_BYTES : 0;   // 16 KiB
constexpr u32 B_BYTES = A_LOAD_AB ? A_BN * BK_BYTES : 0;
constexpr u32 SF_BYTES = A_LOAD_SF ? 4u * 512u : 0;      // 4 SF k-blocks of 64 K, 128 rows each
constexpr u32 STAGE_BYTES = A_BYTES + B_BYTES + 2 * SF_BYTES;
constexpr u32 NUM_CONSUMERS = 128;
constexpr u32 TRACE_WORDS = 4;                           // per consumed stage: stage, phase, smem addr, kb

static_assert(A_BN % 8 == 0 && A_BN <= 256, "B box rows: a multiple of the 8-row SW128 atom, at most 256 (TMA box dim)");
static_assert(STAGE_BYTES % 1024 == 0, "stage buffers must keep 1024-B alignment for SWIZZLE_128B (PTX ISA 5.5.7)");
static_assert(STAGE_BYTES > 0, "load at least one of AB / SF");

// Wait on a barrier phase. With -DPTXLAB_WAIT_PROBES=n (hardware runs) the wait gives up after n probes and the first
// thread to give up records where in diag[0..5] (flag, tile, kb, role, stage, parity) instead of hanging the GPU.
__device__ __forceinline__ bool wait_or_report(u32 bar, u32 parity, u32* diag, u32 tile, u32 kb, u32 role, u32 stage) {
#ifdef PTXLAB_WAIT_PROBES
    if (mbar_wait_bounded(bar, parity, PTXLAB_WAIT_PROBES)) return true;
    if (atomicCAS(diag, 0u, 1u) == 0u) {
        diag[1] = tile; diag[2] = kb; diag[3] = role; diag[4] = stage; diag[5] = parity;
    }
    return false;
#else
    (void)diag; (void)tile; (void)kb; (void)role; (void)stage;
    mbar_wait(bar, parity);
    return true;
#endif
}

extern "C" __global__ void __launch_bounds__(160, 1) stage_a_load(
    const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b,
    const __grid_constant__ TmaDesc tm_sfa, const __grid_constant__ TmaDesc tm_sfb,
    unsigned char* __restrict__ dump, u32* __restrict__ trace, u32* __restrict__ diag,
    int num_kb, int sf_rest_n, u32 tx_bytes)
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    // Round the dynamic SMEM base up to 1024 B (the host allocates 1024 B of slack): hardware does not promise
    // the alignment of `extern __shared__`.
    const u32 raw = smem_u32(smem_raw);
    const u32 pad = ((raw + 1023u) & ~1023u) - raw;
    unsigned char* smem = smem_raw + pad;
    const u32 base = raw + pad;
    const u32 bars = base + A_STAGES * STAGE_BYTES;      // full[s] at bars + 8 s, empty[s] at bars + 8 (S + s)

    const u32 m_tile = blockIdx.x, n_tile = blockIdx.y, l = blockIdx.z;
    const u32 tile = (l * gridDim.y + n_tile) * gridDim.x + m_tile;
    const u32 warp = warp_idx_sync();

    // Poison the stage buffers (a box the TMA does not write shows up as 0xA5 in the dump), then order these
    // generic-proxy stores before the async-proxy TMA writes [PTX ISA 9.7.13.4 fence.proxy.async].
    for (u32 i = threadIdx.x; i < A_STAGES * STAGE_BYTES / 16; i += blockDim.x)
        reinterpret_cast<U32x4*>(smem)[i] = U32x4{0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u};
    fence_proxy_async_smem();
    if (threadIdx.x == 0) {
        for (u32 s = 0; s < A_STAGES; ++s) {
            mbar_init(bars + 8 * s, 1);                              // full: producer arrive.expect_tx + tx bytes
            mbar_init(bars + 8 * (A_STAGES + s), NUM_CONSUMERS);     // empty: every consumer thread
        }
        fence_mbarrier_init();
    }
    __syncthreads();

    if (warp == 4) {
        // ---------------- producer: one elected lane issues every TMA
        if (elect_one_sync()) {
            if (A_LOAD_AB) { tma_prefetch_desc(&tm_a); tma_prefetch_desc(&tm_b); }
            if (A_LOAD_SF) { tma_prefetch_desc(&tm_sfa); tma_prefetch_desc(&tm_sfb); }
            const int rest_m = static_cast<int>(gridDim.x), rest_k = num_kb * 4;
            const int n_blk = static_cast<int>(n_tile * A_BN / 128u);
            PipeState<A_STAGES> ps;
            for (int kb = 0; kb < num_kb; ++kb, ps.advance()) {
                const u32 full = bars + 8 * ps.stage, empty = bars + 8 * (A_STAGES + ps.stage);
                if (!wait_or_report(empty, ps.phase ^ 1u, diag, tile, kb, 1, ps.stage)) break;
                mbar_arrive_expect_tx(full, tx_bytes);
                const u32 dst = base + ps.stage * STAGE_BYTES;
                if (A_LOAD_AB) {
                    tma_load_3d(dst, &tm_a, full, kb * (int)BK_BYTES, (int)(m_tile * BM), (int)l);
                    tma_load_3d(dst + A_BYTES, &tm_b, full, kb * (int)BK_BYTES, (int)(n_tile * A_BN), (int)l);
                }
                if (A_LOAD_SF) {
                    // 128-B rows of the permuted tensor: block (l, m_blk, k_blk) starts at row 4*((l*rest_m+m_blk)*rest_k+k_blk)
                    const int ra = 4 * (((int)l * rest_m + (int)m_tile) * rest_k + kb * 4);
                    const int rb = 4 * (((int)l * sf_rest_n + n_blk) * rest_k + kb * 4);
                    tma_load_2d(dst + A_BYTES + B_BYTES, &tm_sfa, full, 0, ra);
                    tma_load_2d(dst + A_BYTES + B_BYTES + SF_BYTES, &tm_sfb, full, 0, rb);
                }
            }
        }
    } else {
        // ---------------- consumers: copy each landed stage out, then release it
        const u32 t = threadIdx.x;
        PipeState<A_STAGES> ps;
        for (int kb = 0; kb < num_kb; ++kb, ps.advance()) {
            const u32 full = bars + 8 * ps.stage, empty = bars + 8 * (A_STAGES + ps.stage);
            if (!wait_or_report(full, ps.phase, diag, tile, kb, 2, ps.stage)) break;
            const U32x4* src = reinterpret_cast<const U32x4*>(smem + ps.stage * STAGE_BYTES);
            const unsigned long long slot = static_cast<unsigned long long>(tile) * num_kb + kb;
            U32x4* dst = reinterpret_cast<U32x4*>(dump + slot * STAGE_BYTES);
            for (u32 i = t; i < STAGE_BYTES / 16; i += NUM_CONSUMERS) dst[i] = src[i];
            if (t == 0) {
                trace[slot * TRACE_WORDS + 0] = ps.stage;
                trace[slot * TRACE_WORDS + 1] = ps.phase;
                trace[slot * TRACE_WORDS + 2] = base + ps.stage * STAGE_BYTES;
                trace[slot * TRACE_WORDS + 3] = kb;
            }
            mbar_arrive(empty);
        }
    }
}
