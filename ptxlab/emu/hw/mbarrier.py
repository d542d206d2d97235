"""The mbarrier state machine of PTX ISA 9.7.13.15, as a pure model (no threads, no memory).

State (9.7.13.15.2): current phase, pending arrivals, expected arrivals, tx-count. Ranges: expected 1..2^20-1,
pending 0..2^20-1, tx-count -(2^20-1)..2^20-1. A phase completes when pending == 0 and tx-count == 0
(9.7.13.15.6); then the phase advances and pending is reset to expected.

The 64-bit ``state`` returned by arrive / arrive_drop is "implementation specific" (9.7.13.15.13). The emulator's
encoding (ptx_docs/mbarrier.md):

    bits  0..31  phase number (mod 2^32) in which the arrive-on happened
    bits 32..51  pending arrival count before the arrive-on (what mbarrier.pending_count returns)
    bits 52..62  (barrier address >> 3) & 0x7FF, to catch a token used with another barrier
    bit  63      1 (a token is never 0, so an uninitialized register is caught)

test_wait / try_wait with a token: token phase == current phase -> False; == current - 1 -> True; anything else is a
wait on a phase that is neither current nor the immediately preceding one -> MbarrierError. With .parity:
parity == current & 1 -> False (current phase incomplete), else True (the preceding phase is complete).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ptxlab.errors import EmuError

__all__ = [
    "MAX_COUNT",
    "TX_LIMIT",
    "MbarrierError",
    "Mbarrier",
    "MbarrierTable",
    "encode_state",
    "decode_state",
]

MAX_COUNT = (1 << 20) - 1        # arrival counts: 1..2^20-1 (9.7.13.15.2)
TX_LIMIT = (1 << 20) - 1         # tx-count: -(2^20-1)..2^20-1
_PHASE_MASK = 0xFFFF_FFFF


class MbarrierError(EmuError):
    """An mbarrier operation is undefined behaviour per PTX ISA 9.7.13.15 (the message names the rule)."""


def encode_state(addr: int, phase: int, pending_before: int) -> int:
    """Pack the emulator's opaque 64-bit arrive token (layout in the module docstring)."""
    return ((1 << 63) | ((((int(addr) >> 3) & 0x7FF)) << 52) | ((pending_before & 0xFFFFF) << 32)
            | (phase & _PHASE_MASK))


def decode_state(token: int) -> tuple[int, int, int]:
    """Unpack a token into (address tag, phase mod 2^32, pending count before the arrive)."""
    t = int(token) & 0xFFFF_FFFF_FFFF_FFFF
    if not t >> 63:
        raise MbarrierError(f"0x{t:016x} is not an mbarrier state token (bit 63 clear): pass the value returned by "
                            "mbarrier.arrive on the same barrier (PTX ISA 9.7.13.15.16)")
    return (t >> 52) & 0x7FF, t & _PHASE_MASK, (t >> 32) & 0xFFFFF


def _check_count(what: str, count: int, lo: int = 1) -> int:
    c = int(count)
    if not lo <= c <= MAX_COUNT:
        raise MbarrierError(f"{what} count {c} out of range {lo}..2^20-1 (PTX ISA 9.7.13.15.2)")
    return c


