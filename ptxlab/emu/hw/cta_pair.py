"""CTA pairs of a thread-block cluster, as tcgen05 ``.cta_group::2`` sees them (PTX ISA 9.7.16.5.1 / 9.7.16.5.2).

"Any 2 CTAs within the cluster whose %cluster_ctarank differs by the last bit only" form a CTA pair; the CTA with
bit 0 = 0 is the even CTA, the other the odd CTA, and each is the other's peer CTA. Built on the wave's cluster
geometry (cluster.py: a cluster's CTAs run in one wave, consecutive in rank order).
"""
from __future__ import annotations

from typing import Any, Optional

from . import cluster as _cluster
from ..core.thread_status import EXITED

__all__ = ["rank_of", "nrank_of", "cta_of_rank", "peer_of", "alive"]


def rank_of(st: Any, cta: int) -> int:
    """%cluster_ctarank of wave CTA ``cta``."""
    return int(st.cluster_rank(cta))


def nrank_of(st: Any, cta: int) -> int:
    """%cluster_nctarank (CTAs in the cluster)."""
    return int(_cluster.size(st))


def cta_of_rank(st: Any, cta: int, rank: int) -> Optional[int]:
    """Wave CTA index of the CTA with %cluster_ctarank ``rank`` in ``cta``'s cluster (None if outside it)."""
    if not 0 <= int(rank) < nrank_of(st, cta):
        return None
    return int(st.cluster_peer(cta, rank))


def peer_of(st: Any, cta: int) -> tuple[int, Optional[int], int]:
    """(rank, wave index of the peer CTA or None when rank ^ 1 is outside the cluster, cluster size)."""
    r, n = rank_of(st, cta), nrank_of(st, cta)
    return r, cta_of_rank(st, cta, r ^ 1), n


def alive(st: Any, cta: int) -> bool:
    """True while some thread of wave CTA ``cta`` has not exited."""
    lo = int(cta) * int(st.tpc)
    return bool((st.status[lo:lo + st.tpc] != EXITED).any())
