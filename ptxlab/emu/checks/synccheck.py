"""Barrier divergence checks for CTA barriers without a thread count (``__syncthreads()``), the emulator's analogue
of compute-sanitizer's synccheck (ptx_docs/emulator_checks.md "Barrier divergence").

PTX ISA 9.7.13.1 (bar, barrier): without a thread count "all threads in the CTA participate in the barrier"; a
barrier instruction makes the thread "wait for all non-exited threads from its warp" and ``.sync``/``.red`` wait for
"non-exited threads of all other warps participating in the barrier".  ``bar.sync`` is ``barrier.sync.aligned``, and
``.aligned`` means "all threads in CTA will execute the same barrier instruction. In conditionally executed code, an
aligned barrier instruction should only be used if it is known that all threads in CTA evaluate the condition
identically, otherwise behavior is undefined."  The CUDA C++ Programming Guide (compute capability 7.x, independent
thread scheduling) states the hardware side: from Volta on, ``__syncthreads()``/``bar.sync`` "are enforced per thread
and thus will not succeed until reached by all non-exited threads in the block".

Two cases are checked when such a barrier completes for a CTA:

* **early exit** — some threads of the CTA exited without arriving (``if (i >= n) return; ... __syncthreads();``).
  The barrier completes without them, as on sm_70+ hardware (the guide's "non-exited threads"); since under
  ``.aligned`` the exit is a CTA-divergent condition (undefined by the text), an :class:`EmuWarning` names the
  barrier, the warps that arrived and the warps that exited.  Strict mode (``PTXLAB_EMU_STRICT=1``,
  ``open_device("emu", strict=True)``) raises instead.
* **divergent aligned barrier** — the CTA's participants arrived at *different* ``.aligned`` barrier instructions
  with the same id (``if (c) __syncthreads(); else __syncthreads();``).  Undefined by the text.  Measured on an H100
  (tools/probes/barrier_divergence_probe.py, 2026-11-24): whole warps at different ``bar.sync`` instructions complete
  the barrier and it orders their shared-memory accesses, so the emulator completes it with an :class:`EmuWarning`
  naming the warps at each instruction (strict mode raises; compute-sanitizer's synccheck reports it as "Divergent
  thread(s) in block" and aborts the kernel).  The lanes of *one warp* split over two ``.aligned`` instructions hang
  on the H100, so that stays an error.  Non-aligned ``barrier.sync`` at different instructions is legal and silent.
* The H100 also confirms the early-exit model: the barrier waits for threads that are still running and completes
  when they exit (warps or lanes), ordering the survivors' accesses; compute-sanitizer reports nothing there.

A barrier reached by only part of the CTA while the others neither arrive nor exit is a deadlock; the deadlock report
gets a line per such barrier saying which warps arrived and which are missing (``explain``).
``PTXLAB_EMU_SYNCCHECK=0`` switches both checks off.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ... import settings as _settings
from ...errors import EmuError
from .fidelity import strict_of
from .sitewarn import emu_warn

ENABLED = _settings.get("PTXLAB_EMU_SYNCCHECK", fallback=True)
RUN, EXITED, BAR = 0, 1, 2


def _ins_at(st, pc: int):
    code = st.prog.code
    return code[pc].ins if 0 <= pc < len(code) else None


def _where(ins) -> str:
    if ins is None:
        return "?"
    s = f"PTX line {ins.line}: {ins.text.strip()}"
    if ins.loc:
        s += f" [{ins.loc[0]}:{ins.loc[1]}]"
    return s


def _warps(st, mask) -> str:
    """'warps 0-2, 5 (97 threads)' for a thread mask of one CTA."""
    ws = sorted({int(w) for w in st.warp[mask]})
    runs, i = [], 0
    while i < len(ws):
        j = i
        while j + 1 < len(ws) and ws[j + 1] == ws[j] + 1:
            j += 1
        runs.append(f"{ws[i]}" if i == j else f"{ws[i]}-{ws[j]}")
        i = j + 1
    return f"warp{'s' if len(ws) > 1 else ''} {', '.join(runs)} ({int(np.count_nonzero(mask))} threads)"


def _exit_pc(st, pc: int) -> int:
    """An exited thread's pc is the start of the block it exited in: the exit is that block's terminator."""
    from ..core.program import K_NORMAL
    code = st.prog.code
    while pc < len(code) - 1 and code[pc].kind == K_NORMAL:
        pc += 1
    return pc


def _is_aligned(ins) -> bool:
    return ins is not None and (ins.opcode == "bar" or "aligned" in ins.mods)


def check_release(st, bs, bid: int, ctas: np.ndarray, participants: np.ndarray):
    """Called when barrier ``bid`` (expected = all non-exited threads) completes for the wave-relative CTAs ``ctas``;
    ``participants`` is the mask of the threads released (waiting at the barrier); ``bs`` the ops/barrier.py state
    (``at_line``: the PTX line of the barrier instruction each thread arrived at)."""
    if not ENABLED:
        return
    # fast path (every barrier of every kernel comes here): one instruction and nobody exited
    lines = bs.at_line[participants]
    in_done = np.zeros(st.nctas, bool)
    in_done[ctas] = True
    if (lines.size == 0 or lines.min() == lines.max()) and \
            not (st.valid & (st.status == EXITED) & in_done[st.cta_of]).any():
        return
    for c in ctas:
        c = int(c)
        in_cta = st.cta_of == c
        part = participants & in_cta
        if not part.any():
            continue
        # the barrier instruction each participant arrived at
        lines = bs.at_line[part]
        ulines = np.unique(lines)
        block = st.coords(int(np.flatnonzero(in_cta)[0]))[0]
        if ulines.size > 1 and any(_is_aligned(bs.ins_of_line.get(int(ln))) for ln in ulines):
            _divergent(st, bs, bid, block, part, lines, ulines)
        gone = in_cta & st.valid & (st.status == EXITED)
        if not gone.any():
            continue
        ins = bs.ins_of_line.get(int(ulines[0]))
        exits = defaultdict(lambda: np.zeros(st.T, bool))
        for t in np.flatnonzero(gone):
            exits[_exit_pc(st, int(st.pc[t]))][t] = True
        side_exit = "\n".join(f"    {_warps(st, m)} exited at {_where(_ins_at(st, p))}"
                              for p, m in sorted(exits.items()))
        head = (f"synccheck: barrier {bid} at {_where(ins)} completed in block {block} without "
                f"{int(np.count_nonzero(gone))} threads that exited before reaching it\n"
                f"    arrived: {_warps(st, part)}\n{side_exit}\n")
        if strict_of(st.device, "barrier_exit"):
            raise EmuError(
                head + "  rule: without a thread count all threads of the CTA participate; under .aligned (bar.sync = "
                "barrier.sync.aligned) an exit in a CTA-divergent condition before the barrier is undefined "
                "(PTX ISA 9.7.13.1). sm_70+ hardware completes the barrier with the non-exited threads (CUDA "
                "Programming Guide, independent thread scheduling; measured on an H100: "
                "tools/probes/barrier_divergence_probe.py cases exit_*); this error is the strict mode "
                "(PTXLAB_EMU_STRICT=barrier_exit, all or 1 / open_device('emu', strict=True))\n"
                "  what to do: let every thread reach the barrier (guard the work, not the barrier), or unset strict",
                kernel=st.kernel, ptx_line=ins.line if ins is not None else None,
                ptx_text=ins.text if ins is not None else None,
                src_loc=f"{ins.loc[0]}:{ins.loc[1]}" if ins is not None and ins.loc else None, block=block)
        emu_warn(f"[{st.kernel}] " + head +
                 "    (sm_70+ hardware completes the barrier with the non-exited threads, and so does the emulator; "
                 "measured on an H100, which also orders the survivors' shared-memory accesses: "
                 "tools/probes/barrier_divergence_probe.py cases exit_*; compute-sanitizer's synccheck reports "
                 "nothing; "
                 "the PTX text leaves it undefined under .aligned: PTX ISA 9.7.13.1, ptx_docs/emulator_checks.md; "
                 "PTXLAB_EMU_STRICT=barrier_exit (or all, or 1) makes it an error)",
                 st.device, key=("synccheck-exit", st.kernel, ins.line if ins is not None else None))


def _divergent(st, bs, bid: int, block, part: np.ndarray, lines: np.ndarray, ulines: np.ndarray):
    """The CTA's participants completed barrier ``bid`` at different ``.aligned`` barrier instructions.

    H100 evidence (tools/probes/barrier_divergence_probe.py, ptx_docs/emulator_checks.md): whole warps at different
    ``bar.sync`` instructions complete the barrier and it orders their shared-memory accesses (0 stale reads of
    17.3M); the lanes of one warp split over two ``bar.sync`` instructions hang (ptxas puts a ``WARPSYNC.ALL`` before
    each ``.aligned`` barrier). So a split between warps is a warning (strict: error), a split inside a warp an
    error."""
    sides = []
    for ln in ulines:
        m = part.copy()
        m[part] = lines == ln
        sides.append(f"    {_warps(st, m)} at {_where(bs.ins_of_line.get(int(ln)))}")
    ins = bs.ins_of_line.get(int(ulines[0]))
    where = dict(kernel=st.kernel, ptx_line=ins.line if ins is not None else None,
                 ptx_text=ins.text if ins is not None else None,
                 src_loc=f"{ins.loc[0]}:{ins.loc[1]}" if ins is not None and ins.loc else None, block=block)
    at = np.full(st.T, -1, np.int64)
    at[part] = lines
    split = [int(w) for w in np.unique(st.warp[part])
             if np.unique(at[part & (st.warp == w)]).size > 1]
    head = (f"synccheck: divergent barrier — the threads of block {block} completed barrier {bid} at "
            f"{ulines.size} different barrier instructions\n" + "\n".join(sides))
    rule = ("  rule: bar.sync / barrier.sync.aligned require every thread of the CTA to execute the same barrier "
            "instruction; a CTA-divergent condition around it is undefined behaviour (PTX ISA 9.7.13.1 .aligned)")
    todo = ("  what to do: move the __syncthreads() out of the divergent branch so that all threads reach the same "
            "one, or use the non-aligned barrier.sync (see ptx_docs/emulator_checks.md)")
    if split:
        raise EmuError(
            head + f"\n    the lanes of warp{'s' if len(split) > 1 else ''} {', '.join(map(str, split[:8]))}"
            f"{' ...' if len(split) > 8 else ''} are split over different .aligned barrier instructions\n" + rule +
            "\n  hardware: on an H100 this hangs (lanes of one warp at two bar.sync instructions never complete: "
            "ptxas puts a WARPSYNC.ALL before each .aligned barrier; tools/probes/barrier_divergence_probe.py "
            "case div_lanes_aligned, 2026-11-24); the non-aligned barrier.sync completes\n" + todo, **where)
    note = ("  hardware: on an H100 whole warps at different bar.sync instructions complete the barrier and it orders "
            "their shared-memory accesses (tools/probes/barrier_divergence_probe.py case div_warps_aligned, "
            "2026-11-24); compute-sanitizer --tool synccheck reports it as \"Barrier error detected. Divergent "
            "thread(s) in block\" and aborts the kernel")
    if strict_of(st.device, "barrier_divergence"):
        raise EmuError(head + "\n" + rule + "\n" + note + "\n  this error is the strict mode (PTXLAB_EMU_STRICT=barrier_divergence|all|1 / "
                       "open_device('emu', strict=True))\n" + todo, **where)
    emu_warn(f"[{st.kernel}] " + head + "\n    (the emulator completes the barrier as the H100 does; undefined by "
             "the PTX text under .aligned: PTX ISA 9.7.13.1; compute-sanitizer's synccheck reports it as an error; "
             "ptx_docs/emulator_checks.md; PTXLAB_EMU_STRICT=barrier_divergence (or all, or 1) makes it an error)",
             st.device, key=("synccheck-divergent", st.kernel, tuple(int(x) for x in ulines)))


def check_overshoot(st, bs, bid: int, ctas: np.ndarray, participants: np.ndarray):
    """Barrier ``bid`` with an explicit thread count completed for ``ctas`` with more arrivals than the count.

    PTX ISA 9.7.13.1 says only that b threads participate; it does not say what more arrivals do.  The emulator,
    like the hardware model below, releases every waiting thread and starts the next generation at zero, so the
    extra arrivals are consumed by this generation.  H100 (tools/probes/barrier_divergence_probe.py): one
    ``bar.sync 1, 64`` reached by 128 threads completes (count_more_once, count_more_staggered), but a loop of two
    such barriers hung (count_more); a likely cause (not documented): a generation that takes more than b arrivals
    leaves a later one short."""
    if not ENABLED:
        return
    for c in ctas:
        c = int(c)
        part = participants & (st.cta_of == c)
        ln = int(bs.at_line[part][0]) if part.any() else -1
        ins = bs.ins_of_line.get(ln)
        block = st.coords(int(np.flatnonzero(st.cta_of == c)[0]))[0]
        exp, got = int(bs.expected[bid][c]), int(bs.arrived[bid][c])
        head = (f"synccheck: barrier {bid} with thread count {exp} at {_where(ins)} completed in block {block} with "
                f"{got} arrivals, more than its count\n    released: {_warps(st, part)}\n")
        note = ("  hardware: on an H100 one such barrier completes, but a loop of two bar.sync 1, 64 reached by 128 "
                "threads hung (tools/probes/barrier_divergence_probe.py cases count_more_once / count_more, "
                "2026-11-24; a likely cause, not documented: arrivals beyond the count are consumed by one generation, "
                "so a later one never fills); PTX ISA 9.7.13.1 says only that b threads participate")
        if strict_of(st.device, "barrier_count"):
            raise EmuError(head + note + "\n  this error is the strict mode (PTXLAB_EMU_STRICT=barrier_count|all|1 / "
                           "open_device('emu', strict=True))\n  what to do: give the barrier the number of threads "
                           "that reach it (or split them over two barrier ids)", kernel=st.kernel,
                           ptx_line=ins.line if ins is not None else None,
                           ptx_text=ins.text if ins is not None else None,
                           src_loc=f"{ins.loc[0]}:{ins.loc[1]}" if ins is not None and ins.loc else None, block=block)
        emu_warn(f"[{st.kernel}] " + head + note + "\n    (the emulator releases all of them; "
                 "ptx_docs/emulator_checks.md; PTXLAB_EMU_STRICT=barrier_count (or all, or 1) makes it an error)",
                 st.device, key=("synccheck-overshoot", st.kernel, ln))


def explain(st) -> str | None:
    """Deadlock-report lines: CTA barriers (no thread count) reached by only part of the CTA, and who is missing;
    barriers with a thread count that fewer threads reached."""
    s = st.side.get("bar")
    if s is None:
        return None
    lines = []
    for bid in range(s.arrived.shape[0]):
        for c in np.flatnonzero(s.arrived[bid]):
            in_cta = st.cta_of == c
            if s.expected[bid][c] >= 0:
                at = in_cta & (st.status == BAR) & (st.bar_id == bid)
                if at.any():
                    ins = s.ins_of_line.get(int(s.at_line[at][0]))
                    block = st.coords(int(np.flatnonzero(in_cta)[0]))[0]
                    lines.append(f"  barrier with a thread count: block {block} barrier {bid} expects "
                                 f"{int(s.expected[bid][c])} threads, {int(s.arrived[bid][c])} arrived "
                                 f"({_warps(st, at)} wait at {_where(ins)}); threads that exited do not count toward "
                                 f"an explicit count (PTX ISA 9.7.13.1); the H100 hangs here too "
                                 f"(tools/probes/barrier_divergence_probe.py case count_fewer_exit)")
                continue
            at = in_cta & (st.status == BAR) & (st.bar_id == bid)
            missing = in_cta & st.valid & (st.status != EXITED) & ~at
            if not missing.any() or not at.any():
                continue
            block = st.coords(int(np.flatnonzero(in_cta)[0]))[0]
            ins = s.ins_of_line.get(int(s.at_line[at][0]))
            lines.append(f"  barrier divergence (synccheck): block {block} barrier {bid}: {_warps(st, at)} wait at "
                         f"{_where(ins)}; {_warps(st, missing)} of the CTA never arrive there (they are "
                         f"elsewhere, see above) — a __syncthreads() inside a condition that is not uniform "
                         f"across the CTA (PTX ISA 9.7.13.1)")
    return "\n".join(lines) if lines else None
