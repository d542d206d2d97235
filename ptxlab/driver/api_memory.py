"""Device memory: allocation, copies and fills (CUDA Driver API 6.11 "Memory Management").

Device pointers are the emulator's global addresses (``ptxlab.emu.core.memory.GLOBAL_BASE`` + offset); every copy
and fill must lie inside one live allocation, otherwise the call fails with a line naming the nearest allocation
(where a GPU would fault or corrupt memory). Asynchronous variants complete before they return (streams are
ordered and the emulator runs each launch to completion, so this is an allowed schedule).
"""
from __future__ import annotations

import ctypes

import numpy as np

from ptxlab.driver.calls import CUresult, DriverError, call

__all__ = ["device_range", "alloc", "free"]


def device_range(s, ptr: int, n: int, what: str) -> None:
    """[ptr, ptr + n) must lie inside one live allocation of the emulator."""
    from ptxlab.emu.core.memory import GLOBAL_BASE
    heap = s.dev.heap
    off = ptr - GLOBAL_BASE
    a = heap.find(off) if off >= 0 else None
    if a is None or off + n > a.start + a.size:
        if a is not None:
            where = (f"it runs {off + n - a.start - a.size} bytes past the end of {a.label} ({a.size} bytes at "
                     f"0x{GLOBAL_BASE + a.start:x})")
        else:
            where = heap.nearest(off) if off >= 0 else "below every allocation"
        raise DriverError(CUresult.INVALID_VALUE, f"{what}: device range 0x{ptr:x} + {n} bytes is not inside one "
                                                  f"allocation ({where}); check the pointer and size")


def is_device(s, ptr: int) -> bool:
    from ptxlab.emu.core.memory import GLOBAL_BASE
    off = ptr - GLOBAL_BASE
    return off >= 0 and s.dev.heap.find(off) is not None


def alloc(s, nbytes: int, what: str) -> int:
    s.need_context(what)
    if nbytes == 0:
        raise DriverError(CUresult.INVALID_VALUE, f"{what}(0): the size must be > 0")
    buf = s.dev.empty(nbytes)
    s.buffers[buf.ptr] = buf
    return buf.ptr


def free(s, ptr: int, what: str) -> None:
    if ptr == 0:
        return
    buf = s.buffers.pop(ptr, None)
    if buf is None:
        raise DriverError(CUresult.INVALID_VALUE, f"{what}(0x{ptr:x}): not the start of an allocation of this layer "
                                                  "(freed twice, or an offset into one)")
    s.dev.free(buf)


@call("cuMemAlloc_v2", "cuMemAlloc", "cuMemAllocAsync", "cuMemAllocAsync_ptsz")
def cu_mem_alloc(s, a):
    a.out(0, alloc(s, a[1], "cuMemAlloc"))


@call("cuMemFree_v2", "cuMemFree", "cuMemFreeAsync", "cuMemFreeAsync_ptsz")
def cu_mem_free(s, a):
    free(s, a[0], "cuMemFree")


def _htod(s, dst: int, src: int, n: int, what: str) -> None:
    device_range(s, dst, n, what)
    if n:
        s.dev._write(dst, ctypes.string_at(src, n))


def _dtoh(s, dst: int, src: int, n: int, what: str) -> None:
    device_range(s, src, n, what)
    if n:
        data = s.dev._read(src, n)
        ctypes.memmove(dst, data, n)


def _dtod(s, dst: int, src: int, n: int, what: str) -> None:
    device_range(s, src, n, what)
    device_range(s, dst, n, what)
    if n:
        s.dev._write(dst, s.dev._read(src, n))


@call("cuMemcpyHtoD_v2", "cuMemcpyHtoD", "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2_ptsz")
def cu_memcpy_htod(s, a):
    _htod(s, a[0], a[1], a[2], "cuMemcpyHtoD")


@call("cuMemcpyDtoH_v2", "cuMemcpyDtoH", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2_ptsz")
def cu_memcpy_dtoh(s, a):
    _dtoh(s, a[0], a[1], a[2], "cuMemcpyDtoH")


@call("cuMemcpyDtoD_v2", "cuMemcpyDtoD", "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2_ptsz")
def cu_memcpy_dtod(s, a):
    _dtod(s, a[0], a[1], a[2], "cuMemcpyDtoD")


@call("cuMemcpy", "cuMemcpyAsync", "cuMemcpy_ptds", "cuMemcpyAsync_ptsz")
def cu_memcpy(s, a):
    """Unified addressing: the direction follows from which pointers are device allocations."""
    dst, src, n = a[0], a[1], a[2]
    d, h = is_device(s, dst), is_device(s, src)
    if d and h:
        _dtod(s, dst, src, n, "cuMemcpy")
    elif d:
        _htod(s, dst, src, n, "cuMemcpy")
    elif h:
        _dtoh(s, dst, src, n, "cuMemcpy")
    else:
        ctypes.memmove(dst, src, n)


def _fill(s, ptr: int, value: int, count: int, width: int, what: str) -> None:
    device_range(s, ptr, count * width, what)
    if count:
        pattern = np.full(count, value, dtype={1: np.uint8, 2: np.uint16, 4: np.uint32}[width])
        s.dev._write(ptr, pattern.tobytes())


@call("cuMemsetD8_v2", "cuMemsetD8", "cuMemsetD8Async", "cuMemsetD8Async_ptsz")
def cu_memset_d8(s, a):
    _fill(s, a[0], a[1] & 0xFF, a[2], 1, "cuMemsetD8")


@call("cuMemsetD16_v2", "cuMemsetD16", "cuMemsetD16Async", "cuMemsetD16Async_ptsz")
def cu_memset_d16(s, a):
    _fill(s, a[0], a[1] & 0xFFFF, a[2], 2, "cuMemsetD16")


@call("cuMemsetD32_v2", "cuMemsetD32", "cuMemsetD32Async", "cuMemsetD32Async_ptsz")
def cu_memset_d32(s, a):
    _fill(s, a[0], a[1] & 0xFFFFFFFF, a[2], 4, "cuMemsetD32")


@call("cuMemGetInfo_v2", "cuMemGetInfo")
def cu_mem_get_info(s, a):
    from ptxlab.driver.device_table import TOTAL_MEM
    used = sum(b.nbytes for b in s.buffers.values())
    a.out(0, TOTAL_MEM - used)
    a.out(1, TOTAL_MEM)


@call("cuMemGetAddressRange_v2", "cuMemGetAddressRange")
def cu_mem_get_address_range(s, a):
    from ptxlab.emu.core.memory import GLOBAL_BASE
    off = a[2] - GLOBAL_BASE
    al = s.dev.heap.find(off) if off >= 0 else None
    if al is None:
        raise DriverError(CUresult.NOT_FOUND, f"cuMemGetAddressRange(0x{a[2]:x}): not inside an allocation")
    if a[0]:
        a.out(0, GLOBAL_BASE + al.start)
    if a[1]:
        a.out(1, al.size)
