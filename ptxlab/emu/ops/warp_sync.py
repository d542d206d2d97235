"""The membermask rule shared by every ``.sync`` warp instruction (PTX ISA 9.7.8.x shfl.sync, vote.sync, ...).

All non-exited lanes named in ``membermask`` must execute the same ``.sync`` instruction before any of them
proceeds; the executing lane must be in the mask.  Lanes that arrive early wait (status SYNC) at the instruction.
"""
from __future__ import annotations

import numpy as np

from ..core.isa import RETRY
from ..engine.machine import EXITED


def lanes_bits(mask_vals: np.ndarray) -> np.ndarray:
    """(T,) uint32 membermask values → (T, 32) bool lane membership."""
    return ((np.asarray(mask_vals, dtype=np.uint64)[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(bool)


def warp_sync_ready(st, ins, m, mask_vals):
    """None if every lane of each executing thread's membermask is executing (or exited); else RETRY."""
    T = st.T
    act = np.ones(T, bool) if m is None else m
    mv = np.broadcast_to(np.asarray(mask_vals, dtype=np.uint32), (T,))
    if m is None and (mv == 0xFFFFFFFF).all():
        return None
    present = (act | (st.status == EXITED)).reshape(-1, 32)        # lanes executing or gone, per warp
    need = lanes_bits(mv).reshape(-1, 32, 32)                        # [warp, lane, member]
    own = ((mv >> st.lane) & 1).astype(bool)
    if (act & ~own).any():
        st.fault(ins, act & ~own, "the executing lane is not in the instruction's membermask",
                 "rule: membermask must include the executing thread (PTX ISA 9.7.8.6 shfl.sync, 9.7.13.2)")
    missing = (need & ~present[:, None, :]).any(axis=2).reshape(-1) & act
    if missing.any():
        return RETRY
    return None
