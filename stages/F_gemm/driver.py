"""Stages F1-F7: the mechanisms of the production GEMM for gpu-mode's small-M shapes (ptx_docs/production_gemm.md),
each brought up on its own against a host (scalar) reference, with broken variants that its check must catch.

F1 the shared A operand multicast over a cluster (blocks/cluster.cuh; used by the cluster GEMM, the default).
F2 the TMA-store epilogue (blocks/tma_store.cuh; used by the cluster GEMM).
F3 the ordered (deterministic) split-K fixup (blocks/splitk.cuh; the 1sm GEMM's split-K). sm_100a or sm_90a.
F4 the persistent tile scheduler (blocks/scheduler.cuh). sm_100a or sm_90a.
F5 double-buffered TMEM accumulators, the epilogue of a tile overlapping the next tile's MMAs (blocks/accum_pipe.cuh).
F6 split-K inside a cluster: partials exchanged through a workspace ordered by one cluster barrier, each split sums the
   columns it owns in split order (blocks/cluster_splitk.cuh; the cluster GEMM's split-K before round 4).
F7 F6 with the signalled exchange: a named barrier, then one release.cluster arrive per owner's mbarrier instead
   of the cluster barrier; each owner waits only for its peers (blocks/cluster_splitk.cuh step 2'; the cluster GEMM's default).
"""
from __future__ import annotations

from ptxlab.lab.registry import Stage

from .f1 import preflight as f1_preflight, run_f1
from .f2 import preflight as f2_preflight, run_f2
from .f3 import preflight as f3_preflight, run_f3
from .f4 import preflight as f4_preflight, run_f4
from .f5 import preflight as f5_preflight, run_f5
from .f6 import preflight as f6_preflight, run_f6
from .f7 import preflight as f7_preflight, run_f7

STAGES = [
    Stage("F1", "multicast of the shared operand: a (1,C,1) cluster along N loads A once (rank r: 128/C rows, TMA "
          ".multicast::cluster), SFB quarters shared by 4 tiles, 2-slot ring released by tcgen05.commit "
          ".multicast::cluster (empty count C), cluster barrier after init, drain before exit",
          "every CTA's TMEM (128x32, N=32 MMAs) == float64 sums exactly; SASS UTMALDG.*.MULTICAST/UTCBAR.MULTICAST; "
          "broken variants (PTXLAB_STAGE_F1_BROKEN) caught", run_f1, preflight=f1_preflight),
    Stage("F2", "TMA-store epilogue: TMEM fp32 -> cvt.rn.f16x2 -> SWIZZLE_64B SMEM sub-tiles -> fence.proxy.async -> "
          "cp.async.bulk.tensor stores {32,32,1} -> bulk commit / wait_group.read, two tiles through one SMEM",
          "fp16 c == numpy RNE of the fp32 words (ties, subnormals, overflow) for every element; SASS UTMASTG; broken "
          "variants (PTXLAB_STAGE_F2_BROKEN) caught", run_f2, preflight=f2_preflight),
    Stage("F3", "split-K ordered fixup: S CTAs per tile store their fp32 partial in their own workspace slot, arrive "
          "(fence.acq_rel, bar, atom.inc bound S-1, bar, fence); the last arriver sums the slots in split order",
          "tile == host fp32 sum in split order bit for bit, splits finishing in index and reversed order and one "
          "after another, two launches on one workspace (counters back at 0); broken variants "
          "(PTXLAB_STAGE_F3_BROKEN) caught; runs its sm_90a build on an H100", run_f3, preflight=f3_preflight),
    Stage("F4", "persistent tile scheduler: G CTAs claim T > G tiles from a global counter (atom.add by a leader, "
          "shared through SMEM between named barriers); the last CTA to finish (atom.inc on done) resets the counter",
          "every tile done by exactly one whole CTA, row sums == numpy, counters back at 0 after each of two launches "
          "(also with CTAs one after another); broken variants (PTXLAB_STAGE_F4_BROKEN) caught; runs its sm_90a build "
          "on an H100", run_f4, preflight=f4_preflight),
    Stage("F5", "double-buffered TMEM accumulators: a persistent CTA's MMAs fill accumulator t % 2 (acc_empty wait, "
          "commit acc_full) while the epilogue warps read tile t-1 (acc_full wait, ld, wait::ld, fence, arrive "
          "acc_empty)", "every tile == float64 sums exactly; broken variants (PTXLAB_STAGE_F5_BROKEN) caught", run_f5,
          preflight=f5_preflight),
    Stage("F6", "split-K inside a cluster: the KS CTAs of a tile (cluster (1,1,KS)) store the parts of their TMEM "
          "partial they do not own into the owners' workspace slots (16-B stores), one cluster barrier (release / "
          "acquire), each owner loads its peers' parts (ld.relaxed.gpu) and sums its BN/KS columns in split order",
          "fp32 tile == host sum in split order bit for bit (KS 2 and 4); broken variants "
          "(PTXLAB_STAGE_F6_BROKEN) caught", run_f6, preflight=f6_preflight),
    Stage("F7", "split-K inside a cluster, signalled: F6's exchange with an xchg mbarrier per CTA (count KS-1, "
          "cluster barrier after its init); after a named barrier of its 128 threads one lane per owner arrives "
          "(mbarrier.arrive.release.cluster.shared::cluster via mapa) on that owner's mbarrier, each owner waits (try_wait.acquire.cluster) for its peers only",
          "fp32 tile == host sum in split order bit for bit (KS 2 and 4); broken variants "
          "(PTXLAB_STAGE_F7_BROKEN) caught", run_f7, preflight=f7_preflight),
]
