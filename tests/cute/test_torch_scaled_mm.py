"""``torch._scaled_mm`` for NVFP4 operands as the torch shim computes it (ptxlab/driver/torch_cuda.py): the same
numbers as ptxlab's own gpu-mode reference (ptxlab.gpumode.reference_gemm), called the way the gpu-mode problems
and NVIDIA's NVFP4 examples call it. In-process: nothing here installs the driver layer."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")


def test_scaled_mm_nvfp4_matches_the_gpumode_reference(rng):
    from ptxlab import gpumode, scales
    from ptxlab.driver.torch_cuda import scaled_mm_nvfp4
    m, n, k = 128, int(rng.choice([128, 256])), int(rng.choice([256, 512]))
    p = gpumode.generate_gemm(m, n, k, 1, int(rng.integers(1, 2**31)))
    a, b = (torch.from_numpy(np.ascontiguousarray(x[:, :, 0])).view(torch.float4_e2m1fn_x2) for x in (p.a, p.b))
    sa, sb = (torch.from_numpy(scales.to_blocked(s[:, :, 0])).view(torch.float8_e4m3fn) for s in (p.sfa, p.sfb))
    got = scaled_mm_nvfp4(a, b.transpose(0, 1), sa, sb, bias=None, out_dtype=torch.float16)
    want = gpumode.reference_gemm(p)[:, :, 0]
    assert got.dtype == torch.float16 and tuple(got.shape) == (m, n)
    np.testing.assert_array_equal(got.numpy().view(np.uint16), want.view(np.uint16))


def test_scaled_mm_refuses_bias():
    from ptxlab.driver.torch_cuda import scaled_mm_nvfp4
    a = torch.zeros((128, 64), dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    with pytest.raises(NotImplementedError, match="bias"):
        scaled_mm_nvfp4(a, a.t(), None, None, bias=torch.zeros(128))
