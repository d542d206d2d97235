"""One runner per CUTLASS example: inputs as the example's main() makes them, the captured launch, the reference."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import build, capture
from . import gemm_examples as _gemm_examples
from .common import ExampleResult, initialize_tensor, module, reference_gemm  # noqa: F401  (re-exported)


def tutorial_dir() -> Path:
    return build.cutlass_source_dir() / "examples" / "cute" / "tutorial" / "blackwell"


# ------------------------------------------------------------------------------------------------ tutorials
def _tutorial_f16_gemm(wrapper: str, tile: tuple) -> Callable:
    """Runner for the CuTe Blackwell GEMM tutorials (half_t A/B K-major, float C/D N-major, alpha/beta float)."""

    def run_tutorial(dev: Any, m: int, n: int, k: int, alpha: float = 1.0, beta: float = 0.0, seed: int = 0,
                     host_dev: Any = None) -> ExampleResult:
        if m % tile[0] or n % tile[1] or k % tile[2]:
            raise ValueError(f"{wrapper}: ({m},{n},{k}) must be multiples of the MMA tiler {tile} (the example refuses "
                             "other shapes: 'OOB accesses are not supported')")
        t0 = time.perf_counter()
        mod = module(wrapper, [tutorial_dir()])
        t1 = time.perf_counter()
        rng = np.random.default_rng(seed)
        a = initialize_tensor(rng, (m, k)).astype(np.float16)
        b = initialize_tensor(rng, (n, k)).astype(np.float16)
        c = initialize_tensor(rng, (m, n)).astype(np.float32)
        bufs = [dev.to_device(a), dev.to_device(b), dev.to_device(c), dev.empty(m * n * 4)]
        dev.memset(bufs[3], 0xFF)
        hdev = host_dev or dev       # the example's host code runs on the emulator
        if hdev is not dev:
            raise ValueError("host_dev must be the launching device for now (its pointers go into the parameters)")
        launch = capture.run_host(hdev, mod, [*bufs, np.int32(m), np.int32(n), np.int32(k), np.float32(alpha),
                                              np.float32(beta)])
        t2 = time.perf_counter()
        args = capture.resolve_tensor_maps(dev, launch, bufs)
        capture.launch_captured(dev, mod, capture.kernel_entry(mod, "gemm_device"), launch, args)
        t3 = time.perf_counter()
        d = dev.to_host(bufs[3], np.float32).reshape(m, n)
        return ExampleResult(wrapper.removesuffix(".cu"), dict(m=m, n=n, k=k, alpha=alpha, beta=beta), {"D": d},
                             {"D": reference_gemm(a, b, c, alpha, beta)}, launch,
                             dict(getattr(dev, "last_stats", {}) or {}),
                             dict(build=t1 - t0, host=t2 - t1, kernel=t3 - t2))
    return run_tutorial


# ------------------------------------------------------------------------------------------------ example 72b
def _ue8m0_host(x: np.ndarray) -> np.ndarray:
    """cutlass::float_ue8m0_t::convert_from_float, host branch (float8.h): the float's exponent field, plus one when
    the mantissa is non-zero (round up), except at exponent 0xFE and for subnormals <= 2^-127; NaN/Inf -> 0xFF."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32)
    exp = ((bits >> 23) & 0xFF).astype(np.int64)
    mant = bits & 0x7FFFFF
    up = (mant > 0) & (exp != 0xFE) & ~((exp == 0) & (mant <= 0x400000))
    out = (exp + up).astype(np.uint8)
    return np.where(~np.isfinite(x), np.uint8(0xFF), out)


