"""SMEM / TMEM operand images for the tcgen05.mma tests (tests/emu/hw/test_tcgen05_mma.py, test_tcgen05_mma_pair.py).

Written with the canonical-layout formulas of PTX 9.7.16.3 (K-major NONE / SW128 with the 128B XOR), independently
of ptxlab.desc's address function; scale factors in the ptx_facts §6 TMEM layout (the cta_group::1 4x1 data path).
Importable from every test module because pytest puts ``tests/`` on ``sys.path`` (tests/conftest.py)."""
from __future__ import annotations

import numpy as np

POISON_D = 0xDEADBEEF
UE4M3 = {0x30: 0.5, 0x38: 1.0, 0x40: 2.0, 0x44: 3.0, 0x00: 0.0}   # a few exact scale-factor codes and values


def kmajor_sw128(smem: np.ndarray, base: int, rowbytes: np.ndarray) -> None:
    """rows x 128 B, 8-row groups 1024 B apart, 16-B chunk c of line L at c ^ (L%8) (PTX 5.5.7 / 9.7.16.3).
    ``rowbytes`` may be narrower than the 128-B line: only its leading bytes of each line are written."""
    assert rowbytes.shape[1] <= 128, f"an SW128 K-major line holds 128 B, got {rowbytes.shape[1]}"
    for r in range(rowbytes.shape[0]):
        for kb in range(rowbytes.shape[1]):
            a = base + (r % 8) * 128 + (r // 8) * 1024 + kb
            a ^= ((a >> 7) & 7) << 4
            smem[a] = rowbytes[r, kb]


def kmajor_none(smem: np.ndarray, base: int, rowbytes: np.ndarray, sbo: int, lbo: int) -> None:
    """K-major, no swizzle: 8 rows x 16 B core matrices, SBO between 8-row groups, LBO between 16-B K chunks."""
    for r in range(rowbytes.shape[0]):
        for kb in range(rowbytes.shape[1]):
            smem[base + (r % 8) * 16 + (r // 8) * sbo + (kb % 16) + (kb // 16) * lbo] = rowbytes[r, kb]


def pack_e2m1(codes: np.ndarray) -> np.ndarray:
    """(rows, 2k) e2m1 codes -> (rows, k) bytes, element 2i in the low nibble."""
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)


def sf_to_tmem(tm: np.ndarray, col: int, sf: np.ndarray) -> None:
    """SF codes (rows, nblk) -> word col + r//32, lane r%32 + 32q (all q), byte j (ptx_facts §6)."""
    for r in range(sf.shape[0]):
        w = sum(int(sf[r, j]) << (8 * j) for j in range(sf.shape[1]))
        for q in range(4):
            tm[r % 32 + 32 * q, col + r // 32] = w


def f32_bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32)
