"""Discrete-event replay of a recorded trace (trace.py) in simulated time.

Model (documented in ptx_docs/timing.md):
* One SM is simulated instruction by instruction: the busiest SM of the launch, which runs ceil(CTAs / SMs) CTAs,
  ``occupancy`` at a time (a finished CTA's slot takes the next one after ``cta_launch_ns``).  The other SMs run the
  same kind of work at the same time, so each GPU-wide resource (DRAM, L2) gives this SM a 1/busy-SMs share of its
  bandwidth ("mean field").  Predicted time = launch overhead + the simulated SM's finish time.
* Warps issue in program order.  Each SM sub-partition (warp slot mod 4) dispatches one instruction per cycle; each
  pipe (fma, alu, sfu, ...) accepts a warp-instruction every 32 / lanes-per-sub-partition cycles.  An instruction
  waits for the registers it reads (scoreboard: results are ready at issue + latency of their class; loads at the
  time the memory system returns them).
* Memory: every global access occupies the SM's L1/LSU for (sectors x 32 B) / L1 bandwidth; its first-touch sectors
  go through this SM's share of DRAM, the rest through its share of L2 (which also counts requests: one per 128-byte
  line an access misses in L1, params.l2_read_req_clk / l2_write_req_clk); the per-SM fill path caps both; data
  returns one latency after its bytes have been served (DRAM: loaded by the DRAM's use so far, ``dram_lat_at``).
  Shared memory: one wavefront per cycle plus latency.
* Synchronisation is causal: a CTA barrier generation releases at the latest arrival of the warps that arrived at it
  in the emulation; an mbarrier phase completes at the latest of the contributions (arrivals, expect_tx, TMA
  complete_tx, tcgen05.commit) the emulator's state machine assigned to it; a successful try_wait/test_wait resumes
  at that completion (plus mbarrier latency), whatever the emulator's order was.
* Asynchronous units are FIFO servers per SM: the TMA unit (issue cost per copy, bytes through DRAM/L2 as above),
  the tensor pipe (tcgen05.mma: 2*M*N*K / rate of its kind, or its SMEM operand bytes / SMEM bandwidth if larger,
  in issue order; tcgen05.commit completes when the pipe has finished the CTA's earlier ops).
* Clusters (trace.cluster = C > 1): C SMs are simulated, one per %cluster_ctarank, each with its own units
  (``SmUnits``: issue, pipes, L1, SMEM, TMA, tensor pipe, fill paths, SM-to-SM port); DRAM / L2 give the group
  C / busy-SMs of their bandwidth.  A cluster takes one slot on each of its SMs and frees them when all its CTAs
  are done.  DSMEM loads wait for the SM-to-SM latency after their bytes passed the requester's SM-to-SM port;
  remote mbarrier arrives add that latency (and an arrive with .release at .cluster scope first holds its warp for
  cluster_release_clk, cluster_release_shared_clk while the SM also runs CTAs of other clusters, and its CTA's release
  path for cluster_release_cta_clk); a barrier.cluster phase completes params.cluster_bar_clk(cluster size, warps
  per CTA, CTAs per SM) after its last arrival (CTAs per SM: of other clusters, live on the SM then; H100 probes);
  a multicast TMA load reads L2/DRAM once and fills every destination SM (completion: the last); a cta_group::2 MMA
  occupies both SMs' tensor pipes for 2*M*N*K / (2 x the per-SM rate), i.e. the time of an M=128 tile on each SM
  (each CTA's tensor core computes its M/2 rows).
"""
from __future__ import annotations

import heapq
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Optional

from .trace import (ASYNC, BAR, CBAR_ARRIVE, CBAR_WAIT, CPA_KEY, DSMEM, GLD, GST, LOCAL, MB_CONTRIB, MB_WAIT, MMA,
                    PLAIN, SMEM, TMEM_LD, ProgramInfo, Trace)

PIPES = ("fmah", "fmal", "alu", "sfu", "lsu", "xu", "uniform", "cbu", "tensor", "free")


@dataclass
class Server:
    """A FIFO resource: serves amounts at ``rate`` per cycle in arrival order; tracks its busy cycles."""
    rate: float
    free: float = 0.0
    busy: float = 0.0
    amount: float = 0.0

    def serve(self, t: float, amount: float, dur: Optional[float] = None) -> tuple:
        """``dur``: the service time when it is not amount / rate (DSMEM narrow requests)."""
        if amount <= 0 or self.rate <= 0:
            return t, t
        start = max(t, self.free)
        dur = amount / self.rate if dur is None else dur
        self.free = start + dur
        self.busy += dur
        self.amount += amount
        return start, self.free


