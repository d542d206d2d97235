"""tcgen05.mma.cta_group::2 over a CTA pair (ptxlab.emu.hw.tcgen05_mma_pair) against the exact float64 sum and the
one-MMA tensor-core model over the whole M=256 problem.

Pair placement (ptx_docs/tcgen05_cta_pair.md, CUTLASS SM100_MMA_*_2x1SM_SS): CTA v holds A rows 128v.., B rows
(N/2)v.. at the same SMEM offsets, scale_A of its own rows and scale_B of all N in its own TMEM; D rows 128v.. land
in CTA v's TMEM lanes 0..127. SMEM images (tests/mma_images.py) follow the PTX 9.7.16.3 canonical-layout formulas,
independently of ptxlab.desc's address function. Data are small dyadic values: every accumulation order is exact.
"""
from __future__ import annotations

import numpy as np
import pytest

from ptxlab.desc.smem import SmemDesc
from ptxlab.emu.hw.tcgen05_mma import MmaError, run_mma, spec_from_idesc
from ptxlab.emu.hw.tcgen05_mma_pair import run_mma_pair
from ptxlab.mma import mma as tc_model
from ptxlab.numerics import E2M1_VALUES

from mma_images import POISON_D, UE4M3, f32_bits, kmajor_none, kmajor_sw128, pack_e2m1, sf_to_tmem

