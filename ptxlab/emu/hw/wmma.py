"""WMMA fragments (PTX ISA 9.7.14.4.1 "Matrix Fragments for WMMA", 9.7.14.4.2 "Matrix Storage for WMMA").

The ISA fixes how many registers of which type hold a fragment (``REGISTERS``: per matrix, shape and element type)
and leaves "the layout of the fragments held by different threads" unspecified.  Where the H100 probe ``wmma_layout``
(tests/corpus/kernels_wmma.py, 2026-11-28) measured it, the emulator holds the H100's layout (``measured``: A / B of
f16, bf16, tf32, s8, f64 -- the same for .row and .col loads -- and C / D of f32, f16, s32, f64; decoded by
tools/wmma_layout_decode.py into data/wmma_layout_h100.npz); elsewhere (.u8) its own internal one (element i of lane
l is the matrix element with row-major flat index (32 i + l) mod (rows * cols)).  A fragment with more slots than
elements holds each element several times.  ptxlab/emu/checks/wmma_fragments.py refuses every kernel that could
observe a layout not measured (ptx_docs/isa_coverage_notes.md "WMMA").
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np

from ...mma.codec import ModelSilent
from .warp_mma_arith import mma_f64, mma_float, mma_int

# The H100's fragment layouts (probe ``wmma_layout``, 2026-11-28; tools/wmma_layout_decode.py): "<matrix>_<type>_<shape>"
# -> (32, n) flat indices; A / B the same for .row and .col loads.  Not measured: .u8, and C loaded .col.
with resources.files(__package__).joinpath("data/wmma_layout_h100.npz").open("rb") as _f:
    _MEASURED = dict(np.load(_f))

SHAPES = {"m16n16k16": (16, 16, 16), "m8n32k16": (8, 32, 16), "m32n8k16": (32, 8, 16), "m16n16k8": (16, 16, 8),
          "m8n8k4": (8, 8, 4)}
# element type -> (element bits, register type); f64 fragments use .f64 registers
ELEMENT = {"f16": (16, "b32"), "bf16": (16, "b32"), "tf32": (32, "b32"), "f32": (32, "b32"), "s32": (32, "b32"),
           "s8": (8, "b32"), "u8": (8, "b32"), "f64": (64, "b64")}


def _regs(shape_ab: dict, c: dict) -> dict:
    out = {}
    for shape, (ra, rb) in shape_ab.items():
        out[("a", shape)] = ra
        out[("b", shape)] = rb
    out.update({("c", s): n for s, n in c.items()})
    return out


_FS = ("m16n16k16", "m8n32k16", "m32n8k16")
# (element type) -> {(matrix, shape): registers per lane} (PTX ISA 9.7.14.4.1 tables)
REGISTERS = {
    "f16": _regs({s: (8, 8) for s in _FS}, {s: 4 for s in _FS}),
    "f32": _regs({}, {s: 8 for s in _FS + ("m16n16k8",)}),
    "bf16": _regs({"m16n16k16": (4, 4), "m8n32k16": (2, 8), "m32n8k16": (8, 2)}, {}),
    "s8": _regs({"m16n16k16": (2, 2), "m8n32k16": (1, 4), "m32n8k16": (4, 1)}, {}),
    "u8": _regs({"m16n16k16": (2, 2), "m8n32k16": (1, 4), "m32n8k16": (4, 1)}, {}),
    "s32": _regs({}, {s: 8 for s in _FS}),
    "tf32": _regs({"m16n16k8": (4, 4)}, {}),
    "f64": _regs({"m8n8k4": (1, 1)}, {"m8n8k4": 2}),
}


@dataclass(frozen=True)
class Fragment:
    """One fragment: ``rows`` x ``cols`` elements of ``bits`` bits, ``nregs`` registers of ``reg_type`` per lane,
    ``per_reg`` elements in each."""
    matrix: str
    shape: str
    etype: str
    rows: int
    cols: int
    bits: int
    nregs: int
    reg_type: str

    @property
    def per_reg(self) -> int:
        return (64 if self.reg_type == "b64" else 32) // self.bits

    @property
    def n(self) -> int:
        return self.nregs * self.per_reg

    @property
    def bytes(self) -> int:
        """Fragment size in bytes (the alignment unit of 9.7.14.4.2)."""
        return self.nregs * (8 if self.reg_type == "b64" else 4)


def fragment(matrix: str, shape: str, etype: str) -> Fragment:
    """The fragment of ``matrix`` ('a', 'b', 'c' / 'd') for ``shape`` and element type (KeyError: not in the ISA)."""
    m = "c" if matrix == "d" else matrix
    nregs = REGISTERS[etype][(m, shape)]
    M, N, K = SHAPES[shape]
    rows, cols = {"a": (M, K), "b": (K, N), "c": (M, N)}[m]
    bits, rty = ELEMENT[etype]
    return Fragment(m, shape, etype, rows, cols, bits, nregs, rty)


def measured(fr: Fragment):
    """The H100's layout of ``fr`` as (32, n) row-major flat indices, or None where the probe did not measure it."""
    m = _MEASURED.get(f"{fr.matrix}_{fr.etype}_{fr.shape}")
    return None if m is None else m.astype(np.int64)


