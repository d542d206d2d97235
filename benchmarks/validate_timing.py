"""Validate the timing model: measure kernels on a GPU (CUDA events) and predict them on the emulator (timing=gpu).

    PYTHONPATH=. python3 benchmarks/validate_timing.py --gpu-side [--micro]      # on the GPU: writes $OUT/*.json
    python benchmarks/validate_timing.py --predict h100 --measured measured_h100.json [--only NAME ...]

GPU side (``--gpu-side``): every kernel of KERNELS is compiled with bare NVRTC (as bench_gemv_h100.py does) and timed
with per-launch CUDA events behind a GPU sleep, inputs rotated through buffers larger than 4 x L2 so every launch
reads DRAM (benchmarks/bench_gemv_h100.py time_launches); the median is the measurement. ``--micro`` first runs the
microbenchmarks the H100 parameter table is calibrated from (copy bandwidth, empty-kernel launch, CTA launch rounds,
pointer-chase latencies, L2 bandwidth, SM clock under FMA load, dependent-FMA latency, shared-memory bandwidth,
one-SM read bandwidth); results in $OUT/micro_<gpu>.json and printed.  ``--micro-cluster`` runs the cluster probes
(DSMEM pointer-chase latency, DSMEM bandwidth, barrier.cluster round trip for cluster 2 / 4 / 8 x 1 / 4 / 8 warps per
CTA, idle and all-SM; mbarrier arrives .release.cluster / .relaxed.cluster / plain to k = 1 / 3 / 7 peers or the own
CTA; the same barrier / .release.cluster loops from 1 cluster to every SM with 1, 2, 4 CTAs per SM (load
probes; 16 / 32 warps per CTA and DSMEM with 1024-thread CTAs: the wide-CTA probes);
ptxlab/timing/synthetic_cluster.py) into "micro_cluster"; ``--calibrate-cluster`` derives the cluster
law from them (params.py).  Kernels with a ``cluster`` entry are launched with cuLaunchKernelEx (cluster dimension
attribute).
Emulator side (``--predict GPU``): each kernel runs on ``open_device("emu", timing=GPU)`` with the same grid and
sizes (one input set); the table prints predicted vs measured, |error|, per-shape ranking, median and max |error|.
No parameter is fitted to these kernels: the table is the model's out-of-the-box error.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from ptxlab.timing import synthetic as S  # noqa: E402
from ptxlab.timing import synthetic_cluster as SC  # noqa: E402


MICRO_SRC = r"""
extern "C" __global__ void chase(const unsigned* __restrict__ next, unsigned start, int hops, unsigned* out,
                                 long long* t) {
  unsigned j = start;
  long long c0 = clock64();
  unsigned long long g0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  for (int i = 0; i < hops; ++i) j = __ldcg(next + j);
  long long c1 = clock64();
  unsigned long long g1; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  out[0] = j; t[0] = c1 - c0; t[1] = (long long)(g1 - g0);
}
extern "C" __global__ void clk_fma(float* out, long long* t, int iters, float a, float b) {
  long long c0 = clock64();
  unsigned long long g0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
      x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
    }
  }
  long long c1 = clock64();
  unsigned long long g1; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
  if (threadIdx.x == 0) { t[2 * blockIdx.x] = c1 - c0; t[2 * blockIdx.x + 1] = (long long)(g1 - g0); }
}
extern "C" __global__ void dep_fma(float* out, long long* t, int n, float a, float b) {
  float x = threadIdx.x;
  long long c0 = clock64();
  for (int i = 0; i < n; ++i) { x = fmaf(x, a, b); x = fmaf(x, a, b); x = fmaf(x, a, b); x = fmaf(x, a, b); }
  long long c1 = clock64();
  out[threadIdx.x] = x;
  if (threadIdx.x == 0) t[0] = c1 - c0;
}
extern "C" __global__ void l2_read(const uint4* __restrict__ p, long long n16, int passes, unsigned* out) {
  unsigned acc = 0;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (int r = 0; r < passes; ++r)
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += stride) {
      uint4 v = __ldcg(p + i); acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  if (acc == 0x9E3779B9u) out[0] = acc;
}
// mbarrier ping-pong between warp 0 and warp 1: n round trips (2 phase completions + 2 wakes each)
extern "C" __global__ void mbar_pingpong(int n, long long* t) {
  __shared__ alignas(8) unsigned long long bar[2];
  unsigned a = (unsigned)__cvta_generic_to_shared(&bar[0]), b = (unsigned)__cvta_generic_to_shared(&bar[1]);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(a));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  long long c0 = clock64();
  for (int i = 0; i < n; ++i) {
    unsigned mine = w == 0 ? b : a, other = w == 0 ? a : b;
    if (w == 0 && lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(other) : "memory");
    asm volatile("{\n\t.reg .pred P;\nW_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t"
                 "@!P bra W_%=;\n\t}" :: "r"(mine), "r"(i & 1) : "memory");
    if (w == 1 && lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(other) : "memory");
  }
  long long c1 = clock64();
  if (threadIdx.x == 0) t[0] = c1 - c0;
}
extern "C" __global__ void bar_loop(int n, long long* t) {
  long long c0 = clock64();
  for (int i = 0; i < n; ++i) __syncthreads();
  long long c1 = clock64();
  if (threadIdx.x == 0) t[0] = c1 - c0;
}
// one bulk copy of `bytes` then wait, n times (1 thread): the bulk-copy round trip
extern "C" __global__ void bulk_rt(const unsigned char* __restrict__ src, int bytes, int n, long long stride,
                                   long long* t) {
  __shared__ alignas(128) unsigned char buf[16384];
  __shared__ alignas(8) unsigned long long bar;
  unsigned bb = (unsigned)__cvta_generic_to_shared(&bar), dst = (unsigned)__cvta_generic_to_shared(buf);
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bb));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  long long c0 = clock64();
  for (int i = 0; i < n; ++i) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bb), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(dst), "l"(src + i * stride), "r"(bytes), "r"(bb) : "memory");
    asm volatile("{\n\t.reg .pred P;\nW_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t"
                 "@!P bra W_%=;\n\t}" :: "r"(bb), "r"(i & 1) : "memory");
  }
  long long c1 = clock64();
  t[0] = c1 - c0;
}
extern "C" __global__ void one_sm_read(const uint4* __restrict__ p, long long n16, unsigned* out) {
  unsigned acc = 0;
  for (long long i = threadIdx.x; i + 3 * blockDim.x < n16; i += 4 * blockDim.x) {
    uint4 v0 = __ldcg(p + i), v1 = __ldcg(p + i + blockDim.x), v2 = __ldcg(p + i + 2 * blockDim.x),
          v3 = __ldcg(p + i + 3 * blockDim.x);
    acc ^= v0.x ^ v1.y ^ v2.z ^ v3.w;
  }
  if (acc == 0x9E3779B9u) out[0] = acc;
}
"""

SMS_H100 = 132


# ------------------------------------------------------------------------------------------------ kernel table
def kernels() -> list:
    """The validation kernels: dicts with name, group (ranking is checked within a group), kind and sizes."""
    K = []
    shapes = [(7168, 16384, 1), (4096, 7168, 8), (7168, 2048, 4)]
    from ptxlab.production.plan_gemv import pick_config
    for m, k, l in shapes:
        K.append(dict(name=f"gemv tuned {m}x{k}x{l}", group=f"{m}x{k}x{l}", kind="gemv", shape=(m, k, l),
                      config=tuple(pick_config(m, k, l, "sm_90a"))))
    K.append(dict(name="gemv reg(4,2,2) 7168x16384x1", group="7168x16384x1", kind="gemv", shape=(7168, 16384, 1),
                  config=(4, 2, 2, 1, 0)))
    K.append(dict(name="gemv reg(2,4,2) 4096x7168x8", group="4096x7168x8", kind="gemv", shape=(4096, 7168, 8),
                  config=(2, 4, 2, 1, 0)))
    K.append(dict(name="gemv reg(8,1,2) 7168x2048x4", group="7168x2048x4", kind="gemv", shape=(7168, 2048, 4),
                  config=(8, 1, 2, 1, 0)))
    K.append(dict(name="gemv tuned 2432x4608x2 (test)", group="2432x4608x2", kind="gemv", shape=(2432, 4608, 2),
                  config=tuple(pick_config(2432, 4608, 2, "sm_90a"))))
    K.append(dict(name="gemv tuned 512x4096x2 (test)", group="512x4096x2", kind="gemv", shape=(512, 4096, 2),
                  config=tuple(pick_config(512, 4096, 2, "sm_90a"))))
    na = 7168 * 16384 // 2
    K.append(dict(name="read floor flat2 (A+SFA of 7168x16384)", group="7168x16384x1", kind="raw", src="floor",
                  entry="flat2_k", grid=(SMS_H100 * 4, 1, 1), block=(256, 1, 1), smem=0,
                  args=[("in", na + na // 8, 0), ("inoff", na), ("i64", na // 16), ("out", 64)], region=na + na // 8))
    n = 1 << 22
    K.append(dict(name="stream copy 64+64 MB", group="stream", kind="raw", src=S.STREAM, entry="stream",
                  grid=(SMS_H100 * 4, 1, 1), block=(256, 1, 1), smem=0,
                  args=[("in", 16 * n, 0), ("out", 16 * n), ("i32", n)], region=16 * n))
    chunks = 32
    K.append(dict(name="bulk-copy ring 264 CTAs x 32 x 8 KB", group="pipe", kind="raw",
                  src=S.defines(STAGES=4, WORK=1) + S.PIPE, entry="pipe", grid=(2 * SMS_H100, 1, 1),
                  block=(64, 1, 1), smem=0,
                  args=[("in", 2 * SMS_H100 * chunks * 8192, 0), ("out", 2 * SMS_H100 * 128), ("i32", chunks)],
                  region=2 * SMS_H100 * chunks * 8192))
    K.append(dict(name="bulk-copy ring 1 CTA, 2 stages (latency)", group="pipe1", kind="raw",
                  src=S.defines(STAGES=2, WORK=1) + S.PIPE, entry="pipe", grid=(1, 1, 1), block=(64, 1, 1), smem=0,
                  args=[("in", chunks * 8192, 0), ("out", 128), ("i32", chunks)], region=chunks * 8192))
    K.append(dict(name="bulk-copy ring 1 CTA, 4 stages (latency)", group="pipe1", kind="raw",
                  src=S.defines(STAGES=4, WORK=1) + S.PIPE, entry="pipe", grid=(1, 1, 1), block=(64, 1, 1), smem=0,
                  args=[("in", chunks * 8192, 0), ("out", 128), ("i32", chunks)], region=chunks * 8192))
    K.append(dict(name="shared-memory loop (8 CTAs/SM)", group="smem", kind="raw", src=S.defines(ITERS=1024) + S.SMEM,
                  entry="smem_loop", grid=(SMS_H100 * 8, 1, 1), block=(256, 1, 1), smem=0,
                  args=[("out", SMS_H100 * 8 * 256 * 4), ("i32", 1)], region=0))
    K.append(dict(name="FMA loop (8 CTAs/SM)", group="fma", kind="raw", src=S.defines(ITERS=1024) + S.FMA,
                  entry="fma_loop", grid=(SMS_H100 * 8, 1, 1), block=(256, 1, 1), smem=0,
                  args=[("out", SMS_H100 * 8 * 256 * 4), ("f32", 0.999), ("f32", 0.5)], region=0))
    K.append(dict(name="tiny launch (1 CTA stream, 4 KB)", group="tiny", kind="raw", src=S.STREAM, entry="stream",
                  grid=(1, 1, 1), block=(256, 1, 1), smem=0,
                  args=[("in", 4096, 0), ("out", 4096), ("i32", 256)], region=4096))
    K += cluster_kernels()
    return K


def cluster_kernels() -> list:
    """Thread-block-cluster kernels (ptxlab/timing/synthetic_cluster.py): multicast streaming, DSMEM ring exchange,
    cluster-barrier loop.  The CL = 1 ring is the non-multicast reference of the multicast rows (ranking group)."""
    K = []
    nct, chunks = 2 * SMS_H100, 32
    for cl in (1, 2, 4):
        region = nct // cl * chunks * 8192
        K.append(dict(name=f"multicast ring, cluster {cl}, 264 CTAs x 32 x 8 KB" if cl > 1 else
                      "ring without cluster (multicast reference), 264 CTAs x 32 x 8 KB", group="mcast", kind="raw",
                      src=S.defines(CL=cl) + SC.MCAST, entry="mcast", grid=(nct, 1, 1), block=(160, 1, 1), smem=0,
                      cluster=(cl, 1, 1) if cl > 1 else None,
                      args=[("in", region, 0), ("out", nct * 128 * 4), ("i32", chunks)], region=region))
    K.append(dict(name="DSMEM ring exchange, cluster 2, 264 x 1024 thr x 128 it", group="dsmem", kind="raw",
                  src=S.defines(CL=2) + SC.DSMEM_RING, entry="dsmem_ring", grid=(nct, 1, 1), block=(1024, 1, 1),
                  smem=0, cluster=(2, 1, 1), args=[("out", nct * 1024 * 4), ("i32", 128)], region=0))
    K.append(dict(name="cluster barrier loop, cluster 4, 528 x 256 thr x 256 it", group="cbar", kind="raw",
                  src=S.defines(CL=4, WORK=8) + SC.CBAR, entry="cbar", grid=(4 * SMS_H100, 1, 1), block=(256, 1, 1),
                  smem=0, cluster=(4, 1, 1), args=[("out", 4 * SMS_H100 * 256 * 4), ("i32", 256), ("f32", 1.0001)],
                  region=0))
    return K


def _source(k: dict) -> str:
    if k["src"] == "floor":
        import read_kernels     # the floor kernels moved from gemv_floor_h100.py (its flat2_k)
        return read_kernels.SRC
    return k["src"]


# ------------------------------------------------------------------------------------------------ GPU side
class Drv:
    def __init__(self):
        from cuda.bindings import driver as drv
        self.drv = drv
        self.ok(drv.cuInit(0))
        dev = self.ok(drv.cuDeviceGet(0))
        ctx = self.ok(drv.cuDevicePrimaryCtxRetain(dev))
        self.ok(drv.cuCtxSetCurrent(ctx))
        self.sms = self.ok(drv.cuDeviceGetAttribute(drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                    dev))
        self.mods = {}

    def ok(self, res):
        if res[0] != self.drv.CUresult.CUDA_SUCCESS:
            raise RuntimeError(repr(res[0]))
        return None if len(res) == 1 else res[1]

    def func(self, src: str, entry: str, arch: str = "sm_90a"):
        from ptxlab.production.submission_gemv import nvrtc_compile
        key = (src, arch)
        if key not in self.mods:
            self.mods[key] = self.ok(self.drv.cuModuleLoadData(nvrtc_compile(src, arch, "k.cu")[1]))
        return self.ok(self.drv.cuModuleGetFunction(self.mods[key], entry.encode()))

    @staticmethod
    def pack(vals):
        ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])
        return (vals, ptrs)

    def launch(self, f, grid, block, smem, packed, stream, cluster=None):
        if cluster is None:
            self.ok(self.drv.cuLaunchKernel(f, *grid, *block, smem, self.drv.CUstream(stream),
                                            ctypes.addressof(packed[1]), 0))
            return
        drv = self.drv     # as ptxlab/device/cuda.py _launch_cluster
        cfg = drv.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block
        cfg.sharedMemBytes = smem
        cfg.hStream = drv.CUstream(stream)
        attr = drv.CUlaunchAttribute()
        attr.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster
        cfg.attrs = [attr]
        cfg.numAttrs = 1
        self.ok(drv.cuLaunchKernelEx(cfg, f, ctypes.addressof(packed[1]), 0))


def _cvals(args, base: int, out: int):
    vals = []
    for a in args:
        if a[0] == "in":
            vals.append(ctypes.c_uint64(base + a[2]))
        elif a[0] == "inoff":
            vals.append(ctypes.c_uint64(base + a[1]))
        elif a[0] == "out":
            vals.append(ctypes.c_uint64(out))
        elif a[0] == "i32":
            vals.append(ctypes.c_int32(a[1]))
        elif a[0] == "i64":
            vals.append(ctypes.c_longlong(a[1]))
        elif a[0] == "f32":
            vals.append(ctypes.c_float(a[1]))
    return vals


def gpu_side(args) -> dict:
    import torch
    import bench_gemv_h100 as B

    torch.cuda.init()
    props = torch.cuda.get_device_properties(0)
    rep = {"device": props.name, "date": time.strftime("%Y-%m-%d"), "kernels": [], "errors": []}
    print(f"device: {props.name}, {props.multi_processor_count} SMs", flush=True)
    D = Drv()
    stream = torch.cuda.current_stream().cuda_stream
    sleep = int(1.98e9 * 3e-3)
    big = torch.empty((2 << 30) + (1 << 20), dtype=torch.uint8, device="cuda").random_(0, 255)
    out = torch.zeros(64 << 20, dtype=torch.uint8, device="cuda")
    base = big.data_ptr()
    for wanted, key, probe in ((args.micro, "micro", micro), (args.micro_cluster, "micro_cluster", micro_cluster)):
        if not wanted:
            continue
        try:
            rep[key] = probe(torch, B, D, big, out, stream, sleep)
        except Exception:  # noqa: BLE001
            rep["errors"].append(f"{key}: " + traceback.format_exc(limit=4))
            print(rep["errors"][-1], flush=True)
    for k in kernels():
        if args.only and not any(s in k["name"] for s in args.only):
            continue
        try:
            if k["kind"] == "gemv":
                r = gpu_gemv(torch, B, k, stream, sleep, args.iters)
            else:
                f = D.func(_source(k), k["entry"])
                region = max(k["region"], 1)
                # enough input sets that the rotation exceeds 4 x L2 (each set used about once for small regions)
                nreg = int(min(1024, max(2, math.ceil(4 * 50e6 / region)))) if k["region"] else 1
                step = (2 << 30) // nreg // 256 * 256
                packs = [D.pack(_cvals(k["args"], base + i * step, out.data_ptr())) for i in range(nreg)]
                fns = [lambda p=p: D.launch(f, k["grid"], k["block"], k["smem"], p, stream, k.get("cluster"))
                       for p in packs]
                fns[0]()
                torch.cuda.synchronize()
                r = B.time_launches(torch, fns, args.iters, sleep)
                r["input_sets"] = nreg
            r["name"] = k["name"]
            rep["kernels"].append(r)
            print(f"{k['name']:>45}: {r['median_us']:9.2f} us (p10 {r['p10_us']:.2f}, p90 {r['p90_us']:.2f})",
                  flush=True)
        except Exception:  # noqa: BLE001
            rep["errors"].append(f"{k['name']}: " + traceback.format_exc(limit=4))
            print(rep["errors"][-1], flush=True)
    o = os.environ.get("OUT")
    if o:
        tag = "h200" if "H200" in props.name else "h100" if "H100" in props.name else "gpu"
        Path(o, f"measured_{tag}.json").write_text(json.dumps(rep, indent=2))
    return rep


def gpu_gemv(torch, B, k, stream, sleep, iters) -> dict:
    from ptxlab.production.submission_gemv import CudaGemv
    m, kk, l = k["shape"]
    runner = CudaGemv(0, config=k["config"])
    nbytes = B.gemv_bytes(m, kk, l)
    nsets = int(min(32, max(2, math.ceil(4 * B.L2_BYTES / nbytes))))
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    sets = [B.make_set(torch, m, kk, l, gen) for _ in range(nsets)]
    packed = [runner.params(s["a"].data_ptr(), s["b"].data_ptr(), s["sfa"].data_ptr(), s["sfb"].data_ptr(),
                            s["c"].data_ptr(), m, kk, l) for s in sets]
    fns = [lambda p=p: runner.launch(0, 0, 0, 0, 0, m, kk, l, stream=stream, packed=p) for p in packed]
    fns[0]()
    torch.cuda.synchronize()
    ref = B.reference(torch, sets[0])
    exact = bool(torch.equal(sets[0]["c"].view(torch.int16), ref.view(torch.int16)))
    r = B.time_launches(torch, fns, iters, sleep)
    r["exact"] = exact
    r["grid"] = list(runner.plan(m, kk, l)[0])
    r["input_sets"] = nsets
    del sets
    torch.cuda.empty_cache()
    return r


def micro(torch, B, D, big, out, stream, sleep) -> dict:
    """The calibration microbenchmarks (printed; returned as a dict)."""
    res = {}
    pr = lambda k, v: (res.__setitem__(k, v), print(f"  micro {k}: {v}", flush=True))  # noqa: E731
    cp = B.copy_bandwidth(torch, sleep, 60)
    pr("copy_GBps", round(cp["GBps"], 1))
    f_empty = D.func(S.EMPTY, "empty_kernel")
    p0 = D.pack([ctypes.c_uint64(0)])
    r = B.time_launches(torch, [lambda: D.launch(f_empty, (1, 1, 1), (32, 1, 1), 0, p0, stream)], 200, sleep)
    pr("empty_1cta_us", round(r["median_us"], 3))
    r2 = B.time_launches(torch, [lambda: D.launch(f_empty, (D.sms * 64, 1, 1), (1024, 1, 1), 0, p0, stream)], 100,
                         sleep)
    pr("empty_64x1024thr_per_sm_us", round(r2["median_us"], 3))
    pr("cta_round_ns", round((r2["median_us"] - r["median_us"]) * 1e3 / 32, 1))   # 2 CTAs/SM at a time, 32 rounds
    f = D.func(MICRO_SRC, "chase")
    t = torch.zeros(4, dtype=torch.int64, device="cuda")
    hops = 20000
    for label, span in (("dram", 1 << 30), ("l2", 4 << 20)):
        nline = span // 128
        perm = np.random.default_rng(5).permutation(nline).astype(np.int64)
        nxt = np.zeros(span // 4, dtype=np.uint32)
        order = perm * 32
        nxt[order] = np.roll(order, -1)
        dev_next = torch.from_numpy(nxt).cuda()
        del nxt
        torch.cuda.synchronize()

        def chase(start, n):
            pk = D.pack([ctypes.c_uint64(dev_next.data_ptr()), ctypes.c_uint32(start), ctypes.c_int32(n),
                         ctypes.c_uint64(out.data_ptr()), ctypes.c_uint64(t.data_ptr())])
            D.launch(f, (1, 1, 1), (1, 1, 1), 0, pk, stream)
            torch.cuda.synchronize()
            return t[0].item() / n, t[1].item() / n
        vals = []
        if label == "l2":
            chase(int(order[0]), 2 * nline)              # every line of the 4 MiB chain into L2
            for r in range(3):
                vals.append(chase(int(order[0]), hops))
        else:                                            # fresh lines every run: never an L2 hit
            for r in range(3):
                vals.append(chase(int(order[(r + 1) * 200000]), hops))
        c, ns = sorted(vals)[1]
        pr(f"{label}_latency_cycles", round(c, 1))
        pr(f"{label}_latency_ns", round(ns, 1))
        del dev_next
        torch.cuda.empty_cache()
    f = D.func(MICRO_SRC, "mbar_pingpong")
    pk = D.pack([ctypes.c_int32(2000), ctypes.c_uint64(t.data_ptr())])
    for _ in range(2):
        D.launch(f, (1, 1, 1), (64, 1, 1), 0, pk, stream)
        torch.cuda.synchronize()
    pr("mbar_handoff_cycles", round(t[0].item() / 2000 / 2, 1))   # one arrive -> other warp's wait returns
    f = D.func(MICRO_SRC, "bar_loop")
    pk = D.pack([ctypes.c_int32(2000), ctypes.c_uint64(t.data_ptr())])
    for _ in range(2):
        D.launch(f, (1, 1, 1), (256, 1, 1), 0, pk, stream)
        torch.cuda.synchronize()
    pr("bar_sync_256thr_cycles", round(t[0].item() / 2000, 1))
    f = D.func(MICRO_SRC, "bulk_rt")
    for label, bytes_, stride, n in (("l2_1k", 1024, 0, 200), ("l2_8k", 8192, 0, 200), ("dram_1k", 1024, 1 << 20, 200),
                                     ("dram_8k", 8192, 1 << 20, 200)):
        pk = D.pack([ctypes.c_uint64(big.data_ptr() + (1 << 30)), ctypes.c_int32(bytes_), ctypes.c_int32(n),
                     ctypes.c_longlong(stride), ctypes.c_uint64(t.data_ptr())])
        for _ in range(2):
            D.launch(f, (1, 1, 1), (1, 1, 1), 0, pk, stream)
            torch.cuda.synchronize()
            if stride:
                break
        pr(f"bulk_roundtrip_{label}_cycles", round(t[0].item() / n, 1))
    f = D.func(MICRO_SRC, "clk_fma")
    nct = D.sms * 8
    tt = torch.zeros(2 * nct, dtype=torch.int64, device="cuda")
    iters = 4096
    pk = D.pack([ctypes.c_uint64(out.data_ptr()), ctypes.c_uint64(tt.data_ptr()), ctypes.c_int32(iters),
                 ctypes.c_float(0.999), ctypes.c_float(0.5)])
    fn = lambda: D.launch(f, (nct, 1, 1), (256, 1, 1), 0, pk, stream)  # noqa: E731
    fn()
    torch.cuda.synchronize()
    r = B.time_launches(torch, [fn], 20, sleep)
    tv = tt.view(-1, 2).double()
    clk = float((tv[:, 0] / tv[:, 1]).median())
    pr("sm_clock_ghz_under_fma", round(clk, 4))
    flops = 2.0 * 64 * iters * nct * 256
    pr("fma_tflops", round(flops / (r["median_us"] * 1e-6) / 1e12, 2))
    pr("fma_per_clk_per_sm", round(flops / 2 / (r["median_us"] * 1e-6) / (clk * 1e9) / D.sms, 1))
    f = D.func(MICRO_SRC, "dep_fma")
    n = 4096
    pk = D.pack([ctypes.c_uint64(out.data_ptr()), ctypes.c_uint64(t.data_ptr()), ctypes.c_int32(n),
                 ctypes.c_float(0.999), ctypes.c_float(0.5)])
    D.launch(f, (1, 1, 1), (32, 1, 1), 0, pk, stream)
    torch.cuda.synchronize()
    D.launch(f, (1, 1, 1), (32, 1, 1), 0, pk, stream)
    torch.cuda.synchronize()
    pr("dep_fma_latency_cycles", round(t[0].item() / (4 * n), 2))
    f = D.func(S.defines(ITERS=4096) + S.SMEM, "smem_loop")
    pk = D.pack([ctypes.c_uint64(out.data_ptr()), ctypes.c_int32(1)])
    fn = lambda: D.launch(f, (D.sms * 8, 1, 1), (256, 1, 1), 0, pk, stream)  # noqa: E731
    r = B.time_launches(torch, [fn], 20, sleep)
    nbytes = 16.0 * 4096 * D.sms * 8 * 256
    pr("smem_bytes_per_clk_per_sm", round(nbytes / (r["median_us"] * 1e-6) / (clk * 1e9) / D.sms, 1))
    f = D.func(MICRO_SRC, "l2_read")
    n16 = (8 << 20) // 16
    times = {}
    for passes in (2, 10):
        pk = D.pack([ctypes.c_uint64(big.data_ptr()), ctypes.c_longlong(n16), ctypes.c_int32(passes),
                     ctypes.c_uint64(out.data_ptr())])
        fn = lambda pk=pk: D.launch(f, (D.sms * 8, 1, 1), (256, 1, 1), 0, pk, stream)  # noqa: E731
        times[passes] = B.time_launches(torch, [fn], 30, sleep)["median_us"]
    pr("l2_GBps", round(8 * (8 << 20) / ((times[10] - times[2]) * 1e-6) / 1e9, 1))
    f = D.func(MICRO_SRC, "one_sm_read")
    n16 = (16 << 20) // 16
    packs = [D.pack([ctypes.c_uint64(big.data_ptr() + i * (256 << 20)), ctypes.c_longlong(n16),
                     ctypes.c_uint64(out.data_ptr())]) for i in range(6)]
    fns = [lambda p=p: D.launch(f, (1, 1, 1), (1024, 1, 1), 0, p, stream) for p in packs]
    r = B.time_launches(torch, fns, 12, sleep)
    pr("one_sm_read_bytes_per_clk", round((16 << 20) / ((r["median_us"] - res["empty_1cta_us"]) * 1e-6)
                                          / (clk * 1e9), 1))
    return res


def micro_cluster(torch, B, D, big, out, stream, sleep) -> dict:
    """Cluster probes (CUDA events; per-iteration cycles from the difference of two iteration counts, so the launch
    cancels): DSMEM dependent-load round trip, DSMEM bandwidth per SM, barrier.cluster round trip."""
    res = {}
    pr = lambda k, v: (res.__setitem__(k, v), print(f"  micro {k}: {v}", flush=True))  # noqa: E731
    clk = 1.979e9   # the H100's measured SM clock under load (params.H100.clock_ghz)

    def per_iter(f, grid, block, mk, n1, n2, cluster, reps=30):
        ts = {}
        for n in (n1, n2):
            pk = D.pack(mk(n))
            fn = lambda pk=pk: D.launch(f, grid, block, 0, pk, stream, cluster)  # noqa: E731
            fn()
            torch.cuda.synchronize()
            ts[n] = B.time_launches(torch, [fn], reps, sleep)["median_us"]
        return (ts[n2] - ts[n1]) * 1e-6 * clk / (n2 - n1), ts
    f = D.func(S.defines(CL=2) + SC.DSMEM_CHASE, "dsmem_chase")
    c, ts = per_iter(f, (2, 1, 1), (32, 1, 1), lambda n: [ctypes.c_uint64(out.data_ptr()), ctypes.c_uint32(7),
                                                          ctypes.c_int32(n)], 1024, 8192, (2, 1, 1))
    pr("dsmem_chase_cycles_per_hop", round(c, 1))
    pr("dsmem_chase_us", {str(k): round(v, 3) for k, v in ts.items()})
    f = D.func(S.defines(CL=2) + SC.DSMEM_BW, "dsmem_bw")
    nct = 2 * D.sms
    c, ts = per_iter(f, (nct, 1, 1), (1024, 1, 1), lambda n: [ctypes.c_uint64(out.data_ptr()), ctypes.c_int32(n)],
                     256, 2048, (2, 1, 1))
    pr("dsmem_bw_bytes_per_clk_per_sm", round(2 * 1024 * 16 / c, 1))   # 2 CTAs/SM x 1024 thr x 16 B per iteration
    pr("dsmem_bw_us", {str(k): round(v, 3) for k, v in ts.items()})
    f = D.func(S.defines(CL=2, WORK=0) + SC.CBAR, "cbar")
    c, ts = per_iter(f, (2, 1, 1), (32, 1, 1), lambda n: [ctypes.c_uint64(out.data_ptr()), ctypes.c_int32(n),
                                                          ctypes.c_float(1.0)], 1024, 8192, (2, 1, 1))
    pr("cluster_barrier_cycles_per_iter", round(c, 1))
    pr("cluster_barrier_us", {str(k): round(v, 3) for k, v in ts.items()})
    # barrier.cluster arrive + wait vs cluster size and warps per CTA (one cluster on an idle GPU), then with every
    # SM busy (1 CTA per SM) and with 2 / 4 co-resident 2-CTA clusters per SM
    cb = {}
    for (cl, w, per_sm) in CBAR_PROBES:
      try:
        f = D.func(S.defines(CL=cl, WORK=0) + SC.CBAR, "cbar")
        grid = cl if per_sm == 0 else (D.sms // cl) * cl * per_sm
        c, _ = per_iter(f, (grid, 1, 1), (32 * w, 1, 1), lambda n: [ctypes.c_uint64(out.data_ptr()), ctypes.c_int32(n),
                        ctypes.c_float(1.0)], 512, 4096, (cl, 1, 1), reps=20)
        cb[f"{cl},{w},{per_sm}"] = round(c, 1)
        print(f"  micro cbar cluster {cl}, {w} warps/CTA, {per_sm or 'one cluster'} CTAs/SM: {c:.1f} cycles/iter",
              flush=True)
      except Exception:  # noqa: BLE001
        print(f"  micro cbar {cl},{w},{per_sm} FAILED: " + traceback.format_exc(limit=3), flush=True)
    res["cbar_cycles_per_iter"] = cb           # key "cluster,warps per CTA,CTAs per SM (0: one cluster only)"
    ar = {}
    for name, d, w, per_sm in ARRIVE_PROBES:
      try:
        f = D.func(S.defines(**d) + SC.ARRIVE, "arrive_probe")
        cl = d["CL"]
        grid = cl if per_sm == 0 else (D.sms // cl) * cl * per_sm
        c, _ = per_iter(f, (grid, 1, 1), (32 * w, 1, 1), lambda n: [ctypes.c_uint64(out.data_ptr()),
                        ctypes.c_int32(n)], 256, 2048, (cl, 1, 1), reps=20)
        ar[name] = round(c, 1)
        print(f"  micro arrive {name}: {c:.1f} cycles/iter", flush=True)
      except Exception:  # noqa: BLE001
        print(f"  micro arrive {name} FAILED: " + traceback.format_exc(limit=3), flush=True)
    res["arrive_cycles_per_iter"] = ar
    # load dependence (timing4): the same barrier.cluster / .release.cluster loops with a growing number of CTAs
    # resident at once (the block scheduler spreads them over the SMs: 1 CTA per SM up to the SM count, then 2, 4)
    cl_load, ar_load = {}, {}
    for (cl, w, ctas) in CBAR_LOAD_PROBES:
      try:
        f = D.func(S.defines(CL=cl, WORK=0) + SC.CBAR, "cbar")
        c, _ = per_iter(f, (ctas, 1, 1), (32 * w, 1, 1), lambda n: [ctypes.c_uint64(out.data_ptr()),
                        ctypes.c_int32(n), ctypes.c_float(1.0)], 512, 4096, (cl, 1, 1), reps=15)
        cl_load[f"{cl},{w},{ctas}"] = round(c, 1)
        print(f"  micro cbar load cluster {cl}, {w} warps/CTA, {ctas} CTAs: {c:.1f} cycles/iter", flush=True)
      except Exception:  # noqa: BLE001
        print(f"  micro cbar load {cl},{w},{ctas} FAILED: " + traceback.format_exc(limit=3), flush=True)
    res["cbar_load_cycles_per_iter"] = cl_load     # key "cluster,warps per CTA,CTAs in the grid"
    for (w, ctas) in ARRIVE_LOAD_PROBES:
      try:
        f = D.func(S.defines(CL=2, K=1, SEM=1) + SC.ARRIVE, "arrive_probe")
        c, _ = per_iter(f, (ctas, 1, 1), (32 * w, 1, 1), lambda n: [ctypes.c_uint64(out.data_ptr()),
                        ctypes.c_int32(n)], 256, 2048, (2, 1, 1), reps=15)
        ar_load[f"{w},{ctas}"] = round(c, 1)
        print(f"  micro arrive load rel k1 cl2, {w} warps/CTA, {ctas} CTAs: {c:.1f} cycles/iter", flush=True)
      except Exception:  # noqa: BLE001
        print(f"  micro arrive load {w},{ctas} FAILED: " + traceback.format_exc(limit=3), flush=True)
    res["arrive_load_cycles_per_iter"] = ar_load   # key "warps per CTA,CTAs in the grid" (.release.cluster, k = 1)
    # wide CTAs (timing5): the DSMEM chase / bandwidth probes with 1024-thread CTAs, 1 or 2 per SM (every lane of
    # the 32 warps chases its own slot of the peer's table: one 128-B warp request per warp per hop)
    dw = {}
    for (kind, ctas) in DSMEM_WIDE_PROBES:
      try:
        if kind == "chase":
            f = D.func(S.defines(CL=2) + SC.DSMEM_CHASE, "dsmem_chase")
            mk = lambda n: [ctypes.c_uint64(out.data_ptr()), ctypes.c_uint32(7), ctypes.c_int32(n)]  # noqa: E731
        else:
            f = D.func(S.defines(CL=2) + SC.DSMEM_BW, "dsmem_bw")
            mk = lambda n: [ctypes.c_uint64(out.data_ptr()), ctypes.c_int32(n)]  # noqa: E731
        c, _ = per_iter(f, (ctas, 1, 1), (1024, 1, 1), mk, 256, 2048, (2, 1, 1), reps=15)
        dw[f"{kind},{ctas}"] = round(c, 1)
        print(f"  micro dsmem wide {kind}, 1024 thr x {ctas} CTAs: {c:.1f} cycles/iter", flush=True)
      except Exception:  # noqa: BLE001
        print(f"  micro dsmem wide {kind},{ctas} FAILED: " + traceback.format_exc(limit=3), flush=True)
    res["dsmem_wide_cycles_per_iter"] = dw         # key "chase|bw,CTAs in the grid" (1024 threads, cluster 2)
    # diagnostic only (no parameter is derived from it): the multicast ring with CUTLASS's arrive form (REL = 0,
    # no cluster-scope release), to separate the release's cost from the multicast's
    diag = {}
    nct, chunks = 2 * D.sms, 32
    for cl in (2, 4):
      try:
        f = D.func(S.defines(CL=cl, REL=0) + SC.MCAST, "mcast")
        region = nct // cl * chunks * 8192
        nreg = int(min(1024, max(2, math.ceil(4 * 50e6 / region))))
        step = (2 << 30) // nreg // 256 * 256
        packs = [D.pack([ctypes.c_uint64(big.data_ptr() + i * step), ctypes.c_uint64(out.data_ptr()),
                         ctypes.c_int32(chunks)]) for i in range(nreg)]
        fns = [lambda p=p: D.launch(f, (nct, 1, 1), (160, 1, 1), 0, p, stream, (cl, 1, 1)) for p in packs]
        fns[0]()
        torch.cuda.synchronize()
        diag[f"mcast_rel0_cluster{cl}_us"] = round(B.time_launches(torch, fns, 100, sleep)["median_us"], 2)
        print(f"  micro diag multicast ring REL=0 cluster {cl}: {diag[f'mcast_rel0_cluster{cl}_us']} us", flush=True)
      except Exception:  # noqa: BLE001
        print(f"  micro diag mcast {cl} FAILED: " + traceback.format_exc(limit=3), flush=True)
    res["diag"] = diag
    return res


# (cluster size, warps per CTA, CTAs per SM; 0 = one cluster on an idle GPU)
CBAR_PROBES = [(cl, w, 0) for cl in (2, 4, 8) for w in (1, 4, 8)] + \
    [(cl, w, 1) for cl in (2, 4, 8) for w in (1, 8)] + [(2, 8, 2), (2, 8, 4)]
# load probes (cluster size, warps per CTA, CTAs in the grid): 1 cluster .. every SM with 1, 2, 4 CTAs (SMS_H100 =
# 132).  The validation kernel's own configuration (cluster 4 x 8 warps, 528 CTAs) is deliberately not probed.
CBAR_LOAD_PROBES = [(4, 8, n) for n in (4, 8, 16, 32, 64, 96, 132, 264)] + \
    [(2, 8, n) for n in (2, 8, 32, 66, 132, 264, 528)] + [(8, 8, n) for n in (8, 16, 32, 64, 128)] + \
    [(4, w, 132) for w in (2, 4, 16)] + [(2, 4, 264), (2, 4, 528), (4, 4, 264), (4, 2, 528)] + \
    [(2, 16, n) for n in (2, 132, 264, 528)] + [(2, 32, n) for n in (2, 132, 264)] + \
    [(4, 16, n) for n in (4, 264, 528)] + [(4, 32, n) for n in (4, 132, 264)]
# (timing5: 16- and 32-warp CTAs, 1 cluster / 1 / 2 / 4 CTAs per SM.  The DSMEM ring's own kernel is not probed.)
# DSMEM with 1024-thread CTAs of 2-CTA clusters: (probe, CTAs in the grid): one cluster, 1 and 2 CTAs per SM
DSMEM_WIDE_PROBES = [(kd, n) for kd in ("chase", "bw") for n in (2, 132, 264)]
# .release.cluster arrive (k = 1, cluster 2) load probes: (warps per CTA, CTAs in the grid)
ARRIVE_LOAD_PROBES = [(4, n) for n in (2, 16, 66, 132, 264, 528)] + [(1, 264), (1, 528), (8, 132), (8, 264)]
# remote-arrive probes (SC.ARRIVE): name, macros, warps per CTA (lane 0 of each arrives), CTAs per SM (0: one cluster)
_SEMS = {"rel": 1, "relaxed": 2, "plain": 0}
ARRIVE_PROBES = [(f"{sn}_k{k}_cl8", dict(CL=8, K=k, SEM=sv), 1, 0) for sn, sv in _SEMS.items() for k in (1, 3, 7)] + \
    [(f"{sn}_self_cl2", dict(CL=2, K=1, SEM=sv, SELF=1), 1, 0) for sn, sv in _SEMS.items()] + [
    ("rel_k1_cl2", dict(CL=2, K=1, SEM=1), 1, 0), ("rel_k3_cl4", dict(CL=4, K=3, SEM=1), 1, 0),
    ("rel_self_k3_cl2", dict(CL=2, K=3, SEM=1, SELF=1), 1, 0),
    ("rel_k1_cl2_w4", dict(CL=2, K=1, SEM=1), 4, 0), ("rel_k1_cl2_ld", dict(CL=2, K=1, SEM=1, LD=1), 1, 0),
    ("relaxed_k1_cl2_ld", dict(CL=2, K=1, SEM=2, LD=1), 1, 0),
    ("rel_k1_cl2_allsm", dict(CL=2, K=1, SEM=1), 1, 1), ("rel_k1_cl2_w4_2persm", dict(CL=2, K=1, SEM=1), 4, 2)]


# ------------------------------------------------------------------------------------------------ emulator side
def predict(k: dict, gpu: str):
    import ptxlab
    dev = ptxlab.open_device("emu", timing=gpu)
    if k["kind"] == "gemv":
        from ptxlab import gpumode
        from ptxlab.production.gemv import run_gemv
        m, kk, l = k["shape"]
        run_gemv(gpumode.generate_gemv(m, kk, l, 7), device=dev, config=k["config"])
        return dev.last_timing
    mod = ptxlab.compile(_source(k), arch="sm_90a", name=k["entry"] + ".cu")
    rng = np.random.default_rng(3)
    region = k["region"] or max((a[1] for a in k["args"] if a[0] == "in"), default=0)
    inbuf = dev.to_device(rng.integers(0, 255, max(region, 16), dtype=np.uint8)) if region else None
    vals = []
    outs = []
    for a in k["args"]:
        if a[0] == "in":
            vals.append(inbuf)
        elif a[0] == "inoff":
            vals.append(np.uint64(inbuf.ptr + a[1]))
        elif a[0] == "out":
            outs.append(dev.empty(a[1]))
            vals.append(outs[-1])
        elif a[0] == "zero4":
            outs.append(dev.to_device(np.zeros(16, np.float32)))
            vals.append(outs[-1])
        elif a[0] == "i32":
            vals.append(np.int32(a[1]))
        elif a[0] == "u32":
            vals.append(np.uint32(a[1]))
        elif a[0] == "i64":
            vals.append(np.int64(a[1]))
        elif a[0] == "f32":
            vals.append(np.float32(a[1]))
    dev.launch(mod, k["entry"], grid=k["grid"], block=k["block"], args=vals, shared_bytes=k["smem"],
               cluster=k.get("cluster"))
    return dev.last_timing


def calibrate_cluster(micro: dict) -> dict:
    """The H100 cluster parameters from the cluster probes: the probe's measured cycles per iteration minus what the
    model itself predicts per iteration of the same probe with the parameter at 0 (the loop's own issue and ALU
    latency); the DSMEM bandwidth is taken as measured."""
    from dataclasses import replace

    import ptxlab
    from ptxlab.timing import params as P

    def model(src, entry, grid, block, mk, cluster, **zero):
        p = replace(P.H100, **zero)
        mod = ptxlab.compile(src, arch="sm_90a", name=entry + ".cu")
        us = {}
        for n in (64, 512):
            dev = ptxlab.open_device("emu", timing=p)
            out = dev.empty(4 * 2 * 132 * 1024)
            dev.launch(mod, entry, grid=grid, block=block, args=mk(out, n), cluster=cluster)
            us[n] = dev.last_timing.sim_us
        return (us[512] - us[64]) * p.clock_ghz * 1e3 / (512 - 64)
    out = {}
    base = model(S.defines(CL=2) + SC.DSMEM_CHASE, "dsmem_chase", (2, 1, 1), (32, 1, 1),
                 lambda o, n: [o, np.uint32(7), np.int32(n)], (2, 1, 1), dsmem_latency_clk=0.0)
    out["dsmem_latency_clk"] = round(micro["dsmem_chase_cycles_per_hop"] - base, 1)
    out["dsmem_chase_model_overhead_clk"] = round(base, 2)
    out["dsmem_bytes_clk"] = micro["dsmem_bw_bytes_per_clk_per_sm"]
    base = model(S.defines(CL=2, WORK=0) + SC.CBAR, "cbar", (2, 1, 1), (32, 1, 1),
                 lambda o, n: [o, np.int32(n), np.float32(1.0)], (2, 1, 1), cluster_bar_latency_clk=0.0)
    out["cluster_bar_latency_clk"] = round(micro["cluster_barrier_cycles_per_iter"] - base, 1)
    out["cbar_model_overhead_clk"] = round(base, 2)
    law = {}
    if "cbar_cycles_per_iter" in micro:
        # barrier.cluster law: least squares of (probe - the model's own loop) over the one-cluster probes
        rows = []
        for key, cyc in micro["cbar_cycles_per_iter"].items():
            cl, w, per_sm = (int(x) for x in key.split(","))
            if per_sm:
                continue
            ovh = model(S.defines(CL=cl, WORK=0) + SC.CBAR, "cbar", (cl, 1, 1), (32 * w, 1, 1),
                        lambda o, n: [o, np.int32(n), np.float32(1.0)], (cl, 1, 1), cluster_bar_latency_clk=0.0,
                        cluster_bar_per_cta_clk=0.0, cluster_bar_per_warp_clk=0.0)
            rows.append((cl, w, cyc - ovh))
        a_mat = np.array([[1.0, cl, w] for cl, w, _ in rows])
        y = np.array([v for _, _, v in rows])
        coef = np.linalg.lstsq(a_mat, y, rcond=None)[0]
        law["cluster_bar_latency_clk"], law["cluster_bar_per_cta_clk"], law["cluster_bar_per_warp_clk"] = \
            (round(float(x), 1) for x in coef)
        law["cbar_fit_residual_clk"] = {f"{cl},{w}": round(float(r), 1)
                                        for (cl, w, _), r in zip(rows, a_mat @ coef - y)}
    if "arrive_cycles_per_iter" in micro:
        ar = micro["arrive_cycles_per_iter"]
        zero = dict(cluster_release_clk=0.0, cluster_release_shared_clk=0.0, cluster_release_cta_clk=0.0)
        per = []
        for k in (1, 3, 7):
            ovh = model(S.defines(CL=8, K=k, SEM=1) + SC.ARRIVE, "arrive_probe", (8, 1, 1), (32, 1, 1),
                        lambda o, n: [o, np.int32(n)], (8, 1, 1), **zero)
            per.append((ar[f"rel_k{k}_cl8"] - ovh) / k)
        law["cluster_release_clk"] = round(float(np.mean(per)), 1)
        law["release_per_arrive_k137_clk"] = [round(float(x), 1) for x in per]
    if micro.get("arrive_load_cycles_per_iter"):
        # load law (timing4): 1 CTA per SM, 8 warps -> the CTA's release path (8 arrives per period); >= 2 CTAs per
        # SM (any warps) -> the hold on a shared SM (the path does not bind there: 987-988 clk for 1 .. 16 arrives)
        al = micro["arrive_load_cycles_per_iter"]
        zero = dict(cluster_release_clk=0.0, cluster_release_shared_clk=0.0, cluster_release_cta_clk=0.0)
        ovh = model(S.defines(CL=2, K=1, SEM=1) + SC.ARRIVE, "arrive_probe", (P.H100.sms, 1, 1), (256, 1, 1),
                    lambda o, n: [o, np.int32(n)], (2, 1, 1), **zero)
        law["cluster_release_cta_clk"] = round((al[f"8,{P.H100.sms}"] - ovh) / 8, 1)
        shared = [v for k, v in al.items() if int(k.split(",")[1]) > P.H100.sms]
        ovh = model(S.defines(CL=2, K=1, SEM=1) + SC.ARRIVE, "arrive_probe", (2 * P.H100.sms, 1, 1), (32, 1, 1),
                    lambda o, n: [o, np.int32(n)], (2, 1, 1), **zero)
        law["cluster_release_shared_clk"] = round(float(np.mean(shared)) - ovh, 1)
        law["release_shared_probes_clk"] = shared
    out.update(law)
    if micro.get("cbar_load_cycles_per_iter") and "cluster_release_shared_clk" in law:
        # check (nothing fitted): the barrier load probes with >= 2 CTAs per SM, predicted with the derived values
        keep = {k: law[k] for k in P.H100.__dataclass_fields__ if k in law}
        chk = {}
        for key, cyc in micro["cbar_load_cycles_per_iter"].items():
            cl, w, ctas = (int(x) for x in key.split(","))
            if ctas <= P.H100.sms:
                continue
            pred = model(S.defines(CL=cl, WORK=0) + SC.CBAR, "cbar", (ctas, 1, 1), (32 * w, 1, 1),
                         lambda o, n: [o, np.int32(n), np.float32(1.0)], (cl, 1, 1), **keep)
            chk[key] = (cyc, round(pred, 1), f"{100 * (pred - cyc) / cyc:+.1f} %")
        out["cbar_load_check_measured_predicted"] = chk
    cbl = micro.get("cbar_load_cycles_per_iter", {})
    if any(int(k.split(",")[1]) > 8 for k in cbl):
        out.update(_calibrate_cluster_warps(micro, model, {}))   # relative to the table in use
    print("cluster parameters (H100):", out)
    return out


def _calibrate_cluster_warps(micro: dict, model, keep: dict) -> dict:
    """timing5: barrier.cluster with wide CTAs and on shared SMs, from the wide-CTA probes only (never from the
    validation kernels).  DSMEM narrow rate: the 4-B chase with 2 x 1024-thread CTAs per SM.  wide(W): one cluster of 2 / 4 CTAs x W > 8 warps, probe minus the model without the term
    (mean over the cluster sizes).  shared(W, n): 2-CTA clusters, n = CTAs / SMs >= 2 per SM on all SMs, probe minus
    the model without the term.  The 4-CTA-cluster shared probes and the DSMEM wide probes are checks (not fitted)."""
    from ptxlab.timing import params as P
    sms = P.H100.sms
    cbl = micro["cbar_load_cycles_per_iter"]
    mk = lambda o, n: [o, np.int32(n), np.float32(1.0)]  # noqa: E731

    def cbar(cl, w, ctas, **kw):
        return model(S.defines(CL=cl, WORK=0) + SC.CBAR, "cbar", (ctas, 1, 1), (32 * w, 1, 1), mk, (cl, 1, 1),
                     **{**keep, **kw})
    rows = [tuple(int(x) for x in k.split(",")) + (v,) for k, v in cbl.items()]
    wide: dict = {}
    for cl, w, ctas, cyc in rows:
        if w > 8 and ctas == cl:
            wide.setdefault(w, []).append(cyc - cbar(cl, w, ctas, cluster_bar_wide_clk={}, cluster_bar_shared_clk={}))
    wide = {w: round(float(np.mean(v)), 1) for w, v in sorted(wide.items())}
    shared = {}
    for cl, w, ctas, cyc in rows:
        if cl == 2 and ctas > sms and ctas % sms == 0:
            shared[(w, ctas // sms)] = round(cyc - cbar(cl, w, ctas, cluster_bar_wide_clk=wide,
                                                             cluster_bar_shared_clk={}), 1)
    res = {"cluster_bar_wide_clk": wide, "cluster_bar_shared_clk": dict(sorted(shared.items()))}
    chk = {}
    for cl, w, ctas, cyc in rows:     # check, nothing fitted: 4-CTA clusters on shared SMs, 1 CTA per SM
        if cl == 4 and (ctas > sms or (ctas == sms and w > 8)):
            pred = cbar(cl, w, ctas, cluster_bar_wide_clk=wide, cluster_bar_shared_clk=shared)
            chk[f"{cl},{w},{ctas}"] = (cyc, round(pred, 1), f"{100 * (pred - cyc) / cyc:+.1f} %")
    res["cbar_warps_check_measured_predicted"] = chk
    dw = micro.get("dsmem_wide_cycles_per_iter", {})
    if f"chase,{2 * sms}" in dw:
        # 4-B loads, 2 x 1024-thread CTAs per SM: bandwidth bound (8 KiB per SM per hop), taken as measured
        res["dsmem_narrow_bytes_clk"] = round(2 * 1024 * 4 / dw[f"chase,{2 * sms}"], 1)
        keep = {**keep, "dsmem_narrow_bytes_clk": res["dsmem_narrow_bytes_clk"]}
    dchk = {}
    for key, cyc in dw.items():
        kind, ctas = key.split(",")
        if kind == "chase":
            pred = model(S.defines(CL=2) + SC.DSMEM_CHASE, "dsmem_chase", (int(ctas), 1, 1), (1024, 1, 1),
                         lambda o, n: [o, np.uint32(7), np.int32(n)], (2, 1, 1), **keep)
        else:
            pred = model(S.defines(CL=2) + SC.DSMEM_BW, "dsmem_bw", (int(ctas), 1, 1), (1024, 1, 1),
                         lambda o, n: [o, np.int32(n)], (2, 1, 1), **keep)
        dchk[key] = (cyc, round(pred, 1), f"{100 * (pred - cyc) / cyc:+.1f} %")
    res["dsmem_wide_check_measured_predicted"] = dchk
    return res


def emu_side(args) -> int:
    from rich.console import Console
    from rich.table import Table

    measured = {}
    meta = {}
    for path in args.measured or []:
        data = json.loads(Path(path).read_text())
        meta = meta or {k: data.get(k) for k in ("device", "date")}
        measured.update({r["name"]: r for r in data.get("kernels", [])})
    rows = []
    from ptxlab.timing import synthetic_series as SS
    table = {"calibration": SS.series, "heldout": SS.series_heldout}
    for k in (table[args.series]() if args.series else kernels()):
        if args.only and not any(s in k["name"] for s in args.only):
            continue
        t0 = time.perf_counter()
        t = predict(k, args.predict)
        wall = time.perf_counter() - t0
        m = measured.get(k["name"], {}).get("median_us")
        rows.append((k, t, m, wall))
        print(f"{k['name']:>45}: predicted {t.us:8.2f} us ({t.bound}), measured {m if m else float('nan'):8.2f} us, "
              f"{wall:.1f} s", flush=True)
    tab = Table(title=f"timing model ({args.predict}) vs measured ({meta.get('device', '?')}, {meta.get('date', '?')})")
    for c in ("kernel", "measured µs", "predicted µs", "error", "bound"):
        tab.add_column(c, justify="right" if "µs" in c or c == "error" else "left")
    errs = []
    for k, t, m, _ in rows:
        e = (t.us - m) / m if m else float("nan")
        if m:
            errs.append(abs(e))
        tab.add_row(k["name"], f"{m:.2f}" if m else "-", f"{t.us:.2f}", f"{100 * e:+.1f} %" if m else "-", t.bound)
    Console(width=160).print(tab)
    groups: dict = {}
    for k, t, m, _ in rows:
        if m:
            groups.setdefault(k["group"], []).append((k["name"], t.us, m))
    rank_ok = True
    for g, items in groups.items():
        if len(items) < 2:
            continue
        pm = [n for n, _, _ in sorted(items, key=lambda x: x[1])]
        mm = [n for n, _, _ in sorted(items, key=lambda x: x[2])]
        print(f"ranking {g}: predicted {pm} / measured {mm} -> {'same' if pm == mm else 'DIFFERENT'}")
        rank_ok &= pm == mm
    if errs:
        print(f"median |error| {100 * float(np.median(errs)):.1f} %, max |error| {100 * max(errs):.1f} %, "
              f"{sum(e <= 0.25 for e in errs)}/{len(errs)} within 25 %, ranking within shapes "
              f"{'preserved' if rank_ok else 'NOT preserved'}")
    if args.json:
        Path(args.json).write_text(json.dumps([
            {"name": k["name"], "measured_us": m, "predicted_us": t.us, "bound": t.bound, "emu_wall_s": w}
            for k, t, m, w in rows], indent=2))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu-side", action="store_true", help="measure on the GPU (CUDA events)")
    ap.add_argument("--micro", action="store_true", help="with --gpu-side: run the calibration microbenchmarks")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--predict", help="emulator side: h100 | h200 | b200")
    ap.add_argument("--micro-cluster", action="store_true", help="with --gpu-side: run the cluster probes")
    ap.add_argument("--calibrate-cluster", metavar="MEASURED_JSON",
                    help="derive the H100 cluster parameters from a --micro-cluster measurement")
    ap.add_argument("--measured", nargs="*", help="JSON(s) written by --gpu-side to compare with (merged)")
    ap.add_argument("--json", help="write the comparison rows here")
    ap.add_argument("--only", nargs="*", help="substrings of kernel names to run")
    ap.add_argument("--series", nargs="?", const="calibration", choices=("calibration", "heldout"),
                    help="emulator side: the calibration series (ptxlab/timing/synthetic_series.py, measured by "
                         "tools/probes/timing_model_h100.py) or its held-out sizes, instead of the 21 validation "
                         "kernels")
    args = ap.parse_args(argv)
    if not args.gpu_side:   # emulator side: timing only, no output is checked, so the sampling warning is noise
        import warnings

        from ptxlab.timing.predict import TimingSampleWarning
        warnings.simplefilter("ignore", TimingSampleWarning)
    if args.gpu_side:
        gpu_side(args)
    if args.calibrate_cluster:
        calibrate_cluster(json.loads(Path(args.calibrate_cluster).read_text())["micro_cluster"])
    if args.predict:
        return emu_side(args)
    if not args.gpu_side and not args.calibrate_cluster:
        ap.print_help()
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
