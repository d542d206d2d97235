// Stages D3 / E1 / E2: the full K loop of one 128-row tile with an mbarrier pipeline and TMEM accumulation.
// CTA = (m-tile blockIdx.x, batch blockIdx.y), 128 threads (4 warps). Per K tile t (one 128-B swizzle row = 256 fp4
// = up to 4 MMA K-chunks of 64), stage s = t % STAGES, phase bit ph = (t / STAGES) & 1:
//   all threads: wait empty[s] (parity ph^1, only when t >= STAGES: the commit of tile t-STAGES freed the slot)
//                stage A (128 rows) and B (NB rows) as K-major SWIZZLE_128B images + the SF blocks (512 B per chunk)
//                -- documented stand-in for the Stage A TMA load (generic stores + fence.proxy.async) --
//                then mbarrier.arrive on full[s] (count 128)
//   elected thread of warp 0: wait full[s] (parity ph), tcgen05.cp SFA/SFB of each chunk into the slot's TMEM
//                columns, one tcgen05.mma per chunk (blocks/mma.cuh), tcgen05.commit -> empty[s];
//                after the last tile also tcgen05.commit -> done.
// Then every thread waits on done (parity 0) and runs the epilogue (blocks/epilogue.cuh):
//   DUMP_ACC: raw fp32 accumulator row -> acc[((l*M + m) * NB + n)]      (D3)
//   EPILOGUE: fp16 c[(l*M + m)*Nc + n] for n < NSTORE                     (E1 / E2; gpu-mode c (M, Nc, L))
//   BROKEN_EPI: the epilogue computes its GMEM index from the SW128 SMEM tile layout (the known bug class).
// TMEM (128 columns): D at 0 (NB columns), SFA of stage s chunk j at 32 + 16s + 4j, SFB at 64 + 16s + 4j.
#include "blocks/mma.cuh"
#include "blocks/epilogue.cuh"
#include "blocks/staging.cuh"

#ifndef NB
#define NB 16
#endif
#ifndef STAGES
#define STAGES 2
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

enum : unsigned { D_COL = 0u, SFA_COL = 32u, SFB_COL = 64u, TMEM_COLS = 128u };
enum : unsigned { A_BYTES = 128u * 128u, B_BYTES = 2048u, SF_BYTES = 2048u,
                  STAGE_BYTES = A_BYTES + B_BYTES + 2u * SF_BYTES };  // 22528 = 22 * 1024
static_assert(NB % 8 == 0 && NB <= 16, "B tile holds at most 16 rows");
static_assert(STAGES * 16 <= 32, "SF columns of the stages must fit 32 columns");

