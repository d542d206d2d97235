"""``cuTensorMapEncodeTiled`` (CUDA Driver API 6.31 "Tensor Map Object Management"): the arguments go through
``ptxlab.tensormap``'s validation (a bad map fails with ptxlab's rule text, where the driver would return
CUDA_ERROR_INVALID_VALUE) and the 128 bytes written are the emulator's tensor-map image (ptx_docs/tensor_maps.md).
The map must also lie inside one allocation, as ``dev.tensor_map`` requires.
"""
from __future__ import annotations

import ctypes

from ptxlab.driver.api_memory import device_range
from ptxlab.driver.calls import CUresult, DriverError, call
from ptxlab.errors import TensorMapError

__all__ = ["encode_tiled"]


def _codes(table: dict, code: int, what: str) -> str:
    for k, v in table.items():
        if v == code:
            return k
    raise DriverError(CUresult.INVALID_VALUE, f"cuTensorMapEncodeTiled: {what} code {code} is not a valid enum value")


def encode_tiled(s, out_ptr: int, dtype: int, rank: int, addr: int, dims: int, strides: int, box: int, estr: int,
                 interleave: int, swizzle: int, l2: int, oob: int) -> None:
    from ptxlab import tensormap as T
    what = "cuTensorMapEncodeTiled"
    if not 1 <= rank <= 5:
        raise DriverError(CUresult.INVALID_VALUE, f"{what}: tensorRank {rank} must be 1..5")
    if not out_ptr:      # (host copies need not be 64-byte aligned: cuda-python's are not; kernels' are, checked at use)
        raise DriverError(CUresult.INVALID_VALUE, f"{what}: the CUtensorMap pointer is NULL")
    u64 = lambda p, n: list((ctypes.c_uint64 * n).from_address(p)) if n else []  # noqa: E731
    u32 = lambda p, n: list((ctypes.c_uint32 * n).from_address(p)) if n else []  # noqa: E731
    try:
        spec = T.TensorMapSpec.make(
            _codes(T.DTYPE_CODES, dtype, "tensorDataType"), addr, u64(dims, rank), u64(strides, rank - 1),
            u32(box, rank), u32(estr, rank), interleave=_codes(T.INTERLEAVE_CODES, interleave, "interleave"),
            swizzle=_codes(T.SWIZZLE_CODES, swizzle, "swizzle"), l2_promotion=_codes(T.L2_PROMOTION_CODES, l2, "l2Promotion"),
            oob_fill=_codes(T.OOB_FILL_CODES, oob, "oobFill"))
        spec.validate()
        if spec.interleave != "none":
            raise TensorMapError(f"tensor map: interleave={spec.interleave!r} is not supported by ptxlab devices; "
                                 "use interleave none")
    except TensorMapError as e:
        raise DriverError(CUresult.INVALID_VALUE, f"{what}: {e}") from None
    device_range(s, spec.global_address, spec.gmem_extent(), f"{what} (the tensor's global memory)")
    ctypes.memmove(out_ptr, T.encode_emu(spec), 128)


@call("cuTensorMapEncodeTiled")
def cu_tensor_map_encode_tiled(s, a):
    encode_tiled(s, a[0], a.u32(1), a.u32(2), a[3], a[4], a[5], a[6], a[7], a.u32(8), a.u32(9), a.u32(10), a.u32(11))
