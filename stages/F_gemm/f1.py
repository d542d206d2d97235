"""Stage F1: the shared operand multicast over a cluster (blocks/cluster.cuh), as the cluster GEMM uses it.

Kernel stages/F_gemm/f1_multicast.cu: C CTAs of a (1, C, 1) cluster along N each compute a 128 x 32 tile of
D = A . B^T (NVFP4, tcgen05.mma N = 32) over K, A loaded once per cluster (rank r loads 128/C rows and multicasts
them), the SFB block of four 32-row tiles split and multicast among them, a 2-slot ring released by
tcgen05.commit .multicast::cluster into empty barriers of count C. Data: fresh random e2m1 codes (all 16) and
scales from {0.5, 1, 2} each run: every sum is exact in fp32, so each CTA's TMEM must equal the host float64 sums
bit for bit (and the tensor-core model). Outputs poisoned (0xA5) before each launch.

Broken variants (``run_f1(ctx, broken=NAME)`` or ``PTXLAB_STAGE_F1_BROKEN=NAME``): each must FAIL, with a detail
that names the mistake.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from ptxlab.lab.registry import Check, StageResult
from ptxlab.numerics import pack_fp4
from ptxlab.scales import to_blocked

from .common import (H, Refused, compile_row, device_of, exact_dot, first_diff, launched, mat_map, nvfp4_operands,
                     preflight_for, resolve_broken, sf_map)

STAGE = "F1"
BROKEN = {                      # name -> BROKEN define of f1_multicast.cu
    "no_cluster_barrier": 1,    # peers multicast before this CTA's barriers are known to exist
    "commit_no_multicast": 2,   # each CTA releases a slot only in itself: the peers' empty[s] never complete
    "mask_half": 3,             # A slices multicast to the lower half of the cluster only
    "slice_at_zero": 4,         # every rank writes its A slice at offset 0 of the stage
    "no_sfb_shift": 6,          # scale-B address not moved to the tile's 32 rows of the shared SF block
}
CASES: Tuple[Tuple[int, int, int], ...] = ((4, 128, 1024), (8, 256, 512))   # (cluster C, N, K): 1 cluster each
SASS = ["UTMALDG.3D.MULTICAST", "UTMALDG.2D.MULTICAST", "UTCBAR.MULTICAST", "UCGABAR_ARV", "UTCOMMA"]
preflight = preflight_for(STAGE, BROKEN)


def _maps(dev, a_buf, b_buf, sfa_buf, sfb_buf, n: int, k: int, c: int):
    return [mat_map(dev, a_buf, k, 128, 128 // c), mat_map(dev, b_buf, k, n, 32), sf_map(dev, sfa_buf, 128, k, 16 // c),
            sf_map(dev, sfb_buf, n, k, 4)]


def _hint(got: np.ndarray, exp: np.ndarray, c: int) -> str:
    """Name the likely mistake from which rows / tiles of the readback (n_tile, row, column) are wrong."""
    bad = np.argwhere(got != exp)
    tiles = np.unique(bad[:, 0])
    if len(tiles) and not (tiles % 4 == 0).any():
        return ("; only n tiles with n % 4 != 0 are wrong: their 32 rows are the (n % 4)-th quarter of the shared "
                "128-row SF block, so the scale-B TMEM address must move (n % 4) columns")
    t, r = int(bad[0][0]), int(bad[0][1])
    same = [q for q in range(128) if q != r and np.array_equal(got[t, r], exp[t, q])]
    where = (f"row {r} holds the sums of A row {same[0]} (rank {same[0] // (128 // c)}'s slice)" if same else
             f"rows of all {c} ranks' slices are wrong" if len(np.unique(bad[:, 1] // (128 // c))) == c else "")
    if where:
        return (f"; {where}: the stage's A image is not the A tile, check where each rank's multicast slice lands "
                f"(rank q's {128 // c} rows belong at q*{128 // c}*128 B of the stage)")
    return ""


def run_f1(ctx, cases: Sequence[Tuple[int, int, int]] = CASES, broken: Optional[str] = None) -> StageResult:
    broken = resolve_broken(STAGE, broken, BROKEN)
    rows: List[Check] = []
    t = H.Timer()
    try:
        dev, _ = device_of(ctx, STAGE)
        for (c, n, k) in cases:
            tag = f"cluster (1,{c},1), N={n} (tiles of 32), K={k}"
            mod = compile_row(rows, "f1_multicast.cu", {"NC": c, "BROKEN": BROKEN.get(broken, 0)}, tag, sass=SASS)
            if mod is None:
                continue
            seed = H.fresh_seed()
            a, sfa = nvfp4_operands(seed, 128, k)
            b, sfb = nvfp4_operands(seed + 1, n, k)
            bufs = [dev.to_device(x) for x in (pack_fp4(a), pack_fp4(b), to_blocked(sfa).reshape(-1),
                                               to_blocked(sfb).reshape(-1))]
            d = H.poisoned(dev, 4 * n * 128)
            if not launched(dev, rows, STAGE, tag, seed, lambda: dev.launch(
                    mod, "f1_multicast", grid=(1, n // 32, 1), block=(128, 1, 1), cluster=(1, c, 1),
                    shared_bytes=2 * (16384 + 4096 + 4096) + 1024,
                    args=[*_maps(dev, *bufs, n, k, c), d, np.uint32(k), np.uint32(n)])):
                continue
            got = dev.to_host(d, np.uint32).reshape(n // 32, 128, 32)
            exp = H.f32_bits(exact_dot(a, sfa, b, sfb).reshape(128, n // 32, 32).transpose(1, 0, 2))
            diff = first_diff(got, exp)
            rows.append(Check(f"every CTA's TMEM == float64 sums, exact ({tag})", not diff,
                              f"seed={seed}" + (f": {diff} (n_tile, row, column){_hint(got, exp, c)}" if diff
                                                else f"; {got.size} words")))
    except Refused as r:
        return r.result
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2)})
