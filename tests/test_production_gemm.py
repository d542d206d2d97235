"""Fused NVFP4 GEMM for sm_100a (ptxlab/kernels/nvfp4_gemm_tcgen05.cu, ptxlab/production/gemm.py) on the emulator.

Fresh gpu-mode GEMM data every run (all e2m1 codes incl. negatives, SF 0..3; the seed is in every failure message);
c is poisoned (0xFF bytes = fp16 NaN) before the launch. Checks:
  * exact: c == fp16(RNE) of the bit-exact tensor-core model ptxlab.mma_arith.mma over the full K (chained 64-wide
    MMAs, D of chunk i = C of chunk i+1, the kernel's order), bit for bit;
  * gpu-mode: c vs reference_gemm (float64 sums) with rtol = atol = 1e-3 (gpu-mode's check);
  * SASS of both tile configs has UTMALDG, UTCCP, UTCOMMA, UTCBAR, LDTM;
  * the kernel is built from the blocks only (its includes are exactly blocks/*.cuh, no inline asm of its own).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import ptxlab
from ptxlab import gpumode
from ptxlab.kernels import BLOCKS_DIR, read
from ptxlab.production import gemm as G


def fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy % (2**63))


def model_c(p: gpumode.NvFp4Problem) -> np.ndarray:
    """(M, N, L) fp16: the bit-exact tensor-core model over the full K, then fp32 -> fp16 round-to-nearest-even."""
    from ptxlab.mma_arith import mma
    from ptxlab.numerics import unpack_fp4

    out = []
    for l in range(p.l):
        a = unpack_fp4(p.a[:, :, l]).astype(np.uint8)
        b = unpack_fp4(p.b[:, :, l]).astype(np.uint8)
        d = mma("mxf4nvf4", a, b, a_fmt="e2m1", b_fmt="e2m1", sfa=np.ascontiguousarray(p.sfa[:, :, l]),
                sfb=np.ascontiguousarray(p.sfb[:, :, l]), scale_fmt="ue4m3", block=16)
        out.append(d.view(np.float32).astype(np.float16))
    return np.stack(out, axis=2)


@pytest.fixture(scope="module")
def dev():
    d = ptxlab.open_device("emu")
    yield d
    d.close()


# (m, n, k, l, bn, stages): task shape 128x256x256; ring wraps (K blocks > stages) for both tile widths; L > 1;
# several M and N tiles.
CASES = [
    (128, 256, 256, 1, 256, None),
    (128, 256, 1536, 1, 256, 4),
    (256, 384, 768, 2, 128, 2),
    (128, 512, 768, 3, 256, 2),
]


@pytest.mark.parametrize("m,n,k,l,bn,stages", CASES, ids=[f"{c[0]}x{c[1]}x{c[2]}x{c[3]}_bn{c[4]}_s{c[5]}" for c in CASES])
def test_gemm_exact_vs_model_and_reference(dev, m, n, k, l, bn, stages):
    seed = fresh_seed()
    p = gpumode.generate_gemm(m, n, k, l, seed)
    rep: dict = {}
    c = G.nvfp4_gemm(dev, p, bn=bn, stages=stages, report=rep)
    tag = f"seed={seed} shape=({m},{n},{k},{l}) bn={bn} stages={rep.get('stages')}"
    assert c.shape == (m, n, l) and c.dtype == np.float16
    assert not np.isnan(c).any(), f"{tag}: {int(np.isnan(c).sum())} outputs still poisoned (NaN)"
    want = model_c(p)
    cb, wb = c.view(np.uint16), want.view(np.uint16)
    bad = np.argwhere(cb != wb)
    assert bad.size == 0, (f"{tag}: {len(bad)} outputs differ from the bit-exact model; first (m,n,l)={tuple(bad[0])}: "
                           f"got {c[tuple(bad[0])]!r} want {want[tuple(bad[0])]!r}")
    errs = gpumode.check_close(c, gpumode.reference_gemm(p), rtol=1e-3, atol=1e-3)
    assert not errs, f"{tag}: vs reference_gemm: " + "; ".join(errs)
    assert rep["grid"] == (m // 128, n // bn, l)
    assert rep["tx_bytes"] == G.stage_bytes(bn)


@pytest.mark.parametrize("bn", [128, 256])
def test_sass_has_tcgen05_and_tma(bn):
    from ptxlab.toolchain.sass import require

    counts = require(G.compile_gemm(bn), ["UTMALDG", "UTCCP", "UTCOMMA", "UTCBAR", "LDTM"])
    assert all(v > 0 for v in counts.values()), counts


def test_kernel_built_from_blocks_only():
    src = read(G.KERNEL_FILE)
    incs = re.findall(r'^\s*#\s*include\s+"([^"]+)"', src, re.M)
    assert sorted(incs) == sorted(f"blocks/{b}" for b in G.BLOCKS_USED)
    assert all((BLOCKS_DIR / b).exists() for b in G.BLOCKS_USED)
    code = re.sub(r"//[^\n]*", "", src)
    assert "asm" not in code, "the production GEMM must get all its PTX from the blocks"
    rep = G.blocks_report()
    assert sorted(rep) == sorted(f"blocks/{b}" for b in G.BLOCKS_USED)
    assert all(isinstance(v, list) for v in rep.values())


@pytest.mark.parametrize("m,n,k,bn", [(100, 256, 256, 256), (128, 200, 256, 128), (128, 256, 320, 256),
                                      (128, 384, 256, 256)])
def test_shape_checks(m, n, k, bn):
    with pytest.raises(ValueError):
        G.check_shape(m, n, k, 1, bn)


def test_choose_bn():
    assert G.choose_bn(7168) == 256 and G.choose_bn(384) == 128
    assert all(G.choose_bn(t["n"]) == 256 for t in gpumode.GEMM_TESTS)
    assert G.shared_bytes(256, 4) <= 232448


def test_bounded_wait_build(dev):
    """Hardware bring-up build (-DPTXLAB_WAIT_PROBES): same results with a generous probe limit; with a limit of one
    probe a wait that has to block gives up and the launch ends with a trap instead of hanging."""
    seed = fresh_seed()
    p = gpumode.generate_gemm(128, 256, 768, 1, seed)
    c = G.nvfp4_gemm(dev, p, stages=2, wait_probes=1 << 22)
    assert not gpumode.check_close(c, gpumode.reference_gemm(p)), f"seed={seed}"
    assert (c.view(np.uint16) == model_c(p).view(np.uint16)).all(), f"seed={seed}"
    with pytest.raises(Exception, match="trap"):
        G.nvfp4_gemm(dev, p, stages=2, wait_probes=1)


def test_refuses_device_without_sm100():
    from ptxlab.errors import DeviceUnavailable

    class NoSm100:
        def arch_supported(self, arch):
            return arch != "sm_100a"

        def describe(self):
            return "fake sm_90 device"

        def __getattr__(self, name):  # nothing else may be touched
            raise AssertionError(f"wrapper used dev.{name} on a device it should refuse")

    p = gpumode.generate_gemm(128, 256, 256, 1, fresh_seed())
    with pytest.raises(DeviceUnavailable, match="sm_100a"):
        G.nvfp4_gemm(NoSm100(), p)
