// sm_90 corpus kernels: st.async (PTX ISA 9.7.9.12), red.async (9.7.13.7), setmaxnreg (9.7.19.5),
// tensormap.replace (9.7.9.28) and tensormap.cp_fenceproxy (9.7.13.16).
// sta_*: a cluster of 2 CTAs; every thread of CTA r writes its values into CTA (r ^ 1)'s shared buffer with one
//        st.async, completing on CTA (r ^ 1)'s mbarrier; each CTA waits on its own mbarrier and copies its buffer out.
// reda_*: the same with red.async into a buffer preloaded from `init`.
// maxnreg: two warpgroups, one gives registers back, the other takes more, both compute and store.
// tmr_*: thread 0 rewrites fields of a copy of `tmap` (in shared memory, then copied to global with cp_fenceproxy, or
//        in global memory directly) and the CTA loads one box through the rewritten map.
#include <cstdint>
#define NT 64
struct __align__(64) TmapT { unsigned long long v[16]; };
__device__ __forceinline__ uint32_t sa(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ uint32_t ctarank() {
  uint32_t r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void wait_parity0(uint64_t* bar) {
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0;"
                 " selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(sa(bar)) : "memory");
}
// the buffer (nbytes, preloaded from `init` at rank*nbytes) and a barrier expecting nbytes of transactions
#define PROLOGUE                                                                                                   \
  __shared__ __align__(16) uint8_t buf[NT * 16];                                                                    \
  __shared__ __align__(8) uint64_t bar;                                                                             \
  uint32_t rank = ctarank();                                                                                        \
  for (uint32_t i = threadIdx.x; i < nbytes; i += blockDim.x) buf[i] = init[rank * nbytes + i];                     \
  if (threadIdx.x == 0) {                                                                                           \
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(&bar)) : "memory");                           \
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(sa(&bar)), "r"(nbytes) : "memory"); \
  }                                                                                                                 \
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");                                              \
  cluster_sync();                                                                                                   \
  uint32_t rbuf, rbar;                                                                                              \
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbuf) : "r"(sa(buf)), "r"(rank ^ 1));               \
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(sa(&bar)), "r"(rank ^ 1));
#define EPILOGUE                                                                                                   \
  wait_parity0(&bar);                                                                                               \
  for (uint32_t i = threadIdx.x; i < nbytes; i += blockDim.x) out[rank * nbytes + i] = buf[i];                      \
  cluster_sync();

