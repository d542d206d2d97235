// stages/D_mma/stage_helpers.cuh -- PRIVATE minimal helpers of stages D/E (TMEM alloc, SF tcgen05.cp, mbarrier,
// SMEM staging). They stand in for blocks/tmem.cuh, blocks/scales.cuh, blocks/mbarrier.cuh (Stages A-C, other
// owners) until those land; then the stage kernels switch to them. Plain inline PTX, sm_100a.
#pragma once

namespace dpriv {

struct __align__(16) u128 { unsigned x, y, z, w; };

__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// ---- TMEM (warp-collective, one warp)
template <int NCOLS> __device__ __forceinline__ void tmem_alloc(unsigned slot_smem) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" :: "r"(slot_smem), "n"(NCOLS)
               : "memory");
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}
template <int NCOLS> __device__ __forceinline__ void tmem_dealloc(unsigned base) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" :: "r"(base), "n"(NCOLS) : "memory");
}

// ---- scale factors: one 512-B gpu-mode blocked SF block (128 rows x 4 SFs) at smem -> TMEM lanes r%32 of every
// quarter, 4 columns from taddr (tcgen05.cp.32x128b.warpx4, source descriptor SWIZZLE_NONE, SBO 128, LBO 0).
__device__ __forceinline__ void sf_copy_512(unsigned taddr, unsigned smem_addr) {
  const unsigned lo = (smem_addr & 0x3FFFFu) >> 4, hi = (128u >> 4) | (1u << 14);
  asm volatile("{\n .reg .b64 d;\n mov.b64 d, {%1, %2};\n tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], d;\n}"
               :: "r"(taddr), "r"(lo), "r"(hi) : "memory");
}

// ---- mbarrier
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}" :: "r"(bar) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(unsigned bar, unsigned parity) {
  unsigned ok;
  asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
               : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
  return ok != 0u;
}
// C++ spin loop (no asm labels: several inlined waits in one kernel must not share a PTX label)
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}
// generic-proxy SMEM stores -> visible to the async proxy (tcgen05.mma / cp read SMEM through it)
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- SMEM staging (documented stand-in for the Stage A TMA load): rows x row_bytes (multiple of 16, <= 128) of a
// K-major byte matrix (row stride src_stride) -> K-major SWIZZLE_128B image at dst (1024-B aligned), the same bytes
// TMA SWIZZLE_128B would write: chunk c of row r at (r/8)*1024 + (r%8)*128 + ((c ^ r%8) * 16).
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
