"""tcgen05.mma.cta_group::2 (one MMA over the SMEM and TMEM of a CTA pair) as a pure function over numpy arrays.

PTX ISA 9.7.16.5.1 (CTA pair: %cluster_ctarank differing in bit 0; even / odd CTA), 9.7.16.5.2 (peer CTA),
9.7.16.10.9 (".cta_group::2 ... performed on the Tensor Memory of the executing thread's CTA and its peer CTA"),
Table 39 (cta_group::2 shapes: M = 128 / 256, N multiple of 16), 9.7.16.10.5 (M = 256 is Layout A, a 4x1 data
path in each CTA). Everything the PTX text leaves to its figures (which rows / columns each CTA supplies and
receives) comes from CUTLASS's own 2-SM atoms (cute/atom/mma_traits_sm100.hpp ``SM100_MMA_*_2x1SM_SS``: ThrID
= Layout<_2>, ALayout / BLayout / CLayout split M and N in halves; ``tmem_sf_frg`` ScaleFactorDuplicated4by1 for
M = 256) and is written down in ptx_docs/tcgen05_cta_pair.md:

* every operand address of the instruction (a-desc, b-desc, d-tmem, scale-A/B-tmem) means the same SMEM offset /
  TMEM address in both CTAs;
* A: CTA v (v = 0 even, 1 odd) holds rows v*M/2 .. v*M/2 + M/2 - 1 in its own SMEM at a-desc (or its own TMEM at
  a-tmem);
* B: CTA v holds B rows (N index) v*N/2 .. v*N/2 + N/2 - 1 in its own SMEM at b-desc;
* D (M = 256): CTA v's TMEM lane l, column d_col + n holds D[v*128 + l, n] (Layout A);
* block scaling: CTA v's TMEM holds scale_A of its own 128 rows and scale_B of all N columns, each in the
  cta_group::1 layout (4x1 data path, replicated in all four 32-lane quarters).

Not modelled (MmaError): M = 128 with cta_group::2 (Layouts B / C: a 2x2 data path, figures 207-210 only),
disable-output-lane bits (the 8-word vector's lane order over the pair is not stated), sparse A.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional, Sequence

import numpy as np
import numpy.typing as npt

from .tcgen05_mma import MmaError, MmaResult, MmaSpec, gather_smem_operand, run_mma

__all__ = ["run_mma_pair"]

U8 = npt.NDArray[np.uint8]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]


def run_mma_pair(
    spec: MmaSpec,
    smems: Sequence[U8],
    tmem_datas: Sequence[U32],
    *,
    d_taddr: tuple[int, int],
    b_desc: int,
    a_desc: Optional[int] = None,
    a_taddr: Optional[tuple[int, int]] = None,
    sfa_taddr: Optional[tuple[int, int]] = None,
    sfb_taddr: Optional[tuple[int, int]] = None,
    enable_input_d: bool = True,
    disable_output_lane: Optional[npt.ArrayLike] = None,
    arith: Optional[Callable[..., U32]] = None,
    on_smem_read: Optional[Callable[[int, str, I64], None]] = None,
) -> list[MmaResult]:
    """Execute one tcgen05.mma.cta_group::2; ``smems`` / ``tmem_datas`` are (even CTA, odd CTA).

    Returns one :class:`MmaResult` per CTA of the pair (same order): the D words of its M/2 rows and the TMEM
    cells it read. ``on_smem_read(v, what, addr)`` sees the SMEM byte addresses read in CTA v (what = "A"/"B")."""
    if spec.cta_group != 2:
        raise MmaError("run_mma_pair needs a cta_group::2 MmaSpec")
    spec.validate()
    if len(smems) != 2 or len(tmem_datas) != 2:
        raise MmaError("a CTA pair has two CTAs: pass (even, odd) SMEM and TMEM")
    if spec.M != 256:
        raise MmaError(f"M={spec.M} with cta_group::2 uses Layout B/C (a 2x2 data path, PTX 9.7.16.10.5.2-3) whose "
                       "row/column placement is given by figures only; not modelled: use M=256 (Layout A)")
    if disable_output_lane is not None:
        dol = [int(x) & 0xFFFFFFFF for x in np.asarray(disable_output_lane).ravel()]
        if len(dol) != 8:
            raise MmaError(f"disable-output-lane must have 8 elements for cta_group::2, got {len(dol)} "
                           "(PTX 9.7.16.10.9)")
        if any(dol):
            raise MmaError("disable-output-lane bits with cta_group::2: which of the 8 words masks which CTA's lanes "
                           "is not stated by PTX 9.7.16.10.9; not modelled (pass all-zero words)")
    N, half = spec.N, spec.N // 2
    b_parts = []
    for v in (0, 1):
        cb = (lambda ad, _v=v: on_smem_read(_v, "B", ad)) if on_smem_read else None
        b_parts.append(gather_smem_operand(smems[v], b_desc, half, spec.b_fmt, spec.kind, spec.b_major, on_read=cb))
    b = np.concatenate(b_parts, axis=0)
    assert b.shape[0] == N
    half_spec = dataclasses.replace(spec, M=spec.M // 2, cta_group=1)
    out = []
    for v in (0, 1):
        cb = (lambda what, ad, _v=v: on_smem_read(_v, what, ad)) if on_smem_read else None
        out.append(run_mma(half_spec, smems[v], tmem_datas[v], d_taddr=d_taddr, b_desc=b_desc, a_desc=a_desc,
                           a_taddr=a_taddr, sfa_taddr=sfa_taddr, sfb_taddr=sfb_taddr, enable_input_d=enable_input_d,
                           arith=arith, on_smem_read=cb, b_codes=b))
    return out
