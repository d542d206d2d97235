"""Generic-proxy -> async-proxy SMEM ordering (ptxlab/emu/hw/proxy.py): SMEM written by generic stores and then read by
the async proxy (TMA store, cp.async.bulk shared->global, tcgen05.cp, tcgen05.mma operands) needs fence.proxy.async
(PTX ISA 8.6 proxies, 9.7.13.4).  For each reader: no fence -> error naming the reader; fence by the writers before
the barrier -> passes; barrier then a fence by the issuing thread -> passes (permissive, cumulative reading); a write
after the fence -> error again."""
from __future__ import annotations

import re

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

from probes.tcgen05_probes import mma_nvfp4
from probes.tma_probes import BULK_SRC, STORE_SRC, module

FENCE = 'asm volatile("fence.proxy.async.shared::cta;" ::: "memory");'


@pytest.fixture(scope="module")
def dev():
    """Strict proxy rule: a missing fence is an error (the default only warns: ptxlab/emu/checks/fidelity.py)."""
    return ptxlab.open_device("emu", strict="proxy_fence")


def _variant(src: str, how: str, fence: str = FENCE, sync: str = "__syncthreads();",
             issue: str = "if (threadIdx.x == 0) {", redirty: str = "") -> str:
    """Rewrite a kernel that does `stores; fence; sync; if (t0) { async read }` into variant ``how``."""
    pat = re.compile(re.escape(fence) + r"[^\n]*\n(\s*)" + re.escape(sync))
    hit = pat.search(src)
    assert hit is not None, "kernel shape changed"
    sep = "\n" + hit.group(1)
    if how == "fenced":
        return src
    if how == "nofence":
        return src[:hit.start()] + sync + src[hit.end():]
    if how == "issuer_fence":                       # barrier, then the issuing thread fences (permissive)
        s = src[:hit.start()] + sync + src[hit.end():]
        i = s.index(issue, hit.start()) + len(issue)
        return s[:i] + sep + "    " + fence + s[i:]
    if how == "redirty":                            # a generic store after the fence, before the barrier
        return src[:hit.start()] + fence + sep + redirty + sep + sync + src[hit.end():]
    raise ValueError(how)


# ------------------------------------------------------------------------------------------------ TMA store
def _tma_store(dev, src: str, name: str):
    mod = module(name, src)
    img = np.arange(1024, dtype=np.uint32).astype(np.uint8)
    gbuf = dev.empty(8 * 128)
    tm = dev.tensor_map(gbuf, dtype=np.uint8, global_shape=[128, 8], global_strides=[128], box=[64, 8],
                        swizzle="64B")
    dev.launch(mod, "store2d", grid=1, block=64, args=[tm, dev.to_device(img), np.int32(0), np.int32(0),
                                                         np.uint32(512)])


@pytest.mark.parametrize("how", ["fenced", "issuer_fence"])
def test_tma_store_fenced_passes(dev, how: str) -> None:
    _tma_store(dev, _variant(STORE_SRC, how), f"px_store_{how}")


@pytest.mark.parametrize("how", ["nofence", "redirty"])
def test_tma_store_unfenced_is_caught(dev, how: str) -> None:
    src = _variant(STORE_SRC, how, redirty="buf[threadIdx.x] ^= 1;")
    with pytest.raises(EmuError) as e:
        _tma_store(dev, src, f"px_store_{how}")
    msg = str(e.value)
    assert "read by the async proxy (TMA store cp.async.bulk.tensor source) without fence.proxy.async" in msg, msg
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in msg           # the PTX line of the reader
    assert "written by thread (" in msg and "fence.proxy.async.shared::cta in the writing threads" in msg
    if how == "redirty":
        assert "in [0x0, 0x40)" in msg, msg                               # only the 64 re-written bytes


# ------------------------------------------------------------------------------------------------ bulk s2g
def _bulk(dev, src: str, name: str):
    mod = module(name, src)
    n = 256
    x, y = dev.to_device(np.arange(n, dtype=np.uint32).astype(np.uint8)), dev.empty(n)
    dev.launch(mod, "bulk", grid=1, block=32, args=[x, y, np.uint32(n)])
    return dev.to_host(y, np.uint8, (n,))


@pytest.mark.parametrize("how", ["fenced", "issuer_fence"])
def test_bulk_s2g_fenced_passes(dev, how: str) -> None:
    got = _bulk(dev, _variant(BULK_SRC, how), f"px_bulk_{how}")
    assert np.array_equal(got, np.arange(256, dtype=np.uint32).astype(np.uint8) ^ 0x5A)


