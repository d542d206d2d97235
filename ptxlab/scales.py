"""Scale-factor (SF) layouts for NVFP4 block16 operands, and the TMEM image of one SF block.

Three layouts of the same SF codes (uint8, UE4M3), logical SF tensor `[MN, SFK, L]` with SFK = K/16:

* reference : numpy shape (MN, SFK, L), memory order (L, MN, SFK) (gpu-mode builds (l, mn, sf_k) contiguous then
              `.permute(1, 2, 0)`; gpu-mode problems/nvidia/nvfp4_{gemv,gemm}/reference.py `create_scale_factor_tensors`).
* permuted  : numpy shape (32, 4, rest_m, 4, rest_k, L), memory order (L, rest_m, rest_k, 32, 4, 4) (gpu-mode `mma_shape`
              + `mma_permute_order = (3, 4, 1, 5, 2, 0)`); SF (m, j, l) sits at index
              [m % 32, (m % 128) // 32, m // 128, j % 4, j // 4, l].
* blocked   : cuBLAS "blocked" bytes per batch (gpu-mode `to_blocked`; cuBLAS docs "1D block scaling factors layout"):
              array (L, rest_m * rest_k * 512). Each 512-B block = 128 rows x 4 SFs, blocks ordered K-first.

rest_m = ceil(MN / 128), rest_k = ceil(SFK / 4). Padding (rows >= MN, cols >= SFK) is zero unless told otherwise.
Byte offset of SF (m, j, l) in the permuted tensor's memory (= in the blocked bytes of batch l + l * batch stride),
ptx_facts §8:  l*rest_m*rest_k*512 + (m//128)*rest_k*512 + (j//4)*512 + (m%32)*16 + ((m%128)//32)*4 + j%4.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = [
    "BLOCK_BYTES",
    "sf_rest",
    "ref_from_lmk",
    "ref_to_permuted",
    "permuted_to_ref",
    "permuted_physical",
    "permuted_from_physical",
    "permuted_bytes",
    "to_blocked",
    "from_blocked",
    "ref_to_blocked",
    "blocked_to_ref",
    "permuted_to_blocked",
    "blocked_to_permuted",
    "permuted_offset",
    "sf_block",
    "tmem_sf_image",
]

U8 = npt.NDArray[np.uint8]
BLOCK_BYTES = 512  # 128 rows x 4 SFs: one tcgen05.cp .32x128b.warpx4 source block (ptx_facts §6)

# permuted logical axes (mm32, mm4, mm, kk4, kk, l) <-> physical axes (l, mm, kk, mm32, mm4, kk4)
_PHYS_TO_PERM = (3, 4, 1, 5, 2, 0)  # gpu-mode mma_permute_order
_PERM_TO_PHYS = (5, 2, 4, 0, 1, 3)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def sf_rest(mn: int, sf_k: int) -> tuple[int, int]:
    """(rest_m, rest_k) = (ceil(mn/128), ceil(sf_k/4))."""
    if mn <= 0 or sf_k <= 0:
        raise ValueError(f"sf_rest: mn and sf_k must be positive, got {mn}, {sf_k}")
    return _ceil_div(mn, 128), _ceil_div(sf_k, 4)


def _u8(x: npt.ArrayLike, ndim: int, what: str) -> U8:
    arr = np.asarray(x)
    if arr.dtype != np.uint8:
        raise TypeError(f"{what}: expected uint8 SF codes, got {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"{what}: expected {ndim} dims, got shape {arr.shape}")
    return arr


def ref_from_lmk(sf_lmk: npt.ArrayLike) -> U8:
    """(L, MN, SFK) codes -> reference-layout view (MN, SFK, L) with memory order (L, MN, SFK)."""
    return np.ascontiguousarray(_u8(sf_lmk, 3, "ref_from_lmk")).transpose(1, 2, 0)


def permuted_from_physical(phys: npt.ArrayLike) -> U8:
    """Contiguous (L, rest_m, rest_k, 32, 4, 4) -> permuted view (32, 4, rest_m, 4, rest_k, L)."""
    p = _u8(phys, 6, "permuted_from_physical")
    if p.shape[3:] != (32, 4, 4):
        raise ValueError(f"permuted_from_physical: trailing dims must be (32, 4, 4), got {p.shape}")
    return np.ascontiguousarray(p).transpose(_PHYS_TO_PERM)


def permuted_physical(sf_perm: npt.ArrayLike) -> U8:
    """Permuted (32, 4, rest_m, 4, rest_k, L) -> (L, rest_m, rest_k, 32, 4, 4) in memory order (a view if possible)."""
    p = _u8(sf_perm, 6, "permuted_physical")
    if (p.shape[0], p.shape[1], p.shape[3]) != (32, 4, 4):
        raise ValueError(f"permuted_physical: expected shape (32, 4, rest_m, 4, rest_k, L), got {p.shape}")
    return p.transpose(_PERM_TO_PHYS)


def permuted_bytes(sf_perm: npt.ArrayLike) -> U8:
    """The permuted tensor's bytes in memory order (what a kernel reads), 1-D."""
    return np.ascontiguousarray(permuted_physical(sf_perm)).reshape(-1)


