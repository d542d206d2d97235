// blocks/epilogue.cuh -- accumulator epilogue: TMEM -> registers -> fp16 -> GMEM (sm_100a, M = 128, cta_group::1).
//
// Call AFTER the mbarrier wait on the commit that covers the last MMA (ptx_facts §7 canonical pattern):
//     mbarrier wait(parity) -> tcgen05.fence::after_thread_sync -> tcgen05.ld -> tcgen05.wait::ld -> use registers.
// Every warp w of the (4-warp multiple) CTA reads its lane quarter 32*(w%4) .. +31 with tcgen05.ld.32x32b.xN:
// thread t of warp w holds accumulator row 32*(w%4)+t, register j = column n0 + j (D layout for M=128: lane m,
// column d_col + n; ptx_facts §2). Output: gpu-mode c, shape (M, N, L) fp16 with memory order (L, M, N):
//     c[m, n, l] at element  (l*M + m)*Nc + n.
#pragma once

namespace ptxlab {
namespace epi {

__device__ __forceinline__ void fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}
__device__ __forceinline__ void fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}
__device__ __forceinline__ void wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }

// TMEM address of this warp's lane quarter at column col (base = address from tcgen05.alloc).
__device__ __forceinline__ unsigned quarter_taddr(unsigned tmem_base, unsigned col) {
  const unsigned q = (threadIdx.x >> 5) & 3u;
  return tmem_base + ((32u * q) << 16) + col;
}

// tcgen05.ld.sync.aligned.32x32b.x{N}: r[j] <- (lane L0 + laneid, column C0 + j). Registers are NOT valid until
// wait_ld(). Specialized for N = 1, 2, 4, 8, 16.
template <int N> __device__ __forceinline__ void ld_32x32b(unsigned taddr, unsigned (&r)[N]);
template <> __device__ __forceinline__ void ld_32x32b<1>(unsigned taddr, unsigned (&r)[1]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];" : "=r"(r[0]) : "r"(taddr) : "memory");
}
template <> __device__ __forceinline__ void ld_32x32b<2>(unsigned taddr, unsigned (&r)[2]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(taddr)
               : "memory");
}
template <> __device__ __forceinline__ void ld_32x32b<4>(unsigned taddr, unsigned (&r)[4]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(taddr) : "memory");
}
template <> __device__ __forceinline__ void ld_32x32b<8>(unsigned taddr, unsigned (&r)[8]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
               : "r"(taddr) : "memory");
}
template <> __device__ __forceinline__ void ld_32x32b<16>(unsigned taddr, unsigned (&r)[16]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "
               "%14, %15}, [%16];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
                 "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]),
                 "=r"(r[15])
               : "r"(taddr) : "memory");
}

// Load this thread's accumulator row (N fp32 words from column d_col) and wait for it.
template <int N> __device__ __forceinline__ void load_accum(unsigned tmem_base, unsigned d_col, unsigned (&r)[N]) {
  fence_after_thread_sync();
  ld_32x32b<N>(quarter_taddr(tmem_base, d_col), r);
  wait_ld();
}

// fp32 bits -> fp16 bits, round to nearest even (cvt.rn.f16.f32).
__device__ __forceinline__ unsigned short f32_to_f16_bits(unsigned f32_bits) {
  unsigned short h;
  asm("{\n .reg .f32 f;\n mov.b32 f, %1;\n cvt.rn.f16.f32 %0, f;\n}" : "=h"(h) : "r"(f32_bits));
  return h;
}

// Four fp32 words -> four fp16 (RNE) packed little-endian into 8 bytes (word 0 at the lowest address).
__device__ __forceinline__ unsigned long long f16x4_bits(const unsigned (&v)[4]) {
  return (unsigned long long)f32_to_f16_bits(v[0]) | ((unsigned long long)f32_to_f16_bits(v[1]) << 16) |
         ((unsigned long long)f32_to_f16_bits(v[2]) << 32) | ((unsigned long long)f32_to_f16_bits(v[3]) << 48);
}

// The whole epilogue for one 128-row tile: row m = m0 + 32*(warp%4) + lane, columns 0..n_store-1 (n_store <= N) of
// the accumulator at d_col -> c (gpu-mode (M, Nc, L) fp16, memory order (L, M, Nc)) for batch l.
// Rows >= M are not stored. Must be executed by all threads of 4 consecutive warps (warp-collective tcgen05.ld).
template <int N>
__device__ __forceinline__ void store_tile_f16(unsigned tmem_base, unsigned d_col, unsigned short* c, unsigned m0,
                                               unsigned M, unsigned Nc, unsigned n_store, unsigned l) {
  unsigned r[N];
  load_accum<N>(tmem_base, d_col, r);
  const unsigned m = m0 + 32u * ((threadIdx.x >> 5) & 3u) + (threadIdx.x & 31u);
  if (m < M) {
    unsigned short* row = c + ((unsigned long long)l * M + m) * Nc;
#pragma unroll
    for (int j = 0; j < N; ++j)
      if ((unsigned)j < n_store) row[j] = f32_to_f16_bits(r[j]);
  }
}

}  // namespace epi
}  // namespace ptxlab
