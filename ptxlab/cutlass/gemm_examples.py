"""Runners of the CUTLASS 3.x dense GEMM examples whose operands are global or member ``DeviceAllocation``s
(70, 71, 74 on Blackwell; 48, 49 on Hopper): one data-driven runner, one table row per example.

The wrapper's ``ptxlab_host`` gets the list of buffers (stubs/cutlass/util/device_memory.h hands them to the
example's ``DeviceAllocation::reset`` calls in order: A, B, C, D, the reference D), the example's own host code
builds every kernel parameter on the emulator and its launch is captured (capture.py). Data: the examples'
``initialize_block`` fills 16/32-bit operands with integers in [-8, 8] and 8-bit ones in [-2, 2]
(``BlockFillRandomUniform``, 0 mantissa bits); the reference is the examples' device reference GEMM (float
accumulation, ``D = alpha * acc + beta * C`` in float, converted to the output type with round-to-nearest), exact
for these integers.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from . import build, capture
from .common import ExampleResult, module, reference_gemm


@dataclass(frozen=True)
class GemmExample:
    """One example: where it is, its element types, the shapes its tiles / clusters take, how it is built."""

    wrapper: str                      # ptxlab/cutlass/wrappers/<wrapper>
    example_dir: str                  # under the wheel's examples/
    arch: str                         # sm_100a / sm_90a
    ab: str                           # element type of A and B: f16 | bf16 | f32 | e4m3
    cd: str                           # element type of C and D: f32 | f16
    multiple: tuple                   # (M, N, K) multiples this runner draws (the example's tile x cluster)
    description: str
    smallest: dict
    extra: tuple = ()                 # ints for the wrapper's PTXLAB_OPTIONS (example_gemm_host.cuh)
    allocations: tuple = ("A", "B", "C", "D", "ref_D")   # DeviceAllocation::reset order in the example
    variants: tuple = ()              # main()-run examples (example_main_host.cuh): its kernels, in launch order,
    #                                   or (description, extra command-line words) when variant i is one launch of
    #                                   the same kernel with other options (74's decomposition modes)
    entries: tuple = ()               # launch i -> (index among the module's device_kernel entries, substrings its
    #                                   mangled name must contain, substrings it must not): launches of identical
    #                                   kernel types share one entry


def _dtype(name: str):
    if name == "bf16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    if name == "e4m3":
        import ml_dtypes
        return ml_dtypes.float8_e4m3fn
    return {"f16": np.float16, "f32": np.float32}[name]


def _draw(rng: np.random.Generator, shape, name: str) -> np.ndarray:
    lim = 2 if name == "e4m3" else 8
    return rng.integers(-lim, lim + 1, size=shape).astype(np.float32)


SM_COUNT = {90: 132, 100: 148}      # what the example's device queries answer: H100 SXM, B200


def _entry(mod: Any, ex: "GemmExample", variant: int) -> str:
    """The kernel entry of launch ``variant``. NVRTC emits one device_kernel<...> entry per distinct kernel type, in
    the order main() first instantiates them; ``ex.entries`` maps launches to entries where types repeat, and its
    marks (substrings of the mangled name: schedule, epilogue, fusion) are checked, so a changed order or a changed
    CUTLASS raises instead of launching another kernel with this launch's parameters."""
    ks = [k for k in mod.kernels if "device_kernel" in k]
    if not ex.entries:
        if len(ks) != 1:
            raise capture.CaptureError(f"{ex.wrapper}: expected one device_kernel entry, the module has {len(ks)}")
        return ks[0]
    idx, need, avoid = ex.entries[variant]
    n = len({e[0] for e in ex.entries})
    if len(ks) != n:
        raise capture.CaptureError(f"{ex.wrapper}: expected {n} distinct device_kernel entries, the module has "
                                   f"{len(ks)}; update GemmExample.entries (ptxlab/cutlass/gemm_examples.py)")
    k = ks[idx]
    if not all(x in k for x in need) or any(x in k for x in avoid):
        raise capture.CaptureError(f"{ex.wrapper} launch {variant}: entry {idx} is not the kernel expected "
                                   f"(needs {need}, not {avoid}): {k[:200]}...")
    return k


