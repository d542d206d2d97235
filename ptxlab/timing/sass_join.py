"""Join the emulator's per-warp PTX streams to the kernel's SASS: what each warp issues is SASS, in ptxas's order.

The emulator records, per warp, the PTX instructions it executed and the events they caused (memory sectors,
shared-memory wavefronts, barriers, mbarrier phases, async copies, MMAs: trace.py).  ptxas turns that PTX into SASS
that differs in count (``rem.u32`` -> ~8-20 SASS, movs vanish), order (loads hoisted to the top of a block), width
(four ``ld.shared.f32`` -> one ``LDS.128``) and control flow (branches predicated, loop-invariant code hoisted, slow
paths out of line).  The join (ptx_docs/timing.md "SASS: what the hardware executes"):

1. **Lines.**  Every SASS instruction carries the line of the PTX it came from (``-lineinfo`` line table,
   sass_build.py); a line names one PTX instruction (several, where the emulator inlined a ``.func`` twice).
2. **Homes.**  Each SASS basic block is given a *home* PTX block: among the PTX blocks its instructions come from,
   those at the same loop depth (cfg.py; SASS depth vs PTX depth) are candidates (code hoisted out of a deeper loop
   or sunk into one does not vote); the one with most instructions wins, unless another candidate dominates it and
   branches straight into it (an if-converted ``if``: the block before it is home, so the predicated code issues on
   every pass).  A block whose instructions all come from deeper loops (a loop pre-header holding only hoisted code) goes to the
   PTX block that dominates their loop at its own depth.  A block without line info takes its layout predecessor's
   home.  Blocks reached only through ``CALL`` (subroutines) or only through the taken side of a branch ptxas made
   itself (its line names no PTX ``bra``: division / remainder slow paths) are cold: never emitted.  A SASS block
   remembers the homes of the groups that can precede it (``Join.allowed``), so a copy of a PTX block that ptxas
   duplicated onto another path is emitted only after a group of that path.
3. **Emission.**  A warp's PTX stream is cut into PTX block executions; each execution of a PTX block that is the
   home of SASS blocks starts a *group* that also takes the following executions of blocks that are home to none
   (their code was merged into the group's SASS).  The group emits its SASS blocks' instructions, in address order.
4. **Events.**  Every recorded event of the group is attached to one emitted SASS instruction that can carry it
   (sass_ops.EVENT_OPS): first the instruction generated from the event's own PTX instruction, then (memory
   events merged by ptxas into a wider access) the nearest compatible instruction that already carries that kind,
   then the nearest free compatible one; memory events merge only into a wider SASS access whose address covers
   their PTX access (same base register, offset inside its width: ``Join.merge_set``).  An event left over looks for its SASS in the group before (code ptxas
   hoisted) and in the group after (code it sank); failing both, it is issued where it was, on the first SASS
   instruction made from its PTX instruction that can carry it (``JoinStats.moved``), or as the PTX instruction itself
   (``JoinStats.ptx_events``), so no synchronisation is ever lost -- except loads: a PTX load with no SASS
   counterpart anywhere near is one ptxas eliminated (the value kept in a register) and is dropped
   (``JoinStats.dropped``).

Where no SASS is available (``sass_build.why_not``), the simulator issues the PTX stream itself (the model before
issue 21) and the prediction says so.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Dict, List, Optional

from . import sass_ops
from .cfg import Graph
from .trace import (ASYNC, BAR, CBAR_ARRIVE, CBAR_WAIT, DSMEM, GLD, GST, LOCAL, MB_CONTRIB, MB_WAIT, MMA, PLAIN, SMEM,
                    TMEM_LD)

KIND_NAME = {GLD: "GLD", GST: "GST", SMEM: "SMEM", LOCAL: "LOCAL", BAR: "BAR", MB_CONTRIB: "MB_CONTRIB",
             MB_WAIT: "MB_WAIT", ASYNC: "ASYNC", MMA: "MMA", TMEM_LD: "TMEM_LD", DSMEM: "DSMEM",
             CBAR_ARRIVE: "CBAR_ARRIVE", CBAR_WAIT: "CBAR_WAIT"}
MERGEABLE = (GLD, GST, SMEM, LOCAL)


@dataclass
class JoinStats:
    sass_instrs: int = 0          # SASS instructions in the kernel
    ptx_items: int = 0            # recorded PTX instructions (all sampled warps)
    sass_items: int = 0           # SASS instructions emitted (all sampled warps)
    events: int = 0
    ptx_events: int = 0           # events issued at PTX level (no SASS counterpart in their group)
    merged: int = 0               # memory events merged into a wider SASS access
    moved: int = 0                # events issued on their SASS instruction outside the group's path (moved code)
    dropped: int = 0              # PTX loads ptxas eliminated (no SASS counterpart: the value stays in a register)
    cold_blocks: int = 0
    unjoined_groups: int = 0      # PTX block executions whose code no SASS block calls home

    def line(self) -> str:
        return (f"{self.sass_items:,} SASS issued for {self.ptx_items:,} PTX instructions "
                f"({self.sass_items / max(1, self.ptx_items):.2f}x); {self.events:,} events, {self.merged:,} merged "
                f"into wider SASS accesses, {self.moved:,} on moved SASS, {self.ptx_events:,} at PTX level, "
                f"{self.dropped:,} PTX loads without SASS (eliminated by ptxas); "
                f"{self.cold_blocks} cold SASS blocks")


def ptx_blocks(prog) -> tuple:
    """(block start pcs, block of each pc, Graph) of the emulator's program."""
    n = len(prog.code)
    ends = prog.block_end
    starts = sorted({0} | {e for e in ends if e < n})
    block_of = [0] * n
    bi = 0
    for pc in range(n):
        while bi + 1 < len(starts) and starts[bi + 1] <= pc:
            bi += 1
        block_of[pc] = bi
    succ: List[List[int]] = [[] for _ in starts]
    for b, s in enumerate(starts):
        last = (starts[b + 1] if b + 1 < len(starts) else n) - 1
        e = prog.code[last]
        if e.kind == 1:       # K_BRA
            if 0 <= e.target < n:
                succ[b].append(block_of[e.target])
            if e.guard >= 0 and last + 1 < n:
                succ[b].append(block_of[last + 1])
        elif e.kind == 0 and last + 1 < n:
            succ[b].append(block_of[last + 1])
    return starts, block_of, Graph(succ)


