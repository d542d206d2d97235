"""The emulated device as the driver describes it: a B200 (sm_100, compute capability 10.0).

Values are those of the B200 datasheet / CUDA Programming Guide's compute-capability 10.0 table (feature limits:
227 KiB opt-in shared memory per block, 228 KiB per SM, 64 K registers, 2048 threads and 32 blocks per SM); the SM
count is the timing model's B200 table (ptxlab/timing/params.py). Attributes not in this table are refused with
a line naming them (``cuDeviceGetAttribute``), never answered with a made-up value.
"""
from __future__ import annotations

__all__ = ["NAME", "CC", "TOTAL_MEM", "ATTRIBUTES", "attribute_value"]

NAME = "ptxlab emulated NVIDIA B200 (sm_100a)"
CC = (10, 0)
TOTAL_MEM = 180 * 1024 ** 3


def _sms() -> int:
    try:
        from ptxlab.timing.params import get
        return int(get("b200").sms)
    except Exception:          # noqa: BLE001 - the datasheet value when the timing tables are unavailable
        return 148


# CU_DEVICE_ATTRIBUTE_<name> -> value (or a callable)
ATTRIBUTES = {
    "MAX_THREADS_PER_BLOCK": 1024, "MAX_BLOCK_DIM_X": 1024, "MAX_BLOCK_DIM_Y": 1024, "MAX_BLOCK_DIM_Z": 64,
    "MAX_GRID_DIM_X": 2 ** 31 - 1, "MAX_GRID_DIM_Y": 65535, "MAX_GRID_DIM_Z": 65535,
    "MAX_SHARED_MEMORY_PER_BLOCK": 49152, "SHARED_MEMORY_PER_BLOCK": 49152,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 232448, "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 233472,
    "RESERVED_SHARED_MEMORY_PER_BLOCK": 1024,
    "TOTAL_CONSTANT_MEMORY": 65536, "WARP_SIZE": 32, "MAX_PITCH": 2 ** 31 - 1,
    "MAX_REGISTERS_PER_BLOCK": 65536, "REGISTERS_PER_BLOCK": 65536, "MAX_REGISTERS_PER_MULTIPROCESSOR": 65536,
    "CLOCK_RATE": 1965000, "MEMORY_CLOCK_RATE": 3996000, "GLOBAL_MEMORY_BUS_WIDTH": 8192,
    "MULTIPROCESSOR_COUNT": _sms, "MAX_THREADS_PER_MULTIPROCESSOR": 2048, "MAX_BLOCKS_PER_MULTIPROCESSOR": 32,
    "COMPUTE_CAPABILITY_MAJOR": CC[0], "COMPUTE_CAPABILITY_MINOR": CC[1],
    "L2_CACHE_SIZE": 126 * 1024 * 1024, "TEXTURE_ALIGNMENT": 512, "TEXTURE_PITCH_ALIGNMENT": 32,
    "GPU_OVERLAP": 1, "KERNEL_EXEC_TIMEOUT": 0, "INTEGRATED": 0, "CAN_MAP_HOST_MEMORY": 1, "COMPUTE_MODE": 0,
    "CONCURRENT_KERNELS": 1, "ECC_ENABLED": 1, "PCI_BUS_ID": 0, "PCI_DEVICE_ID": 0, "PCI_DOMAIN_ID": 0,
    "TCC_DRIVER": 0, "ASYNC_ENGINE_COUNT": 2, "UNIFIED_ADDRESSING": 1, "MANAGED_MEMORY": 1,
    "CONCURRENT_MANAGED_ACCESS": 1, "COOPERATIVE_LAUNCH": 1, "COOPERATIVE_MULTI_DEVICE_LAUNCH": 0,
    "CLUSTER_LAUNCH": 1, "STREAM_PRIORITIES_SUPPORTED": 1, "GLOBAL_L1_CACHE_SUPPORTED": 1,
    "LOCAL_L1_CACHE_SUPPORTED": 1, "MULTI_GPU_BOARD": 0, "MULTI_GPU_BOARD_GROUP_ID": 0,
    "HOST_NATIVE_ATOMIC_SUPPORTED": 0, "PAGEABLE_MEMORY_ACCESS": 0, "MEMORY_POOLS_SUPPORTED": 1,
    "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED": 0, "DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED": 0,
    "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": 0, "DIRECT_MANAGED_MEM_ACCESS_FROM_HOST": 0,
    "MAX_PERSISTING_L2_CACHE_SIZE": 0, "MAX_ACCESS_POLICY_WINDOW_SIZE": 0, "SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO": 2,
    "MPS_ENABLED": 0, "IPC_EVENT_SUPPORTED": 0, "DMA_BUF_SUPPORTED": 0, "GPU_DIRECT_RDMA_SUPPORTED": 0,
    "NUMA_CONFIG": 0, "HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED": 0,
}


def attribute_value(name: str) -> int:
    """The value of CU_DEVICE_ATTRIBUTE_<name>; KeyError when the table has none."""
    v = ATTRIBUTES[name]
    return int(v() if callable(v) else v)
