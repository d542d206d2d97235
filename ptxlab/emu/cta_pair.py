"""CTA pairs of a thread-block cluster, as tcgen05 ``.cta_group::2`` sees them (PTX ISA 9.7.16.5.1 / 9.7.16.5.2).

"Any 2 CTAs within the cluster whose %cluster_ctarank differs by the last bit only" form a CTA pair; the CTA with
bit 0 = 0 is the even CTA, the other the odd CTA, and each is the other's peer CTA. The topology is read from the
wave's cluster special registers (%clusterid, %cluster_ctarank, %cluster_nctarank: the cluster launch fills them),
so this module needs nothing from the launcher but that a cluster's CTAs run in one wave.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .machine import EXITED

__all__ = ["cluster_of", "rank_of", "nrank_of", "cta_of_rank", "peer_of", "alive"]


def _first_thread(st: Any, cta: int) -> int:
    return int(cta) * int(st.tpc)


def cluster_of(st: Any, cta: int) -> tuple[int, int, int]:
    """%clusterid (x, y, z) of wave CTA ``cta``."""
    t = _first_thread(st, cta)
    return tuple(int(np.asarray(st.special(f"clusterid.{a}"))[t]) for a in "xyz")  # type: ignore[return-value]


def rank_of(st: Any, cta: int) -> int:
    """%cluster_ctarank of wave CTA ``cta``."""
    return int(np.asarray(st.special("cluster_ctarank"))[_first_thread(st, cta)])


def nrank_of(st: Any, cta: int) -> int:
    """%cluster_nctarank (CTAs in the cluster) of wave CTA ``cta``."""
    return int(np.asarray(st.special("cluster_nctarank"))[_first_thread(st, cta)])


def cta_of_rank(st: Any, cta: int, rank: int) -> Optional[int]:
    """Wave CTA index of the CTA with %cluster_ctarank ``rank`` in ``cta``'s cluster (None if not in this wave)."""
    cid = cluster_of(st, cta)
    for c in range(st.nctas):
        if rank_of(st, c) == rank and cluster_of(st, c) == cid:
            return c
    return None


def peer_of(st: Any, cta: int) -> tuple[int, Optional[int], int]:
    """(rank, wave index of the peer CTA or None, cluster size) for wave CTA ``cta`` (cached per wave)."""
    cache = st.side.setdefault("cta_pair", {})
    hit = cache.get(cta)
    if hit is None:
        r, n = rank_of(st, cta), nrank_of(st, cta)
        hit = cache[cta] = (r, None if (r ^ 1) >= n else cta_of_rank(st, cta, r ^ 1), n)
    return hit


def alive(st: Any, cta: int) -> bool:
    """True while some thread of wave CTA ``cta`` has not exited."""
    return bool((st.status[st.cta_of == cta] != EXITED).any())