@dataclass
class SharedServer:
    """This SM's share of a GPU-wide resource (DRAM, L2): ``rate`` = bandwidth / busy SMs on average, but the other
    SMs' demand is not synchronised with this one's, so a burst may run ahead of the average by up to ``window``
    cycles of service (credit saved while this SM was idle); beyond that it waits for its share."""
    rate: float
    window: float
    free: float = 0.0
    busy: float = 0.0
    amount: float = 0.0
    slot_rate: float = 0.0          # requests per cycle of this share (0: bytes only; the L2's request rate)

    def serve(self, t: float, amount: float, slots: float = 0.0) -> float:
        """Returns the time the share allows ``amount`` bytes requested at ``t`` to have been served; ``slots``:
        the requests they take (the L2 serves a request per slot whatever its sectors: params.l2_read_req_clk),
        so the service lasts the longer of bytes / rate and slots / slot_rate."""
        if self.slot_rate <= 0:
            slots = 0.0
        if amount <= 0 and slots <= 0:
            return t
        v = max(self.free, t - self.window)
        dur = max(amount / self.rate, slots / self.slot_rate if slots > 0 else 0.0)
        self.free = v + dur
        self.busy += dur
        self.amount += amount
        return max(self.free, t)


class SmUnits:
    """The per-SM resources of one simulated SM."""

    def __init__(self, p):
        self.fill = Server(p.sm_dram_bytes_clk)
        self.tma_fill = Server(p.tma_bytes_clk)
        self.l1 = Server(p.sm_l1_bytes_clk)
        self.smem = Server(p.smem_bytes_clk)
        self.tma = Server(1.0)
        self.tc = Server(1.0)
        self.tmem = Server(p.tmem_ld_bytes_clk or 1e9)
        self.dsmem = Server(p.dsmem_bytes_clk)
        self.shfl = Server(p.shfl_per_clk_sm)   # the SM's shuffle unit (one warp shuffle per clock, H100 probe)
        self.dispatch = [0.0] * p.smsps
        self.pipes = [dict.fromkeys(PIPES, 0.0) for _ in range(p.smsps)]
        self.issue_busy = [0.0] * p.smsps
        self.tma_flight: list = []      # (start, done, bytes) of every TMA / bulk copy: bytes in flight over time


def in_flight(ops: list, span: float) -> tuple:
    """(mean, max) bytes in flight over [0, span] of (start, done, bytes) operations."""
    if not ops or span <= 0:
        return 0.0, 0.0
    mean = sum(b * max(0.0, e - s) for s, e, b in ops) / span
    edges = sorted([(s, b) for s, e, b in ops] + [(e, -b) for s, e, b in ops], key=lambda x: (x[0], x[1]))
    cur = peak = 0.0
    for _, d in edges:
        cur += d
        peak = max(peak, cur)
    return mean, peak


class WarpState:
    __slots__ = ("key", "stream", "pos", "t", "ready", "smsp", "cta", "blocked", "block_t", "block_why", "done",
                 "issued", "waits", "last_pc", "start", "hseq", "block_pc", "sm", "sb", "sb_why", "sbl", "mio",
                 "issue_clk")

    def __init__(self, key, stream, smsp, t, sm=0):
        self.key = key
        self.cta = key[0]
        self.stream = stream
        self.pos = 0
        self.t = t
        self.start = t
        self.ready: dict = {}
        self.smsp = smsp
        self.blocked = None
        self.block_t = 0.0
        self.block_why = ""
        self.done = None
        self.issued = 0
        self.issue_clk = 0.0
        self.waits: dict = defaultdict(float)
        self.last_pc = -2
        self.hseq = -1
        self.sm = sm
        self.sb = [0.0] * 6             # SASS scoreboards: when each clears (sim_sass.py)
        self.sb_why = [None] * 6
        self.sbl = [[] for _ in range(6)]
        self.mio = 0.0


@dataclass
class SimResult:
    cycles: float                       # simulated SM finish time (cycles)
    ctas_on_sm: int
    resources: dict                     # name -> busy cycles on the simulated SM
    amounts: dict                       # name -> bytes / flops / instructions served on the simulated SM
    warps: dict                         # warp index in CTA -> {"issued", "active", waits...}
    events: list                        # timeline events (dicts) of the first CTAs
    cta_spans: list                     # (cta, start, end)
    tma_in_flight: tuple = (0.0, 0.0)   # (mean, max) TMA bytes in flight on the busiest simulated SM
    hot: dict = field(default_factory=dict)   # (instruction index, what it waited for) -> warp-cycles
    stuck: dict = field(default_factory=dict)  # phase key never completed -> [(warp key, instruction index)] waiting
    missing: dict = field(default_factory=dict)   # the same keys -> arrivals recorded but never issued


def _pipe_cost(p, pipe: str) -> float:
    """Cycles a pipe of one sub-partition is busy per warp-instruction: 32 / its lanes.  FP32 lanes are split over
    two pipes (FMA-heavy, which also runs IMAD/IDP, and FMA-lite), as on GH100/GB100 (whitepapers)."""
    lanes = {"fmah": p.fp32_lanes / 2, "fmal": p.fp32_lanes / 2, "alu": p.int_lanes, "sfu": p.sfu_lanes,
             "xu": p.sfu_lanes}
    per_smsp = lanes.get(pipe, 128) / p.smsps
    return max(1.0, 32.0 / per_smsp)