@pytest.mark.parametrize("how", ["nofence", "redirty"])
def test_bulk_s2g_unfenced_is_caught(dev, how: str) -> None:
    src = _variant(BULK_SRC, how, redirty="buf[threadIdx.x + 32] = 7;")
    with pytest.raises(EmuError) as e:
        _bulk(dev, src, f"px_bulk_{how}")
    msg = str(e.value)
    assert "(cp.async.bulk shared::cta -> global source) without fence.proxy.async" in msg, msg
    assert "cp.async.bulk.global.shared::cta.bulk_group" in msg


def test_tma_load_bytes_need_no_fence(dev) -> None:
    """Bytes written by the async proxy (the bulk load) are clean: copying them out needs no proxy fence."""
    src = BULK_SRC.replace("for (unsigned i = threadIdx.x; i < n; i += blockDim.x) buf[i] ^= 0x5A;", "")
    got = _bulk(dev, _variant(src, "nofence"), "px_bulk_asyncwritten")
    assert np.array_equal(got, np.arange(256, dtype=np.uint32).astype(np.uint8))


# ------------------------------------------------------------------------------------------------ tcgen05
def _nvfp4(dev, src: str, N: int = 8):
    mod = ptxlab.compile(src, arch="sm_100a")
    out = dev.empty(128 * N * 4)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(np.full(128 * 8, 0x22222222, np.uint32)),
                     dev.to_device(np.full(N * 8, 0x22222222, np.uint32)),
                     dev.to_device(np.full(128, 0x38383838, np.uint32)),
                     dev.to_device(np.full(128, 0x38383838, np.uint32)), out])
    return dev.to_host(out, np.uint32).reshape(128, N).view(np.float32)


_T0 = "if (threadIdx.x == 0) {\n    const uint32_t sfa_t"


@pytest.mark.parametrize("how", ["fenced", "issuer_fence"])
def test_tcgen05_fenced_passes(dev, how: str) -> None:
    src = _variant(mma_nvfp4(8), how, sync="__syncthreads();", issue="if (threadIdx.x == 0) {")
    assert (_nvfp4(dev, src) == 64.0).all()          # e2m1 1.0 x 1.0, scales 1.0, K = 64


def test_tcgen05_cp_unfenced_is_caught(dev) -> None:
    with pytest.raises(EmuError) as e:
        _nvfp4(dev, _variant(mma_nvfp4(8), "nofence"))
    msg = str(e.value)
    assert "(tcgen05.cp.32x128b source) without fence.proxy.async" in msg, msg
    assert "tcgen05.cp.cta_group::1.32x128b.warpx4" in msg


@pytest.mark.parametrize("operand,store", [("A", "sA[threadIdx.x] = A[threadIdx.x];"),
                                           ("B", "if (threadIdx.x < 64) sB[threadIdx.x] = B[threadIdx.x];")])
def test_tcgen05_mma_operand_rewritten_after_fence_is_caught(operand: str, store: str) -> None:
    # the rewrite also races with the first fill (other threads, no barrier between): racecheck (on by default)
    # reports that first; this test is about the proxy check, so racecheck is off here
    dev = ptxlab.open_device("emu", strict="proxy_fence", racecheck=False)
    with pytest.raises(EmuError) as e:
        _nvfp4(dev, _variant(mma_nvfp4(8), "redirty", redirty=store))
    msg = str(e.value)
    assert f"(tcgen05.mma operand {operand}) without fence.proxy.async" in msg, msg
    assert "tcgen05.mma.cta_group::1.kind::mxf4nvf4" in msg


def test_fence_by_another_thread_without_barrier_does_not_clean(dev) -> None:
    """Thread 0 fencing does not order thread 5's stores if thread 0 has not passed a barrier after them."""
    src = STORE_SRC.replace(FENCE + "\n    __syncthreads();",
                            "__syncthreads();\n    if (threadIdx.x == 5) buf[5] = 1;\n    "
                            "if (threadIdx.x == 0) { " + FENCE + " }")
    assert src != STORE_SRC
    src = src.replace("for (unsigned i = threadIdx.x; i < nbytes; i += blockDim.x) buf[i] = in[W(i)];",
                      "for (unsigned i = threadIdx.x; i < nbytes; i += blockDim.x) buf[i] = in[W(i)];\n    " + FENCE)
    with pytest.raises(EmuError) as e:
        _tma_store(dev, src, "px_store_otherthread")
    msg = str(e.value)
    assert "in [0x5, 0x6)" in msg and "written by thread (5, 0, 0)" in msg, msg