def gemm_runner(ex: GemmExample, extra_fn: Optional[Callable[[dict], tuple]] = None) -> Callable:
    """Runner of ``ex``: A (M, K) row-major, B (K, N) column-major, C and D (M, N) column-major as in the examples."""

    def run_gemm(dev: Any, m: int, n: int, k: int, alpha: float = 1.0, beta: float = 0.0, seed: int = 0,
                 variant: int = 0, **options) -> ExampleResult:
        if ex.variants and not 0 <= variant < len(ex.variants):
            raise ValueError(f"{ex.wrapper}: variant {variant}: main() runs {len(ex.variants)} kernels, 0 .. "
                             f"{len(ex.variants) - 1}: " + "; ".join(f"{i} {v}" for i, v in enumerate(ex.variants)))
        if variant and not ex.variants:
            raise ValueError(f"{ex.wrapper} has one kernel (variant 0)")
        mm, mn, mk = ex.multiple
        if m % mm or n % mn or k % mk:
            raise ValueError(f"{ex.wrapper}: ({m},{n},{k}) must be multiples of {ex.multiple} here (the example's "
                             "tile and cluster shape; ptxlab's reference test does not draw residues)")
        t0 = time.perf_counter()
        mod = module(ex.wrapper, [build.cutlass_source_dir() / "examples" / ex.example_dir], arch=ex.arch)
        entry = _entry(mod, ex, variant)
        t1 = time.perf_counter()
        rng = np.random.default_rng(seed)
        av, bv, cv = _draw(rng, (m, k), ex.ab), _draw(rng, (n, k), ex.ab), _draw(rng, (m, n), ex.cd)
        tab, tcd = _dtype(ex.ab), _dtype(ex.cd)
        data = {"A": av.astype(tab), "B": bv.astype(tab), "C": np.ascontiguousarray(cv.T).astype(tcd)}
        nbytes = {"A": m * k * np.dtype(tab).itemsize, "B": n * k * np.dtype(tab).itemsize,
                  "C": m * n * np.dtype(tcd).itemsize, "D": m * n * np.dtype(tcd).itemsize}
        nbytes["ref_D"] = nbytes["D"]
        bufs = {}
        for name in ex.allocations:
            if name in data:
                bufs[name] = dev.to_device(data[name].view(np.uint8).reshape(-1))
            else:
                bufs[name] = dev.empty(nbytes[name])
                dev.memset(bufs[name], 0xFF)
        bufs["workspace"] = dev.empty(1 << 20)
        dev.memset(bufs["workspace"], 0)
        allocs = np.array([[bufs[x].ptr, bufs[x].nbytes] for x in ex.allocations], np.uint64).reshape(-1)
        psize = dev.param_layout(mod, entry)[0].size
        head = [bufs["workspace"], np.uint32(psize), dev.to_device(allocs), np.uint32(len(ex.allocations))]
        if ex.variants:
            argv = [f"--m={m}", f"--n={n}", f"--k={k}", f"--alpha={float(alpha)!r}", f"--beta={float(beta)!r}"]
            v = ex.variants[variant]
            skip = variant
            if isinstance(v, tuple):               # same kernel, other options: the first launch is captured
                argv += list(v[1])
                skip = 0
            text = np.frombuffer("".join(a + "\0" for a in argv).encode(), np.uint8)
            cc = int(ex.arch[3:].rstrip("a"))
            tail = [dev.to_device(text), np.int32(len(argv)), np.uint32(skip), np.int32(cc),
                    np.int32(SM_COUNT[cc])]
        else:
            extra = tuple(extra_fn(options)) if extra_fn else tuple(ex.extra)
            tail = [np.int32(m), np.int32(n), np.int32(k), np.float32(alpha), np.float32(beta),
                    dev.to_device(np.array(list(extra) or [0], np.int32))]
        launch = capture.run_host(dev, mod, head + tail)
        if len(launch.args) != 1 or len(launch.args[0][0]) != psize:
            raise capture.CaptureError(f"{ex.wrapper}: the captured launch passes {[len(a) for a, _ in launch.args]} "
                                       f"argument bytes, the entry {entry[:60]}... takes one Params of {psize}")
        if launch.workspace_bytes > bufs["workspace"].nbytes:
            raise capture.CaptureError(f"{ex.wrapper} asked for {launch.workspace_bytes} workspace bytes (> 1 MiB)")
        t2 = time.perf_counter()
        args = capture.resolve_tensor_maps(dev, launch, list(bufs.values()))
        capture.launch_captured(dev, mod, entry, launch, args)
        t3 = time.perf_counter()
        d = dev.to_host(bufs["D"], np.uint8).view(tcd).reshape(n, m).T
        ref = reference_gemm(av, bv, cv, alpha, beta).astype(tcd)
        as_bits = np.uint32 if tcd == np.float32 else np.uint16
        return ExampleResult(ex.wrapper.removesuffix(".cu"), dict(m=m, n=n, k=k, alpha=alpha, beta=beta),
                             {"D": np.ascontiguousarray(d).view(as_bits)}, {"D": ref.view(as_bits)}, launch,
                             dict(getattr(dev, "last_stats", {}) or {}),
                             dict(build=t1 - t0, host=t2 - t1, kernel=t3 - t2))
    return run_gemm


_SM2, _EVT, _NOSMEM = ("2x1SM",), ("TreeVisitor",), ("NoSmem",)     # marks of kernel entries (mangled names)

# example 74 asks for a preferred 4x4 cluster with a 2x1 fallback (dynamic clusters, not modelled): the command line
# makes both 2x1, a plain cluster launch
_CLUSTER_2x1 = ("--preferred_cluster_m=2", "--preferred_cluster_n=1", "--fallback_cluster_m=2",
                "--fallback_cluster_n=1")

