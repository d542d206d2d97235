"""tcgen05.mma operand fetch + execution (ptxlab.emu.hw.tcgen05_mma) against exact float64 / int references.

SMEM images are written (tests/mma_images.py) with the canonical-layout formulas of PTX 9.7.16.3 (K-major NONE /
SW128 with the 128B XOR, MN-major NONE) independently of ptxlab.desc's address function; SFs are written in the
ptx_facts §6 TMEM layout. Data are integer-valued/dyadic so every accumulation order gives the exact result.
"""
from __future__ import annotations

import numpy as np
import pytest

from ptxlab.desc.smem import SmemDesc
from ptxlab.emu.hw.tcgen05_mma import MmaError, MmaSpec, run_mma, spec_from_idesc
from ptxlab.numerics import E2M1_VALUES

from mma_images import POISON_D, UE4M3, f32_bits, kmajor_none, kmajor_sw128, pack_e2m1, sf_to_tmem

@pytest.mark.parametrize("kslice", [0, 3])
@pytest.mark.parametrize("accumulate", [False, True])
def test_mxf4nvf4_sw128_exact(rng: np.random.Generator, kslice: int, accumulate: bool) -> None:
    M, N = 128, int(rng.choice([8, 64, 136, 256]))
    smem = rng.integers(0, 256, 65536, dtype=np.uint8)
    a_full = rng.integers(0, 16, (M, 256), dtype=np.uint8)  # whole 128-B rows (4 K slices of 64)
    b_full = rng.integers(0, 16, (N, 256), dtype=np.uint8)
    kmajor_sw128(smem, 0x0000, pack_e2m1(a_full))
    kmajor_sw128(smem, 0x8000, pack_e2m1(b_full))
    codes = np.array(list(UE4M3))
    sfa = rng.choice(codes, (M, 4)).astype(np.uint8)
    sfb = rng.choice(codes, (N, 4)).astype(np.uint8)
    tm = np.full((128, 512), POISON_D, np.uint32)
    sf_to_tmem(tm, 256, sfa)
    sf_to_tmem(tm, 264, sfb)
    c = rng.integers(-64, 64, (M, N)).astype(np.float32)
    tm[:, 0:N] = f32_bits(c)
    a = E2M1_VALUES[a_full[:, 64 * kslice: 64 * kslice + 64]].astype(np.float64)
    b = E2M1_VALUES[b_full[:, 64 * kslice: 64 * kslice + 64]].astype(np.float64)
    sa = np.vectorize(UE4M3.get)(np.repeat(sfa, 16, axis=1)).astype(np.float64)
    sb = np.vectorize(UE4M3.get)(np.repeat(sfb, 16, axis=1)).astype(np.float64)
    ref = (a * sa) @ (b * sb).T + (c if accumulate else 0)
    spec = spec_from_idesc("mxf4nvf4", 0x08000480 | ((N >> 3) << 17), block=16)
    adesc = SmemDesc.encode(0x0000 + 32 * kslice, lbo=16, sbo=1024, swizzle="128B")
    bdesc = SmemDesc.encode(0x8000 + 32 * kslice, lbo=16, sbo=1024, swizzle="128B")
    res = run_mma(spec, smem, tm, d_taddr=(0, 0), a_desc=adesc, b_desc=bdesc, sfa_taddr=(0, 256),
                  sfb_taddr=(0, 264), enable_input_d=accumulate)
    assert np.array_equal(res.lanes, np.arange(128)) and np.array_equal(res.cols, np.arange(N))
    assert np.array_equal(res.d, f32_bits(ref)), "D differs from the exact reference"
    whats = [w for w, _, _ in res.tmem_reads]
    assert ("accumulator D" in whats) == accumulate and "scale-A" in whats


