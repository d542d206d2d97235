"""H100 benchmark of the CUDA-core NVFP4 GEMV on gpu-mode's three nvfp4_gemv benchmark shapes.

    PYTHONPATH=. python3 benchmarks/bench_gemv_h100.py [--iters 200] [--quick]

One command: prints a table, writes JSON to $OUT/bench_gemv_h100.json when $OUT is set. Needs torch (CUDA),
numpy, cuda-python (NVRTC + driver); ptxlab does not need to be installed (run from the repo root). The kernel is
compiled with bare NVRTC (no headers) by ptxlab.production.submission_gemv and launched on torch tensors' raw pointers.

Method
  * inputs: generated on the GPU with gpu-mode's distributions and memory order (a (L,M,K/2) bytes randint[0,4),
    b (L,128,K/2), SF codes of {0,1,2} in the reference layout); S input sets per shape with S * bytes >= 4 x 50 MB
    (H100 L2), rotated every launch, so every timed launch reads its operands from DRAM;
  * timing: per-launch CUDA events; the launches of a batch are queued behind a GPU sleep (torch.cuda._sleep) so the
    CPU launch cost is hidden and kernels run back to back; median (and p10/p90) over all launches;
  * GB/s counts the bytes the kernel must move: a, b row 0, sfa, sfb row 0 (read) and c (written);
    "copy" is a device-to-device copy of 1 GiB measured in the same run (read + written bytes / time);
  * baselines: "torch dq+mm" = dequantize fp4+SF to bf16 in torch and torch.matmul (the whole pipeline timed);
    "cuBLAS bf16" = torch.matmul/mv on pre-materialized bf16 A (L,M,K) and x (what a bf16 GEMV costs);
  * correctness: every timed shape's output (set 0 and the last launch's set) is compared bitwise with an exact
    reference (float64 matmul of the dequantized operands rounded to fp16) and with gpu-mode's rtol/atol; and the
    gpu-mode adapter custom_kernel runs on ptxlab.gpumode tuples of every GEMV_TESTS shape (numpy reference);
  * kernel config per shape: ptxlab.production.submission_gemv.pick_config (what custom_kernel launches);
  * "read floor": a grid-stride read of the same bytes (A and SFA as two flat streams, 16-byte non-allocating loads,
    XOR-reduced; benchmarks/read_kernels.py's flat2_k) timed the same way in the same run: what any kernel that
    reads these bytes once costs here, launch and ramp included;
  * B200 column: a PREDICTION of ptxlab's timing model (ptxlab.timing, ptx_docs/timing.md: the kernel emulated and
    replayed with the B200 parameter table), not a measurement; bytes / 5.9 TB/s (the competition's "realistic" DRAM
    figure) is kept in the JSON as b200_bytes_projection_us.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # repo root: ptxlab importable without install

SHAPES = [(7168, 16384, 1), (4096, 7168, 8), (7168, 2048, 4)]  # ptxlab.gpumode.GEMV_BENCHMARKS
SOL_B200_US = {(7168, 16384, 1): 8.622, (4096, 7168, 8): 17.275, (7168, 2048, 4): 4.317}  # task.yml @ f83cb92
B200_DRAM = 5.9e12
L2_BYTES = 50 * 2**20
# alternatives timed on the same inputs (each exact-checked; skipped on shapes they cannot run): register variant
# (rows_per_warp, warps, unroll, ksplit, prefetch) and flat variant ("flat", warps, rows, prefetch, min CTAs/SM)
VARIANTS = [(4, 2, 2, 1, 0), (2, 4, 2, 1, 0), (8, 1, 2, 1, 0), ("flat", 16, 2, 1, 2), ("flat", 14, 2, 1, 2),
            ("flat", 14, 4, 0, 2), ("flat", 7, 2, 1, 4), ("flat", 32, 2, 1, 1),
            ("flat", 16, 4, 1, 4), ("flat", 14, 8, 1, 2), ("flat", 32, 4, 1, 1), ("flat", 10, 8, 1, 2),
            ("flat", 16, 2, 1, 2, 1), ("flat", 14, 2, 1, 2, 1)]
# ("flat", 14, 8, 1, 2), (32, 4, 1, 1), (10, 8, 1, 2): the B200 table's (model-chosen) configs of 4096x7168x8,
# 7168x16384x1, 7168x2048x4 (gemv4); the last two: the H100 configs with the flat variant's row blocks dealt
# round-robin (sixth entry 1, the order of the 2026-11-22 measurements; the default since gemv4: balanced ranges)
READ_FLOOR = True  # time a grid-stride read of the same bytes (A + SFA) in the same run
NB = 128  # gpu-mode pads b to 128 rows
DEVICE = "cuda"  # torch device of all tensors (a plumbing smoke test on CPU sets "cpu")
COMPAT_TESTS = None  # shapes for the custom_kernel check (None: ptxlab.gpumode.GEMV_TESTS)
COPY_BYTES = 1 << 30  # size of the device-to-device copy that measures the bandwidth ceiling
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def gemv_bytes(m: int, k: int, l: int) -> int:
    return l * (m * k // 2 + k // 2 + m * k // 16 + k // 16 + 2 * m)


# ------------------------------------------------------------------------------------------------ inputs
def make_set(torch, m: int, k: int, l: int, gen, device: str | None = None) -> dict:
    """gpu-mode generate_input distributions, physical (L, rows, cols) contiguous uint8 (SF as UE4M3 codes)."""
    device = device or DEVICE
    code = torch.tensor([0x00, 0x38, 0x40], dtype=torch.uint8, device=device)  # UE4M3 of 0, 1, 2
    ri = lambda hi, shape: torch.randint(0, hi, shape, generator=gen, device=device, dtype=torch.int64)  # noqa: E731
    return {
        "a": ri(4, (l, m, k // 2)).to(torch.uint8),
        "b": ri(4, (l, NB, k // 2)).to(torch.uint8),
        "sfa": code[ri(3, (l, m, k // 16))],
        "sfb": code[ri(3, (l, NB, k // 16))],
        "c": torch.full((l, m), float("nan"), dtype=torch.float16, device=device),
    }


def dequant(torch, q, sf, dtype):
    """(L, R, K/2) fp4x2 bytes + (L, R, K/16) UE4M3 codes -> (L, R, K) dtype (element 2i = low nibble)."""
    lut = torch.tensor(E2M1, dtype=dtype, device=q.device)
    vals = torch.stack((lut[(q & 15).int()], lut[(q >> 4).int()]), dim=-1).flatten(-2)
    scale = sf.view(torch.float8_e4m3fn).to(torch.float32).to(dtype).repeat_interleave(16, dim=-1)
    return vals * scale


def reference(torch, s: dict):
    """Exact: float64 dequantized A @ b row 0, rounded to fp16; (L, M)."""
    a = dequant(torch, s["a"], s["sfa"], torch.float64)
    b = dequant(torch, s["b"][:, :1], s["sfb"][:, :1], torch.float64)
    return torch.matmul(a, b.transpose(1, 2))[..., 0].to(torch.float16)


def torch_dq_mm(torch, s: dict):
    """The torch baseline: dequantize to bf16, then matmul (cuBLAS)."""
    a = dequant(torch, s["a"], s["sfa"], torch.bfloat16)
    b = dequant(torch, s["b"][:, :1], s["sfb"][:, :1], torch.bfloat16)
    return torch.matmul(a, b.transpose(1, 2))[..., 0].to(torch.float16)


# ------------------------------------------------------------------------------------------------ timing
def gpu_sleep(torch, cycles: int) -> None:
    """Keep the GPU busy for about `cycles` clocks so the launches queued next are not CPU-starved."""
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is not None:
        sleep(int(cycles))
    else:  # fallback: a few large matmuls (~ms); only the queueing matters, not the exact duration
        x = torch.ones(4096, 4096, device=DEVICE)
        for _ in range(8):
            x = x @ x * 1e-4


def time_launches(torch, fns, iters: int, sleep_cycles: int, batch: int = 50) -> dict:
    """Per-launch CUDA-event times (us) of fns[i % len(fns)](), queued behind a GPU sleep in batches."""
    times, starved, batch_avg = [], 0, []
    done = 0
    i = 0
    while done < iters:
        n = min(batch, iters - done)
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        s0, s1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        s0.record()
        gpu_sleep(torch, sleep_cycles)
        s1.record()
        t0 = time.perf_counter()
        for e0, e1 in ev:
            e0.record()
            fns[i % len(fns)]()
            e1.record()
            i += 1
        cpu = time.perf_counter() - t0
        torch.cuda.synchronize()
        if cpu * 1e3 > s0.elapsed_time(s1):
            starved += 1  # the GPU may have waited for the CPU in this batch
        times += [e0.elapsed_time(e1) * 1e3 for e0, e1 in ev]
        batch_avg.append(ev[0][0].elapsed_time(ev[-1][1]) * 1e3 / n)  # back-to-back, incl. gaps between launches
        done += n
    t = np.array(times)
    return {"median_us": float(np.median(t)), "p10_us": float(np.percentile(t, 10)),
            "p90_us": float(np.percentile(t, 90)), "n": int(t.size), "starved_batches": starved,
            "batch_avg_us": float(np.median(batch_avg))}


def time_plain(torch, fn, iters: int) -> dict:
    """Per-call CUDA-event times (us) for slow multi-kernel pipelines (CPU cost is small relative to the GPU)."""
    fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(iters):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        t.append(e0.elapsed_time(e1) * 1e3)
    return {"median_us": float(np.median(t)), "p10_us": float(np.percentile(t, 10)),
            "p90_us": float(np.percentile(t, 90)), "n": len(t)}


def copy_bandwidth(torch, sleep_cycles: int, iters: int) -> dict:
    n = COPY_BYTES
    src = torch.empty(n, dtype=torch.uint8, device=DEVICE).random_(0, 255)
    dsts = [torch.empty(n, dtype=torch.uint8, device=DEVICE) for _ in range(2)]
    k = [0]

    def cp() -> None:
        dsts[k[0] % 2].copy_(src)
        k[0] += 1

    r = time_launches(torch, [cp], iters, sleep_cycles, batch=10)
    r["bytes"] = 2 * n
    r["GBps"] = 2 * n / (r["median_us"] * 1e-6) / 1e9
    del src, dsts
    torch.cuda.empty_cache()
    return r


# ------------------------------------------------------------------------------------------------ main
def bench_variants(torch, variants: dict, sets: list, m: int, k: int, l: int, nbytes: int, iters: int,
                   sleep_cycles: int) -> list:
    """Time each variant (a config runnable on the shape) on the same input sets; exact check on a re-poisoned set 0."""
    from ptxlab.production.plan_gemv import fits

    out = []
    stream = torch.cuda.current_stream().cuda_stream
    for cfg, runner in variants.items():
        if not fits(runner.config, m, k):
            continue
        row: dict = {"config": list(cfg)}
        try:
            packed = [runner.params(s["a"].data_ptr(), s["b"].data_ptr(), s["sfa"].data_ptr(), s["sfb"].data_ptr(),
                                    s["c"].data_ptr(), m, k, l) for s in sets]
            fns = [lambda p=p, r=runner: r.launch(0, 0, 0, 0, 0, m, k, l, stream=stream, packed=p) for p in packed]
            sets[0]["c"].fill_(float("nan"))
            fns[0]()
            torch.cuda.synchronize()
            ref = reference(torch, sets[0])
            row["exact"] = bool(torch.equal(sets[0]["c"].view(torch.int16), ref.view(torch.int16)))
            del ref
            r = time_launches(torch, fns, iters, sleep_cycles)
            row.update(r)
            row["GBps"] = nbytes / (r["median_us"] * 1e-6) / 1e9
        except Exception as exc:  # noqa: BLE001 - a variant may fail to compile or launch; report it
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        out.append(row)
    return out


def bench_shape(torch, runner, m: int, k: int, l: int, args, sleep_cycles: int, variants: dict) -> dict:
    nbytes = gemv_bytes(m, k, l)
    res: dict = {"shape": [m, k, l], "bytes": nbytes}
    nsets = int(min(32, max(2, math.ceil(4 * L2_BYTES / nbytes))))
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(int.from_bytes(os.urandom(4), "little"))
    sets = [make_set(torch, m, k, l, gen) for _ in range(nsets)]
    res["input_sets"] = nsets
    packed = [runner.params(s["a"].data_ptr(), s["b"].data_ptr(), s["sfa"].data_ptr(), s["sfb"].data_ptr(),
                            s["c"].data_ptr(), m, k, l) for s in sets]
    stream = torch.cuda.current_stream().cuda_stream
    fns = [lambda p=p: runner.launch(0, 0, 0, 0, 0, m, k, l, stream=stream, packed=p) for p in packed]
    # correctness (set 0 before timing)
    fns[0]()
    torch.cuda.synchronize()
    ref0 = reference(torch, sets[0])
    res["exact_set0"] = bool(torch.equal(sets[0]["c"].view(torch.int16), ref0.view(torch.int16)))
    res["close_set0"] = bool(torch.allclose(sets[0]["c"].float(), ref0.float(), rtol=1e-3, atol=1e-3))
    del ref0
    # timing
    r = time_launches(torch, fns, args.iters, sleep_cycles)
    res["kernel"] = r
    res["kernel"]["GBps"] = nbytes / (r["median_us"] * 1e-6) / 1e9
    # correctness of the last launched set (after hundreds of launches)
    last = sets[(args.iters - 1) % nsets]
    refl = reference(torch, last)
    res["exact_last"] = bool(torch.equal(last["c"].view(torch.int16), refl.view(torch.int16)))
    del refl
    if variants:
        res["variants"] = bench_variants(torch, variants, sets, m, k, l, nbytes, max(50, args.iters // 2),
                                         sleep_cycles)
    # torch baselines
    try:
        res["torch_dq_mm"] = time_plain(torch, lambda: torch_dq_mm(torch, sets[0]), args.baseline_iters)
        got = torch_dq_mm(torch, sets[0])
        res["torch_dq_mm"]["close"] = bool(torch.allclose(got.float(), sets[0]["c"].float(), rtol=1e-2, atol=1e-2))
        del got
    except Exception as exc:  # noqa: BLE001 - report and go on
        res["torch_dq_mm"] = {"error": f"{type(exc).__name__}: {exc}"}
    torch.cuda.empty_cache()
    try:
        nb16 = max(2, math.ceil(4 * L2_BYTES / (2 * l * m * k)))
        mats = [dequant(torch, s["a"], s["sfa"], torch.bfloat16) for s in sets[:nb16]]
        while len(mats) < nb16:
            mats.append(mats[0].clone())
        xs = [dequant(torch, s["b"][:, :1], s["sfb"][:, :1], torch.bfloat16).transpose(1, 2).contiguous()
              for s in sets[:1]]
        x = xs[0]
        if l == 1:
            fb = [lambda A=A: torch.mv(A[0], x[0, :, 0]) for A in mats]
        else:
            fb = [lambda A=A: torch.matmul(A, x) for A in mats]
        rb = time_launches(torch, fb, args.iters, sleep_cycles)
        rb["bytes"] = l * (2 * m * k + 2 * k + 2 * m)
        rb["GBps"] = rb["bytes"] / (rb["median_us"] * 1e-6) / 1e9
        rb["bf16_sets"] = nb16
        res["cublas_bf16"] = rb
        del mats, xs, x
    except Exception as exc:  # noqa: BLE001
        res["cublas_bf16"] = {"error": f"{type(exc).__name__}: {exc}"}
    del sets, packed, fns
    torch.cuda.empty_cache()
    if READ_FLOOR and DEVICE == "cuda":
        try:
            res["read_floor"] = read_floor(torch, m, k, l, args.iters, sleep_cycles)
        except Exception as exc:  # noqa: BLE001
            res["read_floor"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    res["b200_bytes_projection_us"] = nbytes / B200_DRAM * 1e6
    res["b200_projection_us"] = b200_model_us(m, k, l)
    res["b200_sol_us_task_yml"] = SOL_B200_US.get((m, k, l))
    return res


def b200_model_us(m: int, k: int, l: int) -> float:
    """The timing model's B200 prediction of the CUDA-core GEMV at this shape (NaN if the model cannot run here)."""
    try:
        from ptxlab.timing.cli import run_problem
        return float(run_problem("nvfp4_gemv", (m, k, l), "b200").us)
    except Exception as exc:  # noqa: BLE001 - the benchmark must not fail for the model
        print(f"B200 timing model unavailable: {type(exc).__name__}: {exc}"[:300])
        return float("nan")


