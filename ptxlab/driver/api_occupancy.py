"""Occupancy queries (CUDA Driver API 6.26 "Occupancy") of the emulated device, from a stated model.

Per SM (``device_table``): 2048 threads, 32 blocks, 228 KiB of shared memory with 1 KiB reserved per block.
Registers are not modelled: the emulator runs PTX, and a kernel's register count exists only after ptxas (a GPU
may fit fewer blocks). Clusters: ``floor(SMs x blocks per SM / cluster size)``; a real B200 places a cluster inside
one GPC, which can make the true count smaller. The answers size persistent grids (CuTe DSL
``HardwareInfo.get_max_active_clusters``); any count is a correct launch on the emulator, only its speed depends on
it.
"""
from __future__ import annotations

import ctypes
import struct

from ptxlab.driver import device_table as D
from ptxlab.driver.api_launch import parse_attrs
from ptxlab.driver.api_module import get_function
from ptxlab.driver.calls import CUresult, DriverError, call

__all__ = ["blocks_per_sm"]

_RESERVED = D.attribute_value("RESERVED_SHARED_MEMORY_PER_BLOCK")
_SMEM_SM = D.attribute_value("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR")
_SMEM_BLOCK = D.attribute_value("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")


def blocks_per_sm(s, f, block_size: int, dyn_smem: int) -> int:
    static = int(s.dev.program(f.image, f.name).static_smem)
    warps = -(-max(block_size, 1) // 32)
    by_threads = D.attribute_value("MAX_THREADS_PER_MULTIPROCESSOR") // (warps * 32)
    need = static + dyn_smem + _RESERVED
    by_smem = _SMEM_SM // need if static + dyn_smem <= _SMEM_BLOCK else 0
    return max(0, min(D.attribute_value("MAX_BLOCKS_PER_MULTIPROCESSOR"), by_threads, by_smem))


@call("cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags")
def cu_occupancy_blocks(s, a):
    """(int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize[, unsigned flags])."""
    f = get_function(s, a[1], "cuOccupancyMaxActiveBlocksPerMultiprocessor")
    a.out(0, blocks_per_sm(s, f, a.i32(2), a[3]), ctypes.c_int)


@call("cuOccupancyAvailableDynamicSMemPerBlock")
def cu_occupancy_dyn_smem(s, a):
    """(size_t *dynamicSmemSize, CUfunction func, int numBlocks, int blockSize)."""
    f = get_function(s, a[1], "cuOccupancyAvailableDynamicSMemPerBlock")
    n = max(a.i32(2), 1)
    static = int(s.dev.program(f.image, f.name).static_smem)
    avail = min(_SMEM_SM // n - _RESERVED, _SMEM_BLOCK) - static
    a.out(0, max(avail, 0))


@call("cuOccupancyMaxActiveClusters")
def cu_occupancy_clusters(s, a):
    """(int *numClusters, CUfunction func, const CUlaunchConfig *config)."""
    what = "cuOccupancyMaxActiveClusters"
    f = get_function(s, a[1], what)
    cfg = ctypes.string_at(a[2], 56)
    bx, by, bz, smem = struct.unpack_from("<4I", cfg, 12)
    attrs_ptr, = struct.unpack_from("<Q", cfg, 40)
    n_attrs, = struct.unpack_from("<I", cfg, 48)
    cluster = parse_attrs(attrs_ptr, n_attrs, what)["cluster"]
    if cluster is None:
        raise DriverError(CUresult.INVALID_VALUE, f"{what}: the launch configuration has no cluster dimension")
    size = cluster[0] * cluster[1] * cluster[2]
    per_sm = blocks_per_sm(s, f, bx * by * bz, smem)
    a.out(0, D.attribute_value("MULTIPROCESSOR_COUNT") * per_sm // max(size, 1), ctypes.c_int)


@call("cuLibraryEnumerateKernels")
def cu_library_enumerate_kernels(s, a):
    """(CUkernel *kernels, unsigned numKernels, CUlibrary lib)."""
    what = "cuLibraryEnumerateKernels"
    img = s.get(a[2], "library", what=what)
    n = a.u32(1)
    if n < len(img.kernels):
        raise DriverError(CUresult.INVALID_VALUE, f"cuLibraryEnumerateKernels: room for {n} kernels, the library "
                                                  f"has {len(img.kernels)}")
    from ptxlab.driver.api_module import entry
    for i, name in enumerate(img.kernels):
        ctypes.c_uint64.from_address(a[0] + 8 * i).value = s.new_handle("kernel", entry(img, name, what))
