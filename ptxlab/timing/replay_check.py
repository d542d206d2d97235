"""A replay that cannot finish: say which kernel, which barrier and why, instead of predicting from half a run.

Every arrival at a CTA barrier (``bar.sync`` / ``barrier.sync`` / ``bar.arrive``, PTX ISA 9.7.13.1) is recorded by
the emulator (trace.py), so a barrier generation the replay (sim.py) never completes is the replay's own defect: the
issue stream of some warp (the SASS join, sass_join.py, or the PTX stream) carries the warp's arrivals in an order
that cannot complete, typically a later generation before an earlier one, and every other warp of the CTA waits
forever.  Such a replay (or one that finished no CTA at all, for any reason) raises ``TimingReplayError`` naming the
kernel, the generation, the warps waiting where, and the first arrival issued out of order.  Waits on an mbarrier
phase whose contribution the recorder could not see keep their documented treatment ("unresolved wait", released at
the end; ptx_docs/timing.md) while some CTA finishes.
"""
from __future__ import annotations

from .trace import BAR


class TimingReplayError(RuntimeError):
    """The replay of a recorded launch left a CTA unfinished; the message names the kernel and the cause."""


def check_replay(r, kernel: str, streams: dict, info, issue: str) -> None:
    """Raise TimingReplayError when ``r`` (sim.SimResult) left a CTA barrier generation incomplete or finished no
    CTA.  ``streams``: the issued streams (warp key -> items); ``info``: the simulator's instruction tables;
    ``issue``: how the warps issued (the Timing's issue line)."""
    bars = {k: v for k, v in r.stuck.items() if k and k[0] == "bar"}
    if r.cta_spans and not bars:
        return
    keys = bars or r.stuck
    lines = [f"timing model: kernel {kernel}: the replay "
             + (f"finished no CTA of the {r.ctas_on_sm} on the simulated SM" if not r.cta_spans else
                f"left {r.ctas_on_sm - len(r.cta_spans)} of its {r.ctas_on_sm} CTAs unfinished")
             + f" (issue: {issue})."]
    for k in sorted(keys, key=str)[:3]:
        lines.append(f"  {_name(k)} never completes ({r.missing.get(k, 0)} recorded arrivals never issued); waiting: "
                     + "; ".join(f"warp {w} at {_where(info, pc)}" for w, pc in sorted(r.stuck[k])[:4]))
    cause = out_of_order(streams)
    if cause:
        w, first, later, pos = cause
        lines.append(f"  cause: warp {w} issues its arrival at {_name(later)} (stream item {pos}) before the one at "
                     f"{_name(first)}: its issue stream reorders the barrier arrivals the emulator recorded in program "
                     f"order (a SASS-join defect, ptxlab/timing/sass_join.py, when the issue is SASS).")
    elif not bars:
        lines.append("  cause: the waits above are on phases whose contributions were never issued.")
    lines.append("  What to do: report it with the kernel; PTXLAB_TIMING_ISSUE=ptx predicts from the PTX stream "
                 "instead of the SASS join.")
    raise TimingReplayError("\n".join(lines))


def out_of_order(streams: dict):
    """(warp key, earlier generation key, later generation key, item index) of the first warp whose stream issues
    a CTA-barrier arrival of generation g + j before that of generation g (same CTA and barrier), else None."""
    for wk in sorted(streams):
        seen: dict = {}
        for pos, (_, kind, data) in enumerate(streams[wk]):
            for k, d in (data if kind == -1 else ((kind, data),)):
                if k != BAR:
                    continue
                key = d[1]                      # ("bar", cta, barrier id, generation)
                last = seen.get(key[:3])
                if last is not None and key[3] < last[0][3]:
                    return wk, key, last[0], last[1]
                seen[key[:3]] = (key, pos)
    return None


def _name(k) -> str:
    if k and k[0] == "bar":
        return f"CTA {k[1]}'s barrier {k[2]} generation {k[3]}"
    return f"phase {k}"


def _where(info, pc: int) -> str:
    if pc is None or pc < 0:
        return "?"
    sass = getattr(info, "sass", None)
    nsass = getattr(info, "nsass", 0)
    if sass is not None and pc < nsass:
        return f"SASS #{pc} '{sass[pc]}' (PTX line {info.line[pc]})"
    return f"PTX '{info.text[pc]}' (line {info.line[pc]})"
