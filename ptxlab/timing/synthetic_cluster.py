"""Synthetic thread-block-cluster kernels for the timing model's tests, calibration and validation (CUDA C, sm_90a).

Every kernel takes the cluster size as the macro ``CL`` and must be launched with ``cluster=(CL, 1, 1)`` when
CL > 1 (CL = 1: an ordinary launch, the non-cluster reference).

* ``MCAST``: a bulk-copy ring (STAGES x CHUNK bytes) where the CL CTAs of a cluster share every chunk: CTA rank r
  loads slice r (CHUNK / CL bytes) with ``cp.async.bulk ... .multicast::cluster`` into all CL CTAs' SMEM; each
  consumer warp frees a stage by a remote ``mbarrier.arrive`` on every CTA's empty barrier (``REL`` = 1:
  ``.release.cluster``, the form measured on the H100; 0: CUTLASS's ``mbarrier.arrive.shared::cluster`` without a
  cluster-scope release).  DRAM bytes: 1 / CL of the CL = 1 version (which loads every chunk per CTA from its own
  data).
* ``DSMEM_CHASE``: a dependent pointer chase through the peer's (rank + 1) shared memory (``ld.shared::cluster``):
  SM-to-SM latency bound; the result is checkable (tab[i] = (i + step) % N).
* ``DSMEM_BW``: independent 16-byte loads of the peer's shared memory (SM-to-SM bandwidth probe).
* ``DSMEM_RING``: ring exchange: each iteration every thread reads its slot of rank + 1's buffer, writes its own
  other buffer, then a cluster barrier (SM-to-SM latency + barrier.cluster bound).
* ``CBAR``: FMA work between ``barrier.cluster.arrive`` / ``wait`` pairs (cluster-barrier latency bound).
* ``ARRIVE``: the remote-arrive probe: lane 0 of every warp (``blockDim.x / 32`` warps per CTA) does ``K``
  ``mbarrier.arrive`` in a row per iteration, to the barrier of CTAs rank + 1 .. rank + K (``SELF`` = 1: K times to
  its own CTA's barrier, through its ``shared::cluster`` address); ``SEM`` = 1: ``.release.cluster``, 2:
  ``.relaxed.cluster``, 0: no qualifier (default ``.release`` at ``.cta`` scope, CUTLASS's form); ``LD`` = 1: each
  iteration first reads 16 B of its own SMEM per lane and keeps the sum (a memory operation for the release to
  order).  Nothing waits on the barriers (count 1: every arrive completes a phase).
"""
COMMON = r'''
#ifndef CL
#define CL 1
#endif
__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned cl_rank() {
  unsigned r = 0;
#if CL > 1
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#endif
  return r;
}
__device__ __forceinline__ unsigned cl_map(unsigned a, unsigned rank) {
  unsigned d = a;
#if CL > 1
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(rank));
#endif
  return d;
}
__device__ __forceinline__ void cl_sync() {
#if CL > 1
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
#else
  __syncthreads();
#endif
}
__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  asm volatile("{\n\t.reg .pred P;\n"
               "WAIT_%=:\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t"
               "@!P bra WAIT_%=;\n\t}" :: "r"(bar), "r"(parity) : "memory");
}
'''

MCAST = COMMON + r'''
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CHUNK
#define CHUNK 8192
#endif
#ifndef CW
#define CW 4
#endif
#ifndef REL
#define REL 1   // 1: consumers free a stage with mbarrier.arrive.release.cluster (measured form); 0: CUTLASS's form
#endif
extern "C" __global__ void __launch_bounds__(32 * (1 + CW)) mcast(const unsigned char* __restrict__ src,
                                                                  float* __restrict__ out, int chunks) {
  __shared__ alignas(128) unsigned char buf[STAGES][CHUNK];
  __shared__ alignas(8) unsigned long long full[STAGES], empty[STAGES];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned rank = cl_rank();
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&full[s])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_u32(&empty[s])), "r"(CW * CL));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cl_sync();
  const unsigned char* base = src + (size_t)(blockIdx.x / CL) * chunks * CHUNK;
  if (warp == 0) {
    if (lane == 0) {
      for (int i = 0; i < chunks; ++i) {
        int s = i % STAGES;
        if (i >= STAGES) wait_parity(smem_u32(&empty[s]), ((i / STAGES) - 1) & 1);
        unsigned fb = smem_u32(&full[s]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(fb), "r"(CHUNK) : "memory");
#if CL > 1
        const unsigned slice = CHUNK / CL;
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                     "[%0], [%1], %2, [%3], %4;"
                     :: "r"(smem_u32(buf[s]) + rank * slice), "l"(base + (size_t)i * CHUNK + rank * slice),
                        "r"(slice), "r"(fb), "h"((unsigned short)((1u << CL) - 1)) : "memory");
#else
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(smem_u32(buf[s])), "l"(base + (size_t)i * CHUNK), "r"(CHUNK), "r"(fb) : "memory");
#endif
      }
    }
  } else {
    float acc = 0.f;
    for (int i = 0; i < chunks; ++i) {
      int s = i % STAGES;
      wait_parity(smem_u32(&full[s]), (i / STAGES) & 1);
      const float4* f = reinterpret_cast<const float4*>(buf[s]);
      for (int j = (warp - 1) * 32 + lane; j < CHUNK / 16; j += CW * 32) {
        float4 v = f[j];
        acc += v.x + v.y + v.z + v.w;
      }
      __syncwarp();
      if (lane == 0) {
        for (unsigned r = 0; r < CL; ++r) {
#if CL > 1 && REL
          asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];"
                       :: "r"(cl_map(smem_u32(&empty[s]), r)) : "memory");
#elif CL > 1   // CUTLASS ClusterBarrier::arrive(cta_id) form: default .release at .cta scope
          asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];"
                       :: "r"(cl_map(smem_u32(&empty[s]), r)) : "memory");
#else
          asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_u32(&empty[s])) : "memory");
#endif
        }
      }
    }
    out[blockIdx.x * 32 * CW + (warp - 1) * 32 + lane] = acc;
  }
  cl_sync();   // peers arrive on this CTA's barriers and multicast into its SMEM: stay alive until all are done
}
'''

