"""The CuTe DSL runtime's entry points (``libcute_dsl_runtime.so``), served over the driver calls of this package.

The DSL's JIT-compiled host code calls ``_cuda*`` / ``_cu*`` symbols of its runtime library; in NVIDIA's library
they are thin wrappers of the CUDA runtime (``_cudaLaunchKernelEx`` jumps to ``cudaLaunchKernelExC``, so each has
the runtime function's signature) and of driver entry points. ``lab.py exec`` points ``CUTE_DSL_LIBS`` at the
stand-in library, which exports these names too; here each is translated to the driver call it stands for, with
the runtime's implicit initialisation (primary context of device 0). ``RUNTIME_EXPORTS`` lists every name the real
library exports: the ones without a handler fail, if called, with a line naming them.
"""
from __future__ import annotations

import ctypes
import struct

from ptxlab.driver.api_launch import launch, parse_attrs
from ptxlab.driver.api_module import set_function_attribute, get_function
from ptxlab.driver.calls import HANDLERS, Args, CUresult, DriverError, call

__all__ = ["RUNTIME_EXPORTS"]

RUNTIME_EXPORTS = (
    "CuteDSLRT_Function_Run CuteDSLRT_GetErrorName CuteDSLRT_GetErrorString CuteDSLRT_Module_Create_From_Bytes "
    "CuteDSLRT_Module_Destroy CuteDSLRT_Module_Get_Function CuteDSLRT_TVMFFISetRaisedCudaError "
    "CuteDSLRT_TVMFFISetRaisedCudaLaunchError _cuDeviceGet _cuKernelGetAttribute _cuLibraryGetGlobal "
    "_cuLibraryGetKernel _cuLibraryGetKernelCount _cuLibraryGetManaged _cuLibraryGetModule "
    "_cuLibraryGetUnifiedFunction _cuLibraryLoadData _cuLibraryLoadFromFile _cuLibraryUnload _cuTensorMapEncodeTiled "
    "_cudaDeviceGetAttribute _cudaDeviceSynchronize _cudaEventCreate _cudaEventDestroy _cudaEventElapsedTime "
    "_cudaEventRecord _cudaFree _cudaFreeAsync _cudaFreeHost _cudaFuncSetAttribute _cudaGetDevice _cudaGetDeviceCount "
    "_cudaGetDeviceProperties _cudaGraphDestroy _cudaGraphExecDestroy _cudaGraphInstantiate _cudaGraphLaunch "
    "_cudaKernelSetAttributeForDevice _cudaLaunchKernel _cudaLaunchKernelEx _cudaLibraryGetGlobal "
    "_cudaLibraryGetKernel _cudaLibraryGetKernelCount _cudaLibraryGetManaged _cudaLibraryGetUnifiedFunction "
    "_cudaLibraryLoadData _cudaLibraryLoadFromFile _cudaLibraryUnload _cudaMalloc _cudaMallocAsync _cudaMallocHost "
    "_cudaMallocManaged _cudaMemcpy _cudaMemcpyAsync _cudaMemset _cudaMemsetAsync "
    "_cudaOccupancyMaxActiveBlocksPerMultiprocessor _cudaProfilerStart _cudaProfilerStop _cudaSetDevice "
    "_cudaStreamAddCallback _cudaStreamBeginCapture _cudaStreamCreate _cudaStreamDestroy _cudaStreamEndCapture "
    "_cudaStreamSynchronize _cudaStreamWaitEvent cuda_dialect_assert_success cuda_dialect_get_error_name "
    "cuda_dialect_init_library_once cuda_dialect_print_on_error cuda_dialect_unload_library_once").split()

# cudaFuncAttribute (runtime) name -> CUfunction_attribute (driver) name
_FUNC_ATTRS = {
    "MaxDynamicSharedMemorySize": "MAX_DYNAMIC_SHARED_SIZE_BYTES",
    "PreferredSharedMemoryCarveout": "PREFERRED_SHARED_MEMORY_CARVEOUT",
    "ClusterDimMustBeSet": "CLUSTER_SIZE_MUST_BE_SET", "RequiredClusterWidth": "REQUIRED_CLUSTER_WIDTH",
    "RequiredClusterHeight": "REQUIRED_CLUSTER_HEIGHT", "RequiredClusterDepth": "REQUIRED_CLUSTER_DEPTH",
    "NonPortableClusterSizeAllowed": "NON_PORTABLE_CLUSTER_SIZE_ALLOWED",
    "ClusterSchedulingPolicyPreference": "CLUSTER_SCHEDULING_POLICY_PREFERENCE",
}


