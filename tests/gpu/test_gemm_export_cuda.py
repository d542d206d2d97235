"""Exported nvfp4_gemm submission on a real GPU (marked gpu by tests/gpu/conftest.py; skips without one).

Any GPU with compute capability >= 9.0 (an H100 is enough for the first three):
  * the submission's own bare-NVRTC call compiles the embedded flattened kernel for sm_100a with the runner's
    cuda-python (no include path);
  * its four tensor maps, encoded by the real driver (cuTensorMapEncodeTiled via cuda.bindings) with the adapter's
    parameters, are accepted for gpu-mode shapes and are byte-identical to the maps ptxlab's cuda device encodes from
    the same parameters at the same addresses;
  * on a GPU without tcgen05 (cc != 10.x) custom_kernel raises the clear RuntimeError instead of launching.
On a compute capability 10.x GPU (B200) the last test runs custom_kernel on gpu-mode data and checks it against the
reference at rtol = atol = 1e-3 (never run yet: no B200 here).
"""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from ptxlab import gpumode as gm
from ptxlab.production import export

SHAPES = [(128, 256, 256, 1), (256, 384, 768, 2), (128, 7168, 2048, 1)]


@pytest.fixture(scope="module")
def sub(tmp_path_factory):
    path = tmp_path_factory.mktemp("gemm_export") / "submission_gemm.py"
    path.write_text(export.render("nvfp4_gemm"))
    spec = importlib.util.spec_from_file_location("submission_gemm_gpu", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_bare_nvrtc_compiles_embedded_kernel(sub):
    for bn in (128, 256):
        ptx, cubin = sub.nvrtc_compile(sub.KERNEL_SRC, "sm_100a", f"{sub.KERNEL_NAME}.cu",
                                       (f"-DGEMM_BN={bn}", f"-DGEMM_STAGES={sub.DEFAULT_STAGES[bn]}"))
        assert sub.KERNEL_NAME in ptx and len(cubin) > 1000


@pytest.mark.parametrize("m,n,k,l", SHAPES)
def test_adapter_maps_accepted_by_driver_and_equal_ptxlab(cuda_dev, sub, m, n, k, l):
    plan = sub.launch_plan(m, n, k, l)
    prm = sub.tensor_map_params(m, n, k, l, plan["bn"])
    rows = {"a": m, "b": n}
    for name, p in prm.items():
        if name in rows:
            nbytes = l * rows[name] * (k // 2)
        else:
            nbytes = p["global_shape"][0] * p["global_shape"][1]
        buf = cuda_dev.empty(nbytes)
        try:
            raw = sub.encode_tensor_map(buf.ptr, p)  # raises if the driver rejects the map
            assert len(raw) == 128 and any(raw)
            tm = cuda_dev.tensor_map(buf, **p)
            assert tm.raw == raw, f"{name}: adapter map differs from ptxlab cuda device's map for {p}"
        finally:
            cuda_dev.free(buf)


def _to_cuda(p: gm.NvFp4Problem):
    """gpu-mode's 7-tuple on the GPU with gpu-mode's dtypes and strides (moved as uint8, then viewed)."""
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")

    def conv(x: np.ndarray, dtype):
        return torch.from_numpy(np.asarray(x)).to("cuda").view(dtype)

    fp4, f8 = torch.float4_e2m1fn_x2, torch.float8_e4m3fn
    return (conv(p.a, fp4), conv(p.b, fp4), conv(p.sfa, f8), conv(p.sfb, f8), conv(p.sfa_permuted, f8),
            conv(p.sfb_permuted, f8), torch.from_numpy(np.asarray(p.c)).to("cuda"))


def test_custom_kernel_on_cuda(cuda_dev, sub):
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no GPU: torch has no CUDA device")
    major, minor = torch.cuda.get_device_capability()
    if major != 10:
        data = _to_cuda(gm.generate_gemm(128, 256, 256, 1, 1))
        with pytest.raises(RuntimeError, match="compute capability 10.x"):
            sub.custom_kernel(data)
        return
    seed = int(np.random.SeedSequence().entropy % (2**31))
    for i, (m, n, k, l) in enumerate(SHAPES + [(t["m"], t["n"], t["k"], t["l"]) for t in gm.GEMM_TESTS[:3]]):
        p = gm.generate_gemm(m, n, k, l, seed + i)
        data = _to_cuda(p)
        data[6].fill_(float("nan"))
        out = sub.custom_kernel(data)
        torch.cuda.synchronize()
        assert out is data[6]
        got = out.cpu().numpy()
        assert not np.isnan(got).any(), f"seed={seed + i} shape={(m, n, k, l)}: outputs left poisoned"
        errs = gm.check_close(got, gm.reference_gemm(p), rtol=1e-3, atol=1e-3)
        assert not errs, f"seed={seed + i} shape={(m, n, k, l)}: " + "; ".join(errs)
