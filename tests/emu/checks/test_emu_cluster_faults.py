"""Cluster faults on the emulator, reported like every other emulator fault (kernel, PTX line, block, thread):
a CTA rank outside the cluster, a peer's address used as .shared::cta, the DSMEM lifetime rule (a CTA exits while a
peer may still access its SMEM), barrier.cluster pairing / .aligned / deadlock, multicast ctaMask, bulk-copy
mbarrier placement, and the H100 TMA dim-0 16-byte start rule."""
from __future__ import annotations

from pathlib import Path

import re

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

SRC = (Path(__file__).parents[2] / "kernels" / "cluster_faults.cu").read_text()


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_90a", name="cluster_faults.cu")


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


def _dsmem(dev, mod, mode, n=4, grid=None):
    out = dev.empty(64 * 8 * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "dsmem_faults", grid=grid or n, block=64, args=[out, np.uint32(mode)], cluster=n)
    return dev.to_host(out, np.uint32)


def test_rank_outside_cluster(dev, mod):
    with pytest.raises(EmuError, match=r"shared::cluster address 0x4[0-9a-f]{6} names CTA rank 4, outside the cluster "
                                       r"of 4 CTA\(s\)") as ei:
        _dsmem(dev, mod, 0)
    assert "ld.shared::cluster" in str(ei.value) and "block" in str(ei.value)
    assert re.search(r"more threads, in \d+ blocks\)|more threads of this block\)", str(ei.value))


def test_peer_address_as_shared_cta(dev, mod):
    with pytest.raises(EmuError, match=r"\.shared::cta load at 0x[0-9a-f]+, outside the executing CTA's shared memory "
                                       r"window") as ei:
        _dsmem(dev, mod, 1)
    assert "ld.shared::cta" in str(ei.value)


def test_access_after_owner_exited(dev, mod):
    with pytest.raises(EmuError, match=r"DSMEM load to the shared memory of CTA \(0, 0, 0\) \(cluster rank 0\), which "
                                       r"has already exited") as ei:
        _dsmem(dev, mod, 2)
    msg = str(ei.value)
    assert "the owner exited at PTX line" in msg and "(exit)" in msg
    assert "ld.shared::cluster" in msg                     # the later access is the faulting instruction


def test_unordered_access_before_owner_exit(mod):
    """Rank 1 stores into rank 0's SMEM while rank 0 reads it and exits: a race (racecheck reports it first, with both
    accesses) and a DSMEM lifetime fault (reported with racecheck off)."""
    with pytest.raises(EmuError, match=r"racecheck: read-after-write hazard \(RAW\) on shared memory") as ei:
        _dsmem(ptxlab.open_device("emu"), mod, 3, n=2)
    assert "st.shared::cluster" in str(ei.value) and "block (1, 0, 0)" in str(ei.value)
    with pytest.raises(EmuError, match=r"DSMEM (lifetime: CTA \(0, 0, 0\) \(cluster rank 0\) exited while this access|"
                                       r"store to the shared memory of CTA \(0, 0, 0\).*already exited)") as ei:
        _dsmem(ptxlab.open_device("emu", racecheck=False), mod, 3, n=2)
    assert "st.shared::cluster" in str(ei.value)


def test_ordered_dsmem_is_clean(dev, mod):
    got = _dsmem(dev, mod, 4, n=4, grid=8)[:8 * 64].reshape(8, 64)
    t = np.arange(64)
    for c in range(8):
        np.testing.assert_array_equal(got[c], ((c % 4 + 1) % 4) * 100 + t)


def test_mbarrier_ordered_peer_store_is_clean(dev, mod):
    """rank 1 writes rank 0's SMEM and arrives on rank 0's mbarrier; rank 0 waits, reads and exits: no fault."""
    got = _dsmem(dev, mod, 5, n=2)
    np.testing.assert_array_equal(got[:64], 7 + np.arange(64))


@pytest.mark.parametrize("mode,pat", [
    (0, r"barrier.cluster.arrive twice without barrier.cluster.wait in between"),
    (1, r"barrier.cluster.wait without a preceding barrier.cluster.arrive"),
    (2, r"\.aligned executed by only part of warp 0"),
    (3, r"deadlock(.|\n)*cluster barriers:\n    cluster of block \(0, 0, 0\): 127 of 128 live threads arrived at "
        r"barrier.cluster phase 0"),
])
def test_cluster_barrier_faults(dev, mod, mode, pat):
    out = dev.empty(4 * 64 * 4)
    with pytest.raises(EmuError, match=pat):
        dev.launch(mod, "cbar_faults", grid=2, block=64, args=[out, np.uint32(mode)], cluster=2)


def test_cluster_barrier_loop_clean(dev, mod):
    out = dev.empty(8 * 64 * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "cbar_faults", grid=8, block=64, args=[out, np.uint32(4)], cluster=4)
    acc = np.arange(64, dtype=np.uint64)
    for i in range(5):
        acc = acc * 3 + i
    np.testing.assert_array_equal(dev.to_host(out, np.uint32).reshape(8, 64), np.tile(acc.astype(np.uint32), (8, 1)))


@pytest.mark.parametrize("mode,mask,pat", [
    (0, 0x13, r"ctaMask 0x0013 names CTA rank 4, outside the cluster of 4"),
    (1, 0x0, r"ctaMask 0x0000 names no destination CTA"),
    (2, 0x0, r"the mbarrier is in CTA rank 2 but dstMem in rank 1"),
    (3, 0x0, r"shared::cluster.shared::cta: dstMem is in the executing CTA"),
])
def test_async_copy_faults(dev, mod, mode, mask, pat):
    g = dev.to_device(np.arange(1024, dtype=np.uint8))
    with pytest.raises(EmuError, match=pat):
        dev.launch(mod, "async_faults", grid=4, block=32, args=[g, np.uint32(mode), np.uint16(mask)], cluster=4)