def test_check_can_be_disabled(dev, monkeypatch) -> None:
    from ptxlab.emu.hw import proxy
    monkeypatch.setattr(proxy, "ENABLED", False)
    _tma_store(dev, _variant(STORE_SRC, "nofence"), "px_store_nofence")


def test_only_kernels_with_an_async_smem_reader_are_shadowed(dev) -> None:
    """TMA / bulk *loads* (cp.async.bulk.*.shared::cluster.global), prefetches and commit/wait groups read no SMEM
    through the async proxy: a load-only kernel gets no shadow (it used to, by the 'cp.async.bulk' name prefix);
    a TMA store / bulk shared->global kernel does."""
    from ptxlab.emu.hw import proxy
    from probes.tma_probes import LOAD_SRC, PIPE_SRC

    impl = getattr(dev, "_impl", dev)
    for name, src, want in [("px_load", LOAD_SRC, False), ("px_pipe", PIPE_SRC, False),
                            ("px_store", STORE_SRC, True), ("px_bulk", BULK_SRC, True)]:
        mod = module(name, src)
        prog = impl.program(mod, mod.kernels[0])
        assert proxy.program_has_async_smem_readers(prog) is want or proxy.FORCE, name


# ------------------------------------------------------------------------------------------------ warp / named barriers
_S2G = r'''
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void s2g(unsigned char* dst, const void* src, unsigned n) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" :: "l"(dst), "r"(sa(src)), "r"(n)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
'''

WARP_SRC = _S2G + r'''
extern "C" __global__ void k(unsigned char* dst) {
    __shared__ __align__(128) unsigned char buf[256];
    for (unsigned i = threadIdx.x; i < 256; i += 32) buf[i] = (unsigned char)(i ^ 0x5A);
    SYNC
    if (threadIdx.x == 0) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        s2g(dst, buf, 256);
    }
}
'''


def _run_s2g(dev, name: str, src: str, block: int, arch: str = "sm_90a"):
    mod = ptxlab.compile(src, arch=arch, name=f"{name}.cu")
    y = dev.empty(256)
    dev.launch(mod, "k", grid=1, block=block, args=[y])
    return dev.to_host(y, np.uint8, (256,))


def test_warp_sync_publishes_member_lanes(dev) -> None:
    """Lanes store, __syncwarp() (bar.warp.sync orders memory among its members, PTX ISA 9.7.13.2), then lane 0
    fences and issues the bulk copy: valid under the same cumulative reading as a CTA barrier."""
    src = WARP_SRC.replace("SYNC", "__syncwarp();")
    assert "bar.warp.sync" in ptxlab.compile(src, arch="sm_90a", name="px_warp_ok.cu").ptx
    got = _run_s2g(dev, "px_warp_ok", src, 32)
    assert np.array_equal(got, np.arange(256, dtype=np.uint32).astype(np.uint8) ^ 0x5A)


def test_warp_sync_lane_outside_membermask_is_caught(dev) -> None:
    """Lanes 16..31 are not in the membermask: their bytes are not published to lane 0, whose fence leaves them."""
    src = WARP_SRC.replace("SYNC", "if (threadIdx.x < 16) __syncwarp(0x0000FFFFu);")
    with pytest.raises(EmuError) as e:
        _run_s2g(dev, "px_warp_half", src, 32)
    msg = str(e.value)
    assert "(cp.async.bulk shared::cta -> global source) without fence.proxy.async" in msg, msg
    assert "in [0x10, " in msg and "written by thread (16, 0, 0)" in msg, msg


NAMED_SRC = _S2G + r'''
extern "C" __global__ void k(unsigned char* dst) {
    __shared__ __align__(128) unsigned char buf[256];
    if (threadIdx.x >= 32) {                                   // producer warp: store, arrive on 1 then on 2
        for (unsigned i = threadIdx.x - 32; i < 256; i += 32) buf[i] = (unsigned char)(i ^ 0x5A);
        asm volatile("bar.arrive 1, 64;" ::: "memory");
        asm volatile("bar.arrive 2, 64;" ::: "memory");
    } else {                                                   // consumer warp: wait on 1, fence, copy; then 2
        asm volatile("bar.sync 1, 64;" ::: "memory");
        if (threadIdx.x == 0) {
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            s2g(dst, buf, 256);
        }
        asm volatile("bar.sync 2, 64;" ::: "memory");
    }
}
'''


