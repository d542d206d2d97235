"""tcgen05.mma operand fetch and execution as a pure function over numpy arrays (cta_group::1, dense).

The CTA-pair form (cta_group::2) is tcgen05_mma_pair.py, built on :func:`run_mma`.

PTX ISA 9.7.16.10 (tcgen05.mma), 9.7.16.10.4 (packing formats), 9.7.16.10.5 (data-path layouts D/F),
9.7.16.10.7 (block scaling), 9.7.16.3 (canonical SMEM layouts, via :func:`ptxlab.desc.smem.smem_operand_addresses`).
Scale-factor TMEM layout (ptx_facts §6, CUTLASS ``UMMA::tmem_sf_frg`` in cute/atom/mma_traits_sm100_frag.hpp):
the SF word of row r is column ``sf_col + r//32`` in lane ``r%32`` of every 32-lane quarter (replicated); byte
``sf_id + j`` holds the SF of K-block j. The arithmetic is :func:`ptxlab.mma.mma` (bit-exact model).

The function never touches emulator state: it returns the D words, where they go, and the TMEM cells it read so the
caller can run hazard checks (:class:`ptxlab.emu.hw.tmem.Tmem`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np
import numpy.typing as npt

__all__ = [
    "KIND_K",
    "MmaSpec",
    "MmaError",
    "MmaResult",
    "spec_from_idesc",
    "operand_codes_from_bytes",
    "gather_smem_operand",
    "d_lanes",
    "sf_codes",
    "run_mma",
]

U8 = npt.NDArray[np.uint8]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]

#: Dense K per instruction (PTX Table 39 / ptx_facts §6). Every kind reads 32 bytes of K per row.
KIND_K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}
SCALED = {"mxf8f6f4", "mxf4", "mxf4nvf4"}
_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4, "u8": 8, "s8": 8}


class MmaError(ValueError):
    """An illegal or unsupported MMA configuration (the handler adds the PTX location)."""


@dataclass(frozen=True)
class MmaSpec:
    """Everything the instruction descriptor and qualifiers say about one tcgen05.mma."""

    kind: str
    M: int
    N: int
    a_fmt: str
    b_fmt: str
    d_fmt: str  # "f32" | "f16" | "s32"
    a_major: str = "K"
    b_major: str = "K"
    negate_a: bool = False
    negate_b: bool = False
    saturate: bool = False
    block: Optional[int] = None  # scale block size along K (16 / 32) for scaled kinds
    scale_fmt: Optional[str] = None  # "ue4m3" | "ue8m0"
    sfa_id: int = 0
    sfb_id: int = 0
    sparse: bool = False
    cta_group: int = 1  # 2: one MMA over a CTA pair (tcgen05_mma_pair.py)

    @property
    def K(self) -> int:
        return KIND_K[self.kind]

    def validate(self) -> None:
        """Shape/type rules of PTX Table 39 / Table 51 / Table 57 (dense; cta_group::1 or ::2)."""
        if self.kind not in KIND_K:
            raise MmaError(f"unknown MMA kind {self.kind!r}")
        if self.sparse:
            raise MmaError("tcgen05.mma.sp (sparse A) is not supported by the emulator")
        if self.cta_group == 2:
            if self.M not in (128, 256):
                raise MmaError(f"kind::{self.kind} with cta_group::2 needs M in (128, 256), idesc gives M={self.M} "
                               "(PTX Table 39)")
            if self.N % 16 or not 16 <= self.N <= 256:
                raise MmaError(f"N={self.N} is illegal for cta_group::2: N must be a multiple of 16 in [16, 256] "
                               "(PTX Table 39)")
            if self.kind == "i8" and (self.N % 32):
                raise MmaError(f"N={self.N} is illegal for kind::i8 cta_group::2: N must be a multiple of 32 "
                               "(PTX Table 39)")
        else:
            legal_m = (128,) if self.kind in SCALED else (64, 128)
            if self.M not in legal_m:
                raise MmaError(f"kind::{self.kind} with cta_group::1 needs M in {legal_m}, idesc gives M={self.M} "
                               "(PTX Table 39; block-scaled kinds are M=128 only)")
            if self.N % 8 or not 8 <= self.N <= 256:
                raise MmaError(f"N={self.N} is illegal for cta_group::1: N must be a multiple of 8 in [8, 256] "
                               "(PTX Table 39)")
        if self.kind in SCALED:
            blocks = self.K // (self.block or 0) if self.block else 0
            if self.block not in (16, 32) or not blocks:
                raise MmaError(f"kind::{self.kind} needs a scale vector size (.block16/.block32/.scale_vec::NX)")
            if self.kind == "mxf4nvf4" and self.scale_fmt == "ue4m3" and self.block != 16:
                raise MmaError("kind::mxf4nvf4 with UE4M3 scales needs .block16 (= .scale_vec::4X) (PTX Table 57)")
            if self.kind in ("mxf4", "mxf8f6f4") and (self.scale_fmt != "ue8m0" or self.block != 32):
                raise MmaError(f"kind::{self.kind} needs UE8M0 scales and .block32 (PTX Table 57)")
            sid_ok = {1: (0, 1, 2, 3), 2: (0, 2), 4: (0,)}[blocks]
            for nm, sid in (("SFA", self.sfa_id), ("SFB", self.sfb_id)):
                if sid not in sid_ok:
                    raise MmaError(f"{nm} ID {sid} is illegal with {blocks} scale(s) per row per MMA: allowed {sid_ok} "
                                   "(PTX 9.7.16.10.7.3; idesc bits 4-5 / 29-30)")
            if self.kind in ("mxf4", "mxf4nvf4") and (self.a_major != "K" or self.b_major != "K"):
                raise MmaError(f"kind::{self.kind} supports K-major A and B only (idesc transpose bits must be 0, PTX Table 51)")
        for nm, f in (("A", self.a_fmt), ("B", self.b_fmt)):
            if f not in _BITS:
                raise MmaError(f"{nm} format {f!r} unknown")
        if self.negate_a or self.negate_b:
            if self.kind == "i8":
                raise MmaError("negate A/B is not allowed for kind::i8 (PTX Table 42)")


@dataclass
class MmaResult:
    """D words ``d`` (M, N) uint32 to write at (``lanes``[m], ``d_col`` + n), minus disabled lanes (``lane_mask``)."""

    d: U32
    lanes: I64
    cols: I64
    lane_mask: npt.NDArray[np.bool_]
    tmem_reads: list[tuple[str, I64, I64]] = field(default_factory=list)  # (what, lanes, cols) for hazard checks


def spec_from_idesc(kind: str, idesc: int, *, block: Optional[int] = None, cta_group: int = 1) -> MmaSpec:
    """Decode the 32-bit instruction descriptor (ptxlab.desc.idesc, PTX 9.7.16.4.2) into an :class:`MmaSpec`.

    ``block`` is the scale-vector block size from the instruction qualifier (not in idesc). Raises MmaError listing
    every broken idesc rule; .ws max-shift and K=96 (sm_103a) are rejected."""
    from ptxlab.desc.fields import DescError
    from ptxlab.desc.idesc import decode_idesc

    try:
        info = decode_idesc(kind, idesc, block=block, cta_group=cta_group)
    except DescError as exc:
        raise MmaError(f"instruction descriptor {int(idesc) & 0xFFFFFFFF:#010x} for kind::{kind}: {exc}") from exc
    if info.max_shift:
        raise MmaError(f"idesc max_shift={info.max_shift} (.ws B reuse) is not supported (tcgen05.mma.ws is not modelled)")
    if info.k != KIND_K[kind] and not info.sparse:
        raise MmaError(f"idesc K={info.k} (k_size bit 31) is sm_103a only; not supported on sm_100a")
    return MmaSpec(kind=kind, M=info.m, N=info.n, a_fmt=info.a_fmt.lower(), b_fmt=info.b_fmt.lower(),
                   d_fmt=info.d_fmt.lower(), a_major=info.a_major, b_major=info.b_major,
                   negate_a=bool(info.negate_a), negate_b=bool(info.negate_b), saturate=bool(info.saturate),
                   block=block, scale_fmt=info.scale_fmt.lower() if info.scale_fmt else None,
                   sfa_id=info.sfa_id, sfb_id=info.sfb_id, sparse=bool(info.sparse), cta_group=cta_group)


# ------------------------------------------------------------------------------------------------ operands
def operand_codes_from_bytes(b: npt.ArrayLike, fmt: str, kind: str) -> npt.NDArray[Any]:
    """K-major row bytes (rows, 32) -> element codes (rows, K) for ``fmt`` (little-endian words, low nibble first).

    dtypes follow ptxlab.mma: uint8 (8/4-bit), uint16 (f16/bf16), uint32 (tf32 container)."""
    b = np.ascontiguousarray(np.asarray(b, np.uint8))
    bits = _BITS[fmt]
    if bits == 4:
        if kind not in ("mxf4", "mxf4nvf4"):
            # kind::f8f6f4 / mxf8f6f4: 4-bit values in the padded SMEM format (PTX 9.7.16.10.4.3, the .b4x16_p64
            # unit of 5.5.1.1 that TMA's 16U4_ALIGN16B writes): each 16-byte unit = 16 values packed in its first
            # 8 bytes, then 8 bytes of padding; K = 32 values per 32-byte row.  Value order inside the 8 bytes
            # (figures only in the PTX ISA): element 2i in the low nibble of byte i, as in the packed format.
            # Evidence: CUTLASS example 72c (MXFP8 x MXFP4, shipped as verified on B200) packs B low nibble first
            # on the host, loads it with 16U4_ALIGN16B and compares with its host reference; it is bit-exact on the
            # emulator with this order and not with the other (tests/cutlass).  ptx_docs/tcgen05.md.
            if b.shape[-1] % 16:
                raise MmaError(f"padded 4-bit {fmt} rows must be whole 16-byte units (got {b.shape[-1]} bytes)")
            data = b.reshape(b.shape[:-1] + (b.shape[-1] // 16, 16))[..., :8]
            return operand_codes_from_bytes(data.reshape(b.shape[:-1] + (b.shape[-1] // 2,)), fmt, "mxf4")
        codes = np.empty(b.shape[:-1] + (b.shape[-1] * 2,), np.uint8)
        codes[..., 0::2] = b & 0xF  # element 2i in the low nibble (9.7.16.10.4.6 "two 4-bit elements in a byte")
        codes[..., 1::2] = b >> 4
        return codes
    if bits == 6:
        raise MmaError(f"6-bit {fmt} operands use the padded format of PTX 9.7.16.10.4.3/4 (figures only); not supported")
    if bits == 8:
        return b.copy()
    if bits == 16:
        return b.view("<u2").astype(np.uint16)
    return b.view("<u4").astype(np.uint32)


def gather_smem_operand(smem: U8, desc: int, rows: int, fmt: str, kind: str, major: str = "K",
                        on_read: Optional[Callable[[I64], None]] = None, what: str = "",
                        dim: str = "") -> npt.NDArray[Any]:
    """Element codes (rows, K) of an MMA operand read from SMEM through its 64-bit descriptor.

    ``on_read(addr)`` (optional) sees the SMEM byte addresses before they are read (the emulator's proxy check).
    ``what`` ("A" / "B") and ``dim`` ("M" / "N": where ``rows`` comes from) name the operand in fault reports."""
    from ptxlab.desc.smem import smem_operand_addresses

    K = KIND_K[kind]
    if major == "K":
        addr = smem_operand_addresses(desc, rows, 32, major="K")
        _check_smem_range(addr, smem, desc, what, rows, dim, major)
        if on_read is not None:
            on_read(addr)
        return operand_codes_from_bytes(smem[addr], fmt, kind)
    if _BITS[fmt] < 8:
        raise MmaError(f"MN-major {fmt} operands are not supported (sub-byte MN-major layouts are figure-only)")
    eb = _BITS[fmt] // 8
    addr = smem_operand_addresses(desc, rows * eb, K, major="MN")  # (mn_bytes, k)
    _check_smem_range(addr, smem, desc, what, rows, dim, major)
    if on_read is not None:
        on_read(addr)
    by = smem[addr].reshape(rows, eb, K).transpose(0, 2, 1)  # (rows, K, eb)
    return operand_codes_from_bytes(by.reshape(rows, K * eb), fmt, kind)


def _check_smem_range(addr: I64, smem: U8, desc: int, what: str = "", rows: int = 0, dim: str = "",
                      major: str = "K") -> None:
    if addr.min() < 0 or addr.max() >= smem.size:
        from ptxlab.desc.smem import SmemDesc

        d = SmemDesc.decode(desc, major=major)
        fields = (f"start {d['start_address']:#x}, LBO {d['lbo']} B, SBO {d['sbo']} B, "
                  f"swizzle {d.swizzle_name}, {major}-major")
        op = f"{what} operand: " if what else ""
        span = f" for {rows} rows ({dim}={rows} from the instruction descriptor)" if dim else ""
        blame = (f"either the instruction descriptor's {dim} is larger than the {what} tile in shared memory, or the "
                 f"{what} descriptor's start address / SBO / LBO is wrong (`python lab.py desc smem {desc:#x} "
                 f"--rows 16`; `lab.py desc idesc --kind ... IDESC` shows {dim})" if dim else
                 "check start address / SBO / LBO")
        raise MmaError(f"{op}SMEM descriptor {desc:#018x} ({fields}) read{span} reaches byte {int(addr.max())}, "
                       f"beyond the CTA's {smem.size} B of shared memory; {blame}")


def d_lanes(M: int, lane0: int) -> I64:
    """TMEM lane of each D row: M=128 Layout D -> lane m; M=64 Layout F (CUTLASS tmem_frg M=64) ->
    lane0 + m%16 + 32*(m//16), lane0 in {0, 16} (half data path, PTX 9.7.16.10.5)."""
    m = np.arange(M, dtype=np.int64)
    if M == 128:
        if lane0 != 0:
            raise MmaError(f"M=128 D/A TMEM address must have lane 0 (Layout D), got lane {lane0}")
        return m
    if M == 64:
        if lane0 not in (0, 16):
            raise MmaError(f"M=64 (Layout F) TMEM address lane must be 0 or 16, got {lane0} (PTX 9.7.16.10.5)")
        return lane0 + m % 16 + 32 * (m // 16)
    raise MmaError(f"M={M} is not supported with cta_group::1")


def sf_codes(tmem_data: U32, lane0: int, col0: int, rows: int, nblocks: int, sf_id: int, what: str) -> tuple[U8, I64, I64]:
    """SF codes (rows, nblocks) from TMEM, checking the 4-quarter replication (PTX 9.7.16.10.7.2).

    Returns (codes, lanes_read, cols_read)."""
    if lane0 != 0:
        raise MmaError(f"{what} TMEM address has lane {lane0}; the scale-factor layout starts at lane 0 (ptx_facts §6)")
    r = np.arange(rows, dtype=np.int64)
    cols = col0 + r // 32
    if cols.max() >= tmem_data.shape[1]:
        raise MmaError(f"{what} columns {col0}..{int(cols.max())} run past TMEM column 511")
    lanes4 = (r % 32)[:, None] + 32 * np.arange(4)[None, :]
    words = tmem_data[lanes4, cols[:, None]]  # (rows, 4)
    bad = np.nonzero((words != words[:, :1]).any(axis=1))[0]
    if bad.size:
        rr = int(bad[0])
        raise MmaError(
            f"{what} for row {rr} differs between the four 32-lane quarters (lanes {lanes4[rr].tolist()}, column "
            f"{int(cols[rr])}: {[hex(int(x)) for x in words[rr]]}); scale factors must be duplicated into all four "
            "subpartitions (PTX 9.7.16.10.7.2): copy them with tcgen05.cp .32x128b.warpx4")
    w = words[:, 0].astype(np.int64)
    j = np.arange(nblocks, dtype=np.int64)[None, :]
    codes = ((w[:, None] >> (8 * (sf_id + j))) & 0xFF).astype(np.uint8)
    return codes, lanes4.ravel(), np.repeat(cols, 4)


def run_mma(
    spec: MmaSpec,
    smem: U8,
    tmem_data: U32,
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
    on_smem_read: Optional[Callable[[str, I64], None]] = None,
    b_codes: Optional[npt.NDArray[Any]] = None,
) -> MmaResult:
    """Execute one tcgen05.mma.cta_group::1 over plain arrays. TMEM addresses are (lane, column) pairs.

    ``on_smem_read(what, addr)`` (optional; what = "A" / "B") sees each SMEM operand's byte addresses before the read.
    ``b_codes`` (N, K) replaces the B fetch (the CTA-pair MMA gathers B from both CTAs, tcgen05_mma_pair.py)."""
    if spec.cta_group != 1:
        raise MmaError("run_mma models cta_group::1; a cta_group::2 MMA runs through tcgen05_mma_pair.run_mma_pair")
    spec.validate()
    M, N, K = spec.M, spec.N, spec.K
    reads: list[tuple[str, I64, I64]] = []
    lanes = d_lanes(M, d_taddr[0])
    dcols = d_taddr[1] + np.arange(N, dtype=np.int64)
    if dcols.max() >= tmem_data.shape[1]:
        raise MmaError(f"D (accumulator) operand: columns {d_taddr[1]}..{int(dcols.max())} (the D TMEM address's column "
                       f"{d_taddr[1]} + N={N} from the instruction descriptor) run past TMEM column 511; check the "
                       "instruction descriptor's N or the D address")
    if (a_desc is None) == (a_taddr is None):
        raise MmaError("exactly one of a_desc / a_taddr must be given")
    if a_desc is not None:
        a = gather_smem_operand(smem, a_desc, M, spec.a_fmt, spec.kind, spec.a_major,
                                on_read=(lambda ad: on_smem_read("A", ad)) if on_smem_read else None, what="A",
                                dim="M")
    else:
        assert a_taddr is not None
        if spec.kind in ("mxf4", "mxf4nvf4"):
            raise MmaError("A from TMEM for kind::mxf4/mxf4nvf4 uses the packing of PTX 9.7.16.10.4.5 (figure 204 only, "
                           "nibble order unsettled); not supported: keep A in SMEM")
        if _BITS[spec.a_fmt] < 8:
            raise MmaError(f"A from TMEM with {spec.a_fmt} values for kind::{spec.kind}: the TMEM packing of 4/6-bit "
                           "values (PTX 9.7.16.10.4.5, figures only) is not settled; not supported: keep A in SMEM")
        alanes = d_lanes(M, a_taddr[0])
        acols = a_taddr[1] + np.arange(8, dtype=np.int64)  # 32 bytes of K per row = 8 words
        gl, gc = np.meshgrid(alanes, acols, indexing="ij")
        reads.append(("A operand", gl.ravel(), gc.ravel()))
        by = np.ascontiguousarray(tmem_data[gl, gc].astype("<u4")).view(np.uint8).reshape(M, 32)
        a = operand_codes_from_bytes(by, spec.a_fmt, spec.kind)
    if b_codes is not None:
        b = b_codes
    else:
        b = gather_smem_operand(smem, b_desc, N, spec.b_fmt, spec.kind, spec.b_major,
                                on_read=(lambda ad: on_smem_read("B", ad)) if on_smem_read else None, what="B",
                                dim="N")

    kw: dict[str, Any] = dict(a_fmt=spec.a_fmt, b_fmt=spec.b_fmt, d_fmt=spec.d_fmt, negate_a=spec.negate_a,
                              negate_b=spec.negate_b, saturate=spec.saturate)
    if spec.kind in SCALED:
        if sfa_taddr is None or sfb_taddr is None:
            raise MmaError(f"kind::{spec.kind}.block_scale needs [scale-A-tmem] and [scale-B-tmem]")
        nb = K // int(spec.block or 1)
        sfa, l1, c1 = sf_codes(tmem_data, sfa_taddr[0], sfa_taddr[1], M, nb, spec.sfa_id, "scale-A")
        sfb, l2, c2 = sf_codes(tmem_data, sfb_taddr[0], sfb_taddr[1], N, nb, spec.sfb_id, "scale-B")
        reads += [("scale-A", l1, c1), ("scale-B", l2, c2)]
        kw.update(sfa=sfa, sfb=sfb, scale_fmt=spec.scale_fmt, block=spec.block)
    gl, gc = np.meshgrid(lanes, dcols, indexing="ij")
    c = None
    if enable_input_d:
        reads.append(("accumulator D", gl.ravel(), gc.ravel()))
        c = tmem_data[gl, gc].astype(np.uint32)
    if arith is None:
        from ptxlab.mma import mma as arith
    d = np.asarray(arith(spec.kind, a, b, c=c, **kw), dtype=np.uint32)
    if d.shape != (M, N):
        raise MmaError(f"arithmetic returned shape {d.shape}, expected {(M, N)}")
    mask = np.ones(M, bool)
    if disable_output_lane is not None:
        dol = [int(x) & 0xFFFFFFFF for x in np.asarray(disable_output_lane).ravel()]
        if len(dol) != 4:
            raise MmaError(f"disable-output-lane must have 4 elements for cta_group::1, got {len(dol)} (PTX 9.7.16.10.9)")
        bits = np.array([(dol[l // 32] >> (l % 32)) & 1 for l in range(128)], bool)
        mask = ~bits[lanes]
    return MmaResult(d, lanes, dcols, mask, reads)
