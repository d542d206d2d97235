"""Emulator resources and launch arguments: a failed allocation leaves the heap usable, freed memory is reused (a
loop of large alloc/free stays at one allocation's size), the heap limit is a clear error, and launch geometry must be
ints (grid='12' used to run as (1, 2, 1))."""
from __future__ import annotations

import resource

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.core.memory import GlobalHeap
from ptxlab.errors import LaunchError, PtxlabError

COPY = r'''
extern "C" __global__ void copy(const unsigned* x, unsigned* y) { y[threadIdx.x] = x[threadIdx.x] + 1u; }'''


def test_failed_allocation_leaves_the_heap_usable(rng):
    dev = ptxlab.open_device("emu")
    before = dev.to_device(rng.integers(1, 2**32, 64, dtype=np.uint32))
    for huge in (10**15, 2**60):
        with pytest.raises(PtxlabError, match=r"emulated global memory: an allocation of .* would exceed"):
            dev.empty(huge)
    mod = ptxlab.compile(COPY, arch="sm_90a", name="copy.cu")
    y = dev.empty(256)
    dev.launch(mod, "copy", grid=1, block=64, args=[before, y])
    assert (dev.to_host(y, np.uint32) == dev.to_host(before, np.uint32) + 1).all()
    assert dev.heap.buf.size < 1 << 24                  # the refused request did not grow the heap


def test_freed_memory_is_reused():
    """40 x (64 MiB alloc, touch, free) keeps the heap at one allocation (it was 40 x 64 MiB = 2.5 GiB resident)."""
    dev = ptxlab.open_device("emu")
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ptrs = set()
    for i in range(40):
        b = dev.empty(64 << 20)
        dev.memset(b, i + 1)
        ptrs.add(b.ptr)
        dev.free(b)
    assert len(ptrs) == 1 and dev.heap.buf.size <= (64 << 20) + (2 << 20)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 600 * 1024    # KiB: far below 40 x 64 MiB


def test_reuse_fills_gaps_and_keeps_guards(rng):
    h = GlobalHeap(capacity=1 << 16, limit=1 << 20)
    a, b, c = h.alloc(4000, "a"), h.alloc(4000, "b"), h.alloc(4000, "c")
    h.free(b)
    while (h.top + 255) // 256 * 256 + 3000 + 256 <= h.buf.size:   # fill the capacity: the next allocation must reuse
        h.alloc(100)
    d = h.alloc(3000, "d")
    assert a < d < c                                    # b's gap, between a and c
    off = d - 0x7F00_0000_0000
    assert h.find(off - 1) is None and h.find(off + 3000) is None   # guard gaps on both sides
    with pytest.raises(PtxlabError, match="PTXLAB_EMU_MEMORY"):
        h.alloc(1 << 21)


@pytest.mark.parametrize("grid", ["12", "1", 1.0, (1.0, 1), True, None, (0, 1, 1), (1, 1, 1, 1), {"x": 1}])
def test_grid_must_be_ints(grid):
    dev = ptxlab.open_device("emu")
    mod = ptxlab.compile(COPY, arch="sm_90a", name="copy.cu")
    x, y = dev.to_device(np.arange(32, dtype=np.uint32)), dev.empty(128)
    with pytest.raises(LaunchError, match="grid"):
        dev.launch(mod, "copy", grid=grid, block=32, args=[x, y])
    with pytest.raises(LaunchError, match="block"):
        dev.launch(mod, "copy", grid=1, block="32", args=[x, y])
    with pytest.raises(LaunchError, match="shared_bytes"):
        dev.launch(mod, "copy", grid=1, block=32, args=[x, y], shared_bytes=1.5)
