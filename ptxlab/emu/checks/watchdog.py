"""The runaway-launch watchdog: per-launch instruction budget, no-progress wall-clock limit, hopeless-launch refusal.

Three limits, all per launch (all the waves of one ``launch`` together):

* **instruction budget** — ``PTXLAB_EMU_BUDGET`` / ``EmuDevice(budget=)``, thread-instructions per launch (default
  4e9, ``machine.DEFAULT_BUDGET``).  Checked after every basic block.
* **stall limit** — ``PTXLAB_EMU_STALL_S`` / ``EmuDevice(stall_seconds=)``, seconds of wall clock without forward
  progress (default ``DEFAULT_STALL_S`` = 45 s; 0 switches it off).  Forward progress is something other than a
  loop's own state changing.  Checked about once a second (less often while fingerprinting a large wave is slow: at
  most ~3% of the wall clock, at least four times per limit): first cheaply (a thread exited, waited at a barrier or
  parked, a wake, a CTA barrier completing (``st.progress``, counted by machine.py and ops/barrier.py), an
  asynchronous operation completing or being issued, a new wave); when any of these changed, the wave's state
  itself is fingerprinted (every thread's pc, status and registers, the shared memory, the pending asynchronous
  operations; the global memory too when all of these repeat) and only a state the wave has not been in before
  counts as progress.  The emulator is deterministic, so a wave that returns to a state it was in is in a loop that
  can never end: a spin loop on a flag nobody writes (nothing changes) and one that contains ``__syncthreads()``
  (barriers complete every iteration, but the state cycles) are both reported after the limit with the spinning
  warps and the PTX/CUDA lines of their loop.  A loop whose state keeps changing (a counter) is left to the budget.
* **hopeless launches** — before the first wave, a lower bound of the launch's thread-instructions is computed as
  (threads of the grid) x (instructions on the shortest path from the kernel's entry to an exit).  A launch whose
  lower bound already exceeds the instruction budget is refused with the estimate (it could only end in the budget
  error, after a long time); one whose lower bound at ``PEAK_RATE`` needs more than ``WARN_SECONDS`` is warned about.
"""
from __future__ import annotations

import hashlib
import heapq
import time
import zlib
from collections import defaultdict

import numpy as np

from ...errors import EmuError

DEFAULT_STALL_S = 45.0          # documented in README.md "Emulator switches" and ptx_docs/emulator_checks.md
# Above the best measured rate of the scheduler (1.46-1.55e9 thread-instructions/s: an integer loop in full
# 8192-thread waves, 2-core reference machine, 2026-11-24, benchmarks/emu_peak_rate.py, NOTES.md): no launch runs
# faster, so a lower bound of instructions becomes a lower bound of seconds.
PEAK_RATE = 2.0e9
WARN_SECONDS = 120.0
CHECK_EVERY_STEPS = 64          # the scheduler calls LaunchWatch.tick every this many basic blocks


def stall_seconds_default() -> float:
    from ... import settings
    return float(settings.get("PTXLAB_EMU_STALL_S"))


def shortest_path_instrs(prog) -> int:
    """Fewest instructions a thread can execute from the entry to an exit (Dijkstra over the decoded code)."""
    cached = getattr(prog, "_min_path_instrs", None)
    if cached is not None:
        return cached
    from ..core.program import K_BRA, K_EXIT, K_NORMAL, K_TRAP
    code = prog.code
    n = len(code)
    dist = [None] * (n + 1)
    heap = [(0, 0)]
    best = None
    while heap:
        d, pc = heapq.heappop(heap)
        if pc >= n:
            best = d
            break
        if dist[pc] is not None:
            continue
        dist[pc] = d
        e = code[pc]
        if e.kind == K_EXIT:     # popped in distance order: the first exit reached is the nearest
            best = d
            break
        if e.kind == K_TRAP:
            continue
        if e.kind == K_BRA:
            heapq.heappush(heap, (d, e.target))
            if e.guard >= 0:
                heapq.heappush(heap, (d, pc + 1))
            continue
        cost = 1 if e.kind == K_NORMAL else 0
        heapq.heappush(heap, (d + cost, pc + 1))
    best = best or 0
    prog._min_path_instrs = best
    return best


