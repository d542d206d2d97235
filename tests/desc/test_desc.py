"""Unit tests for ptxlab.desc: round trips, reference encodings (ptx_facts §4/§5), anchors.md bug classes, CLI."""
from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

from ptxlab.desc import (
    IDESC_LAYOUTS,
    KINDS,
    SMEM_DESC,
    DescError,
    InstrDesc,
    SmemDesc,
    TmemAddr,
    decode_idesc,
    smem_operand_addresses,
    swizzle_address,
    tile_desc,
    validate_idesc,
)
from ptxlab.desc.cli import main
from ptxlab.desc.smem import SWIZZLE_CODES

RNG = random.Random()  # fresh seed each run; failures print the values


# ---------------------------------------------------------------- reference encodings
def test_smem_reference_encodings() -> None:
    assert SmemDesc.encode(start_address=0x400, lbo=16, sbo=1024, swizzle="128B") == 0x4000404000010040
    assert SmemDesc.encode(start_address=0x8000, lbo=0, sbo=128, swizzle="NONE") == 0x0000400800000800
    d = SmemDesc.decode(0x4000404000010040)
    assert (d["start_address"], d["lbo"], d["sbo"], d.swizzle_name, d.errors) == (0x400, 16, 1024, "128B", [])


def test_idesc_reference_encodings() -> None:
    assert InstrDesc.encode("f16", 128, 256, a_fmt="BF16", b_fmt="BF16", d_fmt="F32") == 0x08400490
    assert InstrDesc.encode("mxf4nvf4", 128, 128) == 0x08200480
    for n in range(8, 257, 8):
        word = 0x08000480 | ((n >> 3) << 17)
        assert InstrDesc.encode("mxf4nvf4", m=128, n=n) == word
        info = decode_idesc("mxf4nvf4", word)
        assert (info.m, info.n, info.k, info.a_fmt, info.b_fmt, info.scale_fmt) == (128, n, 64, "E2M1", "E2M1", "UE4M3")
    assert [0x08000480 | ((n >> 3) << 17) for n in (8, 64, 128, 256)] == [0x08020480, 0x08100480, 0x08200480,
                                                                         0x08400480]


# ---------------------------------------------------------------- round trips
def test_smem_round_trip_random() -> None:
    for _ in range(500):
        sw = RNG.choice(list(SWIZZLE_CODES.values()))
        f = dict(start_address=RNG.randrange(0, 1 << 18, 16), lbo=RNG.randrange(0, 1 << 18, 16),
                 sbo=RNG.randrange(0, 1 << 18, 16), swizzle=sw, base_offset=RNG.randrange(8))
        word = SmemDesc.encode(**f)
        d = SmemDesc.decode(word)
        assert d.errors == [], (f, d.errors)
        assert {k: d[k] for k in ("start_address", "lbo", "sbo", "base_offset")} == {
            k: f[k] for k in ("start_address", "lbo", "sbo", "base_offset")}
        assert d.swizzle_name == sw
        assert SMEM_DESC.pack({k: (v if k != "swizzle" else sw) for k, v in f.items()}) == word
        # the table covers every bit: repacking the decoded codes is the identity
        assert sum(d.codes[fl.name] << fl.lo for fl in SMEM_DESC.fields) == word


def test_bitlayout_raw_round_trip_random() -> None:
    for lay in [SMEM_DESC, *IDESC_LAYOUTS.values()]:
        for _ in range(200):
            word = RNG.getrandbits(lay.nbits)
            d = lay.unpack(word)
            assert sum(d.codes[f.name] << f.lo for f in lay.fields) == word