@dataclass
class Mbarrier:
    """One mbarrier object; ``phase`` counts completed phases (its parity is the current phase parity)."""

    addr: int
    expected: int
    pending: int
    tx: int = 0
    phase: int = 0
    valid: bool = True
    history: list[str] = field(default_factory=list)

    # -- helpers ---------------------------------------------------------------------------------------------
    def _where(self) -> str:
        return f"mbarrier @shared 0x{self.addr:x}"

    def _require_valid(self, op: str) -> None:
        if not self.valid:
            raise MbarrierError(f"{op} on {self._where()} after mbarrier.inval: the object is invalid; "
                                "re-initialize it with mbarrier.init first (PTX ISA 9.7.13.15.10)")

    def _maybe_complete(self) -> bool:
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.expected
            return True
        return False

    # -- operations (PTX ISA 9.7.13.15.x) ----------------------------------------------------------------------
    def expect_tx(self, nbytes: int) -> bool:
        """expect-tx (9.7.13.15.5.1): tx-count += nbytes.  Like every update, it completes the phase if it leaves
        pending arrivals == 0 and tx-count == 0 (bytes that completed before they were expected, then announced
        by a plain expect_tx after the last arrival).  Returns True if it completed the phase.

        Hardware-confirmed: on an H100 (driver 580.159.04, 2026-11-22, tests/fidelity/mbarrier kit run by
        tools/probes/h100_probes.sh; data tests/fidelity/mbarrier/data/h100_20261122_mbar.json) the sequences
        complete_first (complete_tx(64), the only arrival, expect_tx(64)) and bulk_first (the same with a
        cp.async.bulk of 64 B) completed the phase exactly at the expect_tx, as here; replayed in CI by
        tests/fidelity/mbarrier/test_mbar_h100_replay.py."""
        self._require_valid("mbarrier.expect_tx")
        n = int(nbytes)
        if not 0 <= n <= 0xFFFF_FFFF:
            raise MbarrierError(f"mbarrier.expect_tx on {self._where()}: txCount {n} is not a u32")
        new = self.tx + n
        if new > TX_LIMIT:
            raise MbarrierError(f"mbarrier.expect_tx({n}) on {self._where()}: tx-count would become {new} > 2^20-1 "
                                "(PTX ISA 9.7.13.15.2); split the transaction over more barriers/phases")
        self.tx = new
        return self._maybe_complete()

    def complete_tx(self, nbytes: int, *, async_copy: bool = False) -> bool:
        """complete-tx (9.7.13.15.5.2): tx-count -= nbytes, maybe completing the phase. Returns True if it did.

        One step, as the H100 does for the mbarrier.complete_tx instruction (over_deliver: tx 16 -> -16 with no
        arrival pending did not complete the phase). ``async_copy``: the bytes come from a cp.async.bulk{.tensor}
        copy, whose complete_tx the H100 applies piecewise: with no arrival pending and 0 < tx-count < nbytes it
        completed the phase while the copy landed (over_deliver_bulk, 2026-11-22). The emulator refuses that case
        (MbarrierError) instead of guessing the piece size and where the surplus bytes go."""
        self._require_valid("complete_tx")
        n = int(nbytes)
        new = self.tx - n
        if n < 0 or new < -TX_LIMIT:
            raise MbarrierError(f"complete_tx({n}) on {self._where()}: tx-count would become {new} < -(2^20-1) "
                                "(PTX ISA 9.7.13.15.2): more bytes completed than expected")
        if async_copy and self.pending == 0 and 0 < self.tx < n:
            raise MbarrierError(
                f"an asynchronous copy completes {n} bytes on {self._where()} in phase {self.phase}, whose arrivals "
                f"are all in (pending 0) and whose expect_tx left only {self.tx} bytes outstanding: the copy delivers "
                f"{n - self.tx} bytes more than announced. On an H100 such a phase completes while the copy lands "
                "(measured on an H100, mbarrier kit sequence over_deliver_bulk, 2026-11-22; presumably tx-count "
                "passes 0 part-way, and where the surplus bytes go is not measured: ptx_docs/mbarrier.md "
                "'Over-delivery'); the emulator stops here instead of guessing. expect_tx the copy's full byte "
                "count (a TMA load counts its whole box, OOB part included) before the last arrival")
        self.tx = new
        return self._maybe_complete()

    def arrive(self, count: int = 1, *, no_complete: bool = False, expect_tx: Optional[int] = None) -> int:
        """arrive-on (9.7.13.15.7/13), optionally preceded by expect-tx; returns the state token."""
        op = "mbarrier.arrive" + (".expect_tx" if expect_tx is not None else "")
        self._require_valid(op)
        c = _check_count(op, count)
        if expect_tx is not None:
            self.expect_tx(expect_tx)
        return self._arrive(op, c, no_complete)

    def arrive_drop(self, count: int = 1, *, no_complete: bool = False, expect_tx: Optional[int] = None) -> int:
        """arrive_drop (9.7.13.15.14): expected -= count for later phases, then arrive-on(count)."""
        op = "mbarrier.arrive_drop" + (".expect_tx" if expect_tx is not None else "")
        self._require_valid(op)
        c = _check_count(op, count)
        if c > self.expected:
            raise MbarrierError(f"{op}({c}) on {self._where()}: drops more than the {self.expected} expected "
                                "arrivals (PTX ISA 9.7.13.15.14)")
        if expect_tx is not None:
            self.expect_tx(expect_tx)
        self.expected -= c
        return self._arrive(op, c, no_complete)

    def _arrive(self, op: str, c: int, no_complete: bool) -> int:
        if c > self.pending:
            raise MbarrierError(f"{op}({c}) on {self._where()}: only {self.pending} arrivals pending in phase "
                                f"{self.phase} (more arrivals than pending; PTX ISA 9.7.13.15.2 pending count >= 0)")
        token = encode_state(self.addr, self.phase, self.pending)
        self.pending -= c
        if no_complete and self.pending == 0 and self.tx == 0:
            raise MbarrierError(f"{op}.noComplete on {self._where()} completed phase {self.phase}, which is "
                                "undefined behaviour (PTX ISA 9.7.13.15.13)")
        self._maybe_complete()
        return token

    def add_pending(self, count: int = 1) -> None:
        """pending += count (cp.async.mbarrier.arrive without .noinc, 9.7.13.15.15); checks the 2^20-1 limit."""
        self._require_valid("cp.async.mbarrier.arrive")
        new = self.pending + int(count)
        if new > MAX_COUNT:
            raise MbarrierError(f"cp.async.mbarrier.arrive on {self._where()}: pending count would become {new} > "
                                "2^20-1 (PTX ISA 9.7.13.15.15)")
        self.pending = new

    def test_wait(self, token: int) -> bool:
        """test_wait/try_wait with a state token (9.7.13.15.16): True iff the token's phase has completed."""
        self._require_valid("mbarrier.test_wait")
        tag, ph, _ = decode_state(token)
        if tag != (self.addr >> 3) & 0x7FF:
            raise MbarrierError(f"mbarrier.test_wait on {self._where()} with a state token from another barrier "
                                f"(address tag 0x{tag:x}); pass the token that this barrier's arrive returned")
        cur = self.phase & _PHASE_MASK
        if ph == cur:
            return False
        if ph == (cur - 1) & _PHASE_MASK:
            return True
        raise MbarrierError(f"mbarrier.test_wait on {self._where()}: token is from phase {ph} but the barrier is in "
                            f"phase {cur}; only the current or the immediately preceding phase may be tested "
                            "(PTX ISA 9.7.13.15.16)")

    def test_wait_parity(self, parity: int) -> bool:
        """test_wait/try_wait.parity: True iff the phase with that parity (current or preceding) has completed."""
        self._require_valid("mbarrier.test_wait.parity")
        p = int(parity)
        if p not in (0, 1):
            raise MbarrierError(f"mbarrier wait .parity operand {p} on {self._where()} must be 0 or 1 "
                                "(PTX ISA 9.7.13.15.16)")
        return p != (self.phase & 1)

    def inval(self) -> None:
        """mbarrier.inval (9.7.13.15.10)."""
        self._require_valid("mbarrier.inval")
        self.valid = False

    def describe(self) -> str:
        """One line for deadlock reports: phase, pending arrivals, outstanding tx bytes."""
        if not self.valid:
            return f"{self._where()}: invalidated"
        parts = [f"{self._where()}: phase {self.phase} (parity {self.phase & 1}) incomplete",
                 f"pending arrivals {self.pending}/{self.expected}"]
        if self.tx > 0:
            parts.append(f"tx-count {self.tx}: {self.tx} bytes expected (expect_tx) but not delivered by any copy")
        elif self.tx < 0:
            parts.append(f"tx-count {self.tx}: {-self.tx} bytes delivered beyond what expect_tx announced")
        else:
            parts.append("tx-count 0")
        return ", ".join(parts)


