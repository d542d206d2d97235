"""Rules and rendezvous of tcgen05 ``.cta_group::2`` (CTA-pair) operations; used by ops/tcgen05.py.

PTX ISA sections: 9.7.16.5.1 (CTA pair), 9.7.16.5.2 (peer CTA), 9.7.16.5 Table 46 (issue granularity:
mma/cp/shift/commit from one thread of the pair, "the peer CTA should be active and should not have exited";
alloc/dealloc/relinquish_alloc_permit from two warps, one in each CTA of the pair, "the first warp to perform the
operation could block until the second warp in the Peer CTA also performs the operation"), 9.7.16.7.1 (".cta_group::2
... one warp from each of the peer CTAs must collectively perform the allocation and de-allocation"; "All tcgen05
instructions within a kernel must specify the same value for the .cta_group qualifier"). See
ptx_docs/tcgen05_cta_pair.md for every rule and what the text leaves open.

Every violation raises through ``st.fault`` with a ``[tcgen05:pair-...]`` tag.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..core import ir
from ..core import hooks
from .cta_pair import alive, peer_of

__all__ = ["check_group", "pair_peer", "Rendezvous", "rendezvous"]

_PAIR_KEY = 0x7C06 << 48  # park keys of warps waiting for the peer warp: _PAIR_KEY | cta


def check_group(st: Any, ins: ir.Instr, t: Any, cg: int) -> None:
    """All tcgen05 instructions of a kernel must use one .cta_group value (PTX 9.7.16.7.1, 9.7.16.10.9)."""
    first = st.side.get("tcgen05_cta_group")
    if first is None:
        st.side["tcgen05_cta_group"] = (cg, ins.line, ins.text)
        return
    if first[0] != cg:
        st.fault(ins, t, f"[tcgen05:cta-group-mismatch] {ins.opcode}.{ins.mods[0]} uses .cta_group::{cg} but an "
                         f"earlier tcgen05 instruction (PTX line {first[1]}: {first[2].strip()}) used "
                         f".cta_group::{first[0]}",
                 "rule: all tcgen05 instructions within a kernel must specify the same value for the .cta_group "
                 "qualifier (PTX ISA 9.7.16.7.1, 9.7.16.9.2, 9.7.16.10.9, 9.7.16.12.1): alloc, mma, cp, shift and "
                 "commit of a 2-SM kernel all need .cta_group::2")


def pair_peer(st: Any, ins: ir.Instr, t: Any, cta: int, *, need_alive: bool = True) -> tuple[int, int]:
    """(rank, peer wave CTA) of ``cta`` for a cta_group::2 instruction; faults if there is no live peer."""
    rank, peer, n = peer_of(st, cta)
    what = f"{ins.opcode}.{ins.mods[0]}.cta_group::2"
    if n < 2:
        st.fault(ins, t, f"[tcgen05:pair-no-cluster] {what} in a CTA that is not part of a cluster of 2 or more CTAs "
                         f"(%cluster_nctarank = {n})",
                 "rule: .cta_group::2 works on a CTA pair, two CTAs of one cluster whose %cluster_ctarank differs in "
                 "bit 0 (PTX ISA 9.7.16.5.1); launch with cluster=(2,1,1) (or any cluster with an even CTA count), "
                 "or use .cta_group::1")
    if peer is None:
        st.fault(ins, t, f"[tcgen05:pair-no-peer] {what} in the CTA of %cluster_ctarank {rank}, whose pair partner "
                         f"(rank {rank ^ 1}) does not exist in this cluster of {n} CTAs",
                 "rule: a CTA pair is two CTAs of one cluster whose %cluster_ctarank differs in bit 0 (PTX ISA "
                 "9.7.16.5.1): use a cluster with an even number of CTAs")
    if need_alive and not alive(st, peer):
        st.fault(ins, t, f"[tcgen05:pair-peer-exited] {what} issued while the peer CTA (%cluster_ctarank "
                         f"{rank ^ 1}) has already exited",
                 "rule: 'When the current CTA issues the operation, the peer CTA should be active and should not have "
                 "exited' (PTX ISA 9.7.16.5 Table 46); keep the peer alive (e.g. a cluster barrier before its exit)")
    return rank, int(peer)


class Rendezvous:
    """One warp of a pair waiting for the matching warp of its peer CTA (alloc / dealloc .cta_group::2)."""

    def __init__(self, op: str, cta: int, warp: int, wmask: np.ndarray, ins: ir.Instr, payload: dict) -> None:
        self.op, self.cta, self.warp, self.wmask, self.ins, self.payload = op, cta, warp, wmask, ins, payload


def _table(st: Any) -> dict:
    return st.side.setdefault("tcgen05_pair_wait", {})


def rendezvous(st: Any, ins: ir.Instr, op: str, cta: int, peer: int, warp: int, wmask: np.ndarray,
               payload: dict) -> Optional[Rendezvous]:
    """Meet the peer warp at a collective .cta_group::2 op.

    Returns the waiting peer's :class:`Rendezvous` if it is already there (the caller then performs the operation
    for both warps and wakes the peer with :func:`wake`); otherwise parks this warp (return None: the caller
    returns BLOCK_END) until the peer's arrival completes the operation."""
    tab = _table(st)
    key = (op, min(cta, peer))
    w = tab.get(key)
    if w is not None and w.cta == peer:
        del tab[key]
        return w
    if w is not None and w.cta == cta:
        st.fault(ins, wmask, f"[tcgen05:pair-two-warps] warp {warp} and warp {w.warp} of the same CTA both execute "
                             f"tcgen05.{op}.cta_group::2 while the peer CTA's warp has not",
                 "rule: .cta_group::2 alloc/dealloc is performed by two warps, one in each CTA of the pair "
                 "(PTX ISA 9.7.16.5 Table 46, 9.7.16.7.1)")
    tab[key] = Rendezvous(op, cta, warp, wmask, ins, payload)
    st.park(wmask, _PAIR_KEY | cta)
    return None


def wake(st: Any, cta: int) -> None:
    st.wake(_PAIR_KEY | cta)


def _explain(st: Any) -> Optional[str]:
    tab = st.side.get("tcgen05_pair_wait")
    if not tab:
        return None
    lines = []
    for w in tab.values():
        rank, peer, _n = peer_of(st, w.cta)
        state = "has exited" if peer is not None and not alive(st, peer) else "never reached it"
        lines.append(f"  [tcgen05:pair-wait] warp {w.warp} of CTA rank {rank} waits in tcgen05.{w.op}.cta_group::2 "
                     f"(PTX line {w.ins.line}) for one warp of its peer CTA (rank {rank ^ 1}), which {state}: both "
                     "CTAs of the pair must execute it (PTX ISA 9.7.16.5 Table 46; Table 48 shows the hang)")
    return "\n".join(lines)


hooks.DEADLOCK_EXPLAINERS.append(_explain)
