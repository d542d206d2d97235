"""Speed of the bit-exact tensor-core model: one 128x256x64 mxf4nvf4 MMA (UE4M3 and UE8M0 scales).

The fast exact path covers every F32 kind; this times the NVFP4/MXFP4 kinds the lab is about.

    python benchmarks/mma_arith_speed.py

Kept out of the test suite (timings on a shared 2-core machine are not tests); the emulator's tcgen05.mma calls this
once per instruction, so it bounds how fast MMA-heavy kernels run on the emulator. UE4M3 is timed on full-range
scales (the fast path hands most elements to the model) and on gpu-mode GEMM data (SF codes 0..3, C a multiple of
2**-20: everything proven), with the fast path on and off (ptxlab.mma.model.FAST), as ratios in one run.
"""
import time

import numpy as np

import ptxlab.mma.model as MA
from ptxlab.mma import mma


def best_ms(args, reps=5) -> float:
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        mma("mxf4nvf4", *args[0], **args[1])
        ts.append(time.perf_counter() - t)
    return min(ts) * 1e3


def main() -> None:
    rng = np.random.default_rng()
    a = rng.integers(0, 16, (128, 64)).astype(np.uint8)
    b = rng.integers(0, 16, (256, 64)).astype(np.uint8)
    sfa = rng.integers(0, 0x7F, (128, 4)).astype(np.uint8)
    sfb = rng.integers(0, 0x7F, (256, 4)).astype(np.uint8)
    c = rng.uniform(-10, 10, (128, 256)).astype(np.float32).view(np.uint32)
    cg = np.ldexp(rng.integers(-(1 << 16), 1 << 16, (128, 256)).astype(np.float64), -20).astype(np.float32)
    kw = dict(a_fmt="e2m1", b_fmt="e2m1", c=c, sfa=sfa, sfb=sfb, scale_fmt="ue4m3")
    gm = {**kw, "c": cg.view(np.uint32), "sfa": sfa % 4, "sfb": sfb % 4}
    kw8 = {**kw, "scale_fmt": "ue8m0", "block": 16, "sfa": sfa + 90, "sfb": sfb + 90}
    kw8s = {**kw8, "sfa": sfa % 8 + 124, "sfb": sfb % 8 + 124, "c": cg.view(np.uint32)}
    for name, args in (("ue4m3 full-range scales", kw), ("ue4m3 gpu-mode GEMM data", gm), ("ue8m0 block16", kw8),
                       ("ue8m0 scales 2^-3..2^4", kw8s)):
        times = {}
        for fast in (True, False):
            MA.FAST = fast
            times[fast] = best_ms(((a, b), args))
        MA.FAST = True
        print(f"{name:26s} 128x256x64: fast path {times[True]:6.1f} ms, model only {times[False]:6.1f} ms "
              f"(x{times[False] / times[True]:.1f})")


if __name__ == "__main__":
    main()
