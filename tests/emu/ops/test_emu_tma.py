"""Emulator TMA / bulk-copy handlers, driven by NVRTC-compiled CUDA kernels (sm_90a) through the device API."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError, PtxlabError

from probes.tma_probes import (BULK_SRC, COMMON, LOAD_SRC, LOAD_SRC_DSL, PIPE_SRC, STORE_SRC, copy_dsl,  # noqa: F401
                               module)

@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


def ref_swz(mode: str, a: int) -> int:
    """PTX 5.5.7 tables (ptx_facts §9): 16-B chunk c of 128-B line L -> c ^ (L & m); ATOM_32B / ATOM_64B pairs/halves."""
    line, off = a >> 7, a & 127
    if mode == "none":
        return a
    if mode == "128B_ATOM_32B":
        return (line << 7) | (((off >> 5) ^ (line & 3)) << 5) | (off & 31)
    if mode == "128B_ATOM_64B":
        return (line << 7) | (((off >> 6) ^ (line & 1)) << 6) | (off & 63)
    m = {"32B": 1, "64B": 3, "128B": 7}[mode]
    return (line << 7) | (((off >> 4) ^ (line & m)) << 4) | (off & 15)


def ref_box_2d(g: np.ndarray, coords, box, esize: int, swizzle: str) -> np.ndarray:
    """Slow reference: element-by-element box read with zero fill, then byte-wise swizzle of the dense image."""
    rows, cols = g.shape[0], g.shape[1] // esize
    dense = np.zeros(box[1] * box[0] * esize, np.uint8)
    for r in range(box[1]):
        for c in range(box[0]):
            y, x = coords[1] + r, coords[0] + c
            if 0 <= y < rows and 0 <= x < cols:
                for k in range(esize):
                    dense[(r * box[0] + c) * esize + k] = g[y, x * esize + k]
    out = np.zeros_like(dense)
    for o in range(dense.size):
        out[ref_swz(swizzle, o)] = dense[o]
    return out


SPAN = {"none": 64, "32B": 32, "64B": 64, "128B": 128, "128B_ATOM_32B": 128, "128B_ATOM_64B": 128}


@pytest.mark.parametrize("swizzle", list(SPAN))
@pytest.mark.parametrize("dtype,esize", [(np.uint8, 1), (np.float16, 2)])
def test_tma_2d_load_each_swizzle(dev, rng, swizzle: str, dtype, esize: int) -> None:
    mod = module("load2d", LOAD_SRC)
    box0 = SPAN[swizzle] // esize
    rows, cols = 24, box0 * 3
    g = rng.integers(1, 256, size=(rows, cols * esize), dtype=np.uint8)
    x = dev.to_device(g)
    box = [box0, 8]
    tm = dev.tensor_map(x, dtype=dtype, global_shape=[cols, rows], global_strides=[cols * esize], box=box,
                        swizzle=swizzle)
    coords = [int(rng.integers(0, cols - box0 + 1)), int(rng.integers(0, rows - 8 + 1))]
    nbytes = box0 * esize * 8
    y = dev.empty(nbytes)
    dev.memset(y, 0x00)
    dev.launch(mod, "load2d", grid=1, block=64, args=[tm, y, np.int32(coords[0]), np.int32(coords[1]),
                                                        np.uint32(nbytes), np.uint32(nbytes)])
    got = dev.to_host(y, np.uint8, (nbytes,))
    want = ref_box_2d(g, coords, box, esize, swizzle)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"coords {coords}: first diff at smem +{bad[0]:#x}: {got[bad[0]]:#x} != {want[bad[0]]:#x}"


@pytest.mark.parametrize("swizzle", ["none", "128B"])
def test_tma_2d_load_in_the_cute_dsl_spelling(dev, rng, swizzle: str) -> None:
    """The CuTe DSL's forms (.shared::cta destination + .L2::cache_hint, arrive.expect_tx.shared) load the same box
    as the .shared::cluster / .shared::cta spelling: the destination is the issuing CTA's shared memory either way."""
    rows, cols, esize = 24, 3 * SPAN[swizzle] // 2, 2
    g = rng.integers(1, 256, size=(rows, cols * esize), dtype=np.uint8)
    tm = dev.tensor_map(dev.to_device(g), dtype=np.float16, global_shape=[cols, rows], global_strides=[cols * esize],
                        box=[SPAN[swizzle] // esize, 8], swizzle=swizzle)
    coords = [int(rng.integers(-8, cols)), int(rng.integers(-4, rows))]
    nbytes = SPAN[swizzle] * 8
    got = {}
    for name, src in (("load2d", LOAD_SRC), ("load2d_dsl", LOAD_SRC_DSL)):
        y = dev.empty(nbytes)
        dev.memset(y, 0xA5)
        dev.launch(module(name, src), "load2d", grid=1, block=64,
                   args=[tm, y, np.int32(coords[0]), np.int32(coords[1]), np.uint32(nbytes), np.uint32(nbytes)])
        got[name] = dev.to_host(y, np.uint8, (nbytes,))
    want = ref_box_2d(g, coords, [SPAN[swizzle] // esize, 8], esize, swizzle)
    assert np.array_equal(got["load2d_dsl"], want), f"coords {coords}"
    assert np.array_equal(got["load2d"], want)


# rank -> (global shape, box), innermost first (int32 elements)
COPY_CASES = {2: ([24, 10], [8, 4]), 3: ([16, 6, 5], [8, 4, 2]), 4: ([16, 5, 4, 3], [8, 2, 2, 2])}


@pytest.mark.parametrize("rank", sorted(COPY_CASES))
def test_tma_copy_in_the_cute_dsl_spelling(dev, rng, rank: int) -> None:
    """A box copied by TMA load (.shared::cta destination) and TMA store, both with .L2::cache_hint, after an L2
    prefetch of the box, synchronised by expect_tx.relaxed.cta / try_wait.parity.acquire.cta: exactly the box of
    the source lands in the poisoned destination, nothing else is written."""
    shape, box = COPY_CASES[rank]
    src = rng.integers(-2**31, 2**31, size=shape[::-1], dtype=np.int64).astype(np.int32)
    strides = [int(np.prod(shape[:i])) * 4 for i in range(1, rank)]
    xs, xd = dev.to_device(src), dev.empty(src.nbytes)
    dev.memset(xd, 0xEE)
    tms = [dev.tensor_map(x, dtype=np.int32, global_shape=shape, global_strides=strides, box=box) for x in (xs, xd)]
    coords = [int(rng.integers(0, s - b + 1)) for s, b in zip(shape, box)]
    coords[0] -= coords[0] % 4                      # the box starts on a 16-byte boundary of its row (tma.md)
    nbytes = int(np.prod(box)) * 4
    dev.launch(module(f"copy_dsl{rank}", copy_dsl(rank)), "copy_dsl", grid=1, block=32,
               args=[*tms, dev.to_device(np.array(coords, np.int32)), np.uint32(nbytes)])
    got = dev.to_host(xd, np.int32, tuple(shape[::-1]))
    want = np.full_like(src, np.uint32(0xEEEEEEEE).view(np.int32))
    sel = tuple(slice(c, c + b) for c, b in zip(coords[::-1], box[::-1]))
    want[sel] = src[sel]
    assert np.array_equal(got, want), f"coords {coords}"


@pytest.mark.parametrize("where", ["low", "high"])
def test_tma_oob_box_zero_filled(dev, rng, where: str) -> None:
    mod = module("load2d", LOAD_SRC)
    rows, cols = 10, 200
    g = rng.integers(1, 256, size=(rows, 208), dtype=np.uint8)     # row pitch 208 B (multiple of 16)
    x = dev.to_device(g)
    box = [128, 8]
    tm = dev.tensor_map(x, dtype=np.uint8, global_shape=[cols, rows], global_strides=[208], box=box,
                        swizzle="128B")
    coords = [-37, -3] if where == "low" else [cols - 50, rows - 5]
    y = dev.empty(1024)
    dev.launch(mod, "load2d", grid=1, block=64, args=[tm, y, np.int32(coords[0]), np.int32(coords[1]),
                                                        np.uint32(1024), np.uint32(1024)])
    got = dev.to_host(y, np.uint8, (1024,))
    want = ref_box_2d(g[:, :cols], coords, box, 1, "128B")
    assert np.array_equal(got, want), f"coords {coords}"
    assert (got == 0).sum() > 0 and (got != 0).sum() > 0


def test_multistage_mbarrier_pipeline(dev, rng) -> None:
    """Producer/consumer ring with full/empty barriers and phase parity flips (ptx_facts §9 idiom)."""
    mod = module("pipeline", PIPE_SRC)
    ntiles, rows_per = 7, 4
    a = rng.integers(-1000, 1000, size=(ntiles * rows_per, 64)).astype(np.int32)
    x = dev.to_device(a)
    tm = dev.tensor_map(x, dtype=np.int32, global_shape=[64, ntiles * rows_per], global_strides=[256],
                        box=[64, rows_per])          # 256-B rows, no swizzle
    y = dev.empty(64 * 4)
    dev.memset(y, 0xFF)
    dev.launch(mod, "pipeline", grid=1, block=65, args=[tm, y, np.int32(ntiles)])
    got = dev.to_host(y, np.int32, (64,))
    weights = np.repeat(np.arange(1, ntiles + 1, dtype=np.int32), rows_per)
    want = (a * weights[:, None]).sum(axis=0)
    assert np.array_equal(got, want)


def test_wrong_expect_tx_is_a_deadlock_report(dev, rng) -> None:
    mod = module("load2d", LOAD_SRC)
    g = rng.integers(1, 256, size=(8, 128), dtype=np.uint8)
    x = dev.to_device(g)
    tm = dev.tensor_map(x, dtype=np.uint8, global_shape=[128, 8], global_strides=[128], box=[128, 8],
                        swizzle="128B")
    y = dev.empty(1024)
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "load2d", grid=1, block=64, args=[tm, y, np.int32(0), np.int32(0), np.uint32(1024),
                                                            np.uint32(1024 + 48)])
    msg = str(ei.value)
    assert "deadlock" in msg and "mbarrier @shared" in msg and "phase 0" in msg, msg
    assert "48 bytes expected" in msg, msg


def test_too_small_expect_tx_is_refused_when_the_load_lands(dev, rng) -> None:
    """expect_tx below the box bytes with the only arrival done: the H100 completes such a phase mid-copy (mbarrier
    kit over_deliver_bulk, 2026-11-22); the emulator stops at the landing copy with the byte counts."""
    mod = module("load2d", LOAD_SRC)
    x = dev.to_device(rng.integers(1, 256, size=(8, 128), dtype=np.uint8))
    tm = dev.tensor_map(x, dtype=np.uint8, global_shape=[128, 8], global_strides=[128], box=[128, 8],
                        swizzle="128B")
    y = dev.empty(1024)
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "load2d", grid=1, block=64, args=[tm, y, np.int32(0), np.int32(0), np.uint32(1024),
                                                            np.uint32(1024 - 48)])
    msg = str(ei.value)
    assert "completes 1024 bytes" in msg and "48 bytes more than announced" in msg and "H100" in msg, msg


def test_bulk_copy_roundtrip(dev, rng) -> None:
    mod = module("bulk", BULK_SRC)
    n = 16 * int(rng.integers(1, 200))
    src = rng.integers(0, 256, size=n, dtype=np.uint8)
    x, y = dev.to_device(src), dev.empty(n)
    dev.memset(y, 0x00)
    dev.launch(mod, "bulk", grid=1, block=32, args=[x, y, np.uint32(n)])
    assert np.array_equal(dev.to_host(y, np.uint8, (n,)), src ^ 0x5A)


def test_bulk_copy_size_rule(dev) -> None:
    mod = module("bulk", BULK_SRC)
    x, y = dev.to_device(np.zeros(64, np.uint8)), dev.empty(64)
    with pytest.raises(EmuError, match="multiple of 16"):
        dev.launch(mod, "bulk", grid=1, block=32, args=[x, y, np.uint32(40)])


def test_tma_store_skips_oob(dev, rng) -> None:
    mod = module("store2d", STORE_SRC)
    rows, cols = 12, 100
    box = [64, 8]
    img = rng.integers(0, 256, size=1024, dtype=np.uint8)      # swizzled (64B) smem image of the box
    gbuf = dev.empty(rows * 112)
    dev.memset(gbuf, 0xEE)
    tm = dev.tensor_map(gbuf, dtype=np.uint8, global_shape=[cols, rows], global_strides=[112], box=box,
                        swizzle="64B")
    coords = [60, 7]
    dev.launch(mod, "store2d", grid=1, block=64, args=[tm, dev.to_device(img), np.int32(coords[0]),
                                                         np.int32(coords[1]), np.uint32(512)])
    got = dev.to_host(gbuf, np.uint8, (rows, 112))
    want = np.full((rows, 112), 0xEE, np.uint8)
    for r in range(box[1]):
        for c in range(box[0]):
            y, xx = coords[1] + r, coords[0] + c
            if y < rows and xx < cols:
                want[y, xx] = img[ref_swz("64B", r * 64 + c)]
    assert np.array_equal(got, want)


def test_misaligned_tma_destination_is_reported(dev) -> None:
    src = COMMON + r'''
extern "C" __global__ void mis(const __grid_constant__ TmapT tm) {
    __shared__ __align__(1024) unsigned char buf[2048];
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x == 0) {
        bar_init(sa(&bar), 1);
        bar_expect_arrive(sa(&bar), 1024);
        tma2d(sa(buf) + 64, &tm, sa(&bar), 0, 0);
        bar_wait(sa(&bar), 0);
    }
}
'''
    mod = module("mis", src)
    x = dev.to_device(np.ones((8, 128), np.uint8))
    tm = dev.tensor_map(x, dtype=np.uint8, global_shape=[128, 8], global_strides=[128], box=[128, 8],
                        swizzle="128B")
    # H100 (2026-11-22, tests/fidelity/tma probe 'align'): +64 B faults with CUDA_ERROR_MISALIGNED_ADDRESS
    with pytest.raises(EmuError, match="128-byte aligned"):
        dev.launch(mod, "mis", grid=1, block=32, args=[tm])


PARAM64_SRC = COMMON + r'''
// the map follows an 8-byte pointer: .param .align 64 puts it at offset 64, a multiple of 64 but not of 128
extern "C" __global__ void load_at64(unsigned char* out, const __grid_constant__ TmapT tm, unsigned nbytes) {
    __shared__ __align__(1024) unsigned char buf[2048];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = sa(&bar);
    if (threadIdx.x == 0) {
        bar_init(b, 1);
        bar_expect_arrive(b, nbytes);
        tma2d(sa(buf), &tm, b, 0, 0);
    }
    __syncthreads();
    bar_wait(b, 0);
    for (unsigned i = threadIdx.x; i < nbytes; i += blockDim.x) out[W(i)] = buf[i];
}
'''


def test_tensor_map_param_at_64_not_128_aligned_offset(dev, rng) -> None:
    """CUtensorMap is alignas(64): a map parameter at param offset 64 is legal; its 128-byte read is not held to
    128-byte natural alignment (CUTLASS kernels with the map after other params hit the old false alarm)."""
    mod = module("load_at64", PARAM64_SRC)
    lay = dev.param_layout(mod, "load_at64")
    offs, o = [], 0
    for p in lay:
        o = (o + p.align - 1) // p.align * p.align
        offs.append(o)
        o += p.size
    assert offs[1] == 64 and offs[1] % 128 == 64 and lay[1].size == 128
    g = rng.integers(1, 256, size=(8, 64), dtype=np.uint8)
    x = dev.to_device(g)
    tm = dev.tensor_map(x, dtype=np.uint8, global_shape=[64, 8], global_strides=[64], box=[64, 8])
    y = dev.empty(512)
    dev.memset(y, 0)
    dev.launch(mod, "load_at64", grid=1, block=32, args=[y, tm, np.uint32(512)])
    np.testing.assert_array_equal(dev.to_host(y, np.uint8, (512,)), g.reshape(-1))
