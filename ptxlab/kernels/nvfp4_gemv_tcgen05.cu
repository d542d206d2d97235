// ptxlab/kernels/nvfp4_gemv_tcgen05.cu -- fused NVFP4 block-scaled GEMV for sm_100a (TMA + tcgen05 + TMEM).
// Stages D3 / E1 / E2 verify this file (stages/D_mma/tile_pipeline.cu only #includes it); host launchers:
// ptxlab/production/gemv_tcgen05.py (make_tensor_maps / launch_tile_pipeline) and stages/D_mma/host.run_pipeline.
//
// Built only from the graduated blocks in blocks/*.cuh (common, mbarrier, tma, tmem, scales, mma, epilogue) with the
// same producer / MMA / TMA-box scheme as the fused GEMM (nvfp4_gemm_tcgen05.cu); no PTX of its own.
//
// CTA = (m-tile blockIdx.x, batch blockIdx.y), 128 threads (4 warps). K tile t = one 128-B swizzle row = 256 fp4 =
// up to 4 MMA K-chunks of 64 (the last tile may hold fewer: K % 64 == 0 is all that is required). STAGES-deep ring
// (blocks/mbarrier.cuh PipeState): full[s] count 1 (+ tx bytes), empty[s] count 1 (tcgen05.commit).
//   warp 0, elected lane  producer: wait empty[s] (parity phase^1: a fresh barrier passes), arrive.expect_tx(full[s],
//                         TX_BYTES), then 4 TMA boxes onto full[s] (blocks/tma.cuh):
//                           A   3-D UINT8 map {K/2, M, L},      box {128 B, 128 rows, 1}, SWIZZLE_128B
//                           B   3-D UINT8 map {K/2, b_rows, L}, box {128 B, NB rows, 1},  SWIZZLE_128B
//                           SFA 2-D UINT8 map {128, bytes/128} over the permuted SF memory, box {128, 16} = 4 x 512-B
//                               SF blocks; SFB the same over sfb (rest_n = ceil(b_rows / 128) blocks per K column)
//                         Bytes past K/2 (partial last tile) are OOB-filled with zeros and still count towards
//                         complete_tx (the full box); SF blocks past the tile's chunks are loaded but never used.
//   warp 1, elected lane  MMA: wait full[s] (parity phase), tcgen05.cp SFA/SFB of each chunk into the slot's TMEM
//                         columns, one tcgen05.mma per chunk (blocks/mma.cuh), tcgen05.commit -> empty[s];
//                         after the last tile also tcgen05.commit -> done. Warp 1 allocates / frees TMEM.
// Then every thread waits on done (parity 0) and runs the epilogue (blocks/epilogue.cuh) on its lane quarter:
//   DUMP_ACC: raw fp32 accumulator row -> acc[((l*M + m) * NB + n)]      (D3)
//   EPILOGUE: fp16 c[(l*M + m)*Nc + n] for n < NSTORE                     (E1 / E2; gpu-mode c (M, Nc, L))
//   BROKEN_EPI: the epilogue computes its GMEM index from the SW128 SMEM tile layout (the known bug class).
// SMEM stage s (1024-B aligned): A 16384 B | B 2048 B (NB rows used) | SFA 2048 B | SFB 2048 B = 22528 B.
// TMEM: D at 0 (NB columns), SFA of stage s chunk j at 32 + 16s + 4j, SFB at 32 + 16 STAGES + 16s + 4j (per-slot SF
// columns: a slot's columns are rewritten only after the producer saw empty[s] for the MMAs that read them).
// Requirements (host checks them): M % 128 == 0, K % 64 == 0, b_rows >= NB.
#include "blocks/common.cuh"
#include "blocks/mbarrier.cuh"
#include "blocks/tma.cuh"
#include "blocks/tmem.cuh"
#include "blocks/scales.cuh"
#include "blocks/mma.cuh"
#include "blocks/epilogue.cuh"

