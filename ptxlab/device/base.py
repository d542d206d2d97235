"""Backend-neutral device API: buffers, copies, tensor maps and launches, shared by the cuda and emu backends.

A backend subclasses :class:`Device` and implements only the ``_``-prefixed hooks (memory, launch, tensor-map
encoding) plus :meth:`Device.arch_supported`. Argument packing, tensor-map validation, buffer bookkeeping and
launch-geometry checks live here so both backends fail identically.
"""
from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

from ptxlab.device.args import Param, pack_params, parse_entry_params
from ptxlab.device.buffer import DeviceBuffer
from ptxlab.device.cluster import kernel_cluster_directives, resolve_cluster
from ptxlab.errors import DeviceUnavailable, LaunchError, PtxlabError, TensorMapError, clean, debug_traceback
from ptxlab.tensormap import TensorMap, TensorMapSpec

__all__ = ["DeviceBuffer", "Device", "Dim3", "as_dim3", "parse_arch"]

Dim3 = tuple[int, int, int]
MAX_BLOCK = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
DEFAULT_MAX_SHARED_BYTES = 232448  # 227 KiB: opt-in dynamic SMEM limit of sm_90 and sm_100


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def as_dim3(v: Union[int, Sequence[int]], what: str) -> Dim3:
    """Normalize an int or a tuple/list of 1..3 ints to a 3-tuple (missing dims are 1). Anything else (a string such
    as '12', floats, bools, a dict) is a LaunchError naming what was passed."""
    if _is_int(v):
        t: tuple = (int(v),)
    elif isinstance(v, (tuple, list, np.ndarray)) and all(_is_int(x) for x in (v.tolist() if isinstance(v, np.ndarray)
                                                                               else v)):
        t = tuple(int(x) for x in v)
    else:
        raise LaunchError(f"{what} {v!r} must be an int or a tuple of 1..3 ints, e.g. (8, 1, 1)")
    if not 1 <= len(t) <= 3:
        raise LaunchError(f"{what} {v!r} must be an int or 1..3 ints")
    t = t + (1,) * (3 - len(t))
    return (t[0], t[1], t[2])


def parse_arch(arch: str) -> tuple[int, int, str]:
    """'sm_100a' -> (10, 0, 'a'); 'sm_90' -> (9, 0, ''); 'compute_90a' accepted too."""
    m = re.fullmatch(r"(?:sm|compute)_(\d+)(\d)([af]?)", arch.strip())
    if not m:
        raise DeviceUnavailable(f"arch {arch!r} is not of the form sm_XY[a|f] (e.g. sm_90a, sm_100a)")
    return int(m.group(1)), int(m.group(2)), m.group(3)


