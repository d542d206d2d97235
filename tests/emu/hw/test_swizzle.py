"""Swizzle model vs the literal PTX ISA 5.5.7 tables (independent reference written here)."""
from __future__ import annotations

import secrets

import numpy as np
import pytest

from ptxlab.emu.hw.swizzle import (
    SWIZZLE_MODES, SwizzleError, SwizzleUnconfirmed, base_offset, check_dst_alignment, natural_alignment,
    swizzle_addr, unswizzle_addr,
)

# PTX 5.5.7 tables: row r (128-B line within the pattern) lists, at each destination cell, the source cell.
T16 = {
    "32B": [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6]],
    "64B": [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5], [3, 2, 1, 0, 7, 6, 5, 4]],
    "128B": [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5], [3, 2, 1, 0, 7, 6, 5, 4],
             [4, 5, 6, 7, 0, 1, 2, 3], [5, 4, 7, 6, 1, 0, 3, 2], [6, 7, 4, 5, 2, 3, 0, 1], [7, 6, 5, 4, 3, 2, 1, 0]],
}
# 32-byte atomicity: cells are 32-B pairs "0 1 | 2 3 | 4 5 | 6 7" -> pair ids 0..3.
T32 = [[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]]
# 64-byte atomicity: halves.
T64 = [[0, 1], [1, 0]]


def ref_swizzle(mode: str, a: int) -> int:
    """Where the byte at linear shared address a lands, read off the tables (row = line index mod table rows)."""
    if mode == "none":
        return a
    line = a // 128
    if mode in T16:
        table, cell = T16[mode], 16
    elif mode == "128B_ATOM_32B":
        table, cell = T32, 32
    else:
        table, cell = T64, 64
    row = table[line % len(table)]
    src_cell = (a % 128) // cell
    dst_cell = row.index(src_cell)
    return line * 128 + dst_cell * cell + a % cell


MODES = [m for m in SWIZZLE_MODES if m != "128B_ATOM_32B_FLIP_8B"]


@pytest.mark.parametrize("mode", MODES)
def test_swizzle_matches_ptx_tables(mode: str) -> None:
    seed = secrets.randbits(32)
    rng = np.random.default_rng(seed)
    addrs = rng.integers(0, 1 << 18, size=3000)
    got = swizzle_addr(mode, addrs)
    want = np.array([ref_swizzle(mode, int(a)) for a in addrs])
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, f"seed={seed} mode={mode} addr=0x{int(addrs[bad[0]]):x} got 0x{int(got[bad[0]]):x} " \
                          f"want 0x{int(want[bad[0]]):x}"
    # scalar path agrees with the vector path
    for a in addrs[:50]:
        assert swizzle_addr(mode, int(a)) == ref_swizzle(mode, int(a)), f"seed={seed}"


@pytest.mark.parametrize("mode", MODES)
def test_inverse_and_bijection(mode: str) -> None:
    seed = secrets.randbits(32)
    rng = np.random.default_rng(seed)
    base = int(rng.integers(0, 64)) * 1024
    a = np.arange(base, base + 4096)
    s = swizzle_addr(mode, a)
    assert np.array_equal(unswizzle_addr(mode, s), a), f"seed={seed}"
    assert np.array_equal(np.sort(s), a), f"seed={seed}: not a permutation of the 4 KiB window"


def test_128b_is_chunk_xor_line() -> None:
    """UMMA statement (ptx_facts §4): 16-B chunk c of 128-B line L lands at c ^ (L % 8)."""
    for line in range(16):
        for c in range(8):
            a = line * 128 + c * 16 + 5
            assert swizzle_addr("128B", a) == line * 128 + (c ^ (line % 8)) * 16 + 5


def test_base_offset_formula() -> None:
    assert base_offset("128B", 1024 * 7) == 0
    assert base_offset("128B", 1024 + 3 * 128) == 3
    assert base_offset("64B", 512 + 128) == 1
    assert base_offset("32B", 256 + 128) == 1
    assert natural_alignment("128B") == 1024 and natural_alignment("64B") == 512 and natural_alignment("32B") == 256


def test_flip_8b_refuses_to_guess() -> None:
    with pytest.raises(SwizzleUnconfirmed, match="alternate"):
        swizzle_addr("128B_ATOM_32B_FLIP_8B", 0)


def test_unknown_mode() -> None:
    with pytest.raises(SwizzleError, match="unknown swizzle mode"):
        swizzle_addr("256B", 0)


def test_alignment_rules() -> None:
    check_dst_alignment("128B", 0x2000)
    check_dst_alignment("none", 0x80)
    with pytest.raises(SwizzleError, match="16-byte aligned"):
        check_dst_alignment("none", 0x88)
    with pytest.raises(SwizzleError, match="128-byte aligned"):
        check_dst_alignment("none", 0x90)
    with pytest.raises(SwizzleError, match="1024-byte aligned"):
        check_dst_alignment("128B", 0x2080)
    check_dst_alignment("128B", 0x2080, require_natural=False)
    with pytest.raises(SwizzleError, match="64-byte alignment|64 byte"):
        check_dst_alignment("128B_ATOM_64B", 0x20, tensor_min_align=0)
    with pytest.raises(SwizzleError, match="negative"):
        swizzle_addr("128B", -16)
