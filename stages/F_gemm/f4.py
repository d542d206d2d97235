"""Stage F4: the persistent tile scheduler (blocks/scheduler.cuh): dynamic claims from a global counter, reset by the
last CTA to finish.

Kernel stages/F_gemm/f4_scheduler.cu: G persistent CTAs claim T > G tiles; thread r of the claiming CTA sums row r of
the tile's fresh random u32 data (the host's numpy sum is the reference, exact mod 2^32) and every warp of the CTA
counts the tile once in seen[t]: every tile must be done by exactly one whole CTA (seen == 4). Two launches on the
same counters (they must be back at 0), one of them with the emulator's CTAs one after another (1 CTA per wave, so
one CTA may take every tile before the next starts). Plain CUDA + PTX of sm_90: runs its sm_90a build on an H100.

Broken variants (``run_f4(ctx, broken=NAME)`` or ``PTXLAB_STAGE_F4_BROKEN=NAME``): each must FAIL.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from ptxlab.lab.registry import Check, StageResult

from .common import H, Refused, compile_row, device_of, launched, preflight_for, resolve_broken
from .f3 import arch_of, sequential_ctas

STAGE = "F4"
BROKEN = {
    "claim_per_warp": 1,   # each warp claims a tile of its own: a tile's other 96 rows are never computed
    "no_reset": 2,         # nobody resets the counter: the next launch finds no work
    "reset_early": 3,      # the first CTA to finish resets the counter while others may still claim
    "past_the_end": 4,     # tiles processed while tile <= count: one claim past the last tile
}
CASES: Tuple[Tuple[int, int, int, bool], ...] = ((5, 23, 16, False), (3, 7, 8, True))   # (CTAs, tiles, K, sequential)
preflight = preflight_for(STAGE, BROKEN)


def run_f4(ctx, cases: Sequence[Tuple[int, int, int, bool]] = CASES, broken: Optional[str] = None) -> StageResult:
    broken = resolve_broken(STAGE, broken, BROKEN)
    rows: List[Check] = []
    t = H.Timer()
    try:
        dev, arch = device_of(ctx, STAGE, arch_of)
    except Refused as r:
        return r.result
    mod = compile_row(rows, "f4_scheduler.cu", {"BROKEN": BROKEN.get(broken, 0)}, "F4", arch,
                      sass=["ATOMG.E.ADD", "ATOMG.E.INC", "BAR.SYNC"])
    for ctas, tiles, k, seq in (cases if mod is not None else ()):
        tag = f"{ctas} CTAs, {tiles} tiles" + (", CTAs one after another" if seq else "")
        counter, done = dev.empty(4), dev.empty(4)
        dev.memset(counter, 0)
        dev.memset(done, 0)
        for launch in (1, 2):
            seed = H.fresh_seed()
            x = np.random.default_rng(seed).integers(0, 2**32, (tiles, 128, k), dtype=np.uint64).astype(np.uint32)
            out = H.poisoned(dev, 4 * tiles * 128)
            seen = dev.empty(4 * tiles)
            dev.memset(seen, 0)
            with sequential_ctas(dev, seq):
                ran = launched(dev, rows, STAGE, f"{tag}, launch {launch}", seed, lambda: dev.launch(
                    mod, "f4_scheduler", grid=(ctas, 1, 1), block=(128, 1, 1),
                    args=[dev.to_device(x), out, seen, counter, done, np.uint32(tiles), np.uint32(k)]),
                    strict_rules=False)
            if not ran:
                break
            got = dev.to_host(out, np.uint32).reshape(tiles, 128)
            exp = x.sum(axis=2, dtype=np.uint64).astype(np.uint32)
            s = dev.to_host(seen, np.uint32)
            c, dn = int(dev.to_host(counter, np.uint32)[0]), int(dev.to_host(done, np.uint32)[0])
            problems = []
            if (got != exp).any():
                bad = np.argwhere(got != exp)
                problems.append(f"{len(bad)} of {got.size} row sums wrong, first (tile, row) {tuple(int(v) for v in bad[0])}"
                                f"{' (never written)' if got[tuple(bad[0])] == 0xA5A5A5A5 else ''}")
            if (s != 4).any():
                odd = {int(i): int(s[i]) for i in np.flatnonzero(s != 4)[:6]}
                problems.append(f"tiles not done by exactly one whole CTA (seen[t] = warps that did tile t, want 4): "
                                f"{odd}")
            if c or dn:
                problems.append(f"counter {c}, done {dn} after the launch: the last CTA to finish must reset both to 0")
            rows.append(Check(f"every tile done once by one CTA, row sums exact, counters reset ({tag}, launch "
                              f"{launch})", not problems, f"seed={seed}" + (": " + "; ".join(problems) if problems
                                                                           else f"; {tiles} tiles")))
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2), "arch": arch})
