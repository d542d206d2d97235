"""Bit-exact arithmetic model of one ``tcgen05.mma`` (sm_100a), vectorized with numpy.

Implements the sf-tensor/tcgen05 model (``tcgen05_model/MODEL.md``, MIT; restated in
the shared reference tcgen05_arithmetic.md); rules as implemented: ``ptx_docs/mma_arithmetic.md``.

API::

    mma(kind, a, b, *, a_fmt, b_fmt, d_fmt="f32", c=None, sfa=None, sfb=None, scale_fmt=None,
        block=None, negate_a=False, negate_b=False, saturate=False) -> np.ndarray[(M, N), uint32]
    mma_exact(...same...) -> np.ndarray[(M, N), float64]     # exact sum, correctly rounded to float64
    exact_regime(...same...) -> bool                          # True => mma == exact sum, bit for bit

* ``kind``: "f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4".
* ``a``: (M, K) raw element codes, ``b``: (N, K) codes (B as N rows of K, the K-major B the MMA reads).
  dtypes: uint8 for e4m3/e5m2/e2m3/e3m2/e2m1/u8/s8 (value in the low bits; unused high bits must be 0),
  uint16 for f16/bf16, uint32 for tf32 (F32 container; low 13 fraction bits are ignored, MODEL §2).
* ``a_fmt``/``b_fmt``: "f16" "bf16" | "tf32" | "e4m3" "e5m2" "e2m3" "e3m2" "e2m1" | "u8" "s8".
* ``d_fmt``: "f32" (kind f16, tf32, f8f6f4 and all block-scaled kinds), "f16" (kind::f8f6f4 only; kind::f16
  with F16 D raises NotImplementedError: the model does not cover it), "s32" (kind::i8, must be given).
* ``c``: (M, N) uint32 raw D bits used as C (F32/S32 bits, or F16 bits in the low half; the high half is
  ignored), or None for enable-input-d = false (C = +0).
* ``sfa`` (M, K/block), ``sfb`` (N, K/block): uint8 scale codes, block-scaled kinds only.
  ``scale_fmt``: "ue8m0" (default for mxf8f6f4 / mxf4) or "ue4m3" (mxf4nvf4 only; must be given for mxf4nvf4).
  ``block``: 32 for mxf8f6f4 (scale_vec::1X) and mxf4 (2X); mxf4nvf4: 16 with ue4m3 (4X, default),
  16 or 32 with ue8m0 (must be given).
* ``negate_a``/``negate_b``: idesc negate bits (not kind::i8); ``saturate``: kind::i8 only.
* Returns raw D bits (M, N) uint32; F16 D sits in the low 16 bits.

K: one instruction consumes K0 = 16 (f16), 8 (tf32), 32 (f8f6f4, i8, mxf8f6f4), 64 (mxf4, mxf4nvf4).
Any K that is a positive multiple of K0 is accepted and computed as a K loop of MMAs: step i covers
K columns [i*K0, (i+1)*K0) (and the matching scale columns) and its D is the C of step i+1, exactly as
``enable_input_d = (i > 0 or c given)`` in a kernel's K loop.

Errors: ``ValueError``/``TypeError`` for illegal inputs (shape, dtype, code range, format not legal for the
kind); ``NotImplementedError`` (:class:`ModelSilent`) where the model does not determine the result.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ptxlab.mma_arith_codec import Decoded, ModelSilent, decode_c, decode_elem, decode_scale
from ptxlab.mma_arith_fast import MX, WINDOW, fast_step
from ptxlab.mma_arith_steps import step_i8, step_mxf4_ue8m0, step_nvfp4, step_window

__all__ = ["mma", "mma_exact", "exact_regime", "ModelSilent", "KIND_K", "Plan"]

KIND_K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}
F8F6F4 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
KIND_FMTS = {"f16": ("f16", "bf16"), "tf32": ("tf32",), "f8f6f4": F8F6F4, "i8": ("u8", "s8"),
             "mxf8f6f4": F8F6F4, "mxf4": ("e2m1",), "mxf4nvf4": ("e2m1",)}
KIND_D = {"f16": ("f32", "f16"), "tf32": ("f32",), "f8f6f4": ("f32", "f16"), "i8": ("s32",),
          "mxf8f6f4": ("f32",), "mxf4": ("f32",), "mxf4nvf4": ("f32",)}
FMT_DTYPE = {"f16": np.uint16, "bf16": np.uint16, "tf32": np.uint32, "u8": np.uint8, "s8": np.uint8,
             "e4m3": np.uint8, "e5m2": np.uint8, "e2m3": np.uint8, "e3m2": np.uint8, "e2m1": np.uint8}
FMT_BITS = {"e2m3": 6, "e3m2": 6, "e2m1": 4}
SCALED = ("mxf8f6f4", "mxf4", "mxf4nvf4")
# F32 D (every kind but i8): prove exactness cheaply per element and run the model only where that fails
# (ptxlab/mma_arith_fast.py); False forces the model everywhere (tests compare the two).
FAST = True


@dataclass
class Plan:
    """Validated, decoded operands of one mma call."""

    kind: str
    d_fmt: str
    k0: int
    steps: int
    a: Decoded | npt.NDArray[np.int64]      # Decoded, or int64 values for i8
    b: Decoded | npt.NDArray[np.int64]
    c_bits: npt.NDArray[np.uint32]
    sa: Decoded | None                      # per-k expanded scales (M, K) / (N, K)
    sb: Decoded | None
    scale_fmt: str | None
    block: int | None
    saturate: bool


def _codes(x: npt.ArrayLike, fmt: str, name: str) -> npt.NDArray:
    arr = np.asarray(x)
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array of codes, got shape {arr.shape}")
    want = FMT_DTYPE[fmt]
    if arr.dtype != want:
        raise TypeError(f"{name}: {fmt} codes must be {np.dtype(want).name}, got {arr.dtype}")
    bits = FMT_BITS.get(fmt)
    if bits is not None and arr.size and int(arr.max()) >= (1 << bits):
        raise ValueError(f"{name}: {fmt} codes use the low {bits} bits; found code {int(arr.max()):#x}")
    return arr


def _decode_operand(arr: npt.NDArray, fmt: str, negate: bool) -> Decoded | npt.NDArray[np.int64]:
    if fmt in ("u8", "s8"):
        v = arr.astype(np.int64)
        return np.where(v >= 128, v - 256, v) if fmt == "s8" else v
    d = decode_elem(fmt, arr)
    if negate:      # idesc negate bit: flips every element's sign; the model is sign-symmetric (truncation toward 0)
        d = Decoded(-d.mant, d.vexp, d.rexp, d.nan, d.inf, ~d.neg)
    return d


def _scale_plan(kind: str, scale_fmt: str | None, block: int | None) -> tuple[str, int]:
    if kind in ("mxf8f6f4", "mxf4"):
        scale_fmt = scale_fmt or "ue8m0"
        if scale_fmt != "ue8m0":
            raise ValueError(f"kind::{kind} takes UE8M0 scales, not {scale_fmt!r}")
        block = block or 32
        if block != 32:
            raise ValueError(f"kind::{kind} uses one scale per 32 K (block32), not block{block}")
        return scale_fmt, block
    if scale_fmt not in ("ue4m3", "ue8m0"):
        raise ValueError(f"kind::mxf4nvf4 needs scale_fmt 'ue4m3' or 'ue8m0', got {scale_fmt!r}")
    if scale_fmt == "ue4m3":
        block = block or 16
        if block != 16:
            raise ValueError("kind::mxf4nvf4 with UE4M3 scales needs block16 (scale_vec::4X)")
        return scale_fmt, block
    if block not in (16, 32):
        raise ValueError(f"kind::mxf4nvf4 with UE8M0 scales needs block=16 or block=32, got {block!r}")
    return scale_fmt, block


def plan(kind: str, a: npt.ArrayLike, b: npt.ArrayLike, *, a_fmt: str, b_fmt: str, d_fmt: str = "f32",
         c: npt.ArrayLike | None = None, sfa: npt.ArrayLike | None = None, sfb: npt.ArrayLike | None = None,
         scale_fmt: str | None = None, block: int | None = None, negate_a: bool = False,
         negate_b: bool = False, saturate: bool = False) -> Plan:
    """Validate every argument of :func:`mma` and decode the operands."""
    if kind not in KIND_K:
        raise ValueError(f"unknown kind {kind!r}; expected one of {sorted(KIND_K)}")
    for name, fmt in (("a_fmt", a_fmt), ("b_fmt", b_fmt)):
        if fmt not in KIND_FMTS[kind]:
            raise ValueError(f"{name}={fmt!r} is not legal for kind::{kind} (legal: {KIND_FMTS[kind]})")
    if d_fmt not in KIND_D[kind]:
        raise ValueError(f"d_fmt={d_fmt!r} is not legal for kind::{kind} (legal: {KIND_D[kind]})")
    if kind == "f16" and d_fmt == "f16":
        raise ModelSilent("kind::f16 with F16 D: the model states F16 D only for kind::f8f6f4 (MODEL §3/§4)")
    if saturate and kind != "i8":
        raise ValueError("saturate is only legal for kind::i8")
    if (negate_a or negate_b) and kind == "i8":
        raise ValueError("negate A/B is not legal for kind::i8")
    A, Bm = _codes(a, a_fmt, "a"), _codes(b, b_fmt, "b")
    M, K = A.shape
    N, Kb = Bm.shape
    if Kb != K:
        raise ValueError(f"a is (M={M}, K={K}) but b is (N={N}, K={Kb}); b must hold N rows of K")
    k0 = KIND_K[kind]
    if K == 0 or K % k0:
        raise ValueError(f"kind::{kind}: K={K} must be a positive multiple of the instruction K={k0}")
    if M == 0 or N == 0:
        raise ValueError(f"empty M or N: a {A.shape}, b {Bm.shape}")
    if c is None:
        c_bits = np.zeros((M, N), np.uint32)
    else:
        c_bits = np.asarray(c)
        if c_bits.shape != (M, N) or c_bits.dtype != np.uint32:
            raise ValueError(f"c must be uint32 of shape {(M, N)}, got {c_bits.dtype} {c_bits.shape}")
        if d_fmt == "f16":
            c_bits = c_bits & np.uint32(0xFFFF)
    sa = sb = None
    if kind in SCALED:
        scale_fmt, block = _scale_plan(kind, scale_fmt, block)
        nb = K // block
        for name, s, rows in (("sfa", sfa, M), ("sfb", sfb, N)):
            if s is None:
                raise ValueError(f"kind::{kind} needs {name}")
            s = np.asarray(s)
            if s.shape != (rows, nb) or s.dtype != np.uint8:
                raise ValueError(f"{name} must be uint8 of shape {(rows, nb)} (one per {block} K), "
                                 f"got {s.dtype} {s.shape}")
            if scale_fmt == "ue4m3" and (s & 0x80).any():
                raise ModelSilent(f"{name}: UE4M3 scale code with bit 7 set (the model only states positive UE4M3)")
        sa = decode_scale(scale_fmt, np.repeat(np.asarray(sfa), block, axis=1))
        sb = decode_scale(scale_fmt, np.repeat(np.asarray(sfb), block, axis=1))
    elif sfa is not None or sfb is not None or scale_fmt is not None or block is not None:
        raise ValueError(f"kind::{kind} is not block-scaled: sfa/sfb/scale_fmt/block must be None")
    return Plan(kind, d_fmt, k0, K // k0, _decode_operand(A, a_fmt, negate_a), _decode_operand(Bm, b_fmt, negate_b),
                c_bits.astype(np.uint32), sa, sb, scale_fmt, block, saturate)


def _rows(d: Decoded, idx: npt.NDArray[np.intp]) -> Decoded:
    return Decoded(*(f[idx] for f in (d.mant, d.vexp, d.rexp, d.nan, d.inf, d.neg)))


def _cols(d: Decoded | None, lo: int, hi: int) -> Decoded | None:
    if d is None:
        return None
    return Decoded(*(f[:, lo:hi] for f in (d.mant, d.vexp, d.rexp, d.nan, d.inf, d.neg)))


def run_step(p: Plan, i: int, c_bits: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    """D bits of instruction ``i`` of the K loop, given the C bits it reads."""
    lo, hi = i * p.k0, (i + 1) * p.k0
    if p.kind == "i8":
        return step_i8(p.a[:, lo:hi], p.b[:, lo:hi], c_bits, p.saturate)
    a, b = _cols(p.a, lo, hi), _cols(p.b, lo, hi)
    sa = sb = scale_nan = None
    if p.sa is not None:
        sa, sb = _cols(p.sa, lo, hi), _cols(p.sb, lo, hi)
        scale_nan = sa.nan.any(1)[:, None] | sb.nan.any(1)[None, :]
    if p.sa is None or p.kind == "mxf8f6f4":
        rule = WINDOW

        def step(a, b, cd, cb, sa, sb, sn):
            return step_window(a, b, cd, cb, p.d_fmt, sa, sb, sn, f16_specials_known=(p.kind != "f16"))
    else:
        rule = MX
        step = step_nvfp4 if p.scale_fmt == "ue4m3" else step_mxf4_ue8m0
    if not FAST or p.d_fmt != "f32":
        return step(a, b, decode_c(p.d_fmt, c_bits), c_bits, sa, sb, scale_nan)

    def model(rows, cols):
        sub_c = np.asarray(c_bits)[np.ix_(rows, cols)]
        return step(_rows(a, rows), _rows(b, cols), decode_c("f32", sub_c), sub_c,
                    None if sa is None else _rows(sa, rows), None if sb is None else _rows(sb, cols),
                    None if scale_nan is None else scale_nan[np.ix_(rows, cols)])
    return fast_step(a, b, c_bits, sa, sb, rule=rule, passthrough=p.sa is not None, model=model)


def mma(kind: str, a: npt.ArrayLike, b: npt.ArrayLike, **kw) -> npt.NDArray[np.uint32]:
    """Raw D bits (M, N) uint32 of ``D = A @ B^T + C`` as B200 tcgen05.mma computes it (see module doc)."""
    p = plan(kind, a, b, **kw)
    d = p.c_bits
    for i in range(p.steps):
        d = run_step(p, i, d)
    return d


def mma_exact(kind: str, a: npt.ArrayLike, b: npt.ArrayLike, **kw) -> npt.NDArray[np.float64]:
    """Exact ``sum_k A*B*scales + C`` (no windows, no per-step rounding), correctly rounded to float64."""
    from ptxlab.mma_arith_exact import exact_sum
    return exact_sum(plan(kind, a, b, **kw))


def exact_regime(kind: str, a: npt.ArrayLike, b: npt.ArrayLike, **kw) -> bool:
    """True if no window truncation can drop a bit and every K step's exact sum is representable in D.

    When True, :func:`mma` equals the exact sum bit for bit (so a stage test may demand equality with a
    plain sum). Sufficient, not necessary: False means only that exactness is not guaranteed.
    """
    from ptxlab.mma_arith_exact import regime
    return regime(plan(kind, a, b, **kw))
