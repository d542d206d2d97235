"""Pure model of TMA tensor copies (cp.async.bulk.tensor, tile mode) and non-tensor bulk copies (cp.async.bulk).

PTX ISA sections: 5.5.3 (bounding box, traversal stride, out-of-bound access), 5.5.1.1 (sub-byte types and their
padding), 5.5.7 (swizzle), 9.7.9.25.4.1 (cp.async.bulk), 9.7.9.25.5 (cp.async.bulk.tensor and its restrictions).

Load (global -> shared): the box is read element by element at coordinates ``coords[d] + i * element_strides[d]``
(dims >= 1; dim 0 ignores its element stride without interleave), ``ceil(box[d] / element_strides[d])`` elements per
dim, written densely to shared memory with dim 0 innermost, then every byte address is permuted by the swizzle of the
absolute shared address (ptxlab.emu.swizzle). Out-of-bound elements are filled with zeros, or with the OOB-NaN pattern
for oob_fill='nan' (bit pattern UNCONFIRMED: raises until measured, see OOB_NAN_BITS). ALIGN16B types leave their
gap bytes unwritten (PTX 5.5.1.1: "The padded region that gets added is un-initialized").

Store (shared -> global): the inverse walk; out-of-bound elements are not written.

complete_tx byte count of a load: the full box size in shared memory, also for partially out-of-bound boxes. This is
the ASSUMPTION CUTLASS and DeepGEMM rely on (they always expect_tx the full box); no PTX sentence states it
(ptx_facts §9, UNCONFIRMED #10). tests/fidelity/tma measures it on hardware.

Everything returns address/value arrays instead of touching memory, so the emulator applies them at completion time.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from ptxlab.emu.swizzle import SwizzleError, check_dst_alignment, swizzle_addr, swizzle_span
from ptxlab.errors import EmuError
from ptxlab.tensormap import TensorMapSpec

__all__ = [
    "TmaError",
    "TmaUnconfirmed",
    "OOB_NAN_BITS",
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

# Bytes of global memory per group of 16 packed values, and the shared bytes they occupy (PTX 5.5.1.1).
_PACKED_GROUP = {"16U4_ALIGN8B": (8, 8), "16U4_ALIGN16B": (8, 16), "16U6_ALIGN16B": (12, 16)}

# OOB-NaN fill bit patterns per dtype (PTX 5.5.3.3 names a "special NaN called OOB-NaN" without giving its bits).
# None = not measured yet: a load that needs it raises TmaUnconfirmed. Fill in from the H100 fidelity run.
OOB_NAN_BITS: dict[str, Optional[int]] = {
    "FLOAT16": None, "BFLOAT16": None, "FLOAT32": None, "FLOAT32_FTZ": None, "FLOAT64": None,
    "TFLOAT32": None, "TFLOAT32_FTZ": None,
}

BULK_GRANULE = 16          # PTX 9.7.9.25.4.1: size multiple of 16, both addresses 16-byte aligned
TMA_SMEM_ALIGN = 128       # commonly cited TMA shared-memory alignment; UNCONFIRMED (ptx_facts §9 #7)
REQUIRE_NATURAL_SWIZZLE_ALIGNMENT = True   # 1024/512/256 B for swizzled boxes (base offset 0), see ptx_docs/tma.md


class TmaError(EmuError):
    """A tensor or bulk copy broke a PTX / tensor-map rule."""


class TmaUnconfirmed(TmaError):
    """The copy depends on hardware behaviour no source settles; the emulator refuses to guess."""


@dataclass(frozen=True)
class BoxGeometry:
    """Shape of the box image in shared memory (dim 0 innermost, dense)."""

    counts: tuple[int, ...]        # elements traversed per dim: box[0], ceil(box[d] / element_strides[d])
    row_bytes: int                 # shared bytes of one dim-0 row (gaps of ALIGN16B types included)
    total_bytes: int               # shared bytes of the whole box

    @property
    def rows(self) -> int:
        """Number of dim-0 rows in the box."""
        n = 1
        for c in self.counts[1:]:
            n *= c
        return n


def _check_supported(spec: TensorMapSpec) -> None:
    if spec.interleave != "none":
        raise TmaError(f"tensor map interleave={spec.interleave}: interleaved layouts (PTX ISA 5.5.6, NC/8DHWC8) are "
                       "not implemented in the emulator; use interleave='none'")
    span = swizzle_span(spec.swizzle)
    if span and spec.box_inner_bytes != span:
        raise TmaUnconfirmed(
            f"inner box of {spec.box_inner_bytes} B is narrower than the {spec.swizzle} swizzle span of {span} B: "
            "the shared-memory layout for that case is not stated by PTX ISA 5.5.7 (ptx_facts UNCONFIRMED #3); "
            f"make box[0] * element size == {span} B, or settle it with tests/fidelity/tma (probe 'narrow')")


def box_geometry(spec: TensorMapSpec) -> BoxGeometry:
    """Element counts per dim and shared-memory byte sizes of the box described by ``spec``."""
    counts = (spec.box[0],) + tuple(-(-b // e) for b, e in zip(spec.box[1:], spec.element_strides[1:]))
    row = spec.box_inner_bytes
    total = row
    for c in counts[1:]:
        total *= c
    return BoxGeometry(counts=counts, row_bytes=row, total_bytes=total)


def complete_tx_bytes(spec: TensorMapSpec) -> int:
    """Bytes a tile-mode load signals with complete_tx: the full box, OOB included (ASSUMPTION, see module doc)."""
    return box_geometry(spec).total_bytes


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
        yield r * geo.row_bytes, gaddr, (lo, hi) if hi > lo else (0, 0)


def _fill_pattern(spec: TensorMapSpec, nbytes: int) -> npt.NDArray[np.uint8]:
    if spec.oob_fill == "none":
        return np.zeros(nbytes, dtype=np.uint8)
    bits = OOB_NAN_BITS.get(spec.dtype)
    if bits is None:
        raise TmaUnconfirmed(
            f"oob_fill='nan' on {spec.dtype} with an out-of-bound element: the OOB-NaN bit pattern is not given by "
            "PTX ISA 5.5.3.3; measure it with tests/fidelity/tma (probe 'nanfill') and record it in "
            "ptxlab.emu.tma_model.OOB_NAN_BITS, or use oob_fill='none'")
    eb = spec.elem_bits // 8
    one = np.frombuffer(int(bits).to_bytes(eb, "little"), dtype=np.uint8)
    return np.tile(one, nbytes // eb)


def load_box_image(spec: TensorMapSpec, coords: Sequence[int],
                   read_global: GlobalReader) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    """Dense (unswizzled) shared image of a tile-mode load and the mask of bytes TMA writes (gaps excluded).

    ``read_global(addr, nbytes)`` returns the bytes of global memory at ``addr``; it is called once per in-bound row.
    """
    _check_supported(spec)
    c = _check_coords(spec, coords, store=False)
    geo = box_geometry(spec)
    img = np.full(geo.total_bytes, 0xCD, dtype=np.uint8)   # sentinel: every written byte is set explicitly
    written = np.ones(geo.total_bytes, dtype=np.bool_)
    packed16 = spec.dtype in ("16U4_ALIGN16B", "16U6_ALIGN16B")
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
            row[s_lo:s_lo + s_n] = data
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


def plan_tensor_load(spec: TensorMapSpec, coords: Sequence[int], dst: int, read_global: GlobalReader) -> TmaLoadPlan:
    """Everything a cp.async.bulk.tensor load does: image, swizzled placement at ``dst``, tx byte count."""
    _check_supported(spec)
    _check_smem(spec, dst, "cp.async.bulk.tensor shared destination")
    img, written = load_box_image(spec, coords, read_global)
    addrs, vals = place_image(spec.swizzle, dst, img, written)
    return TmaLoadPlan(smem_addrs=addrs, values=vals, tx_bytes=complete_tx_bytes(spec), box_bytes=img.size)


@dataclass(frozen=True)
class TmaStorePlan:
    """Byte copies of one tile-mode store: global[gmem_addrs[i]] = shared[smem_addrs[i]] (in-bound bytes only)."""

    smem_addrs: npt.NDArray[np.int64]
    gmem_addrs: npt.NDArray[np.int64]


def plan_tensor_store(spec: TensorMapSpec, coords: Sequence[int], src: int) -> TmaStorePlan:
    """Shared -> global tile-mode store (.global.shared::cta.bulk_group); out-of-bound elements are not written."""
    _check_supported(spec)
    if spec.dtype == "16U4_ALIGN16B":
        raise TmaError("16U4_ALIGN16B (.b4x16_p64) cannot be stored: PTX ISA 9.7.9.25.5.1 forbids the "
                       ".global.shared::cta direction for it")
    if spec.dtype == "16U6_ALIGN16B":
        raise TmaUnconfirmed("16U6_ALIGN16B store uses the .b6p2x16 shared layout (PTX 5.5.1.1), which the "
                             "emulator does not model; store bytes instead")
    _check_smem(spec, src, "cp.async.bulk.tensor shared source")
    c = _check_coords(spec, coords, store=True)
    s_parts: list[npt.NDArray[np.int64]] = []
    g_parts: list[npt.NDArray[np.int64]] = []
    for soff, gaddr, (lo, hi) in _rows(spec, c):
        if gaddr is None or hi <= lo:
            continue
        g_lo, s_lo = _dim0_bytes(spec, lo)
        g_n, _ = _dim0_bytes(spec, hi - lo)
        base = gaddr + _dim0_bytes(spec, c[0])[0] + g_lo
        s_parts.append(np.arange(soff + s_lo, soff + s_lo + g_n, dtype=np.int64))
        g_parts.append(np.arange(base, base + g_n, dtype=np.int64))
    if not s_parts:
        return TmaStorePlan(np.zeros(0, np.int64), np.zeros(0, np.int64))
    s = np.concatenate(s_parts) + int(src)
    return TmaStorePlan(smem_addrs=swizzle_addr(spec.swizzle, s), gmem_addrs=np.concatenate(g_parts))


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