def reference_72b(a, sfa, b, sfb, c, alpha: float, beta: float, st: float, vec: int = 16):
    """Gemm3x of cutlass/util/reference/host/gett.hpp for 72b: block-scaled mainloop, D = alpha*acc + beta*C, then
    compute_1d_scaling_factor_and_quantized_output (row-major D, SfStrategy::SfDGen, vector 16 along N).
    a (M,K) / b (N,K) values, sfa (M,K/16) / sfb (N,K/16) scale values, c (M,N) float32. Returns (D e2m1 codes
    (M,N), SFD ue8m0 codes (M,N/16))."""
    from .. import numerics

    A = a.astype(np.float64) * np.repeat(sfa.astype(np.float64), vec, axis=1)
    B = b.astype(np.float64) * np.repeat(sfb.astype(np.float64), vec, axis=1)
    acc = (A @ B.T).astype(np.float32)                    # exact for the data drawn below (checked by the caller)
    f32 = np.float32
    out = (f32(alpha) * acc).astype(np.float32)
    out = (f32(beta).astype(np.float64) * c.astype(np.float64) + out.astype(np.float64)).astype(np.float32)  # fma
    M, N = out.shape
    grp = np.abs(out).reshape(M, N // vec, vec).max(axis=2)
    fp_max = f32(6.0)                                        # numeric_limits<float_e2m1_t>::max()
    scale_down = f32(1.0) / fp_max
    st_down = f32(st) * scale_down
    pvscale = (grp * st_down).astype(np.float32)
    sfd = _ue8m0_host(pvscale)
    q_up = numerics.decode_ue8m0(sfd).astype(np.float32)
    with np.errstate(over="ignore", divide="ignore"):
        rcp = (f32(1.0) / q_up).astype(np.float32)
        acc_scale = (f32(st) * rcp).astype(np.float32)
    acc_scale = np.minimum(acc_scale, np.finfo(np.float32).max)
    scaled = (out * np.repeat(acc_scale, vec, axis=1)).astype(np.float32)
    return numerics.encode_e2m1(scaled), sfd


def run_72b(dev: Any, m: int, n: int, k: int, alpha: float = 1.0, beta: float = 0.0, seed: int = 0,
            swizzle: int = 0) -> ExampleResult:
    """CUTLASS example 72b (NVFP4 x NVFP4 -> FP4 D + UE8M0 SFD, norm constant 2 as in its initialize())."""
    from .. import numerics, scales

    if m % 128 or n % 128 or k % 256:
        raise ValueError(f"example_72b: ({m},{n},{k}) must be multiples of the MMA tile (128,128,256) here "
                         "(the kernel handles residues, ptxlab's reference test does not draw them)")
    t0 = time.perf_counter()
    mod = module("example_72b.cu", [build.cutlass_source_dir() / "examples" / "72_blackwell_narrow_precision_gemm"])
    t1 = time.perf_counter()
    rng = np.random.default_rng(seed)
    # the example fills e2m1 A/B uniformly in [-2, 2] with integer values, C in [-4, 4]; scale factors are drawn
    # from {0.5, 1, 1.5, 2} (UE4M3-exact, non-zero) so that every product and sum is exact in fp32
    av = rng.integers(-2, 3, size=(m, k)).astype(np.float32)
    bv = rng.integers(-2, 3, size=(n, k)).astype(np.float32)
    sfa = rng.choice(np.array([0.5, 1.0, 1.5, 2.0], np.float32), size=(m, k // 16))
    sfb = rng.choice(np.array([0.5, 1.0, 1.5, 2.0], np.float32), size=(n, k // 16))
    c = rng.integers(-4, 5, size=(m, n)).astype(np.float32)
    st = 2.0                                                # block_Normconst = 2 in the example's initialize()
    a_bytes = numerics.pack_fp4(numerics.encode_e2m1(av))   # RowMajor (M, K)
    b_bytes = numerics.pack_fp4(numerics.encode_e2m1(bv))   # ColumnMajor K x N = (N, K) rows
    sfa_bytes = scales.permuted_bytes(scales.ref_to_permuted(numerics.encode_ue4m3(sfa)[:, :, None]))
    sfb_bytes = scales.permuted_bytes(scales.ref_to_permuted(numerics.encode_ue4m3(sfb)[:, :, None]))
    rest_m, rest_k = scales.sf_rest(m, n // 16)
    bufs = {"A": dev.to_device(a_bytes), "B": dev.to_device(b_bytes), "SFA": dev.to_device(sfa_bytes),
            "SFB": dev.to_device(sfb_bytes), "C": dev.to_device(c), "D": dev.empty(m * n // 2),
            "SFD": dev.empty(rest_m * rest_k * 512), "norm": dev.to_device(np.array([st], np.float32)),
            "workspace": dev.empty(1 << 20)}
    dev.memset(bufs["D"], 0xFF)
    dev.memset(bufs["SFD"], 0xFF)
    dev.memset(bufs["workspace"], 0)
    order = ["workspace", "A", "B", "SFA", "SFB", "C", "D", "SFD", "norm"]
    launch = capture.run_host(dev, mod, [bufs[x] for x in order] + [np.int32(m), np.int32(n), np.int32(k),
                                                                    np.float32(alpha), np.float32(beta),
                                                                    np.int32(swizzle)])
    if launch.workspace_bytes > bufs["workspace"].nbytes:
        raise capture.CaptureError(f"example_72b asked for {launch.workspace_bytes} workspace bytes (> 1 MiB)")
    t2 = time.perf_counter()
    args = capture.resolve_tensor_maps(dev, launch, list(bufs.values()))
    capture.launch_captured(dev, mod, capture.kernel_entry(mod, "device_kernel"), launch, args)
    t3 = time.perf_counter()
    d_codes = numerics.unpack_fp4(dev.to_host(bufs["D"], np.uint8).reshape(m, n // 2))
    sfd_perm = dev.to_host(bufs["SFD"], np.uint8)
    sfd_codes = scales.permuted_to_ref(scales.permuted_from_physical(
        sfd_perm.reshape(1, rest_m, rest_k, 32, 4, 4)), m, n // 16)[:, :, 0]
    ref_d, ref_sfd = reference_72b(av, sfa, bv, sfb, c, alpha, beta, st)
    return ExampleResult("example_72b", dict(m=m, n=n, k=k, alpha=alpha, beta=beta),
                         {"D": d_codes, "SFD": sfd_codes}, {"D": ref_d, "SFD": ref_sfd}, launch,
                         dict(getattr(dev, "last_stats", {}) or {}), dict(build=t1 - t0, host=t2 - t1, kernel=t3 - t2))


# ------------------------------------------------------------------------------------------------ examples 72a / 72c
def _run_72ac(wrapper: str, a_fmt: str, vec: int, sf_fmt: str):
    """72a (NVFP4 x NVFP4 -> BF16) and 72c (MXFP8 x MXFP4 -> BF16): 256x256 2-SM MMA tiles in a 2x4 cluster.
    Reference: Gemm3x without SFD: D = bf16_rn(fma(beta, C, alpha * acc))."""

    def run_72ac(dev: Any, m: int, n: int, k: int, alpha: float = 1.0, beta: float = 0.0, seed: int = 0,
                 swizzle: int = 0) -> ExampleResult:
        import ml_dtypes

        from .. import numerics, scales

        if m % 256 or n % 1024 or k % 256:
            raise ValueError(f"{wrapper}: ({m},{n},{k}) must be multiples of (256, 1024, 256) here (one 2x4 cluster "
                             "of 256x256 tiles; ptxlab's reference test does not draw residues)")
        t0 = time.perf_counter()
        mod = module(wrapper, [build.cutlass_source_dir() / "examples" / "72_blackwell_narrow_precision_gemm"])
        entry = capture.kernel_entry(mod, "device_kernel")
        t1 = time.perf_counter()
        rng = np.random.default_rng(seed)
        av = rng.integers(-2, 3, size=(m, k)).astype(np.float32)
        bv = rng.integers(-2, 3, size=(n, k)).astype(np.float32)
        choices = np.array([0.5, 1.0, 1.5, 2.0] if sf_fmt == "ue4m3" else [0.5, 1.0, 2.0], np.float32)
        sfa = rng.choice(choices, size=(m, k // vec))
        sfb = rng.choice(choices, size=(n, k // vec))
        c = rng.integers(-4, 5, size=(m, n)).astype(ml_dtypes.bfloat16)
        enc_sf = numerics.encode_ue4m3 if sf_fmt == "ue4m3" else numerics.encode_ue8m0
        a_bytes = (numerics.pack_fp4(numerics.encode_e2m1(av)) if a_fmt == "e2m1"
                   else numerics.encode_e4m3(av))
        b_bytes = numerics.pack_fp4(numerics.encode_e2m1(bv))
        bufs = {"A": dev.to_device(a_bytes), "B": dev.to_device(b_bytes),
                "SFA": dev.to_device(scales.permuted_bytes(scales.ref_to_permuted(enc_sf(sfa)[:, :, None]))),
                "SFB": dev.to_device(scales.permuted_bytes(scales.ref_to_permuted(enc_sf(sfb)[:, :, None]))),
                "C": dev.to_device(c.view(np.uint16)), "D": dev.empty(m * n * 2), "workspace": dev.empty(1 << 20)}
        dev.memset(bufs["D"], 0xFF)
        dev.memset(bufs["workspace"], 0)
        psize = dev.param_layout(mod, entry)[0].size
        launch = capture.run_host(dev, mod, [bufs["workspace"], np.uint32(psize)]
                                  + [bufs[x] for x in ("A", "B", "SFA", "SFB", "C", "D")]
                                  + [np.int32(m), np.int32(n), np.int32(k), np.float32(alpha), np.float32(beta),
                                     np.int32(swizzle)])
        t2 = time.perf_counter()
        args = capture.resolve_tensor_maps(dev, launch, list(bufs.values()))
        capture.launch_captured(dev, mod, entry, launch, args)
        t3 = time.perf_counter()
        d = dev.to_host(bufs["D"], np.uint16).reshape(m, n)
        A = av.astype(np.float64) * np.repeat(sfa.astype(np.float64), vec, axis=1)
        B = bv.astype(np.float64) * np.repeat(sfb.astype(np.float64), vec, axis=1)
        acc = (A @ B.T).astype(np.float32)
        out = (np.float32(alpha) * acc).astype(np.float32)
        out = (np.float64(np.float32(beta)) * c.astype(np.float64) + out.astype(np.float64)).astype(np.float32)
        ref = out.astype(ml_dtypes.bfloat16).view(np.uint16)
        return ExampleResult(wrapper.removesuffix(".cu"), dict(m=m, n=n, k=k, alpha=alpha, beta=beta), {"D": d},
                             {"D": ref}, launch, dict(getattr(dev, "last_stats", {}) or {}),
                             dict(build=t1 - t0, host=t2 - t1, kernel=t3 - t2))
    return run_72ac


EXAMPLES: dict = {
    # name: (runner, description, smallest shape)
    "tutorial_02": (_tutorial_f16_gemm("tutorial_02.cu", (128, 256, 64)),
                    "CuTe Blackwell tutorial 02: tcgen05.mma + TMA (02_mma_tma_sm100.cu)", dict(m=128, n=256, k=64)),
    "tutorial_03": (_tutorial_f16_gemm("tutorial_03.cu", (512, 1024, 64)),
                    "CuTe Blackwell tutorial 03: TMA multicast in a 4x4 cluster (03_mma_tma_multicast_sm100.cu)",
                    dict(m=512, n=1024, k=64)),
    "tutorial_04": (_tutorial_f16_gemm("tutorial_04.cu", (512, 1024, 64)),
                    "CuTe Blackwell tutorial 04: 2-SM tcgen05.mma, 4x4 cluster (04_mma_tma_2sm_sm100.cu)",
                    dict(m=512, n=1024, k=64)),
    "tutorial_05": (_tutorial_f16_gemm("tutorial_05.cu", (512, 1024, 64)),
                    "CuTe Blackwell tutorial 05: 2-SM MMA + TMA epilogue (05_mma_tma_epi_sm100.cu)",
                    dict(m=512, n=1024, k=64)),
    "example_72a": (_run_72ac("example_72a.cu", "e2m1", 16, "ue4m3"),
                    "CUTLASS example 72a: NVFP4 x NVFP4 -> BF16, 2-SM 256x256 tiles, 2x4 cluster "
                    "(72a_blackwell_nvfp4_bf16_gemm.cu)", dict(m=256, n=1024, k=256)),
    "example_72c": (_run_72ac("example_72c.cu", "e4m3", 32, "ue8m0"),
                    "CUTLASS example 72c: MXFP8 x MXFP4 -> BF16, 2-SM 256x256 tiles, 2x4 cluster "
                    "(72c_blackwell_mixed_mxfp8_bf16_gemm.cu)", dict(m=256, n=1024, k=256)),
    "example_72b": (run_72b, "CUTLASS example 72b: NVFP4 x NVFP4 GEMM, FP4 D + UE8M0 SFD (72b_blackwell_nvfp4_nvfp4_gemm.cu)",
                    dict(m=128, n=128, k=256)),
}


def examples() -> dict:
    """{name: description}"""
    return {k: v[1] for k, v in EXAMPLES.items()}


def run(name: str, dev: Any, **shape) -> ExampleResult:
    """Build and run example ``name`` on ``dev``; ``shape`` as the runner takes it (defaults: smallest shape)."""
    if name not in EXAMPLES:
        raise KeyError(f"unknown CUTLASS example {name!r}; available: {sorted(EXAMPLES)}")
    fn, _, smallest = EXAMPLES[name]
    return fn(dev, **{**smallest, **shape})


EXAMPLES.update(_gemm_examples.examples())
