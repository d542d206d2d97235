"""Device tensors in the emulator's memory that DLPack consumers (``cute.runtime.from_dlpack``, torch, numpy) see as
CUDA tensors: the documented one-line replacement for ``device="cuda"`` tensors in a script run by ``lab.py exec``::

    a = torch.randn(m, k).to(torch.float16).cuda()      # on a GPU
    a = ptxlab.driver.tensor(torch.randn(m, k).to(torch.float16))   # on the emulator (numpy arrays work too)

``tensor(x)`` copies a host array (numpy, or anything with ``__array__`` / a CPU ``__dlpack__``) into a new device
allocation and returns an :class:`EmuTensor`: ``__dlpack__`` exports it as ``kDLCUDA`` device 0 (DLPack
``DLManagedTensor``, capsule ``"dltensor"``); ``.numpy()`` / ``.cpu()`` copy it back. Layout (shape and element
strides) is kept, so transposed / permuted views stay what they were.
"""
from __future__ import annotations

import ctypes
from typing import Any, Dict, Optional, Sequence

import numpy as np

__all__ = ["EmuTensor", "tensor", "empty", "DLPACK_DTYPES"]

kDLCUDA = 2


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]

# numpy dtype name -> DLPack (code, bits): kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6,
# kDLFloat8_e4m3fn 10, kDLFloat8_e5m2 12, kDLFloat8_e8m0fnu 14 (dlpack.h 1.1)
DLPACK_DTYPES = {
    "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
    "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64),
    "float16": (2, 16), "float32": (2, 32), "float64": (2, 64), "bfloat16": (4, 16), "bool": (6, 8),
    "float8_e4m3fn": (10, 8), "float8_e5m2": (12, 8), "float8_e8m0fnu": (14, 8),
}

_LIVE: Dict[int, tuple] = {}          # managed-tensor address -> the ctypes objects it points into


@_DELETER
def _delete(mt) -> None:
    _LIVE.pop(ctypes.addressof(mt.contents), None)


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class EmuTensor:
    """A tensor in the emulator's global memory (see the module docstring)."""

    def __init__(self, ptr: int, shape: Sequence[int], strides: Sequence[int], dtype: Any, nbytes: int) -> None:
        self.ptr, self.shape, self.strides = int(ptr), tuple(int(s) for s in shape), tuple(int(s) for s in strides)
        self.dtype = np.dtype(dtype)
        self.nbytes = int(nbytes)
        if self.dtype.name not in DLPACK_DTYPES:
            raise TypeError(f"ptxlab.driver.tensor: dtype {self.dtype} has no DLPack code here; use one of "
                            f"{sorted(DLPACK_DTYPES)} (or a uint8 view of packed data)")

    def data_ptr(self) -> int:
        return self.ptr

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __dlpack_device__(self):
        return (kDLCUDA, 0)

    def __dlpack__(self, stream: Optional[int] = None, max_version=None, dl_device=None, copy=None):
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(n, 1))(*self.strides)
        code, bits = DLPACK_DTYPES[self.dtype.name]
        mt = _DLManagedTensor()
        mt.dl_tensor = _DLTensor(self.ptr, _DLDevice(kDLCUDA, 0), n, _DLDataType(code, bits, 1),
                                 ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)),
                                 ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)), 0)
        mt.manager_ctx = None
        mt.deleter = _delete
        _LIVE[ctypes.addressof(mt)] = (mt, shape, strides, self)
        return _PyCapsule_New(ctypes.addressof(mt), b"dltensor", None)

    def numpy(self) -> np.ndarray:
        """A host copy with the same shape and strides."""
        from ptxlab.driver.install import state
        raw = np.frombuffer(bytearray(state().dev._read(self.ptr, self.nbytes)), dtype=np.uint8)
        return np.lib.stride_tricks.as_strided(raw.view(self.dtype), self.shape,
                                               [s * self.dtype.itemsize for s in self.strides]).copy()

    cpu = numpy

    def __repr__(self) -> str:
        return f"EmuTensor(shape={self.shape}, strides={self.strides}, dtype={self.dtype}, ptr=0x{self.ptr:x})"


def _host_array(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    mod = type(x).__module__
    if mod.startswith("torch"):
        if x.device.type != "cpu":
            raise TypeError("ptxlab.driver.tensor: pass a CPU torch tensor (under lab.py exec there is no CUDA torch)")
        if str(x.dtype) == "torch.bfloat16":
            import ml_dtypes
            return x.view(__import__("torch").int16).numpy().view(ml_dtypes.bfloat16)
        if "float8" in str(x.dtype) or "float4" in str(x.dtype):
            return x.view(__import__("torch").uint8).numpy()
        return x.numpy()
    return np.asarray(x)


def _alloc(nbytes: int) -> int:
    from ptxlab.driver.api_memory import alloc
    from ptxlab.driver.install import install
    s = install().state
    s.ensure_primary()
    return alloc(s, max(nbytes, 1), "ptxlab.driver.tensor")


def tensor(x: Any, align: int = 256) -> EmuTensor:
    """Copy a host array into emulator device memory (same shape, element strides and dtype)."""
    from ptxlab.driver.install import install
    a = _host_array(x)
    itemsize = a.dtype.itemsize
    strides = [s // itemsize for s in a.strides]
    if any(s < 0 for s in strides):
        a = np.ascontiguousarray(a)
        strides = [s // itemsize for s in a.strides]
    span = 1 + sum((d - 1) * s for d, s in zip(a.shape, strides)) if a.size else 0
    lo = min([0] + [(d - 1) * s for d, s in zip(a.shape, strides) if s < 0])
    nbytes = span * itemsize
    ptr = _alloc(nbytes)
    base = np.lib.stride_tricks.as_strided(a, (span,), (itemsize,)) if a.size else a.reshape(-1)
    if lo == 0 and a.size:
        flat = np.ascontiguousarray(base)
        install().state.dev._write(ptr, flat.view(np.uint8).tobytes())
    return EmuTensor(ptr, a.shape, strides, a.dtype, nbytes)


def empty(shape: Sequence[int], dtype: Any) -> EmuTensor:
    """A new row-major device tensor, its bytes poisoned (the emulator's fill for fresh allocations)."""
    dt = np.dtype(dtype)
    shape = tuple(int(s) for s in shape)
    strides, acc = [], 1
    for d in reversed(shape):
        strides.insert(0, acc)
        acc *= d
    nbytes = acc * dt.itemsize
    return EmuTensor(_alloc(nbytes), shape, strides, dt, nbytes)
