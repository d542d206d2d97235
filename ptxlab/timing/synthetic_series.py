"""Kernel series written for the timing model's calibration (issue 21; CUDA C, sm_90a).  Written here, so they are
*calibration* data, never the out-of-sample validation (benchmarks/timing_corpus/ holds that):

* ``SGEMM``: six steps of one SGEMM (C = A B, fp32, row-major, M = N = K multiple of 128), from a thread per output
  to 2-D register tiles with 128-bit loads: ``naive`` (x = row: uncoalesced A), ``coalesced`` (x = column),
  ``smem`` (32 x 32 shared tiles), ``reg1d`` (64 x 64 tile, 8 outputs per thread in a column), ``reg2d`` (64 x 64,
  4 x 4 outputs per thread), ``vec2d`` (128 x 128, 8 x 8 per thread, float4 global loads, A stored transposed);
* ``REDUCE``: sums of N floats: ``atomic`` (one atomicAdd per element), ``tree_mod`` (shared-memory tree whose
  stride test is a run-time ``%``: ``rem.u32``, ~20 SASS instructions), ``shfl`` (grid-stride + warp shuffles + one
  atomic per warp), ``vec_shfl`` (float4 loads);
* ``BANK``: a 32 x 32 shared tile transposed in shared memory, padded (``PAD`` 1) or not (32-way bank conflicts);
* ``ILP``: ``CHAINS`` independent dependent-FMA chains per thread (latency- vs issue-bound at low occupancy);
* ``L2SHARE``: every CTA streams the same ``SPAN`` bytes (L2 hits after the first CTA) or its own (``SHARED`` 0);
* ``L1HIT``: a 1-D stencil of radius R: each element read 2R + 1 times by neighbouring threads (L1 hits);
* ``REM``: ``acc += a[(i + j * 37) % m]``: remainder-heavy indexing (PTX ``rem.u32`` vs its SASS expansion);
* ``TRANSPOSE_1D`` / ``TRANSPOSE_1D_W``: a 1-D-indexed naive transpose, strided on the load / on the store;
* ``CPASYNC``: each CTA copies ``steps`` x 4 KB global -> shared with ``cp.async.cg`` 16 B + commit_group +
  wait_group 0 (``k_async``), with cp.async.mbarrier.arrive.noinc + mbarrier.try_wait (``k_mbar``) or with
  ld.global + st.shared (``k_sync``), then reads it back (the same memory work).
"""
from __future__ import annotations

import math


def _defines(**kw) -> str:
    return "".join(f"#define {k} {v}\n" for k, v in kw.items())