def ref_to_permuted(sf_ref: npt.ArrayLike, base: npt.ArrayLike | None = None) -> U8:
    """Reference (MN, SFK, L) -> permuted (32, 4, rest_m, 4, rest_k, L) (memory order (L, rest_m, rest_k, 32, 4, 4)).
    Padding positions are taken from `base` (a permuted-layout array of the right shape) or are zero."""
    r = _u8(sf_ref, 3, "ref_to_permuted")
    mn, sf_k, nl = r.shape
    rest_m, rest_k = sf_rest(mn, sf_k)
    if base is None:
        phys = np.zeros((nl, rest_m, rest_k, 32, 4, 4), dtype=np.uint8)
    else:
        phys = np.array(permuted_physical(base), dtype=np.uint8, order="C")
        if phys.shape != (nl, rest_m, rest_k, 32, 4, 4):
            raise ValueError(f"ref_to_permuted: base has physical shape {phys.shape}, "
                             f"need {(nl, rest_m, rest_k, 32, 4, 4)}")
    padded = np.zeros((nl, rest_m * 128, rest_k * 4), dtype=np.uint8)
    padded[:, :mn, :sf_k] = r.transpose(2, 0, 1)
    # m = 128*mm + 32*mm4 + mm32, j = 4*kk + kk4  ->  (l, mm, mm4, mm32, kk, kk4)
    blk = padded.reshape(nl, rest_m, 4, 32, rest_k, 4).transpose(0, 1, 4, 3, 2, 5)
    mask = np.zeros((rest_m * 128, rest_k * 4), dtype=bool)
    mask[:mn, :sf_k] = True
    mblk = mask.reshape(rest_m, 4, 32, rest_k, 4).transpose(0, 3, 2, 1, 4)
    phys[:, mblk] = blk[:, mblk]
    return phys.transpose(_PHYS_TO_PERM)


def permuted_to_ref(sf_perm: npt.ArrayLike, mn: int, sf_k: int) -> U8:
    """Permuted -> reference layout (MN, SFK, L) (memory order (L, MN, SFK)), dropping padding."""
    phys = permuted_physical(sf_perm)
    nl, rest_m, rest_k = phys.shape[:3]
    if sf_rest(mn, sf_k) != (rest_m, rest_k):
        raise ValueError(f"permuted_to_ref: mn={mn}, sf_k={sf_k} do not match rest_m={rest_m}, rest_k={rest_k}")
    # (l, mm, kk, mm32, mm4, kk4) -> (l, mm, mm4, mm32, kk, kk4) -> (l, M_pad, SFK_pad)
    full = phys.transpose(0, 1, 4, 3, 2, 5).reshape(nl, rest_m * 128, rest_k * 4)
    return ref_from_lmk(full[:, :mn, :sf_k])


def to_blocked(sf2d: npt.ArrayLike) -> U8:
    """One batch [rows, cols] -> cuBLAS blocked bytes (flat, rest_m*rest_k*512), zero-padded
    (same order as gpu-mode `to_blocked`, which itself requires multiples of 128 / 4)."""
    s = _u8(sf2d, 2, "to_blocked")
    rows, cols = s.shape
    rest_m, rest_k = sf_rest(rows, cols)
    padded = np.zeros((rest_m * 128, rest_k * 4), dtype=np.uint8)
    padded[:rows, :cols] = s
    blocks = padded.reshape(rest_m, 128, rest_k, 4).transpose(0, 2, 1, 3)
    return blocks.reshape(-1, 4, 32, 4).transpose(0, 2, 1, 3).reshape(-1).copy()