DSMEM_CHASE = COMMON + r'''
#ifndef N
#define N 1024
#endif
extern "C" __global__ void dsmem_chase(unsigned* __restrict__ out, unsigned step, int iters) {
  __shared__ unsigned tab[N];
  for (int i = threadIdx.x; i < N; i += blockDim.x) tab[i] = (i + step) % N;
  cl_sync();
  unsigned peer = cl_map(smem_u32(tab), (cl_rank() + 1) % CL);
  unsigned j = threadIdx.x % N;
  for (int k = 0; k < iters; ++k) {
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(j) : "r"(peer + 4 * j) : "memory");
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = j;
  cl_sync();
}
'''

DSMEM_BW = COMMON + r'''
extern "C" __global__ void dsmem_bw(float* __restrict__ out, int iters) {
  __shared__ alignas(16) float4 buf[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) buf[i] = make_float4(i, 1, 2, 3);
  cl_sync();
  unsigned peer = cl_map(smem_u32(buf), (cl_rank() + 1) % CL);
  float acc = 0.f;
  for (int k = 0; k < iters; ++k) {
    float4 v;
    unsigned a = peer + 16 * ((threadIdx.x + k * 64) & 1023);
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a) : "memory");
    acc += v.x + v.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  cl_sync();
}
'''

DSMEM_RING = COMMON + r'''
extern "C" __global__ void dsmem_ring(float* __restrict__ out, int iters) {
  __shared__ float buf[2][1024];
  int t = threadIdx.x;
  buf[0][t] = t + 1;
  cl_sync();
  unsigned peer = cl_map(smem_u32(&buf[0][0]), (cl_rank() + 1) % CL);
  for (int k = 0; k < iters; ++k) {
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(peer + 4 * ((k & 1) * 1024 + t)) : "memory");
    buf[(k + 1) & 1][t] = v * 0.5f + 1.0f;
    cl_sync();
  }
  out[blockIdx.x * blockDim.x + t] = buf[iters & 1][t];
  cl_sync();
}
'''

CBAR = COMMON + r'''
#ifndef WORK
#define WORK 8
#endif
extern "C" __global__ void cbar(float* __restrict__ out, int iters, float a) {
  float x = threadIdx.x;
  for (int k = 0; k < iters; ++k) {
    #pragma unroll
    for (int w = 0; w < WORK; ++w) x = fmaf(x, a, 0.5f);
    cl_sync();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
'''

ARRIVE = COMMON + r"""
#ifndef K
#define K 1
#endif
#ifndef SEM
#define SEM 1
#endif
#ifndef SELF
#define SELF 0
#endif
#ifndef LD
#define LD 0
#endif
extern "C" __global__ void arrive_probe(float* __restrict__ out, int iters) {
  __shared__ alignas(8) unsigned long long bar;
  __shared__ alignas(16) float4 buf[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) buf[i] = make_float4(i, 1, 2, 3);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cl_sync();
  unsigned rank = cl_rank();
  unsigned tgt[K];
  #pragma unroll
  for (int j = 0; j < K; ++j) tgt[j] = cl_map(smem_u32(&bar), SELF ? rank : (rank + 1 + j) % CL);
  float acc = 0.f;
  int lane = threadIdx.x % 32;
  for (int i = 0; i < iters; ++i) {
#if LD
    float4 v = buf[(lane + i * 32) & 255];
    acc += v.x + v.w;
#endif
    if (lane == 0) {
      #pragma unroll
      for (int j = 0; j < K; ++j) {
#if SEM == 1
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(tgt[j]) : "memory");
#elif SEM == 2
        asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" :: "r"(tgt[j]) : "memory");
#else
        asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" :: "r"(tgt[j]) : "memory");
#endif
      }
    }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  cl_sync();   // peers arrive on this CTA's barrier: stay alive until all are done
}
"""
