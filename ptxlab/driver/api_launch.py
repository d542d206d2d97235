"""Launches, streams and events (CUDA Driver API 6.22 "Execution Control", 6.15 "Stream Management",
6.16 "Event Management").

A launch runs to completion on the emulator before the call returns (``ptxlab.device.base.Device.launch``: the same
geometry, shared-memory and cluster rules as ``dev.launch``). Streams are therefore ordered queues that are always
empty: creating, waiting on and synchronising them succeed at once; events record the host time of the point in the
stream they mark. Launch attributes (``CUlaunchAttribute``, 72 bytes: id at 0, value union at 8) that change what a
kernel computes are applied (cluster dimension, programmatic stream serialisation, cooperative); scheduling hints
are accepted; ``PREFERRED_CLUSTER_DIMENSION`` is accepted and the launch uses the required (fallback) cluster shape,
which the CUDA Programming Guide allows the driver to choose ("Launch with Preferred Cluster Dimension"); anything
else is refused with a line naming it. During a graph capture (``state.capture``, torch_cuda.py's ``CUDAGraph``)
launches are recorded with their parameter bytes and run at replay.
"""
from __future__ import annotations

import ctypes
import struct

from ptxlab.driver.api_module import DEFAULT_DYNAMIC_SMEM, attr_name, get_function
from ptxlab.driver.calls import CUresult, DriverError, call
from ptxlab.errors import DeviceUnavailable, EmuError, LaunchError, PtxlabError

__all__ = ["launch", "parse_attrs"]

_ATTR_SIZE = 72
_HINTS = {"ACCESS_POLICY_WINDOW", "SYNCHRONIZATION_POLICY", "CLUSTER_SCHEDULING_POLICY_PREFERENCE", "PRIORITY",
          "MEM_SYNC_DOMAIN_MAP", "MEM_SYNC_DOMAIN", "PREFERRED_SHARED_MEMORY_CARVEOUT", "LAUNCH_COMPLETION_EVENT",
          "DEVICE_UPDATABLE_KERNEL_NODE", "PREFERRED_CLUSTER_DIMENSION"}
# CU_LAUNCH_PARAM_* markers of cuLaunchKernel's ``extra`` array
_PARAM_END, _PARAM_BUFFER_POINTER, _PARAM_BUFFER_SIZE = 0, 1, 2


def _launch_attr_name(value: int) -> str:
    try:
        from cuda.bindings import driver
        return driver.CUlaunchAttributeID(value).name.removeprefix("CU_LAUNCH_ATTRIBUTE_")
    except Exception:           # noqa: BLE001
        return f"CUlaunchAttributeID({value})"


def parse_attrs(ptr: int, n: int, what: str) -> dict:
    """{'cluster': (x, y, z) | None, 'pdl': bool, 'cooperative': bool} from a CUlaunchAttribute array."""
    out = {"cluster": None, "pdl": False, "cooperative": False}
    for i in range(n):
        raw = ctypes.string_at(ptr + i * _ATTR_SIZE, _ATTR_SIZE)
        aid, = struct.unpack_from("<I", raw, 0)
        name = _launch_attr_name(aid)
        if name == "CLUSTER_DIMENSION":
            dims = struct.unpack_from("<3I", raw, 8)
            out["cluster"] = dims
        elif name == "PROGRAMMATIC_STREAM_SERIALIZATION":
            out["pdl"] = bool(struct.unpack_from("<i", raw, 8)[0])
        elif name == "COOPERATIVE":
            out["cooperative"] = bool(struct.unpack_from("<i", raw, 8)[0])
        elif name == "PROGRAMMATIC_EVENT":
            raise DriverError(CUresult.NOT_SUPPORTED, f"{what}: launch attribute PROGRAMMATIC_EVENT is not supported "
                                                      "by the emulator (use PROGRAMMATIC_STREAM_SERIALIZATION)")
        elif name not in _HINTS:
            raise DriverError(CUresult.NOT_SUPPORTED, f"{what}: launch attribute {name} is not supported by the "
                                                      "emulator's driver layer")
    return out


def _param_bytes(s, f, layout, params: int, extra: int, what: str) -> list:
    if params:
        ptrs = (ctypes.c_void_p * max(len(layout), 1)).from_address(params)
        return [ctypes.string_at(ptrs[i], p.size) for i, p in enumerate(layout)]
    if not layout:
        return []
    if not extra:
        raise DriverError(CUresult.INVALID_VALUE, f"{what} of {f.name}: the kernel takes {len(layout)} parameters "
                                                  "but kernelParams and extra are both NULL")
    buf, size, i = 0, None, 0
    while True:
        key = ctypes.c_void_p.from_address(extra + 8 * i).value or 0
        if key == _PARAM_END:
            break
        val = ctypes.c_void_p.from_address(extra + 8 * i + 8).value or 0
        if key == _PARAM_BUFFER_POINTER:
            buf = val
        elif key == _PARAM_BUFFER_SIZE:
            size = ctypes.c_size_t.from_address(val).value
        else:
            raise DriverError(CUresult.INVALID_VALUE, f"{what}: unknown key {key} in the extra array")
        i += 2
    from ptxlab.device.args import pack_params
    _, offsets = pack_params(layout, [bytes(p.size) for p in layout], f.name)
    need = offsets[-1] + layout[-1].size
    if not buf or size is None or size < need:
        raise DriverError(CUresult.INVALID_VALUE, f"{what} of {f.name}: the extra parameter buffer holds {size} "
                                                  f"bytes, the parameters need {need}")
    raw = ctypes.string_at(buf, need)
    return [raw[o:o + p.size] for o, p in zip(offsets, layout)]