#ifndef NB
#define NB 16
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef DUMP_ACC
#define DUMP_ACC 1
#endif
#ifndef EPILOGUE
#define EPILOGUE 0
#endif
#ifndef NSTORE
#define NSTORE 1
#endif
#ifndef BROKEN_EPI
#define BROKEN_EPI 0
#endif
using namespace ptxlab;

namespace gemv {

enum : u32 { A_BYTES = 128u * 128u, B_BYTES = 2048u, SF_BYTES = 2048u,
             STAGE_BYTES = A_BYTES + B_BYTES + 2u * SF_BYTES,     // 22528 = 22 * 1024
             TX_BYTES = A_BYTES + NB * 128u + 2u * SF_BYTES };     // what the 4 boxes of a stage deliver
enum : u32 { D_COL = 0u, SFA_COL = 32u, SFB_COL = 32u + 16u * STAGES, TMEM_USED = 32u + 32u * STAGES,
             TMEM_COLS = TMEM_USED <= 32u ? 32u : TMEM_USED <= 64u ? 64u : TMEM_USED <= 128u ? 128u
                       : TMEM_USED <= 256u ? 256u : 512u };
enum : u32 { PRODUCER_WARP = 0u, MMA_WARP = 1u };
static_assert(NB % 8 == 0 && NB <= 16, "B tile holds at most 16 rows");
static_assert(STAGES >= 2 && TMEM_USED <= 512u, "2..15 stages (TMEM plan)");
static_assert(STAGE_BYTES % 1024u == 0, "stages must stay 1024-B aligned for SWIZZLE_128B");

// Barrier wait: blocks/mbarrier.cuh mbar_wait_or_trap (unbounded, or trapping with -DPTXLAB_WAIT_PROBES=n).
__device__ __forceinline__ void wait(u32 bar, u32 parity) { mbar_wait_or_trap(bar, parity); }

}  // namespace gemv

