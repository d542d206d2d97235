"""A timed emulator launch: emulate (a representative sample of) the CTAs while recording, then simulate.

Sampling ("timing-only mode", the default for grids larger than the GPU's SM count): only the CTAs that the
busiest SM runs (CTA ids sm0, sm0 + SMs, sm0 + 2 SMs, ..., i.e. ceil(CTAs / SMs) of them) are emulated and
recorded; the other SMs are assumed to run the same kind of work at the same time (their DRAM/L2 traffic is the
mean-field share in sim.py).  The results of the CTAs not emulated are NOT computed: their outputs keep whatever
the buffers held.  ``sample="all"`` emulates every CTA (correct results; only the busiest SM's CTAs are simulated).
The prediction reports which mode ran (``Timing.sampled``).

Clusters (launch ``cluster=``): a cluster's C CTAs are co-resident on C SMs, so the sample is whole clusters: the
clusters the busiest group of C SMs runs (cluster ids k0, k0 + G, k0 + 2G, ... with G = SMs // C cluster slots) are
emulated and simulated on C SMs, one per %cluster_ctarank (sim.py; ptx_docs/timing.md "Clusters").
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional

from ..emu.engine import machine
from ..emu.engine import native as native_engine
from ..emu.checks.sitewarn import EmuWarning, emu_warn
from . import params as _params
from .sim import SmSim, cta_ids_for_sm, occupancy
from .replay_check import check_replay
from . import cluster_trace, memsys
from .native_record import recording_scheduler
from .trace import ProgramInfo, Recorder, TimedWave, Trace, clone_cta, instrument


HISTORY: list = []   # every prediction of this process (lab.py time collects a stage's / script's launches)


class TimingSampleWarning(EmuWarning):
    """A timed launch emulated only a sample of its CTAs: the other CTAs' outputs were not computed."""


def warn_sample(dev, kernel: str, ran: int, total: int, stacklevel: int = 6) -> None:
    """Once per device and kernel: say that a timing-only sample left the other CTAs' outputs uncomputed and how to
    get a full run (recorded in ``dev.emu_warnings`` too, like the emulator's EmuWarnings: sitewarn.emu_warn)."""
    msg = (f"timing-only sample: {kernel} emulated {ran} of {total} CTAs (those of the busiest SM, enough to predict "
           f"its time); the outputs of the other {total - ran} CTAs are NOT computed (their buffers keep what they "
           "held). For a full run: open_device('emu', timing=..., timing_sample='all') or PTXLAB_TIMING_SAMPLE=all")
    emu_warn(msg, dev, key=("timing sample", kernel), category=TimingSampleWarning, stacklevel=stacklevel + 1)


@dataclass
class Timing:
    """The prediction of one launch (``dev.last_timing``)."""
    gpu: str
    kernel: str
    us: float                     # predicted kernel time, microseconds (CUDA-event view: launch overhead included)
    sim_us: float                 # the simulated SM's busy span
    launch_us: float
    bound: str
    utilization: dict             # resource -> fraction of the kernel time it is busy on the simulated SM
    achieved: dict                # resource -> (achieved, peak, unit) GPU-wide
    occupancy: dict
    grid: tuple
    block: tuple
    ctas: int
    ctas_per_sm: int
    busy_sms: int
    waves: float
    sampled: str                  # what was emulated
    warps: dict                   # warp index in CTA -> issued / waits
    events: list = field(repr=False, default_factory=list)
    cta_spans: list = field(repr=False, default_factory=list)
    clock_ghz: float = 1.0
    emu_seconds: float = 0.0
    sim_seconds: float = 0.0
    registers: int = 0
    smem_bytes: int = 0
    tmem_cols: int = 0
    amounts: dict = field(repr=False, default_factory=dict)   # GPU-wide bytes / FLOP / instructions (all busy SMs)
    issue: str = ""               # what the warps issue: SASS (arch, join coverage) or PTX (and why)
    hot: list = field(repr=False, default_factory=list)   # top waits by instruction (_hot)
    join: str = ""                # PTX-SASS join statistics (sass_join.JoinStats.line)
    footprint: str = ""           # how DRAM vs L2 was decided (memsys.GridFootprint.note)
    _replay: tuple = field(repr=False, default=(), compare=False)

    def __str__(self) -> str:
        return (f"{self.kernel} on {self.gpu}: {self.us:.2f} us predicted (bound: {self.bound}; "
                f"{self.ctas} CTAs, {self.ctas_per_sm}/SM, {self.waves:.2f} waves; {self.sampled})")