def element_index(fr: Fragment) -> tuple:
    """(row, col) arrays of shape (32, n): the matrix element held in slot i of lane l -- the H100's layout where
    measured (``measured``), else the internal one (module doc)."""
    flat = measured(fr)
    if flat is None:
        flat = (32 * np.arange(fr.n)[None, :] + np.arange(32)[:, None]) % (fr.rows * fr.cols)
    return flat // fr.cols, flat % fr.cols


def first_slots(fr: Fragment) -> tuple:
    """(lane, slot) arrays over the rows * cols elements in row-major order: where mma and wmma.store read each
    element (its first copy, lane-major)."""
    r, c = element_index(fr)
    flat = (r * fr.cols + c).reshape(-1)
    E = fr.rows * fr.cols
    first = np.full(E, -1, np.int64)
    pos = np.arange(flat.size)
    first[flat[::-1]] = pos[::-1]                      # the lowest (lane, slot) holding each element
    return first // fr.n, first % fr.n


def default_stride(fr: Fragment, layout: str) -> int:
    """The leading dimension (9.7.14.4.2): columns for .row, rows for .col."""
    return fr.cols if layout == "row" else fr.rows


# ------------------------------------------------------------------------------------------------ arithmetic
# What ptxas (NVRTC 13.0, sm_90a) lowers one wmma.mma to (tests/emu/ops/test_emu_wmma.py::test_ptxas_lowering reads the
# SASS): f16 / bf16 -> HMMA.16816 per 16 x 8 block (one window over the 16 products, as mma.sync m16n8k16); tf32
# m16n16k8 -> two chained HMMA.1684 per block, k 0-3 then k 4-7 (as two mma.sync m16n8k4, C in the first); s8 / u8 ->
# IMMA.16816 (exact); f64 -> DMMA (as mma.sync m8n8k4).  f16 C with f32 D: C widened exactly (HADD2.F32) first;
# f32 C with f16 D: the f32 MMA, then F2FP.F16.F32.PACK_AB (round to nearest even; a NaN result refused).
K_STEP = {"tf32": 4}


def mma(a: np.ndarray, b: np.ndarray, c: np.ndarray, atype: str, btype: str, dtype: str, ctype: str,
        satfinite: bool = False) -> np.ndarray:
    """D codes of one wmma.mma problem: a (M, K), b (K, N) element codes, c (M, N) C codes (lowering above)."""
    if atype == "f64":
        return mma_f64(a, b, c)
    if dtype == "s32":
        return mma_int(a, b, c, atype, btype, satfinite)
    c = np.asarray(c).astype(np.uint32)
    if ctype == "f16" and dtype == "f32":
        c = c.astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
    acc = "f32" if "f32" in (ctype, dtype) else dtype
    step = K_STEP.get(atype, a.shape[1])
    for k in range(0, a.shape[1], step):
        c = mma_float(np.ascontiguousarray(a[:, k:k + step]), np.ascontiguousarray(b[k:k + step]), c, atype, btype,
                      acc)
    if dtype == "f16" and acc == "f32":           # f32 C, f16 D: F2FP.F16.F32.PACK_AB (round to nearest even)
        f = c.view(np.float32)
        if np.isnan(f).any():
            raise ModelSilent("wmma.mma .f16 D with .f32 C and a NaN result: the f16 NaN the H100 writes is not "
                              "measured (probe entry wmma_mixed)")
        with np.errstate(over="ignore"):
            c = f.astype(np.float16).view(np.uint16).astype(np.uint32)
    return c
