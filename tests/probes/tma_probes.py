"""CUDA sources of the TMA / bulk-copy probe kernels (sm_90a), shared by the emulator's TMA and proxy tests.

Compiled once per process with :func:`module`; the expected answers are computed by the tests.
"""
from __future__ import annotations

import ptxlab

COMMON = r'''
struct __align__(64) TmapT { unsigned long long v[16]; };
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// 64-bit index without cvt (keeps the kernels to the instructions these tests are about)
__device__ __forceinline__ unsigned long long W(unsigned x) {
    unsigned long long r; asm("mul.wide.u32 %0, %1, 1;" : "=l"(r) : "r"(x)); return r;
}
__device__ __forceinline__ void bar_init(unsigned b, unsigned n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(n) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void bar_wait(unsigned b, unsigned parity) {
    asm volatile("{\n\t.reg .pred p;\n\tWAIT_%=:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t@!p bra WAIT_%=;\n\t}"
                 :: "r"(b), "r"(parity) : "memory");
}
__device__ __forceinline__ void bar_expect_arrive(unsigned b, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_arrive(unsigned b) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory");
}
__device__ __forceinline__ void tma2d(unsigned dst, const TmapT* tm, unsigned b, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];"
                 :: "r"(dst), "l"((unsigned long long)tm), "r"(b), "r"(c0), "r"(c1) : "memory");
}
'''

LOAD_SRC = COMMON + r'''
extern "C" __global__ void load2d(const __grid_constant__ TmapT tm, unsigned char* out, int c0, int c1,
                                  unsigned nbytes, unsigned expect) {
    __shared__ __align__(1024) unsigned char buf[8192];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    for (unsigned i = threadIdx.x; i < nbytes; i += blockDim.x) buf[i] = 0xA5;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        bar_init(b, 1);
        bar_expect_arrive(b, expect);
        tma2d(sa(buf), &tm, b, c0, c1);
    }
    __syncthreads();
    bar_wait(b, 0);
    for (unsigned i = threadIdx.x; i < nbytes; i += blockDim.x) out[W(i)] = buf[i];
}
'''

_MODS: dict[str, object] = {}


PIPE_SRC = COMMON + r'''
#define STAGES 2
#define TILE_ROWS 4
#define TILE_COLS 64
extern "C" __global__ void pipeline(const __grid_constant__ TmapT tm, int* out, int ntiles) {
    __shared__ __align__(1024) int stage[STAGES][TILE_ROWS * TILE_COLS];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const unsigned tid = threadIdx.x;            // 64 consumer threads (one column each) + thread 64 = producer
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) { bar_init(sa(&full[s]), 1); bar_init(sa(&empty[s]), TILE_COLS); }
    }
    __syncthreads();
    if (tid == TILE_COLS) {
        for (int k = 0; k < ntiles; ++k) {
            const int s = k % STAGES;
            const unsigned ph = (k / STAGES) & 1;
            if (k >= STAGES) bar_wait(sa(&empty[s]), ph ^ 1);
            bar_expect_arrive(sa(&full[s]), TILE_ROWS * TILE_COLS * 4);
            tma2d(sa(stage[s]), &tm, sa(&full[s]), 0, k * TILE_ROWS);
        }
    } else if (tid < TILE_COLS) {
        int acc = 0;
        for (int k = 0; k < ntiles; ++k) {
            const int s = k % STAGES;
            bar_wait(sa(&full[s]), (k / STAGES) & 1);
            for (int r = 0; r < TILE_ROWS; ++r) acc += stage[s][r * TILE_COLS + tid] * (k + 1);
            bar_arrive(sa(&empty[s]));
        }
        out[W(tid)] = acc;
    }
}
'''


BULK_SRC = COMMON + r'''
extern "C" __global__ void bulk(const unsigned char* src, unsigned char* dst, unsigned n) {
    __shared__ __align__(128) unsigned char buf[4096];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    if (threadIdx.x == 0) {
        bar_init(b, 1);
        bar_expect_arrive(b, n);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(sa(buf)), "l"(src), "r"(n), "r"(b) : "memory");
    }
    __syncthreads();
    bar_wait(b, 0);
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) buf[i] ^= 0x5A;   // generic-proxy writes ...
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");          // ... made visible to the async proxy
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                     :: "l"(dst), "r"(sa(buf)), "r"(n) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}
'''


