"""Issue of a SASS stream (sass_join.py): the warp does what ptxas scheduled.

Per warp, in stream order (in-order issue):

* **stall count**: after an instruction issues, the warp's next one waits ``max(1, stall)`` cycles (the control
  code; ptxas sets it from the fixed latencies of the dependences it scheduled, so no ALU latency table is needed);
* **scoreboards**: an instruction waits until every scoreboard in its wait mask is clear: a scoreboard is clear when
  every instruction that set it (write barrier: its result is written; read barrier: its sources are read) has
  completed.  ``DEPBAR.LE SBk, N`` waits until at most N of SBk's operations are outstanding.  Completion of a
  variable-latency instruction: the memory system's answer for recorded memory events (sim.py), else
  ``GpuParams.var_latency_clk`` by kind (sass_ops.py); shared-memory / MIO results of one warp complete in order
  (ptxas relies on it: only the last ``LDS`` of a run sets a scoreboard);
* **issue slot and pipe**: one instruction per cycle per SM sub-partition (shared by its warps) and the pipe's
  throughput (sim._pipe_cost);
* PTX items (an event without SASS counterpart, sass_join.py) issue as one instruction with no scoreboard.

For speed a warp keeps issuing while it is less than ``QUANTUM`` (16) cycles ahead of the earliest other pending
event, so shared units (memory, shuffle, dispatch of other warps) may see requests up to that much out of time order.

Waits are attributed to what the warp waited for ("stall (fixed latency)", "scoreboard (global memory)", ...), so
each warp's issue cycles plus its waits are its life (sim._warp_summary).
"""
from __future__ import annotations

from .trace import GLD, LOCAL, PLAIN, SMEM

_IN_ORDER = ("smem", "shfl", "ldc")
# a warp keeps issuing while it is at most QUANTUM cycles ahead of the earliest other event (fewer heap round trips;
# shared resources see requests out of time order by at most this much)
QUANTUM = 16.0
_SB_WHY = {"gmem": "scoreboard (global memory)", "smem": "scoreboard (shared memory)", "mufu": "scoreboard (SFU)",
           "cvt": "scoreboard (conversion)", "shfl": "scoreboard (shuffle)", "other": "scoreboard (other)"}


def step_sass(sim, w) -> bool:
    """Issue instructions of ``w`` while it stays the earliest thing to do; True when its stream is done."""
    p = sim.p
    stream = w.stream
    n = len(stream)
    heap = sim.heap
    specs = sim.info.specs
    wwaits = w.waits
    sb, sb_why, sbl = w.sb, w.sb_why, w.sbl
    u = sim.units[w.sm]
    s = w.smsp
    pf = u.pipes[s]
    dispatch = u.dispatch
    cost = sim.cost
    hot = sim.hot
    slot = 1.0 / p.issue_per_smsp
    read_clk = p.operand_read_clk
    while w.pos < n:
        idx, kind, data = stream[w.pos]
        stall, wbar, rbar, waits, pipe, vlat, vkey, width, depbar = specs[idx]
        t = w.t
        if waits:
            tdep, why = t, None
            for k in waits:
                if sb[k] > tdep:
                    tdep, why = sb[k], sb_why[k]
            if tdep > t:
                lab = _SB_WHY[why]
                wwaits[lab] += tdep - t
                hot[(idx, lab)] += tdep - t
                t = tdep
        if depbar is not None:
            k, keep = depbar
            outs = sorted(x for x in sbl[k] if x > t)
            if len(outs) > keep:
                tdep = outs[len(outs) - keep - 1]
                lab = _SB_WHY[sb_why[k] or "other"]
                wwaits[lab] += tdep - t
                hot[(idx, lab)] += tdep - t
                t = tdep
        if pipe == "fma":
            pipe = "fmah" if pf["fmah"] <= pf["fmal"] else "fmal"
        ti = dispatch[s]
        if pf[pipe] > ti:
            ti = pf[pipe]
        if t > ti:
            ti = t
        elif ti > t:
            wwaits["issue contention"] += ti - t
        if heap and ti > heap[0][0] + QUANTUM:
            w.t = ti
            sim.push(ti, w)
            return False
        dispatch[s] = ti + slot
        pf[pipe] = ti + cost[pipe]
        u.issue_busy[s] += slot
        w.issued += 1
        w.issue_clk += 1.0
        w.pos += 1
        w.t = ti + 1.0
        ready = ti + vlat
        blocked = False
        if kind != PLAIN:
            items = data if kind == -1 else ((kind, data),)
            ready, blocked = sim.apply_events(w, u, ti, idx, items, ready, width)
            for k2, _ in items:
                if k2 in (GLD, LOCAL):
                    vkey = "gmem"
                elif k2 == SMEM:
                    vkey = "smem"
        if vkey == "shfl":                        # one shuffle unit per SM (params.shfl_per_clk_sm)
            st, _ = u.shfl.serve(ti, 1.0)
            ready = st + vlat
        if vkey in _IN_ORDER:                     # MIO results of one warp complete in order
            if ready < w.mio:
                ready = w.mio
            w.mio = ready
        if wbar != 7:
            if ready > sb[wbar]:
                sb[wbar] = ready
                sb_why[wbar] = vkey if vkey in _SB_WHY else "other"
            lst = sbl[wbar]
            lst.append(ready)
            if len(lst) > 64:
                sbl[wbar] = [x for x in lst if x > ti]
        if rbar != 7:
            r = ti + read_clk
            if r > sb[rbar]:
                sb[rbar] = r
                sb_why[rbar] = "other"
            sbl[rbar].append(r)
        if stall > 1 and not blocked:
            nxt = ti + stall
            if nxt > w.t:
                wwaits["stall (fixed latency)"] += nxt - w.t
                w.t = nxt
        if blocked:
            return False
    return True