def _nvfp4_pair(rng: np.random.Generator, N: int, accumulate: bool):
    M = 256
    a = rng.integers(0, 16, (M, 128), dtype=np.uint8)   # 128 e2m1 per row = 64 B: 2 K-slices of 64
    b = rng.integers(0, 16, (N, 128), dtype=np.uint8)
    codes = np.array(list(UE4M3))
    sfa = rng.choice(codes, (M, 4)).astype(np.uint8)
    sfb = rng.choice(codes, (N, 4)).astype(np.uint8)
    c = rng.integers(-64, 64, (M, N)).astype(np.float32)
    smems, tms = [], []
    for v in (0, 1):
        smem = rng.integers(0, 256, 65536, dtype=np.uint8)
        kmajor_sw128(smem, 0x0000, pack_e2m1(a[128 * v: 128 * v + 128]))
        kmajor_sw128(smem, 0x8000, pack_e2m1(b[(N // 2) * v: (N // 2) * (v + 1)]))
        tm = np.full((128, 512), POISON_D, np.uint32)
        sf_to_tmem(tm, 300, sfa[128 * v: 128 * v + 128])
        sf_to_tmem(tm, 308, sfb)
        tm[:, 32:32 + N] = f32_bits(c[128 * v: 128 * v + 128])
        smems.append(smem)
        tms.append(tm)
    return a, b, sfa, sfb, c, smems, tms


@pytest.mark.parametrize("kslice", [0, 1])
@pytest.mark.parametrize("accumulate", [False, True])
def test_mxf4nvf4_m256_pair_exact(rng: np.random.Generator, kslice: int, accumulate: bool) -> None:
    N = int(rng.choice([16, 48, 128, 256]))
    a, b, sfa, sfb, c, smems, tms = _nvfp4_pair(rng, N, accumulate)
    idesc = 0x00000480 | ((N >> 3) << 17) | ((256 >> 7) << 27)  # e2m1 x e2m1, UE4M3, M=256
    spec = spec_from_idesc("mxf4nvf4", idesc, block=16, cta_group=2)
    reads: list = []
    res = run_mma_pair(spec, smems, tms, d_taddr=(0, 32), a_desc=SmemDesc.encode(32 * kslice, 16, 1024, "128B"),
                       b_desc=SmemDesc.encode(0x8000 + 32 * kslice, 16, 1024, "128B"), sfa_taddr=(0, 300),
                       sfb_taddr=(0, 308), enable_input_d=accumulate,
                       on_smem_read=lambda v, what, addr: reads.append((v, what)))
    ks = slice(64 * kslice, 64 * kslice + 64)
    sa = np.vectorize(UE4M3.get)(np.repeat(sfa, 16, axis=1)).astype(np.float64)
    sb = np.vectorize(UE4M3.get)(np.repeat(sfb, 16, axis=1)).astype(np.float64)
    exact = (E2M1_VALUES[a[:, ks]] * sa) @ (E2M1_VALUES[b[:, ks]] * sb).T + (c if accumulate else 0)
    model = tc_model("mxf4nvf4", a[:, ks], b[:, ks], c=f32_bits(c) if accumulate else None, sfa=sfa, sfb=sfb,
                     scale_fmt="ue4m3", block=16, a_fmt="e2m1", b_fmt="e2m1", d_fmt="f32")
    for v in (0, 1):
        rows = slice(128 * v, 128 * v + 128)
        assert np.array_equal(res[v].lanes, np.arange(128)) and np.array_equal(res[v].cols, 32 + np.arange(N))
        assert np.array_equal(res[v].d, f32_bits(exact[rows])), f"CTA {v}: D differs from the exact sum"
        assert np.array_equal(res[v].d, model[rows]), f"CTA {v}: D differs from the M=256 tensor-core model"
    assert sorted(set(reads)) == [(0, "A"), (0, "B"), (1, "A"), (1, "B")]


def test_f16_m256_pair_exact(rng: np.random.Generator) -> None:
    M, N = 256, 32
    av = rng.integers(-8, 9, (M, 16)).astype(np.float64)
    bv = rng.integers(-8, 9, (N, 16)).astype(np.float64)
    smems, tms = [], []
    for v in (0, 1):
        smem = rng.integers(0, 256, 32768, dtype=np.uint8)
        kmajor_none(smem, 0x0000, av[128 * v: 128 * v + 128].astype(np.float16).view(np.uint8).reshape(128, 32),
                     sbo=256, lbo=128)
        kmajor_none(smem, 0x4000, bv[16 * v: 16 * v + 16].astype(np.float16).view(np.uint8).reshape(16, 32),
                     sbo=256, lbo=128)
        smems.append(smem)
        tms.append(np.full((128, 512), POISON_D, np.uint32))
    idesc = (1 << 4) | ((N >> 3) << 17) | ((M >> 4) << 24)
    spec = spec_from_idesc("f16", idesc, cta_group=2)
    res = run_mma_pair(spec, smems, tms, d_taddr=(0, 64), a_desc=SmemDesc.encode(0, 128, 256, "NONE"),
                       b_desc=SmemDesc.encode(0x4000, 128, 256, "NONE"), enable_input_d=False)
    ref = av @ bv.T
    for v in (0, 1):
        assert np.array_equal(res[v].d, f32_bits(ref[128 * v: 128 * v + 128]))


@pytest.mark.parametrize("accumulate", [False, True])
def test_f16_m128_pair_layout_b_exact(rng: np.random.Generator, accumulate: bool) -> None:
    """M = 128 over the pair (Layout B): CTA v holds A rows 64v.., B rows (N/2)v..; D[64v + m][n] is at CTA v's lane
    m + 64*(n >= N/2), column d + n % (N/2) (CUTLASS tmem_frg N_SM=2 M_MMA=64; CuTe cross-check in
    tests/test_emu_tcgen05_pair.py)."""
    M, N = 128, int(rng.choice([32, 64, 256]))
    av = rng.integers(-8, 9, (M, 16)).astype(np.float64)
    bv = rng.integers(-8, 9, (N, 16)).astype(np.float64)
    cv = rng.integers(-64, 64, (M, N)).astype(np.float64)
    smems, tms = [], []
    for v in (0, 1):
        smem = rng.integers(0, 256, 32768, dtype=np.uint8)
        kmajor_none(smem, 0x0000, av[64 * v: 64 * v + 64].astype(np.float16).view(np.uint8).reshape(64, 32),
                     sbo=256, lbo=128)
        kmajor_none(smem, 0x4000, bv[(N // 2) * v: (N // 2) * (v + 1)].astype(np.float16).view(np.uint8)
                     .reshape(N // 2, 32), sbo=256, lbo=128)
        tm = np.full((128, 512), POISON_D, np.uint32)
        mine = cv[64 * v: 64 * v + 64]
        tm[0:64, 8:8 + N // 2] = f32_bits(mine[:, :N // 2])
        tm[64:128, 8:8 + N // 2] = f32_bits(mine[:, N // 2:])
        smems.append(smem)
        tms.append(tm)
    spec = spec_from_idesc("f16", (1 << 4) | ((N >> 3) << 17) | ((M >> 4) << 24), cta_group=2)
    res = run_mma_pair(spec, smems, tms, d_taddr=(0, 8), a_desc=SmemDesc.encode(0, 128, 256, "NONE"),
                       b_desc=SmemDesc.encode(0x4000, 128, 256, "NONE"), enable_input_d=accumulate)
    ref = av @ bv.T + (cv if accumulate else 0)
    for v in (0, 1):
        r = ref[64 * v: 64 * v + 64]
        assert np.array_equal(res[v].lanes, np.arange(128)) and np.array_equal(res[v].cols, 8 + np.arange(N // 2))
        assert np.array_equal(res[v].d[:64], f32_bits(r[:, :N // 2])), f"CTA {v}: lanes 0..63 (columns < N/2)"
        assert np.array_equal(res[v].d[64:], f32_bits(r[:, N // 2:])), f"CTA {v}: lanes 64..127 (columns >= N/2)"


def test_pair_shape_rules() -> None:
    f16 = lambda M, N: (1 << 4) | ((N >> 3) << 17) | ((M >> 4) << 24)  # noqa: E731
    with pytest.raises(MmaError, match="multiple of 16"):
        spec_from_idesc("f16", f16(256, 24), cta_group=2).validate()
    with pytest.raises(MmaError):
        spec_from_idesc("f16", f16(64, 32), cta_group=2).validate()
    z = [np.zeros(32768, np.uint8)] * 2
    t = [np.zeros((128, 512), np.uint32)] * 2
    d = SmemDesc.encode(0, 128, 256, "NONE")
    with pytest.raises(MmaError, match="ScaleFactorDuplicated2by2"):
        nv = spec_from_idesc("mxf4nvf4", 0x00000480 | ((32 >> 3) << 17) | (1 << 27), block=16, cta_group=2)
        run_mma_pair(nv, z, t, d_taddr=(0, 0), a_desc=d, b_desc=d, sfa_taddr=(0, 64), sfb_taddr=(0, 68),
                     enable_input_d=False)
    with pytest.raises(MmaError, match="Duplicated"):
        run_mma_pair(spec_from_idesc("f16", f16(128, 32), cta_group=2), z, t, d_taddr=(0, 0), a_taddr=(0, 0),
                     b_desc=d, enable_input_d=False)
    spec = spec_from_idesc("f16", f16(256, 32), cta_group=2)
    with pytest.raises(MmaError, match="disable-output-lane"):
        run_mma_pair(spec, z, t, d_taddr=(0, 0), a_desc=d, b_desc=d, enable_input_d=False,
                     disable_output_lane=[0, 0, 0, 0, 0, 1, 0, 0])
    with pytest.raises(MmaError, match="cta_group::1"):
        run_mma(spec, z[0], t[0], d_taddr=(0, 0), a_desc=d, b_desc=d, enable_input_d=False)