class SmSim:
    def __init__(self, trace: Trace, info: ProgramInfo, p, occupancy: int, busy_sms: int,
                 timeline_ctas: int = 2, max_events: int = 200000):
        self.trace, self.info, self.p = trace, info, p
        self.occ = max(1, occupancy)
        clk = p.clock_ghz * 1e9
        self.nsm = max(1, int(getattr(trace, "cluster", 1) or 1))     # simulated SMs: one per cluster rank
        share = max(1, busy_sms) / self.nsm
        win = p.cycles(p.burst_window_ns)
        self.dram = SharedServer(p.dram_bw / clk / share, win)
        self.l2 = SharedServer(p.l2_bw / clk / share, win, slot_rate=p.l2_read_req_clk / share)
        # a write request takes this many read-request slots (params.l2_write_req_clk)
        self.l2_wr_slots = p.l2_read_req_clk / p.l2_write_req_clk if p.l2_write_req_clk > 0 else 0.0
        self.units = [SmUnits(p) for _ in range(self.nsm)]
        self.sm_of = {c: (trace.cluster_of.get(c, (c, 0))[1] if self.nsm > 1 else 0) for c in trace.ctas}
        self.dsmem_lat = p.dsmem_latency_clk
        # barrier.cluster latency law: a + b x CTAs per cluster + c x warps per CTA (params.cluster_bar_clk)
        nthr = 1
        for d in getattr(trace, "block", (1,)):
            nthr *= int(d)
        self.cbar_warps = -(-nthr // 32)
        self.cbar_lat = p.cluster_bar_clk(self.nsm, self.cbar_warps)
        self.cbar_lat_shared: dict = {}  # CTAs per SM -> the shared-SM law's value (params.cluster_bar_clk)
        self.live_groups = 0            # clusters (slots) live on the simulated SMs now: > 1 = a shared SM
        self.release_path: dict = {}    # CTA -> its .release.cluster path (cluster_release_cta_clk per arrive)
        # loaded, not idle (params.py): flat, or growing with the DRAM's utilisation so far (dram_lat_at)
        self.dram_lat0 = p.cycles(p.dram_latency_ns)
        self.dram_extra = p.dram_loaded_factor - 1.0
        self.dram_by_util = bool(p.dram_loaded_by_util)
        self.l1_lat = p.l1_latency_clk
        self.footprint = getattr(trace, "footprint", None)      # memsys.GridFootprint (predict.py)
        self.l2_lat = p.cycles(p.l2_latency_ns)
        self.tma_lat = p.cycles(p.tma_latency_ns)
        self.lat = {"alu": p.alu_latency_clk, "fma": p.alu_latency_clk, "imad": p.alu_latency_clk,
                    "free": 0.0, "sfu": p.sfu_latency_clk,
                    "shfl": p.shfl_latency_clk, "cvt": p.cvt_latency_clk, "sync": p.alu_latency_clk,
                    "mem": 30.0, "branch": 0.0}
        self.cost = {pipe: _pipe_cost(p, pipe) for pipe in PIPES}
        self.cost["lsu"] = 1.0
        self.cost["free"] = 0.0
        from .sim_ptx import step_ptx
        from .sim_sass import step_sass
        self._step = step_sass if hasattr(info, "nsass") else step_ptx
        self.heap: list = []
        self.seq = 0
        # synchronisation state
        self.c_parts = [c.parts for c in trace.contribs]
        self.c_time = [0.0] * len(trace.contribs)
        self.key_left = {k: len(v) for k, v in trace.phase_contribs.items()}
        self.key_time: dict = {}
        self.key_done: dict = {}
        self.waiters: dict = defaultdict(list)
        self.tc_last: dict = defaultdict(float)
        self.cpa_last: dict = {}                # CTA -> completion time of its latest cp.async (async_op)
        self.tc_lat = 0.0                       # completion latency of the last MMA form seen (params)
        self.timeline_ctas = set(trace.ctas[:max(timeline_ctas, self.nsm)])
        self.events: list = []
        self.max_events = max_events
        self.bar_names: dict = {}
        self.warp_list: list = []               # every WarpState of the run (_warp_summary)
        self.roles: dict = defaultdict(set)     # warp index in CTA -> roles seen (TMA producer, MMA issuer, ...)
        self.hot: dict = defaultdict(float)     # (instruction index, what it waited for) -> cycles (all warps)

    # --- helpers ----------------------------------------------------------------------------------------------------
    def push(self, t, obj):
        self.seq += 1
        if isinstance(obj, WarpState):
            obj.hseq = self.seq     # only the newest heap entry of a warp is live
        heapq.heappush(self.heap, (t, self.seq, obj))

    def ev(self, w: Optional[WarpState], name: str, t0: float, t1: float, cat: str, pc: int = -1, track=None,
           cta=None, args=None):
        c = w.cta if w is not None else cta
        if c not in self.timeline_ctas or len(self.events) >= self.max_events:
            return
        e = {"name": name, "t0": t0, "t1": t1, "cat": cat, "cta": c,
             "track": track if track is not None else f"warp {w.key[1]}"}
        if pc >= 0:
            e["line"] = self.info.line[pc]
            loc = self.info.loc[pc]
            if loc:
                e["src"] = f"{loc[0]}:{loc[1]}"
            e["ptx"] = self.info.text[pc]
            sass = getattr(self.info, "sass", None)
            if sass is not None and sass[pc]:
                e["sass"] = sass[pc]
        if args:
            e.update(args)
        self.events.append(e)

    def track(self, name: str, w) -> str:
        return name if self.nsm == 1 else f"{name} (SM {w.sm if hasattr(w, 'sm') else w})"

    def dram_lat_at(self, t: float) -> float:
        """DRAM load-to-use latency of a read issued at ``t``: the idle latency x (1 + (dram_loaded_factor - 1) x
        u), u = 1 (flat, round 2) or, with ``dram_loaded_by_util``, the utilisation of this SM's DRAM share so far
        (busy / t, at most 1): a read queues behind the other SMs' only while the DRAM is busy (round 3)."""
        u = 1.0
        if self.dram_by_util:
            u = min(1.0, self.dram.busy / t) if t > 0 else 0.0
        return self.dram_lat0 * (1.0 + self.dram_extra * u)

    def mem_load(self, t: float, d, u: SmUnits) -> float:
        """A warp's global load (memsys.GlobalAccess): its sectors pass the SM's L1 / LSU; the L1 misses go to L2
        (this SM's share of L2 bandwidth and its L2 -> SM fill path), the first touches of its CTA with the grid
        footprint's DRAM probability of their access stream to DRAM (memsys.GridFootprint), re-reads with p_own; the
        data returns after the L1 latency (all hits), else the L2 or DRAM latency (DRAM when any sector misses L2,
        in expectation)."""
        sectors, misses, first, stream, lines = d
        _, l1_end = u.l1.serve(t, max(sectors * 32, lines * u.l1.rate / self.p.l1_lines_clk))   # line lookups
        if misses <= 0:
            return l1_end + self.l1_lat
        fp = self.footprint
        p = fp.p_of(stream) if fp is not None else 1.0
        p_own = fp.p_own if fp is not None else 0.0
        dram = first * p + (misses - first) * p_own
        h = misses * 32
        dram_b = dram * 32
        done = l1_end
        if dram_b > 0:
            done = max(done, self.dram.serve(t, dram_b))
        # every L1 miss is an L2 request (hit or not), one per 128-byte line of the access that missed
        done = max(done, self.l2.serve(t, max(0.0, h - dram_b), min(lines, misses)))
        _, fe = u.fill.serve(t, h)
        q = dram / misses
        any_dram = 1.0 - (1.0 - q) ** misses if q < 1.0 else 1.0
        return max(done, fe) + self.l2_lat + (self.dram_lat_at(t) - self.l2_lat) * any_dram

    # --- contributions (barrier generations / mbarrier phases) -------------------------------------------------------
    def contribute(self, cid: int, t: float):
        self.c_parts[cid] -= 1
        if t > self.c_time[cid]:
            self.c_time[cid] = t
        if self.c_parts[cid] > 0:
            return
        key = self.trace.contribs[cid].key
        tc = self.c_time[cid]
        self.key_time[key] = max(self.key_time.get(key, 0.0), tc)
        self.key_left[key] -= 1
        if self.key_left[key] == 0:
            lat = self.p.bar_latency_clk if key[0] == "bar" else \
                self.cbar_latency() if key[0] == "cbar" else \
                self.p.mbar_latency_clk
            done = self.key_time[key] + lat
            self.key_done[key] = done
            for w in self.waiters.pop(key, ()):
                self.wake(w, done)

    def cbar_latency(self) -> float:
        """barrier.cluster phase latency now: the law with the CTAs (cluster slots) live on each simulated SM."""
        n = self.live_groups
        if n <= 1:
            return self.cbar_lat
        if n not in self.cbar_lat_shared:
            self.cbar_lat_shared[n] = self.p.cluster_bar_clk(self.nsm, self.cbar_warps, per_sm=n)
        return self.cbar_lat_shared[n]

    def wake(self, w: WarpState, t: float):
        t = max(t, w.block_t)
        w.waits[w.block_why] += t - w.block_t
        self.ev(w, w.block_why, w.block_t, t, "wait", w.block_pc)
        w.blocked = None
        w.t = t
        self.push(t, w)

    def block(self, w: WarpState, key, why: str, pc: int = -1):
        w.blocked = key
        w.block_pc = pc
        w.block_t = w.t
        w.block_why = why
        self.waiters[key].append(w)

    # --- the main loop ------------------------------------------------------------------------------------------------
    def run(self) -> SimResult:
        p = self.p
        ctas = list(self.trace.ctas)
        by_cta = defaultdict(list)
        for key in sorted(self.trace.streams):
            by_cta[key[0]].append(key)
        groups: dict = {}       # cluster index -> its CTAs (one CTA per group without clusters)
        for c in ctas:
            groups.setdefault(self.trace.cluster_of.get(c, (c, 0))[0] if self.nsm > 1 else c, []).append(c)
        pending = list(groups.values())
        group_left: dict = {}
        group_of: dict = {}
        live: dict = {}
        spans = []
        cta_start: dict = {}
        launch = p.cycles(p.cta_launch_ns)
        slot_of: dict = {}
        free_slots = list(range(self.occ))

        def start_cta(t):
            grp = pending.pop(0)
            slot = free_slots.pop(0)
            gid = id(grp)
            group_left[gid] = len(grp)
            self.live_groups += 1
            for c in grp:
                slot_of[c] = slot
                group_of[c] = grp
                keys = by_cta[c]
                live[c] = len(keys)
                cta_start[c] = t
                for k in keys:
                    w = WarpState(k, self.trace.streams[k], (slot * len(keys) + k[1]) % p.smsps, t, self.sm_of[c])
                    self.warp_list.append(w)
                    self.push(t, w)
            for c in grp:
                if not by_cta[c]:
                    live[c] = 0
                    finish_cta(c, t)

        def finish_cta(c, t):
            spans.append((c, cta_start[c], t))
            grp = group_of[c]
            group_left[id(grp)] -= 1
            if group_left[id(grp)]:
                return          # a cluster's slots free when all its CTAs are done
            self.live_groups -= 1
            free_slots.append(slot_of[c])
            if pending:
                start_cta(t + launch)

        # the first wave reaches the SM one CTA at a time (params.cta_stagger x the CTA launch cost apart): CTAs do
        # not run in lockstep, so one CTA's DRAM wait overlaps the others' work (round 3)
        t0 = launch
        for k in range(min(self.occ, len(pending))):
            start_cta(t0 + k * p.cta_stagger * launch)
        end = 0.0
        while self.heap:
            t, sq, obj = heapq.heappop(self.heap)
            if isinstance(obj, tuple):          # timed contribution from an async op
                self.contribute(obj[1], t)
                continue
            w = obj
            if w.blocked is not None or sq != w.hseq:
                continue
            if w.t < t:
                w.t = t
            fin = self.step(w)
            if fin:
                w.done = w.t
                end = max(end, w.t)
                live[w.cta] -= 1
                if live[w.cta] == 0:
                    finish_cta(w.cta, w.t)
        stuck = [k for k, ws in self.waiters.items() if ws]
        stuck_at = {k: [(w.key, w.block_pc) for w in self.waiters[k]] for k in stuck}
        missing = {k: sum(self.c_parts[c] for c in self.trace.phase_contribs.get(k, ())) for k in stuck}
        if stuck:
            # a wait whose phase never completed in simulated time (a contribution the recorder could not see):
            # release at the end and report it
            for k in stuck:
                for w in self.waiters.pop(k):
                    w.waits["unresolved wait"] += end - w.block_t
                    w.done = end
        us = self.units
        n = float(self.nsm)
        res = {"dram": self.dram.busy, "l2": self.l2.busy,
               "fill": max(max(u.fill.busy, u.tma_fill.busy) for u in us),
               "l1": max(u.l1.busy for u in us), "smem": max(u.smem.busy for u in us),
               "tma": max(u.tma.busy for u in us), "tensor": max(u.tc.busy for u in us),
               "tmem": max(u.tmem.busy for u in us), "issue": max(max(u.issue_busy) for u in us)}
        if self.nsm > 1:
            res["dsmem"] = max(u.dsmem.busy for u in us)
        # amounts per SM (the mean over the simulated SMs): predict._achieved scales them by the busy SMs
        amounts = {"dram_bytes": self.dram.amount / n, "l2_bytes": self.l2.amount / n,
                   "smem_bytes": sum(u.smem.amount for u in us) / n,
                   "tensor_flops": sum(u.tc.amount for u in us) / n, "tma_ops": sum(u.tma.amount for u in us) / n,
                   "instructions": sum(sum(u.issue_busy) for u in us) / n,
                   "dsmem_bytes": sum(u.dsmem.amount for u in us) / n}
        flight = max((in_flight(u.tma_flight, end) for u in us), default=(0.0, 0.0))
        return SimResult(cycles=end, ctas_on_sm=len(ctas), resources=res, amounts=amounts,
                         warps=self._warp_summary(), events=self.events, cta_spans=spans, tma_in_flight=flight,
                         hot=dict(self.hot), stuck=stuck_at, missing=missing)

    def _warp_summary(self) -> dict:
        """Per warp index in the CTA, the mean over the simulated warps of that index: instructions issued, cycles
        spent issuing (issue_clk), its waits by cause and its life (span_clk = start to exit).  Every cycle of a warp's
        life is either an issue cycle or counted in exactly one wait, so issue_clk + sum(waits) = span_clk."""
        by: dict = defaultdict(list)
        for w in self.warp_list:
            by[w.key[1]].append(w)
        out = {}
        for wi, ws in sorted(by.items()):
            n = float(len(ws))
            waits: dict = defaultdict(float)
            for w in ws:
                for k, v in w.waits.items():
                    waits[k] += v / n
            out[wi] = {"issued": sum(w.issued for w in ws) / n, "warps": len(ws),
                       "issue_clk": sum(w.issue_clk for w in ws) / n,
                       "span_clk": sum((w.done if w.done is not None else w.t) - w.start for w in ws) / n,
                       "role": ", ".join(sorted(self.roles.get(wi, ()))), "waits": dict(waits)}
        return out

    def apply_events(self, w: WarpState, u: SmUnits, ti: float, pc: int, items, ready: float,
                     width: int = 0) -> tuple:
        """Apply the recorded events of one issued instruction (memory, barriers, mbarriers, async copies, MMAs);
        returns (time its result is ready, whether the warp blocked).  ``width``: bytes per lane of the SASS access
        (0 for PTX), which picks the wavefronts of a shared-memory access ptxas widened (trace.SmemAccess)."""
        p = self.p
        blocked = False
        for k, d in items:
            if k == PLAIN:
                continue
            if k == GLD:
                ready = self.mem_load(ti, d, u)
            elif k == GST:
                # stores go to L2 (write-back); the share of them that reaches DRAM during the kernel: the grid's
                # written bytes beyond what L2 keeps dirty (memsys.GridFootprint.p_write)
                l1_start, _ = u.l1.serve(ti, max(d[0] * 32, d[1] * u.l1.rate / p.l1_lines_clk))
                pw = self.footprint.p_write if self.footprint is not None else 1.0
                if pw > 0:
                    self.dram.serve(ti, d[0] * 32 * pw)
                # every store is an L2 write request per 128-byte line (params.l2_write_req_clk)
                self.l2.serve(ti, d[0] * 32 * (1 - pw), d[1] * self.l2_wr_slots)
                fill_start, _ = u.fill.serve(ti, d[0] * 32)
                # nothing waits for a store's result, but the LSU takes it in order: the warp issues on once the
                # L1 and the SM's path to L2 have started serving it (back-pressure; else the queue outlives the
                # kernel)
                accepted = max(l1_start, fill_start)
                if accepted > w.t:
                    w.waits["store throttle (L1 / path to L2)"] += accepted - w.t
                    self.ev(w, "store throttle", w.t, accepted, "wait", pc)
                    w.t = accepted
            elif k == SMEM:
                _, e = u.smem.serve(ti, d.at_width(width) * 128 if hasattr(d, "at_width") else d * 128)
                ready = e + p.smem_latency_clk
            elif k == LOCAL:
                ready = ti + 30.0
            elif k == TMEM_LD:
                self.roles[w.key[1]].add("epilogue")
                _, e = u.tmem.serve(ti, d)
                ready = e + p.tmem_ld_latency_clk
                self.ev(w, "tcgen05.ld", ti, ready, "tmem", pc)
            elif k == MMA:
                self.roles[w.key[1]].add("MMA issuer")
                self.mma(w, ti, d, pc)
            elif k == ASYNC:
                kind_a = self.trace.asyncs[d].kind
                self.roles[w.key[1]].add("TMA producer" if kind_a in ("tma", "bulk") else
                                "TMA store" if kind_a in ("tma_store", "bulk_store") else
                                "MMA issuer" if kind_a == "commit" else kind_a)
                self.async_op(w, ti, d, pc)
            elif k == BAR:
                cid, key, wait = d
                self.contribute(cid, ti)
                if wait:
                    done = self.key_done.get(key)
                    if done is None:
                        self.block(w, key, f"bar.sync {key[2]}", pc)
                        blocked = True
                    elif done > w.t:
                        w.waits[f"bar.sync {key[2]}"] += done - w.t
                        self.ev(w, f"bar.sync {key[2]}", w.t, done, "wait", pc)
                        w.t = done
            elif k == MB_CONTRIB:
                cb = self.trace.contribs[d]
                if cb.release_cluster and self.nsm > 1:
                    # .release at .cluster scope: the warp waits until its earlier memory operations are
                    # visible cluster-wide (cluster_release_clk, ptx_docs/timing.md "Clusters")
                    # (longer while the SM also runs other clusters' CTAs: the H100 load probes) ...
                    hold = p.cluster_release_shared_clk if self.live_groups > 1 else p.cluster_release_clk
                    # ... and the CTA's release path serves one such arrive per cluster_release_cta_clk
                    path = self.release_path.setdefault(w.cta, Server(1.0))
                    _, rel_path = path.serve(ti, p.cluster_release_cta_clk)
                    rel = max(ti + hold, rel_path)
                    w.waits["release.cluster"] += max(0.0, rel - w.t)
                    self.ev(w, "release.cluster", ti, rel, "wait", pc)
                    w.t = max(w.t, rel)
                    self.contribute(d, rel + (self.dsmem_lat if cb.remote else 0.0))
                else:
                    self.contribute(d, ti + p.mbar_arrive_clk + (self.dsmem_lat if cb.remote else 0.0))
            elif k == DSMEM:
                self.roles[w.key[1]].add("DSMEM")
                # port time: accesses of <= 4 B per thread at the narrow rate (H100 probes), others at the
                # 16-B rate (dsmem_bytes_clk)
                _, e = u.dsmem.serve(ti, d[0], (d[0] - d[2]) / p.dsmem_bytes_clk + d[2] / p.dsmem_narrow_bytes_clk)
                if not d[1]:
                    ready = e + self.dsmem_lat
                self.ev(w, "DSMEM " + ("store" if d[1] else "load") + f" {d[0]} B", ti, e if d[1] else ready,
                        "dsmem", pc)
            elif k == CBAR_ARRIVE:
                self.contribute(d, ti)
            elif k == CBAR_WAIT:
                if d not in self.key_left:
                    continue
                done = self.key_done.get(d)
                if done is None:
                    self.block(w, d, "barrier.cluster wait", pc)
                    blocked = True
                elif done > w.t:
                    w.waits["barrier.cluster wait"] += done - w.t
                    self.ev(w, "barrier.cluster wait", w.t, done, "wait", pc)
                    w.t = done
            elif k == MB_WAIT:
                cpa = d[:1] == CPA_KEY or (d[:1] == ("clone",) and d[2][:1] == CPA_KEY)
                why = "cp.async wait" if cpa else self.bar_name(d[0], pc)
                if d not in self.key_left:
                    continue
                done = self.key_done.get(d)
                if done is None:
                    self.block(w, d, why, pc)
                    blocked = True
                elif done > w.t:
                    w.waits[why] += done - w.t
                    self.ev(w, why, w.t, done, "wait", pc)
                    w.t = done
        return ready, blocked

    def step(self, w: WarpState) -> bool:
        """Issue instructions of ``w`` while it stays the earliest thing to do; True when its stream is done (SASS
        streams: sim_sass.py, PTX streams: sim_ptx.py)."""
        return self._step(self, w)

    def bar_name(self, bar_id, pc) -> str:
        name = self.bar_names.get(bar_id)
        if name is None:
            addr = self.trace.bar_addr.get(bar_id)
            name = f"mbarrier 0x{addr:x} wait" if addr is not None else f"mbarrier wait (PTX line {self.info.line[pc]})"
            self.bar_names[bar_id] = name
        return name

    def mma(self, w, ti, d, pc):
        kind, M, N, K = d[:4]
        pair = len(d) > 4 and d[4] == 2 and self.nsm > 1
        p = self.p
        if kind == "cp":
            nbytes = M              # bytes of the copy (trace.tcgen05_cp_bytes)
            dur = nbytes / p.smem_bytes_clk
            flops = 0
        else:
            flops = 2.0 * M * N * K
            rate = p.tc_flops_clk.get(kind) or p.tc_flops_clk.get("f16", 4096.0)
            bits = 4 if kind in ("mxf4nvf4", "mxf4") else 8 if kind in ("mxf8f6f4", "f8f6f4", "i8") else 16
            smem_bytes = (M + N) * K * bits / 8
            cg = d[4] if len(d) > 4 else 1
            # the initiation interval of this shape over the peak (small N / M = 64 run below peak: the
            # SemiAnalysis tcgen05.mma fits, params.tc_ii_clk), kind-independent in cycles at the kind's native K
            ii = p.tc_ii(cg, M, N)
            ratio = ii / (2.0 * M * N * 16 / (8192.0 * cg)) if ii else 1.0
            dur = max(flops / rate * ratio, smem_bytes / p.smem_bytes_clk)
        sms = [w.sm]
        ctas = [w.cta]
        if kind != "cp":
            self.tc_lat = p.tc_latency_clk.get(("TS" if len(d) > 5 and d[5] else "SS") + str(d[4] if len(d) > 4
                                                                                            else 1), 0.0)
        if pair or (len(d) > 4 and d[4] == 2):
            # .cta_group::2: one MMA over the CTA pair; each CTA's tensor core computes its M/2 rows from its own
            # SMEM (PTX ISA 9.7.16.10.5 Layout A: a 4x1 data path in each CTA), so both pipes are busy for the
            # time of an (M/2)xNxK tile at the per-SM rate (ptx_docs/timing.md "Clusters")
            if kind != "cp":    # tcgen05.cp.cta_group::2: both CTAs copy their own bytes (the same time each)
                dur = dur / 2.0
            if pair:
                peer = self._pair_peer(w.cta)
                if peer is not None:
                    sms.append(self.sm_of[peer])
                    ctas.append(peer)
        units = [self.units[i] for i in sms]
        start = max([ti] + [u.tc.free for u in units])
        for u in units:
            u.tc.free = start + dur
            u.tc.busy += dur
            u.tc.amount += flops / len(units)
        for c in ctas:
            self.tc_last[c] = start + dur
        label = f"tcgen05.cp {M} B" if kind == "cp" else f"tcgen05.mma {kind} {M}x{N}x{K}" + \
            (" (cta_group::2)" if len(d) > 4 and d[4] == 2 else "")
        for i in sms:
            self.ev(w, label, start, start + dur, "tensor", pc, track=self.track("tensor pipe", i))

    def _pair_peer(self, cta: int):
        """The global CTA of ``cta``'s pair peer (%cluster_ctarank ^ 1, PTX ISA 9.7.16.5.1), if simulated."""
        if not hasattr(self, "_by_rank"):
            self._by_rank = {self.trace.cluster_of.get(c, (c, 0)): c for c in self.sm_of}
        k, r = self.trace.cluster_of.get(cta, (None, 0))
        return self._by_rank.get((k, r ^ 1))

    def async_op(self, w, ti, aid, pc):
        a = self.trace.asyncs[aid]
        p = self.p
        u = self.units[w.sm]
        if a.kind == "commit":
            # completes when the CTA's last MMA has left the pipe plus the fixed MMA completion latency (the
            # SemiAnalysis fits: latency = initiation interval + b, params.tc_latency_clk)
            done = max(ti, self.tc_last[w.cta] + self.tc_lat) + 1.0
            self.ev(w, "tcgen05.commit", ti, done, "tensor", pc, track=self.track("tensor pipe", w))
        elif a.kind in ("tma", "bulk", "cp_async"):
            start, e = u.tma.serve(ti, p.tma_issue_clk)
            done = e
            fp = self.footprint
            pa = fp.p_of(a.stream) if fp is not None else 1.0
            own = fp.p_own if fp is not None else 0.0
            dram_b = 32.0 * (a.first * pa + (a.sectors - a.first) * own)
            l2_b = 32.0 * a.sectors - dram_b
            if dram_b > 0:
                done = max(done, self.dram.serve(e, dram_b) + self.dram_lat_at(e))
            if l2_b > 0:
                done = max(done, self.l2.serve(e, l2_b) + self.l2_lat)
            # multicast (.multicast::cluster): one L2/DRAM read, the bytes land in every destination SM's SMEM
            dst = [self.units[self.sm_of[c]] for c in a.dst_ctas if c in self.sm_of] if a.dst_ctas else [u]
            nb = 32 * a.sectors
            fe = max(d.tma_fill.serve(e, nb)[1] for d in (dst or [u]))
            done = max(done, fe + (self.dram_lat_at(e) if dram_b >= 0.5 * nb else self.l2_lat)) + self.tma_lat
            mc = f" multicast x{len(a.dst_ctas)}" if a.dst_ctas else ""
            if a.kind == "cp_async":
                self.cpa_last[w.cta] = max(self.cpa_last.get(w.cta, 0.0), done)
            u.tma_flight.append((start, done, nb))
            self.ev(w, f"TMA load {nb} B{mc}", start, done, "tma", pc,
                    track=self.track("TMA unit", w), args={"bytes": nb})
        elif a.kind == "bulk_dsmem":
            # cp.async.bulk.shared::cluster.shared::cta: SMEM -> a peer's SMEM through the SM-to-SM network
            nbytes = a.nbytes
            start, e = u.tma.serve(ti, p.tma_issue_clk)
            _, de = u.dsmem.serve(e, nbytes)
            done = de + self.dsmem_lat + self.tma_lat
            u.tma_flight.append((start, done, nbytes))
            self.ev(w, f"bulk copy to peer SMEM {nbytes} B", start, done, "dsmem", pc,
                    track=self.track("TMA unit", w), args={"bytes": nbytes})
        elif a.kind in ("tma_store", "bulk_store"):
            start, e = u.tma.serve(ti, p.tma_issue_clk)
            pw = self.footprint.p_write if self.footprint is not None else 1.0
            de = self.dram.serve(e, a.dram_bytes * pw)
            if pw < 1:
                de = max(de, self.l2.serve(e, a.dram_bytes * (1 - pw)))
            u.fill.serve(e, a.dram_bytes)
            done = de + self.tma_lat
            u.tma_flight.append((start, done, a.dram_bytes))
            self.ev(w, f"TMA store {a.dram_bytes} B", start, done, "tma", pc, track=self.track("TMA unit", w))
        elif a.kind == "cp_async_arrive":
            # cp.async.mbarrier.arrive (PTX ISA 9.7.9.25.3.4): the arrive-on follows the thread's prior cp.async; the
            # op is recorded once per instruction, so it waits for the CTA's cp.async issued so far
            done = max(ti, self.cpa_last.get(w.cta, 0.0)) + 1.0
        else:
            done = ti + self.dram_lat_at(ti)
        for cid in a.contribs:
            self.push(done, ("contrib", cid))



def occupancy(p, threads: int, regs: int, smem: int, tmem_cols: int = 0) -> dict:
    """CTAs per SM and what limits them (CUDA occupancy rules; TMEM columns: 512 per SM)."""
    warps = -(-threads // 32)
    lim = {"threads": p.max_threads_sm // max(32, warps * 32), "ctas": p.max_ctas_sm}
    if regs:
        per_warp = -(-regs * 32 // 256) * 256
        lim["registers"] = p.regs_sm // max(1, per_warp * warps)
    lim["shared memory"] = (p.smem_sm // (smem + p.smem_per_cta_reserved)) if smem else p.max_ctas_sm
    if tmem_cols:
        lim["TMEM columns"] = p.tmem_cols // tmem_cols
    n = max(1, min(lim.values()))
    by = min(lim, key=lambda k: lim[k])
    return {"ctas_per_sm": n, "limited_by": by, "limits": lim}


def cta_ids_for_sm(total: int, sms: int, sm: int = 0) -> list:
    """The CTAs the block scheduler gives SM ``sm`` when all SMs progress alike (round robin)."""
    return list(range(sm, total, sms))


def waves(total: int, sms: int, occ: int) -> float:
    return total / float(sms * occ)


__all__ = ["SmSim", "SimResult", "occupancy", "cta_ids_for_sm", "waves", "math"]
