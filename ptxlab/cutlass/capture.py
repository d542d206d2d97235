"""Run a CUTLASS example's own host code on the emulator and turn its captured launch into a ptxlab launch.

The wrapper's ``ptxlab_host`` kernel calls the example's host function (device code under NVRTC -default-device).
It builds every kernel parameter with CUTLASS/CuTe itself -- TiledMMA, layouts, TMA atoms -- and its launch is
captured (stubs/ptxlab_capture.cuh): grid, block, cluster, dynamic shared memory and the bytes of each argument.
Each TMA descriptor inside those bytes holds the inputs CuTe computed for cuTensorMapEncodeTiled
(stubs/ptxlab_tma_record.cuh); :func:`resolve_tensor_maps` makes the real map with ``dev.tensor_map`` on the
launching device (emulator or GPU) and puts its 128 bytes in the descriptor's place.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..tensormap import DTYPE_CODES

CAPTURE_MAGIC = 0x4C435850
TENC_MAGIC = 0x434E4554
CAPTURE_BYTES = 1 << 16
_DTYPES = {v: k for k, v in DTYPE_CODES.items()}
_SWIZZLE = {(0, 0): "none", (1, 0): "32B", (2, 0): "64B", (3, 0): "128B", (3, 1): "128B_ATOM_32B",
            (3, 2): "128B_ATOM_32B_FLIP_8B", (3, 3): "128B_ATOM_64B"}
_L2 = {0: "none", 1: "64B", 2: "128B", 3: "256B"}


class CaptureError(RuntimeError):
    pass


@dataclass
class Launch:
    """A captured kernel launch: geometry and the argument bytes (as the example's host code built them)."""

    grid: tuple
    block: tuple
    cluster: tuple
    smem_bytes: int
    args: list = field(default_factory=list)        # [(bytes, align)]
    pdl: bool = False                                # launched with programmatic dependent launch
    workspace_bytes: int = 0                         # workspace the host code allocated (cutlass device_memory)
    tensor_maps: list = field(default_factory=list)  # [(arg index, byte offset, TensorMapSpec inputs dict)]


def parse_capture(raw: bytes) -> Launch:
    magic, nargs = struct.unpack_from("<II", raw, 0)
    if magic != CAPTURE_MAGIC:
        raise CaptureError("the example's host code did not reach its kernel launch (no capture record): it returned "
                           "early (an unsupported shape?) or the launch is not through cutlass::launch_kernel_on_cluster")
    g = struct.unpack_from("<3I", raw, 8)
    b = struct.unpack_from("<3I", raw, 20)
    c = struct.unpack_from("<3I", raw, 32)
    smem, pdl, _, ws = struct.unpack_from("<IIIQ", raw, 44)
    off = 64
    args = []
    for _ in range(nargs):
        size, align = struct.unpack_from("<II", raw, off)
        off += 8
        args.append((bytes(raw[off:off + size]), align))
        off += (size + 7) & ~7
    L = Launch(tuple(g), tuple(b), tuple(c), int(smem), args, pdl=bool(pdl), workspace_bytes=int(ws))
    for i, (data, _) in enumerate(args):
        for o in range(0, len(data) - 127, 64):           # descriptors are alignas(64) inside the argument
            if struct.unpack_from("<I", data, o)[0] == TENC_MAGIC:
                L.tensor_maps.append((i, o, decode_record(data[o:o + 128])))
    return L


def decode_record(rec: bytes) -> dict:
    fmt, rank, sbits, sbase = rec[4], rec[5], rec[6], rec[7]
    (addr,) = struct.unpack_from("<Q", rec, 8)
    dims = struct.unpack_from("<5Q", rec, 16)
    strides = struct.unpack_from("<4Q", rec, 56)
    box = struct.unpack_from("<5H", rec, 88)
    es = tuple(rec[98:103])
    l2, oob = rec[103], rec[104]
    if fmt not in _DTYPES:
        raise CaptureError(f"TMA descriptor with CuTe element type code {fmt}: no CUtensorMapDataType for it")
    if (sbits, sbase) not in _SWIZZLE:
        raise CaptureError(f"TMA descriptor with swizzle bits {sbits} base {sbase}: not a CUtensorMapSwizzle")
    return dict(dtype=_DTYPES[fmt], address=addr, global_shape=list(dims[:rank]),
                global_strides=list(strides[:rank - 1]), box=list(box[:rank]), element_strides=list(es[:rank]),
                swizzle=_SWIZZLE[(sbits, sbase)], l2_promotion=_L2[l2], oob_fill="nan" if oob else "none")


def run_host(dev: Any, mod: Any, args: Sequence[Any]) -> Launch:
    """Run the wrapper's ``ptxlab_host(capture, ...)`` on ``dev`` (an emulator) and parse its capture."""
    cap = dev.empty(CAPTURE_BYTES)
    dev.memset(cap, 0)
    dev.launch(mod, "ptxlab_host", grid=1, block=32, args=[cap, *args])
    return parse_capture(dev.to_host(cap, np.uint8).tobytes())


def resolve_tensor_maps(dev: Any, launch: Launch, buffers: Sequence[Any]) -> list:
    """Argument bytes with each recorded descriptor replaced by a real map made on ``dev`` (over the buffer of
    ``buffers`` that holds its global address)."""
    out = [bytearray(d) for d, _ in launch.args]
    for i, off, r in launch.tensor_maps:
        buf = next((b for b in buffers if b.ptr <= r["address"] < b.ptr + b.nbytes), None)
        if buf is None:
            raise CaptureError(f"TMA descriptor of argument {i} addresses {r['address']:#x}, outside every buffer "
                               "given to the example")
        tm = dev.tensor_map(buf, dtype=r["dtype"], global_shape=r["global_shape"],
                            global_strides=r["global_strides"], box=r["box"], element_strides=r["element_strides"],
                            swizzle=r["swizzle"], l2_promotion=r["l2_promotion"], oob_fill=r["oob_fill"],
                            offset=r["address"] - buf.ptr)
        out[i][off:off + 128] = tm.raw
    return [bytes(b) for b in out]


def kernel_entry(mod: Any, stem: str) -> str:
    ks = [k for k in mod.kernels if stem in k and k != "ptxlab_host"]
    if len(ks) != 1:
        raise CaptureError(f"expected one {stem} entry in the module, got {ks}")
    return ks[0]


def launch_captured(dev: Any, mod: Any, kernel: str, launch: Launch, args: Sequence[bytes]) -> None:
    """Launch ``kernel`` like the example's host code did (grid, block, cluster, shared memory, arguments)."""
    kw = {}
    if launch.cluster != (1, 1, 1):
        kw["cluster"] = launch.cluster
        if launch.cluster[0] * launch.cluster[1] * launch.cluster[2] > 8:   # e.g. the tutorials' 4x4 clusters
            kw["non_portable_cluster"] = True
    if launch.pdl:
        kw["pdl"] = True
    dev.launch(mod, kernel, grid=launch.grid, block=launch.block, args=list(args), shared_bytes=launch.smem_bytes,
               **kw)
