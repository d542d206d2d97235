"""Tensor Memory allocator and access-check rules (PTX ISA 9.7.16.7.1, 9.7.16.8.1)."""
from __future__ import annotations

import numpy as np
import pytest

from ptxlab.emu.hw.tmem import POISON, Tmem, TmemError, make_taddr, split_taddr


def _rule(exc: pytest.ExceptionInfo[TmemError]) -> str:
    return exc.value.rule


@pytest.mark.parametrize("n", [0, 1, 16, 31, 48, 96, 100, 1024, -32])
def test_alloc_rejects_bad_ncols(n: int) -> None:
    t = Tmem()
    with pytest.raises(TmemError) as e:
        t.try_alloc(n, warp=0)
    assert _rule(e) == "ncols" and "power of two" in str(e.value)


def test_alloc_dealloc_roundtrip_and_addresses() -> None:
    t = Tmem()
    a = t.try_alloc(256, warp=0)
    b = t.try_alloc(128, warp=1)
    c = t.try_alloc(128, warp=1)
    assert a is not None and b is not None and c is not None
    cols = sorted(split_taddr(x)[1] for x in (a, b, c))
    assert cols == [0, 256, 384] and all(split_taddr(x)[0] == 0 for x in (a, b, c))
    assert t.try_alloc(32, warp=2) is None  # full: would block
    t.dealloc(b, 128, warp=1)
    d = t.try_alloc(64, warp=2)
    assert d is not None and split_taddr(d)[1] == split_taddr(b)[1]
    for x, n in ((a, 256), (c, 128), (d, 64)):
        t.dealloc(x, n, warp=0)
    t.check_exit(kernel="k")


def test_alloc_increasing_is_error() -> None:
    t = Tmem()
    t.try_alloc(64, warp=0)
    with pytest.raises(TmemError) as e:
        t.try_alloc(128, warp=0)
    assert _rule(e) == "alloc-increasing" and "9.7.16.7.1" in str(e.value)


def test_alloc_after_relinquish() -> None:
    t = Tmem()
    t.try_alloc(32, warp=0)
    t.relinquish(warp=0)
    with pytest.raises(TmemError) as e:
        t.try_alloc(32, warp=3)
    assert _rule(e) == "alloc-after-relinquish"


def test_dealloc_mismatch_count_and_address() -> None:
    t = Tmem()
    a = t.try_alloc(128, warp=0)
    with pytest.raises(TmemError) as e:
        t.dealloc(a, 64, warp=0)
    assert _rule(e) == "dealloc-mismatch" and "128 columns" in str(e.value)
    with pytest.raises(TmemError) as e:
        t.dealloc(make_taddr(0, 32), 128, warp=0)
    assert _rule(e) == "dealloc-mismatch"


def test_leak_at_exit_names_allocation() -> None:
    t = Tmem()
    t.try_alloc(64, warp=2, ptx_line=17)
    with pytest.raises(TmemError) as e:
        t.check_exit(kernel="kern", block=(1, 0, 0))
    msg = str(e.value)
    assert _rule(e) == "leak" and "warp 2" in msg and "line 17" in msg and "kern" in msg


def test_deadlock_message() -> None:
    t = Tmem()
    t.try_alloc(512, warp=0)
    assert t.try_alloc(32, warp=1) is None
    err = t.deadlock_error(32, 1)
    assert err.rule == "alloc-deadlock" and "0 of 512" in str(err)


def test_address_bits_outside_range() -> None:
    with pytest.raises(TmemError) as e:
        split_taddr(0x40000000)
    assert _rule(e) == "address"
    with pytest.raises(TmemError):
        split_taddr(make_taddr(0, 512))
    assert split_taddr(make_taddr(127, 511)) == (127, 511)


def test_unallocated_columns() -> None:
    t = Tmem()
    t.try_alloc(64, warp=0)
    t.check_allocated(np.arange(64), what="ld")
    with pytest.raises(TmemError) as e:
        t.check_allocated(np.array([10, 64, 65]), what="tcgen05.ld")
    assert _rule(e) == "unallocated" and "64, 65" in str(e.value)