SGEMM = r'''
#define IDX(r, c, ld) ((size_t)(r) * (ld) + (c))
extern "C" __global__ void naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                 int M, int N, int K) {
  int r = blockIdx.x * 32 + threadIdx.x % 32, c = blockIdx.y * 32 + threadIdx.x / 32;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc = fmaf(A[IDX(r, k, K)], B[IDX(k, c, N)], acc);
  C[IDX(r, c, N)] = acc;
}
extern "C" __global__ void coalesced(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                     int M, int N, int K) {
  int r = blockIdx.y * 32 + threadIdx.x / 32, c = blockIdx.x * 32 + threadIdx.x % 32;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc = fmaf(A[IDX(r, k, K)], B[IDX(k, c, N)], acc);
  C[IDX(r, c, N)] = acc;
}
extern "C" __global__ void smem(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                int M, int N, int K) {
  __shared__ float As[32][32], Bs[32][32];
  int tr = threadIdx.x / 32, tc = threadIdx.x % 32;
  int r = blockIdx.y * 32 + tr, c = blockIdx.x * 32 + tc;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += 32) {
    As[tr][tc] = A[IDX(r, k0 + tc, K)];
    Bs[tr][tc] = B[IDX(k0 + tr, c, N)];
    __syncthreads();
    for (int k = 0; k < 32; ++k) acc = fmaf(As[tr][k], Bs[k][tc], acc);
    __syncthreads();
  }
  C[IDX(r, c, N)] = acc;
}
// 64 x 64 tile, BK = 8, 512 threads: thread (tr, tc) computes rows tr*8 .. +7 of column tc
extern "C" __global__ void __launch_bounds__(512) reg1d(const float* __restrict__ A, const float* __restrict__ B,
                                                        float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[64][8], Bs[8][64];
  int tc = threadIdx.x % 64, tr = threadIdx.x / 64;
  int r0 = blockIdx.y * 64, c0 = blockIdx.x * 64;
  float acc[8] = {};
  for (int k0 = 0; k0 < K; k0 += 8) {
    As[threadIdx.x / 8][threadIdx.x % 8] = A[IDX(r0 + threadIdx.x / 8, k0 + threadIdx.x % 8, K)];
    Bs[threadIdx.x / 64][threadIdx.x % 64] = B[IDX(k0 + threadIdx.x / 64, c0 + threadIdx.x % 64, N)];
    __syncthreads();
    for (int k = 0; k < 8; ++k) {
      float b = Bs[k][tc];
      #pragma unroll
      for (int i = 0; i < 8; ++i) acc[i] = fmaf(As[tr * 8 + i][k], b, acc[i]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 8; ++i) C[IDX(r0 + tr * 8 + i, c0 + tc, N)] = acc[i];
}
// 64 x 64 tile, BK = 8, 256 threads, 4 x 4 outputs per thread, A stored transposed in shared memory
extern "C" __global__ void __launch_bounds__(256) reg2d(const float* __restrict__ A, const float* __restrict__ B,
                                                        float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[8][64], Bs[8][64];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int r0 = blockIdx.y * 64, c0 = blockIdx.x * 64;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 8) {
    for (int i = threadIdx.x; i < 512; i += 256) {
      As[i % 8][i / 8] = A[IDX(r0 + i / 8, k0 + i % 8, K)];
      Bs[i / 64][i % 64] = B[IDX(k0 + i / 64, c0 + i % 64, N)];
    }
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < 8; ++k) {
      float a[4], b[4];
      #pragma unroll
      for (int i = 0; i < 4; ++i) { a[i] = As[k][ty * 4 + i]; b[i] = Bs[k][tx * 4 + i]; }
      #pragma unroll
      for (int i = 0; i < 4; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) C[IDX(r0 + ty * 4 + i, c0 + tx * 4 + j, N)] = acc[i][j];
}
// 128 x 128 tile, BK = 8, 256 threads, 8 x 8 outputs per thread; float4 global loads; A transposed in shared memory
extern "C" __global__ void __launch_bounds__(256) vec2d(const float* __restrict__ A, const float* __restrict__ B,
                                                        float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) float As[8][128];
  __shared__ __align__(16) float Bs[8][128];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int r0 = blockIdx.y * 128, c0 = blockIdx.x * 128;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < K; k0 += 8) {
    int ar = threadIdx.x / 2, ac = (threadIdx.x % 2) * 4;
    float4 a4 = *reinterpret_cast<const float4*>(&A[IDX(r0 + ar, k0 + ac, K)]);
    As[ac][ar] = a4.x; As[ac + 1][ar] = a4.y; As[ac + 2][ar] = a4.z; As[ac + 3][ar] = a4.w;
    int br = threadIdx.x / 32, bc = (threadIdx.x % 32) * 4;
    *reinterpret_cast<float4*>(&Bs[br][bc]) = *reinterpret_cast<const float4*>(&B[IDX(k0 + br, c0 + bc, N)]);
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < 8; ++k) {
      float a[8], b[8];
      #pragma unroll
      for (int i = 0; i < 8; ++i) { a[i] = As[k][ty * 8 + i]; b[i] = Bs[k][tx * 8 + i]; }
      #pragma unroll
      for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; j += 4)
      *reinterpret_cast<float4*>(&C[IDX(r0 + ty * 8 + i, c0 + tx * 8 + j, N)]) =
          make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
}
'''

# kernel -> (threads per CTA, CTA tile (rows, cols) of C)
SGEMM_STEPS = {"naive": (1024, 32, 32), "coalesced": (1024, 32, 32), "smem": (1024, 32, 32), "reg1d": (512, 64, 64),
               "reg2d": (256, 64, 64), "vec2d": (256, 128, 128)}


