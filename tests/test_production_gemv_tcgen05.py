"""The fused tcgen05 GEMV (production source verified by stages D3/E1/E2) on the emulator: exact on gpu-mode data."""
import numpy as np
import pytest

from ptxlab import gpumode
from ptxlab.production import gemv_tcgen05 as G
from ptxlab.toolchain.sass import require


@pytest.mark.parametrize("m,k,l", [(128, 256, 1), (256, 1536, 2)])
def test_fused_gemv_exact_on_emulator(m, k, l, rng):
    p = gpumode.generate_gemv(m, k, l, seed=int(rng.integers(1 << 31)))
    out = G.run_gemv_tcgen05(p, "emu")
    ref = gpumode.reference_gemv(p)
    assert out.shape == ref.shape
    assert np.array_equal(out.view(np.uint16), ref.view(np.uint16)), gpumode.check_close(out, ref)[:3]


def test_fused_gemv_sass_and_report():
    counts = require(G.compile_gemv_tcgen05(), ["UTCOMMA", "UTCCP", "UTCBAR", "LDTM"])
    assert all(v > 0 for v in counts.values())
    rep = G.graduation_report()          # fresh test state: nothing graduated
    assert rep == {"stages": [], "blocks": []}


def test_fused_gemv_rejects_unsupported_shapes():
    p = gpumode.generate_gemv(128, 256, 1, seed=1)
    p.m = 100
    with pytest.raises(ValueError, match="M % 128"):
        G.run_gemv_tcgen05(p, "emu")