def preflight(prog, grid: tuple, block: tuple, budget: int, kernel: str):
    """Refuse a launch whose lower bound of thread-instructions exceeds the budget; warn if it needs very long."""
    threads = int(grid[0]) * int(grid[1]) * int(grid[2]) * int(block[0]) * int(block[1]) * int(block[2])
    per = max(shortest_path_instrs(prog), 1)
    lower = threads * per
    secs = lower / PEAK_RATE
    if lower > budget:
        raise EmuError(
            f"launch refused: grid {tuple(grid)} x block {tuple(block)} = {threads:,} threads, each executing at least "
            f"{per} instructions (the shortest path through the kernel), is at least {lower:,} thread-instructions, "
            f"above this launch's instruction budget of {budget:,}; even at the emulator's best rate "
            f"(~{PEAK_RATE / 1e9:.0f} G thread-instructions/s) it would need at least {_human(secs)}\n"
            f"  what to do: emulate a smaller grid (the emulator is for correctness on small problems), or raise the "
            f"budget with PTXLAB_EMU_BUDGET={_sci(lower * 4)} / open_device('emu', budget=...) to run it anyway",
            kernel=kernel)
    if secs > WARN_SECONDS:
        from .sitewarn import emu_warn
        emu_warn(f"launch of {kernel}: {threads:,} threads x at least {per} instructions = at least {lower:,} "
                 f"thread-instructions; even at ~{PEAK_RATE / 1e9:.0f} G/s that is at least {_human(secs)} of emulation")


def _human(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} minutes"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} hours"
    return f"{s / 86400:,.0f} days"


def _sci(x: float) -> str:
    return f"{float(x):.0e}".replace("e+0", "e").replace("e+", "e")


