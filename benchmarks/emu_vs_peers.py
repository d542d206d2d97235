"""The emulator's engines against CPU peers that run GPU-style kernels, in one run: PoCL (a compiling OpenCL runtime,
through pyopencl + pocl-binary-distribution), numba's CUDA simulator and Triton's interpreter.

    python benchmarks/emu_vs_peers.py [--m 4096] [--k 4096] [--small-m 64]

Workload: W1, the fp32 GEMV of benchmarks/w1_gemv.py (same algorithm everywhere: one warp / work-group of 32 per
row, fma over a strided slice, a 32-way tree).  numba's simulator and Triton's interpreter run every thread / program
in Python, so they get ``--small-m`` rows and their time is scaled to the full M.  Each result is checked against the
float64 reference; the table gives seconds and the ratio to PoCL.

The peers are optional (not test dependencies): install them in your own environment, e.g.
``pip install pyopencl pocl-binary-distribution numba triton``; a missing one is reported and skipped.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")   # before anything imports numba: its simulator, not a GPU
os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402

import w1_gemv as w1  # noqa: E402


def _best(fn, repeat):
    best = None
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        t = time.perf_counter() - t
        best = t if best is None else min(best, t)
    return best, out


def run_emu(engine, m, k, repeat):
    import ptxlab
    dev = ptxlab.open_device("emu", engine=engine)
    a, x = w1.inputs(m, k)
    mod = ptxlab.compile(w1.CUDA, arch="sm_90a", name="w1_gemv.cu")
    da, dx, dy = dev.to_device(a), dev.to_device(x), dev.empty(4 * m)

    def go():
        dev.launch(mod, "w1_gemv", grid=((m + w1.ROWS_PER_BLOCK - 1) // w1.ROWS_PER_BLOCK, 1, 1),
                   block=(32 * w1.ROWS_PER_BLOCK, 1, 1), args=[da, dx, dy, np.int32(m), np.int32(k)])
        return dev.to_host(dy, np.float32)
    go()                                                     # warm-up: decode, translation, engine library
    return _best(go, repeat)


def _pocl_queue():
    import pyopencl as cl
    plats = [p for p in cl.get_platforms() if "Portable" in p.name or "pocl" in p.name.lower()]
    if not plats:
        raise RuntimeError("no PoCL platform (pip install pocl-binary-distribution)")
    ctx = cl.Context(plats[0].get_devices())
    return cl, ctx, cl.CommandQueue(ctx)


def run_pocl(m, k, repeat):
    cl, ctx, q = _pocl_queue()
    a, x = w1.inputs(m, k)
    prg = cl.Program(ctx, w1.OPENCL).build()
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    dx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    y = np.empty(m, np.float32)
    dy = cl.Buffer(ctx, mf.WRITE_ONLY, y.nbytes)
    kern = prg.w1_gemv

    def go():
        kern(q, (32 * m,), (32,), da, dx, dy, np.int32(m), np.int32(k))
        cl.enqueue_copy(q, y, dy)
        q.finish()
        return y.copy()
    go()
    return _best(go, repeat)


def run_numba(m, k):
    from numba import cuda, float32

    @cuda.jit
    def kern(a, x, y):
        g = cuda.grid(1)
        row, lane = g // 32, g % 32
        part = cuda.shared.array(32, float32)
        acc = float32(0.0)
        for j in range(lane, a.shape[1], 32):
            acc += a[row, j] * x[j]
        part[lane] = acc
        cuda.syncthreads()
        o = 16
        while o > 0:
            v = part[lane ^ o]
            cuda.syncthreads()
            part[lane] += v
            cuda.syncthreads()
            o //= 2
        if lane == 0:
            y[row] = part[0]

    a, x = w1.inputs(m, k)
    y = np.zeros(m, np.float32)
    t = time.perf_counter()
    kern[m, 32](a, x, y)
    return time.perf_counter() - t, y


def run_triton(m, k):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def kern(a_ptr, x_ptr, y_ptr, K, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for j in range(0, K, BLOCK):
            offs = j + tl.arange(0, BLOCK)
            acc += tl.load(a_ptr + row * K + offs) * tl.load(x_ptr + offs)
        tl.store(y_ptr + row, tl.sum(acc, axis=0))

    a, x = w1.inputs(m, k)
    ta, tx, ty = torch.from_numpy(a), torch.from_numpy(x), torch.zeros(m, dtype=torch.float32)
    t = time.perf_counter()
    kern[(m,)](ta, tx, ty, k, BLOCK=256)
    return time.perf_counter() - t, ty.numpy()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--small-m", type=int, default=64, help="rows for the Python-per-thread peers (scaled to --m)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    m, k = args.m, args.k
    a, x = w1.inputs(m, k)
    ref = w1.reference(a, x)
    rows = []

    def record(name, fn, scale=1.0, mm=m):
        try:
            t, y = fn()
        except Exception as e:                   # noqa: BLE001  (a peer that is not installed)
            print(f"{name:28s} skipped: {type(e).__name__}: {e}")
            return
        ok = w1.close(np.asarray(y)[:mm], ref[:mm], k)
        rows.append((name, t * scale, ok))
        print(f"{name:28s} {t * scale:9.3f} s{' (scaled from %d rows)' % mm if scale != 1 else ''}  "
              f"{'ok' if ok else 'WRONG'}", flush=True)

    print(f"W1 fp32 GEMV, M={m} K={k}")
    record("PoCL (pyopencl)", lambda: run_pocl(m, k, args.repeat))
    for engine in ("native", "interp"):
        record(f"ptxlab emulator ({engine})", lambda e=engine: run_emu(e, m, k, args.repeat))
    sm = min(args.small_m, m)
    record("numba CUDA simulator", lambda: run_numba(sm, k), scale=m / sm, mm=sm)
    record("Triton interpreter", lambda: run_triton(sm, k), scale=m / sm, mm=sm)
    pocl = next((t for n, t, _ in rows if n.startswith("PoCL")), None)
    print("\npeer                          seconds   / PoCL")
    for name, t, ok in rows:
        print(f"{name:28s} {t:9.3f}   {t / pocl:8.1f}x" if pocl else f"{name:28s} {t:9.3f}")
    return 0 if all(ok for _, _, ok in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
