"""cp.async.bulk.tensor with .cta_group::2 written in CuTe's modifier order (cute/arch/copy_sm100_tma.hpp
SM100_TMA_2SM_LOAD: ``.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes``, .cta_group before the
state spaces; the PTX ISA syntax lists it after the completion mechanism, ptxas takes both).  Both CTAs of the pair
load into their own SMEM and signal the even CTA's mbarrier through CuTe's Sm100MmaPeerBitMask (0xFEFFFFFF) on their
own shared address, as on hardware (own shared addresses carry the cluster rank in bits 31..24, ptx_docs/clusters.md)."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab

SRC = r"""
struct __align__(64) TmapT { unsigned long long v[16]; };
extern "C" __global__ void pair_load(const __grid_constant__ TmapT tm, unsigned char* out, unsigned bytes, int cuteorder) {
  __shared__ __align__(1024) unsigned char buf[4096];
  __shared__ __align__(8) unsigned long long bar;
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  const unsigned b = (unsigned)__cvta_generic_to_shared(&bar), s = (unsigned)__cvta_generic_to_shared(buf);
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) buf[i] = 0xA5;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  if (threadIdx.x == 0 && (r & 1) == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(2 * bytes) : "memory");
  }
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
  if (threadIdx.x == 0) {
    const unsigned peer_bar = b & 0xFEFFFFFFu;                 // CuTe's Sm100MmaPeerBitMask: the even CTA's barrier
    if (cuteorder)
      asm volatile("cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes"
                   " [%0], [%1, {%2, %3}], [%4];"
                   :: "r"(s), "l"((unsigned long long)&tm), "r"(0), "r"((int)(r * 8)), "r"(peer_bar) : "memory");
    else
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
                   " [%0], [%1, {%2, %3}], [%4];"
                   :: "r"(s), "l"((unsigned long long)&tm), "r"(0), "r"((int)(r * 8)), "r"(peer_bar) : "memory");
  }
  if ((r & 1) == 0) {
    asm volatile("{\n\t.reg .pred p;\n\tW_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n\t@!p bra W_%=;\n\t}"
                 :: "r"(b) : "memory");
  }
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) out[(unsigned long long)r * bytes + i] = buf[i];
}
"""


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_100a", name="tma_pair_order.cu")


@pytest.mark.parametrize("cuteorder", [1, 0], ids=["cute_order", "ptx_isa_order"])
def test_2sm_tma_load_in_either_modifier_order(mod, rng, cuteorder):
    """Two pairs (cluster of 4): each CTA loads its own 8 rows x 64 bytes (rows 8*rank..) into its own SMEM; the
    even CTA's barrier receives both CTAs' bytes; the poisoned buffers then hold exactly the global rows."""
    dev = ptxlab.open_device("emu")
    g = rng.integers(1, 256, size=(32, 64), dtype=np.uint8)
    buf = dev.to_device(g)
    tm = dev.tensor_map(buf, dtype=np.uint8, global_shape=[64, 32], global_strides=[64], box=[64, 8])
    out = dev.empty(4 * 512)
    dev.memset(out, 0x00)
    dev.launch(mod, "pair_load", grid=4, block=32, args=[tm, out, np.uint32(512), np.int32(cuteorder)], cluster=4)
    assert np.array_equal(dev.to_host(out, np.uint8).reshape(32, 64), g)
