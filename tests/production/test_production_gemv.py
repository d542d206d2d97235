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
from ptxlab.production import submission_gemv as gc

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


@pytest.mark.parametrize("config", [(2, 4, 2), (4, 2, 1), (8, 1, 1), (4, 4, 4), (1, 8, 2), (4, 2, 2, 1, 1),
                                    (2, 4, 1, 2, 1), (2, 8, 2, 4, 0), (16, 1, 1, 1, 0)])
def test_tuning_variants(dev, rng, config: tuple) -> None:
    """The (rows_per_warp, warps, unroll[, ksplit, prefetch]) variants the H100 benchmark sweeps are exact too (both
    arches)."""
    m, k, l = 45, 96 * 32 // 2, 2  # 48 chunks: a partial second round for unroll 1 and 2
    p = gm.generate_gemv(m, k, l, seed=int(rng.integers(1 << 31)))
    for arch in ARCHS:
        assert exact(G.run_gemv(p, dev, arch, config=config), gm.reference_gemv(p)), (arch, config)


FLAT_CASES = [  # (config, M, K, L): P = 32*warps / (K/32) rows side by side, K/32 / 32 warps per row
    (("flat", 2, 2, 1, 2), 37, 2048, 2),   # 1 row per CTA pass, 2 warps per row, M tail
    (("flat", 4, 2, 1, 2), 13, 1024, 1),   # 4 rows side by side
    (("flat", 3, 4, 0, 1), 50, 3072, 1),   # 3 warps per row, no prefetch, R = 4
    (("flat", 8, 1, 1, 1), 9, 4096, 2),    # 2 rows side by side, 4 warps per row, R = 1
    (("flat", 16, 4, 1, 4), 41, 16384, 1),  # R = 4, 4 CTAs/SM, M tail (the B200 table's earlier 7168x16384x1 config)
    (("flat", 14, 8, 1, 2), 37, 7168, 2),   # the B200 table's 4096x7168x8 config: 2 rows side by side, R = 8, M tail
    (("flat", 16, 2, 1, 2), 21, 2048, 2),   # 8 rows side by side, M tail
    (("flat", 32, 4, 1, 1), 21, 16384, 1),  # the B200 table's 7168x16384x1 config: 1024 threads, 2 rows side by side
    (("flat", 10, 8, 1, 2), 43, 2048, 2),   # the B200 table's 7168x2048x4 config: 5 rows side by side, R = 8
    (("flat", 4, 2, 1, 2, 1), 13, 1024, 1),  # row blocks round-robin (opt-in order), partial last block
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", FLAT_CASES, ids=lambda c: "x".join(map(str, c[0][1:])) + f"_{c[1]}x{c[2]}x{c[3]}")
def test_flat_variant(dev, rng, arch: str, case: tuple) -> None:
    """The flat variant on every e2m1 code (GEMM-style data) with grids of 1, 2 and 5 persistent CTAs per batch (so
    CTAs own balanced row ranges of unequal length, loop over several rounds, with and without a partial first
    round), bit-exact."""
    cfg, m, k, l = case
    mod = G.compile_gemv(arch, cfg)
    w = gc.full_config(cfg)[1]
    for gx in (1, 2, 5):
        g = gm.generate_gemm(m, gm.GEMV_N_PADDED, k, l, seed=int(rng.integers(1 << 31)))
        ref = gm.reference_gemm(g)[:, :1, :]
        bufs = [dev.to_device(G.physical(x)) for x in (g.a, g.b, g.sfa, g.sfb)]
        c = dev.empty(l * m * 2)
        dev.memset(c, 0xFF)
        dev.launch(mod, G.KERNEL_NAME, grid=(gx, l, 1), block=(32 * w, 1, 1),
                   args=[*bufs, c, np.int32(m), np.int32(k), np.int32(l)])
        out = dev.to_host(c, np.float16, (l, m)).transpose(1, 0)[:, None, :]
        for buf in bufs + [c]:
            dev.free(buf)
        assert exact(out, ref), (arch, cfg, (m, k, l), gx)


def test_pick_config() -> None:
    """Tuned flat configs for the three gpu-mode benchmark shapes, the flat rule for K % 1024 == 0, the register
    variant otherwise; every pick fits its shape, and the launch plan covers the rows."""
    for kw in gm.GEMV_BENCHMARKS:
        shape = (kw["m"], kw["k"], kw["l"])
        assert gc.pick_config(*shape) == gc.full_config(gc.SHAPE_CONFIGS[shape]) and gc.is_flat(gc.pick_config(*shape))
        assert gc.pick_config(*shape, "sm_90a") == gc.pick_config(*shape)   # the H100-measured table
        b200 = gc.B200_SHAPE_CONFIGS.get(shape, gc.SHAPE_CONFIGS[shape])    # Blackwell: the model-chosen one first
        assert gc.pick_config(*shape, "sm_100a") == gc.full_config(b200) and gc.fits(b200, *shape[:2])
    for kw in gm.GEMV_TESTS:
        m, k, l = kw["m"], kw["k"], kw["l"]
        cfg = gc.pick_config(m, k, l)
        assert gc.fits(cfg, m, k) and gc.is_flat(cfg) == (k % 1024 == 0), (m, k, cfg)
        (gx, gy, _), (threads, _, _), smem = gc.launch_plan(m, k, l, cfg)
        assert gy == l and smem == 0 and threads == 32 * cfg[1]
        if not gc.is_flat(cfg):
            assert gx * gc.rows_per_cta(cfg) >= m
    assert not gc.fits(("flat", 16), 64, 7168) and gc.fits(("flat", 14), 64, 7168)  # K/32 = 224 must divide threads
    assert gc.pick_config(4096, 7168, 8, "sm_100a") == ("flat", 14, 8, 1, 2) != gc.pick_config(4096, 7168, 8)


def test_launch_geometry() -> None:
    """Register variant: ceil(M / rows per CTA) CTAs; the flat variant's grid depends on K, so k must be given."""
    assert G.launch_geometry(45, 2) == ((-(-45 // G.ROWS_PER_CTA), 2, 1), (G.THREADS, 1, 1))
    assert G.launch_geometry(45, 2, ("flat", 4, 2, 1, 2), k=1024) == gc.launch_plan(45, 1024, 2, ("flat", 4, 2, 1, 2))[:2]
    with pytest.raises(ValueError, match="pass k="):
        G.launch_geometry(45, 2, ("flat", 4, 2, 1, 2))


def test_rejects_bad_k() -> None:
    with pytest.raises(ValueError, match="multiple of 32"):
        G.check_shape(8, 48, 1)


def test_sass_uses_the_intended_instructions() -> None:
    """sm_100a decodes fp4 with the hardware cvt (F2FP...E2M1) and sums with HFMA2; sm_90a looks codes up with PRMT
    and sums with IDP.4A (integer dot products); both use non-allocating 128-bit loads; the PRMT tables stay in
    registers (no IMAD.U32 re-materialization per PRMT)."""
    from ptxlab.toolchain.sass import require

    r100 = require(G.compile_gemv("sm_100a"), ["F2FP.F16.E2M1.UNPACK_B", "LDG.E.NA.128", "HFMA2", "SHFL.BFLY"])
    assert r100["F2FP.F16.E2M1.UNPACK_B"] >= 16
    r90 = require(G.compile_gemv("sm_90a"), ["LDG.E.NA.128", "IDP.4A", "PRMT", "SHFL.BFLY"])
    sass90 = G.compile_gemv("sm_90a").sass()
    assert "E2M1" not in sass90 and "HFMA2" not in sass90
    assert r90["IDP.4A"] >= 64 and r90["PRMT"] >= 64
    assert sass90.count("IMAD.U32") < r90["PRMT"] // 4, "PRMT tables re-materialized"
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
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    p = gm.generate_gemv(48, 768, 2, seed=int(rng.integers(1 << 31)))
    data = gm.to_torch(p)
    data[6].fill_(float("nan"))
    out = gc.custom_kernel(data)
    assert out is data[6] and out.dtype == torch.float16
    assert exact(out.numpy(), gm.reference_gemv(p))


@pytest.mark.gpu
def test_custom_kernel_cuda(rng) -> None:
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no GPU: torch has no CUDA device")
    for kw in gm.GEMV_TESTS[:6]:
        p = gm.generate_gemv(kw["m"], kw["k"], kw["l"], seed=int(rng.integers(1 << 31)))
        data = gm.to_torch(p, device="cuda")
        data[6].fill_(float("nan"))
        out = gc.custom_kernel(data)
        torch.cuda.synchronize()
        assert exact(out.cpu().numpy(), gm.reference_gemv(p)), kw


def test_h100_benchmark_plumbing_on_cpu(monkeypatch, tmp_path) -> None:
    """benchmarks/bench_gemv_h100.py end to end on CPU tensors with a fake launcher (numpy reference instead of the
    kernel) and fake CUDA events: checks the script's data flow, checks, table and JSON -- not the kernel or timings."""
    import ctypes
    import importlib.util
    import json
    import time
    import types
    from pathlib import Path

    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_gemv_h100.py"
    spec = importlib.util.spec_from_file_location("bench_gemv_h100_plumbing", path)
    B = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(B)
    monkeypatch.setattr(B, "DEVICE", "cpu")
    monkeypatch.setattr(B, "SHAPES", [(40, 512, 1), (24, 256, 3)])
    monkeypatch.setattr(B, "L2_BYTES", 4096)
    monkeypatch.setattr(B, "COPY_BYTES", 1 << 16)
    monkeypatch.setattr(B, "COMPAT_TESTS", [{"m": 16, "k": 256, "l": 2}])
    monkeypatch.setattr(B, "VARIANTS", [(2, 4, 2), ("flat", 16, 2, 1, 2)])  # the flat one fits no shape here

    class FakeEvent:
        def __init__(self, enable_timing: bool = False) -> None:
            self.t = 0.0

        def record(self) -> None:
            self.t = time.perf_counter()

        def elapsed_time(self, other: "FakeEvent") -> float:
            return (other.t - self.t) * 1e3 + 1e-3

    class FakeGemv:
        """Stands in for CudaGemv: same params/launch interface, computes c with numpy from the raw pointers."""

        def __init__(self, dev: int = 0, arch=None, rows_per_warp: int = 4, warps: int = 2, unroll: int = 2,
                     config=None, **_kw) -> None:
            self.arch = "fake"
            self.config = gc.full_config(config if config is not None else (rows_per_warp, warps, unroll))

        def params(self, *args):
            return args, 0

        def launch(self, *_a, stream: int = 0, packed=None) -> None:
            a, b, sfa, sfb, c, m, k, l = packed[0]

            def arr(ptr, shape):
                n = int(np.prod(shape))
                return np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(ptr)).reshape(shape).transpose(1, 2, 0)

            prob = gm.NvFp4Problem(arr(a, (l, m, k // 2)), arr(b, (l, 128, k // 2)), arr(sfa, (l, m, k // 16)),
                                   arr(sfb, (l, 128, k // 16)), None, None, None, m, 1, k, l)
            out = np.ascontiguousarray(gm.reference_gemv(prob)[:, 0, :].T)
            ctypes.memmove(c, out.ctypes.data, out.nbytes)

    cuda = torch.cuda
    for name, val in {"Event": FakeEvent, "synchronize": lambda *a: None, "_sleep": lambda *a: None,
                      "init": lambda: None, "current_device": lambda: 0, "empty_cache": lambda: None,
                      "get_device_properties": lambda d: types.SimpleNamespace(name="fake-cpu"),
                      "get_device_capability": lambda d: (9, 0),
                      "current_stream": lambda *a: types.SimpleNamespace(cuda_stream=0)}.items():
        monkeypatch.setattr(cuda, name, val, raising=False)
    monkeypatch.setattr(gc, "CudaGemv", FakeGemv)
    monkeypatch.setenv("OUT", str(tmp_path))
    assert B.main(["--iters", "20", "--baseline-iters", "2"]) == 0
    rep = json.loads((tmp_path / "bench_gemv_h100.json").read_text())
    assert rep["errors"] == [] and len(rep["shapes"]) == 2
    for s in rep["shapes"]:
        assert s["exact_set0"] and s["exact_last"] and s["input_sets"] >= 2
        assert s["kernel"]["n"] == 20 and s["variants"][0]["exact"]
        assert "median_us" in s["torch_dq_mm"] and "median_us" in s["cublas_bf16"], s
    cc = rep["compat_check"]
    assert (cc["shapes"], cc["exact"], cc["failures"], cc["inputs"]) == (1, 1, [], "ptxlab.gpumode")
    # the torch-only tuple builder (used when ptxlab.gpumode cannot be imported on the GPU machine)
    gen = torch.Generator()
    gen.manual_seed(int(rng_seed := np.random.SeedSequence().entropy % (1 << 62)))
    m, k, l = 130, 256, 2
    st = B.make_set(torch, m, k, l, gen)
    data = B.torch_tuple(torch, st, m, k, l)
    ref_gm = gm.to_torch(gm.generate_gemv(m, k, l, seed=1))
    for x, y in zip(data, ref_gm):
        assert (x.shape, x.dtype) == (y.shape, y.dtype), rng_seed
    for i in (0, 1, 2, 3, 6):
        assert data[i].stride() == ref_gm[i].stride(), (i, rng_seed)
    want = B.reference(torch, st).numpy().T[:, None, :]
    assert np.array_equal(gm.reference_gemv(gm.from_torch(data)), want), rng_seed
    data[6].fill_(float("nan"))
    assert exact(gc.custom_kernel(data).numpy(), want), rng_seed


def test_full_config_refuses_extra_entries() -> None:
    """A config longer than its variant's #define list is refused (config_defines would drop the extra entries);
    the flat variant's sixth entry (row order) is accepted."""
    assert gc.full_config(("flat", 16, 2, 1, 2, 1)) == ("flat", 16, 2, 1, 2, 1)
    assert gc.full_config((4, 2, 2, 1, 0)) == gc.DEFAULT_CONFIG
    for bad in (("flat", 16, 2, 1, 2, 1, 1), (4, 2, 2, 1, 0, 1)):
        with pytest.raises(ValueError, match="at most"):
            gc.full_config(bad)