def _drv(s, name: str, *values: int) -> None:
    """Run the driver handler ``name`` with these raw arguments (errors propagate to the runtime entry point)."""
    HANDLERS[name](s, Args(name, list(values) + [0] * (16 - len(values))))


def _driver_func_attr(value: int, what: str) -> int:
    from cuda.bindings import driver, runtime
    try:
        rname = runtime.cudaFuncAttribute(value).name.removeprefix("cudaFuncAttribute")
    except ValueError:
        raise DriverError(CUresult.INVALID_VALUE, f"{what}: {value} is not a cudaFuncAttribute") from None
    if rname not in _FUNC_ATTRS:
        raise DriverError(CUresult.NOT_SUPPORTED, f"{what}(cudaFuncAttribute{rname}): not supported by the emulator")
    return int(getattr(driver.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + _FUNC_ATTRS[rname]))


def _init(s):
    s.ensure_primary()


# runtime entry point -> (driver call taking the same arguments in the same order, runtime initialisation first?)
FORWARD = {
    "_cudaDeviceGetAttribute": ("cuDeviceGetAttribute", True),   # cudaDeviceAttr values are the driver's
    "_cuDeviceGet": ("cuDeviceGet", True),
    "_cudaLibraryUnload": ("cuLibraryUnload", False), "_cuLibraryUnload": ("cuLibraryUnload", False),
    "_cudaLibraryGetKernel": ("cuLibraryGetKernel", False), "_cuLibraryGetKernel": ("cuLibraryGetKernel", False),
    "_cudaLibraryGetKernelCount": ("cuLibraryGetKernelCount", False),
    "_cuLibraryGetKernelCount": ("cuLibraryGetKernelCount", False),
    "_cudaLibraryGetGlobal": ("cuLibraryGetGlobal", False), "_cuLibraryGetGlobal": ("cuLibraryGetGlobal", False),
    "_cuLibraryGetModule": ("cuLibraryGetModule", False),
    "_cuKernelGetAttribute": ("cuKernelGetAttribute", False),   # (int *pi, attrib, CUkernel, int deviceOrdinal)
    "_cuTensorMapEncodeTiled": ("cuTensorMapEncodeTiled", False),
    "_cudaMalloc": ("cuMemAlloc_v2", True), "_cudaMallocAsync": ("cuMemAlloc_v2", True),
    "_cudaFree": ("cuMemFree_v2", True), "_cudaFreeAsync": ("cuMemFree_v2", True),
    "_cudaStreamDestroy": ("cuStreamDestroy_v2", False), "_cudaStreamWaitEvent": ("cuStreamWaitEvent", False),
    "_cudaEventDestroy": ("cuEventDestroy_v2", False), "_cudaEventRecord": ("cuEventRecord", False),
    "_cudaEventElapsedTime": ("cuEventElapsedTime", False),
}


def _forwarder(target: str, init: bool):
    def handler(s, a):
        if init:
            _init(s)
        HANDLERS[target](s, a)
    handler.__doc__ = f"served by {target} (same arguments)"
    return handler


for _name, (_target, _init_first) in FORWARD.items():
    call(_name)(_forwarder(_target, _init_first))


# ------------------------------------------------------------------------------------------------- device
@call("_cudaGetDevice")
def rt_get_device(s, a):
    _init(s)
    a.out(0, 0, ctypes.c_int)


@call("_cudaGetDeviceCount")
def rt_get_device_count(s, a):
    _init(s)
    a.out(0, 1, ctypes.c_int)


@call("_cudaSetDevice")
def rt_set_device(s, a):
    _init(s)
    if a.i32(0) != 0:
        raise DriverError(CUresult.INVALID_VALUE, f"cudaSetDevice({a.i32(0)}): the emulator is device 0 only")


@call("_cudaDeviceSynchronize", "_cudaStreamSynchronize")
def rt_synchronize(s, a):
    _init(s)


# ------------------------------------------------------------------------------------------------- libraries
@call("_cudaLibraryLoadData", "_cuLibraryLoadData")
def rt_library_load_data(s, a):
    _init(s)
    _drv(s, "cuLibraryLoadData", a[0], a[1])


