"""Initialisation, version, entry points, errors, device and context calls (CUDA Driver API 6.2-6.8).

One device (ordinal 0, ``device_table``); contexts are bookkeeping only (the emulator has one address space), but
calls that need a current context refuse without one, as the driver does.
"""
from __future__ import annotations

import ctypes

from ptxlab.driver import device_table as D
from ptxlab.driver.calls import CUresult, DriverError, call

DRIVER_VERSION = 13000        # what cuDriverGetVersion reports: the CUDA 13.0 driver API the layer follows


def _enum_name(enum_type: str, value: int) -> str:
    try:
        from cuda.bindings import driver
        return getattr(driver, enum_type)(value).name
    except Exception:           # noqa: BLE001 - an unknown value: name it by number
        return f"{enum_type}({value})"


@call("cuInit")
def cu_init(s, a):
    if a.u32(0) != 0:
        raise DriverError(CUresult.INVALID_VALUE, f"cuInit(flags={a.u32(0)}): flags must be 0")
    s.initialized = True


@call("cuDriverGetVersion")
def cu_driver_get_version(s, a):
    a.out(0, DRIVER_VERSION, ctypes.c_int)


@call("cuGetProcAddress_v2", "cuGetProcAddress")
def cu_get_proc_address(s, a):
    """cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus): every name resolves (the ones no table
    implements to a slot that fails naming itself when called)."""
    name = a.cstr(0)
    addr = s.resolver(name, a.i32(2), a[3])
    a.out(1, addr)
    if a[4]:
        a.out(4, 0, ctypes.c_int)            # CU_GET_PROC_ADDRESS_SUCCESS


_ERROR_NAMES = {v: k for k, v in vars(CUresult).items() if not k.startswith("_")}


def _error_text(code: int):
    name = _ERROR_NAMES.get(code)
    return (f"CUDA_ERROR_{name}" if name and name != "SUCCESS" else "CUDA_SUCCESS" if code == 0 else None)


_STRINGS: dict = {}


def _static_cstr(text: str) -> int:
    buf = _STRINGS.get(text)
    if buf is None:
        buf = _STRINGS[text] = ctypes.create_string_buffer(text.encode())
    return ctypes.addressof(buf)


@call("cuGetErrorName")
def cu_get_error_name(s, a):
    text = _error_text(a.u32(0)) or _enum_name("CUresult", a.u32(0))
    a.out(1, _static_cstr(text))


@call("cuGetErrorString")
def cu_get_error_string(s, a):
    code = a.u32(0)
    base = _error_text(code) or _enum_name("CUresult", code)
    text = base if s.last_error is None or code == 0 else f"{base}: {s.last_error}"
    a.out(1, _static_cstr(text))


@call("cuDeviceGetCount")
def cu_device_get_count(s, a):
    s.need_init("cuDeviceGetCount")
    a.out(0, 1, ctypes.c_int)


def _ordinal(a, i: int, name: str) -> int:
    d = a.i32(i)
    if d != 0:
        raise DriverError(CUresult.INVALID_VALUE if name == "cuDeviceGet" else CUresult.INVALID_HANDLE,
                          f"{name}: device {d} does not exist (the emulator is device 0 only)")
    return d


@call("cuDeviceGet")
def cu_device_get(s, a):
    s.need_init("cuDeviceGet")
    _ordinal(a, 1, "cuDeviceGet")
    a.out(0, 0, ctypes.c_int)


@call("cuDeviceGetName")
def cu_device_get_name(s, a):
    _ordinal(a, 2, "cuDeviceGetName")
    n = a.i32(1)
    data = D.NAME.encode()[: max(n - 1, 0)] + b"\0"
    ctypes.memmove(a[0], data, len(data))


@call("cuDeviceTotalMem_v2", "cuDeviceTotalMem")
def cu_device_total_mem(s, a):
    _ordinal(a, 1, "cuDeviceTotalMem")
    a.out(0, D.TOTAL_MEM)


@call("cuDeviceGetUuid_v2", "cuDeviceGetUuid")
def cu_device_get_uuid(s, a):
    _ordinal(a, 1, "cuDeviceGetUuid")
    ctypes.memmove(a[0], b"ptxlab-emulator\0", 16)


@call("cuDeviceComputeCapability")
def cu_device_compute_capability(s, a):
    _ordinal(a, 2, "cuDeviceComputeCapability")
    a.out(0, D.CC[0], ctypes.c_int)
    a.out(1, D.CC[1], ctypes.c_int)


