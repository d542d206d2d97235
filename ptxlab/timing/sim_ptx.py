"""Issue of a PTX stream (the model for kernels without SASS, and the model before issue 21): one warp-instruction
per PTX instruction in program order, register dependences on PTX registers with a latency per instruction class
(params.py), moves and integer widenings free.  The events of each instruction are applied by ``SmSim.apply_events``."""
from __future__ import annotations

from .trace import PLAIN

PIPE_OF = {"fma": "fma", "imad": "fmah", "alu": "alu", "sfu": "sfu", "shfl": "alu", "cvt": "alu", "mem": "lsu",
           "sync": "alu", "branch": "alu"}


def step_ptx(sim, w) -> bool:
    """Issue PTX instructions of ``w`` while it stays the earliest thing to do; True when its stream is done."""
    info, p = sim.info, sim.p
    stream = w.stream
    n = len(stream)
    heap = sim.heap
    cls_of, reads_of, writes_of = info.cls, info.reads, info.writes
    while w.pos < n:
        pc, kind, data = stream[w.pos]
        cls = cls_of[pc]
        t = w.t
        # scoreboard
        tdep = t
        rd = w.ready
        for r in reads_of[pc]:
            x = rd.get(r)
            if x is not None and x > tdep:
                tdep = x
        if tdep > t:
            why = "scoreboard (memory)" if tdep - t > 40 else "scoreboard (alu)"
            w.waits[why] += tdep - t
            t = tdep
        if cls == "free" and kind == PLAIN:
            w.pos += 1
            w.last_pc = pc
            for r in writes_of[pc]:
                rd[r] = t
            continue
        pipe = PIPE_OF.get(cls, "alu")
        s = w.smsp
        u = sim.units[w.sm]
        pf = u.pipes[s]
        if pipe == "fma":
            pipe = "fmah" if pf["fmah"] < pf["fmal"] else "fmal"
        ti = max(t, u.dispatch[s], pf[pipe])
        if ti > t:
            w.waits["issue contention"] += ti - t
        if heap and ti > heap[0][0] + 1e-9:
            w.t = ti
            sim.push(ti, w)
            return False
        u.dispatch[s] = ti + 1.0 / p.issue_per_smsp
        pf[pipe] = ti + sim.cost[pipe]
        u.issue_busy[s] += 1.0 / p.issue_per_smsp
        w.issued += 1
        w.last_pc = pc
        w.pos += 1
        w.t = ti + 1.0
        if w.pos < n and stream[w.pos][0] != pc + 1:
            w.t += 1.0      # a taken branch / reconvergence costs an issue slot
        w.issue_clk += w.t - ti
        ready = ti + sim.lat.get(cls, 4.0)
        items = data if kind == -1 else ((kind, data),)
        ready, blocked = sim.apply_events(w, u, ti, pc, items, ready)
        for r in writes_of[pc]:
            rd[r] = ready
        if blocked:
            return False
    return True