@pytest.mark.parametrize("warp", range(8))
def test_warp_quarter(warp: int) -> None:
    q = warp % 4
    Tmem.check_warp_lanes(warp, np.arange(32 * q, 32 * q + 32), what="ld")
    other = (q + 1) % 4
    with pytest.raises(TmemError) as e:
        Tmem.check_warp_lanes(warp, np.array([32 * other + 5]), what="tcgen05.ld")
    assert _rule(e) == "warp-quarter"


def test_pending_writer_blocks_reads_until_complete() -> None:
    rng = np.random.default_rng()
    t = Tmem()
    t.try_alloc(128, warp=0)
    lanes, cols = np.meshgrid(np.arange(128), np.arange(16, 32), indexing="ij")
    vals = rng.integers(1, 2**32, size=lanes.shape, dtype=np.uint64).astype(np.uint32)
    t.write(lanes, cols, vals)
    op = t.begin_async_write("mma", lanes, cols, ptx_line=42, issuer="thread (0,0,0)",
                             wait_hint="wait on its tcgen05.commit mbarrier")
    with pytest.raises(TmemError) as e:
        t.check_read_ready(lanes[:32], cols[:32], reader="tcgen05.ld", pipe=False)
    assert _rule(e) == "read-before-complete" and "line 42" in str(e.value) and "commit mbarrier" in str(e.value)
    # a later MMA on the tensor pipe is ordered after it: no hazard
    t.check_read_ready(lanes, cols, reader="tcgen05.mma", pipe=True)
    # untouched region is fine
    t.check_read_ready(np.arange(128), np.zeros(128, int), reader="tcgen05.ld", pipe=False)
    t.complete(op)
    t.check_read_ready(lanes, cols, reader="tcgen05.ld", pipe=False)
    assert np.array_equal(t.read(lanes, cols), vals)


def test_pending_st_hazard_for_pipe_reader_and_race() -> None:
    t = Tmem()
    t.try_alloc(32, warp=0)
    lanes, cols = np.arange(32), np.full(32, 3)
    op = t.begin_async_write("st", lanes, cols, ptx_line=9, issuer="warp 0", wait_hint="execute tcgen05.wait::st")
    with pytest.raises(TmemError) as e:
        t.check_read_ready(lanes, cols, reader="tcgen05.mma", pipe=True)
    assert "wait::st" in str(e.value)
    with pytest.raises(TmemError) as e:
        t.begin_async_write("mma", lanes, cols, ptx_line=10, issuer="t0", wait_hint="x")
    assert _rule(e) == "write-race"
    t.complete(op)
    t.begin_async_write("mma", lanes, cols, ptx_line=10, issuer="t0", wait_hint="x")


def test_dealloc_with_pending_writer_and_poison_after_dealloc() -> None:
    t = Tmem()
    a = t.try_alloc(32, warp=0)
    t.write(np.arange(4), np.arange(4), 7)
    op = t.begin_async_write("cp", np.arange(4), np.arange(4), ptx_line=5, issuer="t0", wait_hint="commit")
    with pytest.raises(TmemError) as e:
        t.dealloc(a, 32, warp=0)
    assert _rule(e) == "dealloc-pending"
    t.complete(op)
    t.dealloc(a, 32, warp=0)
    assert (t.data[:, :32] == POISON).all() and not t.written[:, :32].any()


def test_uninitialized_read_check() -> None:
    t = Tmem()
    t.try_alloc(32, warp=0)
    t.write(np.arange(128), np.zeros(128, int), 1)
    t.check_initialized(np.arange(128), np.zeros(128, int), reader="mma")
    with pytest.raises(TmemError) as e:
        t.check_initialized(np.arange(128), np.ones(128, int), reader="tcgen05.mma accumulator")
    assert _rule(e) == "uninitialized" and "column 1" in str(e.value)