extern "C" __global__ void __launch_bounds__(128)
tile_pipeline(const __grid_constant__ TmaDesc tm_a, const __grid_constant__ TmaDesc tm_b,
              const __grid_constant__ TmaDesc tm_sfa, const __grid_constant__ TmaDesc tm_sfb,
              unsigned* acc, unsigned short* c, unsigned M, unsigned K, unsigned b_rows, unsigned Nc) {
  using namespace gemv;
  extern __shared__ __align__(1024) unsigned char dyn_smem[];
  __shared__ __align__(8) unsigned long long full_bar[STAGES], empty_bar[STAGES], done_bar;
  __shared__ u32 tmem_slot;
  // hardware does not promise 1024-B alignment of dynamic SMEM: round up (the launch asks for +1024 bytes)
  const u32 base = (smem_u32(dyn_smem) + 1023u) & ~1023u;
  const u32 warp = warp_idx_sync(), mt = blockIdx.x, l = blockIdx.y;
  const u32 nchunks = K / 64u, ntiles = (nchunks + 3u) / 4u;
  const u32 rest_m = M / 128u, rest_k = nchunks, rest_n = (b_rows + 127u) / 128u;  // 512-B SF blocks

  if (threadIdx.x == 0) {
    for (u32 s = 0; s < STAGES; ++s) {
      mbar_init(smem_u32(&full_bar[s]), 1u);
      mbar_init(smem_u32(&empty_bar[s]), 1u);
    }
    mbar_init(smem_u32(&done_bar), 1u);
    fence_mbarrier_init();
  }
  if (warp == PRODUCER_WARP && elect_one_sync()) {
    tma_prefetch_desc(&tm_a); tma_prefetch_desc(&tm_b); tma_prefetch_desc(&tm_sfa); tma_prefetch_desc(&tm_sfb);
  }
  __syncwarp();
  // the MMA warp allocates (and relinquishes); tmem_alloc_cta's __syncthreads also publishes the barrier inits
  const u32 tmem = tmem_alloc_cta(smem_u32(&tmem_slot), TMEM_COLS, MMA_WARP, true);

  if (warp == PRODUCER_WARP) {
    // ---------------------------------------------------------------- producer (TMA)
    if (elect_one_sync()) {
      PipeState<STAGES> ps;
      for (u32 t = 0; t < ntiles; ++t, ps.advance()) {
        const u32 full = smem_u32(&full_bar[ps.stage]);
        wait(smem_u32(&empty_bar[ps.stage]), ps.phase ^ 1u);
        mbar_arrive_expect_tx(full, TX_BYTES);
        const u32 sa = base + ps.stage * STAGE_BYTES;
        tma_load_3d(sa, &tm_a, full, (int)(128u * t), (int)(128u * mt), (int)l);
        tma_load_3d(sa + A_BYTES, &tm_b, full, (int)(128u * t), 0, (int)l);
        // SF block (l, mn_blk, k_blk) starts at 128-B row 4 * ((l * rest_mn + mn_blk) * rest_k + k_blk)
        tma_load_2d(sa + A_BYTES + B_BYTES, &tm_sfa, full, 0, (int)(4u * ((l * rest_m + mt) * rest_k + 4u * t)));
        tma_load_2d(sa + A_BYTES + B_BYTES + SF_BYTES, &tm_sfb, full, 0,
                    (int)(4u * (l * rest_n * rest_k + 4u * t)));
      }
    }
    __syncwarp();
  } else if (warp == MMA_WARP) {
    // ---------------------------------------------------------------- MMA issuer
    if (elect_one_sync()) {
      PipeState<STAGES> ps;
      for (u32 t = 0; t < ntiles; ++t, ps.advance()) {
        const u32 s = ps.stage;
        const u32 nch = (nchunks - 4u * t) < 4u ? (nchunks - 4u * t) : 4u;
        wait(smem_u32(&full_bar[s]), ps.phase);
        tmem_fence_after_sync();
        const u32 sa = base + s * STAGE_BYTES, sb = sa + A_BYTES;
        const u32 ssfa = sb + B_BYTES, ssfb = ssfa + SF_BYTES;
        const u32 sfa_c = tmem + SFA_COL + 16u * s, sfb_c = tmem + SFB_COL + 16u * s;
        for (u32 j = 0; j < nch; ++j) {
          sf_copy_32x128b_warpx4(sfa_c + 4u * j, sf_block_desc(ssfa + 512u * j));
          sf_copy_32x128b_warpx4(sfb_c + 4u * j, sf_block_desc(ssfb + 512u * j));
        }
        mma::mma_tile_nvfp4(tmem + D_COL, sa, sb, mma::idesc_nvfp4(NB), sfa_c, sfb_c, nch, t == 0);
        mma::commit_arrive(smem_u32(&empty_bar[s]));     // slot s free once these MMAs (and cps) completed
      }
      mma::commit_arrive(smem_u32(&done_bar));           // accumulator complete
    }
    __syncwarp();
  }

  // ------------------------------------------------------------------ epilogue (all 4 warps, lane quarter = warp)
  wait(smem_u32(&done_bar), 0u);
#if DUMP_ACC
  {
    const u32 m = mt * 128u + 32u * (warp & 3u) + (threadIdx.x & 31u);
    unsigned r[NB];
    epi::load_accum<NB>(tmem, D_COL, r);
    if (m < M)
      for (int n = 0; n < NB; ++n) acc[((unsigned long long)l * M + m) * NB + n] = r[n];
  }
#endif
#if EPILOGUE && !BROKEN_EPI
  epi::store_tile_f16<NB>(tmem, D_COL, c, mt * 128u, M, Nc, NSTORE, l);
#elif EPILOGUE && BROKEN_EPI
  {  // BUG under test: output index computed as if c were the K-major SW128 SMEM tile (bytes -> fp16 elements)
    const u32 row = 32u * (warp & 3u) + (threadIdx.x & 31u);
    unsigned r[NB];
    epi::load_accum<NB>(tmem, D_COL, r);
    for (int n = 0; n < NSTORE; ++n) {
      const unsigned kb = 2u * n;
      c[((unsigned long long)l * M + mt * 128u) * Nc + mma::sw128_offset(row, kb) / 2u] = epi::f32_to_f16_bits(r[n]);
    }
  }
#endif
  tmem_dealloc_cta(tmem, TMEM_COLS, MMA_WARP);
}
