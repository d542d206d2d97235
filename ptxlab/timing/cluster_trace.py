"""Recording hooks for thread-block clusters (used by trace.py; the model: ptx_docs/timing.md "Clusters").

What a cluster launch adds to a trace:

* DSMEM: a load / store / atomic whose shared::cluster address names a peer CTA (rank bits 31..24 != the executing
  CTA's rank, emu/cluster.py) is a ``DSMEM`` item (bytes, write, narrow bytes: those of accesses of at most 4 B per
  thread, one 128-B request per warp) instead of a shared-memory wavefront item;
* remote mbarrier arrives (``mbarrier.arrive.shared::cluster`` on a peer's barrier): the contribution is marked
  ``remote`` (it crosses the SM-to-SM network) and attributed to the warps whose address names that CTA;
* ``barrier.cluster.arrive`` / ``.wait``: one contribution per (cluster, phase) with one part per arriving warp
  (``CBAR_ARRIVE``), the wait depends on the phase the warp arrived at (``CBAR_WAIT``);
* multicast TMA / peer bulk copies: the destination CTAs of the async op (``AsyncOp.dst_ctas``), and mbarrier
  changes are looked for in the whole cluster of the issuing CTA.
"""
from __future__ import annotations

import numpy as np

from ..emu.hw import cluster as _cl
from ..emu.core.memory import SHARED_WIN, WIN_SHIFT

DSMEM, CBAR_ARRIVE, CBAR_WAIT = 11, 12, 13
OFF_MASK = _cl.OFF_MASK


def cluster_ctas(st, ctas) -> list:
    """Wave CTAs of the clusters of wave CTAs ``ctas`` (``ctas`` itself without a cluster launch)."""
    n = _cl.size(st)
    if n <= 1:
        return list(ctas)
    return sorted({int(c) - int(c) % n + r for c in ctas for r in range(n)})


def split_dsmem(rec, st, sel, warps, a: np.ndarray, nbytes: int, write: bool):
    """Record the accesses of ``sel`` whose address names a peer CTA as DSMEM items; returns (addresses, warps) of
    the accesses to the executing CTA's own shared memory and their mask (wavefront accounting in trace.py)."""
    n = _cl.size(st)
    remote = (a >> _cl.RANK_SHIFT) != (st.cta_of[sel] % n)
    if not remote.any():
        return a, warps, np.ones(a.size, bool)
    by = np.bincount(warps[remote], minlength=st.T // 32) * nbytes
    for w in np.flatnonzero(by):
        w = int(w)
        prev = rec.cur_mem.get(w)
        b = int(by[w])
        nb = b if nbytes <= 4 else 0
        if prev is not None and prev[0] == DSMEM:
            b += prev[1][0]
            nb += prev[1][2]
            write = write and prev[1][1]
        # (a mixed own / peer access in one instruction is recorded as DSMEM: the peer part dominates the latency)
        rec.cur_mem[w] = (DSMEM, (b, bool(write), nb))
    keep = ~remote
    return a[keep], warps[keep], keep


def note_targets(st, op, a) -> None:
    """Destination CTAs (global ids) of a multicast TMA load / peer bulk copy, when not only the issuing CTA."""
    tg = getattr(op, "targets", None)
    if not tg or _cl.size(st) <= 1:
        return
    dst = sorted({int(d) for d, _ in tg})
    if dst != [int(getattr(op, "cta", -1))]:
        a.dst_ctas = tuple(int(st.cta_ids[d]) for d in dst)


def target_reader(ctx, ins, addr_op):
    """fn(st, m) -> per-thread wave CTA named by an mbarrier operand (None outside cluster launches)."""
    if addr_op is None:
        return lambda st, m: None
    rd = ctx.address(addr_op)
    generic = not any(m.startswith("shared") for m in ins.mods)

    def read(st, m):
        if st.smem_rank_bits is None:
            return None
        a = np.broadcast_to(np.asarray(rd(st), dtype=np.uint64), (st.T,)).astype(np.int64)
        if generic:
            a = np.where((a >> WIN_SHIFT) == (SHARED_WIN >> WIN_SHIFT), a - SHARED_WIN, a)
        n = _cl.size(st)
        own = st.cta_of.astype(np.int64)
        return own - own % n + ((a >> _cl.RANK_SHIFT) & 0xFF)
    return read


def contributors(st, warps, c: int, tgt) -> tuple:
    """(warps whose threads changed the barrier of wave CTA ``c``, whether that is a remote arrive)."""
    if tgt is None:
        cw = [int(w) for w in warps if int(st.cta_of[int(w) * 32]) == c]
        return (cw or [int(w) for w in warps]), False
    cw = [int(w) for w in warps if (tgt[int(w) * 32:int(w) * 32 + 32] == c).any()]
    if not cw:
        cw = [int(w) for w in warps]
    remote = any(int(st.cta_of[w * 32]) != c for w in cw)
    return cw, remote


def is_cluster_barrier(ins) -> bool:
    return ins.opcode == "barrier" and "cluster" in ins.mods and ("arrive" in ins.mods or "wait" in ins.mods)


def warp_part(rec, st, m, w: int, bar) -> tuple:
    """(lanes of warp ``w`` executing now, whether they complete the warp's arrival at ``bar``).  A warp diverged
    around a barrier reaches it in parts (the emulator runs the lanes separately); the simulator treats the warp as
    arriving (and waiting) with its last part, so the earlier parts record nothing."""
    from ..emu.engine.machine import EXITED
    lo = w * 32
    live = int(np.count_nonzero(st.valid[lo:lo + 32] & (st.status[lo:lo + 32] != EXITED)))
    lanes = live if m is None else int(np.count_nonzero(np.asarray(m)[lo:lo + 32]))
    pk = (rec.keys[w], bar)
    got = rec.partial.pop(pk, 0) + lanes
    # lanes that exited after arriving no longer count as live: compare with what arrived
    if got < live:
        rec.partial[pk] = got
        return lanes, False
    return lanes, True


def record_cluster_barrier(rec, warps, kind: int, items: dict) -> None:
    """barrier.cluster.arrive: one part of the contribution to (cluster, phase); .wait: depend on that phase."""
    trace = rec.trace
    st = rec.st
    for w in warps:
        w = int(w)
        g, wi = rec.keys[w]
        k = trace.cluster_of.get(g, (g, 0))[0]
        n = rec.cbar_gen.get((g, wi), 0)
        if kind == CBAR_WAIT and (rec.keys[w], "cbar") in rec.partial:
            continue       # part of a diverged warp whose other lanes have not arrived yet
        if kind == CBAR_ARRIVE:
            if not warp_part(rec, st, rec.cur_m, w, "cbar")[1]:
                continue
            key = ("cbar", k, n)
            rec.cbar_gen[(g, wi)] = n + 1
            cids = trace.phase_contribs.get(key)
            cid = cids[0] if cids else trace.new_contrib(key)
            trace.contribs[cid].parts += 1
            items[w].append((CBAR_ARRIVE, cid))
        elif n > 0:
            items[w].append((CBAR_WAIT, ("cbar", k, n - 1)))


def cluster_map(grid: tuple, dims: tuple) -> dict:
    """global CTA id -> (cluster index in launch order, %cluster_ctarank) (emu/cluster.py wave_order)."""
    order = _cl.wave_order(tuple(grid), tuple(dims))
    n = dims[0] * dims[1] * dims[2]
    return {g: (i // n, i % n) for i, g in enumerate(order)}
