"""Descriptor for one MMA K-slice of a canonical SMEM tile built like CuTe's
`tile_to_shape(Layout_{K|MN}_{INTER|SW32|SW64|SW128}_Atom<T>, (MN, K), order)`.

Atoms (PTX ISA 9.7.16.3.3; CUTLASS mma_traits_sm100.hpp):
  K-major:  8 rows x W bytes (W = 16 for NONE, else the swizzle width), rows W apart.
  MN-major: W bytes of M/N x 8 K-rows (128B_BASE32B: 128 B x 4 K-rows), K-rows W apart.
`order="mn"` places atoms along M/N first (CuTe default GenColMajor), `order="k"` along K first.
One MMA reads 32 bytes of K per row (K-major) or 32*8/elem_bits K-rows (MN-major).
"""
from __future__ import annotations

from ptxlab.desc.fields import DescError
from ptxlab.desc.smem import SWIZZLE_WIDTH, SmemDesc, _norm_swizzle

__all__ = ["tile_desc_fields", "tile_desc"]


def tile_desc_fields(base: int, major: str, swizzle: str, elem_bits: int, mn: int, k: int, kblock: int = 0,
                     order: str = "mn") -> dict[str, int | str]:
    """start_address / lbo / sbo / swizzle of the descriptor CUTLASS `make_umma_desc` builds for K-slice `kblock`."""
    sw = str(_norm_swizzle(swizzle))
    w = SWIZZLE_WIDTH[sw]
    mj = major.upper()
    kbytes_mma = 32
    if mj == "K":
        if sw == "128B_BASE32B":
            raise DescError("tile_desc_fields: 128B_BASE32B is MN-major only")
        rows_per_atom, atoms_mn, row_bytes_k = 8, mn // 8, k * elem_bits // 8
        atoms_k = row_bytes_k // w
        if mn % 8 or row_bytes_k % w:
            raise DescError(f"tile_desc_fields: MN={mn} must be a multiple of 8 and K bytes {row_bytes_k} of {w}")
    elif mj == "MN":
        krows_per_atom = 4 if sw == "128B_BASE32B" else 8
        mn_bytes = mn * elem_bits // 8
        atoms_mn, atoms_k = mn_bytes // w, k // krows_per_atom
        if mn_bytes % w or k % krows_per_atom:
            raise DescError(f"tile_desc_fields: MN bytes {mn_bytes} must be a multiple of {w}, K of {krows_per_atom}")
    else:
        raise DescError(f"tile_desc_fields: major must be K or MN, got {major!r}")
    atom_bytes = w * (krows_per_atom if mj == "MN" else 8)

    def atom(i_mn: int, i_k: int) -> int:
        if order == "mn":
            return (i_mn + i_k * atoms_mn) * atom_bytes
        if order == "k":
            return (i_k + i_mn * atoms_k) * atom_bytes
        raise DescError(f"tile_desc_fields: order must be 'mn' or 'k', got {order!r}")

    mn_step = atom(1, 0) - atom(0, 0) if atoms_mn > 1 else 0
    k_step = atom(0, 1) - atom(0, 0) if atoms_k > 1 else 0
    if mj == "K":
        kb0 = kblock * kbytes_mma
        start = base + atom(0, kb0 // w) + kb0 % w
        if sw == "NONE":
            return dict(start_address=start, lbo=k_step, sbo=mn_step, swizzle=sw)
        return dict(start_address=start, lbo=16, sbo=mn_step, swizzle=sw)  # LBO unused; CUTLASS encodes 1 (16 B)
    k_mma = kbytes_mma * 8 // elem_bits
    k0 = kblock * k_mma
    start = base + atom(0, k0 // krows_per_atom) + (k0 % krows_per_atom) * w
    if k_mma <= krows_per_atom:
        k_step = 0  # the slice holds one K-row group: CuTe gives the unused stride 0 (e.g. tf32, K=8)
    if sw == "NONE":
        return dict(start_address=start, lbo=k_step, sbo=mn_step, swizzle=sw)
    return dict(start_address=start, lbo=mn_step, sbo=k_step, swizzle=sw)


def tile_desc(base: int, major: str, swizzle: str, elem_bits: int, mn: int, k: int, kblock: int = 0,
              order: str = "mn") -> int:
    """Encoded descriptor (see `tile_desc_fields`)."""
    return SmemDesc.encode(**tile_desc_fields(base, major, swizzle, elem_bits, mn, k, kblock, order))  # type: ignore[arg-type]
