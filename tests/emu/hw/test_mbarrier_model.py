"""mbarrier state machine (PTX ISA 9.7.13.15) vs known answers and a small independent reference."""
from __future__ import annotations

import pytest

from ptxlab.emu.hw.mbarrier import MAX_COUNT, Mbarrier, MbarrierError, MbarrierTable, decode_state


def fresh(count: int = 2, addr: int = 0x400) -> Mbarrier:
    t = MbarrierTable()
    return t.init(addr, count)


def test_init_and_parity_after_init() -> None:
    b = fresh(3)
    assert (b.phase, b.pending, b.expected, b.tx) == (0, 3, 3, 0)
    # ptx_facts §9: just after init, parity 0 -> false, parity 1 -> true
    assert b.test_wait_parity(0) is False
    assert b.test_wait_parity(1) is True


def test_phase_completes_on_arrivals_and_tx() -> None:
    b = fresh(2)
    tok = b.arrive(expect_tx=1024)
    assert b.pending == 1 and b.tx == 1024 and not b.test_wait(tok)
    b.complete_tx(512)
    b.arrive()
    assert b.phase == 0 and b.pending == 0 and b.tx == 512      # arrivals done, bytes outstanding
    assert b.complete_tx(512) is True
    assert (b.phase, b.pending, b.tx) == (1, 2, 0)
    assert b.test_wait(tok) is True and b.test_wait_parity(0) is True and b.test_wait_parity(1) is False


def test_complete_tx_before_expect_tx_is_allowed() -> None:
    b = fresh(1)
    b.complete_tx(256)            # the copy lands before expect_tx: tx goes negative, phase stays open
    assert b.tx == -256 and b.phase == 0
    b.arrive(expect_tx=256)
    assert b.phase == 1 and b.tx == 0


def test_async_copy_over_delivery_with_no_arrival_pending_is_refused() -> None:
    """H100 2026-11-22 (mbarrier kit over_deliver_bulk): arrive.expect_tx(32) then a 64-B bulk copy completed the
    phase mid-copy. The emulator refuses exactly that situation for copies; everything else keeps the PTX model."""
    b = fresh(1)
    b.arrive(expect_tx=32)
    with pytest.raises(MbarrierError, match=r"32 bytes more than announced.*measured on an H100.*over_deliver_bulk"):
        b.complete_tx(64, async_copy=True)
    assert (b.phase, b.tx) == (0, 32)                          # nothing applied
    assert b.complete_tx(32, async_copy=True) is True          # exact delivery completes as usual
    b = fresh(1)
    b.arrive(expect_tx=16)
    assert b.complete_tx(32) is False and b.tx == -16          # the instruction: one step, no completion (H100 too)
    assert b.expect_tx(16) is True
    b = fresh(2)
    b.arrive(expect_tx=32)                                     # an arrival still pending: no crossing can complete
    assert b.complete_tx(64, async_copy=True) is False and b.tx == -32
    b = fresh(1)
    b.complete_tx(64, async_copy=True)                         # bytes before expect_tx (bulk_first): allowed
    b.arrive()
    assert b.complete_tx(16, async_copy=True) is False and b.tx == -80    # tx already <= 0: not refused


def test_state_token_encoding_and_pending_count() -> None:
    b = fresh(5, addr=0x1238)
    tok = b.arrive(2, no_complete=True)
    tag, ph, pend = decode_state(tok)
    assert tok >> 63 == 1 and tag == (0x1238 >> 3) & 0x7FF and ph == 0 and pend == 5
    with pytest.raises(MbarrierError, match="not an mbarrier state token"):
        b.test_wait(0)
    other = fresh(1, addr=0x2000)
    with pytest.raises(MbarrierError, match="another barrier"):
        other.test_wait(tok)


def test_wait_on_stale_phase_is_an_error() -> None:
    b = fresh(1)
    tok0 = b.arrive()                       # completes phase 0
    b.arrive()                              # completes phase 1
    assert b.phase == 2
    with pytest.raises(MbarrierError, match="neither|only the current or the immediately preceding"):
        b.test_wait(tok0)