def read_floor(torch, m: int, k: int, l: int, iters: int, sleep_cycles: int) -> dict:
    """Median time of a grid-stride read of the shape's A and SFA bytes (benchmarks/read_kernels.py flat2_k,
    4 CTAs of 256 threads per SM), regions rotated through >= 4 x L2 so every launch reads DRAM."""
    import ctypes

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from read_kernels import Mod

    mod = Mod()
    na = l * m * k // 2
    n16 = na // 16
    nb = na + na // 8
    nreg = int(min(16, max(2, math.ceil(4 * L2_BYTES / nb))))
    stride = -(-nb // 4096) * 4096
    buf = torch.empty(nreg * stride, dtype=torch.uint8, device=DEVICE).random_(0, 255)
    out = torch.zeros(4, dtype=torch.int32, device=DEVICE)
    packs = []
    for i in range(nreg):
        p = buf.data_ptr() + i * stride
        packs.append(mod.packed([ctypes.c_uint64(p), ctypes.c_uint64(p + na), ctypes.c_longlong(n16),
                                 ctypes.c_uint64(out.data_ptr())]))
    stream = torch.cuda.current_stream().cuda_stream
    fns = [lambda pk=pk: mod.launch("flat2_k", (mod.sms * 4, 1, 1), 256, pk, stream) for pk in packs]
    r = time_launches(torch, fns, iters, sleep_cycles)
    r["bytes"] = nb
    del buf
    torch.cuda.empty_cache()
    return r


def to_cuda_tuple(torch, p) -> tuple:
    """gpu-mode's 7-tuple on the GPU with gpu-mode's shapes, dtypes and strides (copied as uint8, then viewed)."""
    def conv(x, dtype):
        phys = torch.from_numpy(np.ascontiguousarray(np.asarray(x).transpose(2, 0, 1))).to(DEVICE)
        return phys.permute(1, 2, 0).view(dtype)

    fp4, f8 = torch.float4_e2m1fn_x2, torch.float8_e4m3fn
    # unused by the kernel; uint8 copies keep numpy's strides (preserve_format), then viewed as fp8
    sfa_p = torch.from_numpy(np.asarray(p.sfa_permuted)).to(DEVICE).view(f8)
    sfb_p = torch.from_numpy(np.asarray(p.sfb_permuted)).to(DEVICE).view(f8)
    c = torch.from_numpy(np.ascontiguousarray(p.c.transpose(2, 0, 1))).to(DEVICE).permute(1, 2, 0)
    return (conv(p.a, fp4), conv(p.b, fp4), conv(p.sfa, f8), conv(p.sfb, f8), sfa_p, sfb_p, c)


GEMV_TEST_SHAPES = [(128, 256, 1), (128, 1536, 1), (128, 3072, 1), (256, 7168, 1), (256, 7168, 1), (2432, 4608, 2),
                    (384, 7168, 2), (512, 512, 2), (512, 4096, 2), (512, 1536, 2)]  # gpu-mode task.yml tests


def torch_tuple(torch, s: dict, m: int, k: int, l: int) -> tuple:
    """gpu-mode's 7-tuple from a make_set dict (views, no copies; the permuted SF tensors are zero placeholders of
    gpu-mode's shape: the kernel does not read them)."""
    fp4, f8 = torch.float4_e2m1fn_x2, torch.float8_e4m3fn
    rm, rk = -(-m // 128), -(-(k // 16) // 4)
    perm = lambda rows: torch.zeros((l, rows, rk, 32, 4, 4), dtype=torch.uint8, device=DEVICE).permute(  # noqa: E731
        3, 4, 1, 5, 2, 0).view(f8)
    return (s["a"].permute(1, 2, 0).view(fp4), s["b"].permute(1, 2, 0).view(fp4), s["sfa"].permute(1, 2, 0).view(f8),
            s["sfb"].permute(1, 2, 0).view(f8), perm(rm), perm(1), s["c"].view(l, m, 1).permute(1, 2, 0))


def compat_check(torch) -> dict:
    """custom_kernel (the gpu-mode adapter) on gpu-mode tuples of every GEMV_TESTS shape, poisoned c, exact check.
    Uses ptxlab.gpumode's generator + numpy reference when importable (needs ml_dtypes), else torch-built tuples with
    the same distributions/layouts and the float64 torch reference."""
    from ptxlab.production.submission_gemv import custom_kernel

    try:
        from ptxlab import gpumode as gm
    except ImportError as exc:
        gm, why = None, f"{exc}"
    out = {"shapes": 0, "exact": 0, "failures": [],
           "inputs": "ptxlab.gpumode" if gm is not None else f"torch (ptxlab.gpumode unavailable: {why})"}
    shapes = [(t["m"], t["k"], t["l"]) for t in COMPAT_TESTS] if COMPAT_TESTS is not None else GEMV_TEST_SHAPES
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(int.from_bytes(os.urandom(4), "little"))
    for i, (m, k, l) in enumerate(shapes):
        if gm is not None:
            p = gm.generate_gemv(m, k, l, seed=int.from_bytes(os.urandom(4), "little") + i)
            data = to_cuda_tuple(torch, p)
            ref = gm.reference_gemv(p)
        else:
            st = make_set(torch, m, k, l, gen)
            data = torch_tuple(torch, st, m, k, l)
            ref = reference(torch, st).cpu().numpy().T[:, None, :]
        data[6].fill_(float("nan"))
        c = custom_kernel(data)
        torch.cuda.synchronize()
        got = c.cpu().numpy()
        out["shapes"] += 1
        if got.shape == ref.shape and np.array_equal(got.view(np.uint16), ref.view(np.uint16)):
            out["exact"] += 1
        else:
            bad = int(np.sum(got.view(np.uint16) != ref.view(np.uint16))) if got.shape == ref.shape else -1
            out["failures"].append([m, k, l, f"{bad} elements differ"])
    return out


def load_inline_check(torch) -> dict:
    """The adapter's fallback backend (torch load_inline + nvcc) on one GEMV_TESTS shape, if nvcc exists here."""
    import shutil

    if DEVICE != "cuda":
        return {"status": "skipped: not on a GPU"}
    if not (shutil.which("nvcc") or os.environ.get("CUDA_HOME")):
        return {"status": "skipped: no nvcc / CUDA_HOME on this machine"}
    from ptxlab import gpumode as gm
    from ptxlab.production.submission_gemv import custom_kernel

    old = os.environ.get("GEMV_BACKEND")
    os.environ["GEMV_BACKEND"] = "load_inline"
    try:
        t0 = time.perf_counter()
        p = gm.generate_gemv(512, 4096, 2, seed=int.from_bytes(os.urandom(4), "little"))
        data = to_cuda_tuple(torch, p)
        data[6].fill_(float("nan"))
        got = custom_kernel(data)
        torch.cuda.synchronize()
        ok = np.array_equal(got.cpu().numpy().view(np.uint16), gm.reference_gemv(p).view(np.uint16))
        return {"status": "exact" if ok else "MISMATCH", "seconds": time.perf_counter() - t0}
    except Exception as exc:  # noqa: BLE001 - a missing toolchain is a finding, not a benchmark failure
        return {"status": f"unavailable: {type(exc).__name__}: {str(exc)[:300]}"}
    finally:
        if old is None:
            os.environ.pop("GEMV_BACKEND", None)
        else:
            os.environ["GEMV_BACKEND"] = old


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="H100 benchmark of the CUDA-core NVFP4 GEMV")
    ap.add_argument("--iters", type=int, default=300, help="timed launches per shape (kernel and cuBLAS)")
    ap.add_argument("--baseline-iters", type=int, default=10, help="timed calls of the torch dequant+matmul")
    ap.add_argument("--quick", action="store_true", help="fewer iterations (smoke run)")
    ap.add_argument("--no-variants", action="store_true", help="skip the rows/warps/unroll tuning sweep")
    args = ap.parse_args(argv)
    if args.quick:
        args.iters, args.baseline_iters = 50, 3
    import torch

    from ptxlab.production.submission_gemv import CudaGemv

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.init()
    torch.empty(1, device=DEVICE)
    dev = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(dev)
    report: dict = {"device": props.name, "cc": list(torch.cuda.get_device_capability(dev)),
                    "torch": torch.__version__, "python": platform.python_version(), "errors": []}
    from ptxlab.production.plan_gemv import pick_config
    from ptxlab.production.submission_gemv import gemv_arch

    t0 = time.perf_counter()
    arch = gemv_arch(*torch.cuda.get_device_capability(dev))
    runners: dict = {}
    for m, k, l in SHAPES:  # the config custom_kernel would launch for each shape
        cfg = tuple(pick_config(m, k, l, arch))
        if cfg not in runners:
            runners[cfg] = CudaGemv(dev, config=cfg)
    report["arch"] = next(iter(runners.values())).arch
    report["compile_s"] = time.perf_counter() - t0
    variants = {}
    if not args.no_variants:
        for cfg in VARIANTS:
            try:
                variants[cfg] = CudaGemv(dev, config=cfg)
            except Exception as exc:  # noqa: BLE001
                report["errors"].append(f"variant {cfg}: {exc}"[:300])
    clock_hz = 1.98e9  # max SM clock of H100 SXM; the sleep only has to outlast the CPU's enqueueing
    sleep_cycles = int(clock_hz * 3e-3)
    try:
        report["copy"] = copy_bandwidth(torch, sleep_cycles, 60 if args.quick else 200)
    except Exception as exc:  # noqa: BLE001
        report["errors"].append(f"copy: {exc!r}")
        report["copy"] = {"GBps": float("nan")}
    try:
        report["compat_check"] = compat_check(torch)
    except Exception:  # noqa: BLE001
        report["errors"].append("compat_check: " + traceback.format_exc(limit=3))
    report["shapes"] = []
    for m, k, l in SHAPES:
        try:
            runner = runners[tuple(pick_config(m, k, l, arch))]
            res = bench_shape(torch, runner, m, k, l, args, sleep_cycles, variants)
            res["config"] = list(runner.config)
            report["shapes"].append(res)
        except Exception:  # noqa: BLE001
            report["errors"].append(f"shape {m}x{k}x{l}: " + traceback.format_exc(limit=4))
    print_report(report)
    report["load_inline_fallback"] = load_inline_check(torch)
    print(f"adapter fallback backend (load_inline + nvcc): {report['load_inline_fallback']['status']}")
    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "bench_gemv_h100.json").write_text(json.dumps(report, indent=2))
        print(f"wrote {Path(out) / 'bench_gemv_h100.json'}")
    ok = all(s.get("exact_set0") and s.get("exact_last") for s in report["shapes"]) and len(report["shapes"]) == len(SHAPES)
    ok = ok and all(v.get("exact", True) for s in report["shapes"] for v in s.get("variants", []))
    ok = ok and report.get("compat_check", {}).get("failures") == []
    return 0 if ok and not report["errors"] else 1


