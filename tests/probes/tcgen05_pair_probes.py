"""CUDA sources of the tcgen05 .cta_group::2 (CTA pair) probe kernels; compiled with ptxlab.compile(src, "sm_100a",
include_dirs=[KERNELS_DIR]) and launched with a cluster. Expected answers are computed by the tests."""
from __future__ import annotations

HEAD = """
#include "blocks/common.cuh"
#include "blocks/tmem.cuh"
#include "blocks/mbarrier.cuh"
#include "blocks/pair.cuh"
using namespace ptxlab;
"""


def cp_shift(shift: bool = False) -> str:
    """Each CTA stages its own 128 rows x 32 B (K-major SWIZZLE_NONE, LBO 128, SBO 256) from src[rank]; the even CTA
    issues tcgen05.cp.cta_group::2.128x256b (+ tcgen05.shift.cta_group::2.down when shift) and commits with
    .multicast::cluster to both CTAs; every warp reads its CTA's lanes 32w.. x 8 columns into out[rank][lane][col]."""
    return HEAD + f"#define SHIFT {int(shift)}\n" + """
extern "C" __global__ void __launch_bounds__(128) k(const unsigned* src, unsigned* out) {
  __shared__ __align__(1024) unsigned char s[128 * 32];
  __shared__ __align__(8) unsigned long long bar;
  __shared__ unsigned slot;
  const unsigned rank = pair::cluster_ctarank(), warp = warp_idx_sync(), lane = threadIdx.x & 31u;
  if (warp == 0) { pair::tmem_alloc(smem_u32(&slot), 32u); pair::tmem_relinquish(); }
  if (threadIdx.x == 0) { mbar_init(smem_u32(&bar), 1u); fence_mbarrier_init(); }
  for (unsigned i = threadIdx.x; i < 128u * 8u; i += 128u) {
    const unsigned r = i >> 3, kb = (i & 7u) * 4u;
    *reinterpret_cast<unsigned*>(s + (r & 7u) * 16u + (r >> 3) * 256u + (kb & 15u) + (kb >> 4) * 128u) =
        src[rank * 1024u + i];
  }
  fence_proxy_async_smem();
  tmem_fence_before_sync();
  pair::cluster_sync();
  tmem_fence_after_sync();
  unsigned base;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(base) : "r"(smem_u32(&slot)) : "memory");
  if (rank == 0 && threadIdx.x == 0) {
    // K-major SWIZZLE_NONE descriptor: start >> 4, LBO 128 >> 4 (bits 16..29), SBO 256 >> 4 (bits 32..45), bit 46
    const unsigned long long d = ((unsigned long long)(((256u >> 4) & 0x3FFFu) | (1u << 14)) << 32) |
                                 ((smem_u32(s) >> 4) & 0x3FFFu) | ((unsigned long long)(128u >> 4) << 16);
    asm volatile("tcgen05.cp.cta_group::2.128x256b [%0], %1;" :: "r"(base), "l"(d) : "memory");
#if SHIFT
    asm volatile("tcgen05.shift.cta_group::2.down [%0];" :: "r"(base) : "memory");
#endif
    pair::commit_multicast(smem_u32(&bar), (unsigned short)3u);
  }
  mbar_wait(smem_u32(&bar), 0u);
  tmem_fence_after_sync();
  unsigned r[8];
  tmem_ld_32x32b<8>(base + ((32u * warp) << 16), r);
  tmem_wait_ld();
  for (unsigned j = 0; j < 8u; ++j) out[(rank * 128u + threadIdx.x) * 8u + j] = r[j];
  tmem_fence_before_sync();
  pair::cluster_sync();
  if (warp == 0) pair::tmem_dealloc(base, 32u);
}
"""


def alloc_dealloc(odd_alloc: int = 64, odd_dealloc: int = 64, dealloc_before_barrier: bool = False) -> str:
    """Warp 0 of both CTAs: alloc.cta_group::2 (the odd CTA asks odd_alloc columns, the even 64); cluster barrier;
    dealloc.cta_group::2 (odd CTA passes odd_dealloc); out[rank] = the address. dealloc_before_barrier: the odd CTA
    deallocates BEFORE the cluster barrier, the even one after it (PTX Table 48: may hang)."""
    return HEAD + f"""
extern "C" __global__ void k(unsigned* out) {{
  __shared__ unsigned slot;
  const unsigned rank = pair::cluster_ctarank(), warp = warp_idx_sync();
  const unsigned na = (rank & 1u) ? {odd_alloc}u : 64u, nd = (rank & 1u) ? {odd_dealloc}u : 64u;
  if (warp == 0) pair::tmem_alloc(smem_u32(&slot), na);
  tmem_fence_before_sync();
  __syncthreads();
  tmem_fence_after_sync();
  const unsigned base = slot;
  if (threadIdx.x == 0) out[rank] = base;
  if ({int(dealloc_before_barrier)} && (rank & 1u) && warp == 0) pair::tmem_dealloc(base, nd);
  pair::cluster_sync();
  if (!({int(dealloc_before_barrier)} && (rank & 1u)) && warp == 0) pair::tmem_dealloc(base, nd);
}}
"""