class LaunchWatch:
    """Limits shared by every wave of one launch (see the module docstring)."""

    def __init__(self, kernel: str, budget: int, stall_s: float):
        self.kernel = kernel
        self.budget = int(budget)
        self.stall_s = float(stall_s)
        self.done = 0                  # thread-instructions of finished waves
        self.wave_no = 0
        now = time.monotonic()
        self.t0 = now
        self.last_change = now
        self.next_check = now + self._interval()
        self.sig = None
        self.samples: dict = defaultdict(set)   # (cta, warp) -> set of pcs seen while nothing changed
        self.states: dict = {}                  # fingerprint of a wave state -> global-memory digest (or None)

    def _interval(self) -> float:
        return min(1.0, self.stall_s / 8) if self.stall_s > 0 else 3600.0

    def start_wave(self):
        self.wave_no += 1
        self.sig = None
        self.samples.clear()
        self.states.clear()
        self.last_change = time.monotonic()

    def remaining(self) -> int:
        return self.budget - self.done

    def tick(self, sched):
        """Called by the scheduler every CHECK_EVERY_STEPS blocks; raises when the stall limit is exceeded."""
        if self.stall_s <= 0:
            return
        now = time.monotonic()
        if now < self.next_check:
            return
        self.next_check = now + self._interval()
        st = sched.st
        # threads briefly waiting for their warp at a .sync instruction (status 4) count as running
        sig = (self.wave_no, st.progress, len(st.engine.queue), np.where(st.status == 4, 0, st.status).tobytes())
        if sig != self.sig:
            self.sig = sig
            t = time.monotonic()
            seen = self._seen_state(st)
            # fingerprinting a large wave (MBs of registers) costs tens of ms: keep it under ~3% of the wall clock by
            # spacing the checks out, but never more than a quarter of the stall limit
            self.next_check = max(self.next_check, now + min(30 * (time.monotonic() - t), self.stall_s / 4))
            if not seen:                       # a new state: progress; a state seen before: a loop (module doc)
                self.last_change = now
                self.samples.clear()
                return
        run = np.flatnonzero((st.status == 0) | (st.status == 2))    # running, or waiting at a CTA barrier
        key = np.unique(np.stack([st.cta_of[run], st.warp[run], np.maximum(st.pc[run] - (st.status[run] == 2), 0)]),
                        axis=1)
        for c, w, p in key.T:      # every (warp, pc) of the running threads: lanes may sit at different pcs
            self.samples[(int(c), int(w))].add(int(p))
        if now - self.last_change > self.stall_s:
            self._stall(sched, now)

    def _seen_state(self, st) -> bool:
        """True when the wave was in exactly this state at an earlier check (deterministic: a loop without end)."""
        h = hashlib.blake2b(digest_size=16)
        for arr in (st.pc, np.where(st.status == 4, 0, st.status), st.smem):
            h.update(np.ascontiguousarray(arr).data)
        # the native engine's register file hands out copies; its live arrays need none (read here, not kept)
        for r in (st.r.arrays() if hasattr(st.r, "arrays") else st.r):
            h.update(np.ascontiguousarray(r).view(np.uint8).data)
        h.update(repr(len(st.engine.queue)).encode())
        fp = h.digest()
        if fp not in self.states:
            if len(self.states) > 4096:
                self.states.clear()
            self.states[fp] = None
            return False
        heap = zlib.crc32(st.heap.buf.data)     # only for a state that repeats: confirm global memory is unchanged
        prev = self.states[fp]
        self.states[fp] = heap
        return prev is not None and prev == heap

    def _stall(self, sched, now):
        st = sched.st
        code = sched.code
        rows = []
        for (c, w), pcs in sorted(self.samples.items())[:16]:
            block = st.coords(int(np.flatnonzero(st.cta_of == c)[0]))[0]
            lines = sorted({code[p].ins.line for p in pcs if p < len(code)})
            srcs = sorted({f"{code[p].ins.loc[0]}:{code[p].ins.loc[1]}" for p in pcs
                           if p < len(code) and code[p].ins.loc})
            first = code[min(pcs)].ins if min(pcs) < len(code) else None
            span = f"PTX lines {lines[0]}-{lines[-1]}" if len(lines) > 1 else f"PTX line {lines[0]}"
            rows.append(f"    block {block} warp {w}: spinning in {span}"
                        + (f" [{', '.join(srcs[:4])}]" if srcs else "")
                        + (f", e.g. {first.text.strip()}" if first is not None else ""))
        if len(self.samples) > 16:
            rows.append(f"    ... {len(self.samples) - 16} more warps")
        others = sched._where_summary((st.status != 0) & (st.status != 1))
        instrs = self.done + st.thread_instrs
        raise EmuError(
            f"watchdog: no forward progress for {now - self.last_change:.0f} s of wall clock (limit {self.stall_s:g} s; "
            f"{instrs:,} thread-instructions executed by this launch so far, {now - self.t0:.0f} s in total) — no "
            f"thread exited and the wave keeps returning to states it was in before (registers, memory and "
            f"barriers cycle): a loop that can never end, e.g. polling a flag that no running thread or copy will "
            f"write, with or without __syncthreads() inside the loop\n"
            f"  spinning warps:\n" + "\n".join(rows) +
            (f"\n  other threads:\n{others}" if others else "") +
            "\n  what to do: fix the loop's exit condition / the missing writer; if the kernel is just slow, raise "
            "the limit with PTXLAB_EMU_STALL_S=SECONDS or open_device('emu', stall_seconds=...) (0 = off)",
            kernel=st.kernel)

    def budget_report(self, sched):
        st = sched.st
        detail = sched._where_summary(st.status == 0)
        instrs = self.done + st.thread_instrs
        raise EmuError(
            f"instruction budget exceeded: {instrs:,} thread-instructions executed by this launch (limit "
            f"{self.budget:,} per launch; set PTXLAB_EMU_BUDGET to raise it) — a runaway loop or a spin wait that "
            f"can never succeed\n  running threads:\n{detail}", kernel=st.kernel)