def test_arrivals_on_two_named_barriers_are_both_kept(dev) -> None:
    """bar.arrive 1 then bar.arrive 2 before barrier 1 is released: barrier 1's release still publishes the producer's
    bytes (one arrival slot per thread used to keep only barrier 2, and flagged the consumer's copy)."""
    got = _run_s2g(dev, "px_named", NAMED_SRC, 64)
    assert np.array_equal(got, np.arange(256, dtype=np.uint32).astype(np.uint8) ^ 0x5A)


# ------------------------------------------------------------------------------------------------ .cp_mask
MASK_SRC = r'''
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
extern "C" __global__ void k(unsigned char* dst) {
    __shared__ __align__(128) unsigned char buf[256];
    for (unsigned i = threadIdx.x; i < 256; i += 32) buf[i] = (unsigned char)(i ^ 0x5A);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    for (unsigned i = threadIdx.x; i < 256; i += 32) if (i % 16 >= 8) buf[i] = 0;   // after the fence: dirty
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%0], [%1], 256, %2;"
                     :: "l"(dst), "r"(sa(buf)), "h"((unsigned short)MASK) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}
'''


def test_cp_mask_checks_only_the_selected_bytes(dev) -> None:
    """cp.async.bulk ... .cp_mask reads only the bytes its byteMask selects: bytes 8..15 of each 16-byte chunk are
    re-written after the fence, so mask 0x00FF is clean and 0xFFFF is flagged at byte 8."""
    got = _run_s2g(dev, "px_cpmask_lo", MASK_SRC.replace("MASK", "0x00FF"), 32, arch="sm_100a")
    want = np.arange(256, dtype=np.uint32).astype(np.uint8) ^ 0x5A
    sel = (np.arange(256) % 16) < 8
    assert np.array_equal(got[sel], want[sel])
    with pytest.raises(EmuError) as e:
        _run_s2g(dev, "px_cpmask_all", MASK_SRC.replace("MASK", "0xFFFF"), 32, arch="sm_100a")
    msg = str(e.value)
    assert "(cp.async.bulk shared::cta -> global source (.cp_mask bytes)) without fence.proxy.async" in msg, msg
    assert "in [0x8, " in msg and "written by thread (8, 0, 0)" in msg, msg


def test_default_warns_once_per_site_and_runs_on(rng) -> None:
    """Default setting (no strict rule): the unfenced TMA store runs on with the data the generic stores wrote,
    with one EmuFidelityWarning naming the reader's PTX line, listed in last_stats."""
    from ptxlab.emu.checks.fidelity import EmuFidelityWarning

    dev = ptxlab.open_device("emu", strict=())
    mod = module("px_store_nofence", _variant(STORE_SRC, "nofence"))
    img = rng.integers(1, 256, 1024, dtype=np.uint8)
    gbuf = dev.empty(8 * 128)
    dev.memset(gbuf, 0)
    tm = dev.tensor_map(gbuf, dtype=np.uint8, global_shape=[128, 8], global_strides=[128], box=[64, 8],
                        swizzle="64B")
    with pytest.warns(EmuFidelityWarning, match=r"\[proxy:fence-async\].*TMA store") as rec:
        dev.launch(mod, "store2d", grid=1, block=64, args=[tm, dev.to_device(img), np.int32(0), np.int32(0),
                                                             np.uint32(512)])
    fw = [w for w in rec if issubclass(w.category, EmuFidelityWarning)]
    assert len(fw) == 1 and "PTXLAB_EMU_STRICT=proxy_fence" in str(fw[0].message)
    assert len(dev.last_stats["fidelity_warnings"]) == 1
    assert dev.to_host(gbuf, np.uint8).any()        # the store happened (data of the generic stores)
    with dev.strict_rules("proxy_fence"), pytest.raises(EmuError, match="strict rule 'proxy_fence'"):
        dev.launch(mod, "store2d", grid=1, block=64, args=[tm, dev.to_device(img), np.int32(0), np.int32(0),
                                                             np.uint32(512)])


def test_strict_from_env(monkeypatch) -> None:
    monkeypatch.setenv("PTXLAB_EMU_STRICT", "all")
    dev = ptxlab.open_device("emu")
    mod = module("px_store_nofence", _variant(STORE_SRC, "nofence"))
    gbuf = dev.empty(8 * 128)
    tm = dev.tensor_map(gbuf, dtype=np.uint8, global_shape=[128, 8], global_strides=[128], box=[64, 8],
                        swizzle="64B")
    with pytest.raises(EmuError, match="without fence.proxy.async"):
        dev.launch(mod, "store2d", grid=1, block=64, args=[tm, dev.to_device(np.ones(1024, np.uint8)),
                                                             np.int32(0), np.int32(0), np.uint32(512)])
