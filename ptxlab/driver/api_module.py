"""Modules, libraries, functions and kernels (CUDA Driver API 6.10 "Module Management", 6.12 "Library Management",
6.22 "Execution Control" attributes).

Images become PTX (``images.py``); a function is an entry of that PTX. Function attributes the caller may set
(dynamic shared memory limit, carveout, cluster opt-ins) are kept and enforced at launch; attributes that exist only
after ptxas (registers, local memory) are refused with a line, not invented.
"""
from __future__ import annotations

import ctypes
import re

from ptxlab.driver.calls import CUresult, DriverError, call
from ptxlab.driver.images import Image, image_from_bytes, read_image
from ptxlab.driver.state import Function

__all__ = ["attr_name", "entry", "get_function", "function_attribute", "set_function_attribute", "DEFAULT_DYNAMIC_SMEM"]

DEFAULT_DYNAMIC_SMEM = 48 * 1024      # dynamic shared memory allowed without the opt-in attribute


def attr_name(value: int) -> str:
    try:
        from cuda.bindings import driver
        return driver.CUfunction_attribute(value).name.removeprefix("CU_FUNC_ATTRIBUTE_")
    except Exception:           # noqa: BLE001
        return f"CUfunction_attribute({value})"


def _load(s, ptr: int, what: str) -> Image:
    s.need_context(what) if what.startswith("cuModule") else s.need_init(what)
    img = image_from_bytes(read_image(ptr, what), what)
    s.dev._load(img)                     # parse now: a PTX the emulator cannot read fails at load, as on a GPU
    return img


@call("cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary")
def cu_module_load_data(s, a):
    a.out(0, s.new_handle("module", _load(s, a[1], "cuModuleLoadData")))


@call("cuModuleUnload")
def cu_module_unload(s, a):
    s.release(a[0], "module", what="cuModuleUnload")


@call("cuLibraryLoadData")
def cu_library_load_data(s, a):
    a.out(0, s.new_handle("library", _load(s, a[1], "cuLibraryLoadData")))


@call("cuLibraryUnload")
def cu_library_unload(s, a):
    s.release(a[0], "library", what="cuLibraryUnload")


def entry(img: Image, name: str, what: str) -> Function:
    if name not in img.kernels:
        raise DriverError(CUresult.NOT_FOUND, f"{what}({name!r}): no such kernel entry in the image "
                                              f"(entries: {', '.join(img.kernels) or 'none'})")
    if name not in img.functions:
        img.functions[name] = Function(img, name)
    return img.functions[name]


@call("cuModuleGetFunction")
def cu_module_get_function(s, a):
    img = s.get(a[1], "module", what="cuModuleGetFunction")
    a.out(0, s.new_handle("function", entry(img, a.cstr(2), "cuModuleGetFunction")))


@call("cuLibraryGetKernel")
def cu_library_get_kernel(s, a):
    img = s.get(a[1], "library", what="cuLibraryGetKernel")
    a.out(0, s.new_handle("kernel", entry(img, a.cstr(2), "cuLibraryGetKernel")))


@call("cuLibraryGetModule")
def cu_library_get_module(s, a):
    a.out(0, s.new_handle("module", s.get(a[1], "library", what="cuLibraryGetModule")))


@call("cuLibraryGetKernelCount", "cuModuleGetFunctionCount")
def cu_library_get_kernel_count(s, a):
    a.out(0, len(s.get(a[1], "library", "module", what="cuLibraryGetKernelCount").kernels), ctypes.c_uint)


@call("cuKernelGetFunction")
def cu_kernel_get_function(s, a):
    k = s.get(a[1], "kernel", what="cuKernelGetFunction")
    a.out(0, s.new_handle("function", k))      # the same Function: attributes set on either are shared


@call("cuFuncGetName", "cuKernelGetName")
def cu_func_get_name(s, a):
    f = s.get(a[1], "function", "kernel", what="cuFuncGetName")
    buf = f.__dict__.setdefault("_name_buf", ctypes.create_string_buffer(f.name.encode()))
    a.out(0, ctypes.addressof(buf))


@call("cuModuleGetGlobal_v2", "cuModuleGetGlobal", "cuLibraryGetGlobal")
def cu_module_get_global(s, a):
    img = s.get(a[2], "module", "library", what="cuModuleGetGlobal")
    name = a.cstr(3)
    _, gsyms, _, _, _ = s.dev._load(img)
    if name not in gsyms:
        raise DriverError(CUresult.NOT_FOUND, f"cuModuleGetGlobal({name!r}): no .global variable of that name "
                                              f"(globals: {', '.join(sorted(gsyms)) or 'none'})")
    if a[0]:
        a.out(0, gsyms[name])
    if a[1]:
        v = next(v for v in s.dev._load(img)[0].globals if v.name == name)
        a.out(1, v.size)


def get_function(s, handle: int, what: str) -> Function:
    return s.get(handle, "function", "kernel", what=what)