class Join:
    """The static part of the join for one (program, SASS view): homes, emission lists, the instruction table."""

    def __init__(self, prog, view):
        self.prog, self.view = prog, view
        k = view.kernel
        self.sass = k.instrs
        self.nsass = len(k.instrs)
        self.starts, self.block_of, self.pg = ptx_blocks(prog)
        self.start_set = set(self.starts)
        self.line_pcs: Dict[int, List[int]] = defaultdict(list)
        for pc, e in enumerate(prog.code):
            if e.ins.line:
                self.line_pcs[e.ins.line].append(pc)
        self.pcs_of = [self.line_pcs.get(ln, []) if ln else [] for ln in view.ptx_line]
        self.bra_lines = {e.ins.line for e in prog.code if e.kind == 1}
        blocks = k.blocks()
        self.sg = Graph([b.succ for b in blocks])
        self.home: List[Optional[int]] = [None] * len(blocks)
        self.cold = set()
        self._homes(blocks)
        self.variants = self._unrolled(blocks)                   # PTX loop block -> [(unroll, repeats, SASS blk)]
        in_variant = {bi for vs in self.variants.values() for _, _, bi in vs}
        self.homed: Dict[int, List[int]] = defaultdict(list)      # PTX block -> SASS blocks homed there
        for bi, b in enumerate(blocks):
            h = self.home[bi]
            if h is not None and bi not in self.cold and bi not in in_variant:
                self.homed[h].append(bi)
        for lb in self.variants:
            self.homed.setdefault(lb, [])
        self.allowed = self._entries(blocks)
        self.loop_of = {lb: self._loop_body(lb) for lb in self.variants}
        self._emit: Dict[tuple, list] = {}
        self._paths: Dict[tuple, list] = {}
        self.accept = [self._accepts(i) for i in self.sass]
        self.merge_set = self._merge_sets()
        self._plans: Dict[tuple, tuple] = {}
        self.exact: Dict[tuple, int] = {}     # (pc, event kind) -> the first SASS instruction made from pc taking it
        for i in range(self.nsass):
            for pc in self.pcs_of[i]:
                for k in self.accept[i]:
                    self.exact.setdefault((pc, k), i)

    # --- homes --------------------------------------------------------------------------------------------------
    def _homes(self, blocks):
        sg, pg = self.sg, self.pg
        # cold: reached only through CALL (no CFG edge) or only through the taken side of ptxas-made branches
        for bi, b in enumerate(blocks):
            if bi not in sg.reachable:
                self.cold.add(bi)
                continue
            preds = sg.pred[bi]
            if not preds:
                continue
            made = 0
            for p in preds:
                last = self.sass[blocks[p].end - 1]
                taken = last.base == "BRA" and last.target and blocks[bi].label == last.target and \
                    not last.unconditional
                if taken and self.view.ptx_line[last.idx] not in self.bra_lines and \
                        blocks[p].end != blocks[bi].start:
                    made += 1
            if made == len(preds):
                self.cold.add(bi)
        changed = True
        while changed:                  # blocks all of whose predecessors are cold are cold too
            changed = False
            for bi in range(len(blocks)):
                if bi in self.cold or bi not in sg.reachable or bi == 0:
                    continue
                if sg.pred[bi] and all(p in self.cold for p in sg.pred[bi]):
                    self.cold.add(bi)
                    changed = True
        for bi, b in enumerate(blocks):
            votes: Counter = Counter()
            for i in range(b.start, b.end):
                for pc in self.pcs_of[i]:
                    votes[self.block_of[pc]] += 1.0 / len(self.pcs_of[i])
            if not votes:
                continue
            d = sg.depth[bi]
            same = {p: v for p, v in votes.items() if pg.depth[p] == d}
            if same:
                h = max(same, key=lambda p: (same[p], -p))
                moved = True
                while moved:            # if-converted: a candidate that branches straight into h runs it always
                    moved = False
                    for q in same:
                        if q != h and h in pg.succ[q] and pg.dominates(q, h):
                            h, moved = q, True
                            break
                self.home[bi] = h
                continue
            deeper = {p: v for p, v in votes.items() if pg.depth[p] > d}
            if deeper:
                p = max(deeper, key=lambda q: (deeper[q], -q))
                while pg.depth[p] > d and p != 0 and pg.idom[p] is not None:
                    p = pg.idom[p]
                self.home[bi] = p
                continue
            self.home[bi] = max(votes, key=lambda p: (votes[p], -p))
        for bi, b in enumerate(blocks):   # no line info: the layout predecessor's home
            if self.home[bi] is None and bi > 0 and bi in sg.reachable:
                self.home[bi] = self.home[bi - 1]

    def _entries(self, blocks) -> List[set]:
        """Per SASS block, the homes of the groups that may precede it (through SASS blocks of other homes; a loop
        back edge within one home admits that home): a copy of a PTX block that ptxas duplicated on another path
        (tail duplication) is then emitted only after the group its path comes from."""
        sg, home = self.sg, self.home
        allowed: List[set] = [set() for _ in blocks]
        if blocks:
            allowed[0].add(None)
        changed = True
        while changed:
            changed = False
            for bi in sg.rpo:
                new = set(allowed[bi])
                for q in sg.pred[bi]:
                    if q in self.cold:
                        continue
                    if home[q] != home[bi]:
                        new.add(home[q])
                    elif sg.dominates(bi, q):        # back edge inside one home: the group follows itself
                        new.add(home[bi])
                    else:
                        new |= allowed[q]
                if new != allowed[bi]:
                    allowed[bi] = new
                    changed = True
        return allowed

    def _unrolled(self, blocks) -> Dict[int, list]:
        """Loops ptxas unrolled itself: a PTX loop block whose code appears in several SASS blocks that are copies
        of one another (their PTX instructions overlap by 80 % or more) at different multiplicities, one of them a
        repeating body of more than one iteration (the x4 loop; the remainders are x2 / x1 copies): an x4 body
        that repeats, x2 / x1 remainders.  {PTX block: [(unroll factor u, repeats?, SASS block)]}; u = the median
        over the copied PTX instructions of (SASS instructions it became in this copy) / (in the smallest copy), so
        a PTX instruction that expands to several SASS instructions in every copy does not count as unrolled."""
        fam: Dict[int, list] = defaultdict(list)
        for bi, b in enumerate(blocks):
            if bi in self.cold or bi not in self.sg.reachable:
                continue
            cnt: Counter = Counter()
            for i in range(b.start, b.end):
                for pc in self.pcs_of[i]:
                    cnt[pc] += 1.0 / len(self.pcs_of[i])
            if not cnt:
                continue
            by_blk: Counter = Counter()
            for pc, c in cnt.items():
                by_blk[self.block_of[pc]] += c
            lb = max(by_blk, key=lambda q: (by_blk[q], -q))
            if self.pg.depth[lb] == 0 or by_blk[lb] < 0.6 * sum(by_blk.values()):
                continue
            fam[lb].append((bi, {pc: c for pc, c in cnt.items() if self.block_of[pc] == lb}))
        out = {}
        for lb, v in fam.items():
            if len(v) == 1:     # one copy: unrolled if most of its PTX instructions appear u > 1 times (the mode)
                bi, c = v[0]
                vals = Counter(int(round(x)) for x in c.values())
                u = max(vals, key=lambda x: (vals[x], -x))
                if u > 1 and (bi in self.sg.succ[bi] or any(self.sg.dominates(bi, q) for q in self.sg.pred[bi])):
                    out[lb] = [(u, True, bi)]
                continue
            ref = max(v, key=lambda x: len(x[1]))[1]
            copies = [(bi, c) for bi, c in v if len(set(c) & set(ref)) >= 0.8 * len(set(c) | set(ref))]
            if len(copies) < 2:
                continue
            unit = {pc: min(c[pc] for _, c in copies if pc in c) for pc in ref}
            body = []
            for bi, c in copies:
                xs = sorted(c[pc] / unit[pc] for pc in c if pc in unit and unit[pc] > 0)
                u = max(1, int(round(xs[len(xs) // 2]))) if xs else 1
                rep = bi in self.sg.succ[bi] or any(self.sg.dominates(bi, q) for q in self.sg.pred[bi])
                body.append((u, rep, bi))
            if any(u > 1 and rep for u, rep, _ in body):      # an unrolled body that repeats: a real unroll
                out[lb] = sorted(body, key=lambda x: (-x[0], x[2]))
        return out

    def _loop_body(self, lb: int) -> set:
        """The innermost PTX natural loop containing block ``lb`` (its blocks)."""
        best = None
        for h, body in self.pg.loops.items():
            if lb in body and (best is None or len(body) < len(best)):
                best = body
        return best or {lb}

    def run_instances(self, lb: int, n: int) -> List[tuple]:
        """[(SASS instruction list, PTX iterations it covers)] for a run of ``n`` iterations of unrolled PTX block
        ``lb``: the repeating variants greedily (largest unroll first), then the straight-line remainders."""
        out = []
        left = n
        blocks = self.view.kernel.blocks()
        for u, rep, bi in self.variants[lb]:
            if left <= 0:
                break
            k = left // u if rep else (1 if left >= u else 0)
            lst = self._emit.setdefault(("v", bi), list(range(blocks[bi].start, blocks[bi].end)))
            out.extend([(lst, u)] * k)
            left -= k * u
        if left > 0:                    # no variant fits the rest: the smallest one, once for what is left
            u, rep, bi = self.variants[lb][-1]
            lst = self._emit.setdefault(("v", bi), list(range(blocks[bi].start, blocks[bi].end)))
            out.append((lst, left))
        return out

    def emit_for(self, p: int, prev, executed: frozenset = frozenset(), done: frozenset = frozenset(),
                 evpcs: frozenset = frozenset()) -> Optional[List[int]]:
        """SASS instruction indices a group of PTX block ``p`` issues after a group of PTX block ``prev``: one path
        through the SASS blocks homed at ``p`` (ptxas's alternatives: an out-of-line retry loop, a branch around
        code), the one whose PTX instructions best match those the group executed (``executed``: its pcs; ``done``:
        the PTX blocks it executed), shortest on ties; then, in address order, the other homed blocks that hold the
        SASS of an event the path does not cover (``evpcs``: the group's events as (pc, kind))."""
        bl = self.homed.get(p)
        if not bl:
            return None if p not in self.variants else []
        key = (p, prev, executed, evpcs)
        lst = self._emit.get(key)
        if lst is not None:
            return lst
        blocks = self.view.kernel.blocks()
        best = self._best_path(bl, prev, executed, done, evpcs)
        can = {(pc, k) for bi in best for i in range(blocks[bi].start, blocks[bi].end) for pc in self.pcs_of[i]
               for k in self.accept[i]}
        extra = []          # segments the path could not reach (homed blocks separated by other homes' blocks)
        for bi in sorted(bl):
            if bi in best:
                continue
            mine = {(pc, k) for i in range(blocks[bi].start, blocks[bi].end) for pc in self.pcs_of[i]
                    for k in self.accept[i]}
            if mine & (evpcs - can):
                extra.append(bi)
                can |= mine
        order = list(best) + extra
        lst = self._emit[key] = [i for bi in order for i in range(blocks[bi].start, blocks[bi].end)]
        return lst

    def _best_path(self, bl: List[int], prev, executed: frozenset, done: frozenset, evpcs: frozenset) -> tuple:
        """The path through the SASS blocks ``bl`` (one home) that a group after ``prev`` most likely ran, built
        greedily: start at the entry that covers most of what the group did (a block admitting ``prev``,
        Join.allowed, that control reaches from outside the home or round a loop: never mid-chain), then keep moving (by
        the shortest forward route) to the nearest block that adds an event the group recorded (x 1000) or a PTX
        instruction it executed (only if those outnumber half the instructions of the blocks passed on the way),
        until nothing is left to cover.  So an x16 copy of a 4-iteration PTX block is
        walked for 4 iterations, a diamond is left on the side that holds the event, and an out-of-line retry block
        is not entered when the main block covered the wait."""
        inset = set(bl)
        sg = self.sg
        blocks = self.view.kernel.blocks()
        info = {}
        for bi in bl:
            rng = range(blocks[bi].start, blocks[bi].end)
            info[bi] = ({pc for i in rng for pc in self.pcs_of[i]},
                        {(pc, k) for i in rng for pc in self.pcs_of[i] for k in self.accept[i]})
        need_ev, need_pc = set(evpcs), set(executed)

        def gain(bi):
            cov, can = info[bi]
            return 1000 * len(need_ev & can) + len(need_pc & cov)
        def entered(bi):    # control reaches bi from outside the home's blocks (or round its loop): a group starts
            return not sg.pred[bi] or any(q not in self.cold and (q not in inset or sg.dominates(bi, q))
                                          for q in sg.pred[bi])
        # an interior block of a chain inherits its entry's Join.allowed but is no start: starting there (it may cover
        # more) would issue the chain's head after its tail, e.g. a bar.sync of the next generation before this one
        after = [bi for bi in bl if prev in self.allowed[bi]]
        entries = [bi for bi in after if entered(bi)] or after or \
            [bi for bi in bl if not any(q in inset and not sg.dominates(bi, q) for q in sg.pred[bi])] or [min(bl)]
        cur = max(entries, key=lambda b: (gain(b), -b))
        path = [cur]
        while True:
            cov, can = info[cur]
            need_ev -= can
            need_pc -= cov
            if not need_ev and not need_pc:
                break
            # nearest forward block (BFS inside bl, no back edges) with a positive gain
            seen, frontier, route = {cur}, [cur], {cur: None}
            found = None
            while frontier and found is None:
                nxt = []
                for u in frontier:
                    for v in sg.succ[u]:
                        if v in inset and v not in seen and v not in path and not sg.dominates(v, u):
                            seen.add(v)
                            route[v] = u
                            if gain(v) > 0:
                                found = v if found is None or gain(v) > gain(found) else found
                            nxt.append(v)
                frontier = nxt
            if found is None:
                break
            hop = []
            v = found
            while v != cur:
                hop.append(v)
                v = route[v]
            between = sum(blocks[b].end - blocks[b].start for b in hop[1:])
            if gain(found) < 1000 and gain(found) < 0.5 * between:
                break               # a few instructions far down a chain (a loop's bottom): not worth the walk
            path.extend(reversed(hop))
            cur = found
        return tuple(path)

    def _merge_sets(self) -> List[frozenset]:
        """Per SASS memory instruction wider than the PTX access it was made from (LDS.128 from ld.shared.f32), the
        PTX accesses it covers: those of its PTX block with the same opcode and base register at offsets inside
        its width (ptxas merged them).  Memory events merge only along these sets."""
        from ..emu.core import ir
        code = self.prog.code
        out: List[frozenset] = [frozenset()] * self.nsass
        by_block: Dict[tuple, list] = defaultdict(list)
        for pc, e in enumerate(code):
            ins = e.ins
            if ins.opcode in ("ld", "st") and ins.args:
                a = next((x for x in ins.args if isinstance(x, ir.Addr)), None)
                if a is not None and a.base is not None:
                    key = (self.block_of[pc], ins.opcode, tuple(m for m in ins.mods if not m.startswith("v")),
                           getattr(a.base, "idx", getattr(a.base, "name", None)))
                    by_block[key].append((a.offset, pc))
        where = {pc: (key, off) for key, lst in by_block.items() for off, pc in lst}
        for i, ins in enumerate(self.sass):
            mods = ins.op.split(".")[1:]
            width = 16 if "128" in mods else 8 if "64" in mods else 0
            if not width or not self.pcs_of[i]:
                continue
            p0 = self.pcs_of[i][0]
            if p0 not in where:
                continue
            key, off0 = where[p0]
            out[i] = frozenset(pc for off, pc in by_block[key] if off0 <= off < off0 + width)
        return out

    def _accepts(self, ins) -> frozenset:
        base = ins.base
        return frozenset(k for k, name in KIND_NAME.items() if base in sass_ops.EVENT_OPS[name])

    # --- per-warp emission ----------------------------------------------------------------------------------------
    def translate(self, stream: list, stats: JoinStats, ptx_base: int) -> list:
        """The SASS stream of one warp: items (index, kind, data) where index < nsass is a SASS instruction and
        ptx_base + pc a PTX instruction issued at PTX level (an event without SASS counterpart)."""
        out: list = []
        starts = self.start_set
        block_of = self.block_of
        homed = self.homed
        cur = None                  # [PTX block, previous group's block, items] of the open group
        run = None                  # [unrolled PTX block, [items of each iteration]]
        head: list = []             # items before the first group
        prev_pc = None
        prev_home = None
        self._prev = None           # (SASS list, first position in out) of the group before
        self._carry: list = []      # events of the group before that found no SASS there (sunk into this one?)
        stats.ptx_items += len(stream)

        def close(g):
            nonlocal run
            if g is None:
                return
            if g[0] in self.variants:
                if run is None or run[0] != g[0]:
                    flush_run()
                    run = [g[0], []]
                run[1].append(g[2])
                return
            executed = frozenset(it[0] for it in g[2])
            done = frozenset(block_of[pc] for pc in executed)
            evpcs = frozenset((it[0], k) for it in g[2] if it[1] != PLAIN
                              for k in ([it[1]] if it[1] != -1 else [x[0] for x in it[2]]))
            self._flush(self.emit_for(g[0], g[1], executed, done, evpcs), g[2], out, stats, ptx_base)

        def flush_run():
            nonlocal run
            if run is None:
                return
            iters = run[1]
            at = 0
            for lst, u in self.run_instances(run[0], len(iters)):
                self._flush(lst, [it for its in iters[at:at + u] for it in its], out, stats, ptx_base)
                at += u
            run = None

        for item in stream:
            pc, kind = item[0], item[1]
            if pc in starts and not (kind == ASYNC and pc == prev_pc):
                b = block_of[pc]
                if b in homed:
                    close(cur)
                    if run is not None and b != run[0] and b not in self.loop_of[run[0]]:
                        flush_run()
                    cur = [b, prev_home, []]
                    prev_home = b
            if cur is None:
                head.append(item)
            else:
                cur[2].append(item)
            prev_pc = pc
        close(cur)
        flush_run()
        if head:
            stats.unjoined_groups += 1
            self._flush(None, head, out, stats, ptx_base)
        for pc, k, d in self._carry:
            if self._eliminated((pc, k, d)):
                stats.dropped += 1
                continue
            stats.ptx_events += 1
            out.append((ptx_base + pc, k, d))
        stats.sass_items += sum(1 for x in out if x[0] < self.nsass)
        return out

    def _flush(self, sass: Optional[List[int]], items: list, out: list, stats: JoinStats, ptx_base: int):
        if not items and not sass:
            return
        events = []
        for it in items:
            k = it[1]
            if k == PLAIN:
                continue
            if k == -1:
                events.extend(_Multi((it[0], kk, dd)) if n else (it[0], kk, dd) for n, (kk, dd) in enumerate(it[2]))
            else:
                events.append(it)
        stats.events += len(events)
        sass = sass or []
        carry, self._carry = self._carry, []
        events = carry + events            # sunk code: the last group's leftovers may find their SASS here
        plan = self._plan(sass, events) if events else ((), (), 0)
        attach, left, merged = plan
        stats.merged += merged
        base = len(out)
        out.extend((i, PLAIN, None) for i in sass)
        for ev_i, pos in attach:
            pc, k, d = events[ev_i]
            _put(out, base + pos, k, d)
        leftover = [events[j] for j in left]
        still = []
        for ev in leftover:                # hoisted code: the SASS of the group before
            if not self._look_back(ev, out):
                still.append(ev)
        ncarry = len(carry)
        stay = []
        for j, ev in zip(left, leftover):
            if ev in still:
                if j < ncarry:                   # carried once already: where it was (before this group), as the
                    if self._eliminated(ev):
                        stats.dropped += 1
                        continue
                    i = self.exact.get((ev[0], ev[1]))      # SASS instruction made from it (code ptxas moved)
                    if i is None:
                        stats.ptx_events += 1
                        stay.append((ptx_base + ev[0], ev[1], ev[2]))
                    else:
                        stats.moved += 1
                        stay.append((i, ev[1], ev[2]))
                else:
                    self._carry.append(ev)
        if stay:
            out[base:base] = stay
            base += len(stay)
        self._prev = (sass, base)

    def _eliminated(self, ev) -> bool:
        """A load with no SASS counterpart in its group, the one before or after: ptxas kept the value in a register
        (hoisted out of a loop, reused): the hardware does not load it, so neither does the model."""
        pc, k = ev[0], ev[1]
        return k in (GLD, SMEM, LOCAL) and self.prog.code[pc].ins.opcode in ("ld", "ldu")

    def _look_back(self, ev, out: list) -> bool:
        if self._prev is None:
            return False
        sass, base = self._prev
        pc, k, d = ev
        for pos, i in enumerate(sass):
            if pc in self.pcs_of[i] and k in self.accept[i]:
                item = out[base + pos]
                kinds = [item[1]] if item[1] != -1 else [x[0] for x in item[2]]
                if k in kinds:          # that SASS instruction already carries its own event of this kind
                    continue
                _put(out, base + pos, k, d)
                return True
        return False

    def _plan(self, sass: List[int], events: list) -> tuple:
        """(attachments [(event index, position in sass)], unattached event indices, merges) for a group, cached
        by (SASS list, the events' (pc, kind) sequence)."""
        same = [j > 0 and events[j - 1] is not None and events[j][0] == events[j - 1][0] and
                getattr(events[j], "multi", False) for j in range(len(events))]
        key = (id(sass), tuple((e[0], e[1]) for e in events), tuple(same))
        hit = self._plans.get(key)
        if hit is not None:
            return hit
        pcs_of, accept = self.pcs_of, self.accept
        by_pc: Dict[int, List[int]] = defaultdict(list)
        for pos, i in enumerate(sass):
            for pc in pcs_of[i]:
                by_pc[pc].append(pos)
        taken: set = set()
        attach, left, pending = [], [], []
        merged = 0
        last_pos = None
        for j, (pc, k, _) in enumerate(events):      # 1. the SASS generated from the event's own PTX instruction
            if same[j] and last_pos is not None and k in accept[sass[last_pos]]:
                attach.append((j, last_pos))         # another event of the same PTX instruction execution
                continue
            hit_pos = next((pos for pos in by_pc.get(pc, ()) if k in accept[sass[pos]] and (pos, k) not in taken),
                           None)
            last_pos = hit_pos
            if hit_pos is None:
                pending.append(j)
                continue
            taken.add((hit_pos, k))
            attach.append((j, hit_pos))
        for j in pending:                # 2. merged into a wider access / 3. the nearest free compatible op
            pc, k, _ = events[j]
            cands = [pos for pos, i in enumerate(sass) if k in accept[i]]
            if not cands:
                left.append(j)
                continue

            def dist(pos, pc=pc):
                return min((abs(p - pc) for p in pcs_of[sass[pos]]), default=1 << 30)
            if k in MERGEABLE:
                carrying = [pos for pos in cands if (pos, k) in taken and pc in self.merge_set[sass[pos]]]
                if carrying:
                    attach.append((j, min(carrying, key=dist)))
                    merged += 1
                    continue
            free = [pos for pos in cands if (pos, k) not in taken and any(
                self.block_of[p] == self.block_of[pc] for p in pcs_of[sass[pos]])]
            if free:
                pos = min(free, key=dist)
                taken.add((pos, k))
                attach.append((j, pos))
                continue
            left.append(j)
        out = (tuple(attach), tuple(left), merged)
        self._plans[key] = out
        return out


class _Multi(tuple):
    """An event that came with the one before it from one execution of one PTX instruction (a multi-event item)."""
    multi = True


def _put(out: list, at: int, k: int, d) -> None:
    """Attach event (k, d) to the SASS item out[at] (merging memory events of one kind: a widened access)."""
    i, k0, d0 = out[at]
    if k0 == PLAIN:
        out[at] = (i, k, d)
        return
    evs = [(k0, d0)] if k0 != -1 else list(d0)
    for j, (kk, dd) in enumerate(evs):
        if kk == k and k in MERGEABLE:
            evs[j] = (k, merge_data(k, dd, d))
            break
    else:
        evs.append((k, d))
    out[at] = (i, evs[0][0], evs[0][1]) if len(evs) == 1 else (i, -1, evs)


def merge_data(k: int, a, b):
    """Event data of one wide SASS access made of two PTX accesses (trace.py data layouts)."""
    if k == SMEM:
        return a.merged(b) if hasattr(a, "merged") else a + b
    if k in (GLD, GST):
        if hasattr(a, "merged"):
            return a.merged(b)
        return (max(a[0], b[0]), max(a[1], b[1]))      # a store: (sectors, 128-byte lines)
    return a


# ------------------------------------------------------------------------------------------------ the issue table
_WIDTH = {"128": 16, "64": 8, "U8": 1, "S8": 1, "U16": 2, "S16": 2}
_DEPBAR = re.compile(r"SB(\d)\s*,\s*(0x[0-9a-f]+|\d+)")
_PTX_PIPE = {"fma": ("fma", ""), "imad": ("fmah", ""), "alu": ("alu", ""), "sfu": ("sfu", "mufu"),
             "shfl": ("lsu", "shfl"), "cvt": ("xu", "cvt"), "mem": ("lsu", "mem"), "sync": ("lsu", "mem"),
             "branch": ("cbu", ""), "free": ("alu", "")}


class SassInfo:
    """Per-index tables the SASS simulator reads (sim_sass.py): indices < ``nsass`` are SASS instructions, ``nsass +
    pc`` the PTX instruction ``pc`` (events issued at PTX level).  ``line`` / ``loc`` / ``text``: the PTX line, its
    CUDA source location and PTX text (trace events); ``sass``: the SASS text."""

    def __init__(self, join: Join, pinfo, p):
        sass = join.sass
        n = join.nsass
        npx = len(pinfo.cls)
        self.nsass = n
        tot = n + npx
        var = p.var_latency_clk
        self.stall = [1] * tot
        self.wbar = [7] * tot
        self.rbar = [7] * tot
        self.wait = [0] * tot
        self.pipe = ["alu"] * tot
        self.vkey = [""] * tot
        self.vlat = [0.0] * tot
        self.width = [0] * tot
        self.depbar = [None] * tot
        self.line = [0] * tot
        self.loc = [None] * tot
        self.text = [""] * tot
        self.sass = [""] * tot
        self.cls = [""] * tot
        for i, ins in enumerate(sass):
            c = ins.ctrl
            self.stall[i], self.wbar[i], self.rbar[i], self.wait[i] = max(1, c.stall), c.wbar, c.rbar, c.wait
            pipe, vkey = sass_ops.classify(ins.base)
            self.pipe[i], self.vkey[i] = pipe, vkey
            self.vlat[i] = var.get(vkey, var["other"]) if c.wbar != 7 else 0.0
            mods = ins.op.split(".")[1:]
            self.width[i] = next((_WIDTH[m] for m in mods if m in _WIDTH), 4)
            if ins.base == "DEPBAR":
                m = _DEPBAR.search(ins.args)
                if m:
                    self.depbar[i] = (int(m.group(1)), int(m.group(2), 0))
            pcs = join.pcs_of[i]
            if pcs:
                pc = pcs[0]
                self.line[i], self.loc[i], self.text[i] = pinfo.line[pc], pinfo.loc[pc], pinfo.text[pc]
            self.sass[i] = ins.text
            self.cls[i] = pipe
        for pc in range(npx):
            j = n + pc
            pipe, vkey = _PTX_PIPE.get(pinfo.cls[pc], ("alu", ""))
            self.pipe[j], self.vkey[j] = pipe, vkey
            self.vlat[j] = var.get(vkey, 4.0) if vkey else p.alu_latency_clk
            self.line[j], self.loc[j], self.text[j] = pinfo.line[pc], pinfo.loc[pc], pinfo.text[pc]
            self.cls[j] = pinfo.cls[pc]
        # one tuple per index for the simulator's inner loop (sim_sass.step_sass)
        self.specs = [(self.stall[i], self.wbar[i], self.rbar[i], tuple(k for k in range(6) if self.wait[i] >> k & 1),
                       self.pipe[i], self.vlat[i], self.vkey[i], self.width[i], self.depbar[i]) for i in range(tot)]


def sass_streams(trace, join: Join) -> tuple:
    """({warp: SASS stream}, JoinStats) for every recorded warp of ``trace``."""
    stats = JoinStats(sass_instrs=join.nsass, cold_blocks=len(join.cold))
    out = {key: join.translate(st, stats, join.nsass) for key, st in trace.streams.items()}
    return out, stats