def test_arrive_drop_reduces_later_phases() -> None:
    b = fresh(3)
    b.arrive_drop()                          # expected 2, pending 2
    assert (b.expected, b.pending) == (2, 2)
    b.arrive(2)
    assert (b.phase, b.pending) == (1, 2)
    b.arrive_drop(2)
    assert (b.phase, b.expected, b.pending) == (2, 0, 0)


def test_errors() -> None:
    t = MbarrierTable()
    with pytest.raises(MbarrierError, match="no initialized mbarrier"):
        t.get(0x400, "mbarrier.arrive")
    with pytest.raises(MbarrierError, match="8-byte aligned"):
        t.init(0x404, 1)
    with pytest.raises(MbarrierError, match="out of range"):
        t.init(0x400, 0)
    with pytest.raises(MbarrierError, match="out of range"):
        t.init(0x400, MAX_COUNT + 1)
    b = t.init(0x400, 2)
    with pytest.raises(MbarrierError, match="already holds a valid mbarrier"):
        t.init(0x400, 2)
    with pytest.raises(MbarrierError, match="more arrivals than pending"):
        b.arrive(3)
    with pytest.raises(MbarrierError, match="noComplete"):
        b.arrive(2, no_complete=True)
    b2 = t.init(0x408, 1)
    b2.expect_tx((1 << 20) - 1)
    with pytest.raises(MbarrierError, match="2\\^20-1"):
        b2.expect_tx(1)
    b3 = t.init(0x410, 1)
    b3.complete_tx((1 << 20) - 1)
    with pytest.raises(MbarrierError, match="more bytes completed"):
        b3.complete_tx(1)
    with pytest.raises(MbarrierError, match="0 or 1"):
        b3.test_wait_parity(2)
    b3.inval()
    with pytest.raises(MbarrierError, match="inval"):
        b3.arrive()
    t.init(0x410, 4)                         # re-init after inval is fine
    assert t.get(0x410).expected == 4


def test_add_pending_limit() -> None:
    b = fresh(MAX_COUNT - 1)
    b.add_pending(1)
    assert b.pending == MAX_COUNT
    with pytest.raises(MbarrierError, match="2\\^20-1"):
        b.add_pending(1)


def test_describe_names_phase_and_missing_bytes() -> None:
    b = fresh(1, addr=0x800)
    b.arrive(expect_tx=4096)
    b.complete_tx(1024)
    d = b.describe()
    assert "0x800" in d and "phase 0" in d and "3072 bytes expected" in d and "pending arrivals 0/1" in d


class RefBar:
    """Independent reference: tx/arrivals with phase list."""

    def __init__(self, n: int) -> None:
        self.n, self.left, self.tx, self.done = n, n, 0, 0

    def step(self, op: str, v: int) -> None:
        if op == "arrive":
            self.left -= v
        elif op == "expect":
            self.tx += v
        else:
            self.tx -= v
        if self.left == 0 and self.tx == 0:
            self.done += 1
            self.left = self.n


def test_random_sequences_match_reference(rng) -> None:
    for _ in range(200):
        n = int(rng.integers(1, 5))
        b, r = fresh(n), RefBar(n)
        for _ in range(30):
            op = ["arrive", "expect", "complete"][int(rng.integers(0, 3))]
            if op == "arrive":
                if b.pending == 0:
                    continue
                v = int(rng.integers(1, b.pending + 1))
                b.arrive(v)
            elif op == "expect":
                v = int(rng.integers(0, 5000))
                b.expect_tx(v)
            else:
                v = int(rng.integers(0, 5000))
                if b.tx - v < -((1 << 20) - 1):
                    continue
                b.complete_tx(v)
            r.step(op, v)
            assert (b.phase, b.pending, b.tx) == (r.done, r.left, r.tx)
            assert b.test_wait_parity((r.done - 1) & 1) is True
            assert b.test_wait_parity(r.done & 1) is False