def _directive(ptx: str, name: str, key: str):
    from ptxlab.device.cluster import _entry_tail
    m = re.search(rf"\.{key}\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", _entry_tail(ptx, name))
    return tuple(int(g) if g else 1 for g in m.groups()) if m else None


def function_attribute(s, f: Function, attr: int) -> int:
    """The value of CU_FUNC_ATTRIBUTE_<attr> for f (settable ones as set, the rest from its PTX)."""
    name = attr_name(attr)
    if attr in f.attrs:
        return f.attrs[attr]
    prog = s.dev.program(f.image, f.name)
    ptx = f.image.ptx
    if name == "MAX_THREADS_PER_BLOCK":
        t = _directive(ptx, f.name, "reqntid") or _directive(ptx, f.name, "maxntid")
        return t[0] * t[1] * t[2] if t else 1024
    if name == "SHARED_SIZE_BYTES":
        return int(prog.static_smem)
    if name == "CONST_SIZE_BYTES":
        return len(s.dev._load(f.image)[2])
    if name == "MAX_DYNAMIC_SHARED_SIZE_BYTES":
        return DEFAULT_DYNAMIC_SMEM
    if name == "PTX_VERSION":
        m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
        return int(m.group(1)) * 10 + int(m.group(2)) if m else 0
    if name == "BINARY_VERSION":
        return 100
    if name in ("PREFERRED_SHARED_MEMORY_CARVEOUT",):
        return -1
    if name in ("NON_PORTABLE_CLUSTER_SIZE_ALLOWED", "CLUSTER_SCHEDULING_POLICY_PREFERENCE", "CACHE_MODE_CA"):
        return 0
    req = _directive(ptx, f.name, "reqnctapercluster")
    if name == "CLUSTER_SIZE_MUST_BE_SET":
        return int(bool(re.search(r"\.explicitcluster\b", ptx)))
    if name.startswith("REQUIRED_CLUSTER_"):
        return req[{"WIDTH": 0, "HEIGHT": 1, "DEPTH": 2}[name.rsplit("_", 1)[1]]] if req else 0
    raise DriverError(CUresult.NOT_SUPPORTED, f"cuFuncGetAttribute({name}) of {f.name}: the emulator runs PTX and "
                                              "has no value for an attribute that only ptxas knows (registers, local "
                                              "memory); compile the PTX with ptxlab.compile to see its resources")


_SETTABLE = {"MAX_DYNAMIC_SHARED_SIZE_BYTES", "PREFERRED_SHARED_MEMORY_CARVEOUT", "REQUIRED_CLUSTER_WIDTH",
             "REQUIRED_CLUSTER_HEIGHT", "REQUIRED_CLUSTER_DEPTH", "NON_PORTABLE_CLUSTER_SIZE_ALLOWED",
             "CLUSTER_SCHEDULING_POLICY_PREFERENCE"}


def set_function_attribute(s, f: Function, attr: int, value: int, what: str) -> None:
    name = attr_name(attr)
    if name not in _SETTABLE:
        raise DriverError(CUresult.INVALID_VALUE, f"{what}({name}={value}) of {f.name}: not a settable attribute")
    if name == "MAX_DYNAMIC_SHARED_SIZE_BYTES":
        static = int(s.dev.program(f.image, f.name).static_smem)
        limit = s.dev.max_shared_bytes - static
        if not 0 <= value <= limit:
            raise DriverError(CUresult.INVALID_VALUE,
                              f"{what}(MAX_DYNAMIC_SHARED_SIZE_BYTES={value}) of {f.name}: must be in 0..{limit} "
                              f"({s.dev.max_shared_bytes} bytes per block minus {static} static)")
    f.attrs[attr] = int(value)


@call("cuFuncGetAttribute")
def cu_func_get_attribute(s, a):
    a.out(0, function_attribute(s, get_function(s, a[2], "cuFuncGetAttribute"), a.i32(1)), ctypes.c_int)


@call("cuFuncSetAttribute")
def cu_func_set_attribute(s, a):
    set_function_attribute(s, get_function(s, a[0], "cuFuncSetAttribute"), a.i32(1), a.i32(2), "cuFuncSetAttribute")


@call("cuKernelGetAttribute")
def cu_kernel_get_attribute(s, a):
    a.out(0, function_attribute(s, get_function(s, a[2], "cuKernelGetAttribute"), a.i32(1)), ctypes.c_int)


@call("cuKernelSetAttribute")
def cu_kernel_set_attribute(s, a):
    set_function_attribute(s, get_function(s, a[2], "cuKernelSetAttribute"), a.i32(0), a.i32(1),
                           "cuKernelSetAttribute")


@call("cuFuncSetCacheConfig", "cuKernelSetCacheConfig", "cuFuncSetSharedMemConfig")
def cu_func_set_cache_config(s, a):
    """An L1/shared split preference: no effect on the emulator, accepted."""