@call("cuDeviceGetAttribute")
def cu_device_get_attribute(s, a):
    s.need_init("cuDeviceGetAttribute")
    _ordinal(a, 2, "cuDeviceGetAttribute")
    full = _enum_name("CUdevice_attribute", a.i32(1))
    name = full.removeprefix("CU_DEVICE_ATTRIBUTE_")
    try:
        value = D.attribute_value(name)
    except KeyError:
        raise DriverError(CUresult.INVALID_VALUE, f"cuDeviceGetAttribute({full}): the emulated device has no value "
                                                  "for this attribute (ptxlab/driver/device_table.py)") from None
    a.out(0, value, ctypes.c_int)


# ---------------------------------------------------------------------------------------------- contexts
@call("cuDevicePrimaryCtxRetain")
def cu_primary_retain(s, a):
    s.need_init("cuDevicePrimaryCtxRetain")
    _ordinal(a, 1, "cuDevicePrimaryCtxRetain")
    cur = s.current_ctx
    ctx = s.ensure_primary()
    s.current_ctx = cur               # retaining does not make it current
    a.out(0, ctx)


@call("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease")
def cu_primary_release(s, a):
    _ordinal(a, 0, "cuDevicePrimaryCtxRelease")


@call("cuDevicePrimaryCtxGetState")
def cu_primary_get_state(s, a):
    _ordinal(a, 0, "cuDevicePrimaryCtxGetState")
    a.out(1, 0, ctypes.c_uint)
    a.out(2, int(s.primary_ctx is not None), ctypes.c_int)


@call("cuDevicePrimaryCtxSetFlags_v2", "cuDevicePrimaryCtxSetFlags")
def cu_primary_set_flags(s, a):
    _ordinal(a, 0, "cuDevicePrimaryCtxSetFlags")


@call("cuCtxCreate_v2", "cuCtxCreate")
def cu_ctx_create(s, a):
    """cuCtxCreate_v2(pctx, flags, dev)."""
    s.need_init("cuCtxCreate")
    _ordinal(a, 2, "cuCtxCreate")
    s.current_ctx = s.new_handle("context", {"device": 0, "primary": False})
    a.out(0, s.current_ctx)


@call("cuCtxCreate_v4")
def cu_ctx_create_v4(s, a):
    """cuCtxCreate_v4(pctx, CUctxCreateParams *params, flags, dev): execution-affinity / CIG params unsupported."""
    s.need_init("cuCtxCreate")
    _ordinal(a, 3, "cuCtxCreate")
    if a[1]:
        raw = ctypes.string_at(a[1], 24)
        if any(raw):
            raise DriverError(CUresult.NOT_SUPPORTED, "cuCtxCreate_v4: CUctxCreateParams (execution affinity, CIG) "
                                                      "are not supported by the emulator; pass NULL")
    s.current_ctx = s.new_handle("context", {"device": 0, "primary": False})
    a.out(0, s.current_ctx)


@call("cuCtxDestroy_v2", "cuCtxDestroy")
def cu_ctx_destroy(s, a):
    s.release(a[0], "context", what="cuCtxDestroy")
    if s.current_ctx == a[0]:
        s.current_ctx = None
    if s.primary_ctx == a[0]:
        s.primary_ctx = None


@call("cuCtxGetCurrent")
def cu_ctx_get_current(s, a):
    s.need_init("cuCtxGetCurrent")
    a.out(0, s.current_ctx or 0)


@call("cuCtxSetCurrent", "cuCtxPushCurrent_v2", "cuCtxPushCurrent")
def cu_ctx_set_current(s, a):
    s.need_init("cuCtxSetCurrent")
    if a[0]:
        s.get(a[0], "context", what="cuCtxSetCurrent")
    s.current_ctx = a[0] or None


@call("cuCtxPopCurrent_v2", "cuCtxPopCurrent")
def cu_ctx_pop_current(s, a):
    s.need_context("cuCtxPopCurrent")
    if a[0]:
        a.out(0, s.current_ctx)
    s.current_ctx = None


@call("cuCtxGetDevice", "cuCtxGetDevice_v2")
def cu_ctx_get_device(s, a):
    s.need_context("cuCtxGetDevice")
    a.out(0, 0, ctypes.c_int)


@call("cuCtxGetApiVersion")
def cu_ctx_get_api_version(s, a):
    a.out(1, DRIVER_VERSION, ctypes.c_uint)


@call("cuCtxSetLimit", "cuCtxSetCacheConfig", "cuCtxSetSharedMemConfig")
def cu_ctx_settings(s, a):
    """Launch-resource hints with no effect on the emulator (stack, printf FIFO, cache split): accepted."""
    s.need_context("cuCtxSetLimit")
