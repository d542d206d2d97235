"""Stage F6: split-K inside a thread-block cluster (blocks/cluster_splitk.cuh), as the cluster GEMM's split-K
(``config={"splits": KS}``) uses it: the KS CTAs of a tile are in one cluster, exchange their partials through an
fp32 workspace ordered by one cluster barrier, and each sums the BN / KS columns it owns in split order.

Kernel stages/F_gemm/f6_cluster_splitk.cu: KS CTAs per 128 x BN tile hold fresh random fp32 partial tiles in TMEM
(values spread over 2^-8 .. 2^8, so the order of the fp32 additions changes the bits). The output must equal the host's
fp32 sum ((p_0 + p_1) + ..) + p_{KS-1} bit for bit, every column exactly once (output poisoned 0xA5, the workspace
too: a slot read before it was written shows up).

Broken variants (``run_f6(ctx, broken=NAME)`` or ``PTXLAB_STAGE_F6_BROKEN=NAME``): each must FAIL. Not in the list:
a missing cluster barrier between the stores and the loads (the kernel's BROKEN=2 build) is a race the emulator's
schedule never shows (it runs a cluster's CTAs in lock step, every store before any load, also with one CTA per wave);
only the SASS check (UCGABAR_ARV) would notice it.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from ptxlab.lab.registry import Check, StageResult

from .common import H, Refused, compile_row, device_of, first_diff, launched, preflight_for, resolve_broken
from .f3 import expected

STAGE = "F6"
BROKEN = {
    "wrong_slot": 1,       # a split stores its partials as if it were the next split: owners read stale slots
    "own_first": 3,        # the owner adds its own partial first: bits depend on which split owns the columns
    "wrong_owner": 4,      # the owner reads the slots of the next split's part
}
CASES: Tuple[Tuple[int, int, int], ...] = ((3, 2, 64), (2, 4, 128))
#: (tiles, KS, BN); own_first is caught by KS = 4 only (two fp32 addends commute)
preflight = preflight_for(STAGE, BROKEN)


def run_f6(ctx, cases: Sequence[Tuple[int, int, int]] = CASES, broken: Optional[str] = None) -> StageResult:
    return run_exchange(ctx, STAGE, BROKEN, 0, cases, broken,
                        ["STTM", "LDTM", "LDG.E.128.STRONG.GPU", "STG.E.128", "UCGABAR_ARV"])


def run_exchange(ctx, stage: str, table: dict, xchg: int, cases: Sequence[Tuple[int, int, int]],
                 broken: Optional[str], sass: List[str]) -> StageResult:
    """Stage F6 (xchg 0: cluster barrier) or F7 (xchg 1: signalled exchange) of f6_cluster_splitk.cu on `cases`."""
    STAGE, BROKEN = stage, table   # noqa: N806 (the names of the stage module's tables)
    broken = resolve_broken(STAGE, broken, BROKEN)
    rows: List[Check] = []
    t = H.Timer()
    try:
        dev, _ = device_of(ctx, STAGE)
        mods = {}
        for tiles, ks, bn in cases:
            if (ks, bn) not in mods:
                mods[(ks, bn)] = compile_row(rows, "f6_cluster_splitk.cu",
                                             {"F6_BN": bn, "F6_KS": ks, "F6_XCHG": xchg,
                                              "BROKEN": BROKEN.get(broken, 0)}, STAGE, sass=sass)
            mod = mods[(ks, bn)]
            if mod is None:
                continue
            tag = f"{tiles} tiles of 128x{bn}, {ks} splits in a (1,1,{ks}) cluster"
            seed = H.fresh_seed()
            rng = np.random.default_rng(seed)
            p = (rng.uniform(-1, 1, (ks, tiles, 128, bn)) * np.exp2(rng.integers(-8, 9, (ks, tiles, 128, bn)))
                 ).astype(np.float32)
            ws = dev.empty(4 * tiles * ks * 128 * bn)
            dev.memset(ws, 0xA5)
            out = H.poisoned(dev, 4 * tiles * 128 * bn)
            ran = launched(dev, rows, STAGE, tag, seed, lambda: dev.launch(
                mod, "f6_cluster_splitk", grid=(tiles, 1, ks), block=(128, 1, 1), cluster=(1, 1, ks),
                args=[dev.to_device(p.view(np.uint32)), ws, out, np.uint32(tiles)]))
            if not ran:
                continue
            got = dev.to_host(out, np.uint32).reshape(tiles, 128, bn)
            diff = first_diff(got, expected(p))
            poison = int((got == 0xA5A5A5A5).sum())
            rows.append(Check(f"tile == fp32 sum in split order, bit for bit ({tag})", not diff,
                              f"seed={seed}" + (f": {diff}" + (f"; {poison} words hold the poison (never written or "
                                                               "a slot read before its writer stored it)"
                                                               if poison else "") if diff else f"; {got.size} words")))
    except Refused as r:
        return r.result
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2)})
