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

Waits are attributed to what the warp waited for ("stall (fixed latency)", "scoreboard (global memory)", ...), so
each warp's issue cycles plus its waits are its life (sim._warp_summary).
"""
from __future__ import annotations

from collections import defaultdict

from .trace import GLD, LOCAL, PLAIN, SMEM

_SB_WHY = {"gmem": "scoreboard (global memory)", "smem": "scoreboard (shared memory)", "mufu": "scoreboard (SFU)",
           "cvt": "scoreboard (conversion)", "shfl": "scoreboard (shuffle)", "other": "scoreboard (other)"}


def _summary(sim, w) -> dict:
    summ = sim._summary
    ws = summ.get(w.key[1])
    if ws is None:
        ws = summ[w.key[1]] = {"issued": 0, "issue_clk": 0.0, "span_clk": 0.0, "waits": defaultdict(float),
                               "warps": set(), "roles": set()}
    ws["warps"].add(w.key)
    return ws


def step_sass(sim, w) -> bool:
    """Issue instructions of ``w`` while it stays the earliest thing to do; True when its stream is done."""
    info, p = sim.info, sim.p
    stream = w.stream
    n = len(stream)
    heap = sim.heap
    nsass = info.nsass
    stall_of, wbar_of, rbar_of, wait_of = info.stall, info.wbar, info.rbar, info.wait
    pipe_of, vlat_of, vkey_of, width_of, depbar_of = info.pipe, info.vlat, info.vkey, info.width, info.depbar
    ws = _summary(sim, w)
    wwaits, swaits = w.waits, ws["waits"]
    sb = w.sb
    u = sim.units[w.sm]
    s = w.smsp
    pf = u.pipes[s]
    cost = sim.cost
    hot = sim.hot
    while w.pos < n:
        idx, kind, data = stream[w.pos]
        t = w.t
        m = wait_of[idx]
        if m:
            tdep, why = t, None
            for k in range(6):
                if m >> k & 1 and sb[k] > tdep:
                    tdep, why = sb[k], w.sb_why[k]
            if tdep > t:
                lab = _SB_WHY[why]
                wwaits[lab] += tdep - t
                swaits[lab] += tdep - t
                hot[(idx, lab)] += tdep - t
                t = tdep
        db = depbar_of[idx]
        if db is not None:
            k, keep = db
            outs = sorted(x for x in w.sbl[k] if x > t)
            if len(outs) > keep:
                tdep = outs[len(outs) - keep - 1]
                lab = _SB_WHY[w.sb_why[k] or "other"]
                wwaits[lab] += tdep - t
                swaits[lab] += tdep - t
                t = tdep
        pipe = pipe_of[idx]
        if pipe == "fma":
            pipe = "fmah" if pf["fmah"] <= pf["fmal"] else "fmal"
        ti = max(t, u.dispatch[s], pf[pipe])
        if ti > t:
            wwaits["issue contention"] += ti - t
            swaits["issue contention"] += ti - t
        if heap and ti > heap[0][0] + 1e-9:
            w.t = ti
            sim.push(ti, w)
            return False
        u.dispatch[s] = ti + 1.0 / p.issue_per_smsp
        pf[pipe] = ti + cost[pipe]
        u.issue_busy[s] += 1.0 / p.issue_per_smsp
        w.issued += 1
        ws["issued"] += 1
        ws["issue_clk"] += 1.0
        w.last_pc = idx
        w.pos += 1
        stall = stall_of[idx]
        w.t = ti + 1.0
        ready = ti + vlat_of[idx]
        vkey = vkey_of[idx]
        blocked = False
        if kind != PLAIN:
            items = data if kind == -1 else ((kind, data),)
            ready, blocked = sim.apply_events(w, ws, u, ti, idx, items, ready, width_of[idx])
            for k2, _ in items:
                if k2 in (GLD, LOCAL):
                    vkey = "gmem"
                elif k2 == SMEM:
                    vkey = "smem"
        if vkey in ("smem", "shfl", "ldc"):          # MIO results of one warp complete in order
            if ready < w.mio:
                ready = w.mio
            w.mio = ready
        if idx < nsass:
            k = wbar_of[idx]
            if k != 7:
                if ready > sb[k]:
                    sb[k] = ready
                    w.sb_why[k] = vkey if vkey in _SB_WHY else "other"
                w.sbl[k].append(ready)
                if len(w.sbl[k]) > 64:
                    w.sbl[k] = [x for x in w.sbl[k] if x > ti]
            k = rbar_of[idx]
            if k != 7:
                r = ti + p.operand_read_clk
                if r > sb[k]:
                    sb[k] = r
                    w.sb_why[k] = "other"
                w.sbl[k].append(r)
            if stall > 1 and not blocked:
                nxt = ti + stall
                if nxt > w.t:
                    wwaits["stall (fixed latency)"] += nxt - w.t
                    swaits["stall (fixed latency)"] += nxt - w.t
                    w.t = nxt
        if blocked:
            return False
    return True
