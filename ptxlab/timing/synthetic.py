"""Synthetic kernels of known character for the timing model's tests and validation (CUDA C, sm_90a/sm_100a).

* ``STREAM``: grid-stride float4 copy (DRAM stream);
* ``PIPE``: a bulk-copy ring (``cp.async.bulk`` + full/empty mbarriers): warp 0 lane 0 produces CHUNK-byte stages,
  warp 1 consumes each stage with WORK dependent FMA rounds over its shared-memory words;
* ``FMA``: independent FMA chains per thread (FMA-issue bound);
* ``SMEM``: shared-memory read loop (shared-memory bandwidth bound);
* ``EMPTY``: an empty kernel (launch overhead).
"""
STREAM = r'''
extern "C" __global__ void stream(const float4* __restrict__ a, float4* __restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  for (; i < n; i += stride) { float4 v = a[i]; v.x += 1.f; b[i] = v; }
}
'''

PIPE = r'''
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CHUNK
#define CHUNK 8192
#endif
#ifndef WORK
#define WORK 1
#endif
__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  asm volatile("{\n\t.reg .pred P;\n"
               "WAIT_%=:\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t"
               "@!P bra WAIT_%=;\n\t}" :: "r"(bar), "r"(parity) : "memory");
}
extern "C" __global__ void __launch_bounds__(64) pipe(const unsigned char* __restrict__ src, float* __restrict__ out,
                                                      int chunks) {
  __shared__ alignas(128) unsigned char buf[STAGES][CHUNK];
  __shared__ alignas(8) unsigned long long full[STAGES], empty[STAGES];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&full[s])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&empty[s])));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const unsigned char* base = src + (size_t)blockIdx.x * chunks * CHUNK;
  if (warp == 0 && lane == 0) {
    for (int i = 0; i < chunks; ++i) {
      int s = i % STAGES;
      if (i >= STAGES) wait_parity(smem_u32(&empty[s]), ((i / STAGES) - 1) & 1);
      unsigned fb = smem_u32(&full[s]);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(fb), "r"(CHUNK) : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   :: "r"(smem_u32(buf[s])), "l"(base + (size_t)i * CHUNK), "r"(CHUNK), "r"(fb) : "memory");
    }
  } else if (warp == 1) {
    float acc = 0.f;
    for (int i = 0; i < chunks; ++i) {
      int s = i % STAGES;
      wait_parity(smem_u32(&full[s]), (i / STAGES) & 1);
      const float* f = reinterpret_cast<const float*>(buf[s]);
      float x = f[lane];
      for (int w = 0; w < WORK; ++w) acc = fmaf(acc, x, 1.0f);
      __syncwarp();
      if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_u32(&empty[s])) : "memory");
    }
    out[blockIdx.x * 32 + lane] = acc;
  }
}
'''

FMA = r'''
#ifndef ITERS
#define ITERS 256
#endif
extern "C" __global__ void fma_loop(float* out, float a, float b) {
  float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
  #pragma unroll 4
  for (int i = 0; i < ITERS; ++i) {
    x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
    x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
'''

SMEM = r'''
#ifndef ITERS
#define ITERS 256
#endif
extern "C" __global__ void smem_loop(float* out, int stride) {
  __shared__ float4 s[2048];
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) s[i] = make_float4(i, i + 1, i + 2, i + 3);
  __syncthreads();
  float4 acc = make_float4(0, 0, 0, 0);
  int j = threadIdx.x;
  #pragma unroll 4
  for (int i = 0; i < ITERS; ++i) {
    float4 v = s[(j + i * stride) & 2047];
    acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}
'''

EMPTY = r'''
extern "C" __global__ void empty_kernel(int* p) { if (p != nullptr && threadIdx.x == 1023) p[0] = 1; }
'''


def defines(**kw) -> str:
    return "".join(f"#define {k} {v}\n" for k, v in kw.items())