extern "C" __global__ void __launch_bounds__(128)
tile_pipeline(const unsigned char* a, const unsigned char* b, const unsigned char* sfa_p, const unsigned char* sfb_p,
              unsigned* acc, unsigned short* c, unsigned M, unsigned K, unsigned b_rows, unsigned Nc) {
  extern __shared__ __align__(1024) unsigned char dyn_smem[];
  __shared__ __align__(8) unsigned long long full_bar[STAGES], empty_bar[STAGES], done_bar;
  __shared__ unsigned tmem_slot;
  // hardware does not promise 1024-B alignment of dynamic SMEM: round up (the launch asks for +1024 bytes)
  unsigned char* smem = dyn_smem + ((1024u - (dpriv::smem_u32(dyn_smem) & 1023u)) & 1023u);
  const unsigned warp = threadIdx.x >> 5, mt = blockIdx.x, l = blockIdx.y;
  const unsigned kbytes = K / 2u, nchunks = K / 64u, ntiles = (nchunks + 3u) / 4u;
  const unsigned rest_m = (M + 127u) / 128u, rest_k = (K / 16u + 3u) / 4u;
  if (warp == 0) dpriv::tmem_alloc<TMEM_COLS>(dpriv::smem_u32(&tmem_slot));
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      dpriv::mbar_init(dpriv::smem_u32(&full_bar[s]), 128u);
      dpriv::mbar_init(dpriv::smem_u32(&empty_bar[s]), 1u);
    }
    dpriv::mbar_init(dpriv::smem_u32(&done_bar), 1u);
    dpriv::fence_mbar_init();
  }
  __syncthreads();
  epi::fence_after_thread_sync();
  const unsigned tmem = tmem_slot;
  const unsigned char* a_blk = a + ((unsigned long long)l * M + mt * 128u) * kbytes;
  const unsigned char* b_blk = b + (unsigned long long)l * b_rows * kbytes;
  const unsigned char* sfa_blk = sfa_p + ((unsigned long long)l * rest_m + mt) * rest_k * 512u;
  const unsigned char* sfb_blk = sfb_p + (unsigned long long)l * ((b_rows + 127u) / 128u) * rest_k * 512u;

  for (unsigned t = 0; t < ntiles; ++t) {
    const unsigned s = t % STAGES, ph = (t / STAGES) & 1u;
    const unsigned nch = (nchunks - 4u * t) < 4u ? (nchunks - 4u * t) : 4u;
    unsigned char* sa = smem + s * STAGE_BYTES;
    unsigned char* sb = sa + A_BYTES;
    unsigned char* ssfa = sb + B_BYTES;
    unsigned char* ssfb = ssfa + SF_BYTES;
    if (t >= STAGES) dpriv::mbar_wait(dpriv::smem_u32(&empty_bar[s]), ph ^ 1u);
    dpriv::stage_sw128(sa, a_blk + 128u * t, kbytes, 128u, nch * 32u);
    dpriv::stage_sw128(sb, b_blk + 128u * t, kbytes, NB, nch * 32u);
    dpriv::copy_linear(ssfa, sfa_blk + 2048u * t, nch * 512u);
    dpriv::copy_linear(ssfb, sfb_blk + 2048u * t, nch * 512u);
    dpriv::fence_proxy_async();
    dpriv::mbar_arrive(dpriv::smem_u32(&full_bar[s]));
    if (warp == 0 && mma::elect_one()) {
      dpriv::mbar_wait(dpriv::smem_u32(&full_bar[s]), ph);
      epi::fence_after_thread_sync();
      const unsigned sfa_c = tmem + SFA_COL + 16u * s, sfb_c = tmem + SFB_COL + 16u * s;
      for (unsigned j = 0; j < nch; ++j) {
        dpriv::sf_copy_512(sfa_c + 4u * j, dpriv::smem_u32(ssfa + 512u * j));
        dpriv::sf_copy_512(sfb_c + 4u * j, dpriv::smem_u32(ssfb + 512u * j));
      }
      mma::mma_tile_nvfp4(tmem + D_COL, dpriv::smem_u32(sa), dpriv::smem_u32(sb), mma::idesc_nvfp4(NB), sfa_c, sfb_c,
                          nch, t == 0);
      mma::commit_arrive(dpriv::smem_u32(&empty_bar[s]));
      if (t + 1u == ntiles) mma::commit_arrive(dpriv::smem_u32(&done_bar));
    }
    __syncwarp();
  }

  dpriv::mbar_wait(dpriv::smem_u32(&done_bar), 0u);
  const unsigned row = 32u * (warp & 3u) + (threadIdx.x & 31u), m = mt * 128u + row;
#if DUMP_ACC
  {
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
    unsigned r[NB];
    epi::load_accum<NB>(tmem, D_COL, r);
    for (int n = 0; n < NSTORE; ++n) {
      const unsigned kb = 2u * n;
      c[((unsigned long long)l * M + mt * 128u) * Nc + mma::sw128_offset(row, kb) / 2u] = epi::f32_to_f16_bits(r[n]);
    }
  }
#endif
  epi::fence_before_thread_sync();
  __syncthreads();
  if (warp == 0) dpriv::tmem_dealloc<TMEM_COLS>(tmem);
}
