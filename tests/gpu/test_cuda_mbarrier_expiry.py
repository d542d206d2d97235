"""The mbarrier time-limit kernels of tests/emu/ops/test_emu_mbarrier_expiry.py on the GPU and on the emulator, compared:
a single try_wait / test_wait on an incomplete phase returns False and the thread goes on; a bounded poll of a barrier
nobody arrives at gets exactly its number of False results (ops.mbarrier._expire, ptx_docs/mbarrier.md).  The peek
whose result is first used after the thread's own arrive is printed, not compared: the H100 may report the phase that
arrive completed (its try_wait result comes through a scoreboard), the emulator reports False."""
from __future__ import annotations

import numpy as np

import ptxlab
from emu_sources import emu_ops_source

SRC = emu_ops_source("test_emu_mbarrier_expiry")


def test_try_wait_time_limit_matches_the_gpu(cuda_dev) -> None:
    mod = ptxlab.compile(SRC, arch=f"sm_{cuda_dev.cc[0]}{cuda_dev.cc[1]}", name="mbar_expiry.cu")
    rng = np.random.default_rng()
    n, v, tries = 96, int(rng.integers(1, 2**31)), int(rng.integers(2, 9))
    got = []
    for dev in (cuda_dev, ptxlab.open_device("emu")):
        out, poll = dev.empty(12 * n), dev.empty(4 * 32)
        dev.memset(out, 0xA5)
        dev.memset(poll, 0xA5)
        dev.launch(mod, "peek_then_arrive", grid=1, block=n, args=[out, np.uint32(v)])
        dev.launch(mod, "bounded_poll", grid=1, block=32, args=[poll, np.uint32(tries)])
        got.append((dev.to_host(out, np.uint32), dev.to_host(poll, np.uint32)))
        late = dev.empty(4 * n)
        dev.memset(late, 0xA5)
        dev.launch(mod, "peek_used_after_arrive", grid=1, block=n, args=[late])
        print(f"{type(dev).__name__}: peek used after the arrive: True in {int(dev.to_host(late, np.uint32).sum())} "
              f"of {n} threads")
    (g_out, g_poll), (e_out, e_poll) = got
    np.testing.assert_array_equal(g_out, e_out)
    np.testing.assert_array_equal(g_poll, e_poll)
    np.testing.assert_array_equal(g_poll, np.full(32, tries, np.uint32))