TMA_X = r"""
struct __align__(64) TmapT { unsigned long long v[16]; };
extern "C" __global__ void k(const __grid_constant__ TmapT tm, int x) {
  __shared__ __align__(1024) unsigned char buf[1024];
  __shared__ __align__(8) unsigned long long bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x) return;
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"((unsigned)__cvta_generic_to_shared(buf)), "l"((unsigned long long)&tm), "r"(x), "r"(0), "r"(b)
               : "memory");
}
"""


def test_tma_dim0_start_not_16_byte_aligned(dev):
    mod = ptxlab.compile(TMA_X, arch="sm_90a", name="tma_x.cu")
    g = dev.to_device(np.arange(64 * 64, dtype=np.uint32))
    tm = dev.tensor_map(g, dtype=np.uint32, global_shape=[64, 64], global_strides=[256], box=[16, 8])
    with pytest.raises(EmuError, match=r"dim-0 coordinate 3 of 4-byte elements: the box starts 12 bytes into the row"):
        dev.launch(mod, "k", grid=1, block=32, args=[tm, np.int32(3)])



PEER_READ = r"""
extern "C" __global__ void k(unsigned *out) {
  __shared__ unsigned buf[64];
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  if (threadIdx.x < 32) buf[threadIdx.x] = 1;          // the upper half is never written
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
  unsigned *p = (unsigned*)__cluster_map_shared_rank(buf, r ^ 1);
  out[blockIdx.x * 64 + threadIdx.x] = p[threadIdx.x];
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}
"""


def test_initcheck_reports_never_written_peer_smem():
    from ptxlab.emu.device import EmuDevice
    dev = EmuDevice(initcheck=True)
    mod = ptxlab.compile(PEER_READ, arch="sm_90a", name="peer_read.cu")
    out = dev.empty(2 * 64 * 4)
    with pytest.raises(EmuError, match=r"initcheck: read of never-written shared memory\n  shared address 0x80 of "
                                       r"cluster rank 1 \(4 bytes\)"):
        dev.launch(mod, "k", grid=2, block=64, args=[out], cluster=2)


BULK_NOFENCE = r"""
extern "C" __global__ void k(unsigned fence) {
  __shared__ __align__(128) unsigned src[64];
  __shared__ __align__(128) unsigned dst[64];
  __shared__ __align__(8) unsigned long long bar;
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  src[threadIdx.x] = threadIdx.x * r;
  if (fence) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 256;" :: "r"(b) : "memory");
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
  if (threadIdx.x == 0) {
    unsigned d, m;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"((unsigned)__cvta_generic_to_shared(dst)), "r"(r ^ 1));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(m) : "r"(b), "r"(r ^ 1));
    asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 256, [%2];"
                 :: "r"(d), "r"((unsigned)__cvta_generic_to_shared(src)), "r"(m) : "memory");
  }
  asm volatile("{\n\t.reg .pred p;\n\tW_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n\t@!p bra W_%=;\n\t}"
               :: "r"(b) : "memory");
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}
"""


def test_proxy_check_per_cta_on_bulk_copy_to_peer(dev):
    """The async proxy reads the source SMEM of cp.async.bulk.shared::cluster.shared::cta: generic writes need
    fence.proxy.async first (proxy.py, per CTA); with the fence the kernel runs clean."""
    mod = ptxlab.compile(BULK_NOFENCE, arch="sm_90a", name="bulk_nofence.cu")
    dev.launch(mod, "k", grid=4, block=64, args=[np.uint32(1)], cluster=2)
    with dev.strict_rules("proxy_fence"), \
            pytest.raises(EmuError, match=r"\[proxy:fence-async\].*cp.async.bulk shared::cta -> shared::cluster source"):
        dev.launch(mod, "k", grid=4, block=64, args=[np.uint32(0)], cluster=2)   # strict: the default only warns


EARLY = r"""
extern "C" __global__ void k(unsigned *out) {
  __shared__ unsigned buf[32];
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  buf[threadIdx.x] = r;
  unsigned *p = (unsigned*)__cluster_map_shared_rank(buf, r ^ 1);   // no cluster barrier before the access
  out[blockIdx.x * 32 + threadIdx.x] = p[threadIdx.x];
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}
"""


def test_access_before_peer_known_started(dev):
    mod = ptxlab.compile(EARLY, arch="sm_90a", name="early.cu")
    out = dev.empty(2 * 32 * 4)
    with pytest.raises(EmuError, match=r"DSMEM load to the shared memory of CTA \([01], 0, 0\) \(cluster rank [01]\) before "
                                       r"that CTA is known to have started"):
        dev.launch(mod, "k", grid=2, block=32, args=[out], cluster=2)


def test_implicit_one_cta_clusters(dev, mod):
    """Without cluster= every CTA is its own cluster: barrier.cluster, mapa to rank 0 and DSMEM to itself work."""
    out = dev.empty(8 * 64 * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "cbar_faults", grid=8, block=64, args=[out, np.uint32(4)])
    acc = np.arange(64, dtype=np.uint64)
    for i in range(5):
        acc = acc * 3 + i
    np.testing.assert_array_equal(dev.to_host(out, np.uint32).reshape(8, 64), np.tile(acc.astype(np.uint32), (8, 1)))
    dev.memset(out, 0xFF)
    dev.launch(mod, "dsmem_faults", grid=3, block=64, args=[out, np.uint32(4)])
    np.testing.assert_array_equal(dev.to_host(out, np.uint32)[:3 * 64].reshape(3, 64), np.tile(np.arange(64), (3, 1)))