def from_blocked(flat: npt.ArrayLike, rows: int, cols: int) -> U8:
    """Inverse of to_blocked: flat blocked bytes -> [rows, cols] (padding dropped)."""
    f = _u8(flat, 1, "from_blocked")
    rest_m, rest_k = sf_rest(rows, cols)
    if f.size != rest_m * rest_k * BLOCK_BYTES:
        raise ValueError(f"from_blocked: {f.size} bytes, expected {rest_m * rest_k * BLOCK_BYTES}")
    blocks = f.reshape(-1, 32, 4, 4).transpose(0, 2, 1, 3)  # (blk, mm4, mm32, kk4)
    full = blocks.reshape(rest_m, rest_k, 128, 4).transpose(0, 2, 1, 3).reshape(rest_m * 128, rest_k * 4)
    return full[:rows, :cols].copy()


def ref_to_blocked(sf_ref: npt.ArrayLike) -> U8:
    """Reference (MN, SFK, L) -> (L, nbytes) blocked bytes per batch."""
    r = _u8(sf_ref, 3, "ref_to_blocked")
    return np.stack([to_blocked(r[:, :, l]) for l in range(r.shape[2])])


def blocked_to_ref(blocked: npt.ArrayLike, mn: int, sf_k: int) -> U8:
    """(L, nbytes) blocked bytes -> reference layout (MN, SFK, L)."""
    b = _u8(blocked, 2, "blocked_to_ref")
    return ref_from_lmk(np.stack([from_blocked(b[l], mn, sf_k) for l in range(b.shape[0])]))


def permuted_to_blocked(sf_perm: npt.ArrayLike) -> U8:
    """Permuted -> (L, nbytes): the permuted memory of batch l IS the blocked layout (padding kept)."""
    phys = permuted_physical(sf_perm)
    return np.ascontiguousarray(phys).reshape(phys.shape[0], -1)


def blocked_to_permuted(blocked: npt.ArrayLike, rest_m: int, rest_k: int) -> U8:
    """(L, rest_m*rest_k*512) blocked bytes -> permuted (32, 4, rest_m, 4, rest_k, L)."""
    b = _u8(blocked, 2, "blocked_to_permuted")
    if b.shape[1] != rest_m * rest_k * BLOCK_BYTES:
        raise ValueError(f"blocked_to_permuted: {b.shape[1]} bytes per batch, expected {rest_m * rest_k * BLOCK_BYTES}")
    return permuted_from_physical(b.reshape(b.shape[0], rest_m, rest_k, 32, 4, 4))


def permuted_offset(m: npt.ArrayLike, j: npt.ArrayLike, l: npt.ArrayLike, rest_m: int, rest_k: int) -> npt.NDArray[np.int64]:
    """Byte offset of SF (row m, SF-column j, batch l) in the permuted tensor's memory (ptx_facts §8)."""
    m, j, l = (np.asarray(v, dtype=np.int64) for v in (m, j, l))
    if np.any(m < 0) or np.any(m >= rest_m * 128) or np.any(j < 0) or np.any(j >= rest_k * 4) or np.any(l < 0):
        raise ValueError("permuted_offset: index out of range")
    return (l * (rest_m * rest_k * 512) + (m // 128) * (rest_k * 512) + (j // 4) * 512
            + (m % 32) * 16 + ((m % 128) // 32) * 4 + (j % 4))


def sf_block(sf_perm: npt.ArrayLike, l: int, m_blk: int, k_blk: int) -> U8:
    """The 512 bytes of SF block (rows 128*m_blk.., SF cols 4*k_blk..) of batch l, in memory order."""
    phys = permuted_physical(sf_perm)
    return np.ascontiguousarray(phys[l, m_blk, k_blk]).reshape(-1)


def tmem_sf_image(block512: npt.ArrayLike) -> npt.NDArray[np.uint32]:
    """TMEM words (lanes 0..127 x 4 columns, relative to the copy base) written by
    `tcgen05.cp.cta_group::1.32x128b.warpx4` from one 512-B SMEM block (SWIZZLE_NONE, 16-B lines):
    line i -> lanes i, i+32, i+64, i+96; bytes 4c..4c+3 of the line -> column c, byte 0 in bits 0-7
    (ptx_facts §3, §6; CUTLASS SM100_UTCCP_4x32dp128bit_1cta)."""
    b = _u8(block512, 1, "tmem_sf_image")
    if b.size != BLOCK_BYTES:
        raise ValueError(f"tmem_sf_image: need exactly 512 bytes, got {b.size}")
    words = np.ascontiguousarray(b).view("<u4").reshape(32, 4).astype(np.uint32)
    return np.tile(words, (4, 1))
