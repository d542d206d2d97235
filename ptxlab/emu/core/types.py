"""PTX fundamental types (PTX ISA 5.2) and their numpy representations.

Registers are stored by bit width: .pred → bool, 8/16/32/64-bit → uint8/16/32/64.  An instruction type
(``.u32``, ``.f16`` ...) is a *view* of that storage.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

# instruction type name → numpy dtype used for arithmetic on values of that type
DTYPE: dict[str, np.dtype] = {
    "pred": np.dtype(np.bool_),
    "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.int16),
    "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.int32),
    "f32": np.dtype(np.float32), "f16x2": np.dtype(np.uint32), "bf16x2": np.dtype(np.uint32),
    "tf32": np.dtype(np.uint32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64),
    "f64": np.dtype(np.float64),
    # 128-bit registers (PTX ISA 5.2.1 .b128, PTX 8.3+): 16 raw little-endian bytes per thread; instructions view
    # them as (T, 2) uint64 (low word first) with b128_words / b128_from_words
    "b128": np.dtype("V16"),
}

# bit width of each type
BITS: dict[str, int] = {
    "pred": 1, "b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16,
    "b32": 32, "u32": 32, "s32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32, "tf32": 32,
    "b64": 64, "u64": 64, "s64": 64, "f64": 64, "b128": 128,
    # packed narrow float types used by cvt (PTX ISA 5.2.5.x)
    "e4m3x2": 16, "e5m2x2": 16, "e2m3x2": 16, "e3m2x2": 16, "e2m1x2": 8, "ue8m0x2": 16,
    "e4m3x4": 32, "e5m2x4": 32, "e2m1x4": 16,
}

STORAGE: dict[int, np.dtype] = {
    1: np.dtype(np.bool_), 8: np.dtype(np.uint8), 16: np.dtype(np.uint16),
    32: np.dtype(np.uint32), 64: np.dtype(np.uint64), 128: np.dtype("V16"),
}
UINT: dict[int, np.dtype] = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
                             64: np.dtype(np.uint64)}
SINT: dict[int, np.dtype] = {8: np.dtype(np.int8), 16: np.dtype(np.int16), 32: np.dtype(np.int32),
                             64: np.dtype(np.int64)}

TYPE_NAMES = frozenset(BITS)


def is_signed(ty: str) -> bool:
    return ty.startswith("s") and ty[1:].isdigit()


def is_float(ty: str) -> bool:
    return ty in ("f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "tf32")


def is_int(ty: str) -> bool:
    return ty[0] in "sub" and ty[1:].isdigit()


def storage_of(ty: str) -> np.dtype:
    return STORAGE[BITS[ty]]


def to_storage(val: np.ndarray, ty: str, storage: np.dtype) -> np.ndarray:
    """Convert a value array of instruction type ``ty`` to a register's storage dtype.

    Same width: reinterpret bits.  Narrower value into a wider register: sign-extend for .sN, zero-extend
    otherwise (PTX ISA 5.2.2 'operand size exceeding instruction-type size').  Wider value: truncate.
    """
    if storage == np.bool_:
        return np.asarray(val, dtype=np.bool_)
    val = np.asarray(val)
    if val.dtype == storage:
        return val
    if val.dtype.itemsize == storage.itemsize:
        return val.view(storage) if val.ndim else val.astype(val.dtype).view(storage)
    if val.dtype == np.bool_:
        return val.astype(storage)
    src_bits = val.dtype.itemsize * 8
    if val.dtype.kind == "f" or val.dtype == ml_dtypes.bfloat16:
        val = val.view(UINT[src_bits])
    if val.dtype.itemsize < storage.itemsize:
        if is_signed(ty):
            return val.astype(SINT[src_bits], copy=False).astype(SINT[storage.itemsize * 8]).view(storage)
        return val.view(UINT[src_bits]).astype(storage)
    return val.astype(storage)  # truncation of unsigned/signed ints keeps the low bits


def from_storage(arr: np.ndarray, ty: str) -> np.ndarray:
    """View a register's storage as instruction type ``ty`` (truncating or extending as PTX allows)."""
    dt = DTYPE[ty]
    if arr.dtype == dt:
        return arr
    if ty == "pred":
        return arr.astype(np.bool_)
    if arr.dtype == np.bool_:
        return arr.astype(dt)
    if arr.dtype.itemsize == dt.itemsize:
        return arr.view(dt)
    if arr.dtype.itemsize > dt.itemsize:  # e.g. ld/st/cvt of a narrower type from a wider register
        return arr.astype(UINT[dt.itemsize * 8]).view(dt)
    # wider type read from a narrower register: extend per the register's value
    return arr.astype(UINT[dt.itemsize * 8]).view(dt) if not is_signed(ty) else \
        arr.view(SINT[arr.dtype.itemsize * 8]).astype(dt)


B128 = np.dtype("V16")


def b128_words(v: np.ndarray) -> np.ndarray:
    """(T,) .b128 register values -> (T, 2) uint64 (word 0 = bits 0..63)."""
    v = np.ascontiguousarray(v)
    if v.dtype != B128:
        raise TypeError(f"expected a .b128 register value, got dtype {v.dtype}")
    return v.view(np.uint64).reshape(v.shape + (2,))


def b128_from_words(w: np.ndarray) -> np.ndarray:
    """(T, 2) uint64 (low word first) -> (T,) .b128 register values."""
    w = np.ascontiguousarray(w, dtype=np.uint64)
    return w.view(B128).reshape(w.shape[:-1])
