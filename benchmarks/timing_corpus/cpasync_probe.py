"""Does the timing model see non-bulk cp.async's bytes, and does cp.async.wait_group wait for them?  (Round-3
diagnosis, fix 1: ptx_docs/timing_validation.md "Round 3 diagnosis (post hoc)".)

    python benchmarks/timing_corpus/cpasync_probe.py

Each of 132 CTAs copies 16 steps x 4 KB from global to shared memory, either with cp.async.cg (16 B per thread) +
commit_group + wait_group 0 (k_async) or with a plain ld.global + st.shared (k_sync), then reads it back.  The memory
work is the same, so the two predictions should be close.  With the round-3 model (2026-11-28) they are not: k_async
has no DRAM bytes and waits about 25 clk per step for its copy; k_sync moves the 8.65 MB and waits about 1060 clk per
step.  Since the cpasyncbytes fix (2026-11-28, post hoc) cp.async's global reads are async-op bytes (trace.py) and its
wait_group waits for them: both read 8.65 MB and k_async is within 15 % of k_sync (tests/timing/test_cpasync_timing.py).
"""
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import ptxlab  # noqa: E402
from ptxlab.timing.predict import TimingSampleWarning  # noqa: E402
warnings.simplefilter("ignore", TimingSampleWarning)
from ptxlab.timing.synthetic_series import CPASYNC as SRC  # noqa: E402
mod = ptxlab.compile(SRC, arch="sm_90a")
steps, ctas = 16, 132
x = np.random.default_rng(1).integers(1, 1 << 20, size=ctas * steps * 256 * 4, dtype=np.int32)
for name in ("k_async", "k_mbar", "k_sync"):
    dev = ptxlab.open_device("emu", timing="h100")
    dx = dev.to_device(x)
    o = dev.empty(ctas * 256 * 4)
    dev.memset(o, 0xFF)                       # poisoned: the timing-only sample computes some CTAs' outputs only
    dev.launch(mod, name, grid=(ctas, 1, 1), block=(256, 1, 1), args=[dx, o, np.int32(steps)])
    t = dev.last_timing
    got = dev.to_host(o, np.int32).reshape(ctas, 256)
    v = x.reshape(ctas, steps, 256, 4)[:, :, (np.arange(256) + 1) & 255, 0]
    ran = (got != -1).any(axis=1)
    assert ran.any() and np.array_equal(got[ran], v.sum(axis=1, dtype=np.int32)[ran]), f"{name}: wrong result"
    print(name, f"us={t.us:.2f} bound={t.bound} dram={t.amounts.get('dram_bytes',0)/1e6:.2f}MB "
          f"l2={t.amounts.get('l2_bytes',0)/1e6:.2f}MB compulsory={x.nbytes/1e6:.2f}MB")
    w = next(iter(t.warps.values()))
    print("   waits", {k: round(v) for k, v in w['waits'].items()}, "span", round(w['span_clk']))