def _random_legal(kind: str) -> dict:
    bs = kind in ("mxf8f6f4", "mxf4", "mxf4nvf4")
    cta = RNG.choice([1, 2])
    m = 128 if (bs and cta == 1) else RNG.choice([64, 128] if cta == 1 else [128, 256])
    step = 8 if cta == 1 else 16
    n = RNG.randrange(step, 257, step)
    fmts = list(IDESC_LAYOUTS[kind].get("a_fmt").enum.values())
    kw: dict = dict(a_fmt=RNG.choice(fmts), negate_a=RNG.randrange(2), negate_b=RNG.randrange(2),
                    sparse=RNG.randrange(2), cta_group=cta)
    kw["b_fmt"] = kw["a_fmt"] if kind == "f16" else RNG.choice(fmts)
    if kind == "i8":
        kw.update(negate_a=0, negate_b=0, saturate=RNG.randrange(2), d_fmt="S32")
    if kind == "f16":
        kw["d_fmt"] = "F32" if kw["a_fmt"] == "BF16" else RNG.choice(["F16", "F32"])
    if kind == "f8f6f4":
        kw["d_fmt"] = RNG.choice(["F16", "F32"])
    if kind not in ("mxf4", "mxf4nvf4"):
        for op in ("a", "b"):
            fmt = kw[f"{op}_fmt"]
            if kind not in ("f8f6f4", "mxf8f6f4") or fmt in ("E4M3", "E5M2"):
                kw[f"{op}_major"] = RNG.choice(["K", "MN"])
    if kind == "mxf8f6f4":
        kw.update(sfa_id=RNG.randrange(4), sfb_id=RNG.randrange(4))
    if kind == "mxf4":
        kw.update(sfa_id=RNG.choice([0, 2]), sfb_id=RNG.choice([0, 2]))
    if kind == "mxf4nvf4":
        kw["scale_fmt"] = RNG.choice(["UE4M3", "UE8M0"])
        if kw["scale_fmt"] == "UE8M0":
            kw.update(sfa_id=RNG.choice([0, 2]), sfb_id=RNG.choice([0, 2]))
    if kw["sparse"]:
        kw["sparse_id2"] = RNG.randrange(4)
    return dict(m=m, n=n, **kw)


@pytest.mark.parametrize("kind", KINDS)
def test_idesc_round_trip_random(kind: str) -> None:
    for _ in range(200):
        kw = _random_legal(kind)
        word = InstrDesc.encode(kind, **kw)
        info = decode_idesc(kind, word, cta_group=kw["cta_group"])
        assert (info.m, info.n) == (kw["m"], kw["n"])
        assert info.a_fmt == kw["a_fmt"] and info.b_fmt == kw["b_fmt"]
        assert info.a_major == kw.get("a_major", "K") and info.b_major == kw.get("b_major", "K")
        assert (info.negate_a, info.negate_b, info.sparse) == (kw["negate_a"], kw["negate_b"], kw["sparse"])
        assert (info.sfa_id, info.sfb_id) == (kw.get("sfa_id", 0), kw.get("sfb_id", 0))
        assert info.sparse_id2 == kw.get("sparse_id2", 0)
        if "d_fmt" in kw:
            assert info.d_fmt == kw["d_fmt"]
        if "scale_fmt" in kw:
            assert info.scale_fmt == kw["scale_fmt"]


# ---------------------------------------------------------------- anchors.md bug classes
def _one_error(errs: list[str], *needles: str) -> None:
    assert errs, "expected a validation error"
    assert any(all(n in e for n in needles) for e in errs), errs


def test_smem_missing_version_bit() -> None:
    good = 0x4000404000010040
    _one_error(SmemDesc.validate(good & ~(1 << 46)), "smem_desc.version", "bit 46")
    with pytest.raises(DescError, match="version"):
        smem_operand_addresses(good & ~(1 << 46), 8, 32)


def test_smem_hopper_swizzle_code() -> None:
    # Hopper wgmma 32B code 3 written into Blackwell's 3-bit field: invalid code.
    bad = (0x4000404000010040 & ~(7 << 61)) | (3 << 61)
    _one_error(SmemDesc.validate(bad), "smem_desc.swizzle", "Hopper")
    # Hopper 128B code 1 lands on 128B_BASE32B: legal only for MN-major, caught for K-major operands.
    base32 = (0x4000404000010040 & ~(7 << 61)) | (1 << 61)
    assert SmemDesc.validate(base32) == []
    _one_error(SmemDesc.validate(base32, major="K"), "128B_BASE32B", "MN-major only")
    with pytest.raises(DescError, match="MN-major only"):
        smem_operand_addresses(base32, 8, 32, "K")