class Device(ABC):
    """Abstract device. Public methods validate, then call the backend hooks."""

    name: str = "?"
    max_shared_bytes: int = DEFAULT_MAX_SHARED_BYTES

    def __init__(self) -> None:
        self._live: dict[int, DeviceBuffer] = {}
        self._layouts: dict[tuple[str, str], list[Param]] = {}
        self._made_maps: set[bytes] = set()

    # ---------------------------------------------------------------- backend hooks
    @abstractmethod
    def arch_supported(self, arch: str) -> bool:
        """True if a module compiled for `arch` can run on this device."""

    @abstractmethod
    def _alloc(self, nbytes: int) -> int:
        """Allocate nbytes (>= 1) of device memory, 256-byte aligned; return its address."""

    @abstractmethod
    def _free(self, ptr: int) -> None:
        """Release an allocation made by _alloc."""

    @abstractmethod
    def _write(self, ptr: int, data: bytes) -> None:
        """Copy host bytes to device address ptr."""

    @abstractmethod
    def _read(self, ptr: int, nbytes: int) -> bytes:
        """Copy nbytes from device address ptr to the host."""

    @abstractmethod
    def _memset(self, ptr: int, value: int, nbytes: int) -> None:
        """Fill nbytes at ptr with the byte value."""

    @abstractmethod
    def _launch(self, module: Any, kernel: str, grid: Dim3, block: Dim3, params: bytes, offsets: list[int],
                layout: list[Param], shared_bytes: int) -> None:
        """Run kernel to completion (synchronously); params is the packed param buffer, offsets per parameter.

        Raise LaunchError (naming the kernel) if the launch fails or the kernel faults.
        """

    @abstractmethod
    def _encode_tensor_map(self, spec: TensorMapSpec) -> bytes:
        """Return the 128 bytes of a tensor map for an already validated spec."""

    def synchronize(self) -> None:
        """Wait for all device work (launches are already synchronous; backends may override)."""

    # ---------------------------------------------------------------- memory
    def _check_buffer(self, buf: DeviceBuffer, where: str) -> None:
        if not isinstance(buf, DeviceBuffer):
            raise PtxlabError(f"{where}: expected a DeviceBuffer, got {type(buf).__name__}")
        if buf.device is not self:
            raise PtxlabError(f"{where}: buffer 0x{buf.ptr:x} belongs to another device ({buf.device.name})")
        if buf.freed:
            raise PtxlabError(f"{where}: buffer 0x{buf.ptr:x} was already freed")

    def empty(self, nbytes: int) -> DeviceBuffer:
        """Allocate nbytes; contents undefined."""
        if not _is_int(nbytes):
            raise PtxlabError(f"{self.name}.empty: nbytes {nbytes!r} must be an int")
        nbytes = int(nbytes)
        if nbytes < 0:
            raise PtxlabError(f"{self.name}.empty: nbytes {nbytes} must be >= 0")
        ptr = self._alloc(max(nbytes, 1))
        buf = DeviceBuffer(ptr=ptr, nbytes=nbytes, device=self)
        self._live[ptr] = buf
        return buf

    def to_device(self, array: Any) -> DeviceBuffer:
        """Allocate and copy a host array (any dtype; copied as its C-contiguous bytes) or bytes object."""
        data = bytes(array) if isinstance(array, (bytes, bytearray, memoryview)) else np.ascontiguousarray(array).tobytes()
        buf = self.empty(len(data))
        if data:
            self._write(buf.ptr, data)
        return buf

    def write(self, buf: DeviceBuffer, array: Any, offset: int = 0) -> None:
        """Copy a host array's bytes into an existing buffer at a byte offset."""
        self._check_buffer(buf, f"{self.name}.write")
        data = bytes(array) if isinstance(array, (bytes, bytearray, memoryview)) else np.ascontiguousarray(array).tobytes()
        if offset < 0 or offset + len(data) > buf.nbytes:
            raise PtxlabError(f"{self.name}.write: {len(data)} bytes at offset {offset} do not fit the "
                              f"{buf.nbytes}-byte buffer 0x{buf.ptr:x}")
        if data:
            self._write(buf.ptr + offset, data)

    def memset(self, buf: DeviceBuffer, value: int, nbytes: Optional[int] = None) -> None:
        """Fill the first nbytes (default: all) of buf with a byte value (0..255)."""
        self._check_buffer(buf, f"{self.name}.memset")
        n = buf.nbytes if nbytes is None else int(nbytes)
        if not 0 <= int(value) <= 255:
            raise PtxlabError(f"{self.name}.memset: value {value} is not a byte (0..255)")
        if not 0 <= n <= buf.nbytes:
            raise PtxlabError(f"{self.name}.memset: {n} bytes exceed the {buf.nbytes}-byte buffer 0x{buf.ptr:x}")
        if n:
            self._memset(buf.ptr, int(value), n)

    def to_host(self, buf: DeviceBuffer, dtype: Any = np.uint8, shape: Optional[Sequence[int]] = None) -> np.ndarray:
        """Copy a buffer back as a new numpy array of dtype and shape (default: 1-D over the whole buffer)."""
        self._check_buffer(buf, f"{self.name}.to_host")
        dt = np.dtype(dtype)
        if shape is None:
            if buf.nbytes % dt.itemsize:
                raise PtxlabError(f"{self.name}.to_host: {buf.nbytes} bytes is not a whole number of {dt} items; "
                                  "pass shape=")
            shape = (buf.nbytes // dt.itemsize,)
        shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        if n > buf.nbytes:
            raise PtxlabError(f"{self.name}.to_host: shape {shape} of {dt} needs {n} bytes but buffer 0x{buf.ptr:x} "
                              f"holds {buf.nbytes}")
        data = self._read(buf.ptr, n) if n else b""
        return np.frombuffer(bytearray(data), dtype=dt).reshape(shape)

    def free(self, buf: DeviceBuffer) -> None:
        """Release a buffer; using it afterwards raises."""
        self._check_buffer(buf, f"{self.name}.free")
        self._free(buf.ptr)
        buf.freed = True
        self._live.pop(buf.ptr, None)

    def close(self) -> None:
        """Free every live buffer of this device."""
        for buf in list(self._live.values()):
            self.free(buf)

    # ---------------------------------------------------------------- tensor maps
    def tensor_map(
        self,
        buf: DeviceBuffer,
        dtype: Any,
        global_shape: Sequence[int],
        global_strides: Optional[Sequence[int]],
        box: Sequence[int],
        element_strides: Optional[Sequence[int]] = None,
        swizzle: str = "none",
        interleave: str = "none",
        l2_promotion: str = "none",
        oob_fill: str = "none",
        offset: int = 0,
    ) -> TensorMap:
        """Build a TMA tensor map over buf (+offset bytes); dims innermost first, strides in bytes for dims 1.."""
        self._check_buffer(buf, f"{self.name}.tensor_map")
        spec = TensorMapSpec.make(dtype, buf.ptr + int(offset), global_shape, global_strides, box, element_strides,
                                  interleave, swizzle, l2_promotion, oob_fill)
        spec.validate()
        if spec.interleave != "none":
            raise TensorMapError(
                f"tensor map: interleave={spec.interleave!r} is not supported by ptxlab devices (the H100 driver did not "
                "follow its documented interleave rules, see NOTES.md 'H100 runs'); use interleave='none'")
        extent = spec.gmem_extent()
        if offset < 0 or offset + extent > buf.nbytes:
            raise TensorMapError(
                f"tensor map: shape {spec.global_shape} with strides {spec.global_strides} spans {extent} bytes from "
                f"offset {offset}, past the end of the {buf.nbytes}-byte buffer 0x{buf.ptr:x}; fix the shape/strides")
        raw = bytes(self._encode_tensor_map(spec))
        tm = TensorMap(spec, raw)
        self._made_maps.add(raw)
        return tm

    # ---------------------------------------------------------------- launch
    def param_layout(self, module: Any, kernel: str) -> list[Param]:
        """The kernel's parameter layout, parsed from module.ptx (cached)."""
        ptx = getattr(module, "ptx", None)
        if not ptx:
            raise LaunchError(f"kernel {kernel!r}: the module has no PTX text to read the parameter list from")
        key = (ptx, kernel)
        if key not in self._layouts:
            self._layouts[key] = parse_entry_params(ptx, kernel)
        return self._layouts[key]

    def launch(self, module: Any, kernel: str, grid: Union[int, Sequence[int]], block: Union[int, Sequence[int]],
               args: Sequence[Any] = (), shared_bytes: int = 0, cluster: Optional[Union[int, Sequence[int]]] = None,
               non_portable_cluster: bool = False, pdl: bool = False) -> None:
        """Launch kernel and wait for it; errors raise LaunchError naming the kernel.

        ``cluster=(cx, cy, cz)`` launches thread-block clusters (rules: ptxlab/device/cluster.py); a kernel with
        ``.reqnctapercluster`` gets its compile-time shape without it. More than 8 CTAs per cluster needs
        ``non_portable_cluster=True``. ``pdl=True``: programmatic dependent launch (cuda backend: launch attribute
        CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION; the emulator runs launches in order, which satisfies
        griddepcontrol.wait at once: ptx_docs/cluster_launch_control.md)."""
        arch = getattr(module, "arch", None)
        if arch and not self.arch_supported(arch):
            raise DeviceUnavailable(
                f"kernel {kernel!r}: module compiled for {arch} cannot run on {self.describe()}; "
                "compile for this device's arch or use open_device('emu')")
        kernels = getattr(module, "kernels", None)
        if kernels and kernel not in kernels:
            raise LaunchError(f"kernel {kernel!r} is not in the module (kernels: {sorted(kernels)})")
        g, b = as_dim3(grid, f"kernel {kernel!r}: grid"), as_dim3(block, f"kernel {kernel!r}: block")
        for i in range(3):
            if not 1 <= g[i] <= MAX_GRID[i]:
                raise LaunchError(f"kernel {kernel!r}: grid {g} dim {i} must be in 1..{MAX_GRID[i]}")
            if not 1 <= b[i] <= MAX_BLOCK[i]:
                raise LaunchError(f"kernel {kernel!r}: block {b} dim {i} must be in 1..{MAX_BLOCK[i]}")
        if b[0] * b[1] * b[2] > MAX_THREADS_PER_BLOCK:
            raise LaunchError(f"kernel {kernel!r}: block {b} has {b[0] * b[1] * b[2]} threads, "
                              f"more than {MAX_THREADS_PER_BLOCK}")
        if not _is_int(shared_bytes) or not 0 <= int(shared_bytes) <= self.max_shared_bytes:
            raise LaunchError(f"kernel {kernel!r}: shared_bytes {shared_bytes} must be in 0..{self.max_shared_bytes} "
                              f"(the opt-in dynamic shared memory limit of {self.describe()})")
        if not isinstance(kernel, str) or isinstance(args, (str, bytes, dict, set)) or not hasattr(args, "__iter__"):
            raise LaunchError(f"launch: kernel must be a name (str) and args a list of arguments; got kernel={kernel!r}, "
                              f"args of type {type(args).__name__}")
        for i, a in enumerate(args):
            if isinstance(a, DeviceBuffer):
                self._check_buffer(a, f"kernel {kernel!r} argument {i}")
            elif isinstance(a, TensorMap) and bytes(a.raw) not in self._made_maps:
                raise LaunchError(f"kernel {kernel!r} argument {i}: this TensorMap was not made by this {self.name} "
                                  "device; build it with dev.tensor_map on the device that launches")
        layout = self.param_layout(module, kernel)
        params, offsets = pack_params(layout, list(args), kernel)
        ptx = getattr(module, "ptx", "") or ""
        dkey = (ptx, kernel, "cluster")
        if dkey not in self._layouts:     # cached with the param layouts (same key: the PTX text and the kernel)
            self._layouts[dkey] = kernel_cluster_directives(ptx, kernel)
        cl = resolve_cluster(kernel, g, cluster, non_portable_cluster, self._layouts[dkey])
        extra = {"cluster": cl} if cl is not None else {}     # backends without clusters never see the keyword
        if pdl:
            extra["pdl"] = True
        try:
            self._launch(module, kernel, g, b, params, offsets, layout, int(shared_bytes), **extra)
        except PtxlabError as exc:      # one report, without the emulator's frames (PTXLAB_DEBUG_TRACEBACK=1 keeps them)
            if debug_traceback():
                raise
            raise clean(exc) from None

    def describe(self) -> str:
        """One-line description used in messages."""
        return f"the {self.name} device"

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
