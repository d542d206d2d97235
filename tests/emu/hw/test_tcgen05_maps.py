"""tcgen05 ld/st/cp/shift maps, cross-checked against the CuTe layouts in the installed CUTLASS headers.

For every ``Copy_Traits<SM100_TMEM_LOAD_*>`` in include/cute/atom/copy_traits_sm100.hpp the test evaluates
DstLayout (thread, register bit) -> logical bit -> ValID -> TMEM (lane, column, bit) and compares it with
:func:`ldst_map`; the PTX spelling (shape, .num, .pack::16b, immHalfSplitoff) is read from the matching
``asm`` string in include/cute/arch/copy_sm100.hpp, so the header, not this file, says which instruction it is.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from ptxlab.errors import PtxlabError
from ptxlab.emu.hw.tcgen05_maps import (
    MapError, cp_map, cp_row_words, ld_pack, ldst_map, ldst_num_regs, shift_down_map, st_unpack,
)


def _cute_dir() -> tuple[Path | None, str]:
    """The CuTe headers of the nvidia-cutlass wheel (a hard dependency: missing headers fail, never skip)."""
    from ptxlab.toolchain import cutlass_include_dir

    try:
        return cutlass_include_dir() / "cute", ""
    except PtxlabError as exc:
        return None, str(exc)


CUTE, CUTE_MISSING = _cute_dir()
DP_B = 1 << 21  # TMEM::DP_b, include/cute/arch/tmem_allocator_sm100.hpp


# ------------------------------------------------------------------ tiny CuTe layout evaluator
def _parse_layout(text: str) -> tuple[object, object]:
    s = re.sub(r"\bShape\s*<", "(", " ".join(text.split()))
    s = re.sub(r"\bStride\s*<", "(", s)
    s = s.replace("TMEM::DP_b", str(DP_B)).replace("<", "(").replace(">", ",)")
    s = re.sub(r"\b_(\d+)\b", r"\1", s)
    tup = ast.literal_eval(s)
    shape, stride = (tup[0], tup[1]) if len(tup) == 2 else (tup[0], 1)
    return shape, stride


def _flat(x: object) -> list[int]:
    return [v for e in x for v in _flat(e)] if isinstance(x, tuple) else [int(x)]  # type: ignore[arg-type]


def _eval(shape: object, stride: object, idx: np.ndarray) -> np.ndarray:
    """Colexicographic index -> offset for a (nested) CuTe layout, vectorized over idx."""
    out = np.zeros_like(idx)
    for n, d in zip(_flat(shape), _flat(stride)):
        out += (idx % n) * d
        idx = idx // n
    return out


def _eval2(shape: tuple, stride: tuple, t: np.ndarray, v: np.ndarray) -> np.ndarray:
    return _eval(shape[0], stride[0], t) + _eval(shape[1], stride[1], v)


def _load_traits() -> dict[str, dict[str, str]]:
    text = (CUTE / "atom/copy_traits_sm100.hpp").read_text()
    out: dict[str, dict[str, str]] = {}
    for m in re.finditer(r"struct Copy_Traits<(SM100_TMEM_LOAD_\w+)>\s*\{(.*?)\n\};", text, re.S):
        body = m.group(2)
        d = {k: re.search(rf"using {k}\s*=\s*Layout<(.*?)>;", body, re.S) for k in ("ValID", "DstLayout")}
        if all(d.values()):
            out[m.group(1)] = {k: v.group(1) for k, v in d.items()}  # type: ignore[union-attr]
    return out


def _load_asm() -> dict[str, str]:
    text = (CUTE / "arch/copy_sm100.hpp").read_text()
    out = {}
    for m in re.finditer(r"struct (SM100_TMEM_LOAD_\w+)\s*\{(.*?)\n\};", text, re.S):
        asm = re.search(r'asm volatile \((.*?)\n\s*:', m.group(2), re.S)
        if asm:
            out[m.group(1)] = "".join(re.findall(r'"([^"]*)"', asm.group(1)))
    return out


def _cutlass_cases() -> list[tuple[str, dict[str, str], str]]:
    if CUTE is None or not (CUTE / "atom/copy_traits_sm100.hpp").exists():
        return []
    traits, asms = _load_traits(), _load_asm()
    return [(n, traits[n], asms[n]) for n in sorted(traits) if n in asms]


CASES = _cutlass_cases()


def test_cutlass_cases_cover_all_shapes() -> None:
    assert CUTE is not None, CUTE_MISSING
    shapes = {re.search(r"\.(\d+x\d+bx?2?)\.", a).group(1) for _, _, a in CASES}  # type: ignore[union-attr]
    assert shapes == {"32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2"}
    assert len(CASES) >= 70 and any("pack::16b" in a for _, _, a in CASES)


@pytest.mark.parametrize("name,tr,asm", CASES, ids=[c[0] for c in CASES])
def test_ld_map_matches_cutlass(name: str, tr: dict[str, str], asm: str) -> None:
    m = re.search(r"tcgen05\.ld\.sync\.aligned\.(\w+)\.x(\d+)(\.pack::16b)?\.b32", asm)
    assert m, asm
    shape, num, pack = m.group(1), int(m.group(2)), bool(m.group(3))
    imm = None
    if shape == "16x32bx2":
        imm = int(re.search(r"\],\s*(\d+);", asm).group(1))  # type: ignore[union-attr]
    mp = ldst_map(shape, num, pack16=pack, imm=imm)
    R = mp.nregs
    vs, vd = _parse_layout(tr["ValID"])
    ds, dd = _parse_layout(tr["DstLayout"])
    t, v = np.meshgrid(np.arange(32), np.arange(32 * R), indexing="ij")
    phys = _eval(vs, vd, _eval2(ds, dd, t, v))
    lane, bit = phys // DP_B, phys % DP_B
    col, wbit = bit // 32, bit % 32
    r, rbit = v // 32, v % 32
    if pack:
        h = rbit // 16
        assert np.array_equal(wbit, rbit % 16), "packed halves must come from the low 16 bits of a column"
    else:
        h = np.zeros_like(rbit)
        assert np.array_equal(wbit, rbit)
    assert np.array_equal(mp.lane[t, r, h], lane), f"{name}: lane map differs"
    assert np.array_equal(mp.col[t, r, h], col), f"{name}: column map differs"


@pytest.mark.parametrize("shape", ["32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2"])
@pytest.mark.parametrize("pack", [False, True])
def test_maps_are_injective_and_in_range(shape: str, pack: bool) -> None:
    for num in (1, 2, 4, 8, 16, 32, 64, 128):
        try:
            R = ldst_num_regs(shape, num)
        except MapError:
            assert num > 32
            continue
        imm = (2 * num if pack else num) if shape == "16x32bx2" else None
        mp = ldst_map(shape, num, pack16=pack, imm=imm)
        cells = mp.lane * 4096 + mp.col
        assert np.unique(cells).size == cells.size, "two (thread,reg,half) share a TMEM cell"
        nl = 32 if shape == "32x32b" else 16
        assert mp.lane.min() == 0 and mp.lane.max() == nl - 1
        assert mp.lane.shape == (32, R, 2 if pack else 1)


def test_num_limits() -> None:
    assert ldst_num_regs("16x256b", 32) == 128 and ldst_num_regs("16x128b", 64) == 128
    for shape, num in (("16x256b", 64), ("16x128b", 128), ("32x32b", 3), ("32x32b", 256)):
        with pytest.raises(MapError):
            ldst_num_regs(shape, num)
    with pytest.raises(MapError):
        ldst_map("16x32bx2", 1)
    with pytest.raises(MapError):
        ldst_map("32x32b", 1, imm=1)


def test_pack_unpack_roundtrip() -> None:
    rng = np.random.default_rng()
    regs = rng.integers(0, 2**32, size=(32, 8), dtype=np.uint64).astype(np.uint32)
    words = st_unpack(regs, True)
    assert np.array_equal(words[..., 0], regs & 0xFFFF) and np.array_equal(words[..., 1], regs >> 16)
    junk = words | (rng.integers(1, 2**16, size=words.shape, dtype=np.uint64).astype(np.uint32) << 16)
    assert np.array_equal(ld_pack(junk, True), regs)  # upper halves of TMEM words are ignored by .pack::16b
    assert np.array_equal(ld_pack(st_unpack(regs, False), False), regs)


def test_epilogue_32x32b_map() -> None:
    mp = ldst_map("32x32b", 64)
    t, j = np.meshgrid(np.arange(32), np.arange(64), indexing="ij")
    assert np.array_equal(mp.lane[..., 0], t) and np.array_equal(mp.col[..., 0], j)


# ------------------------------------------------------------------ cp
def test_cp_shapes() -> None:
    m = cp_map("32x128b", "warpx4")
    assert (m.rows, m.row_bytes, m.ncols) == (32, 16, 4)
    assert m.lanes[5].tolist() == [5, 37, 69, 101]
    m = cp_map("64x128b", "warpx2::02_13")
    assert m.lanes[40].tolist() == [40, 104]
    m = cp_map("64x128b", "warpx2::01_23")
    assert m.lanes[40].tolist() == [72, 104] and m.lanes[3].tolist() == [3, 35]
    assert cp_map("4x256b").lanes[:, 0].tolist() == [0, 32, 64, 96]
    assert cp_map("128x256b").ncols == 8 and cp_map("128x128b").lanes.shape == (128, 1)
    for shape, mc in (("64x128b", None), ("32x128b", None), ("128x256b", "warpx4"), ("32x128b", "warpx2::01_23")):
        with pytest.raises(MapError):
            cp_map(shape, mc)
    with pytest.raises(MapError, match="figures"):
        cp_map("128x128b", None, decompress="b8x16.b4x16_p64")


@pytest.mark.parametrize("key", [("128x256b", None), ("128x128b", None), ("4x256b", None),
                                 ("64x128b", "warpx2::02_13"), ("64x128b", "warpx2::01_23"), ("32x128b", "warpx4")])
def test_cp_covers_each_lane_once(key: tuple[str, str]) -> None:
    m = cp_map(*key)
    lanes = m.lanes.ravel()
    assert np.unique(lanes).size == lanes.size and lanes.max() < 128


def test_cp_row_words_little_endian() -> None:
    rng = np.random.default_rng()
    b = rng.integers(0, 256, size=(3, 16), dtype=np.uint8)
    w = cp_row_words(b)
    for r in range(3):
        for c in range(4):
            assert int(w[r, c]) == sum(int(b[r, 4 * c + k]) << (8 * k) for k in range(4))


def test_shift_map() -> None:
    src, dst = shift_down_map(32)
    assert src.tolist() == list(range(31)) and dst.tolist() == list(range(1, 32))
    with pytest.raises(MapError):
        shift_down_map(16)