def test_smem_encode_rejects_bad_values() -> None:
    with pytest.raises(DescError, match="multiple of 16"):
        SmemDesc.encode(start_address=0x408, sbo=1024)
    with pytest.raises(DescError, match="does not fit"):
        SmemDesc.encode(start_address=1 << 18, sbo=1024)
    with pytest.raises(DescError, match="not one of"):
        SmemDesc.encode(start_address=0, swizzle="256B")
    with pytest.raises(DescError, match="sm_103a"):
        SmemDesc.encode(start_address=0, lbo_mode=1)
    _one_error(SmemDesc.validate(0x4000404000010040 | (1 << 15)), "_rsv14")


def test_idesc_m_shift_confusion() -> None:
    # M>>7 (=1) written where kind::f16 wants M>>4: decodes as M=16
    bad = (0x08400490 & ~(0x1F << 24)) | (1 << 24)
    _one_error(validate_idesc("f16", bad), "idesc.m", "M=16", "M>>7")
    # M>>4 (=8) written at bit 24 for mxf4nvf4 (wants M>>7 at bit 27): reserved bits 24..26 / M=0
    bad2 = (0x08200480 & ~(0x1F << 24)) | (1 << 24)
    _one_error(validate_idesc("mxf4nvf4", bad2), "_rsv24", "M>>7")
    with pytest.raises(DescError, match="Table 39"):
        InstrDesc.encode("mxf4nvf4", 64, 128)


def test_idesc_n_rules() -> None:
    for n in (4, 12, 100, 260):
        with pytest.raises(DescError, match="multiple of 8"):
            InstrDesc.encode("mxf4nvf4", 128, n)
    _one_error(validate_idesc("mxf4nvf4", 0x08000480 | (33 << 17)), "idesc.n", "N=264", "[8,256]", "Table 39")
    _one_error(validate_idesc("mxf4nvf4", 0x08000480 | (34 << 17)), "N=272")
    _one_error(validate_idesc("mxf4nvf4", 0x08000480), "N=0")
    # cta_group::2 needs N % 16 == 0
    _one_error(validate_idesc("mxf4nvf4", 0x08000480 | (3 << 17), cta_group=2), "multiple of 16", "cta_group::2")
    assert validate_idesc("mxf4nvf4", 0x08000480 | (3 << 17), cta_group=1) == []
    with pytest.raises(DescError, match="multiple of 16"):
        InstrDesc.encode("f16", 256, 24, cta_group=2)


def test_idesc_e2m1_code5_under_mxf4nvf4() -> None:
    bad = (0x08200480 & ~(7 << 7)) | (5 << 7)
    _one_error(validate_idesc("mxf4nvf4", bad), "idesc.a_fmt", "E2M1 is code 1")
    bad_b = (0x08200480 & ~(7 << 10)) | (5 << 10)  # B is 2 bits (10..11); bit 12 is reserved
    _one_error(validate_idesc("mxf4nvf4", bad_b), "E2M1 is code 1")
    with pytest.raises(DescError):
        InstrDesc.encode("mxf4nvf4", 128, 128, a_fmt=5)
    # and code 5 is E2M1 under f8f6f4
    assert decode_idesc("f8f6f4", InstrDesc.encode("f8f6f4", 128, 64, a_fmt=5, b_fmt="E2M1")).a_fmt == "E2M1"