def test_sf_not_replicated_is_error(rng: np.random.Generator) -> None:
    smem = np.zeros(65536, np.uint8)
    tm = np.zeros((128, 512), np.uint32)
    sf_to_tmem(tm, 0, np.full((128, 4), 0x38, np.uint8))
    sf_to_tmem(tm, 4, np.full((128, 4), 0x38, np.uint8))
    lane = int(rng.integers(32, 128))
    tm[lane, 1] ^= 1
    spec = spec_from_idesc("mxf4nvf4", 0x08200480, block=16)
    d = SmemDesc.encode(0, lbo=16, sbo=1024, swizzle="128B")
    with pytest.raises(MmaError, match="four 32-lane quarters"):
        run_mma(spec, smem, tm, d_taddr=(0, 8), a_desc=d, b_desc=d, sfa_taddr=(0, 0), sfb_taddr=(0, 4))


@pytest.mark.parametrize("M", [64, 128])
def test_f16_kmajor_none_and_bf16(rng: np.random.Generator, M: int) -> None:
    N = 32
    for fmt, idesc_ab in (("f16", 0), ("bf16", 1)):
        dt = {"f16": np.float16, "bf16": "bfloat16"}[fmt]
        import ml_dtypes  # noqa: F401  (registers bfloat16)
        av = rng.integers(-8, 9, (M, 16)).astype(np.float64)
        bv = rng.integers(-8, 9, (N, 16)).astype(np.float64)
        dtype = np.dtype(dt)
        ab = av.astype(dtype).view(np.uint8).reshape(M, 32)
        bb = bv.astype(dtype).view(np.uint8).reshape(N, 32)
        smem = rng.integers(0, 256, 32768, dtype=np.uint8)
        kmajor_none(smem, 0x0000, ab, sbo=256, lbo=128)
        kmajor_none(smem, 0x4000, bb, sbo=256, lbo=128)
        idesc = (1 << 4) | (idesc_ab << 7) | (idesc_ab << 10) | ((N >> 3) << 17) | ((M >> 4) << 24)
        spec = spec_from_idesc("f16", idesc)
        tm = np.full((128, 512), POISON_D, np.uint32)
        lane0 = 16 if M == 64 else 0
        res = run_mma(spec, smem, tm, d_taddr=(lane0, 40), a_desc=SmemDesc.encode(0, 128, 256, "NONE"),
                      b_desc=SmemDesc.encode(0x4000, 128, 256, "NONE"), enable_input_d=False)
        assert np.array_equal(res.d, f32_bits(av @ bv.T))
        if M == 64:  # Layout F: row m -> lane 16 + m%16 + 32*(m//16)
            assert res.lanes[:20].tolist() == list(range(16, 32)) + list(range(48, 52))


