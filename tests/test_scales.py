"""SF layouts in ptxlab.scales against per-element loops written from ptx_facts §3/§6/§8."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ptxlab import scales as sc

SHAPES = [(128, 4, 1), (256, 8, 2), (200, 5, 3), (1, 1, 1), (130, 13, 2), (384, 28, 1)]  # (MN, SFK, L)


@pytest.fixture
def rng() -> np.random.Generator:
    seed = int.from_bytes(os.urandom(8), "little")
    print(f"rng seed = {seed}")
    return np.random.default_rng(seed)


def random_ref(rng: np.random.Generator, mn: int, sf_k: int, nl: int) -> np.ndarray:
    """Random non-zero codes in gpu-mode's reference layout: (L, MN, SFK) contiguous, viewed as (MN, SFK, L)."""
    return rng.integers(1, 256, size=(nl, mn, sf_k)).astype(np.uint8).transpose(1, 2, 0)


def formula(m: int, j: int, l: int, rest_m: int, rest_k: int) -> int:
    """ptx_facts §8 byte offset, written out independently."""
    return (l * rest_m * rest_k * 512 + (m // 128) * rest_k * 512 + (j // 4) * 512
            + (m % 32) * 16 + ((m % 128) // 32) * 4 + j % 4)


@pytest.mark.parametrize("mn,sf_k,nl", SHAPES)
def test_permuted_layout_matches_formula_and_index(rng: np.random.Generator, mn: int, sf_k: int, nl: int) -> None:
    ref = random_ref(rng, mn, sf_k, nl)
    rest_m, rest_k = -(-mn // 128), -(-sf_k // 4)
    perm = sc.ref_to_permuted(ref)
    assert perm.shape == (32, 4, rest_m, 4, rest_k, nl) and perm.dtype == np.uint8
    # torch strides of contiguous (L, rest_m, rest_k, 32, 4, 4) permuted by (3, 4, 1, 5, 2, 0)
    assert perm.strides == (16, 4, rest_k * 512, 1, 512, rest_m * rest_k * 512)
    mem = sc.permuted_bytes(perm)
    assert mem.size == nl * rest_m * rest_k * 512
    seen = np.zeros(mem.size, dtype=bool)
    for m in range(mn):
        for j in range(sf_k):
            for l in range(nl):
                off = formula(m, j, l, rest_m, rest_k)
                assert mem[off] == ref[m, j, l]
                assert perm[m % 32, (m % 128) // 32, m // 128, j % 4, j // 4, l] == ref[m, j, l]
                assert sc.permuted_offset(m, j, l, rest_m, rest_k) == off
                seen[off] = True
    assert not np.any(mem[~seen]), "padding must be zero without a base"
    # vectorized offsets
    mm, jj, ll = np.meshgrid(np.arange(mn), np.arange(sf_k), np.arange(nl), indexing="ij")
    assert np.array_equal(mem[sc.permuted_offset(mm, jj, ll, rest_m, rest_k)], ref)


@pytest.mark.parametrize("mn,sf_k,nl", SHAPES)
def test_round_trips(rng: np.random.Generator, mn: int, sf_k: int, nl: int) -> None:
    ref = random_ref(rng, mn, sf_k, nl)
    rest_m, rest_k = sc.sf_rest(mn, sf_k)
    perm = sc.ref_to_permuted(ref)
    back = sc.permuted_to_ref(perm, mn, sf_k)
    assert np.array_equal(back, ref) and back.transpose(2, 0, 1).flags.c_contiguous
    blocked = sc.ref_to_blocked(ref)
    assert blocked.shape == (nl, rest_m * rest_k * 512)
    assert np.array_equal(sc.blocked_to_ref(blocked, mn, sf_k), ref)
    assert np.array_equal(sc.permuted_to_blocked(perm), blocked)  # permuted memory == to_blocked per batch
    assert np.array_equal(sc.blocked_to_permuted(blocked, rest_m, rest_k), perm)
    for l in range(nl):
        assert np.array_equal(sc.from_blocked(sc.to_blocked(ref[:, :, l]), mn, sf_k), ref[:, :, l])


def test_to_blocked_per_element(rng: np.random.Generator) -> None:
    for rows, cols in [(128, 4), (256, 12), (100, 6)]:
        sf = rng.integers(1, 256, size=(rows, cols)).astype(np.uint8)
        rest_m, rest_k = -(-rows // 128), -(-cols // 4)
        flat = sc.to_blocked(sf)
        expect = np.zeros(rest_m * rest_k * 512, dtype=np.uint8)
        for m in range(rows):
            for j in range(cols):
                expect[formula(m, j, 0, rest_m, rest_k)] = sf[m, j]
        assert np.array_equal(flat, expect)


def test_padding_from_base(rng: np.random.Generator) -> None:
    mn, sf_k, nl = 150, 6, 2
    ref = random_ref(rng, mn, sf_k, nl)
    rest_m, rest_k = sc.sf_rest(mn, sf_k)
    base_phys = rng.integers(1, 256, size=(nl, rest_m, rest_k, 32, 4, 4)).astype(np.uint8)
    base = sc.permuted_from_physical(base_phys)
    perm = sc.ref_to_permuted(ref, base=base)
    mem = sc.permuted_bytes(perm)
    base_mem = base_phys.reshape(-1)
    valid = np.zeros(mem.size, dtype=bool)
    for m in range(mn):
        for j in range(sf_k):
            for l in range(nl):
                valid[formula(m, j, l, rest_m, rest_k)] = True
    assert np.array_equal(mem[~valid], base_mem[~valid])
    assert np.array_equal(sc.permuted_to_ref(perm, mn, sf_k), ref)
    assert np.array_equal(base_phys.reshape(-1), base_mem)  # base untouched


def test_tmem_sf_image_per_byte(rng: np.random.Generator) -> None:
    block = rng.integers(0, 256, size=512).astype(np.uint8)
    img = sc.tmem_sf_image(block)
    assert img.shape == (128, 4) and img.dtype == np.uint32
    for lane in range(128):
        for col in range(4):
            for b in range(4):
                assert (int(img[lane, col]) >> (8 * b)) & 0xFF == block[16 * (lane % 32) + 4 * col + b]
    with pytest.raises(ValueError):
        sc.tmem_sf_image(block[:256])


def test_tmem_image_gives_sf_of_row(rng: np.random.Generator) -> None:
    """ptx_facts §6: SF of row r, k-block j of one 128x4 block = byte j of (lane r%32 + 32q, col r/32)."""
    mn, sf_k, nl = 256, 8, 2
    ref = random_ref(rng, mn, sf_k, nl)
    perm = sc.ref_to_permuted(ref)
    for l in range(nl):
        for mb in range(2):
            for kb in range(2):
                img = sc.tmem_sf_image(sc.sf_block(perm, l, mb, kb))
                for r in range(128):
                    for q in range(4):
                        word = int(img[r % 32 + 32 * q, r // 32])
                        for j in range(4):
                            assert (word >> (8 * j)) & 0xFF == ref[128 * mb + r, 4 * kb + j, l]


def test_errors() -> None:
    with pytest.raises(TypeError):
        sc.to_blocked(np.zeros((128, 4), dtype=np.int32))
    with pytest.raises(ValueError):
        sc.permuted_offset(128, 0, 0, 1, 1)
    with pytest.raises(ValueError):
        sc.permuted_to_ref(sc.ref_to_permuted(np.zeros((128, 4, 1), np.uint8)), 300, 4)
    with pytest.raises(ValueError):
        sc.from_blocked(np.zeros(100, np.uint8), 128, 4)
