"""Stage F5: double-buffered TMEM accumulators (blocks/accum_pipe.cuh): the epilogue of one tile overlaps the MMAs of
the next.

Kernel stages/F_gemm/f5_tmem_dbuf.cu: one persistent CTA computes T tiles D_t = A . B_t^T (128 x 32, NVFP4,
K = 256) into accumulator t % 2 while its epilogue warps read tile t-1 from the other, synchronised by acc_full /
acc_empty barrier pairs. Data: fresh random e2m1 codes and scales from {0.5, 1, 2}: every tile must equal the host
float64 sums bit for bit. Outputs poisoned (0xA5).

Broken variants (``run_f5(ctx, broken=NAME)`` or ``PTXLAB_STAGE_F5_BROKEN=NAME``): each must FAIL. Not in the list:
a missing acc_empty wait and a release before tcgen05.wait::ld are races the emulator's schedule never shows (its
epilogue reads a buffer before the MMA lane refills it); the parity and buffer mistakes above are what it can show.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from ptxlab.lab.registry import Check, StageResult
from ptxlab.numerics import pack_fp4
from ptxlab.scales import to_blocked

from .common import (H, Refused, compile_row, device_of, exact_dot, first_diff, launched, mat_map, nvfp4_operands,
                     preflight_for, resolve_broken, sf_map)

STAGE = "F5"
BROKEN = {
    "wrong_empty_parity": 1,   # the MMA lane waits acc_empty with the consumer's parity: a fresh buffer never frees
    "single_buffer": 2,        # every tile in accumulator 0 (the barriers still alternate)
    "wrong_full_parity": 3,    # the epilogue waits acc_full with the other parity: it reads before the MMAs are done
    "epilogue_other_buffer": 4,  # the epilogue reads buffer (t + 1) % 2
}
CASES: Sequence[int] = (6,)     # tiles (3 per buffer)
preflight = preflight_for(STAGE, BROKEN)


def run_f5(ctx, cases: Sequence[int] = CASES, broken: Optional[str] = None) -> StageResult:
    broken = resolve_broken(STAGE, broken, BROKEN)
    rows: List[Check] = []
    t = H.Timer()
    try:
        dev, _ = device_of(ctx, STAGE)
        mod = compile_row(rows, "f5_tmem_dbuf.cu", {"BROKEN": BROKEN.get(broken, 0)}, "F5",
                          sass=["UTCOMMA", "UTCBAR", "LDTM", "UTMALDG"])
        for tiles in (cases if mod is not None else ()):
            n, k = 32 * tiles, 256
            tag = f"{tiles} tiles of 128x32 (K={k}) in one CTA, accumulators alternating"
            seed = H.fresh_seed()
            a, sfa = nvfp4_operands(seed, 128, k)
            b, sfb = nvfp4_operands(seed + 1, n, k)
            bufs = [dev.to_device(x) for x in (pack_fp4(a), pack_fp4(b), to_blocked(sfa).reshape(-1),
                                               to_blocked(sfb).reshape(-1))]
            maps = [mat_map(dev, bufs[0], k, 128, 128), mat_map(dev, bufs[1], k, n, 32), sf_map(dev, bufs[2], 128, k, 16),
                    sf_map(dev, bufs[3], n, k, 16)]
            out = H.poisoned(dev, 4 * tiles * 128 * 32)
            if not launched(dev, rows, STAGE, tag, seed, lambda: dev.launch(
                    mod, "f5_tmem_dbuf", grid=(1, 1, 1), block=(192, 1, 1), shared_bytes=2 * 24576 + 1024,
                    args=[*maps, out, np.uint32(tiles)])):
                continue
            got = dev.to_host(out, np.uint32).reshape(tiles, 128, 32)
            exp = H.f32_bits(exact_dot(a, sfa, b, sfb).reshape(128, tiles, 32).transpose(1, 0, 2))
            diff = first_diff(got, exp)
            hint = ""
            if diff:
                bad_tiles = sorted({int(x) for x in np.argwhere(got != exp)[:, 0]})
                same = [u for u in bad_tiles if any(np.array_equal(got[u], exp[v]) for v in range(tiles) if v != u)]
                hint = f"; wrong tiles {bad_tiles}" + (f", tiles {same} hold another tile's result: an accumulator "
                                                      "was refilled before the epilogue had read it" if same else "")
            rows.append(Check(f"every tile == float64 sums, exact ({tag})", not diff,
                              f"seed={seed}" + (f": {diff} (tile, row, column){hint}" if diff else f"; {got.size} words")))
    except Refused as r:
        return r.result
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2)})
