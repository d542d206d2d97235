"""Module load is linear in the module's size (issue 12: CUTLASS example 72b's PTX has ~18,000 .global variables;
GlobalHeap.alloc used to re-sort every allocation on each call, 70 s to load). The work is counted as Python-level
calls during the load (deterministic, unlike a wall-clock bound on a shared machine)."""
from __future__ import annotations

import sys
import time
from types import SimpleNamespace

import numpy as np

import ptxlab
from ptxlab.emu.core.memory import GLOBAL_BASE, GlobalHeap


def many_globals_ptx(n: int, salt: int) -> str:
    lines = [".version 8.7", ".target sm_100a", ".address_size 64"]
    for i in range(n):
        lines.append(f".global .align 4 .b8 g{i}[12] = {{{i % 251}, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, {(i * 7 + salt) % 256}}};")
    lines += [".visible .entry k(.param .u64 out)", "{", " .reg .b64 %rd<4>;", " .reg .b32 %r<3>;",
              " ld.param.u64 %rd1, [out];", f" mov.u64 %rd2, g{n - 1};", " ld.global.u32 %r1, [%rd2+8];",
              " st.global.u32 [%rd1], %r1;", " ret;", "}"]
    return "\n".join(lines) + "\n"


def _calls_to_load(n: int, salt: int) -> tuple[int, float]:
    dev = ptxlab.open_device("emu")
    mod = SimpleNamespace(ptx=many_globals_ptx(n, salt), name=f"many{n}.ptx")
    count = [0]

    def prof(frame, event, arg):
        if event == "call":
            count[0] += 1

    t0 = time.perf_counter()
    sys.setprofile(prof)
    try:
        dev.program(mod, "k")
    finally:
        sys.setprofile(None)
    secs = time.perf_counter() - t0
    y = dev.empty(4)
    dev.memset(y, 0)
    dev.launch(mod, "k", grid=1, block=1, args=[y])   # the last global is placed and initialized
    want = np.frombuffer(bytes([9, 10, 11, ((n - 1) * 7 + salt) % 256]), np.uint32)[0]
    assert dev.to_host(y, np.uint32)[0] == want
    return count[0], secs


def test_module_load_work_is_linear_in_globals(rng) -> None:
    salt = int(rng.integers(0, 256))
    small, _ = _calls_to_load(500, salt)
    big, secs = _calls_to_load(4000, salt)
    # linear: 8x the globals -> ~8x the calls. The quadratic re-sort made it ~40x (n^2/2 key calls).
    assert big < 10 * small, (small, big)
    print(f"\n500 globals: {small} calls; 4000 globals: {big} calls, {secs:.2f} s (profiled)")


def test_heap_index_after_allocs_and_frees(rng) -> None:
    h = GlobalHeap(capacity=1 << 12)
    ptrs = [h.alloc(int(rng.integers(1, 600)), label=f"a{i}") for i in range(300)]
    for i in rng.permutation(300)[:120]:
        h.free(ptrs[i])
        ptrs[i] = None
    live = [p for p in ptrs if p is not None]
    assert h._starts == sorted(h._starts) and len(h._starts) == len(live) == len(h.allocs)
    for p in live:
        a = h.allocs[p - GLOBAL_BASE]
        assert h.find(a.start) is a and h.find(a.start + a.size - 1) is a
        assert h.find(a.start + a.size) is None            # guard gap
        assert h.check(np.array([a.start], np.int64), a.size) is None
        assert h.check(np.array([a.start], np.int64), a.size + 1) == 0
    q = h.alloc(64, label="late")
    assert h.find(q - GLOBAL_BASE).label == "late" and h._starts[-1] == q - GLOBAL_BASE
