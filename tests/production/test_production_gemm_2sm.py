"""The 2-SM variant of the production NVFP4 GEMM (-DGEMM_PAIR=1, gemm::run_pair in nvfp4_gemm_tcgen05.cu) on the
emulator: CTA pairs in (2,1,1) clusters, one tcgen05.mma.cta_group::2 (M = 256) per K chunk.

Fresh gpu-mode GEMM data every run (seed in the failure message), c poisoned before every launch; c must equal
fp16(RNE) of the bit-exact tensor-core model over the full K, bit for bit (the same check as the default kernel's
tests/test_production_gemm.py). Also: SASS of the 2-SM builds, the selection plumbing (nvfp4_gemm(variant=...),
PTXLAB_GEMM_VARIANT in the gpu-mode adapter with its cluster launch through cuLaunchKernelEx, lab.py export
--variant), and the refusals. The whole GEMM_TESTS list: benchmarks/emu_gemm_tests.py --all --variant 2sm --exact."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab import gpumode
from ptxlab.production import export
from ptxlab.production import gemm as G
from ptxlab.production import submission_gemm as compat

from test_export import _FakeDriver, _fake_cuda, load, write_submission  # noqa: F401 (fixtures of the adapter tests)
from test_production_gemm import fresh_seed


@pytest.fixture(scope="module")
def dev():
    d = ptxlab.open_device("emu")
    yield d
    d.close()


# (m, n, k, l, bn, stages): M % 256 == 128 (the last pair's odd CTA has no rows of its own), ring wraps (K blocks >
# stages) with BN 128 and L = 2, two pairs x two N tiles with BN 256
CASES = [
    (128, 256, 256, 1, 256, None),
    (256, 384, 768, 2, 128, 2),
    (512, 512, 512, 1, 256, 2),
    (384, 256, 256, 1, 256, None),
]


@pytest.mark.parametrize("m,n,k,l,bn,stages", CASES,
                         ids=[f"{c[0]}x{c[1]}x{c[2]}x{c[3]}_bn{c[4]}_s{c[5]}" for c in CASES])
def test_2sm_exact_vs_tensor_core_model(dev, m, n, k, l, bn, stages):
    seed = fresh_seed()
    p = gpumode.generate_gemm(m, n, k, l, seed)
    rep: dict = {}
    c = G.nvfp4_gemm(dev, p, bn=bn, stages=stages, variant="2sm", report=rep)
    assert rep["variant"] == "2sm" and rep["cluster"] == (2, 1, 1)
    assert rep["grid"] == (2 * (-(-m // 256)), n // bn, l)
    assert rep["tx_bytes"] == G.stage_bytes(bn, pair=True) == G.stage_bytes(bn) - bn // 2 * 128
    exp = G.model_c(p)
    bad = np.argwhere(c.view(np.uint16) != exp.view(np.uint16))
    assert not len(bad), (f"seed={seed}: {len(bad)} of {c.size} differ; first (m, n, l) = {tuple(bad[0])}: "
                          f"got {c[tuple(bad[0])]!r} expected {exp[tuple(bad[0])]!r}")


@pytest.mark.parametrize("bn", [128, 256])
def test_2sm_sass(bn):
    from ptxlab.toolchain.sass import opcodes, require

    counts = require(G.compile_gemm(bn, variant="2sm"),
                     ["UTCATOMSWS.2CTA", "UTCCP.T.S.2CTA", "UTCOMMA.2CTA", "UTCBAR.2CTA.MULTICAST", "UTMALDG.3D.2CTA",
                      "UTMALDG.2D.MULTICAST.2CTA", "UCGABAR_ARV", "LDTM"])
    assert counts["UTCOMMA.2CTA"] >= 4, counts
    default = opcodes(G.compile_gemm(bn).sass())
    assert not [o for o in default if "2CTA" in o or o.startswith("UCGABAR")], "the default build must stay 1-SM"


def test_2sm_refusals(dev):
    p = gpumode.generate_gemm(128, 256, 512, 1, fresh_seed())
    with pytest.raises(ValueError, match="does not combine with split-K"):
        G.nvfp4_gemm(dev, p, variant="2sm", splits=2)
    with pytest.raises(ValueError, match="not a GEMM variant"):
        G.nvfp4_gemm(dev, p, variant="4sm")
    with pytest.raises(ValueError, match="module variant 1sm, call variant 2sm"):
        G.nvfp4_gemm(dev, p, variant="2sm", module=G.compile_gemm(256))
    with pytest.raises(ValueError, match="module variant 2sm, call variant 1sm"):
        G.nvfp4_gemm(dev, p, module=G.compile_gemm(256, variant="2sm"), variant="1sm")
    with pytest.raises(ValueError, match="this launch needs"):   # the default (cluster) variant checks its module too
        G.nvfp4_gemm(dev, p, module=G.compile_gemm(256, variant="2sm"))


def test_adapter_variant_setting_and_plan(monkeypatch):
    monkeypatch.delenv(compat.VARIANT_ENV, raising=False)
    assert compat.resolve_variant() == "cluster" == compat.GEMM_VARIANT
    monkeypatch.setenv(compat.VARIANT_ENV, "2SM")
    assert compat.resolve_variant() == "2sm"
    monkeypatch.setenv(compat.VARIANT_ENV, "pairs")
    with pytest.raises(ValueError, match="PTXLAB_GEMM_VARIANT"):
        compat.resolve_variant()
    plan = compat.launch_plan(384, 7168, 2304, 1, variant="2sm")
    assert plan["grid"] == (4, 28, 1) and plan["cluster"] == (2, 1, 1) and plan["pair"]
    assert plan["shared_bytes"] == 4 * (16384 + 128 * 128 + 2048 + 4096) + 1024
    assert compat.tensor_map_params(384, 7168, 2304, 1, 256, pair=True)["b"]["box"] == (128, 128, 1)
    with pytest.raises(ValueError, match="split-K"):
        compat.launch_plan(128, 256, 512, 1, splits=2, variant="2sm")
    monkeypatch.setenv(compat.VARIANT_ENV, "1SM")
    assert compat.resolve_variant() == "1sm"


class _FakeClusterDriver(_FakeDriver):
    """The adapter-test fake driver plus the cluster launch (cuLaunchKernelEx with a CUlaunchConfig)."""

    class CUlaunchAttributeID:
        CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = "cluster_dim"

    class CUlaunchConfig:
        pass

    class CUlaunchAttribute:
        def __init__(self):
            class _Dim:
                x = y = z = 0

            class _Val:
                clusterDim = _Dim()

            self.value = _Val()

    def cuLaunchKernelEx(self, cfg, func, params, extra):
        (attr,) = cfg.attrs
        assert cfg.numAttrs == 1 and attr.id == "cluster_dim"
        self.cuLaunchKernel(func, cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ, cfg.blockDimX, cfg.blockDimY,
                            cfg.blockDimZ, cfg.sharedMemBytes, cfg.hStream, params, extra)
        d = attr.value.clusterDim
        self.launches[-1]["cluster"] = (d.x, d.y, d.z)
        return (0,)


def test_adapter_2sm_cuda_path_with_fake_driver(tmp_path, monkeypatch):
    """PTXLAB_GEMM_VARIANT=2sm on the CUDA path: the -DGEMM_PAIR=1 build (real NVRTC), the b map's box of BN/2 rows,
    and a cluster launch (cuLaunchKernelEx, cluster (2,1,1)) with launch_plan's grid and SMEM on the caller's
    stream."""
    import cuda.bindings

    mod = load(write_submission(tmp_path, "nvfp4_gemm"))
    _fake_cuda(monkeypatch)
    fake = _FakeClusterDriver()
    monkeypatch.setattr(cuda.bindings, "driver", fake, raising=False)
    import sys

    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", fake)
    m, n, k, l = 384, 512, 768, 2
    ptrs = (0x10000, 0x20000, 0x30000, 0x40000, 0x50000)
    runner = mod.CudaGemm(0)
    runner.launch(*ptrs, m, n, k, l, stream=77, variant="2sm")
    plan = mod.launch_plan(m, n, k, l, variant="2sm")
    (launch,) = fake.launches
    assert launch["cluster"] == (2, 1, 1) and launch["grid"] == plan["grid"] == (4, 2, 2)
    assert launch["smem"] == plan["shared_bytes"] and launch["stream"] == ("CUstream", 77)
    assert fake.encodes[1]["box"] == [128, 128, 1]                       # b: BN/2 = 128 rows
    assert fake.attrs[0][2] == plan["shared_bytes"]


def test_export_variant_flag(tmp_path):
    text = export.render("nvfp4_gemm", variant="2sm")
    assert "\nGEMM_VARIANT = '2sm'  # GEMM variant baked by `lab.py export --variant 2sm`" in text
    assert '\nGEMM_VARIANT = "cluster"' in export.render("nvfp4_gemm")   # default unchanged
    assert "\nGEMM_VARIANT = '1sm'  # GEMM variant baked" in export.render("nvfp4_gemm", variant="1sm")
    with pytest.raises(ValueError, match="nvfp4_gemm only"):
        export.render("nvfp4_gemv", variant="2sm")
    with pytest.raises(ValueError, match="does not combine"):
        export.render("nvfp4_gemm", variant="2sm", splits="2")
    sub = load(write_submission(tmp_path, "nvfp4_gemm"))
    assert "#define GEMM_PAIR 0" in sub.KERNEL_SRC and "run_pair" in sub.KERNEL_SRC   # both builds in one text


def test_custom_kernel_2sm_on_emulator(monkeypatch):
    """custom_kernel with PTXLAB_GEMM_VARIANT=2sm on CPU tensors runs the pair build on the emulator."""
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    monkeypatch.setenv(compat.VARIANT_ENV, "2sm")
    p = gpumode.generate_gemm(128, 256, 512, 1, fresh_seed())
    data = gpumode.to_torch(p)
    data[6].fill_(float("nan"))
    out = compat.custom_kernel(data)
    assert np.array_equal(out.numpy().view(np.uint16), G.model_c(p).view(np.uint16))
    assert any(k[3] for k in compat._EMU if isinstance(k, tuple))