def print_report(r: dict) -> None:
    cp = r.get("copy", {}).get("GBps", float("nan"))
    print(f"device: {r['device']} (cc {r['cc'][0]}.{r['cc'][1]}), kernel arch {r.get('arch')}, torch {r['torch']}, "
          f"NVRTC compile {r.get('compile_s', 0):.2f} s")
    print(f"device-to-device copy: {cp:.0f} GB/s (read+write of {COPY_BYTES / 2**20:.0f} MiB, median)")
    cc = r.get("compat_check")
    if cc:
        print(f"gpu-mode adapter custom_kernel on GEMV_TESTS: {cc['exact']}/{cc['shapes']} exact"
              + (f"  FAILURES {cc['failures']}" if cc["failures"] else ""))
    hdr = (f"{'M x K x L':>17} {'MB':>7} {'sets':>4} {'kernel us':>10} {'p10-p90':>13} {'GB/s':>6} {'%copy':>6} "
           f"{'torch dq+mm us':>14} {'x':>6} {'cuBLAS bf16 us':>14} {'x':>6} {'exact':>5} {'B200 model us':>13} "
           f"{'B200 SOL us':>11}")
    print(hdr)
    print("-" * len(hdr))
    for s in r["shapes"]:
        m, k, l = s["shape"]
        kr = s["kernel"]
        t = kr["median_us"]
        tq = s.get("torch_dq_mm", {}).get("median_us", float("nan"))
        tb = s.get("cublas_bf16", {}).get("median_us", float("nan"))
        print(f"{m:>6}x{k:>5}x{l:<4} {s['bytes'] / 1e6:7.1f} {s['input_sets']:4d} {t:10.2f} "
              f"{kr['p10_us']:6.1f}-{kr['p90_us']:<6.1f} {kr['GBps']:6.0f} {100 * kr['GBps'] / cp:5.1f}% "
              f"{tq:14.1f} {tq / t:5.1f}x {tb:14.2f} {tb / t:5.1f}x "
              f"{'yes' if s['exact_set0'] and s['exact_last'] else 'NO':>5} {s['b200_projection_us']:13.2f} "
              f"{s['b200_sol_us_task_yml'] or float('nan'):11.3f}")
    for s in r["shapes"]:
        kr = s["kernel"]
        rf = s.get("read_floor", {})
        floor = (f"; read floor (grid-stride read of the same bytes, same run) {rf['median_us']:.2f} us = "
                 f"{100 * s['bytes'] / (rf['median_us'] * 1e-6) / 1e9 / cp:.1f}% of copy, kernel / floor "
                 f"{kr['median_us'] / rf['median_us']:.3f}" if "median_us" in rf else
                 (f"; read floor: {rf['error']}" if "error" in rf else ""))
        print(f"  {s['shape']} config {tuple(s.get('config', ()))}: back-to-back batch average "
              f"{kr['batch_avg_us']:.2f} us/launch{floor}")
    if r["shapes"]:
        g = math.exp(sum(math.log(s["kernel"]["median_us"]) for s in r["shapes"]) / len(r["shapes"]))
        print(f"geomean kernel time: {g:.2f} us ({r['device']}, measured)")
    print("B200 model = ptxlab timing model PREDICTION (ptx_docs/timing.md), not a measurement; "
          "B200 SOL from gpu-mode task.yml. x = baseline time / kernel time.")
    if any(s.get("variants") for s in r["shapes"]):
        print("tuning sweep (register: rows_per_warp, warps, unroll, ksplit, prefetch; flat: warps, rows, prefetch, "
              "min CTAs/SM); first cell = the shape's config:")
        for s in r["shapes"]:
            m, k, l = s["shape"]
            rows = [(tuple(s.get("config", ())), s["kernel"]["median_us"], s["kernel"]["GBps"], True)]
            for v in s.get("variants", []):
                if "error" in v:
                    print(f"  {m}x{k}x{l} {tuple(v['config'])}: {v['error']}")
                else:
                    rows.append((tuple(v["config"]), v["median_us"], v["GBps"], v["exact"]))
            cells = "  ".join(f"{c}: {t:.2f} us{'' if ok else ' INEXACT'}" for c, t, g, ok in rows)
            best = min((x for x in rows if x[3]), key=lambda x: x[1])
            print(f"  {m}x{k}x{l}: {cells}  -> best {best[0]} {best[1]:.2f} us")
    for s in r["shapes"]:
        for key in ("torch_dq_mm", "cublas_bf16"):
            if "error" in s.get(key, {}):
                print(f"{s['shape']} {key}: {s[key]['error']}")
        if s["kernel"].get("starved_batches"):
            print(f"{s['shape']}: {s['kernel']['starved_batches']} batch(es) may have waited for the CPU")
    for e in r["errors"]:
        print("ERROR:", e)


if __name__ == "__main__":
    sys.exit(main())
