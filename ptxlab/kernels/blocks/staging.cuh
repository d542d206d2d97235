// ptxlab/kernels/blocks/staging.cuh -- glue for the stage D2 kernel (stages/D_mma/d2_chunks.cu) over the shared building
// blocks (blocks/tmem.cuh, blocks/scales.cuh, blocks/mbarrier.cuh from Stages B/C/A), plus the SMEM staging loader
// that D2 uses instead of TMA (documented in ptx_docs/stages_DE.md). The fused GEMV (nvfp4_gemv_tcgen05.cu, stages
// D3/E1/E2) no longer includes this file: it loads its operands with blocks/tma.cuh.
#pragma once
#include "blocks/common.cuh"
#include "blocks/mbarrier.cuh"
#include "blocks/scales.cuh"
#include "blocks/tmem.cuh"

namespace dpriv {

using ptxlab::smem_u32;
typedef ptxlab::U32x4 u128;

// ---- TMEM (one whole warp): alloc + relinquish, dealloc
template <int NCOLS> __device__ __forceinline__ void tmem_alloc(unsigned slot_smem) {
  ptxlab::tmem_alloc(slot_smem, NCOLS);
  ptxlab::tmem_relinquish();
}
template <int NCOLS> __device__ __forceinline__ void tmem_dealloc(unsigned base) { ptxlab::tmem_dealloc(base, NCOLS); }

// ---- one 512-B gpu-mode SF block at smem -> TMEM (4 columns from taddr, all 4 lane quarters) -- blocks/scales.cuh
__device__ __forceinline__ void sf_copy_512(unsigned taddr, unsigned smem_addr) {
  ptxlab::sf_copy_32x128b_warpx4(taddr, ptxlab::sf_block_desc(smem_addr));
}

// ---- mbarrier -- blocks/mbarrier.cuh
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) { ptxlab::mbar_init(bar, count); }
__device__ __forceinline__ void fence_mbar_init() { ptxlab::fence_mbarrier_init(); }
__device__ __forceinline__ void mbar_arrive(unsigned bar) { ptxlab::mbar_arrive(bar); }
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) { ptxlab::mbar_wait(bar, parity); }
__device__ __forceinline__ void fence_proxy_async() { ptxlab::fence_proxy_async_smem(); }

// ---- SMEM staging (D2's stand-in for the Stage A TMA load): rows x row_bytes (multiple of 16, <= 128) of a K-major byte
// matrix (row stride src_stride) -> K-major SWIZZLE_128B image at dst (1024-B aligned), the same bytes TMA
// SWIZZLE_128B writes: 16-B chunk c of row r at (r/8)*1024 + (r%8)*128 + ((c ^ r%8) * 16).
__device__ __forceinline__ void stage_sw128(unsigned char* dst, const unsigned char* src, unsigned long long src_stride,
                                            unsigned rows, unsigned row_bytes) {
  const unsigned cpr = row_bytes >> 4;
  for (unsigned i = threadIdx.x; i < rows * cpr; i += blockDim.x) {
    const unsigned r = i / cpr, c = i % cpr;
    const u128 v = *reinterpret_cast<const u128*>(src + r * src_stride + 16u * c);
    *reinterpret_cast<u128*>(dst + (r >> 3) * 1024u + (r & 7u) * 128u + (((c ^ r) & 7u) << 4)) = v;
  }
}
__device__ __forceinline__ void copy_linear(unsigned char* dst, const unsigned char* src, unsigned nbytes) {
  for (unsigned i = threadIdx.x; i < (nbytes >> 4); i += blockDim.x)
    reinterpret_cast<u128*>(dst)[i] = reinterpret_cast<const u128*>(src)[i];
}

}  // namespace dpriv
