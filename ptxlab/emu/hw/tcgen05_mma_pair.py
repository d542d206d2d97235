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

M = 128 with cta_group::2 (Layout B, dense: a 2x2 data path; PTX figures 207-208 only) follows CUTLASS's
``tmem_frg`` for N_SM = 2, M_MMA = 64 (atom ``(64,(N/2,2)):(1,(128 cols,64 lanes))``, cross-checked by evaluating
CuTe's own fragment layout on the emulator, tests/test_emu_tcgen05_pair.py): CTA v holds A rows 64v .. 64v+63 and,
as for M = 256, B rows (N/2)v ..; D[64v + m][n] lands in CTA v's lane m + 64*(n >= N/2), column d + n % (N/2).

Not modelled (MmaError): block-scaled kinds with M = 128 (the 2x2 scale-factor layout, CUTLASS
``ScaleFactorDuplicated2by2``), A from TMEM with M = 128 (CUTLASS ``TmemAllocMode::Duplicated``), disable-output-lane
bits (the 8-word vector's lane order over the pair is not stated), sparse A (Layout C).
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
        b_parts.append(gather_smem_operand(smems[v], b_desc, half, spec.b_fmt, spec.kind, spec.b_major, on_read=cb,
                                           what="B", dim="N/2"))
    b = np.concatenate(b_parts, axis=0)
    assert b.shape[0] == N
    if spec.M == 128:
        return [_layout_b(spec, smems[v], tmem_datas[v], b, d_taddr=d_taddr, a_desc=a_desc, a_taddr=a_taddr,
                          enable_input_d=enable_input_d, arith=arith,
                          on_read=(lambda ad, _v=v: on_smem_read(_v, "A", ad)) if on_smem_read else None)
                for v in (0, 1)]
    half_spec = dataclasses.replace(spec, M=spec.M // 2, cta_group=1)
    out = []
    for v in (0, 1):
        cb = (lambda what, ad, _v=v: on_smem_read(_v, what, ad)) if on_smem_read else None
        out.append(run_mma(half_spec, smems[v], tmem_datas[v], d_taddr=d_taddr, b_desc=b_desc, a_desc=a_desc,
                           a_taddr=a_taddr, sfa_taddr=sfa_taddr, sfb_taddr=sfb_taddr, enable_input_d=enable_input_d,
                           arith=arith, on_smem_read=cb, b_codes=b))
    return out


def _layout_b(spec: MmaSpec, smem: U8, tmem_data: U32, b: npt.NDArray[Any], *, d_taddr: tuple[int, int],
              a_desc: Optional[int], a_taddr: Optional[tuple[int, int]], enable_input_d: bool,
              arith: Optional[Callable[..., U32]], on_read: Optional[Callable[[I64], None]]) -> MmaResult:
    """One CTA's half of an M = 128 cta_group::2 MMA (Layout B): its 64 rows x N, stored as (128 lanes, N/2 cols)."""
    from .tcgen05_mma import SCALED

    if spec.kind in SCALED:
        raise MmaError(f"kind::{spec.kind} with M=128 and cta_group::2 uses the 2x2 scale-factor layout (CUTLASS "
                       "ScaleFactorDuplicated2by2, PTX figures only); not modelled: use M=256")
    if a_desc is None:
        raise MmaError("A from TMEM with M=128 and cta_group::2 (CUTLASS TmemAllocMode::Duplicated, PTX figures only) "
                       "is not modelled: keep A in SMEM")
    N, half = spec.N, spec.N // 2
    if d_taddr[0] != 0:
        raise MmaError(f"M=128 cta_group::2 D TMEM address must have lane 0 (Layout B), got lane {d_taddr[0]}")
    lanes = np.arange(128, dtype=np.int64)
    cols = d_taddr[1] + np.arange(half, dtype=np.int64)
    if cols.max() >= tmem_data.shape[1]:
        raise MmaError(f"D columns {d_taddr[1]}..{int(cols.max())} run past TMEM column 511")
    a = gather_smem_operand(smem, a_desc, 64, spec.a_fmt, spec.kind, spec.a_major, on_read=on_read, what="A", dim="M/2")
    gl, gc = np.meshgrid(lanes, cols, indexing="ij")
    reads: list[tuple[str, I64, I64]] = []
    c = None
    if enable_input_d:
        reads.append(("accumulator D", gl.ravel(), gc.ravel()))
        t = tmem_data[gl, gc].astype(np.uint32)            # (128, N/2): lane m + 64h, col j = D[m][h*N/2 + j]
        c = np.concatenate([t[:64], t[64:]], axis=1)
    if arith is None:
        from ptxlab.mma import mma as arith
    d = np.asarray(arith(spec.kind, a, b, c=c, a_fmt=spec.a_fmt, b_fmt=spec.b_fmt, d_fmt=spec.d_fmt,
                         negate_a=spec.negate_a, negate_b=spec.negate_b, saturate=spec.saturate), dtype=np.uint32)
    if d.shape != (64, N):
        raise MmaError(f"arithmetic returned shape {d.shape}, expected {(64, N)}")
    d2 = np.concatenate([d[:, :half], d[:, half:]], axis=0)  # (128, N/2)
    return MmaResult(d2, lanes, cols, np.ones(128, bool), reads)
