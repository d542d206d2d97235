"""NVFP4 element and scale-factor codecs (vectorized numpy, built on ml_dtypes).

Formats (PTX ISA 5.2.3 "Alternate floating point data formats"; ptx_facts.md §8):

* e2m1   : 1 sign, 2 exponent, 1 mantissa bit, bias 1, no Inf/NaN. Values 0, .5, 1, 1.5, 2, 3, 4, 6 (and negatives).
* e4m3fn : 1/4/3, bias 7, no Inf, only S.1111.111 is NaN, max 448.
* UE4M3  : e4m3fn with the sign bit 0 (the NVFP4 scale format of kind::mxf4nvf4 block16).
* UE8M0  : 8-bit exponent only, value 2^(e-127), 0xFF is NaN (MX scale format).
* e5m2   : IEEE-like 1/5/2, bias 15, with Inf/NaN.

Codes are always held as uint8 arrays. Decoders return float32 (every value above is exact in float32).
FP4 packing: element 2i sits in the LOW nibble of byte i, element 2i+1 in the high nibble (PyTorch
`float4_e2m1fn_x2`; ptx_facts §8, PyTorch test helper `pack_uint4 = x[1::2] << 4 | x[::2]`).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import numpy.typing as npt

__all__ = [
    "E2M1_VALUES",
    "UE4M3_MAX",
    "decode_e2m1",
    "encode_e2m1",
    "decode_e4m3",
    "encode_e4m3",
    "decode_ue4m3",
    "encode_ue4m3",
    "decode_ue8m0",
    "encode_ue8m0",
    "decode_e5m2",
    "encode_e5m2",
    "pack_fp4",
    "unpack_fp4",
    "decode_fp4x2",
]

ArrayLike = npt.ArrayLike
U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]

UE4M3_MAX = 448.0

# The 16 e2m1 values, indexed by code (from ml_dtypes, not hand-written).
E2M1_VALUES: F32 = np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
E2M1_VALUES.setflags(write=False)


def _as_codes(codes: ArrayLike, limit: int, what: str) -> U8:
    """Return `codes` as a uint8 array, checking every code is < limit."""
    arr = np.asarray(codes)
    if arr.dtype != np.uint8:
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{what}: codes must be an integer array, got {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() >= limit):
            raise ValueError(f"{what}: codes must lie in [0, {limit}), got range [{arr.min()}, {arr.max()}]")
        arr = arr.astype(np.uint8)
    elif limit < 256 and arr.size and arr.max() >= limit:
        raise ValueError(f"{what}: codes must lie in [0, {limit}), got max {arr.max()}")
    return arr


def _as_float(x: ArrayLike) -> npt.NDArray[np.float64]:
    return np.asarray(x, dtype=np.float64)


def _reject_nan(x: npt.NDArray[np.float64], what: str, inf_too: bool = True) -> None:
    bad = np.isnan(x) | (np.isinf(x) if inf_too else False)
    if np.any(bad):
        raise ValueError(f"{what}: cannot encode NaN{'/Inf' if inf_too else ''} (first at index "
                         f"{np.unravel_index(int(np.argmax(bad)), x.shape)})")


# ---------------------------------------------------------------------------------------------- e2m1
def decode_e2m1(codes: ArrayLike) -> F32:
    """4-bit e2m1 codes (0..15, one per uint8) -> float32 values."""
    return E2M1_VALUES[_as_codes(codes, 16, "decode_e2m1")]


def encode_e2m1(x: ArrayLike) -> U8:
    """float -> e2m1 codes (0..15), round to nearest even, finite overflow saturates to +-6
    (like `cvt.rn.satfinite.e2m1x2.f32`, the only PTX mode). NaN/Inf raise ValueError."""
    xf = _as_float(x)
    _reject_nan(xf, "encode_e2m1")
    return xf.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)


# ---------------------------------------------------------------------------------------------- e4m3 / UE4M3
def decode_e4m3(codes: ArrayLike) -> F32:
    """8-bit e4m3fn codes -> float32 (0x7F / 0xFF decode to NaN)."""
    return _as_codes(codes, 256, "decode_e4m3").view(ml_dtypes.float8_e4m3fn).astype(np.float32)


def encode_e4m3(x: ArrayLike, saturate: bool = False) -> U8:
    """float -> e4m3fn codes (RNE). |x| rounding above 448 raises unless saturate=True (then clamps to +-448).
    NaN/Inf raise ValueError."""
    xf = _as_float(x)
    _reject_nan(xf, "encode_e4m3")
    if saturate:
        xf = np.clip(xf, -UE4M3_MAX, UE4M3_MAX)
    codes = xf.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    over = (codes & 0x7F) == 0x7F  # finite input that ml_dtypes turned into NaN: overflow
    if np.any(over):
        raise ValueError(f"encode_e4m3: |x| > {UE4M3_MAX} overflows e4m3fn (e.g. {xf[over].flat[0]!r}); "
                         "pass saturate=True to clamp")
    return codes


def decode_ue4m3(codes: ArrayLike) -> F32:
    """UE4M3 scale codes (0..127; 0x7F is NaN) -> float32. Codes with the sign bit set are not UE4M3: ValueError."""
    c = _as_codes(codes, 256, "decode_ue4m3")
    if c.size and np.any(c & 0x80):
        raise ValueError("decode_ue4m3: code with sign bit set (>= 0x80) is not a UE4M3 value")
    return c.view(ml_dtypes.float8_e4m3fn).astype(np.float32)


def encode_ue4m3(x: ArrayLike, saturate: bool = False) -> U8:
    """float >= 0 -> UE4M3 codes (RNE). Negatives, NaN and Inf raise ValueError; -0.0 encodes as 0x00.
    Values rounding above 448 raise unless saturate=True."""
    xf = _as_float(x)
    _reject_nan(xf, "encode_ue4m3")
    if np.any(xf < 0):
        raise ValueError(f"encode_ue4m3: negative value {xf[xf < 0].flat[0]!r} cannot be a UE4M3 scale")
    return encode_e4m3(xf, saturate=saturate) & np.uint8(0x7F)  # & 0x7F maps -0.0 -> +0


# ---------------------------------------------------------------------------------------------- UE8M0
def decode_ue8m0(codes: ArrayLike) -> F32:
    """UE8M0 codes -> float32 value 2^(e-127); 0xFF -> NaN. (2^-127 is a float32 subnormal, still exact.)"""
    return _as_codes(codes, 256, "decode_ue8m0").view(ml_dtypes.float8_e8m0fnu).astype(np.float32)


def encode_ue8m0(x: ArrayLike) -> U8:
    """float > 0 -> UE8M0 codes (ml_dtypes rounding: nearest power of two, linear ties round up).
    Zero, negatives, NaN, Inf and values above 2^127 raise ValueError; below 2^-127 clamps to code 0."""
    xf = _as_float(x)
    _reject_nan(xf, "encode_ue8m0")
    if np.any(xf <= 0):
        raise ValueError("encode_ue8m0: UE8M0 has no zero or negative values")
    codes = xf.astype(ml_dtypes.float8_e8m0fnu).view(np.uint8)
    if np.any(codes == 0xFF):
        raise ValueError("encode_ue8m0: value above 2^127 overflows UE8M0")
    return codes


# ---------------------------------------------------------------------------------------------- e5m2
def decode_e5m2(codes: ArrayLike) -> F32:
    """8-bit e5m2 codes -> float32 (IEEE-like: Inf and NaN exist)."""
    return _as_codes(codes, 256, "decode_e5m2").view(ml_dtypes.float8_e5m2).astype(np.float32)


def encode_e5m2(x: ArrayLike, saturate: bool = False) -> U8:
    """float -> e5m2 codes (RNE; Inf stays Inf; finite overflow gives Inf unless saturate=True clamps to
    +-57344). NaN raises ValueError."""
    xf = _as_float(x)
    _reject_nan(xf, "encode_e5m2", inf_too=False)
    if saturate:
        xf = np.clip(xf, -57344.0, 57344.0)
    return xf.astype(ml_dtypes.float8_e5m2).view(np.uint8)


# ---------------------------------------------------------------------------------------------- FP4 packing
def pack_fp4(codes: ArrayLike) -> U8:
    """Pack e2m1 codes (last axis of even length 2n) into n bytes: byte i = codes[2i] | codes[2i+1] << 4."""
    c = _as_codes(codes, 16, "pack_fp4")
    if c.ndim == 0 or c.shape[-1] % 2:
        raise ValueError(f"pack_fp4: last axis must have even length, got shape {c.shape}")
    return (c[..., 0::2] | (c[..., 1::2] << 4)).astype(np.uint8)


def unpack_fp4(packed: ArrayLike) -> U8:
    """Inverse of pack_fp4: bytes (..., n) -> codes (..., 2n), low nibble first."""
    p = _as_codes(packed, 256, "unpack_fp4")
    if p.ndim == 0:
        raise ValueError("unpack_fp4: need at least one axis")
    out = np.empty(p.shape[:-1] + (2 * p.shape[-1],), dtype=np.uint8)
    out[..., 0::2] = p & 0x0F
    out[..., 1::2] = p >> 4
    return out


def decode_fp4x2(packed: ArrayLike) -> F32:
    """Packed fp4 bytes (..., n) -> float32 values (..., 2n)."""
    return E2M1_VALUES[unpack_fp4(packed)]