def sgemm_launch(kernel: str, n: int) -> tuple:
    """(grid, block) of an n x n x n SGEMM step."""
    threads, tm, tn = SGEMM_STEPS[kernel]
    if kernel == "naive":
        return (n // 32, n // 32, 1), (threads, 1, 1)
    return (n // tn, n // tm, 1), (threads, 1, 1)


REDUCE = r'''
extern "C" __global__ void atomic(const float* __restrict__ x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}
// shared-memory tree; the stride test uses a run-time modulo (rem.u32 in PTX)
extern "C" __global__ void tree_mod(const float* __restrict__ x, float* out, int n, unsigned two) {
  __shared__ float s[256];
  unsigned t = threadIdx.x, i = blockIdx.x * 256 + t;
  s[t] = i < (unsigned)n ? x[i] : 0.f;
  __syncthreads();
  for (unsigned st = 1; st < 256; st *= two) {
    if (t % (two * st) == 0) s[t] += s[t + st];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, s[0]);
}
extern "C" __global__ void shfl(const float* __restrict__ x, float* out, int n) {
  float acc = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += x[i];
  for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (threadIdx.x % 32 == 0) atomicAdd(out, acc);
}
extern "C" __global__ void vec_shfl(const float4* __restrict__ x, float* out, int n4) {
  float acc = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    float4 v = x[i]; acc += (v.x + v.y) + (v.z + v.w);
  }
  for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (threadIdx.x % 32 == 0) atomicAdd(out, acc);
}
'''

BANK = r'''
#ifndef PAD
#define PAD 1
#endif
#ifndef REPS
#define REPS 64
#endif
// each warp transposes 32 x 32 floats through shared memory REPS times (column reads: 32-way conflicts unpadded)
extern "C" __global__ void bank(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float t[8][32][32 + PAD];
  int w = threadIdx.x / 32, l = threadIdx.x % 32;
  const float* src = x + (size_t)(blockIdx.x * 8 + w) * 1024;
  for (int r = 0; r < 32; ++r) t[w][r][l] = src[r * 32 + l];
  __syncwarp();
  float acc = 0.f;
  for (int k = 0; k < REPS; ++k)
    for (int r = 0; r < 32; ++r) acc += t[w][l][(r + k) & 31];
  y[(blockIdx.x * 8 + w) * 32 + l] = acc;
}
'''

ILP = r'''
#ifndef CHAINS
#define CHAINS 1
#endif
#ifndef ITERS
#define ITERS 2048
#endif
extern "C" __global__ void ilp(float* out, float a, float b) {
  float x[CHAINS];
  #pragma unroll
  for (int c = 0; c < CHAINS; ++c) x[c] = threadIdx.x + c;
  for (int i = 0; i < ITERS; ++i) {
    #pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = fmaf(x[c], a, b);
  }
  float s = 0.f;
  #pragma unroll
  for (int c = 0; c < CHAINS; ++c) s += x[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
'''

L2SHARE = r'''
#ifndef SHARED
#define SHARED 1
#endif
// every CTA streams SPAN bytes: the same SPAN (SHARED 1: L2 hits after the first CTAs) or its own (SHARED 0)
extern "C" __global__ void l2share(const float4* __restrict__ x, float* out, long long span16) {
  const float4* p = x + (SHARED ? 0 : (size_t)blockIdx.x * span16);
  float acc = 0.f;
  for (long long i = threadIdx.x; i < span16; i += blockDim.x) { float4 v = p[i]; acc += v.x + v.w; }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
'''

L1HIT = r'''
#ifndef R
#define R 8
#endif
extern "C" __global__ void stencil(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x + R;
  if (i >= n - R) return;
  float acc = 0.f;
  #pragma unroll
  for (int d = -R; d <= R; ++d) acc += x[i + d];
  y[i] = acc;
}
'''

REM = r'''
extern "C" __global__ void rem_index(const float* __restrict__ a, float* __restrict__ b, unsigned n, unsigned m) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.f;
  for (unsigned j = 0; j < n; ++j) acc += a[(i + j * 37) % m];
  b[i] = acc;
}
'''

# a naive transpose with a 1-D index (row = i % n, col = i / n): a warp reads one column, 32 sectors of 4 useful
# bytes; the CTA n / blockDim later reads the next column from the same sectors (an L2 hit on the GPU).  The
# footprint is no translation in blockIdx (memsys.infer), so only the compulsory cap bounds its DRAM reads
TRANSPOSE_1D = r'''
extern "C" __global__ void transpose_1d(const float* __restrict__ in, float* __restrict__ out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned row = i % n, col = i / n;
  out[(size_t)col * n + row] = in[(size_t)row * n + col];
}
'''

# the same with the strided side on the store: coalesced reads, every thread's 4-B write its own sector (one L2
# write request per element; round 3: the L2 takes such writes at half its single-sector read rate, H100 ncu)
TRANSPOSE_1D_W = r'''
extern "C" __global__ void transpose_1d_w(const float* __restrict__ in, float* __restrict__ out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned row = i % n, col = i / n;
  out[(size_t)row * n + col] = in[(size_t)col * n + row];
}
'''


def series() -> list:
    """The calibration series as kernel rows of benchmarks/validate_timing.py (name, group, kind "raw", src, entry,
    grid, block, smem, args, region: bytes of input per set, inputs rotate over > 4 x L2; check: the reference the
    GPU side compares with, or None)."""
    K = []
    for step in SGEMM_STEPS:
        for n in ((1024, 2048) if step in ("naive", "coalesced") else (1024, 2048, 4096)):
            g, b = sgemm_launch(step, n)
            K.append(dict(kind="raw", smem=0, name=f"sgemm {step} {n}", group=f"sgemm {n}", src=SGEMM, entry=step, grid=g, block=b,
                          args=[("in", 2 * n * n * 4, 0), ("inoff", n * n * 4), ("out", n * n * 4), ("i32", n),
                                ("i32", n), ("i32", n)], region=2 * n * n * 4, check=("sgemm", n)))
    for n in (1 << 24, 1 << 26):
        for k in ("atomic", "tree_mod", "shfl", "vec_shfl"):
            grid = (n // 256, 1, 1) if k in ("atomic", "tree_mod") else (132 * 8, 1, 1)
            tail = [("i32", n), ("u32", 2)] if k == "tree_mod" else [("i32", n // 4 if k == "vec_shfl" else n)]
            K.append(dict(kind="raw", smem=0, name=f"reduce {k} 2^{int(math.log2(n))}", group=f"reduce 2^{int(math.log2(n))}",
                          src=REDUCE, entry=k, grid=grid, block=(256, 1, 1),
                          args=[("in", 4 * n, 0), ("zero4",)] + tail, region=4 * n, check=("sum", n)))
    for pad in (0, 1):
        K.append(dict(kind="raw", smem=0, name=f"bank transpose pad {pad}", group="bank", src=_defines(PAD=pad, REPS=64) + BANK,
                      entry="bank", grid=(132 * 4, 1, 1), block=(256, 1, 1),
                      args=[("in", 132 * 4 * 8 * 4096, 0), ("out", 132 * 4 * 8 * 128)], region=0, check=None))
    for chains in (1, 2, 4, 8):
        for wps in (1, 8):
            K.append(dict(kind="raw", smem=0, name=f"ilp {chains} chains, {wps} warp(s)/SMSP", group=f"ilp {wps}",
                          src=_defines(CHAINS=chains, ITERS=4096) + ILP, entry="ilp", grid=(132, 1, 1),
                          block=(128 * wps, 1, 1), args=[("out", 132 * 1024 * 4), ("f32", 0.999), ("f32", 0.5)],
                          region=0, check=None))
    span = 2 << 20
    for shared in (1, 0):
        nct = 264
        K.append(dict(kind="raw", smem=0, name=f"l2 {'shared' if shared else 'private'} 264 CTAs x 2 MB", group="l2share",
                      src=_defines(SHARED=shared) + L2SHARE, entry="l2share", grid=(nct, 1, 1),
                      block=(512, 1, 1), args=[("in", span * (1 if shared else nct), 0), ("out", nct * 512 * 4),
                                               ("i64", span // 16)],
                      region=span * (1 if shared else nct) if not shared else 0, check=None))
    n = 1 << 24
    for r in (1, 4, 8):
        K.append(dict(kind="raw", smem=0, name=f"stencil R={r} 2^24", group="stencil", src=_defines(R=r) + L1HIT, entry="stencil",
                      grid=(n // 256, 1, 1), block=(256, 1, 1), args=[("in", 4 * n, 0), ("out", 4 * n), ("i32", n)],
                      region=4 * n, check=None))
    K.append(dict(kind="raw", smem=0, name="rem index 64 x 1M", group="rem", src=REM, entry="rem_index", grid=(132 * 8, 1, 1),
                  block=(256, 1, 1), args=[("in", 4 << 20, 0), ("out", 132 * 8 * 256 * 4), ("u32", 64),
                                           ("u32", 1 << 20)], region=4 << 20, check=None))
    return K


def series_heldout() -> list:
    """Own kernels at sizes and configurations the calibration series does not have, predicted (and the predictions
    committed) before they were measured: a check that the calibration generalises within this style of kernel
    (not the out-of-sample corpus of benchmarks/timing_corpus/)."""
    K = []
    for step in ("reg2d", "vec2d", "smem"):
        n = 1536
        g, b = sgemm_launch(step, n)
        K.append(dict(kind="raw", smem=0, name=f"sgemm {step} {n}", group=f"sgemm {n}", src=SGEMM, entry=step,
                      grid=g, block=b, args=[("in", 2 * n * n * 4, 0), ("inoff", n * n * 4), ("out", n * n * 4),
                                              ("i32", n), ("i32", n), ("i32", n)], region=2 * n * n * 4,
                      check=("sgemm", n)))
    n = 1 << 25
    for k in ("tree_mod", "shfl", "vec_shfl"):
        grid = (n // 256, 1, 1) if k == "tree_mod" else (132 * 8, 1, 1)
        tail = [("i32", n), ("u32", 2)] if k == "tree_mod" else [("i32", n // 4 if k == "vec_shfl" else n)]
        K.append(dict(kind="raw", smem=0, name=f"reduce {k} 2^25", group="reduce 2^25", src=REDUCE, entry=k,
                      grid=grid, block=(256, 1, 1), args=[("in", 4 * n, 0), ("zero4",)] + tail, region=4 * n,
                      check=("sum", n)))
    n = 1 << 24
    for r in (2, 16):
        K.append(dict(kind="raw", smem=0, name=f"stencil R={r} 2^24", group="stencil", src=_defines(R=r) + L1HIT,
                      entry="stencil", grid=(n // 256, 1, 1), block=(256, 1, 1),
                      args=[("in", 4 * n, 0), ("out", 4 * n), ("i32", n)], region=4 * n, check=None))
    for chains, wps in ((4, 2), (8, 4)):
        K.append(dict(kind="raw", smem=0, name=f"ilp {chains} chains, {wps} warp(s)/SMSP", group="ilp",
                      src=_defines(CHAINS=chains, ITERS=4096) + ILP, entry="ilp", grid=(132, 1, 1),
                      block=(128 * wps, 1, 1), args=[("out", 132 * 1024 * 4), ("f32", 0.999), ("f32", 0.5)],
                      region=0, check=None))
    for shared, span in ((1, 4 << 20), (0, 1 << 20)):
        K.append(dict(kind="raw", smem=0, name=f"l2 {'shared' if shared else 'private'} 264 CTAs x {span >> 20} MB",
                      group="l2share", src=_defines(SHARED=shared) + L2SHARE, entry="l2share", grid=(264, 1, 1),
                      block=(512, 1, 1), args=[("in", span * (1 if shared else 264), 0), ("out", 264 * 512 * 4),
                                               ("i64", span // 16)],
                      region=0 if shared else span * 264, check=None))
    return K

CPASYNC = r'''
extern "C" __global__ void k_async(const int4 *x, int *out, int steps) {
    __shared__ int4 s[256];
    int acc = 0;
    for (int i = 0; i < steps; ++i) {
        const int4 *src = x + ((size_t)blockIdx.x * steps + i) * 256 + threadIdx.x;
        unsigned d = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(d), "l"(src));
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 0;\n" ::);
        __syncthreads();
        acc += s[(threadIdx.x + 1) & 255].x;
        __syncthreads();
    }
    out[blockIdx.x * 256 + threadIdx.x] = acc;
}
extern "C" __global__ void k_mbar(const int4 *x, int *out, int steps) {
    __shared__ int4 s[256];
    __shared__ unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared.b64 [%0], 256;\n" :: "r"(b));
    __syncthreads();
    int acc = 0;
    for (int i = 0; i < steps; ++i) {
        const int4 *src = x + ((size_t)blockIdx.x * steps + i) * 256 + threadIdx.x;
        unsigned d = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(d), "l"(src));
        asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" :: "r"(b));
        asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n"
                     " @!p bra W;\n}\n" :: "r"(b), "r"(i & 1));
        acc += s[(threadIdx.x + 1) & 255].x;
        __syncthreads();
    }
    out[blockIdx.x * 256 + threadIdx.x] = acc;
}
extern "C" __global__ void k_sync(const int4 *x, int *out, int steps) {
    __shared__ int4 s[256];
    int acc = 0;
    for (int i = 0; i < steps; ++i) {
        s[threadIdx.x] = x[((size_t)blockIdx.x * steps + i) * 256 + threadIdx.x];
        __syncthreads();
        acc += s[(threadIdx.x + 1) & 255].x;
        __syncthreads();
    }
    out[blockIdx.x * 256 + threadIdx.x] = acc;
}
'''