GEMM_EXAMPLES = [
    GemmExample("example_70.cu", "70_blackwell_gemm", "sm_100a", "f16", "f32", (256, 256, 64),
                "CUTLASS example 70: FP16 GEMM, F32 C/D, 2-SM 256x128 tiles, 2x2 cluster, CLC scheduler "
                "(70_blackwell_fp16_gemm.cu)", dict(m=256, n=256, k=64), extra=(0,)),
    GemmExample("example_71.cu", "71_blackwell_gemm_with_collective_builder", "sm_100a", "f16", "f16",
                (256, 256, 64), "CUTLASS example 71: its main()'s ten FP16 GEMM kernels (1-SM / 2-SM, schedules, "
                "stage count, custom EVT; --variant), 2x2 cluster (71_blackwell_gemm_with_collective_builder.cu)",
                dict(m=256, n=256, k=64), variants=(
                    "KernelScheduleAuto + EpilogueScheduleAuto", "KernelScheduleAuto, 3 stages",
                    "1SM + NoSmemWarpSpecialized1Sm", "1SM + TmaWarpSpecialized1Sm",
                    "2SM + NoSmemWarpSpecialized2Sm", "2SM + TmaWarpSpecialized2Sm", "Auto + custom EVT",
                    "1SM + TmaWarpSpecialized1Sm + custom EVT", "2SM + TmaWarpSpecialized2Sm + custom EVT",
                    "1SM + NoSmemWarpSpecialized1Sm + custom EVT"),
                # kernels 5 and 8 are the types of 0 and 6 (the builder resolves Auto to the 2-SM TMA schedules)
                entries=((0, _SM2, _EVT + _NOSMEM), (1, _SM2, _EVT + _NOSMEM), (2, _NOSMEM, _SM2 + _EVT),
                         (3, (), _SM2 + _EVT + _NOSMEM), (4, _SM2 + _NOSMEM, _EVT), (0, _SM2, _EVT + _NOSMEM),
                         (5, _SM2 + _EVT, _NOSMEM), (6, _EVT, _SM2 + _NOSMEM), (5, _SM2 + _EVT, _NOSMEM),
                         (7, _EVT + _NOSMEM, _SM2))),
    GemmExample("example_74.cu", "74_blackwell_gemm_streamk", "sm_100a", "f16", "f32", (256, 128, 64),
                "CUTLASS example 74: stream-K / split-K / data-parallel FP16 GEMM, 2-SM 256x128 tiles, 2x1 cluster "
                "(--variant: decomposition) (blackwell_gemm_streamk.cu)", dict(m=256, n=128, k=256), variants=(
                    ("StreamK", ("--decomposition=StreamK",) + _CLUSTER_2x1),
                    ("SplitK, 2 splits", ("--decomposition=SplitK", "--splits=2") + _CLUSTER_2x1),
                    ("DataParallel", ("--decomposition=DataParallel",) + _CLUSTER_2x1),
                    ("Heuristic", ("--decomposition=Heuristic",) + _CLUSTER_2x1))),
    GemmExample("example_48.cu", "48_hopper_warp_specialized_gemm", "sm_90a", "f32", "f32", (512, 256, 32),
                "CUTLASS example 48: Hopper FP32 GEMM (TF32 wgmma), warp-specialized, 4x2 cluster, persistent "
                "scheduler (48_hopper_warp_specialized_gemm.cu)", dict(m=512, n=256, k=32), extra=(1, 132)),
    GemmExample("example_49.cu", "49_hopper_gemm_with_collective_builder", "sm_90a", "f16", "f16",
                (256, 128, 64), "CUTLASS example 49: its main()'s seven Hopper FP16 GEMM kernels (wgmma; TMA, "
                "warp-specialized, ping-pong, cooperative stream-K, custom EVT; --variant) (49_collective_builder.cu)",
                dict(m=256, n=128, k=64), variants=(
                    "auto schedule, auto stages", "auto schedule, 5 stages", "KernelTma + NoSmemWarpSpecialized",
                    "KernelTmaWarpSpecialized + NoSmemWarpSpecialized", "ping-pong + TmaWarpSpecialized",
                    "cooperative + stream-K", "cooperative + custom EVT"),
                entries=((0, ("Cooperative",), _EVT + ("StreamK",)), (1, ("Cooperative", "GmmaWarpSpecializedILi5E"), _EVT),
                         (2, ("MainloopSm90TmaGmmaILi",), _EVT + ("Cooperative", "Pingpong")),
                         (3, ("KernelTmaWarpSpecializedE",), _EVT + ("Cooperative", "Pingpong")),
                         (4, ("Pingpong",), _EVT), (5, ("Cooperative", "StreamK"), _EVT),
                         (6, ("Cooperative",) + _EVT, ("StreamK",)))),
]


def examples() -> dict:
    """{name: (runner, description, smallest shape)} for runners.EXAMPLES."""
    return {ex.wrapper.removesuffix(".cu"): (gemm_runner(ex), ex.description, ex.smallest) for ex in GEMM_EXAMPLES}