def timed_launch(dev, module, prog, grid, block, params: bytes, dyn_smem: int, gpu: Any = "b200",
                 sample: Optional[str] = None, budget: Optional[int] = None, cluster=None) -> Timing:
    p = _params.get(gpu)
    grid, block = tuple(grid), tuple(block)
    total = grid[0] * grid[1] * grid[2]
    threads = block[0] * block[1] * block[2]
    regs = 0
    try:
        rs = getattr(module, "resources", None)
        rs = rs() if callable(rs) else rs
        res = rs.get(prog.kernel) if rs else None
        regs = int(res.registers) if res is not None else 0
    except Exception:   # PTX given as text: no ptxas log
        regs = 0
    smem = prog.static_smem + dyn_smem if not prog.has_dynamic_smem else prog.dyn_base + dyn_smem
    occ0 = occupancy(p, threads, regs, smem)
    occ = occ0["ctas_per_sm"]
    csize = cluster.size if cluster is not None else 1
    busy_sms = min(p.sms, total)
    if csize > 1:
        order, mine = cluster_sample(grid, cluster.dims, p.sms)
    else:
        order, mine = None, cta_ids_for_sm(total, p.sms, 0)
    mode = (sample or "auto").lower()
    n_sm = len(mine)
    cap = max_rounds()
    if csize == 1 and cap and n_sm > (cap + 1) * occ:
        mine = mine[:cap * occ]        # round sampling: the busiest SM's first rounds, extrapolated (simulate())
    if mode == "all" or total <= 1:
        run_ids, rec_ids = (order or list(range(total))), set(mine)
        sampled = f"all {total} CTAs emulated; the busiest SM's {len(mine)} simulated"
    else:
        run_ids, rec_ids = mine, set(mine)
        sampled = (f"timing-only sample: {len(mine)} of {total} CTAs emulated (those of the busiest SM); "
                   f"outputs of the other CTAs not computed") if len(mine) < total else \
            f"all {total} CTAs emulated"
    if len(mine) < n_sm:
        sampled += (f"; round sampling: {len(mine)} of the busiest SM's {n_sm} CTAs ({cap} rounds of {occ}) "
                    f"simulated, the rest extrapolated (CTAs assumed alike; PTXLAB_TIMING_ROUNDS=0 for all)")
    if csize > 1:
        sampled += f"; clusters of {csize}: whole clusters on {csize} SMs"
    trace = Trace(prog, grid, block, dyn_smem, [c for c in run_ids if c in rec_ids])
    trace.sm_ctas = n_sm
    if csize > 1:
        trace.cluster = csize
        trace.cluster_of = cluster_trace.cluster_map(grid, cluster.dims)
    rec = Recorder(trace, p)
    rec.l1_bytes = memsys.l1_bytes(p, occ, smem)
    rec.widen = _widened(module, prog, p)
    iprog = instrument(prog, rec)
    make = recording_scheduler(dev, prog, iprog, rec)
    tpc = (threads + 31) // 32 * 32
    per_wave = max(1, min(len(run_ids), machine.WAVE_THREADS // tpc)) // csize * csize or csize
    kw = {} if budget is None else {"budget": budget}
    t0 = time.perf_counter()
    rec_list = [c for c in run_ids if c in rec_ids]
    rest = [c for c in run_ids if c not in rec_ids]
    probes = _probe_groups(grid, cluster, order, rec_list)
    # probe CTAs (one step along each grid dimension, memsys.py): their addresses only, recorded by a throwaway
    # recorder; in a sampled run they are emulated after the sampled CTAs with a budget (their own outputs do not
    # matter; a probe that waits for a CTA that never runs is dropped)
    ptrace = Trace(prog, grid, block, dyn_smem, [c for g in probes for c in g])
    ptrace.cluster, ptrace.cluster_of = trace.cluster, trace.cluster_of
    prec = Recorder(ptrace, p)
    prec.l1_bytes = rec.l1_bytes
    pprog = instrument(prog, prec)
    pmake = recording_scheduler(dev, prog, pprog, prec)
    in_rest = {c for g in probes for c in g} & set(rest)
    rest = [c for c in rest if c not in in_rest]
    emulated = rec_list
    # time one CTA alone only when cloning could pay (never for clusters: a wave holds whole clusters)
    first = rec_list[:1] if len(rec_list) > 2 and csize == 1 else rec_list[:per_wave]
    _run_wave(iprog, rec, trace, dev, first, grid, block, params, dyn_smem, cluster, kw, make)
    n_first = trace.thread_instrs / max(1, len(first))   # emulated work of one CTA: the same on any machine load
    clones = []
    if csize == 1 and len(rec_list) > 2 and n_first * (len(rec_list) - 1) > emu_budget_instrs():
        # cloning: the other CTAs of the busiest SM are recorded as copies of the first (too slow to emulate each)
        emulated, clones = rec_list[:1], rec_list[1:]
        if mode == "all":
            rest = rest + clones        # their outputs are still computed, without recording
    else:
        for s in range(len(first), len(rec_list), per_wave):
            _run_wave(iprog, rec, trace, dev, rec_list[s:s + per_wave], grid, block, params, dyn_smem, cluster, kw,
                      make)
    probe_note = ""
    per_cta = trace.thread_instrs / max(1, len(emulated))
    for g in probes:
        full = all(c in in_rest for c in g)
        # a probe's footprint must be as complete as the sampled CTA's (memsys.infer compares the two sets): a
        # probe cut short looks like no translation and every first touch went to DRAM (MatrixMulCUDA<16>: 44x the
        # compulsory bytes with 0.3x of a CTA's work).  Budget: 1.5x the sampled CTA's work (cloned launches) or 4x
        pkw = kw if full else {"budget": int((1.5 if clones else 4) * per_cta * len(g)) + 100000}
        try:
            _run_wave(pprog, prec, ptrace, dev, list(g), grid, block, params, dyn_smem, cluster, pkw, pmake)
        except Exception as e:          # noqa: BLE001 - a probe cut short: the addresses it read so far count
            if full:
                raise
            probe_note += f"; probe CTA {g[0]} stopped early ({type(e).__name__})"
    plain = native_engine.scheduler_for(prog, getattr(dev, "engine", "interp")) if rest else None
    rest_make = (lambda st, b: plain(st, b, None)) if plain is not None else None   # not recorded: plain native
    for s in range(0, len(rest), per_wave):
        st = machine.Wave(prog, dev.heap, rest[s:s + per_wave], grid, block, params, dyn_smem, dev, cluster=cluster)
        _scheduler(st, kw, rest_make).run()
        trace.thread_instrs += st.thread_instrs
    trace.footprint = _footprint(rec, prec, grid, p, occ, dev.heap, busy_sms,
                                 rec.stored[0] * 32.0 * total / max(1, len(emulated)), len(emulated))
    trace.footprint.note += probe_note
    for c in clones:
        clone_cta(trace, emulated[0], c)
    if clones:
        sampled += (f"; {len(emulated)} CTA emulated and recorded, the busiest SM's other {len(clones)} simulated as "
                    f"its copies (emulating each would take over {emu_budget_instrs():.3g} thread-instructions; "
                    f"PTXLAB_TIMING_EMU_INSTRS)")
    emu_s = time.perf_counter() - t0
    ran = len(run_ids) - (len(clones) if mode != "all" else 0)
    if ran < total:
        warn_sample(dev, prog.kernel, ran, total)
    from ..emu.checks import lineinfo
    # CUDA source lines of the trace events even without -lineinfo (the same map fault reports use)
    lmap = _source_lines(module, prog, lineinfo.line_map(module))
    out = simulate(trace, prog, p, threads, regs, smem, sampled, emu_s, lmap, sass_join_of(module, prog, p, trace,
                                                                                                lmap))
    HISTORY.append(out)
    del HISTORY[:-64]
    return out


ISSUE_MODES = ("sass", "ptx")


def issue_mode() -> str:
    """``PTXLAB_TIMING_ISSUE``: ``sass`` (default: what ptxas produced, sass_join.py) or ``ptx`` (the PTX stream)."""
    import os
    m = os.environ.get("PTXLAB_TIMING_ISSUE", "sass").strip().lower() or "sass"
    if m not in ISSUE_MODES:
        raise ValueError(f"PTXLAB_TIMING_ISSUE={m!r}: use 'sass' or 'ptx'")
    return m


def sass_join_of(module, prog, p, trace, line_map=None):
    """(SassView note, Join, SASS streams, JoinStats) for the launch, or (reason, None, None, None) to issue PTX."""
    if issue_mode() == "ptx":
        return ("PTX issue (PTXLAB_TIMING_ISSUE=ptx)", None, None, None)
    from . import sass_build, sass_join
    arch = sass_build.arch_for(p.name)
    try:
        view = sass_build.kernel_sass(module, prog.kernel, arch)
    except Exception as e:    # noqa: BLE001 - no SASS: the PTX stream is issued instead
        view = None
        why = f"{type(e).__name__}: {e}"
    else:
        why = sass_build.why_not(module, prog.kernel, arch)
    if view is None:
        return (f"PTX issue (no SASS: {why or 'module has no source'})", None, None, None)
    join = sass_join.Join(prog, view)
    streams, stats = sass_join.sass_streams(trace, join)
    return (view.note, join, streams, stats)


def simulate(trace: Trace, prog, p, threads: int, regs: int, smem: int, sampled: str, emu_s: float = 0.0,
             line_map: Optional[dict] = None, sass: Optional[tuple] = None) -> Timing:
    """Replay a recorded trace with parameter table ``p`` (the trace does not depend on the parameters, except
    through which CTAs the busiest SM runs, i.e. the SM count).  ``line_map``: PTX line -> CUDA (file, line) for the
    events (emu/lineinfo.py).  ``sass``: sass_join_of(...) (None: issue the PTX stream)."""
    orig_trace = trace
    total = trace.grid[0] * trace.grid[1] * trace.grid[2]
    busy_sms = min(p.sms // trace.cluster * trace.cluster, total)
    tmem = max(trace.tmem_cols.values(), default=0)
    occ0 = occupancy(p, threads, regs, smem, tmem)
    occ = occ0["ctas_per_sm"]
    t1 = time.perf_counter()
    info = ProgramInfo(prog, line_map)
    issue = sass[0] if sass else "PTX issue"
    if sass and sass[1] is not None:
        import copy

        from .sass_join import SassInfo
        info = SassInfo(sass[1], info, p)
        trace = copy.copy(trace)
        trace.streams = sass[2]
    sim = SmSim(trace, info, p, occ, busy_sms)
    r = sim.run()
    check_replay(r, prog.kernel, trace.streams, info, issue)
    n_sm = getattr(orig_trace, "sm_ctas", 0) or len(orig_trace.ctas)
    if n_sm > len(orig_trace.ctas):
        _extrapolate(r, occ, n_sm, len(orig_trace.ctas))
    _bandwidth_floor(r)
    sim_s = time.perf_counter() - t1
    clk = p.clock_ghz * 1e3   # cycles per us
    sim_us = r.cycles / clk
    us = p.launch_us + sim_us
    span = max(r.cycles, 1e-9)
    util = {k: v / span for k, v in r.resources.items()}
    util["launch/tail"] = p.launch_us / us
    bound = _bound(util, p, r)
    achieved = _achieved(p, r, busy_sms, span)
    for k in ("DRAM", "L2 hits"):
        got, peak, _ = achieved[k]
        if got > peak * (1 + 1e-9):
            raise AssertionError(f"timing model: {prog.kernel} moves {got:.0f} GB/s through {k}, above the {peak:.0f} "
                                 f"GB/s of {p.name} (the bandwidth floor of predict._bandwidth_floor failed)")
    out = Timing(gpu=p.name, kernel=prog.kernel, us=us, sim_us=sim_us, launch_us=p.launch_us, bound=bound,
                 utilization=util, achieved=achieved, occupancy=occ0, grid=trace.grid, block=trace.block, ctas=total,
                 ctas_per_sm=occ, busy_sms=busy_sms, waves=total / float(p.sms * occ), sampled=sampled,
                 warps=r.warps, events=r.events, cta_spans=r.cta_spans, clock_ghz=p.clock_ghz,
                 emu_seconds=emu_s, sim_seconds=sim_s, registers=regs, smem_bytes=smem, tmem_cols=tmem)
    out.amounts = {k: v * busy_sms for k, v in r.amounts.items()}
    out.issue = issue
    fpn = getattr(orig_trace, "footprint", None)
    out.footprint = fpn.note if fpn is not None else ""
    out.hot = _hot(r.hot, info)
    out.join = sass[3].line() if sass and sass[3] is not None else ""
    out._replay = (orig_trace, prog, threads, regs, smem, sampled, line_map, sass)
    return out


def resimulate(t: Timing, p) -> Timing:
    """The same launch's trace replayed with another parameter table of the same SM count (sensitivity studies)."""
    trace, prog, threads, regs, smem, sampled, line_map, sass = t._replay
    p = _params.get(p)
    if p.sms != _params.get(t.gpu).sms and p.name != t.gpu:
        raise ValueError("resimulate: the sampled CTAs depend on the SM count; re-run the launch instead")
    return simulate(trace, prog, p, threads, regs, smem, sampled, line_map=line_map, sass=sass)


def _source_lines(module, prog, lmap: dict) -> dict:
    """{PTX line: (file, line)} of every instruction, the file and line resolved to the real source (srcloc.py)."""
    from . import srcloc
    fix = srcloc.resolver(module)
    out = {}
    for e in prog.code:
        loc = e.ins.loc or lmap.get(e.ins.line)
        if loc:
            f, n = fix(loc)
            out[e.ins.line] = (srcloc.short(f), n)
    return out


def _widened(module, prog, p) -> dict:
    """{PTX pc: bytes per lane} of the shared-memory SASS accesses wider than 4 bytes made from a PTX instruction
    (the recorder then also counts the wavefronts of the widened access: trace.SmemAccess)."""
    if issue_mode() == "ptx":
        return {}
    from . import sass_build
    try:
        view = sass_build.kernel_sass(module, prog.kernel, sass_build.arch_for(p.name))
    except Exception:         # noqa: BLE001 - no SASS: PTX issue, nothing widened
        return {}
    if view is None:
        return {}
    pcs: dict = {}
    for pc, e in enumerate(prog.code):
        pcs.setdefault(e.ins.line, []).append(pc)
    out = {}
    for ins, line in zip(view.kernel.instrs, view.ptx_line):
        if ins.base in ("LDS", "STS") and line:
            w = 16 if ".128" in ins.op else 8 if ".64" in ins.op else 0
            for pc in pcs.get(line, ()):
                if w > out.get(pc, 0):
                    out[pc] = w
    return out


def _run_wave(iprog, rec, trace, dev, chunk, grid, block, params, dyn_smem, cluster, kw, make=None) -> None:
    """Emulate and record one wave; ``make``: native_record.recording_scheduler's factory (None: the interpreter)."""
    st = TimedWave(iprog, dev.heap, chunk, grid, block, params, dyn_smem, dev, cluster=cluster)
    rec.attach(st)
    st.recorder = rec
    _scheduler(st, kw, make).run()
    trace.thread_instrs += st.thread_instrs
    _note_tmem(trace, st)


def _scheduler(st, kw: dict, make=None):
    """The wave's scheduler: ``make(st, budget)`` (the native engine), else the interpreter's."""
    if make is None:
        return machine.Scheduler(st, **kw)
    return make(st, kw.get("budget", machine.DEFAULT_BUDGET))


def _probe_groups(grid, cluster, order, have: list) -> list:
    """The probe CTAs of memsys.probe_ctas, each as the whole cluster it belongs to (cluster launches)."""
    ids = memsys.probe_ctas(tuple(grid), have)
    if cluster is None or cluster.size <= 1:
        return [(c,) for c in ids]
    n = cluster.size
    groups = []
    for c in ids:
        i = order.index(c)
        g = tuple(order[i // n * n:(i // n + 1) * n])
        if g not in groups and not set(g) & set(have):
            groups.append(g)
    return groups


def _footprint(rec, prec, grid, p, occ, heap, busy_sms, store_bytes: float = 0.0,
               nsampled: int = 1) -> "memsys.GridFootprint":
    """memsys.infer over the sampled and probe CTAs' read sets, per access stream (the PTX instruction that read)."""
    import numpy as np
    sets: dict = {}
    for fp in (rec.fp, prec.fp):
        for (c, pc), parts in fp.items():
            sets.setdefault(c, {})[pc] = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
    gx, gy = grid[0], grid[1]
    block_of = {c: (c % gx, c // gx % gy, c // (gx * gy)) for c in sets}
    total = grid[0] * grid[1] * grid[2]
    return memsys.infer(sets, block_of, tuple(grid), busy_sms, occ, p.l2_bytes, store_bytes, rec.first_by_stream,
                        nsampled, memsys.stream_extents(sets, heap), total,
                        _unique_store_bytes(rec, heap, total, nsampled))


def _unique_store_bytes(rec, heap, total: int, nsampled: int) -> float:
    """The grid's unique stored bytes (an L2 that writes back merges the partial writes of one sector): the sampled
    CTAs' unique sectors scaled to the grid, at most the buffers they lie in (memsys.stream_extents)."""
    import numpy as np
    if not rec.stored_sec:
        return rec.stored_bulk[0] * 32.0 * total / max(1, nsampled)
    u = np.unique(np.concatenate(rec.stored_sec))
    ext = memsys.stream_extents({0: {0: u}}, heap).get(0, {})
    grid_u = (u.size + rec.stored_bulk[0]) * 32.0 * total / max(1, nsampled)
    if ext:
        grid_u = min(grid_u, 32.0 * (sum(ext.values()) + rec.stored_bulk[0] * total / max(1, nsampled)))
    return grid_u


def cluster_sample(grid, dims, sms: int) -> tuple:
    """(all CTAs in cluster launch order, the CTAs of the clusters the busiest group of C SMs runs)."""
    from ..emu.hw.cluster import wave_order
    order = wave_order(tuple(grid), tuple(dims))
    c = dims[0] * dims[1] * dims[2]
    slots = max(1, sms // c)
    nclusters = len(order) // c
    mine = [g for k in range(0, nclusters, slots) for g in order[k * c:(k + 1) * c]]
    return order, mine


def _note_tmem(trace: Trace, st) -> None:
    """TMEM columns each recorded CTA allocated (the last tcgen05.alloc's nCols, or what is still allocated)."""
    tm = st.side.get("tmem")
    if not tm:
        return
    for c, t in enumerate(tm):
        live = sum(int(getattr(a, "ncols", 0)) for a in getattr(t, "allocs", []) or [])
        cols = max(int(getattr(t, "last_alloc_ncols", 0) or 0), live)
        g = int(st.cta_ids[c])
        trace.tmem_cols[g] = max(trace.tmem_cols.get(g, 0), cols)


def emu_budget_instrs() -> float:
    """``PTXLAB_TIMING_EMU_INSTRS``: thread-instructions of emulation beyond the first CTA above which the busiest
    SM's other CTAs are simulated as copies of the first (default 4e8, about 20 s of a recorded launch on the 2-core
    reference machine; 0: always emulate each).  A count of emulated work, never seconds: the same launch gives the
    same prediction bits on an idle or a loaded machine (tests/timing/test_timing_determinism.py)."""
    import os
    v = os.environ.get("PTXLAB_TIMING_EMU_INSTRS", "4e8").strip()
    try:
        x = float(v)
    except ValueError:
        raise ValueError(f"PTXLAB_TIMING_EMU_INSTRS={v!r}: thread-instructions (0: never clone)") from None
    return x if x > 0 else float("inf")


def max_rounds() -> int:
    """``PTXLAB_TIMING_ROUNDS``: CTA rounds of the busiest SM simulated before extrapolating (default 2; 0: all)."""
    import os
    v = os.environ.get("PTXLAB_TIMING_ROUNDS", "2").strip()
    if not v.isdigit():
        raise ValueError(f"PTXLAB_TIMING_ROUNDS={v!r}: a number of rounds (0: simulate every CTA of the SM)")
    return int(v)


def _extrapolate(r, occ: int, n_all: int, n_sim: int) -> None:
    """Round sampling: the SM ran ``n_sim`` of its ``n_all`` CTAs, ``occ`` at a time.  The first round ends at T1
    (its CTAs start together), the simulated rounds at T2; each further round adds (T2 - T1) / (simulated rounds - 1)
    (the staggered steady state of the later rounds).  Busy times and amounts scale with the CTAs."""
    spans = sorted(r.cta_spans, key=lambda x: (x[1], x[0]))
    t1 = max(e for _, _, e in spans[:occ])
    rounds_sim = n_sim / occ
    rounds_all = n_all / occ
    per = (r.cycles - t1) / max(rounds_sim - 1.0, 1e-9) if rounds_sim > 1 else t1
    cycles = t1 + (rounds_all - 1.0) * per
    f = n_all / n_sim
    r.resources = {k: v * f for k, v in r.resources.items()}
    r.amounts = {k: v * f for k, v in r.amounts.items()}
    r.cycles = cycles


FLOORED = ("dram", "l2")   # GPU-wide servers whose burst credit (sim.SharedServer.window) may run ahead of the share


def _bandwidth_floor(r) -> None:
    """No prediction moves bytes faster than DRAM (or L2) allows: the SM's span is at least the busy time of its
    share of each GPU-wide server (bytes / (bandwidth / busy SMs)).  The burst window lets one SM's requests run
    ahead of its share, which is right while the other SMs are idle but not over the whole kernel (a 528-CTA float4
    stream came out at 128 % of the H100's DRAM bandwidth; GEMV configs above 100 % on the B200)."""
    floor = max((r.resources.get(k, 0.0) for k in FLOORED), default=0.0)
    if floor > r.cycles:
        r.cycles = floor


def _hot(hot: dict, info, n: int = 12) -> list:
    """The instructions the simulated warps waited longest before: [(warp-cycles, what, source 'file:line' or PTX
    line, instruction text)] (wait kinds per instruction: sim_sass.py / sim_ptx.py)."""
    out = []
    for (pc, why), cyc in sorted(hot.items(), key=lambda kv: -kv[1])[:n]:
        loc = info.loc[pc]
        where = f"{loc[0]}:{loc[1]}" if loc else f"PTX line {info.line[pc]}"
        text = (getattr(info, "sass", None) or [""] * (pc + 1))[pc] or info.text[pc]
        out.append((cyc, why, where, text))
    return out


NAMES = {"dram": "DRAM", "l2": "L2", "fill": "L2->SM fill", "l1": "L1/LSU", "smem": "shared memory",
         "tma": "TMA issue", "tensor": "tensor core", "tmem": "TMEM read", "issue": "instruction issue"}


def _bound(util: dict, p, r) -> str:
    if util["launch/tail"] >= 0.5:
        return "launch/tail"
    res = {k: v for k, v in util.items() if k in NAMES}
    k = max(res, key=res.get)
    if res[k] >= 0.6:
        return NAMES[k]
    return "latency/sync"


def _achieved(p, r, busy_sms: int, span: float) -> dict:
    sec = span / (p.clock_ghz * 1e9)
    out = {}
    a = r.amounts
    out["DRAM"] = ((a["dram_bytes"] * busy_sms) / sec / 1e9, p.dram_bw / 1e9, "GB/s")
    out["L2 hits"] = ((a["l2_bytes"] * busy_sms) / sec / 1e9, p.l2_bw / 1e9, "GB/s")
    out["shared memory"] = (a["smem_bytes"] / sec / 1e9 * busy_sms, p.smem_bytes_clk * p.clock_ghz * p.sms, "GB/s")
    tc_peak = max(p.tc_flops_clk.values()) * p.clock_ghz * 1e9 * p.sms / 1e12
    out["tensor core"] = (a["tensor_flops"] * busy_sms / sec / 1e12, tc_peak, "TFLOP/s")
    out["issue"] = (a["instructions"] / span, p.issue_per_smsp * p.smsps, "warp-instr/clk/SM")
    mean, peak = r.tma_in_flight
    if peak > 0:
        # Little's law: the bytes one SM must keep in flight to stream at its DRAM share (or its TMA fill rate, if
        # lower) over the DRAM + TMA latency
        share = p.dram_bw / (p.clock_ghz * 1e9) / max(1, busy_sms)
        need = min(share, p.tma_bytes_clk) * (p.cycles(p.dram_latency_ns * p.dram_loaded_factor) + p.cycles(p.tma_latency_ns))
        what = "DRAM share" if share <= p.tma_bytes_clk else "TMA fill rate"
        out["TMA bytes in flight"] = (mean / 1024, peak / 1024, f"KB/SM (mean; peak = the timeline's max; {what} x "
                                      f"latency = {need / 1024:.1f} KB)")
    return out
