"""Stage F7: split-K inside a thread-block cluster with the SIGNALLED exchange (blocks/cluster_splitk.cuh step 2', the
cluster GEMM's default exchange): stage F6's kernel and check (stages/F_gemm/f6_cluster_splitk.cu built with
-DF6_XCHG=1), the cluster barrier between the stores and the loads replaced by one mbarrier per CTA (count KS-1): the
CTA's 128 threads pass a named barrier (bar.sync 1, 128), then lane 0 of warp i arrives with
mbarrier.arrive.release.cluster.shared::cluster (PTX ISA 9.7.13.15.13) on the barrier of the i-th other owner, the owner's threads wait for phase 0 with mbarrier.try_wait.parity.acquire.cluster (9.7.13.15.16). The
output must equal the host's fp32 sum ((p_0 + p_1) + ..) + p_{KS-1} bit for bit (output and workspace poisoned).

Broken variants (``run_f7(ctx, broken=NAME)`` or ``PTXLAB_STAGE_F7_BROKEN=NAME``): each must FAIL. Not in the list,
because the emulator runs a cluster's CTAs in lock step and never shows these races: the signal issued before the
slot stores (the kernel's BROKEN=5 build) and a wait with the default .acquire.cta scope (no acquire of the peers'
global stores); only hardware or a memory-model checker of global memory would.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

from ptxlab.lab.registry import StageResult

from .common import preflight_for
from .f6 import CASES, run_exchange

STAGE = "F7"
BROKEN = {
    "wrong_slot": 1,       # a split stores its partials as if it were the next split: owners read stale slots
    "own_first": 3,        # the owner adds its own partial first: bits depend on which split owns the columns
    "wrong_owner": 4,      # the owner reads the slots of the next split's part
    "no_start_barrier": 6,  # no cluster barrier after the xchg init: a peer may arrive on a barrier not yet made
    "extra_arrival": 7,    # xchg expects one arrival more than the peers send: the owner waits forever
}
preflight = preflight_for(STAGE, BROKEN)


def run_f7(ctx, cases: Sequence[Tuple[int, int, int]] = CASES, broken: Optional[str] = None) -> StageResult:
    return run_exchange(ctx, STAGE, BROKEN, 1, cases, broken, ["STTM", "LDTM", "LDG.E.128.STRONG.GPU", "STG.E.128"])