def test_f16_mn_major_b(rng: np.random.Generator) -> None:
    M, N = 128, 16
    av = rng.integers(-4, 5, (M, 16)).astype(np.float64)
    bv = rng.integers(-4, 5, (N, 16)).astype(np.float64)
    smem = rng.integers(0, 256, 32768, dtype=np.uint8)
    kmajor_none(smem, 0, av.astype(np.float16).view(np.uint8).reshape(M, 32), sbo=256, lbo=128)
    # MN-major NONE: byte mnb of K-row k at (mnb%16) + (mnb//16)*SBO + (k%8)*16 + (k//8)*LBO
    bb = bv.astype(np.float16).view(np.uint8).reshape(N, 16, 2)  # (n, k, byte)
    base, sbo, lbo = 0x4000, 128, 512
    for n in range(N):
        for k in range(16):
            for e in range(2):
                mnb = 2 * n + e
                smem[base + mnb % 16 + (mnb // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo] = bb[n, k, e]
    idesc = (1 << 4) | (1 << 16) | ((N >> 3) << 17) | (8 << 24)
    spec = spec_from_idesc("f16", idesc)
    assert spec.b_major == "MN"
    res = run_mma(spec, smem, np.zeros((128, 512), np.uint32), d_taddr=(0, 0),
                  a_desc=SmemDesc.encode(0, 128, 256, "NONE"), b_desc=SmemDesc.encode(base, lbo, sbo, "NONE"),
                  enable_input_d=False)
    assert np.array_equal(res.d, f32_bits(av @ bv.T))


def test_i8_signed_unsigned_accumulate(rng: np.random.Generator) -> None:
    M, N = 128, 48
    a = rng.integers(-128, 128, (M, 32))
    b = rng.integers(0, 256, (N, 32))
    smem = np.zeros(65536, np.uint8)
    kmajor_sw128(smem, 0, np.pad(a.astype(np.int8).view(np.uint8), ((0, 0), (0, 96))))
    kmajor_sw128(smem, 0x8000, np.pad(b.astype(np.uint8), ((0, 0), (0, 96))))
    c = rng.integers(-2**20, 2**20, (M, N))
    tm = np.zeros((128, 512), np.uint32)
    tm[:, 100:100 + N] = c.astype(np.int32).view(np.uint32)
    idesc = (2 << 4) | (1 << 7) | (0 << 10) | ((N >> 3) << 17) | (8 << 24)
    spec = spec_from_idesc("i8", idesc)
    res = run_mma(spec, smem, tm, d_taddr=(0, 100), a_desc=SmemDesc.encode(0, 16, 1024, "128B"),
                  b_desc=SmemDesc.encode(0x8000, 16, 1024, "128B"), enable_input_d=True)
    assert np.array_equal(res.d.view(np.int32), (a @ b.T + c).astype(np.int32))


def test_tf32_a_from_tmem_and_disable_output_lane(rng: np.random.Generator) -> None:
    M, N = 128, 24
    av = rng.integers(-16, 17, (M, 8)).astype(np.float32)
    bv = rng.integers(-16, 17, (N, 8)).astype(np.float32)
    tm = np.full((128, 512), POISON_D, np.uint32)
    tm[:, 200:208] = av.view(np.uint32)  # A in TMEM: lane m, 8 words of K (PTX 9.7.16.10.4)
    smem = np.zeros(16384, np.uint8)
    kmajor_none(smem, 0, bv.view(np.uint8).reshape(N, 32), sbo=256, lbo=128)
    idesc = (1 << 4) | (2 << 7) | (2 << 10) | ((N >> 3) << 17) | (8 << 24)
    spec = spec_from_idesc("tf32", idesc)
    dol = rng.integers(0, 2**32, 4, dtype=np.uint64)
    res = run_mma(spec, smem, tm, d_taddr=(0, 0), a_taddr=(0, 200), b_desc=SmemDesc.encode(0, 128, 256, "NONE"),
                  enable_input_d=False, disable_output_lane=dol)
    assert np.array_equal(res.d, f32_bits(av.astype(np.float64) @ bv.astype(np.float64).T))
    want = np.array([not (int(dol[l // 32]) >> (l % 32)) & 1 for l in range(128)])
    assert np.array_equal(res.lane_mask, want)
    assert res.tmem_reads[0][0] == "A operand"


def test_rejections() -> None:
    smem = np.zeros(4096, np.uint8)
    tm = np.zeros((128, 512), np.uint32)
    d = SmemDesc.encode(0, 16, 1024, "128B")
    with pytest.raises(MmaError, match="6-bit"):  # f8f6f4 with e2m3: the padded .b6x16_p32 format is figure-only
        run_mma(MmaSpec("f8f6f4", 128, 8, "e2m3", "e2m3", "f32"), np.zeros(65536, np.uint8), tm,
                d_taddr=(0, 0), a_desc=d, b_desc=d, enable_input_d=False)
    with pytest.raises(MmaError, match="A from TMEM with e2m1"):  # 4-bit A in TMEM (9.7.16.10.4.5, figures only)
        run_mma(MmaSpec("f8f6f4", 128, 8, "e2m1", "e2m1", "f32"), np.zeros(65536, np.uint8), tm,
                d_taddr=(0, 0), a_taddr=(0, 64), b_desc=d, enable_input_d=False)
    with pytest.raises(MmaError, match="M=128"):
        MmaSpec("mxf4nvf4", 64, 8, "e2m1", "e2m1", "f32", block=16, scale_fmt="ue4m3").validate()
    with pytest.raises(MmaError, match="multiple of 8"):
        MmaSpec("f16", 128, 12, "f16", "f16", "f32").validate()
    with pytest.raises(MmaError, match="block16"):
        MmaSpec("mxf4nvf4", 128, 8, "e2m1", "e2m1", "f32", block=32, scale_fmt="ue4m3").validate()
    with pytest.raises(MmaError, match="SFA ID"):
        MmaSpec("mxf4nvf4", 128, 8, "e2m1", "e2m1", "f32", block=16, scale_fmt="ue4m3", sfa_id=2).validate()
    with pytest.raises(MmaError, match="beyond"):
        run_mma(MmaSpec("f16", 128, 8, "f16", "f16", "f32"), smem, tm, d_taddr=(0, 0), a_desc=d, b_desc=d,
                enable_input_d=False)
    with pytest.raises(MmaError, match="lane 0"):
        run_mma(MmaSpec("f16", 128, 8, "f16", "f16", "f32"), smem, tm, d_taddr=(32, 0), a_desc=d, b_desc=d)


def test_mxf8f6f4_e4m3_sf_id_byte_select(rng: np.random.Generator) -> None:
    """1X: one UE8M0 per row per MMA, SF ID picks the byte (ptx_facts §6)."""
    M, N = 128, 16
    e4m3_vals = {0x38: 1.0, 0x40: 2.0, 0xB8: -1.0, 0x30: 0.5, 0x00: 0.0, 0x44: 3.0}
    keys = np.array(list(e4m3_vals))
    a = rng.choice(keys, (M, 32)).astype(np.uint8)
    b = rng.choice(keys, (N, 32)).astype(np.uint8)
    smem = np.zeros(65536, np.uint8)
    kmajor_sw128(smem, 0, np.pad(a, ((0, 0), (0, 96))))
    kmajor_sw128(smem, 0x8000, np.pad(b, ((0, 0), (0, 96))))
    tm = np.zeros((128, 512), np.uint32)
    sfa4 = rng.integers(120, 134, (M, 4)).astype(np.uint8)
    sfb4 = rng.integers(120, 134, (N, 4)).astype(np.uint8)
    sf_to_tmem(tm, 300, sfa4)
    sf_to_tmem(tm, 310, sfb4)
    ida, idb = int(rng.integers(0, 4)), int(rng.integers(0, 4))
    idesc = (idb << 4) | (0 << 7) | (0 << 10) | ((N >> 3) << 17) | (1 << 23) | (1 << 27) | (ida << 29)
    spec = spec_from_idesc("mxf8f6f4", idesc, block=32)
    assert (spec.sfa_id, spec.sfb_id) == (ida, idb)
    res = run_mma(spec, smem, tm, d_taddr=(0, 0), a_desc=SmemDesc.encode(0, 16, 1024, "128B"),
                  b_desc=SmemDesc.encode(0x8000, 16, 1024, "128B"), sfa_taddr=(0, 300), sfb_taddr=(0, 310),
                  enable_input_d=False)
    av = np.vectorize(e4m3_vals.get)(a) * 2.0 ** (sfa4[:, ida:ida + 1].astype(np.float64) - 127)
    bv = np.vectorize(e4m3_vals.get)(b) * 2.0 ** (sfb4[:, idb:idb + 1].astype(np.float64) - 127)
    assert np.array_equal(res.d, f32_bits(av @ bv.T))


def test_gather_operand_codes_exact(rng: np.random.Generator) -> None:
    """Element order matters on its own: a consistent K permutation of A and B leaves D unchanged, so check codes."""
    from ptxlab.emu.hw.tcgen05_mma import gather_smem_operand

    rows = 24
    smem = rng.integers(0, 256, 32768, dtype=np.uint8)
    e = rng.integers(0, 16, (rows, 256), dtype=np.uint8)
    kmajor_sw128(smem, 0x1000 * 0, pack_e2m1(e))
    for ks in range(4):
        got = gather_smem_operand(smem, SmemDesc.encode(32 * ks, 16, 1024, "128B"), rows, "e2m1", "mxf4nvf4")
        assert np.array_equal(got, e[:, 64 * ks: 64 * ks + 64])
    h = rng.integers(0, 2**16, (rows, 16), dtype=np.uint16)
    kmajor_none(smem, 0x4000, h.view(np.uint8).reshape(rows, 32), sbo=256, lbo=128)
    got = gather_smem_operand(smem, SmemDesc.encode(0x4000, 128, 256, "NONE"), rows, "bf16", "f16")
    assert got.dtype == np.uint16 and np.array_equal(got, h)
