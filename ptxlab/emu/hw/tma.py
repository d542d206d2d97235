"""Pure model of TMA tensor copies (cp.async.bulk.tensor, tile mode) and non-tensor bulk copies (cp.async.bulk).

PTX ISA sections: 5.5.3 (bounding box, traversal stride, out-of-bound access), 5.5.1.1 (sub-byte types and their
padding), 5.5.7 (swizzle), 9.7.9.25.4.1 (cp.async.bulk), 9.7.9.25.5 (cp.async.bulk.tensor and its restrictions).

Load (global -> shared): the box is read element by element at coordinates ``coords[d] + i * element_strides[d]``
(dims >= 1; dim 0 ignores its element stride without interleave), ``ceil(box[d] / element_strides[d])`` elements per
dim, written to shared memory with dim 0 innermost (rows dense, or one swizzle span apart when the inner box is narrower
than the span: H100-measured, see NARROW_CONFIRMED; such a box must be a multiple of 32 B), then every byte address is
permuted by the swizzle of the absolute shared address (ptxlab.emu.hw.swizzle). Out-of-bound elements are filled with
zeros, or with the OOB-NaN pattern for oob_fill='nan' (H100-measured for every float type, see OOB_NAN_BITS).
In-bound elements are copied unchanged, except TFLOAT32 / TFLOAT32_FTZ, which the H100 rounds to TF32 on the way
(LOAD_CONVERT, tf32_round). ALIGN16B types leave their gap bytes unwritten (PTX 5.5.1.1: "The padded region that gets
added is un-initialized").

Store (shared -> global): the inverse walk, same row pitch; out-of-bound elements are not written. TFLOAT32 stores
raise TmaUnconfirmed (loads convert; whether stores do is not measured).

complete_tx byte count of a load: the full box size in shared memory, also for partially and fully out-of-bound
boxes. No PTX sentence states it (ptx_facts §9, UNCONFIRMED #10); CUTLASS and DeepGEMM rely on it (they always
expect_tx the full box). SETTLED on an H100 (2026-11-22, driver 580.159.04, tests/fidelity/tma probe 'tx', deferred
arrival): in all 7 groups (swizzle none/128B, UINT8/FLOAT16, box OOB low, high and entirely out of bounds) only
expect_tx = full box bytes completed the phase; expect_tx = in-bound bytes and full - 16 did not. Recorded in
tests/fidelity/tma/data/h100_20261122_run2.npz, replayed by tests/emu/hw/test_tma_model.py::test_h100_run2_tx_*.
Narrow swizzled boxes count inner bytes x rows, without the row padding: measured too (H100 TMA kit run 3,
2026-11-22, probe 'txnarrow': 128B x 64 B, 128B x 32 B, 64B x 32 B, only expect_tx = unpadded box bytes completed;
tests/fidelity/tma/data/h100_20261122_run3.npz). Not measured: the packed ALIGN16B types, which count their packed
data bytes (gaps not counted: CUTLASS's transaction-byte arithmetic, see complete_tx_bytes); the H100 rejects the
packed tensor maps, so those stay model-only.

Everything returns address/value arrays instead of touching memory, so the emulator applies them at completion time.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from ptxlab.emu.hw.swizzle import SwizzleError, check_dst_alignment, swizzle_addr, swizzle_span
from ptxlab.errors import EmuError
from ptxlab.tensormap import TensorMapSpec

__all__ = [
    "TmaError",
    "TmaUnconfirmed",
    "OOB_NAN_BITS",
    "LOAD_CONVERT",
    "tf32_round",
    "BULK_GRANULE",
    "TMA_SMEM_ALIGN",
    "REQUIRE_NATURAL_SWIZZLE_ALIGNMENT",
    "BoxGeometry",
    "box_geometry",
    "complete_tx_bytes",
    "load_box_image",
    "place_image",
    "TmaLoadPlan",
    "plan_tensor_load",
    "validate_load",
    "TmaStorePlan",
    "plan_tensor_store",
    "check_bulk_copy",
]

GlobalReader = Callable[[int, int], Union[bytes, bytearray, memoryview, npt.NDArray[np.uint8]]]
# rows_reader(addrs (R,), nbytes) -> (R, nbytes) uint8, or None when an address is outside the readable memory
RowsReader = Callable[[npt.NDArray[np.int64], int], Optional[npt.NDArray[np.uint8]]]


def heap_rows(buf: npt.NDArray[np.uint8], base: int) -> RowsReader:
    """A RowsReader over a byte array whose element 0 has address ``base`` (the emulator's global heap)."""
    def read(addrs, nbytes):
        off = np.asarray(addrs, np.int64) - int(base)
        if off.size and (int(off.min()) < 0 or int(off.max()) + nbytes > buf.size):
            return None
        return buf[off[:, None] + np.arange(nbytes, dtype=np.int64)]
    return read

# Bytes of global memory per group of 16 packed values, and the shared bytes they occupy (PTX 5.5.1.1).
_PACKED_GROUP = {"16U4_ALIGN8B": (8, 8), "16U4_ALIGN16B": (8, 16), "16U6_ALIGN16B": (12, 16)}

# OOB-NaN fill bit patterns per dtype (PTX 5.5.3.3 names a "special NaN called OOB-NaN" without giving its bits).
# Measured on an H100 (driver 580.159.04, tests/fidelity/tma probe 'nanfill', swizzle 128B, box OOB high in both
# dims): FLOAT16 0x7FF7 (224 of 224 OOB elements) and FLOAT32 0x7FF77FF7 (144 of 144) in run 2; BFLOAT16 0x7FF7 (224),
# FLOAT64 0x7FF77FF77FF77FF7 (72), FLOAT32_FTZ / TFLOAT32 / TFLOAT32_FTZ 0x7FF77FF7 (112 / 80 / 80) in run 3
# (2026-11-22). One 16-bit pattern repeated over the element, whatever the type, and not rounded to TF32 (the
# in-bound TF32 elements are, see LOAD_CONVERT). Replayed by tests/emu/hw/test_tma_model.py::test_h100_run2_nanfill_* /
# test_h100_run3_nanfill_*. None would mean "not measured" (a load needing it raises TmaUnconfirmed).
OOB_NAN_BITS: dict[str, Optional[int]] = {
    "FLOAT16": 0x7FF7, "BFLOAT16": 0x7FF7, "FLOAT32": 0x7FF77FF7, "FLOAT32_FTZ": 0x7FF77FF7,
    "FLOAT64": 0x7FF77FF77FF77FF7, "TFLOAT32": 0x7FF77FF7, "TFLOAT32_FTZ": 0x7FF77FF7,
}


def tf32_round(bits: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    """What an H100 TMA load of a TFLOAT32 / TFLOAT32_FTZ tensor writes for each in-bound FP32 bit pattern (TMA kit
    run 3, probe 'nanfill' special values + random data, 2026-11-22): round to nearest even at mantissa bit 13 (the
    low 13 bits cleared; carries may reach the exponent: 0x007FFFFF -> 0x00800000, 0x7F7FFFFF -> +inf); denormals are
    rounded, not flushed (also for _FTZ: 0x00400000 stays, 0x00000001 -> 0); +-inf unchanged; every NaN (either sign,
    any payload) -> 0x7FFFE000."""
    b = np.asarray(bits, dtype=np.uint32)
    out = ((b.astype(np.uint64) + 0xFFF + ((b >> 13) & 1)) & 0xFFFFE000).astype(np.uint32)
    nan = (b & 0x7F800000) == 0x7F800000
    nan &= (b & 0x007FFFFF) != 0
    inf = (b & 0x7FFFFFFF) == 0x7F800000
    out[inf] = b[inf]
    out[nan] = 0x7FFFE000
    return out


# Data conversion of in-bound elements by a load, per dtype (bytes in, bytes out; absent = raw copy). Measured on an
# H100 (run 3): BFLOAT16, FLOAT64 and FLOAT32_FTZ copy raw (FTZ does not flush denormals on a load); TFLOAT32 and
# TFLOAT32_FTZ round to TF32 (tf32_round), identically.
def _tf32_bytes(data: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    return tf32_round(data.view(np.uint32)).view(np.uint8)


LOAD_CONVERT: dict[str, Callable[[npt.NDArray[np.uint8]], npt.NDArray[np.uint8]]] = {
    "TFLOAT32": _tf32_bytes, "TFLOAT32_FTZ": _tf32_bytes,
}

BULK_GRANULE = 16          # PTX 9.7.9.25.4.1: size multiple of 16, both addresses 16-byte aligned
# TMA shared-memory alignment: 128 B, measured on an H100 on 2026-11-22 (tests/fidelity/tma probe 'align'): shared
# destinations at +16/+32/+64 B off a 1024-B boundary fault with CUDA_ERROR_MISALIGNED_ADDRESS, +128/+256/+512 B are
# accepted for swizzle none/64B/128B (ptx_facts UNCONFIRMED #7 settled).
TMA_SMEM_ALIGN = 128
# Swizzled boxes off their natural 1024/512/256-B boundary: the H100 accepts them and its images match the swizzle of
# the absolute address bit for bit (align/64B|128B/off128|256|512), so the emulator accepts them too. NOTE: a UMMA /
# wgmma smem descriptor reading such a stage then needs base_offset != 0, which ptxlab's descriptor code refuses.
REQUIRE_NATURAL_SWIZZLE_ALIGNMENT = False


class TmaError(EmuError):
    """A tensor or bulk copy broke a PTX / tensor-map rule."""


class TmaUnconfirmed(TmaError):
    """The copy depends on hardware behaviour no source settles; the emulator refuses to guess."""


@dataclass(frozen=True)
class BoxGeometry:
    """Shape of the box image in shared memory (dim 0 innermost, dense)."""

    counts: tuple[int, ...]        # elements traversed per dim: box[0], ceil(box[d] / element_strides[d])
    row_bytes: int                 # shared bytes of one dim-0 row (gaps of ALIGN16B types included)
    total_bytes: int               # row_bytes * rows: the bytes of the box itself (the complete_tx count)
    row_pitch: int = 0             # shared bytes from one row to the next: row_bytes, or the swizzle span for a
                                   # narrow swizzled box (H100-measured, see NARROW_CONFIRMED); 0 = row_bytes

    @property
    def pitch(self) -> int:
        """Distance between consecutive box rows in shared memory."""
        return self.row_pitch or self.row_bytes

    @property
    def footprint(self) -> int:
        """Shared bytes spanned by the box image (padding of narrow swizzled rows included)."""
        return self.pitch * self.rows

    @property
    def rows(self) -> int:
        """Number of dim-0 rows in the box."""
        n = 1
        for c in self.counts[1:]:
            n *= c
        return n


# Inner boxes narrower than the swizzle span (ptx_facts UNCONFIRMED #3), settled on an H100 (2026-11-22, driver
# 580.159.04, two runs of tests/fidelity/tma probe 'narrow'; replayed by tests/emu/hw/test_tma_model.py from
# tests/fidelity/tma/data/):
#   * layout: every box row occupies one full span of shared memory (row pitch = span, the bytes past the inner box are
#     left untouched), and the swizzle is the usual function of the absolute shared address. Stores use the same
#     layout in the other direction (shared row r at src + r * span, swizzled).
#   * legality: a narrow inner box runs iff its byte size is a multiple of NARROW_INNER_GRANULE = 32. Every recorded
#     case agrees: ran 128B x 32/64/96 B and 64B x 32 B; CUDA_ERROR_ILLEGAL_INSTRUCTION at the cp.async.bulk.tensor
#     (cuTensorMapEncodeTiled accepts the map) for 128B x 16/48 B, 64B x 16/48 B and 32B x 16 B. The legal side of the
#     rule is measured completely (32, 64, 96 are all the multiples of 32 below 128), and since TMA kit run 3
#     (2026-11-22) its illegal side too: 128B x 80/112 B faulted as predicted, so for loads every multiple of 16 below
#     the span is measured in all three modes (128B: 16 x 32 v 48 x 64 v 80 x 96 v 112 x; 64B: 16 x 32 v 48 x;
#     32B: 16 x). Stores (run 2 + run 3): ran 128B x 32/64/96 B and 64B x 32 B (every legal narrow store pair),
#     faulted 128B x 48 B and 64B x 16 B, also as predicted. Rejected alternatives: "power of two" (96 ran),
#     "at least 32 B" (48 faulted).
#   * the ATOM sub-modes (128B_ATOM_*) are Blackwell encodings the H100 rejects: narrow boxes there stay unconfirmed.
NARROW_INNER_GRANULE = 32
NARROW_MODES = ("32B", "64B", "128B")
# Measured on the H100 (mode, inner box bytes): loads that ran, narrow stores that ran, loads / stores that faulted.
NARROW_CONFIRMED: frozenset[tuple[str, int]] = frozenset({("128B", 96), ("128B", 64), ("128B", 32), ("64B", 32)})
NARROW_STORE_CONFIRMED: frozenset[tuple[str, int]] = frozenset({("128B", 32), ("128B", 64), ("128B", 96),
                                                                ("64B", 32)})
NARROW_ILLEGAL: frozenset[tuple[str, int]] = frozenset({("32B", 16), ("128B", 16), ("128B", 48), ("128B", 80),
                                                          ("128B", 112), ("64B", 16), ("64B", 48)})
NARROW_STORE_ILLEGAL: frozenset[tuple[str, int]] = frozenset({("128B", 48), ("64B", 16)})


def narrow_inner_legal(swizzle: str, inner_bytes: int) -> bool:
    """The H100 rule for an inner box narrower than the swizzle span of a 32B/64B/128B mode (see NARROW_CONFIRMED)."""
    return inner_bytes % NARROW_INNER_GRANULE == 0


def _narrow(spec: TensorMapSpec) -> bool:
    span = swizzle_span(spec.swizzle)
    return bool(span) and spec.box_inner_bytes < span


def _check_supported(spec: TensorMapSpec, *, store: bool = False) -> None:
    if spec.interleave != "none":
        raise TmaError(f"tensor map interleave={spec.interleave}: interleaved layouts (PTX ISA 5.5.6, NC/8DHWC8) are "
                       "not implemented in the emulator; use interleave='none'")
    if not _narrow(spec):
        return
    span = swizzle_span(spec.swizzle)
    inner = spec.box_inner_bytes
    key = (spec.swizzle, inner)
    if spec.swizzle not in NARROW_MODES:
        raise TmaUnconfirmed(
            f"inner box of {inner} B is narrower than the {spec.swizzle} swizzle span of {span} B: narrow boxes are "
            "measured on an H100 for the 32B/64B/128B modes only (row pitch = span, inner bytes a multiple of 32); "
            f"{spec.swizzle} is a Blackwell encoding the H100 rejects, so its narrow layout is not measured; make "
            f"box[0] * element size == {span} B")
    if not narrow_inner_legal(spec.swizzle, inner):
        what = "store" if store else "load"
        seen = (f"observed for this very pair ({what})" if key in (NARROW_STORE_ILLEGAL if store else NARROW_ILLEGAL)
                else f"predicted by the rule; this pair itself is not measured for a {what}")
        raise TmaError(
            f"inner box of {inner} B with swizzle {spec.swizzle} (span {span} B): an inner box narrower than the span "
            f"must be a multiple of {NARROW_INNER_GRANULE} B. The H100 (sm_90, driver 580.159.04, 2026-11-22) faults "
            "with CUDA_ERROR_ILLEGAL_INSTRUCTION at such a cp.async.bulk.tensor although cuTensorMapEncodeTiled "
            f"accepts the tensor map ({seen}; loads faulted: 128B x 16/48/80/112 B, 64B x 16/48 B, 32B x 16 B; "
            "stores faulted: 128B x 48 B, 64B x 16 B; ran: 128B x 32/64/96 B, 64B x 32 B, loads and stores; "
            "tests/fidelity/tma probe 'narrow'). Use an inner box of "
            f"{', '.join(str(k) for k in range(NARROW_INNER_GRANULE, span + 1, NARROW_INNER_GRANULE))} B")
    if store and key not in NARROW_STORE_CONFIRMED:
        raise TmaUnconfirmed(
            f"TMA store of a {inner}-B inner box with swizzle {spec.swizzle} (narrower than the span): narrow stores "
            f"are measured on an H100 for {sorted(NARROW_STORE_CONFIRMED)} only (row pitch = span, as for loads); "
            "measure this pair with tests/fidelity/tma (probe 'narrow', store cases) or use box[0] * element size "
            "== span")


def box_geometry(spec: TensorMapSpec) -> BoxGeometry:
    """Element counts per dim and shared-memory byte sizes of the box described by ``spec``."""
    counts = (spec.box[0],) + tuple(-(-b // e) for b, e in zip(spec.box[1:], spec.element_strides[1:]))
    row = spec.box_inner_bytes
    total = row
    for c in counts[1:]:
        total *= c
    span = swizzle_span(spec.swizzle)
    pitch = span if span and row < span else row
    return BoxGeometry(counts=counts, row_bytes=row, total_bytes=total, row_pitch=pitch)


def complete_tx_bytes(spec: TensorMapSpec) -> int:
    """Bytes a tile-mode load signals with complete_tx: the full box, OOB included (H100-measured, see module doc).

    For a narrow swizzled box this is inner bytes x rows, the row padding not counted (H100-measured, TMA kit run 3,
    probe 'txnarrow': 128B x 64/32 B and 64B x 32 B).

    The ALIGN16B types (16U4_ALIGN16B, 16U6_ALIGN16B) count their packed data bytes, 8 (12) per 16 values, not the
    16-byte SMEM slots with their gaps.  No PTX or driver text states it and the H100 has no such types (its driver
    rejects the maps); the evidence is CUTLASS: its SM100 block-scaled mainloop
    (sm100_blockscaled_mma_warpspecialized.hpp, ``ABTmaTransactionBytes``) expects
    ``cosize(SmemLayoutB) * sizeof_bits<float_e2m1_unpacksmem_t>`` bits with sizeof_bits = 4 (6 for the 6-bit
    types, cutlass/float_subbyte.h) while its SMEM holds one byte per value, and example 72c (MXFP8 x MXFP4, shipped
    as working on B200) only completes its phases with that count.  ptx_docs/tma.md "complete_tx"."""
    total = box_geometry(spec).total_bytes
    if spec.dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B"):
        data, slot = _PACKED_GROUP[spec.dtype]
        return total // slot * data
    return total


def _check_coords(spec: TensorMapSpec, coords: Sequence[int], *, store: bool) -> tuple[int, ...]:
    c = tuple(int(x) for x in coords)
    if len(c) != spec.rank:
        raise TmaError(f"cp.async.bulk.tensor.{len(c)}d used with a rank-{spec.rank} tensor map; the .dim qualifier "
                       "must equal the tensor map rank (PTX ISA 9.7.9.25.5.2)")
    for i, x in enumerate(c):
        if not -(2**31) <= x < 2**31:
            raise TmaError(f"tensor coordinate {i} = {x} does not fit .s32 (PTX ISA 9.7.9.25.5.2)")
    if store and any(x < 0 for x in c):
        raise TmaError(f"TMA store with coordinates {c}: PTX ISA 9.7.9.25.5.1 requires non-negative starting "
                       "coordinates for the .global.shared::cta direction")
    if spec.dtype == "16U4_ALIGN8B" and c[0] % 2:
        raise TmaUnconfirmed(f"16U4_ALIGN8B load with odd dim-0 coordinate {c[0]}: the box would start mid-byte; "
                             "no source states how TMA handles that; use an even coordinate")
    if not store and spec.elem_bits == 32 and (c[0] * 4) % 16:
        # H100, 2026-11-24 (tests/fidelity/cluster/tma_multicast_probe.py, plain and .multicast::cluster alike,
        # swizzle none and 128B): 4-byte elements at dim-0 coordinates 1, 2, -3 fault with
        # CUDA_ERROR_ILLEGAL_INSTRUCTION; 4, -8, 12, 48, 56 run. The PTX text states no such rule; 1/2/8-byte
        # elements are not measured (ptx_docs/tma.md)
        raise TmaError(f"TMA load with dim-0 coordinate {c[0]} of 4-byte elements: the box starts {c[0] * 4} bytes "
                       f"into the row, not a multiple of 16 -- the H100 faults with CUDA_ERROR_ILLEGAL_INSTRUCTION "
                       f"(measured 2026-11-24, ptx_docs/tma.md); start the box on a 16-byte boundary")
    if spec.dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B") and c[0] % 128:
        raise TmaError(f"{spec.dtype}: the first coordinate {c[0]} must be a multiple of 128 "
                       "(PTX ISA 9.7.9.25.5.1, .b4x16_p64/.b6x16_p32)")
    return c


def _dim0_bytes(spec: TensorMapSpec, n_elems: int) -> tuple[int, int]:
    """(global bytes, shared bytes) of n dim-0 elements starting at a group/byte boundary."""
    if spec.dtype in _PACKED_GROUP:
        g, s = _PACKED_GROUP[spec.dtype]
        if spec.dtype == "16U4_ALIGN8B":
            return n_elems // 2, n_elems // 2
        assert n_elems % 16 == 0
        return n_elems // 16 * g, n_elems // 16 * s
    eb = spec.elem_bits // 8
    return n_elems * eb, n_elems * eb


def _row_table(spec: TensorMapSpec, coords: tuple[int, ...]):
    """The rows of ``_rows`` as arrays, in the same order: (shared row offsets, global row addresses, in-bound
    flags, dim-0 in-bound element range)."""
    geo = box_geometry(spec)
    lo = max(0, -coords[0])
    hi = min(spec.box[0], spec.global_shape[0] - coords[0])
    outer = geo.counts[1:]
    nrows = int(np.prod(outer, dtype=np.int64)) if outer else 1
    soff = np.arange(nrows, dtype=np.int64) * geo.pitch
    gaddr = np.full(nrows, int(spec.global_address), dtype=np.int64)
    ok = np.ones(nrows, dtype=bool)
    if outer:
        idx = [g.reshape(-1) for g in np.indices(tuple(reversed(outer)), dtype=np.int64)][::-1]   # dim 1 fastest
        for k, i in enumerate(idx):
            d = k + 1
            x = int(coords[d]) + i * int(spec.element_strides[d])
            ok &= (x >= 0) & (x < int(spec.global_shape[d]))
            gaddr += x * int(spec.global_strides[d - 1])
    return soff, gaddr, ok, ((lo, hi) if hi > lo else (0, 0))


def _rows(spec: TensorMapSpec, coords: tuple[int, ...]):
    """Yield (shared row offset, global row address or None if the row is OOB, dim-0 in-bound element range)."""
    geo = box_geometry(spec)
    lo = max(0, -coords[0])
    hi = min(spec.box[0], spec.global_shape[0] - coords[0])
    outer_ranges = [range(n) for n in geo.counts[1:]]
    for r, idx in enumerate(itertools.product(*reversed(outer_ranges))):
        idx = tuple(reversed(idx))                     # idx[k] is the traversal index of dim k+1
        gaddr: Optional[int] = spec.global_address
        for k, i in enumerate(idx):
            d = k + 1
            x = coords[d] + i * spec.element_strides[d]
            if not 0 <= x < spec.global_shape[d]:
                gaddr = None
                break
            gaddr += x * spec.global_strides[d - 1]
        yield r * geo.pitch, gaddr, (lo, hi) if hi > lo else (0, 0)


def _fill_pattern(spec: TensorMapSpec, nbytes: int) -> npt.NDArray[np.uint8]:
    if spec.oob_fill == "none":
        return np.zeros(nbytes, dtype=np.uint8)
    bits = OOB_NAN_BITS.get(spec.dtype)
    if bits is None:
        raise TmaUnconfirmed(
            f"oob_fill='nan' on {spec.dtype} with an out-of-bound element: the OOB-NaN bit pattern is not given by "
            "PTX ISA 5.5.3.3; measure it with tests/fidelity/tma (probe 'nanfill') and record it in "
            "ptxlab.emu.hw.tma.OOB_NAN_BITS, or use oob_fill='none'")
    eb = spec.elem_bits // 8
    one = np.frombuffer(int(bits).to_bytes(eb, "little"), dtype=np.uint8)
    return np.tile(one, nbytes // eb)


def _load_rows_at_once(spec: TensorMapSpec, c, geo, img, read_rows: RowsReader) -> bool:
    """load_box_image's row loop for plain element types, with one gather for every in-bound row (same bytes);
    False (img untouched) when ``read_rows`` cannot read them all: the row loop then reports what is wrong."""
    soff, gaddr, ok, (lo, hi) = _row_table(spec, c)
    g_lo, s_lo = _dim0_bytes(spec, lo)
    g_n, s_n = _dim0_bytes(spec, hi - lo)
    rows = ok & (hi > lo)
    data = read_rows(gaddr[rows] + (_dim0_bytes(spec, c[0])[0] + g_lo), g_n) if rows.any() else None
    if rows.any() and data is None:
        return False
    if not rows.all() or lo > 0 or s_lo + s_n < geo.row_bytes:     # out-of-bound elements: the fill pattern
        pat = _fill_pattern(spec, geo.row_bytes)
        img[(soff[:, None] + np.arange(geo.row_bytes, dtype=np.int64)).reshape(-1)] = np.tile(pat, soff.size)
    if data is not None:
        img[((soff[rows] + s_lo)[:, None] + np.arange(g_n, dtype=np.int64)).reshape(-1)] = data.reshape(-1)
    return True


def load_box_image(spec: TensorMapSpec, coords: Sequence[int], read_global: GlobalReader,
                   read_rows: Optional[RowsReader] = None) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    """Dense (unswizzled) shared image of a tile-mode load and the mask of bytes TMA writes (gaps excluded).

    ``read_global(addr, nbytes)`` returns the bytes of global memory at ``addr``; it is called once per in-bound row.
    ``read_rows`` (optional, heap_rows) reads every row in one gather instead, for the plain element types.
    """
    _check_supported(spec)
    c = _check_coords(spec, coords, store=False)
    geo = box_geometry(spec)
    img = np.full(geo.footprint, 0xCD, dtype=np.uint8)     # sentinel: every written byte is set explicitly
    written = np.zeros(geo.footprint, dtype=np.bool_)
    for r in range(geo.rows):                                 # row padding of narrow swizzled boxes stays untouched
        written[r * geo.pitch:r * geo.pitch + geo.row_bytes] = True
    packed16 = spec.dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B")
    if read_rows is not None and not packed16 and spec.dtype not in LOAD_CONVERT and \
            _load_rows_at_once(spec, c, geo, img, read_rows):
        return img, written
    for soff, gaddr, (lo, hi) in _rows(spec, c):
        row = img[soff:soff + geo.row_bytes]
        if gaddr is None or hi <= lo:
            row[:] = _fill_pattern(spec, geo.row_bytes) if not packed16 else 0
            if packed16:
                _mask_gaps(spec, written[soff:soff + geo.row_bytes])
            continue
        g_lo, s_lo = _dim0_bytes(spec, lo)
        g_n, s_n = _dim0_bytes(spec, hi - lo)
        data = np.frombuffer(bytes(read_global(gaddr + _dim0_bytes(spec, c[0])[0] + g_lo, g_n)), dtype=np.uint8)
        if data.size != g_n:
            raise TmaError(f"global reader returned {data.size} bytes for a {g_n}-byte row at 0x{gaddr + g_lo:x}")
        if packed16:
            g, s = _PACKED_GROUP[spec.dtype]
            row[s_lo:s_lo + s_n].reshape(-1, s)[:, :g] = data.reshape(-1, g)
            _mask_gaps(spec, written[soff:soff + geo.row_bytes])
        else:
            conv = LOAD_CONVERT.get(spec.dtype)
            row[s_lo:s_lo + s_n] = data if conv is None else conv(data.copy())
            if lo > 0:
                row[:s_lo] = _fill_pattern(spec, s_lo)
            s_hi = s_lo + s_n
            if s_hi < geo.row_bytes:
                row[s_hi:] = _fill_pattern(spec, geo.row_bytes - s_hi)
    return img, written


def _mask_gaps(spec: TensorMapSpec, mask_row: npt.NDArray[np.bool_]) -> None:
    g, s = _PACKED_GROUP[spec.dtype]
    mask_row.reshape(-1, s)[:, g:] = False


def place_image(swizzle: str, dst: int, image: npt.NDArray[np.uint8],
                written: Optional[npt.NDArray[np.bool_]] = None) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """Absolute shared addresses (swizzled) and byte values to write for a dense image placed at ``dst``."""
    off = np.arange(image.size, dtype=np.int64)
    if written is not None:
        off = off[written]
    return swizzle_addr(swizzle, off + int(dst)), image[off]


def _check_smem(spec: TensorMapSpec, addr: int, what: str) -> None:
    try:
        check_dst_alignment(spec.swizzle, addr, what=what, tensor_min_align=TMA_SMEM_ALIGN,
                            require_natural=REQUIRE_NATURAL_SWIZZLE_ALIGNMENT)
    except SwizzleError as exc:
        raise TmaError(str(exc.message)) from exc


@dataclass(frozen=True)
class TmaLoadPlan:
    """Shared-memory writes of one tile-mode load, and its complete_tx byte count."""

    smem_addrs: npt.NDArray[np.int64]
    values: npt.NDArray[np.uint8]
    tx_bytes: int
    box_bytes: int


def validate_load(spec: TensorMapSpec, coords: Sequence[int], dst: int) -> None:
    """Issue-time checks of a tile-mode load (supported features, shared alignment, coordinates); raises TmaError."""
    _check_supported(spec)
    _check_smem(spec, dst, "cp.async.bulk.tensor shared destination")
    _check_coords(spec, coords, store=False)


def plan_tensor_load(spec: TensorMapSpec, coords: Sequence[int], dst: int, read_global: GlobalReader,
                     read_rows: Optional[RowsReader] = None) -> TmaLoadPlan:
    """Everything a cp.async.bulk.tensor load does: image, swizzled placement at ``dst``, tx byte count."""
    _check_supported(spec)
    _check_smem(spec, dst, "cp.async.bulk.tensor shared destination")
    img, written = load_box_image(spec, coords, read_global, read_rows)
    off, addrs = _placement(spec.swizzle, int(dst), written.tobytes())
    return TmaLoadPlan(smem_addrs=addrs, values=img[off], tx_bytes=complete_tx_bytes(spec), box_bytes=img.size)


@functools.lru_cache(maxsize=1024)
def _placement(swizzle: str, dst: int, written: bytes):
    """(image offsets, swizzled shared addresses) of place_image, cached: a kernel lands the same boxes at the same
    addresses again and again.  The arrays are read-only."""
    off = np.flatnonzero(np.frombuffer(written, dtype=np.bool_)).astype(np.int64)
    addrs = swizzle_addr(swizzle, off + dst)
    off.flags.writeable = False
    addrs.flags.writeable = False
    return off, addrs


@dataclass(frozen=True)
class TmaStorePlan:
    """Byte copies of one tile-mode store: global[gmem_addrs[i]] = shared[smem_addrs[i]] (in-bound bytes only)."""

    smem_addrs: npt.NDArray[np.int64]
    gmem_addrs: npt.NDArray[np.int64]


def plan_tensor_store(spec: TensorMapSpec, coords: Sequence[int], src: int) -> TmaStorePlan:
    """Shared -> global tile-mode store (.global.shared::cta.bulk_group); out-of-bound elements are not written.

    Narrow swizzled boxes read shared row r at ``src + r * span`` (the load layout), H100-measured for
    NARROW_STORE_CONFIRMED.  Plans are cached (a function of the arguments only; the arrays are read-only)."""
    return _store_plan(spec, tuple(int(x) for x in coords), int(src))


_EMPTY = np.zeros(0, np.int64)
_EMPTY.flags.writeable = False


@functools.lru_cache(maxsize=4096)
def _store_plan(spec: TensorMapSpec, coords: tuple, src: int) -> TmaStorePlan:
    _check_supported(spec, store=True)
    if spec.dtype == "16U4_ALIGN16B":
        raise TmaError("16U4_ALIGN16B (.b4x16_p64) cannot be stored: PTX ISA 9.7.9.25.5.1 forbids the "
                       ".global.shared::cta direction for it")
    if spec.dtype == "16U6_ALIGN16B":
        raise TmaUnconfirmed("16U6_ALIGN16B store uses the .b6p2x16 shared layout (PTX 5.5.1.1), which the "
                             "emulator does not model; store bytes instead")
    if spec.dtype in LOAD_CONVERT:
        raise TmaUnconfirmed(f"TMA store of a {spec.dtype} tensor: an H100 load of this type rounds the data to TF32 "
                             "(TMA kit run 3, 2026-11-22), whether a store converts too is not measured; store it as "
                             "FLOAT32 (same bytes) or UINT32, or measure it with tests/fidelity/tma")
    _check_smem(spec, src, "cp.async.bulk.tensor shared source")
    c = _check_coords(spec, coords, store=True)
    soff, gaddr, ok, (lo, hi) = _row_table(spec, c)      # every in-bound row's in-bound bytes, row by row
    if hi <= lo or not ok.any():
        return TmaStorePlan(_EMPTY, _EMPTY)
    g_lo, s_lo = _dim0_bytes(spec, lo)
    g_n, _ = _dim0_bytes(spec, hi - lo)
    span = np.arange(g_n, dtype=np.int64)
    s = ((soff[ok] + (s_lo + int(src)))[:, None] + span).reshape(-1)
    g = ((gaddr[ok] + (_dim0_bytes(spec, c[0])[0] + g_lo))[:, None] + span).reshape(-1)
    s = swizzle_addr(spec.swizzle, s)
    s.flags.writeable = False
    g.flags.writeable = False
    return TmaStorePlan(smem_addrs=s, gmem_addrs=g)


def check_bulk_copy(dst: int, src: int, size: int, *, direction: str) -> int:
    """Validate a non-tensor cp.async.bulk (PTX ISA 9.7.9.25.4.1) and return the complete_tx byte count (= size)."""
    size = int(size)
    if size <= 0 or size % BULK_GRANULE:
        raise TmaError(f"cp.async.bulk {direction}: size {size} must be a positive multiple of 16 bytes "
                       "(PTX ISA 9.7.9.25.4.1)")
    for name, a in (("dstMem", dst), ("srcMem", src)):
        if int(a) % BULK_GRANULE:
            raise TmaError(f"cp.async.bulk {direction}: {name} 0x{int(a):x} must be 16-byte aligned "
                           "(PTX ISA 9.7.9.25.4.1)")
    return size