STORE_SRC = COMMON + r'''
extern "C" __global__ void store2d(const __grid_constant__ TmapT tm, const unsigned char* in, int c0, int c1,
                                   unsigned nbytes) {
    __shared__ __align__(1024) unsigned char buf[4096];
    for (unsigned i = threadIdx.x; i < nbytes; i += blockDim.x) buf[i] = in[W(i)];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
                     :: "l"((unsigned long long)&tm), "r"(sa(buf)), "r"(c0), "r"(c1) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}
'''


def module(name: str, src: str):
    if name not in _MODS:
        _MODS[name] = ptxlab.compile(src, arch="sm_90a", name=f"{name}.cu")
    return _MODS[name]


# load2d in the spelling of the CuTe DSL's PTX (nvidia-cutlass-dsl 4.8.1): the TMA into the issuing CTA's own shared
# memory (.shared::cta destination, PTX ISA 8.6+) with an L2 cache-policy operand, and .shared for the mbarrier's
# arrive.expect_tx (PTX ISA 9.7.9.27.1.2, 9.7.13.15.13)
LOAD_SRC_DSL = (LOAD_SRC.replace("mbarrier.arrive.expect_tx.shared::cta.b64", "mbarrier.arrive.expect_tx.shared.b64")
                .replace('"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"\n'
                         '                 " [%0], [%1, {%3, %4}], [%2];"\n'
                         '                 :: "r"(dst), "l"((unsigned long long)tm), "r"(b), "r"(c0), "r"(c1)',
                         '"cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes'
                         '.L2::cache_hint"\n'
                         '                 " [%0], [%1, {%3, %4}], [%2], %5;"\n'
                         '                 :: "r"(dst), "l"((unsigned long long)tm), "r"(b), "r"(c0), "r"(c1),'
                         ' "l"(0x12F0000000000000ull)'))


def copy_dsl(rank: int) -> str:
    """A rank-``rank`` box copied global -> shared -> global by thread 0 in the spelling of the CuTe DSL's TMA copy
    kernels (nvidia-cutlass-dsl 4.8.1): L2 prefetch of the box, mbarrier.expect_tx.relaxed.cta.shared, the load
    into .shared::cta with .L2::cache_hint, try_wait.parity.acquire.cta, the store with .L2::cache_hint (PTX ISA
    9.7.9.27.1.2/4, 9.7.13.15.11/16)."""
    cs = ", ".join(f"%{3 + i}" for i in range(rank))          # coordinates after 3 operands (load) ...
    cs2 = ", ".join(f"%{2 + i}" for i in range(rank))         # ... after 2 (prefetch, store)
    cargs = ", ".join(f'"r"(c[{i}])' for i in range(rank))
    return COMMON + rf'''
extern "C" __global__ void copy_dsl(const __grid_constant__ TmapT src, const __grid_constant__ TmapT dst,
                                    const int* coords, unsigned nbytes) {{
    __shared__ __align__(1024) unsigned char buf[8192];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    const unsigned long long pol = 0x12F0000000000000ull;      // CUTLASS's EVICT_FIRST cache policy
    int c[{rank}];
    for (int i = 0; i < {rank}; ++i) c[i] = coords[i];
    if (threadIdx.x == 0) {{
        asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("cp.async.bulk.prefetch.tensor.{rank}d.L2.global.tile.L2::cache_hint [%0, {{{cs2}}}], %1;"
                     :: "l"((unsigned long long)&src), "l"(pol), {cargs} : "memory");
        asm volatile("mbarrier.expect_tx.relaxed.cta.shared.b64 [%0], %1;" :: "r"(b), "r"(nbytes) : "memory");
        asm volatile("cp.async.bulk.tensor.{rank}d.shared::cta.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
                     " [%0], [%1, {{{cs}}}], [%2], %{3 + rank};"
                     :: "r"(sa(buf)), "l"((unsigned long long)&src), "r"(b), {cargs}, "l"(pol) : "memory");
        asm volatile("mbarrier.arrive.shared.b64 _, [%0];" :: "r"(b) : "memory");
        asm volatile("{{\n\t.reg .pred p;\n\tW_%=:\n\t"
                     "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], 0;\n\t@!p bra W_%=;\n\t}}"
                     :: "r"(b) : "memory");
        asm volatile("cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group.L2::cache_hint"
                     " [%0, {{{cs2}}}], [%1], %{2 + rank};"
                     :: "l"((unsigned long long)&dst), "r"(sa(buf)), {cargs}, "l"(pol) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }}
}}
'''
