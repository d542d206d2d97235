#!/usr/bin/env python3
"""H100 probe: which forms of 2-D TMA loads run in a cluster launch, with and without .multicast::cluster (each variant in
its own subprocess, since a fault kills the CUDA context).

    PYTHONPATH=. python3 tests/fidelity/cluster/tma_multicast_probe.py              # all VARIANTS
    PYTHONPATH=. python3 tests/fidelity/cluster/tma_multicast_probe.py corpus [kinds]   # the corpus entry's configs

Result on the H100 (2026-11-24, ptx_docs/tma.md): every variant runs except a dim-0 start of 4-byte elements that is
not a multiple of 16 bytes (x = 1, 2, -3: CUDA_ERROR_ILLEGAL_INSTRUCTION, multicast or plain, swizzle none or 128B).
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np

SRC = r'''
struct __align__(64) TmapT { unsigned long long v[16]; };
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
extern "C" __global__ void probe(const __grid_constant__ TmapT tm, unsigned mask, unsigned form, int dx, int dy,
                      unsigned char* out) {
  __shared__ __align__(1024) unsigned char buf[2048];
  __shared__ __align__(8) unsigned long long bar;
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  unsigned n; asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  const unsigned t = threadIdx.x;
  const unsigned b = sa(&bar);
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  for (unsigned i = t; i < 2048; i += blockDim.x) buf[i] = 0xA5;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  unsigned expect = 0;
  for (unsigned q = 0; q < n; ++q) if ((mask >> r) & 1) expect += 512;
  if (form == 2) expect = 512;
  if (t == 0) asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(expect) : "memory");
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (t == 0) {
    const unsigned dst = sa(buf) + r * 512;
    const unsigned short m = (unsigned short)mask;
    if (form == 0)
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
                   " [%0], [%1, {%2, %3}], [%4], %5;"
                   :: "r"(dst), "l"((unsigned long long)&tm), "r"(dx), "r"(dy), "r"(b), "h"(m) : "memory");
    else if (form == 1)
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                   " [%0], [%1, {%2, %3}], [%4], %5;"
                   :: "r"(dst), "l"((unsigned long long)&tm), "r"(dx), "r"(dy), "r"(b), "h"(m) : "memory");
    else
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                   " [%0], [%1, {%2, %3}], [%4];"
                   :: "r"(dst), "l"((unsigned long long)&tm), "r"(dx), "r"(dy), "r"(b) : "memory");
  }
  { unsigned ok = 0; unsigned spins = 0;
    while (!ok && spins < (1u << 22)) {
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                   : "=r"(ok) : "r"(b) : "memory");
      ++spins;
    }
    if (t == 0) out[blockIdx.x * 2048 + 2047] = ok ? 1 : 2;
  }
  for (unsigned i = t; i < 2047; i += blockDim.x) out[blockIdx.x * 2048 + i] = buf[i];
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
'''

VARIANTS = {   # name: (swizzle, mask, form, (dx, dy)); form 0: .tile multicast, 1: multicast without .tile, 2: plain
    "tile_none_all": ("none", 0x3, 0, (0, 0)), "notile_none_all": ("none", 0x3, 1, (0, 0)),
    "plain_in_cluster": ("none", 0x3, 2, (0, 0)), "tile_none_self": ("none", None, 0, (0, 0)),
    "tile_128B_all": ("128B", 0x3, 0, (0, 0)), "tile_none_other": ("none", "other", 0, (0, 0)),
    "mc_oob_right": ("none", 0x3, 0, (56, 0)), "mc_oob_bottom": ("none", 0x3, 0, (0, 60)),
    "mc_oob_negx": ("none", 0x3, 0, (-8, 0)), "mc_oob_negy": ("none", 0x3, 0, (0, -4)),
    "mc_oob_full": ("none", 0x3, 0, (100, 0)), "mc_oob_right_128B": ("128B", 0x3, 0, (48, 0)),
    "plain_oob_negx": ("none", 0x3, 2, (-8, 0)), "plain_oob_right": ("none", 0x3, 2, (56, 0)),
    # dim-0 start not on a 16-byte boundary (4-byte elements)
    "plain_x1": ("none", 0x3, 2, (1, 0)), "plain_x2": ("none", 0x3, 2, (2, 0)), "plain_xm3": ("none", 0x3, 2, (-3, 0)),
    "mc_x1": ("none", 0x3, 0, (1, 0)), "mc_x2": ("none", 0x3, 0, (2, 0)), "mc_x4": ("none", 0x3, 0, (4, 0)),
    "mc_xm3": ("none", 0x3, 0, (-3, 0)), "mc_x1_128B": ("128B", 0x3, 0, (1, 0)),
    "plain_x1_128B": ("128B", 0x3, 2, (1, 0)),
}


def one(name: str) -> None:
    import ptxlab
    sw, mask, form, (dx, dy) = VARIANTS[name]
    dev = ptxlab.open_device("cuda")
    mod = ptxlab.compile(SRC, arch="sm_90a", name="probe.cu")
    g = dev.to_device(np.arange(64 * 64, dtype=np.uint32))
    inner = 16 if sw == "none" else 32
    tm = dev.tensor_map(g, dtype=np.uint32, global_shape=[64, 64], global_strides=[256],
                        box=[inner, 512 // (inner * 4)],
                        swizzle=sw)
    out = dev.empty(2 * 2048)
    # one mask for both CTAs: "self" = rank 0's bit (both send to rank 0), "other" = rank 1's bit
    m = {None: 0x1, "other": 0x2}.get(mask, mask)
    dev.launch(mod, "probe", grid=2, block=64,
               args=[tm, np.uint32(m), np.uint32(form), np.int32(dx), np.int32(dy), out], cluster=2)
    o = dev.to_host(out, np.uint8).reshape(2, 2048)
    print(name, "status", list(o[:, 2047]), "bytes landed", [int((o[c, :1024] != 0xA5).sum()) for c in range(2)])


def _main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "corpus" and sys.argv[2].isdigit():
        corpus_one(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == "corpus":
        kinds = sys.argv[2:] or ["asis", "inbounds", "maskall", "both"]
        for cfg in (range(8) if len(sys.argv) == 2 else (0, 4)):
            for kind in kinds:
                p = subprocess.run([sys.executable, __file__, "corpus", str(cfg), kind], capture_output=True, text=True,
                                   timeout=60)
                err = p.stderr.strip().splitlines()[-1:] if p.returncode else []
                print(f"rc={p.returncode} {p.stdout.strip()[-400:]} {err}")
    elif len(sys.argv) > 1:
        one(sys.argv[1])
    else:
        for v in VARIANTS:
            p = subprocess.run([sys.executable, __file__, v], capture_output=True, text=True, timeout=60)
            print(f"{v:20s} rc={p.returncode} {p.stdout.strip()[-300:]} {p.stderr.strip()[-300:]}")


def corpus_one(cfg: int, mod_kind: str) -> None:
    """Run config ``cfg`` of the tma_multicast corpus entry alone, inputs modified by ``mod_kind``."""
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    import corpus
    import ptxlab
    from corpus import kernels_cluster as kc
    e = next(x for x in kc.ENTRIES if x.name == "tma_multicast")
    ins = e.make_inputs(corpus.entry_rng(20261124, e.name))
    n, s = kc.TM_CONFIGS[cfg]
    inner = kc.SPAN[s] // 4
    if mod_kind in ("inbounds", "both"):
        ins[f"xs{cfg}"] = np.zeros_like(ins[f"xs{cfg}"])
        ins[f"ys{cfg}"] = np.zeros_like(ins[f"ys{cfg}"])
    if mod_kind == "nonneg":
        ins[f"xs{cfg}"] = np.maximum(ins[f"xs{cfg}"], 0)
        ins[f"ys{cfg}"] = np.maximum(ins[f"ys{cfg}"], 0)
    if mod_kind == "nonpos":
        ins[f"xs{cfg}"] = np.minimum(ins[f"xs{cfg}"], 0)
        ins[f"ys{cfg}"] = np.minimum(ins[f"ys{cfg}"], 0)
    if mod_kind == "same":
        ins[f"xs{cfg}"] = np.full_like(ins[f"xs{cfg}"], ins[f"xs{cfg}"][0])
        ins[f"ys{cfg}"] = np.full_like(ins[f"ys{cfg}"], ins[f"ys{cfg}"][0])
    if mod_kind == "xonly":
        ins[f"ys{cfg}"] = np.zeros_like(ins[f"ys{cfg}"])
    if mod_kind == "yonly":
        ins[f"xs{cfg}"] = np.zeros_like(ins[f"xs{cfg}"])
    if mod_kind in ("maskall", "both"):
        ins[f"mask{cfg}"] = np.full_like(ins[f"mask{cfg}"], (1 << n) - 1)
    kc.TM_CONFIGS[:] = [kc.TM_CONFIGS[cfg]]
    for k in ("xs", "ys", "mask"):
        ins[f"{k}0"] = ins[f"{k}{cfg}"]
    dev = ptxlab.open_device("cuda")
    outs = e.run(dev, corpus.compile_entry(e), ins)
    exp = e.expected(ins)
    print(f"cfg {cfg} ({n}, {s}) {mod_kind}: ran; matches reference: {bool((outs['tma0'] == exp['tma0']).all())}; "
          f"xs {list(ins['xs0'])} ys {list(ins['ys0'])} masks {list(ins['mask0'])}")


if __name__ == "__main__":
    _main()
