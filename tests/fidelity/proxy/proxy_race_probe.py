#!/usr/bin/env python3
"""Does a missing `fence.proxy.async` show up on real hardware? (H100 probe for ptxlab's proxy-fence check)

Each CTA repeatedly (R rounds) fills a 16-KiB SMEM buffer with generic `st.shared.v4` stores (values depend on round,
block and thread), `__syncthreads()`, then thread 0 copies the buffer to global memory with the bulk-async engine
(`cp.async.bulk.global.shared::cta.bulk_group`, the async proxy; PTX ISA 9.7.9.25.4.x) and waits for the source reads
(`cp.async.bulk.wait_group.read 0`) before the next round overwrites the buffer. Variant `fence`: every writer executes
`fence.proxy.async.shared::cta` after its stores (CUTLASS's fence_view_async_shared); variant `nofence`: no proxy
fence (a data race in the PTX memory model, PTX ISA 8.6 proxies). The host counts 16-B chunks whose copy differs from
what was stored.

    PYTHONPATH=. python3 tests/fidelity/proxy/proxy_race_probe.py --backend cuda [--blocks 264 --rounds 64 --reps 5]
    PYTHONPATH=. python3 tests/fidelity/proxy/proxy_race_probe.py --backend emu --blocks 2 --rounds 2

On the emulator the `nofence` variant warns (`[proxy:fence-async]`; PTXLAB_EMU_STRICT=proxy_fence makes it the error); the `fence` variant
matches. On hardware a zero count for `nofence` proves nothing (a race need not show); a nonzero count shows the
hazard the emulator reports.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

SRC = r"""
extern "C" __global__ void proxy_race(unsigned* out, unsigned rounds, unsigned salt) {
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned t = threadIdx.x, b = blockIdx.x;
  const unsigned sa = (unsigned)__cvta_generic_to_shared(smem);
  for (unsigned r = 0; r < rounds; ++r) {
    #pragma unroll
    for (unsigned j = 0; j < 8; ++j) {            // 128 threads x 8 x 16 B = 16 KiB
      const unsigned c = j * 128 + t;              // 16-B chunk index
      const unsigned v = (salt * 0x9E3779B9u) ^ (r * 0x85EBCA6Bu) ^ (b * 0xC2B2AE35u) ^ (c * 0x27D4EB2Fu);
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" :: "r"(sa + 16 * c), "r"(v), "r"(v + 1), "r"(v + 2),
                   "r"(v + 3) : "memory");
    }
#ifdef WITH_FENCE
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
    __syncthreads();
    if (t == 0) {
      unsigned* dst = out + ((size_t)b * rounds + r) * 4096;
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 16384;" :: "l"(dst), "r"(sa) : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
    __syncthreads();
  }
}
"""


def expected(blocks: int, rounds: int, salt: int) -> np.ndarray:
    r = np.arange(rounds, dtype=np.uint32)[None, :, None]
    b = np.arange(blocks, dtype=np.uint32)[:, None, None]
    c = np.arange(1024, dtype=np.uint32)[None, None, :]
    with np.errstate(over="ignore"):
        v = (np.uint32(salt) * np.uint32(0x9E3779B9)) ^ (r * np.uint32(0x85EBCA6B)) ^ (b * np.uint32(0xC2B2AE35)) \
            ^ (c * np.uint32(0x27D4EB2F))
        return np.stack([v, v + 1, v + 2, v + 3], -1).reshape(blocks, rounds, 4096)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=("cuda", "emu"), default="emu")
    ap.add_argument("--blocks", type=int, default=264)
    ap.add_argument("--rounds", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    import ptxlab

    arch = "sm_90a"
    dev = ptxlab.open_device(args.backend, arch=arch)
    nbytes = args.blocks * args.rounds * 16384
    out = dev.empty(nbytes)
    rng = np.random.default_rng()
    status = 0
    for variant, opts in (("fence", ("-DWITH_FENCE",)), ("nofence", ())):
        mod = ptxlab.compile(SRC, arch=arch, name=f"proxy_race_{variant}.cu", options=opts)
        bad_chunks = runs = 0
        err = None
        for _ in range(args.reps):
            salt = int(rng.integers(1, 2**32))
            dev.memset(out, 0xFF)
            try:
                dev.launch(mod, "proxy_race", grid=(args.blocks, 1, 1), block=(128, 1, 1),
                           args=[out, np.uint32(args.rounds), np.uint32(salt)], shared_bytes=16384)
            except ptxlab.PtxlabError as exc:
                err = str(exc).splitlines()[0]
                break
            got = dev.to_host(out, np.uint32).reshape(args.blocks, args.rounds, 4096)
            diff = (got != expected(args.blocks, args.rounds, salt)).reshape(args.blocks, args.rounds, 1024, 4).any(-1)
            bad_chunks += int(diff.sum())
            runs += 1
        total = runs * args.blocks * args.rounds * 1024
        if err:
            print(f"{variant:8s}: stopped: {err[:300]}")
        else:
            print(f"{variant:8s}: {bad_chunks} of {total} 16-B chunks differ ({runs} launches x {args.blocks} CTAs x "
                  f"{args.rounds} rounds)")
        if variant == "fence" and (err or bad_chunks):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
