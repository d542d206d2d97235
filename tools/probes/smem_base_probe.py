"""Where does a GPU put a static ``__shared__`` buffer, and what does YHs' SGEMM compute there?

YHs' ``sgemm_128x128x8_kernel`` (timing corpus round 2, ``misc2/``) declares ``__shared__ __align__(16 * 1024) char
smem[24 * 1024]`` and switches its double buffers by XOR-ing ``cvta.to.shared`` addresses with 0x2000 / 0x1000, which
is right only if the buffer's shared address is a multiple of 16 KB.  This probe prints (1) the shared addresses of a
16 KB-aligned and a 1 KB-aligned static buffer and of dynamic shared memory, and on a GPU ``%reserved_smem_offset_*``
(PTX ISA 10.29); (2) the kernel's full output check at M = N = 128, K = 8 (one CTA, one k-tile), 256 x 256 x 16
(2 x 2 CTAs, two k-tiles) and, on a GPU, 1024 x 1024 x 512; each C goes to $OUT/yhs_<kind>_<M>x<N>x<K>.npy.

    PYTHONPATH=. python3 tools/probes/smem_base_probe.py cuda|emu [--sources .timing_corpus_sources]
"""
import argparse
import dataclasses
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import ptxlab  # noqa: E402
from timing_corpus import harness, manifest_round2  # noqa: E402

SRC = r"""
extern "C" __global__ void smem_addrs(unsigned* out) {
    __shared__ __align__(16384) char big[24 * 1024];
    __shared__ __align__(1024) char k1[64];
    extern __shared__ __align__(16) char dyn[];
    volatile char* b = big; volatile char* c = k1; volatile char* d = dyn;
    b[threadIdx.x] = 1; c[threadIdx.x] = 2; d[threadIdx.x] = 3;
    __syncthreads();
    if (threadIdx.x == 0) {
        out[0] = (unsigned)__cvta_generic_to_shared(&big[0]);
        out[1] = (unsigned)__cvta_generic_to_shared(&k1[0]);
        out[2] = (unsigned)__cvta_generic_to_shared(&dyn[0]);
        out[3] = b[1] + c[1] + d[1];
    }
}
extern "C" __global__ void reserved_regs(unsigned* out) {
    unsigned r0, r1, r2;
    asm volatile("mov.u32 %0, %%reserved_smem_offset_begin;" : "=r"(r0));
    asm volatile("mov.u32 %0, %%reserved_smem_offset_end;" : "=r"(r1));
    asm volatile("mov.u32 %0, %%reserved_smem_offset_cap;" : "=r"(r2));
    if (threadIdx.x == 0) { out[0] = r0; out[1] = r1; out[2] = r2; }
}
"""
NAMES = ("16K-aligned static", "1K-aligned static", "dynamic", "(readback 6)")


def addresses(dev, kind: str) -> None:
    mod = ptxlab.compile(SRC, arch="sm_90a")
    out = dev.empty(4 * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "smem_addrs", grid=1, block=32, args=[out], shared_bytes=256)
    got = dev.to_host(out, np.uint32)
    print(f"{kind}: " + ", ".join(f"{n} {int(v):#x}" for n, v in zip(NAMES, got)), flush=True)
    if kind == "cuda":                     # the emulator refuses %reserved_smem_offset_* (not modelled)
        dev.memset(out, 0xFF)
        dev.launch(mod, "reserved_regs", grid=1, block=32, args=[out])
        r = dev.to_host(out, np.uint32)
        print(f"cuda: %reserved_smem_offset_begin {int(r[0]):#x}, _end {int(r[1]):#x}, _cap {int(r[2]):#x}", flush=True)


def yhs(dev, kind: str, root) -> None:
    (k,) = [k for k in manifest_round2.kernels("full") if "sgemm_128x128x8" in k.name]
    built = harness.build(k, root)
    sizes = [(128, 128, 8), (256, 256, 16)] + ([(1024, 1024, 512)] if kind == "cuda" else [])
    for m, n, kk in sizes:
        kr = dataclasses.replace(k, problem=("gemm", (("M", m), ("N", n), ("K", kk), ("alpha_beta", False))),
                                 grid=(n // 128, m // 128, 1))
        s = harness.Setup.create(harness.Built(kr, built.module, built.name), dev, 1)
        s.launch()
        r = s.check(full=True)
        c = s.outputs()["C"]
        if os.environ.get("OUT"):
            np.save(Path(os.environ["OUT"], f"yhs_{kind}_{m}x{n}x{kk}.npy"), c)
        print(f"{kind}: yhs {m}x{n}x{kk}: {'ok' if r['ok'] else 'FAIL'} {r['written']}/{r['total']} written, "
              f"max err {r['max_err']:.3g} {r['detail'][:160]}", flush=True)
        s.free()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", nargs="?", default="emu")
    ap.add_argument("--sources")
    a = ap.parse_args()
    dev = ptxlab.open_device(a.kind)
    addresses(dev, a.kind)
    yhs(dev, a.kind, a.sources)
    return 0


if __name__ == "__main__":
    sys.exit(main())