def test_idesc_transpose_and_scale_rules() -> None:
    _one_error(validate_idesc("mxf4nvf4", 0x08200480 | (1 << 15)), "idesc.a_major", "illegal")
    _one_error(validate_idesc("mxf4nvf4", 0x08200480 | (1 << 16)), "idesc.b_major", "illegal")
    with pytest.raises(DescError, match="MN-major"):
        InstrDesc.encode("mxf4nvf4", 128, 128, a_major="MN")
    with pytest.raises(DescError, match="only takes UE8M0"):
        InstrDesc.encode("mxf4", 128, 128, scale_fmt="UE4M3")
    with pytest.raises(DescError, match="must be 0 with block16"):
        InstrDesc.encode("mxf4nvf4", 128, 128, sfa_id=2)
    assert InstrDesc.encode("mxf4nvf4", 128, 128, scale_fmt="UE8M0", sfa_id=2, sfb_id=2)
    with pytest.raises(DescError, match="0 or 2"):
        InstrDesc.encode("mxf4", 128, 128, sfb_id=1)
    with pytest.raises(DescError, match="8-bit"):
        InstrDesc.encode("f8f6f4", 128, 128, a_fmt="E2M1", a_major="MN")
    with pytest.raises(DescError, match="same type"):
        InstrDesc.encode("f16", 128, 128, a_fmt="F16", b_fmt="BF16")
    with pytest.raises(DescError, match="F16 D requires F16"):
        InstrDesc.encode("f16", 128, 128, a_fmt="BF16", b_fmt="BF16", d_fmt="F16")
    with pytest.raises(DescError, match="kind::i8"):
        InstrDesc.encode("i8", 128, 128, negate_a=1)
    with pytest.raises(DescError, match=r"\.ws"):
        InstrDesc.encode("f16", 128, 128, max_shift=1)
    assert InstrDesc.encode("f16", 32, 64, max_shift=1, ws=True)
    with pytest.raises(DescError, match="sm_103a"):
        InstrDesc.encode("mxf4nvf4", 128, 128, k_size=1)
    assert decode_idesc("mxf4nvf4", InstrDesc.encode("mxf4nvf4", 128, 128, k_size=1, arch="sm_103a"),
                        arch="sm_103a").k == 96


def test_tmem_addr() -> None:
    for _ in range(200):
        lane, col = RNG.randrange(128), RNG.randrange(512)
        a = TmemAddr.encode(lane=lane, col=col)
        assert a == (lane << 16) | col
        d = TmemAddr.decode(a)
        assert (d["lane"], d["col"], d.errors) == (lane, col, [])
    _one_error(TmemAddr.validate(512), "column 512")
    _one_error(TmemAddr.validate(0xC0000000), "bits 31..30")
    with pytest.raises(DescError):
        TmemAddr.encode(lane=128, col=0)


