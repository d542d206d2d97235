"""CUDA-core NVFP4 GEMV (ptxlab/kernels/nvfp4_gemv_cudacore.cu): both arches' PTX on the emulator, exact.

Fresh random inputs (gpu-mode generators, random seeds from the ``rng`` fixture), output poisoned with NaN by the
wrapper, bitwise comparison with the float64 reference rounded to fp16. The full GEMV_TESTS list runs in
``benchmarks/emu_gemv_tests.py``; here a fast subset plus random shapes.
"""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab import gpumode as gm
from ptxlab.production import gemv as G
from ptxlab.production import gpumode_compat as gc

ARCHS = ("sm_90a", "sm_100a")
FAST_TESTS = [t for t in gm.GEMV_TESTS if t["m"] * t["k"] * t["l"] <= 512 * 1536 * 2]


@pytest.fixture(scope="module")
def dev():
    d = ptxlab.open_device("emu")
    yield d
    d.close()


def exact(out: np.ndarray, ref: np.ndarray) -> bool:
    return out.shape == ref.shape and np.array_equal(out.view(np.uint16), ref.view(np.uint16))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("shape", FAST_TESTS, ids=lambda t: f"{t['m']}x{t['k']}x{t['l']}")
def test_gpumode_test_shapes(dev, rng, arch: str, shape: dict) -> None:
    p = gm.generate_gemv(shape["m"], shape["k"], shape["l"], seed=int(rng.integers(1 << 31)))
    out = G.run_gemv(p, dev, arch)
    ref = gm.reference_gemv(p)
    assert gm.check_close(out, ref) == []
    assert exact(out, ref)


@pytest.mark.parametrize("arch", ARCHS)
def test_random_shapes(dev, rng, arch: str) -> None:
    """M not a multiple of the CTA's 8 rows, K chunks not a multiple of the warp's 32 lanes, several batches."""
    for _ in range(3):
        m = int(rng.integers(1, 70))
        k = 32 * int(rng.integers(1, 80))
        l = int(rng.integers(1, 4))
        p = gm.generate_gemv(m, k, l, seed=int(rng.integers(1 << 31)))
        p.b[1:] = 0xFF  # rows of b other than 0 must not matter
        p.sfb[1:] = 0x7F
        assert exact(G.run_gemv(p, dev, arch), gm.reference_gemv(p)), (m, k, l)


@pytest.mark.parametrize("arch", ARCHS)
def test_all_e2m1_codes_and_scales(dev, rng, arch: str) -> None:
    """gpu-mode GEMM-style data (every fp4 code incl. negatives and -0, SFs 0..3) in the GEMV layout: the
    per-16-block f16x2 sums are exact for any e2m1 data; with these sizes the fp32 sum is exact too."""
    m, k, l = 37, 640, 2
    g = gm.generate_gemm(m, gm.GEMV_N_PADDED, k, l, seed=int(rng.integers(1 << 31)))
    ref = gm.reference_gemm(g)[:, :1, :]
    g.n, g.c = 1, g.c[:, :1, :]
    assert exact(G.run_gemv(g, dev, arch), ref)


def test_rejects_bad_k() -> None:
    with pytest.raises(ValueError, match="multiple of 32"):
        G.check_shape(8, 48, 1)


def test_sass_uses_the_intended_instructions() -> None:
    """sm_100a decodes fp4 with the hardware cvt (F2FP...E2M1), both use non-allocating 128-bit loads and HFMA2."""
    from ptxlab.toolchain.sass import require

    r100 = require(G.compile_gemv("sm_100a"), ["F2FP.F16.E2M1.UNPACK_B", "LDG.E.NA.128", "HFMA2", "SHFL.BFLY"])
    assert r100["F2FP.F16.E2M1.UNPACK_B"] >= 16
    r90 = require(G.compile_gemv("sm_90a"), ["LDG.E.NA.128", "HFMA2", "SHFL.BFLY"])
    assert "E2M1" not in G.compile_gemv("sm_90a").sass()
    assert r90["HFMA2"] >= 32
    for arch in ARCHS:
        res = G.compile_gemv(arch).resources[G.KERNEL_NAME]
        assert res.spill_stores == 0 and res.stack_bytes == 0, res


def test_compat_constants_and_bare_nvrtc() -> None:
    """The self-contained adapter agrees with the wrapper and compiles with NVRTC and no include path."""
    assert (gc.ROWS_PER_CTA, gc.THREADS, gc.KERNEL_NAME) == (G.ROWS_PER_CTA, G.THREADS, G.KERNEL_NAME)
    assert "#include" not in G.kernel_source()
    for arch in ("sm_90a", "sm_100a"):
        assert len(gc.nvrtc_cubin(arch)) > 1000
    assert gc.gemv_arch(9, 0) == "sm_90a" and gc.gemv_arch(10, 0) == "sm_100a"


def test_custom_kernel_emulator_path(rng) -> None:
    torch = pytest.importorskip("torch")
    p = gm.generate_gemv(48, 768, 2, seed=int(rng.integers(1 << 31)))
    data = gm.to_torch(p)
    data[6].fill_(float("nan"))
    out = gc.custom_kernel(data)
    assert out is data[6] and out.dtype == torch.float16
    assert exact(out.numpy(), gm.reference_gemv(p))


@pytest.mark.gpu
def test_custom_kernel_cuda(rng) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    for kw in gm.GEMV_TESTS[:6]:
        p = gm.generate_gemv(kw["m"], kw["k"], kw["l"], seed=int(rng.integers(1 << 31)))
        data = gm.to_torch(p, device="cuda")
        data[6].fill_(float("nan"))
        out = gc.custom_kernel(data)
        torch.cuda.synchronize()
        assert exact(out.cpu().numpy(), gm.reference_gemv(p)), kw
