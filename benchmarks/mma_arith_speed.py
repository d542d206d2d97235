"""Speed of the bit-exact tensor-core model: one 128x256x64 mxf4nvf4 MMA (UE4M3 and UE8M0 scales).

    python benchmarks/mma_arith_speed.py

Kept out of the test suite (timings on a shared 2-core machine are not tests); the emulator's tcgen05.mma calls this
once per instruction, so it bounds how fast MMA-heavy kernels run on the emulator.
"""
import time

import numpy as np

from ptxlab.mma_arith import mma


def main() -> None:
    rng = np.random.default_rng()
    a = rng.integers(0, 16, (128, 64)).astype(np.uint8)
    b = rng.integers(0, 16, (256, 64)).astype(np.uint8)
    sfa = rng.integers(0, 0x7F, (128, 4)).astype(np.uint8)
    sfb = rng.integers(0, 0x7F, (256, 4)).astype(np.uint8)
    c = rng.uniform(-10, 10, (128, 256)).astype(np.float32).view(np.uint32)
    kw = dict(a_fmt="e2m1", b_fmt="e2m1", c=c, sfa=sfa, sfb=sfb, scale_fmt="ue4m3")
    kw8 = {**kw, "scale_fmt": "ue8m0", "block": 16, "sfa": sfa + 90, "sfb": sfb + 90}
    for name, args in (("mxf4nvf4 ue4m3 block16", kw), ("mxf4nvf4 ue8m0 block16", kw8)):
        ts = []
        for _ in range(5):
            t = time.perf_counter()
            mma("mxf4nvf4", a, b, **args)
            ts.append(time.perf_counter() - t)
        print(f"{name:24s} 128x256x64: best {min(ts) * 1e3:.1f} ms, median {np.median(ts) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
