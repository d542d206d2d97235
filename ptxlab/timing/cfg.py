"""Control-flow graphs for the PTX-SASS join (sass_join.py): dominators, natural loops, loop depth.

Both the PTX of the emulator's program and the SASS ptxas produced are reducible graphs of basic blocks numbered in
layout order; block 0 is the entry.  Dominators: the iterative algorithm of Cooper, Harvey & Kennedy ("A Simple, Fast
Dominance Algorithm", 2001) over reverse post-order.  A back edge u -> v has v dominating u; its natural loop is v
plus every block that reaches u without passing v; a block's loop depth is the number of natural loops (by header)
that contain it.
"""
from __future__ import annotations

from typing import List, Optional


class Graph:
    def __init__(self, succ: List[List[int]]):
        self.n = len(succ)
        self.succ = [list(dict.fromkeys(s)) for s in succ]
        self.pred: List[List[int]] = [[] for _ in range(self.n)]
        for u, ss in enumerate(self.succ):
            for v in ss:
                self.pred[v].append(u)
        self.rpo = self._rpo()
        self.reachable = set(self.rpo)
        self.idom = self._dominators()
        self.depth = self._loop_depths()

    def _rpo(self) -> List[int]:
        if not self.n:
            return []
        seen, order = {0}, []
        stack = [(0, iter(self.succ[0]))]
        while stack:
            u, it = stack[-1]
            for v in it:
                if v not in seen:
                    seen.add(v)
                    stack.append((v, iter(self.succ[v])))
                    break
            else:
                stack.pop()
                order.append(u)
        return order[::-1]

    def _dominators(self) -> List[Optional[int]]:
        idom: List[Optional[int]] = [None] * self.n
        if not self.n:
            return idom
        pos = {u: i for i, u in enumerate(self.rpo)}
        idom[0] = 0

        def meet(a: int, b: int) -> int:
            while a != b:
                while pos[a] > pos[b]:
                    a = idom[a]
                while pos[b] > pos[a]:
                    b = idom[b]
            return a
        changed = True
        while changed:
            changed = False
            for u in self.rpo[1:]:
                ps = [p for p in self.pred[u] if idom[p] is not None]
                if not ps:
                    continue
                d = ps[0]
                for p in ps[1:]:
                    d = meet(p, d)
                if idom[u] != d:
                    idom[u] = d
                    changed = True
        return idom

    def dominates(self, a: int, b: int) -> bool:
        """a dominates b (every path from the entry to b passes a); unreachable blocks are dominated by nothing."""
        if b not in self.reachable or a not in self.reachable:
            return False
        while True:
            if a == b:
                return True
            if b == 0:
                return False
            b = self.idom[b]

    def _loop_depths(self) -> List[int]:
        depth = [0] * self.n
        loops: dict = {}
        for u in self.reachable:
            for v in self.succ[u]:
                if self.dominates(v, u):
                    body = loops.setdefault(v, {v})
                    stack = [u]
                    while stack:
                        x = stack.pop()
                        if x not in body:
                            body.add(x)
                            stack.extend(p for p in self.pred[x] if p in self.reachable)
        self.loops = loops
        for body in loops.values():
            for x in body:
                depth[x] += 1
        return depth