// st.async{.v2,.v4}.{b32,b64,u32,s32,f32,u64,s64,f64}: thread t writes element(s) t of the peer's buffer
#define STA1(name, TY, CT, C)                                                                                      \
extern "C" __global__ void __cluster_dims__(2, 1, 1) sta_##name(const uint8_t* init, const CT* src, uint8_t* out,  \
                                                                 uint32_t nbytes) {                               \
  PROLOGUE                                                                                                          \
  CT v = src[rank * NT + threadIdx.x];                                                                              \
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes." TY " [%0], %1, [%2];"                       \
               :: "r"(rbuf + threadIdx.x * (uint32_t)sizeof(CT)), C(v), "r"(rbar) : "memory");                               \
  EPILOGUE                                                                                                          \
}
#define STA2(name, TY, CT, C)                                                                                      \
extern "C" __global__ void __cluster_dims__(2, 1, 1) sta_##name(const uint8_t* init, const CT* src, uint8_t* out,  \
                                                                 uint32_t nbytes) {                               \
  PROLOGUE                                                                                                          \
  const CT* p = src + (rank * NT + threadIdx.x) * 2;                                                                \
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2." TY " [%0], {%1, %2}, [%3];"              \
               :: "r"(rbuf + threadIdx.x * 2 * (uint32_t)sizeof(CT)), C(p[0]), C(p[1]), "r"(rbar) : "memory");               \
  EPILOGUE                                                                                                          \
}
#define STA4(name, TY, CT, C)                                                                                      \
extern "C" __global__ void __cluster_dims__(2, 1, 1) sta_##name(const uint8_t* init, const CT* src, uint8_t* out,  \
                                                                 uint32_t nbytes) {                               \
  PROLOGUE                                                                                                          \
  const CT* p = src + (rank * NT + threadIdx.x) * 4;                                                                \
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4." TY " [%0], {%1, %2, %3, %4}, [%5];"      \
               :: "r"(rbuf + threadIdx.x * 4 * (uint32_t)sizeof(CT)), C(p[0]), C(p[1]), C(p[2]), C(p[3]), "r"(rbar)          \
               : "memory");                                                                                        \
  EPILOGUE                                                                                                          \
}
STA1(b32, "b32", uint32_t, "r") STA1(u32, "u32", uint32_t, "r") STA1(s32, "s32", int32_t, "r")
STA1(f32, "f32", float, "f") STA1(b64, "b64", uint64_t, "l") STA1(u64, "u64", uint64_t, "l")
STA1(s64, "s64", int64_t, "l") STA1(f64, "f64", double, "d")
STA2(v2_b32, "b32", uint32_t, "r") STA2(v2_f32, "f32", float, "f") STA2(v2_b64, "b64", uint64_t, "l")
STA2(v2_s64, "s64", int64_t, "l") STA2(v2_f64, "f64", double, "d")
STA4(v4_b32, "b32", uint32_t, "r") STA4(v4_s32, "s32", int32_t, "r") STA4(v4_f32, "f32", float, "f")

// red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.<op>.<type>: thread t reduces into element t
#define REDA(name, OPTY, CT, C)                                                                                    \
extern "C" __global__ void __cluster_dims__(2, 1, 1) reda_##name(const uint8_t* init, const CT* src, uint8_t* out, \
                                                                  uint32_t nbytes) {                              \
  PROLOGUE                                                                                                          \
  CT v = src[rank * NT + threadIdx.x];                                                                              \
  asm volatile("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes." OPTY " [%0], %1, [%2];"    \
               :: "r"(rbuf + threadIdx.x * (uint32_t)sizeof(CT)), C(v), "r"(rbar) : "memory");                               \
  EPILOGUE                                                                                                          \
}
REDA(inc_u32, "inc.u32", uint32_t, "r") REDA(dec_u32, "dec.u32", uint32_t, "r")
REDA(min_u32, "min.u32", uint32_t, "r") REDA(max_u32, "max.u32", uint32_t, "r")
REDA(min_s32, "min.s32", int32_t, "r") REDA(max_s32, "max.s32", int32_t, "r")
REDA(and_b32, "and.b32", uint32_t, "r") REDA(or_b32, "or.b32", uint32_t, "r") REDA(xor_b32, "xor.b32", uint32_t, "r")
REDA(add_u32, "add.u32", uint32_t, "r") REDA(add_s32, "add.s32", int32_t, "r")
REDA(add_u64, "add.u64", uint64_t, "l")

// setmaxnreg: warpgroup 0 gives registers back, warpgroup 1 takes more; both compute a value that depends on tid
extern "C" __global__ void __launch_bounds__(256, 1) maxnreg(const uint32_t* src, uint32_t* out) {
  uint32_t wg = threadIdx.x / 128;
  if (wg == 0) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;" ::: "memory");
  else asm volatile("setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory");
  uint32_t v = src[threadIdx.x];
  out[threadIdx.x] = v * 2654435761u + (wg ? 0x9E3779B9u : 0x7F4A7C15u);
}

// tensormap.replace: fields of a 2D tile map (dtype code, box etc.) are rewritten, then one box is loaded at (x, y).
// (ptxas requires immediates for .elemtype, .swizzle_mode, .fill_mode and .interleave_layout)
struct Repl { unsigned long long addr, stride; uint32_t dim0, dim1, box0, box1, estride0, estride1, x, y, nbytes; };

__device__ __forceinline__ void load_box(const void* gmap, uint8_t* sbuf, uint64_t* bar, const Repl& r,
                                         uint8_t* out) {
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(gmap) : "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(sa(bar)), "r"(r.nbytes) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(sa(sbuf)), "l"(gmap), "r"(r.x), "r"(r.y), "r"(sa(bar)) : "memory");
  }
  __syncthreads();
  wait_parity0(bar);
  for (uint32_t i = threadIdx.x; i < r.nbytes; i += blockDim.x) out[i] = sbuf[i];
}