@call("_cudaLibraryLoadFromFile", "_cuLibraryLoadFromFile")
def rt_library_load_from_file(s, a):
    _init(s)
    with open(a.cstr(1), "rb") as fh:
        data = fh.read() + b"\0"
    buf = ctypes.create_string_buffer(data, len(data))
    _drv(s, "cuLibraryLoadData", a[0], ctypes.addressof(buf))


@call("_cudaKernelSetAttributeForDevice")
def rt_kernel_set_attribute_for_device(s, a):
    """cudaKernelSetAttributeForDevice(cudaKernel_t kernel, cudaFuncAttribute attr, int value, int device)."""
    what = "cudaKernelSetAttributeForDevice"
    set_function_attribute(s, get_function(s, a[0], what), _driver_func_attr(a.i32(1), what), a.i32(2), what)


@call("_cudaFuncSetAttribute")
def rt_func_set_attribute(s, a):
    """cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value): func is a kernel handle here."""
    what = "cudaFuncSetAttribute"
    set_function_attribute(s, get_function(s, a[0], what), _driver_func_attr(a.i32(1), what), a.i32(2), what)


# ------------------------------------------------------------------------------------------------- launch
@call("_cudaLaunchKernelEx")
def rt_launch_kernel_ex(s, a):
    """cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args); cudaLaunchConfig_t:
    gridDim (3 x u32) at 0, blockDim at 12, dynamicSmemBytes (size_t) at 24, stream at 32, attrs at 40,
    numAttrs at 48; cudaLaunchAttribute has the driver's layout and ids."""
    _init(s)
    cfg = ctypes.string_at(a[0], 56)
    grid, block = struct.unpack_from("<3I", cfg, 0), struct.unpack_from("<3I", cfg, 12)
    smem, = struct.unpack_from("<Q", cfg, 24)
    attrs_ptr, = struct.unpack_from("<Q", cfg, 40)
    n_attrs, = struct.unpack_from("<I", cfg, 48)
    attrs = parse_attrs(attrs_ptr, n_attrs, "cudaLaunchKernelExC")
    launch(s, a[1], grid, block, smem, a[2], 0, attrs, "cudaLaunchKernelExC")


@call("_cudaLaunchKernel")
def rt_launch_kernel(s, a):
    """cudaLaunchKernel(func, dim3 grid, dim3 block, void **args, size_t smem, stream): each dim3 (12 bytes) is passed
    by value in two integer registers (x | y << 32, z) under the System V x86-64 ABI."""
    _init(s)
    grid = (a.u32(1), a[1] >> 32, a.u32(2))
    block = (a.u32(3), a[3] >> 32, a.u32(4))
    launch(s, a[0], grid, block, a[6], a[5], 0, {}, "cudaLaunchKernel")


# ------------------------------------------------------------------------------------------------- memory
_MEMCPY_KIND = {1: "cuMemcpyHtoD_v2", 2: "cuMemcpyDtoH_v2", 3: "cuMemcpyDtoD_v2", 4: "cuMemcpy"}


@call("_cudaMemcpy", "_cudaMemcpyAsync")
def rt_memcpy(s, a):
    """cudaMemcpy(dst, src, count, cudaMemcpyKind)."""
    _init(s)
    kind = a.u32(3)
    if kind == 0:
        ctypes.memmove(a[0], a[1], a[2])
    elif kind in _MEMCPY_KIND:
        _drv(s, _MEMCPY_KIND[kind], a[0], a[1], a[2])
    else:
        raise DriverError(CUresult.INVALID_VALUE, f"cudaMemcpy: kind {kind} is not a cudaMemcpyKind")


@call("_cudaMemset", "_cudaMemsetAsync")
def rt_memset(s, a):
    _init(s)
    _drv(s, "cuMemsetD8_v2", a[0], a[1] & 0xFF, a[2])


# ------------------------------------------------------------------------------------------------- streams, events
@call("_cudaStreamCreate")
def rt_stream_create(s, a):
    _init(s)
    _drv(s, "cuStreamCreate", a[0], 0)


@call("_cudaEventCreate")
def rt_event_create(s, a):
    _init(s)
    _drv(s, "cuEventCreate", a[0], 0)

