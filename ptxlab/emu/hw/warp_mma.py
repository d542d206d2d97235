"""Warp-level MMA fragment layouts (PTX ISA 9.7.14.5.1-13, "Matrix Fragments for mma.mMnNkK").

For every shape / operand / element class, the (problem, row, column) of element ``i`` held by lane ``l``,
transcribed from the ISA's formulas (groupID = l >> 2, threadID_in_group = l % 4).  Elements are numbered low to
high inside each register, registers in operand order.  ``Layout.check()`` proves that the lanes of a warp hold
every element of every matrix exactly once (run by the tests for every table entry).

m8n8k4 with .f16 is four independent 8x8x4 problems per warp (lanes 0-3 with 16-19, 4-7 with 20-23, ...): the
"problem" coordinate; every other shape is one problem.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

LANE = np.arange(32)
G, T = LANE >> 2, LANE % 4
HIGH = (LANE >= 16).astype(np.int64)
QP = (LANE >> 2) & 3           # m8n8k4 problem (quad pair) of each lane


@dataclass(frozen=True)
class Layout:
    """Where the elements of one operand live: ``n`` elements per lane; ``rc(i)`` -> (problem, row, col) arrays
    over the 32 lanes; ``shape`` (problems, rows, cols)."""
    n: int
    shape: tuple
    rc: Callable

    def index(self) -> tuple:
        """(problem, row, col) index arrays of shape (32, n)."""
        p, r, c = zip(*(tuple(np.broadcast_to(x, (32,)) for x in self.rc(i)) for i in range(self.n)))
        return np.stack(p, 1), np.stack(r, 1), np.stack(c, 1)

    def check(self) -> None:
        p, r, c = self.index()
        P, R, C = self.shape
        flat = (p * R + r) * C + c
        assert flat.min() >= 0 and flat.max() < P * R * C, self
        assert np.unique(flat).size == flat.size == P * R * C, f"layout does not cover {self.shape} exactly once"


def _one(rc):
    return lambda i: (0,) + tuple(rc(i))


def _lay(n, shape, rc, problems=1):
    return Layout(n, (problems,) + shape, _one(rc) if problems == 1 else rc)


# ------------------------------------------------------------------------------------------------ C / D
def _c16x8(i):          # 16x8 accumulators, 4 elements (f32/s32 c0..c3; f16 two .f16x2 registers)
    return G + 8 * (i >= 2), T * 2 + (i & 1)


def _c8x8(i):           # 8x8 accumulators, 2 elements
    return G, T * 2 + i


C16X8 = _lay(4, (16, 8), _c16x8)
C8X8 = _lay(2, (8, 8), _c8x8)

# ------------------------------------------------------------------------------------------------ A / B by shape
LAYOUTS: dict = {
    # m8n8k4 .f16: four problems; A/B row or column major; C f16 (8 elements) or f32 (8 elements)
    ("m8n8k4", "a", "row"): _lay(4, (8, 4), lambda i: (QP, T + 4 * HIGH, i), problems=4),
    ("m8n8k4", "a", "col"): _lay(4, (8, 4), lambda i: (QP, i % 4 + 4 * HIGH, T), problems=4),
    ("m8n8k4", "b", "row"): _lay(4, (4, 8), lambda i: (QP, T, i + 4 * HIGH), problems=4),
    ("m8n8k4", "b", "col"): _lay(4, (4, 8), lambda i: (QP, i, T + 4 * HIGH), problems=4),
    ("m8n8k4", "c", "f16"): _lay(8, (8, 8), lambda i: (QP, T + 4 * HIGH, i), problems=4),
    ("m8n8k4", "c", "f32"): _lay(8, (8, 8), lambda i: (QP, (LANE & 1) + (i & 2) + 4 * HIGH,
                                                       (i & 4) + (LANE & 2) + (i & 1)), problems=4),
    # m8n8k4 .f64
    ("m8n8k4", "a", "f64"): _lay(1, (8, 4), lambda i: (G, T)),
    ("m8n8k4", "b", "f64"): _lay(1, (4, 8), lambda i: (T, G)),
    ("m8n8k4", "c", "f64"): C8X8,
    # m8n8k16 .u8/.s8, m8n8k32 .u4/.s4, m8n8k128 .b1
    ("m8n8k16", "a", "8b"): _lay(4, (8, 16), lambda i: (G, T * 4 + i)),
    ("m8n8k16", "b", "8b"): _lay(4, (16, 8), lambda i: (T * 4 + i, G)),
    ("m8n8k32", "a", "4b"): _lay(8, (8, 32), lambda i: (G, T * 8 + i)),
    ("m8n8k32", "b", "4b"): _lay(8, (32, 8), lambda i: (T * 8 + i, G)),
    ("m8n8k128", "a", "b1"): _lay(32, (8, 128), lambda i: (G, T * 32 + i)),
    ("m8n8k128", "b", "b1"): _lay(32, (128, 8), lambda i: (T * 32 + i, G)),
    # m16n8k4 .tf32 / .f64
    ("m16n8k4", "a", "tf32"): _lay(2, (16, 4), lambda i: (G + 8 * i, T)),
    ("m16n8k4", "b", "tf32"): _lay(1, (4, 8), lambda i: (T, G)),
    ("m16n8k4", "a", "f64"): _lay(2, (16, 4), lambda i: (G + 8 * i, T)),
    ("m16n8k4", "b", "f64"): _lay(1, (4, 8), lambda i: (T, G)),
    # m16n8k8 .f16/.bf16 ; .tf32 / .f64
    ("m16n8k8", "a", "16b"): _lay(4, (16, 8), lambda i: (G + 8 * (i >= 2), T * 2 + (i & 1))),
    ("m16n8k8", "b", "16b"): _lay(2, (8, 8), lambda i: (T * 2 + i, G)),
    ("m16n8k8", "a", "tf32"): _lay(4, (16, 8), lambda i: (G + 8 * (i & 1), T + 4 * (i >= 2))),
    ("m16n8k8", "b", "tf32"): _lay(2, (8, 8), lambda i: (T + 4 * i, G)),
    ("m16n8k8", "a", "f64"): _lay(4, (16, 8), lambda i: (G + 8 * (i & 1), T + 4 * (i >= 2))),
    ("m16n8k8", "b", "f64"): _lay(2, (8, 8), lambda i: (T + 4 * i, G)),
    # m16n8k16 .f16/.bf16 ; .f64 ; .u8/.s8/.e4m3/.e5m2
    ("m16n8k16", "a", "16b"): _lay(8, (16, 16), lambda i: (G + 8 * ((i % 4) >= 2), T * 2 + (i & 1) + 8 * (i >= 4))),
    ("m16n8k16", "b", "16b"): _lay(4, (16, 8), lambda i: (T * 2 + (i & 1) + 8 * (i >= 2), G)),
    ("m16n8k16", "a", "f64"): _lay(8, (16, 16), lambda i: (G + 8 * (i & 1), T + 4 * (i >> 1))),
    ("m16n8k16", "b", "f64"): _lay(4, (16, 8), lambda i: (T + 4 * i, G)),
    ("m16n8k16", "a", "8b"): _lay(8, (16, 16), lambda i: (G + 8 * (i >= 4), T * 4 + (i & 3))),
    ("m16n8k16", "b", "8b"): _lay(4, (16, 8), lambda i: (T * 4 + i, G)),
    # m16n8k32 .u4/.s4 ; 8-bit (.u8/.s8/.e4m3/.e5m2, and the f8f6f4 containers)
    ("m16n8k32", "a", "4b"): _lay(16, (16, 32), lambda i: (G + 8 * (i >= 8), T * 8 + (i & 7))),
    ("m16n8k32", "b", "4b"): _lay(8, (32, 8), lambda i: (T * 8 + i, G)),
    ("m16n8k32", "a", "8b"): _lay(16, (16, 32), lambda i: (G + 8 * ((i % 8) >= 4), T * 4 + (i & 3) + 16 * (i >= 8))),
    ("m16n8k32", "b", "8b"): _lay(8, (32, 8), lambda i: (T * 4 + (i & 3) + 16 * (i >= 4), G)),
    # m16n8k64 .u4/.s4 and .e2m1 (kind::mxf4 / mxf4nvf4)
    ("m16n8k64", "a", "4b"): _lay(32, (16, 64), lambda i: (G + 8 * ((i % 16) >= 8), T * 8 + (i & 7) + 32 * (i >= 16))),
    ("m16n8k64", "b", "4b"): _lay(16, (64, 8), lambda i: (T * 8 + (i & 7) + 32 * (i >= 8), G)),
    # m16n8k128 / m16n8k256 .b1
    ("m16n8k128", "a", "b1"): _lay(64, (16, 128), lambda i: (G + 8 * (i >= 32), T * 32 + (i & 31))),
    ("m16n8k128", "b", "b1"): _lay(32, (128, 8), lambda i: (T * 32 + i, G)),
    ("m16n8k256", "a", "b1"): _lay(128, (16, 256), lambda i: (G + 8 * ((i % 64) >= 32),
                                                              T * 32 + (i & 31) + 128 * (i >= 64))),
    ("m16n8k256", "b", "b1"): _lay(64, (256, 8), lambda i: (T * 32 + (i & 31) + 128 * (i >= 32), G)),
}


def c_layout(shape: str, dclass: str) -> Layout:
    """The accumulator layout of ``shape`` for D/C element class 'f32' / 's32' / 'f16' / 'f64'."""
    if shape == "m8n8k4":
        return LAYOUTS[("m8n8k4", "c", "f64" if dclass == "f64" else ("f16" if dclass == "f16" else "f32"))]
    if shape.startswith("m8n8"):
        return C8X8
    return C16X8


def gather(lay: Layout, elems: np.ndarray) -> np.ndarray:
    """elems (W, 32, n) per-lane element codes -> matrices (W, P, R, C)."""
    W = elems.shape[0]
    out = np.zeros((W,) + lay.shape, dtype=elems.dtype)
    p, r, c = lay.index()
    out[:, p, r, c] = elems
    return out


def scatter(lay: Layout, mats: np.ndarray) -> np.ndarray:
    """matrices (W, P, R, C) -> per-lane elements (W, 32, n)."""
    p, r, c = lay.index()
    return mats[:, p, r, c]


def unpack(regs: np.ndarray, bits: int, per_reg: int) -> np.ndarray:
    """(W, 32, nreg) register words -> (W, 32, nreg * per_reg) element codes, low bits first."""
    regs = np.asarray(regs).astype(np.uint64)
    sh = (np.arange(per_reg, dtype=np.uint64) * np.uint64(bits))
    el = (regs[..., None] >> sh) & np.uint64((1 << bits) - 1)
    return el.reshape(regs.shape[:-1] + (-1,))


def pack(elems: np.ndarray, bits: int, per_reg: int) -> np.ndarray:
    """Inverse of unpack: (W, 32, n) codes -> (W, 32, n / per_reg) words (uint64)."""
    e = np.asarray(elems).astype(np.uint64).reshape(elems.shape[:-1] + (-1, per_reg))
    sh = (np.arange(per_reg, dtype=np.uint64) * np.uint64(bits))
    return (e << sh).sum(-1, dtype=np.uint64)


# ------------------------------------------------------------------------------------------------ wgmma (warpgroup)
# The ISA gives the warpgroup fragments (9.7.15.5.1.1) as figures; the coordinates below are CUTLASS's SM90 GMMA
# layouts (cute/atom/mma_traits_sm90_gmma.hpp: CLayout_64xN, ALayout_64x16 ...): warp w of the warpgroup holds rows
# 16w..16w+15 in the layout of the mma.sync m16n8kK fragments; accumulator element i of a thread lies in 8-column
# block i // 4 like the m16n8 C fragment (ptx_docs/isa_coverage_notes.md).  H100-checked by the corpus
# (tests/corpus/kernels_wgmma.py).
WG_A = {"16b": ("m16n8k16", 16), "tf32": ("m16n8k8", 8), "8b": ("m16n8k32", 32)}


def wgmma_d_index(n: int, per_thread: int) -> tuple:
    """(row, col) arrays of shape (128, per_thread) of the accumulator elements of a m64nN wgmma."""
    tid = np.arange(128)[:, None]
    w, lane = tid // 32, tid % 32
    g, t = lane >> 2, lane % 4
    i = np.arange(per_thread)[None, :]
    e = i % 4
    return 16 * w + g + 8 * (e >= 2), 8 * (i // 4) + t * 2 + (e & 1)


def wgmma_a_index(eclass: str) -> tuple:
    """(row, col) arrays (128, n) of the register A fragment (64 x K) of a wgmma with A in registers."""
    shape, _k = WG_A[eclass]
    lay = LAYOUTS[(shape, "a", eclass)]
    _p, r, c = lay.index()                      # (32, n)
    rows = np.concatenate([r + 16 * w for w in range(4)], 0)
    cols = np.concatenate([c for _ in range(4)], 0)
    return rows, cols