#define REPLACE(SP, A, AC, EL, SW, FI)                                                                                        \
  asm volatile("tensormap.replace.tile.global_address." SP ".b1024.b64 [%0], %1;" :: AC(A), "l"(r.addr) : "memory"); \
  asm volatile("tensormap.replace.tile.global_dim." SP ".b1024.b32 [%0], 0, %1;" :: AC(A), "r"(r.dim0) : "memory"); \
  asm volatile("tensormap.replace.tile.global_dim." SP ".b1024.b32 [%0], 1, %1;" :: AC(A), "r"(r.dim1) : "memory"); \
  asm volatile("tensormap.replace.tile.global_stride." SP ".b1024.b64 [%0], 0, %1;" :: AC(A), "l"(r.stride)        \
               : "memory");                                                                                         \
  asm volatile("tensormap.replace.tile.box_dim." SP ".b1024.b32 [%0], 0, %1;" :: AC(A), "r"(r.box0) : "memory");   \
  asm volatile("tensormap.replace.tile.box_dim." SP ".b1024.b32 [%0], 1, %1;" :: AC(A), "r"(r.box1) : "memory");   \
  asm volatile("tensormap.replace.tile.element_stride." SP ".b1024.b32 [%0], 0, %1;" :: AC(A), "r"(r.estride0)     \
               : "memory");                                                                                         \
  asm volatile("tensormap.replace.tile.element_stride." SP ".b1024.b32 [%0], 1, %1;" :: AC(A), "r"(r.estride1)     \
               : "memory");                                                                                         \
  asm volatile("tensormap.replace.tile.elemtype." SP ".b1024.b32 [%0], %1;" :: AC(A), "n"(EL) : "memory");        \
  asm volatile("tensormap.replace.tile.swizzle_mode." SP ".b1024.b32 [%0], %1;" :: AC(A), "n"(SW) : "memory");    \
  asm volatile("tensormap.replace.tile.fill_mode." SP ".b1024.b32 [%0], %1;" :: AC(A), "n"(FI) : "memory");       \
  asm volatile("tensormap.replace.tile.interleave_layout." SP ".b1024.b32 [%0], 0;" :: AC(A) : "memory");         \
  asm volatile("tensormap.replace.tile.rank." SP ".b1024.b32 [%0], 1;" :: AC(A) : "memory");
#define RS(x) "r"(x)
#define LG(x) "l"(x)

// case N: elemtype EL, swizzle SW, fill FI (tests/corpus/kernels_async_store.py CASES)
#define TMR(N, EL, SW, FI)                                                                                         \
/* the map is copied to shared memory, rewritten there and copied to `gmap` with tensormap.cp_fenceproxy */       \
extern "C" __global__ void tmr_shared_##N(const __grid_constant__ TmapT tmap, TmapT* gmap, const Repl* rp,         \
                                          uint8_t* out) {                                                          \
  __shared__ __align__(128) TmapT smap;                                                                             \
  __shared__ __align__(1024) uint8_t sbuf[8192];                                                                    \
  __shared__ __align__(8) uint64_t bar;                                                                             \
  Repl r = *rp;                                                                                                     \
  if (threadIdx.x < 16) smap.v[threadIdx.x] = tmap.v[threadIdx.x];                                                  \
  __syncwarp();                                                                                                     \
  if (threadIdx.x == 0) { uint32_t a = sa(&smap); REPLACE("shared::cta", a, RS, EL, SW, FI) }                                   \
  __syncwarp();                                                                                                     \
  if (threadIdx.x < 32)                                                                                             \
    asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned"           \
                 " [%0], [%1], 128;" :: "l"(gmap), "r"(sa(&smap)) : "memory");                                      \
  __syncthreads();                                                                                                  \
  load_box(gmap, sbuf, &bar, r, out);                                                                               \
}                                                                                                                   \
/* the map (copied to `gmap` by the host) is rewritten in global memory */                                        \
extern "C" __global__ void tmr_global_##N(TmapT* gmap, const Repl* rp, uint8_t* out) {                             \
  __shared__ __align__(1024) uint8_t sbuf[8192];                                                                    \
  __shared__ __align__(8) uint64_t bar;                                                                             \
  Repl r = *rp;                                                                                                     \
  if (threadIdx.x == 0) {                                                                                           \
    REPLACE("global", gmap, LG, EL, SW, FI)                                                                                   \
    asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");                                     \
  }                                                                                                                 \
  __syncthreads();                                                                                                  \
  load_box(gmap, sbuf, &bar, r, out);                                                                               \
}
TMR(0, 7, 2, 1) TMR(1, 6, 3, 0) TMR(2, 0, 0, 0) TMR(3, 0, 0, 0) TMR(4, 0, 1, 0) TMR(5, 1, 0, 0)
