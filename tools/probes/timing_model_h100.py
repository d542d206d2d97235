"""H100 measurements for the timing model of issue 21, all in one device call (GPU side), plus the CPU-side table.

    PYTHONPATH=. python3 tools/probes/timing_model_h100.py run [--quick]      # on the GPU: $OUT/timing_model_h100.json
    python tools/probes/timing_model_h100.py predict --measured FILE [--only NAME ...]   # emulator side

GPU side (``run``): (1) micro-benchmarks the SASS issue model needs (dependent-chain latencies of LDS, an L1-hit
LDG, MUFU, conversions, SHFL, LDC; shared-memory wavefronts of 32/64/128-bit access patterns; pipe throughputs of
IMAD, integer ALU, MUFU, conversions; L1 hit bandwidth and capacity); (2) the calibration series of
``ptxlab/timing/synthetic_series.py`` (own SGEMM steps, reductions, bank conflicts, ILP, L2 sharing, L1 hits, rem),
each timed with CUDA events (median; inputs rotated over > 4 x L2 where a cold run is meant), checked against a torch
reference where one is cheap; (3) Nsight Compute counters of one launch of each series kernel (instructions
executed, L1 / L2 hit rates, DRAM bytes, shared-memory wavefronts), so the join (SASS counts) and the memory model
(L1 hits, DRAM bytes) are checked on the same builds.  Kernels are compiled on the device by NVRTC as the
validation kernels are (benchmarks/validate_timing.py), and each cubin is written to $OUT, so the SASS the H100 ran
can be compared with the SASS the model issues (``predict`` does).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from ptxlab.timing import synthetic as S  # noqa: E402
from ptxlab.timing import synthetic_series as SS  # noqa: E402

MICRO = r'''
// dependent chains, one warp; t[0] = cycles for n steps
extern "C" __global__ void lat_lds(int n, long long* t, int* out) {
  __shared__ int s[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = (i + 33) & 1023;
  __syncwarp();
  int p = threadIdx.x;
  long long c0 = clock64();
  for (int i = 0; i < n; ++i) p = s[p];
  long long c1 = clock64();
  out[threadIdx.x] = p; if (threadIdx.x == 0) t[0] = c1 - c0;
}
extern "C" __global__ void lat_l1(const int* __restrict__ x, int n, long long* t, int* out) {
  int p = threadIdx.x;
  for (int i = 0; i < 64; ++i) p = __ldca(x + p);        // warm the 4 KB chain into L1
  long long c0 = clock64();
  for (int i = 0; i < n; ++i) p = __ldca(x + p);
  long long c1 = clock64();
  out[threadIdx.x] = p; if (threadIdx.x == 0) t[0] = c1 - c0;
}
extern "C" __global__ void lat_mufu(int n, long long* t, float* out) {
  float x = threadIdx.x * 1e-3f;
  long long c0 = clock64();
  for (int i = 0; i < n; ++i) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x));
  long long c1 = clock64();
  out[threadIdx.x] = x; if (threadIdx.x == 0) t[0] = c1 - c0;
}
extern "C" __global__ void lat_cvt(int n, long long* t, float* out) {
  float x = threadIdx.x;
  long long c0 = clock64();
  for (int i = 0; i < n; ++i) { int k; asm volatile("cvt.rzi.s32.f32 %0, %1;" : "=r"(k) : "f"(x));
                                asm volatile("cvt.rn.f32.s32 %0, %1;" : "=f"(x) : "r"(k)); }
  long long c1 = clock64();
  out[threadIdx.x] = x; if (threadIdx.x == 0) t[0] = c1 - c0;
}
extern "C" __global__ void lat_shfl(int n, long long* t, int* out) {
  int x = threadIdx.x;
  long long c0 = clock64();
  for (int i = 0; i < n; ++i) x = __shfl_xor_sync(0xffffffffu, x, 1) + 1;
  long long c1 = clock64();
  out[threadIdx.x] = x; if (threadIdx.x == 0) t[0] = c1 - c0;
}
__constant__ int ctab[1024];
extern "C" __global__ void lat_ldc(int n, long long* t, int* out) {
  int p = threadIdx.x & 0;
  long long c0 = clock64();
  for (int i = 0; i < n; ++i) p = ctab[p];
  long long c1 = clock64();
  out[threadIdx.x] = p; if (threadIdx.x == 0) t[0] = c1 - c0;
}
// throughput loops (many warps per SM): 8 independent chains per thread
extern "C" __global__ void tp_imad(int n, int* out) {
  int x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
  for (int i = 0; i < n; ++i) { x0 = x0 * 3 + i; x1 = x1 * 5 + i; x2 = x2 * 7 + i; x3 = x3 * 9 + i;
                                x4 = x4 * 11 + i; x5 = x5 * 13 + i; x6 = x6 * 15 + i; x7 = x7 * 17 + i; }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 ^ x1 ^ x2 ^ x3 ^ x4 ^ x5 ^ x6 ^ x7;
}
extern "C" __global__ void tp_alu(int n, int* out) {
  int x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
  for (int i = 0; i < n; ++i) { x0 = (x0 ^ i) + x1; x1 = (x1 ^ x2) + i; x2 = (x2 ^ x3) + i; x3 = (x3 ^ x4) + i;
                                x4 = (x4 ^ x5) + i; x5 = (x5 ^ x6) + i; x6 = (x6 ^ x7) + i; x7 = (x7 ^ x0) + i; }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 ^ x1 ^ x2 ^ x3 ^ x4 ^ x5 ^ x6 ^ x7;
}
extern "C" __global__ void tp_mufu(int n, float* out) {
  float x0 = threadIdx.x * 1e-3f, x1 = x0 + 1e-3f, x2 = x0 + 2e-3f, x3 = x0 + 3e-3f;
  for (int i = 0; i < n; ++i) {
    asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x0)); asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x1));
    asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x2)); asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x3));
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3;
}
extern "C" __global__ void tp_cvt(int n, float* out) {
  float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
  for (int i = 0; i < n; ++i) {
    int k0, k1, k2, k3;
    asm volatile("cvt.rzi.s32.f32 %0, %1;" : "=r"(k0) : "f"(x0)); asm volatile("cvt.rzi.s32.f32 %0, %1;" : "=r"(k1) : "f"(x1));
    asm volatile("cvt.rzi.s32.f32 %0, %1;" : "=r"(k2) : "f"(x2)); asm volatile("cvt.rzi.s32.f32 %0, %1;" : "=r"(k3) : "f"(x3));
    asm volatile("cvt.rn.f32.s32 %0, %1;" : "=f"(x0) : "r"(k0 + 1)); asm volatile("cvt.rn.f32.s32 %0, %1;" : "=f"(x1) : "r"(k1 + 1));
    asm volatile("cvt.rn.f32.s32 %0, %1;" : "=f"(x2) : "r"(k2 + 1)); asm volatile("cvt.rn.f32.s32 %0, %1;" : "=f"(x3) : "r"(k3 + 1));
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3;
}
extern "C" __global__ void tp_shfl(int n, int* out) {
  int x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
  for (int i = 0; i < n; ++i) { x0 = __shfl_xor_sync(0xffffffffu, x0, 1); x1 = __shfl_xor_sync(0xffffffffu, x1, 2);
                                x2 = __shfl_xor_sync(0xffffffffu, x2, 4); x3 = __shfl_xor_sync(0xffffffffu, x3, 8); }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3;
}
// shared-memory access patterns: each warp does n accesses of one pattern (MODE) per lane
#ifndef MODE
#define MODE 0
#endif
extern "C" __global__ void smem_pat(int n, float* out) {
  __shared__ __align__(16) float s[8192];
  for (int i = threadIdx.x; i < 8192; i += blockDim.x) s[i] = i;
  __syncthreads();
  int l = threadIdx.x % 32;
  float acc = 0.f;
#if MODE == 0      // 32-bit consecutive
  const float* p = s + l;
  for (int i = 0; i < n; ++i) acc += p[(i * 32) & 8191];
#elif MODE == 1    // 32-bit broadcast
  for (int i = 0; i < n; ++i) acc += s[(i * 32) & 8191];
#elif MODE == 2    // 32-bit stride 2 (2-way conflict)
  for (int i = 0; i < n; ++i) acc += s[(l * 2 + i * 64) & 8191];
#elif MODE == 3    // 32-bit stride 32 (32-way conflict)
  for (int i = 0; i < n; ++i) acc += s[(l * 32 + i) & 8191];
#elif MODE == 4    // 64-bit consecutive
  const float2* q = reinterpret_cast<const float2*>(s);
  for (int i = 0; i < n; ++i) { float2 v = q[(l + i * 32) & 4095]; acc += v.x + v.y; }
#elif MODE == 5    // 64-bit broadcast
  const float2* q = reinterpret_cast<const float2*>(s);
  for (int i = 0; i < n; ++i) { float2 v = q[(i * 32) & 4095]; acc += v.x + v.y; }
#elif MODE == 6    // 128-bit consecutive (all four words used: one LDS.128, not two LDS.32)
  const float4* q = reinterpret_cast<const float4*>(s);
  for (int i = 0; i < n; ++i) { float4 v = q[(l + i * 32) & 2047]; acc += (v.x + v.y) * (v.z + v.w); }
#elif MODE == 7    // 128-bit broadcast
  const float4* q = reinterpret_cast<const float4*>(s);
  for (int i = 0; i < n; ++i) { float4 v = q[(i * 32) & 2047]; acc += (v.x + v.y) * (v.z + v.w); }
#elif MODE == 8    // 128-bit: each half-warp one address
  const float4* q = reinterpret_cast<const float4*>(s);
  for (int i = 0; i < n; ++i) { float4 v = q[((l >> 4) + i * 32) & 2047]; acc += (v.x + v.y) * (v.z + v.w); }
#elif MODE == 9    // 128-bit: each quarter-warp one address
  const float4* q = reinterpret_cast<const float4*>(s);
  for (int i = 0; i < n; ++i) { float4 v = q[((l >> 3) + i * 32) & 2047]; acc += (v.x + v.y) * (v.z + v.w); }
#elif MODE == 10   // 128-bit: lanes l and l + 16 the same address
  const float4* q = reinterpret_cast<const float4*>(s);
  for (int i = 0; i < n; ++i) { float4 v = q[((l & 15) + i * 32) & 2047]; acc += (v.x + v.y) * (v.z + v.w); }
#endif
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
// L1: each CTA re-reads its own WS-byte window (cached loads) PASSES times
extern "C" __global__ void l1_window(const float4* __restrict__ x, long long ws16, int passes, float* out) {
  const float4* p = x + (size_t)blockIdx.x * ws16;
  float acc = 0.f;
  for (int r = 0; r < passes; ++r)
    for (long long i = threadIdx.x; i < ws16; i += blockDim.x) { float4 v = __ldca(p + i); acc += v.x; }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
'''

SMEM_MODES = {0: "lds32_consecutive", 1: "lds32_broadcast", 2: "lds32_stride2", 3: "lds32_stride32",
              4: "lds64_consecutive", 5: "lds64_broadcast", 6: "lds128_consecutive", 7: "lds128_broadcast",
              8: "lds128_halfwarp_same", 9: "lds128_quarterwarp_same", 10: "lds128_l_and_l16_same"}


# ------------------------------------------------------------------------------------------------ GPU side
def capture_drv():
    """validate_timing.Drv that keeps every cubin it loads (written to $OUT/cubins.tar: the SASS the GPU ran)."""
    import hashlib

    from validate_timing import Drv

    class CaptureDrv(Drv):
        def __init__(self):
            super().__init__()
            self.cubins = {}

        def func(self, src, entry, arch="sm_90a"):
            from ptxlab.production.submission_gemv import nvrtc_compile
            key = (src, arch)
            if key not in self.mods:
                _, cub = nvrtc_compile(src, arch, "k.cu")
                self.mods[key] = self.ok(self.drv.cuModuleLoadData(cub))
                self.cubins[hashlib.sha1(src.encode()).hexdigest()[:16]] = cub
            return self.ok(self.drv.cuModuleGetFunction(self.mods[key], entry.encode()))
    return CaptureDrv()


def write_cubins(D, out_dir: Path) -> None:
    import io
    import tarfile
    with tarfile.open(out_dir / "cubins.tar", "w") as tar:
        for h, cub in D.cubins.items():
            ti = tarfile.TarInfo(f"{h}.cubin")
            ti.size = len(cub)
            tar.addfile(ti, io.BytesIO(cub))
def _vals(args, base: int, out: int, zero: int):
    vals = []
    for a in args:
        kind = a[0]
        if kind == "in":
            vals.append(ctypes.c_uint64(base + a[2]))
        elif kind == "inoff":
            vals.append(ctypes.c_uint64(base + a[1]))
        elif kind == "out":
            vals.append(ctypes.c_uint64(out))
        elif kind == "zero4":
            vals.append(ctypes.c_uint64(zero))
        elif kind == "i32":
            vals.append(ctypes.c_int32(a[1]))
        elif kind == "u32":
            vals.append(ctypes.c_uint32(a[1]))
        elif kind == "i64":
            vals.append(ctypes.c_longlong(a[1]))
        elif kind == "f32":
            vals.append(ctypes.c_float(a[1]))
    return vals


def micro(torch, B, D, stream, sleep, out_dir, smem_only: bool = False) -> dict:
    res = {}
    pr = lambda k, v: (res.__setitem__(k, v), print(f"  micro {k}: {v}", flush=True))  # noqa: E731
    t = torch.zeros(4, dtype=torch.int64, device="cuda")
    o = torch.zeros(1 << 20, dtype=torch.float32, device="cuda")
    chain = torch.from_numpy(((np.arange(1024) * 37 + 11) % 1024).astype(np.int32)).cuda()

    def once(f, grid, block, vals, reps=2):
        pk = D.pack(vals)
        for _ in range(reps):
            D.launch(f, grid, block, 0, pk, stream)
            torch.cuda.synchronize()

    for name, extra in (() if smem_only else (("lat_lds", []), ("lat_mufu", []), ("lat_cvt", []), ("lat_shfl", []),
                                              ("lat_ldc", []))):
        f = D.func(MICRO, name)
        per = {}
        for n in (256, 4096):
            once(f, (1, 1, 1), (32, 1, 1), [ctypes.c_int32(n), ctypes.c_uint64(t.data_ptr()),
                                            ctypes.c_uint64(o.data_ptr())])
            per[n] = t[0].item()
        pr(f"{name}_clk", round((per[4096] - per[256]) / (4096 - 256), 2))
    f = D.func(MICRO, "lat_l1")
    per = {}
    for n in (() if smem_only else (256, 4096)):
        once(f, (1, 1, 1), (32, 1, 1), [ctypes.c_uint64(chain.data_ptr()), ctypes.c_int32(n),
                                        ctypes.c_uint64(t.data_ptr()), ctypes.c_uint64(o.data_ptr())])
        per[n] = t[0].item()
    if per:
        pr("lat_l1_hit_clk", round((per[4096] - per[256]) / (4096 - 256), 2))
    clk = 1.9794e9
    for name, n in (() if smem_only else (("tp_imad", 2048), ("tp_alu", 2048), ("tp_mufu", 2048), ("tp_cvt", 1024),
                                          ("tp_shfl", 2048))):
        f = D.func(MICRO, name)
        nct = D.sms * 2
        pk = D.pack([ctypes.c_int32(n), ctypes.c_uint64(o.data_ptr())])
        fn = lambda f=f, pk=pk, nct=nct: D.launch(f, (nct, 1, 1), (1024, 1, 1), 0, pk, stream)  # noqa: E731
        r = B.time_launches(torch, [fn], 20, sleep)
        ops = {"tp_imad": 8, "tp_alu": 16, "tp_mufu": 4, "tp_cvt": 8, "tp_shfl": 4}[name]
        warp_instr = nct * 32 * n * ops
        pr(f"{name}_warp_instr_per_clk_per_sm", round(warp_instr / (r["median_us"] * 1e-6) / clk / D.sms, 3))
    for mode, label in SMEM_MODES.items():
        f = D.func(S.defines(MODE=mode) + MICRO, "smem_pat")
        nct, n = D.sms * 8, 2048
        pk = D.pack([ctypes.c_int32(n), ctypes.c_uint64(o.data_ptr())])
        fn = lambda f=f, pk=pk, nct=nct: D.launch(f, (nct, 1, 1), (256, 1, 1), 0, pk, stream)  # noqa: E731
        r = B.time_launches(torch, [fn], 20, sleep)
        pk2 = D.pack([ctypes.c_int32(n // 2), ctypes.c_uint64(o.data_ptr())])
        fn2 = lambda f=f, pk=pk2, nct=nct: D.launch(f, (nct, 1, 1), (256, 1, 1), 0, pk, stream)  # noqa: E731
        r2 = B.time_launches(torch, [fn2], 20, sleep)
        warp_acc = nct * 8 * (n - n // 2)
        cyc = (r["median_us"] - r2["median_us"]) * 1e-6 * clk * D.sms
        pr(f"smem_{label}_clk_per_warp_access_per_sm", round(cyc / warp_acc, 3))
    big = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    f = D.func(MICRO, "l1_window")
    for kb in (() if smem_only else (16, 64, 128, 192, 224, 256, 320)):
        ws16 = kb * 1024 // 16
        times = {}
        for passes in (4, 20):
            pk = D.pack([ctypes.c_uint64(big.data_ptr()), ctypes.c_longlong(ws16), ctypes.c_int32(passes),
                         ctypes.c_uint64(o.data_ptr())])
            fn = lambda f=f, pk=pk: D.launch(f, (D.sms, 1, 1), (1024, 1, 1), 0, pk, stream)  # noqa: E731
            times[passes] = B.time_launches(torch, [fn], 20, sleep)["median_us"]
        nbytes = kb * 1024 * 16
        pr(f"l1_window_{kb}KB_bytes_per_clk_per_sm", round(nbytes / ((times[20] - times[4]) * 1e-6) / clk, 1))
    return res


def run_series(torch, B, D, stream, sleep, iters: int, only, out_dir, table=SS.series) -> list:
    rows = []
    big = torch.empty((2 << 30) + (1 << 20), dtype=torch.uint8, device="cuda")
    # SGEMM and reductions read floats: a range of modest values, not random bytes
    fbig = big.view(torch.float32)
    fbig.uniform_(-1.0, 1.0)
    out = torch.zeros(256 << 20, dtype=torch.uint8, device="cuda")
    zero = torch.zeros(64, dtype=torch.float32, device="cuda")
    base = big.data_ptr()
    for k in table():
        if only and not any(s in k["name"] for s in only):
            continue
        try:
            f = D.func(k["src"], k["entry"])
            region = k["region"]
            nreg = int(min(64, max(2, math.ceil(4 * 50e6 / region)))) if region else 1
            step = (2 << 30) // nreg // 256 * 256
            packs = [D.pack(_vals(k["args"], base + i * step, out.data_ptr(), zero.data_ptr())) for i in range(nreg)]
            fns = [lambda p=p: D.launch(f, k["grid"], k["block"], 0, p, stream) for p in packs]
            zero.zero_()
            fns[0]()
            torch.cuda.synchronize()
            ok = _check(torch, k, big, base, out, zero) if not (k.get("check") or ("", 0))[1] > 2048 else None
            t0 = time.perf_counter()
            fns[0]()
            torch.cuda.synchronize()
            one = time.perf_counter() - t0
            n_it = int(max(10, min(iters, 0.4 / max(one, 1e-6))))
            r = B.time_launches(torch, fns, n_it, sleep)
            r.update(name=k["name"], input_sets=nreg, check=ok)
            rows.append(r)
            print(f"{k['name']:>44}: {r['median_us']:10.2f} us (p10 {r['p10_us']:.2f}, p90 {r['p90_us']:.2f}, "
                  f"n {r['n']}) check {ok}", flush=True)
        except Exception as e:  # noqa: BLE001
            rows.append(dict(name=k["name"], error=f"{type(e).__name__}: {e}"))
            print(f"{k['name']}: ERROR {e}", flush=True)
    return rows


def _check(torch, k, big, base, out, zero):
    chk = k.get("check")
    if chk is None:
        return None
    if chk[0] == "sgemm":
        n = chk[1]
        a = big.view(torch.float32)[:n * n].view(n, n).double()
        b = big.view(torch.float32)[n * n:2 * n * n].view(n, n).double()
        c = out.view(torch.float32)[:n * n].view(n, n).double()
        ref = a @ b
        return float((c - ref).norm() / ref.norm())
    if chk[0] == "sum":
        n = chk[1]
        ref = big.view(torch.float32)[:n].double().sum().item()
        return float(abs(zero[0].item() - ref) / max(1.0, abs(ref)))
    return None


NCU_METRICS = ("smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,"
               "dram__bytes_read.sum,dram__bytes_write.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,"
               "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum,"
               "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,"
               "smsp__issue_active.avg.pct_of_peak_sustained_active")


def ncu_driver(only, table=SS.series) -> int:
    """One launch of each series kernel (the program ncu profiles)."""
    import torch
    D = capture_drv()
    stream = torch.cuda.current_stream().cuda_stream
    big = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    big.view(torch.float32).uniform_(-1.0, 1.0)
    out = torch.zeros(256 << 20, dtype=torch.uint8, device="cuda")
    zero = torch.zeros(64, dtype=torch.float32, device="cuda")
    for k in table():
        if only and not any(s in k["name"] for s in only):
            continue
        if k["region"] > (1 << 30) - (1 << 20) or "2^26" in k["name"] or "4096" in k["name"]:
            continue
        f = D.func(k["src"], k["entry"])
        D.launch(f, k["grid"], k["block"], 0, D.pack(_vals(k["args"], big.data_ptr(), out.data_ptr(),
                                                           zero.data_ptr())), stream)
        torch.cuda.synchronize()
    return 0


def gpu_side(args) -> int:
    import torch
    import bench_gemv_h100 as B
    out_dir = Path(os.environ.get("OUT", "timing_model_out"))
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.cuda.init()
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}, {props.multi_processor_count} SMs", flush=True)
    D = capture_drv()
    stream = torch.cuda.current_stream().cuda_stream
    sleep = int(1.98e9 * 3e-3)
    rep = {"device": props.name, "date": time.strftime("%Y-%m-%d"), "errors": []}
    try:
        from cuda.bindings import nvrtc
        rep["nvrtc"] = list(nvrtc.nvrtcVersion()[1:])
        rep["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm",
                                            "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except Exception as e:  # noqa: BLE001
        rep["errors"].append(f"versions: {e}")
    t0 = time.time()
    if not args.no_micro:
        try:
            rep["micro"] = micro(torch, B, D, stream, sleep, out_dir, args.smem_only)
        except Exception as e:  # noqa: BLE001
            rep["errors"].append(f"micro: {type(e).__name__}: {e}")
            print(rep["errors"][-1], flush=True)
    print(f"micro done {time.time() - t0:.0f} s", flush=True)
    table = SS.series_heldout if args.set == "heldout" else SS.series
    rep["set"] = args.set
    rep["kernels"] = run_series(torch, B, D, stream, sleep, args.iters, args.only, out_dir, table)
    print(f"series done {time.time() - t0:.0f} s", flush=True)
    import hashlib
    rep["cubin_of"] = {k["name"]: hashlib.sha1(k["src"].encode()).hexdigest()[:16] for k in table()}
    (out_dir / "timing_model_h100.json").write_text(json.dumps(rep, indent=2))
    write_cubins(D, out_dir)
    if not args.no_ncu:
        cmd = ["ncu", "--clock-control", "none", "--metrics", NCU_METRICS, "--csv", "--log-file",
               str(out_dir / "ncu.csv"), sys.executable, str(Path(__file__).resolve()), "ncu-driver", "--set", args.set]
        cmd += (["--only"] + list(args.only)) if args.only else []
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.ncu_timeout)
            print("ncu rc", p.returncode, p.stderr[-800:], flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"ncu: {type(e).__name__}: {e}", flush=True)
        print(f"ncu done {time.time() - t0:.0f} s", flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cmd", choices=("run", "ncu-driver", "predict"))
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--no-micro", action="store_true")
    ap.add_argument("--no-ncu", action="store_true")
    ap.add_argument("--ncu-timeout", type=int, default=150)
    ap.add_argument("--set", choices=("calibration", "heldout"), default="calibration",
                    help="which kernel table of synthetic_series to time")
    ap.add_argument("--smem-only", action="store_true", help="run only the shared-memory micro-benchmarks")
    ap.add_argument("--measured", help="predict: the JSON written by run")
    ap.add_argument("--json", help="predict: write the comparison rows here")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        return gpu_side(args)
    if args.cmd == "ncu-driver":
        return ncu_driver(args.only, SS.series_heldout if args.set == "heldout" else SS.series)
    import validate_timing      # CPU side: the emulator's predictions of the same kernels vs the measurement
    argv2 = ["--predict", "h100", "--series"] + (["--measured", args.measured] if args.measured else []) + \
        (["--only"] + list(args.only) if args.only else []) + (["--json", args.json] if args.json else [])
    return validate_timing.main(argv2)


if __name__ == "__main__":
    sys.exit(main())