def launch(s, handle: int, grid, block, smem: int, params: int, extra: int, attrs: dict, what: str) -> None:
    """Run one kernel launch on the emulator (all checks of ``Device.launch`` plus the driver's own)."""
    s.need_context(what)
    f = get_function(s, handle, what)
    layout = s.dev.param_layout(f.image, f.name)
    args = _param_bytes(s, f, layout, params, extra, what)
    limit = next((v for k, v in f.attrs.items() if attr_name(k) == "MAX_DYNAMIC_SHARED_SIZE_BYTES"),
                 DEFAULT_DYNAMIC_SMEM)
    if smem > limit:
        raise DriverError(CUresult.INVALID_VALUE,
                          f"{what} of {f.name}: {smem} bytes of dynamic shared memory exceed the kernel's limit of "
                          f"{limit} (set CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first, as on a GPU)")
    if s.capture is not None:
        s.capture.append(lambda: _run(s, f, grid, block, smem, args, attrs, what))
        return
    _run(s, f, grid, block, smem, args, attrs, what)


def _run(s, f, grid, block, smem, args, attrs, what: str) -> None:
    s.last_launch = (f.name, args)
    non_portable = any(attr_name(k) == "NON_PORTABLE_CLUSTER_SIZE_ALLOWED" and v for k, v in f.attrs.items())
    for before, _ in s.launch_hooks:
        before()
    try:
        s.dev.launch(f.image, f.name, grid=grid, block=block, args=args, shared_bytes=smem,
                     cluster=attrs.get("cluster"), non_portable_cluster=non_portable and attrs.get("cluster") is not None,
                     pdl=attrs.get("pdl", False))
        for _, after in s.launch_hooks:
            after()
    except EmuError:
        raise
    except (LaunchError, DeviceUnavailable) as e:
        raise DriverError(CUresult.INVALID_VALUE, f"{what}: {e}") from None
    except PtxlabError:
        raise
    s.launches += 1


@call("cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz")
def cu_launch_kernel(s, a):
    """cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sharedMemBytes, hStream, kernelParams, extra)."""
    s.need_stream(a[8], "cuLaunchKernel")
    launch(s, a[0], (a.u32(1), a.u32(2), a.u32(3)), (a.u32(4), a.u32(5), a.u32(6)), a.u32(7), a[9], a[10], {},
           "cuLaunchKernel")


@call("cuLaunchKernelEx", "cuLaunchKernelEx_ptsz")
def cu_launch_kernel_ex(s, a):
    """cuLaunchKernelEx(const CUlaunchConfig *config, f, kernelParams, extra); CUlaunchConfig: grid[3], block[3],
    sharedMemBytes (u32) at 24, hStream at 32, attrs at 40, numAttrs at 48."""
    cfg = ctypes.string_at(a[0], 56)
    gx, gy, gz, bx, by, bz, smem = struct.unpack_from("<7I", cfg, 0)
    attrs_ptr, = struct.unpack_from("<Q", cfg, 40)
    n_attrs, = struct.unpack_from("<I", cfg, 48)
    attrs = parse_attrs(attrs_ptr, n_attrs, "cuLaunchKernelEx")
    s.need_stream(struct.unpack_from("<Q", cfg, 32)[0], "cuLaunchKernelEx")
    launch(s, a[1], (gx, gy, gz), (bx, by, bz), smem, a[2], a[3], attrs, "cuLaunchKernelEx")


# --------------------------------------------------------------------------------------------- synchronisation
@call("cuCtxSynchronize")
def cu_synchronize(s, a):
    """Every launch and copy already completed when its call returned."""


@call("cuStreamSynchronize", "cuStreamSynchronize_ptsz", "cuStreamQuery", "cuStreamQuery_ptsz")
def cu_stream_synchronize(s, a):
    """As cuCtxSynchronize, for a stream that exists."""
    s.need_stream(a[0], a.name)


@call("cuStreamCreate", "cuStreamCreateWithPriority")
def cu_stream_create(s, a):
    s.need_context("cuStreamCreate")
    a.out(0, s.new_handle("stream", {}))


@call("cuStreamDestroy_v2", "cuStreamDestroy")
def cu_stream_destroy(s, a):
    s.release(a[0], "stream", what="cuStreamDestroy")


@call("cuStreamWaitEvent", "cuStreamWaitEvent_ptsz")
def cu_stream_wait_event(s, a):
    s.get(a[1], "event", what="cuStreamWaitEvent")


@call("cuEventCreate")
def cu_event_create(s, a):
    s.need_context("cuEventCreate")
    a.out(0, s.new_handle("event", {"t": None}))


@call("cuEventRecord", "cuEventRecord_ptsz", "cuEventRecordWithFlags", "cuEventRecordWithFlags_ptsz")
def cu_event_record(s, a):
    s.get(a[0], "event", what="cuEventRecord")["t"] = s.now_ms()


@call("cuEventSynchronize", "cuEventQuery")
def cu_event_synchronize(s, a):
    s.get(a[0], "event", what="cuEventSynchronize")


@call("cuEventElapsedTime", "cuEventElapsedTime_v2")
def cu_event_elapsed_time(s, a):
    """Host milliseconds between the two records: emulator time, not a GPU's (use ``lab.py time`` for that)."""
    t0 = s.get(a[1], "event", what="cuEventElapsedTime")["t"]
    t1 = s.get(a[2], "event", what="cuEventElapsedTime")["t"]
    if t0 is None or t1 is None:
        raise DriverError(CUresult.INVALID_HANDLE, "cuEventElapsedTime: an event was never recorded")
    a.out(0, t1 - t0, ctypes.c_float)


@call("cuEventDestroy_v2", "cuEventDestroy")
def cu_event_destroy(s, a):
    s.release(a[0], "event", what="cuEventDestroy")
