"""The read-only kernels behind the GEMV's read floor (NVRTC, no headers) and a driver-API launcher for them.

Shared by benchmarks/gemv_floor_h100.py (every kernel, the floor study) and benchmarks/bench_gemv_h100.py (its
"read floor" column, flat2_k); kept here so neither script imports the other. Kernels: empty_k, flat_k, rows_k,
flat2_k, blk_k (described in gemv_floor_h100.py).
"""
from __future__ import annotations

import ctypes

SRC = r"""
struct u4x { unsigned x, y, z, w; };
__device__ __forceinline__ u4x ld16(const unsigned char* p) {
  u4x v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ unsigned ld2(const unsigned char* p) {
  unsigned short v;
  asm volatile("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}
extern "C" __global__ void empty_k(unsigned* out) {
  if (out == nullptr && threadIdx.x == 1000) out[0] = 1u;
}
// n16 16-byte units from p; grid-stride; 4 loads in flight per thread
extern "C" __global__ void flat_k(const unsigned char* __restrict__ p, long long n16, unsigned* out) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    u4x v0 = ld16(p + 16 * i), v1 = ld16(p + 16 * (i + stride)), v2 = ld16(p + 16 * (i + 2 * stride)),
        v3 = ld16(p + 16 * (i + 3 * stride));
    acc ^= v0.x ^ v0.y ^ v0.z ^ v0.w ^ v1.x ^ v1.y ^ v1.z ^ v1.w;
    acc ^= v2.x ^ v2.y ^ v2.z ^ v2.w ^ v3.x ^ v3.y ^ v3.z ^ v3.w;
  }
  for (; i < n16; i += stride) { u4x v = ld16(p + 16 * i); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x9E3779B9u) out[0] = acc;
}
// two flat streams at once: n16 16-byte units of A from p and n16 / 8 of SFA from q (SFA bytes = A bytes / 8)
extern "C" __global__ void flat2_k(const unsigned char* __restrict__ p, const unsigned char* __restrict__ q,
                                   long long n16, unsigned* out) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  long long js = i;  // SFA unit: advances one grid stride per 8 A strides, so it covers n16 / 8 units once
  for (; i + 7 * stride < n16; i += 8 * stride, js += stride) {
    u4x v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) v[u] = ld16(p + 16 * (i + u * stride));
    u4x w = ld16(q + 16 * js);
#pragma unroll
    for (int u = 0; u < 8; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    acc ^= w.x;
  }
  for (; i < n16; i += stride) { u4x v = ld16(p + 16 * i); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x9E3779B9u) out[0] = acc;
}
// blocked streams: the buffer is cut into regions of x16 16-byte units, region r read by warp r mod (all warps),
// each warp reading its region front to back, 4 loads (2 KB) in flight per warp step
extern "C" __global__ void blk_k(const unsigned char* __restrict__ p, long long n16, long long x16, unsigned* out) {
  const int lane = threadIdx.x & 31;
  const long long nw = (long long)gridDim.x * (blockDim.x >> 5);
  const long long gw = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const long long nreg = n16 / x16;
  unsigned acc = 0;
  for (long long r = gw; r < nreg; r += nw) {
    const unsigned char* b = p + 16 * r * x16;
    for (long long o = lane; o < x16; o += 128) {
      u4x v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = (o + 32 * u < x16) ? ld16(b + 16 * (o + 32 * u)) : u4x{0, 0, 0, 0};
#pragma unroll
      for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  if (acc == 0x9E3779B9u) out[0] = acc;
}
// GEMV access pattern: grid (M / (R*W), L), block 32*W; a: (L, M, K/2), s: (L, M, K/16)
#ifndef RR
#define RR 4
#endif
#ifndef UU
#define UU 2
#endif
extern "C" __global__ void rows_k(const unsigned char* __restrict__ a, const unsigned char* __restrict__ s, int M,
                                  int K, unsigned* out) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int row0 = (blockIdx.x * (blockDim.x >> 5) + warp) * RR;
  if (row0 >= M) return;
  const int nchunk = K >> 5;
  const unsigned char* ar = a + ((size_t)blockIdx.y * M + row0) * (K >> 1);
  const unsigned char* sr = s + ((size_t)blockIdx.y * M + row0) * (K >> 4);
  unsigned acc = 0;
  for (int c0 = lane; c0 < nchunk; c0 += 32 * UU) {
    u4x v[UU][RR];
    unsigned q[UU][RR];
#pragma unroll
    for (int u = 0; u < UU; ++u)
#pragma unroll
      for (int r = 0; r < RR; ++r)
        if (c0 + 32 * u < nchunk) {
          v[u][r] = ld16(ar + (size_t)r * (K >> 1) + 16 * (c0 + 32 * u));
#ifndef NOSF
          q[u][r] = ld2(sr + (size_t)r * (K >> 4) + 2 * (c0 + 32 * u));
#else
          q[u][r] = 0;
#endif
        } else {
          v[u][r] = u4x{0, 0, 0, 0};
          q[u][r] = 0;
        }
#pragma unroll
    for (int u = 0; u < UU; ++u)
#pragma unroll
      for (int r = 0; r < RR; ++r) acc ^= v[u][r].x ^ v[u][r].y ^ v[u][r].z ^ v[u][r].w ^ q[u][r];
  }
  if (acc == 0x9E3779B9u) out[0] = acc;
}
"""


class Mod:
    def __init__(self, defines: str = "") -> None:
        from cuda.bindings import driver as drv

        from ptxlab.production.submission_gemv import nvrtc_cubin

        self.drv = drv
        self.ok(drv.cuInit(0))
        dev = self.ok(drv.cuDeviceGet(0))
        ctx = self.ok(drv.cuDevicePrimaryCtxRetain(dev))
        self.ok(drv.cuCtxSetCurrent(ctx))
        self.sms = self.ok(drv.cuDeviceGetAttribute(
            drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
        self.mod = self.ok(drv.cuModuleLoadData(nvrtc_cubin("sm_90a", defines + SRC)))
        self.f = {n: self.ok(drv.cuModuleGetFunction(self.mod, n.encode()))
                  for n in ("empty_k", "flat_k", "rows_k", "flat2_k", "blk_k")}

    def ok(self, res):
        if res[0] != self.drv.CUresult.CUDA_SUCCESS:
            raise RuntimeError(repr(res[0]))
        return None if len(res) == 1 else res[1]

    def packed(self, vals):
        ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])
        return (vals, ptrs)

    def launch(self, name, grid, block, packed, stream):
        self.ok(self.drv.cuLaunchKernel(self.f[name], *grid, block, 1, 1, 0, self.drv.CUstream(stream),
                                        ctypes.addressof(packed[1]), 0))