# ---------------------------------------------------------------- operand addresses
def test_smem_operand_addresses_formulas_random() -> None:
    for _ in range(100):
        sw = RNG.choice(["NONE", "32B", "64B", "128B"])
        w = {"NONE": 16, "32B": 32, "64B": 64, "128B": 128}[sw]
        start = RNG.randrange(0, 1 << 16, 16) if sw == "NONE" else RNG.randrange(0, 1 << 16, 8 * w)
        lbo, sbo = RNG.randrange(0, 1 << 14, 16), RNG.randrange(0, 1 << 14, 16)
        desc = SmemDesc.encode(start_address=start, lbo=lbo, sbo=sbo, swizzle=sw)
        rows, kb = RNG.randrange(1, 40), RNG.randrange(1, 33 if sw != "NONE" else 64)
        if sw != "NONE":
            kb = min(kb, w)
        got = smem_operand_addresses(desc, rows, kb, "K")
        assert got.shape == (rows, kb)
        r, k = RNG.randrange(rows), RNG.randrange(kb)
        if sw == "NONE":
            want = start + (r % 8) * 16 + (r // 8) * sbo + (k % 16) + (k // 16) * lbo
        else:
            pre = start + (r % 8) * w + (r // 8) * sbo + k
            chunk_bits = {32: 1, 64: 3, 128: 7}[w]
            want = pre ^ (((pre >> 7) & chunk_bits) << 4)
        assert got[r, k] == want, (sw, start, lbo, sbo, r, k)


def test_swizzle_128b_is_chunk_xor_line() -> None:
    a = np.arange(0, 1 << 14)
    s = swizzle_address(a, "128B")
    assert np.array_equal((s >> 4) & 7, ((a >> 4) & 7) ^ ((a >> 7) & 7))
    assert np.array_equal(s & ~0x70, a & ~0x70)
    assert np.array_equal(np.sort(s), a)  # a permutation


def test_smem_operand_addresses_unconfirmed_raise() -> None:
    d = SmemDesc.encode(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", base_offset=1)
    with pytest.raises(DescError, match="UNCONFIRMED"):
        smem_operand_addresses(d, 8, 32)
    with pytest.raises(DescError, match="exceeds"):
        smem_operand_addresses(SmemDesc.encode(start_address=0, sbo=256, swizzle="32B"), 8, 64)


def test_tile_desc_matches_tma_image() -> None:
    """A K-major SW128 tile written as TMA does (dense rows, chunk ^= line%8) reads back through tile_desc."""
    base, rows, kbytes = 0x2000, 128, 128
    data = np.random.default_rng().integers(0, 256, size=(rows, kbytes), dtype=np.uint8)
    smem = np.zeros(base + rows * kbytes, dtype=np.uint8)
    lin = base + np.arange(rows)[:, None] * kbytes + np.arange(kbytes)[None, :]
    smem[swizzle_address(lin, "128B")] = data
    for kb in range(kbytes // 32):
        desc = tile_desc(base, "K", "128B", elem_bits=4, mn=rows, k=kbytes * 2, kblock=kb)
        got = smem[smem_operand_addresses(desc, rows, 32)]
        assert np.array_equal(got, data[:, 32 * kb:32 * kb + 32])


# ---------------------------------------------------------------- CLI
def test_cli_smem(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["smem", "0x4000404000010040", "--elem", "e2m1", "--rows", "9"]) == 0
    out = capsys.readouterr().out
    for s in ("128B", "1024 B", "16 B", "K-major", "0x490 (+144)", "k 32..63", "start 0x400"):
        assert s in out, s


def test_cli_smem_invalid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["smem", hex(0x4000404000010040 & ~(1 << 46))]) == 2
    assert "missing version bit 46" in capsys.readouterr().out


def test_cli_idesc(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["idesc", "--kind", "mxf4nvf4", "0x08200480"]) == 0
    out = capsys.readouterr().out
    assert "128x128x64" in out and "UE4M3" in out and "E2M1" in out
    assert main(["idesc", "--kind", "mxf4nvf4", hex(0x08200480 | (1 << 15))]) == 2
    assert "transpose" in capsys.readouterr().out


def test_cli_encode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["encode", "smem", "--start", "0x400", "--lbo", "16", "--sbo", "1024", "--swizzle", "128B"]) == 0
    assert "0x4000404000010040" in capsys.readouterr().out
    assert main(["encode", "idesc", "--kind", "mxf4nvf4", "--m", "128", "--n", "128"]) == 0
    assert "0x08200480" in capsys.readouterr().out
    assert main(["encode", "idesc", "--kind", "mxf4nvf4", "--m", "128", "--n", "300"]) == 2
    assert "Table 39" in capsys.readouterr().out
    assert main(["tmem", "0x00200040"]) == 0
    assert "lane 32" in capsys.readouterr().out


def test_cli_module_entry() -> None:
    r = subprocess.run([sys.executable, "-m", "ptxlab.desc.cli", "idesc", "--kind", "f16", "0x08400490"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "128x256x16" in r.stdout and "BF16" in r.stdout
    r = subprocess.run([sys.executable, "-m", "ptxlab.desc.cli", "smem", "0x1"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2


def test_docs_tables_in_sync() -> None:
    """ptx_docs/descriptors.md embeds the generated field tables verbatim (regenerate: python -m ptxlab.desc.docgen)."""
    from pathlib import Path

    from ptxlab.desc.docgen import tables_markdown

    doc = (Path(__file__).resolve().parents[2] / "ptx_docs" / "descriptors.md").read_text()
    assert tables_markdown().strip() in doc