def commit_only(mask: int = 3, odd_exits_first: bool = False) -> str:
    """Thread 0 of the even CTA commits (.cta_group::2, .multicast::cluster ctaMask=mask) with nothing in flight;
    every CTA waits on its own barrier when its bit is in mask. odd_exits_first: the odd CTA exits at once."""
    return HEAD + f"""
extern "C" __global__ void k(unsigned* out) {{
  __shared__ __align__(8) unsigned long long bar;
  const unsigned rank = pair::cluster_ctarank();
  if (threadIdx.x == 0) {{ mbar_init(smem_u32(&bar), 1u); fence_mbarrier_init(); }}
  __syncthreads();
  if ({int(odd_exits_first)}) asm volatile("{{ .reg .pred p; setp.ne.u32 p, %0, 0; @p exit; }}" :: "r"(rank & 1u));
  else pair::cluster_sync();
  if (rank == 0 && threadIdx.x == 0) pair::commit_multicast(smem_u32(&bar), (unsigned short){mask}u);
  if (({mask}u >> rank) & 1u) mbar_wait(smem_u32(&bar), 0u);
  if (threadIdx.x == 0) out[rank] = 1u;
  if (!{int(odd_exits_first)}) pair::cluster_sync();
}}
"""


def cute_partition_shapes() -> str:
    """CuTe computes the per-CTA operand shapes of its 2-SM MMA atoms (partition_shape_A/B/C): out = [A rows, B rows,
    C rows, C cols] of SM100_MMA_F16BF16_2x1SM_SS 256x256 and [B rows, B elements over K = 256] of
    SM100_MMA_MXF4_2x1SM_SS 256x128
    (block16). Compiled with tests/cutlass_tutorial/build.py's include path and options."""
    return """
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
using namespace cute;
using Mma16 = decltype(make_tiled_mma(SM100_MMA_F16BF16_2x1SM_SS<cutlass::half_t, cutlass::half_t, float, 256, 256,
                                                                 UMMA::Major::K, UMMA::Major::K>{}));
using MmaNv = decltype(make_tiled_mma(SM100_MMA_MXF4_2x1SM_SS<cutlass::float_e2m1_t, cutlass::float_e2m1_t, float,
                                                              cutlass::float_ue4m3_t, 256, 128, 16,
                                                              UMMA::Major::K, UMMA::Major::K>{}));
extern "C" __global__ void k(int* out) {
  auto sa = partition_shape_A(Mma16{}, make_shape(Int<256>{}, Int<64>{}));
  auto sb = partition_shape_B(Mma16{}, make_shape(Int<256>{}, Int<64>{}));
  auto sc = partition_shape_C(Mma16{}, make_shape(Int<256>{}, Int<256>{}));
  out[0] = size<0,0>(sa); out[1] = size<0,0>(sb); out[2] = size<0,0>(sc); out[3] = size<0,1>(sc);
  auto nb = partition_shape_B(MmaNv{}, make_shape(Int<128>{}, Int<256>{}));
  out[4] = size<0,0>(nb); out[5] = size(nb);
}
"""


def cute_accumulator_addresses(m_mma: int = 128, n: int = 64) -> str:
    """CuTe's TMEM address of each accumulator element (m, j) of one CTA's half of SM100_MMA_F16BF16_2x1SM_SS
    M x N (its tmem_frg_2sm fragment): out[0..1] = per-CTA (rows, cols), out[2 + m*N + j] = lane << 16 | col."""
    rows = m_mma // 2
    return f"""
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
using namespace cute;
using Mma = decltype(make_tiled_mma(SM100_MMA_F16BF16_2x1SM_SS<cutlass::half_t, cutlass::half_t, float, {m_mma}, {n},
                                                               UMMA::Major::K, UMMA::Major::K>{{}}));
extern "C" __global__ void k(unsigned* out) {{
  auto shape_c = partition_shape_C(Mma{{}}, make_shape(Int<{m_mma}>{{}}, Int<{n}>{{}}));
  auto acc = Mma::make_fragment_C(shape_c);
  out[0] = size<0,0>(shape_c); out[1] = size<0,1>(shape_c);
  for (int m = 0; m < {rows}; ++m)
    for (int j = 0; j < {n}; ++j)
      out[2 + m * {n} + j] = raw_pointer_cast(acc.data() + acc.layout()(make_coord(make_coord(m, j), 0, 0)));
}}
"""
