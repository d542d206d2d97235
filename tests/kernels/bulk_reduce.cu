// cp.reduce.async.bulk (PTX ISA 9.7.9.25.4.2) and cp.reduce.async.bulk.tensor (9.7.9.27.1.3) corpus kernels.
// red_g_*: one CTA stages `src` (n elements) in shared memory, fences the async proxy, and thread 0 reduces it into
//          `dst` (global) with one bulk reduction; the host preloads dst.
// red_c_*: a cluster of 2 CTAs; rank 0 reduces its shared copy of `src` into rank 1's shared buffer (preloaded from
//          `dst`) with complete_tx on rank 1's mbarrier; rank 1 waits and writes the buffer to `out`.
// red_t_*: a 2D tile reduction of a shared box into the tensor map's global tensor.
#include <cstdint>
#define NB 512
struct __align__(64) TmapT { unsigned long long v[16]; };
__device__ __forceinline__ uint32_t sa(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

#define RED_G(name, TY, OP)                                                                                        \
extern "C" __global__ void red_g_##name(const uint8_t* src, uint8_t* dst, uint32_t nbytes) {                       \
  __shared__ __align__(128) uint8_t s[NB];                                                                          \
  for (uint32_t i = threadIdx.x; i < nbytes; i += blockDim.x) s[i] = src[i];                                       \
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");                                                    \
  __syncthreads();                                                                                                  \
  if (threadIdx.x == 0) {                                                                                           \
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group." OP "." TY " [%0], [%1], %2;"                 \
                 :: "l"(dst), "r"(sa(s)), "r"(nbytes) : "memory");                                                 \
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");                                                       \
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");                                                       \
  }                                                                                                                 \
}
RED_G(add_u32, "u32", "add") RED_G(add_s32, "s32", "add") RED_G(add_u64, "u64", "add")
RED_G(add_f32, "f32", "add") RED_G(add_f64, "f64", "add")
RED_G(add_f16, "f16", "add.noftz") RED_G(add_bf16, "bf16", "add.noftz")
RED_G(min_u32, "u32", "min") RED_G(min_s32, "s32", "min") RED_G(min_u64, "u64", "min") RED_G(min_s64, "s64", "min")
RED_G(max_u32, "u32", "max") RED_G(max_s32, "s32", "max") RED_G(max_u64, "u64", "max") RED_G(max_s64, "s64", "max")
RED_G(min_f16, "f16", "min") RED_G(max_bf16, "bf16", "max")
RED_G(inc_u32, "u32", "inc") RED_G(dec_u32, "u32", "dec")
RED_G(and_b32, "b32", "and") RED_G(or_b64, "b64", "or") RED_G(xor_b32, "b32", "xor")

#define RED_C(name, TY, OP)                                                                                        \
extern "C" __global__ void __cluster_dims__(2, 1, 1) red_c_##name(const uint8_t* src, const uint8_t* dst,          \
                                                                   uint8_t* out, uint32_t nbytes) {               \
  __shared__ __align__(128) uint8_t s[NB];                                                                          \
  __shared__ __align__(8) uint64_t bar;                                                                             \
  uint32_t rank; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));                                      \
  for (uint32_t i = threadIdx.x; i < nbytes; i += blockDim.x) s[i] = rank == 0 ? src[i] : dst[i];                   \
  if (threadIdx.x == 0 && rank == 1) {                                                                              \
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(&bar)) : "memory");                           \
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(sa(&bar)), "r"(nbytes) : "memory"); \
  }                                                                                                                 \
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");                                                    \
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");                                              \
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");     \
  if (rank == 0 && threadIdx.x == 0) {                                                                              \
    uint32_t rdst, rbar;                                                                                            \
    asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(rdst) : "r"(sa(s)));                                  \
    asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(rbar) : "r"(sa(&bar)));                               \
    asm volatile("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes." OP "." TY         \
                 " [%0], [%1], %2, [%3];" :: "r"(rdst), "r"(sa(s)), "r"(nbytes), "r"(rbar) : "memory");            \
  }                                                                                                                 \
  if (rank == 1) {                                                                                                  \
    uint32_t done = 0;                                                                                              \
    while (!done)                                                                                                   \
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"  \
                   : "=r"(done) : "r"(sa(&bar)) : "memory");                                                       \
    for (uint32_t i = threadIdx.x; i < nbytes; i += blockDim.x) out[i] = s[i];                                      \
  }                                                                                                                 \
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");     \
}
RED_C(add_u32, "u32", "add") RED_C(add_s32, "s32", "add") RED_C(add_u64, "u64", "add")
RED_C(min_u32, "u32", "min") RED_C(max_s32, "s32", "max") RED_C(inc_u32, "u32", "inc") RED_C(dec_u32, "u32", "dec")
RED_C(and_b32, "b32", "and") RED_C(or_b32, "b32", "or") RED_C(xor_b32, "b32", "xor")

// 2D tile reduction: box of BW x BH elements of `esize` bytes at (x, y)
#define RED_T(name, OP)                                                                                            \
extern "C" __global__ void red_t_##name(const __grid_constant__ TmapT tmap, const uint8_t* src,                \
                                         uint32_t nbytes, int x, int y) {                                         \
  __shared__ __align__(128) uint8_t s[NB];                                                                          \
  for (uint32_t i = threadIdx.x; i < nbytes; i += blockDim.x) s[i] = src[i];                                       \
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");                                                    \
  __syncthreads();                                                                                                  \
  if (threadIdx.x == 0) {                                                                                           \
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2}], [%3];"  \
                 :: "l"(&tmap), "r"(x), "r"(y), "r"(sa(s)) : "memory");                                             \
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");                                                       \
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");                                                       \
  }                                                                                                                 \
}
RED_T(add, "add") RED_T(min, "min") RED_T(max, "max") RED_T(inc, "inc") RED_T(dec, "dec")
RED_T(and, "and") RED_T(or, "or") RED_T(xor, "xor")