class MbarrierTable:
    """All mbarrier objects of one CTA's shared memory, keyed by shared::cta byte address."""

    def __init__(self) -> None:
        self._bars: dict[int, Mbarrier] = {}

    def init(self, addr: int, count: int) -> Mbarrier:
        """mbarrier.init (9.7.13.15.9): phase 0, pending = expected = count, tx 0."""
        a = int(addr)
        if a % 8:
            raise MbarrierError(f"mbarrier.init at shared 0x{a:x}: an mbarrier object must be 8-byte aligned "
                                "(PTX ISA 9.7.13.15.1)")
        c = _check_count("mbarrier.init", count)
        old = self._bars.get(a)
        if old is not None and old.valid:
            raise MbarrierError(f"mbarrier.init on shared 0x{a:x}, which already holds a valid mbarrier (phase "
                                f"{old.phase}): undefined behaviour; mbarrier.inval it first (PTX ISA 9.7.13.15.9)")
        bar = Mbarrier(addr=a, expected=c, pending=c)
        self._bars[a] = bar
        return bar

    def get(self, addr: int, op: str = "mbarrier operation") -> Mbarrier:
        """The barrier at ``addr``; raises MbarrierError for an uninitialized (or misaligned) address."""
        a = int(addr)
        bar = self._bars.get(a)
        if bar is None:
            hint = " (not 8-byte aligned)" if a % 8 else ""
            raise MbarrierError(f"{op} on shared 0x{a:x}{hint}, which holds no initialized mbarrier: run "
                                "mbarrier.init (and fence.mbarrier_init / a barrier) before use (PTX ISA 9.7.13.15)")
        return bar

    def find(self, addr: int) -> Optional[Mbarrier]:
        """The barrier at ``addr`` or None."""
        return self._bars.get(int(addr))

    def overlapping(self, lo: int, hi: int) -> list[Mbarrier]:
        """Valid barriers whose 8 bytes intersect [lo, hi) (to flag ordinary stores/copies that clobber one)."""
        return [b for a, b in self._bars.items() if b.valid and a < hi and a + 8 > lo]

    def __iter__(self):
        return iter(sorted(self._bars.values(), key=lambda b: b.addr))

    def describe(self) -> str:
        """All barriers, one per line."""
        return "\n".join(b.describe() for b in self) or "(no mbarrier initialized)"
