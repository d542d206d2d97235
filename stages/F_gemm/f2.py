"""Stage F2: the TMA-store epilogue (blocks/tma_store.cuh), as the cluster GEMM uses it.

Kernel stages/F_gemm/f2_tma_store.cu: warps 2..5 of a 192-thread CTA put host fp32 words into TMEM (tcgen05.st), then
run the block's steps (tcgen05.ld -> cvt.rn.f16x2.f32 -> SWIZZLE_64B SMEM sub-tiles -> fence.proxy.async ->
cp.async.bulk.tensor stores of {32, 32, 1} boxes -> bulk commit / wait_group.read) for two 128 x BN tiles per CTA
through the same SMEM. Data: fresh random fp32 words each run over fp16's whole range (normals, subnormals, values that
overflow to inf, exact fp16 rounding ties, signed zeros); the output (fp16, gpu-mode (L, M, N) order, poisoned 0xA5)
must equal numpy's round-to-nearest-even conversion bit for bit.

Broken variants (``run_f2(ctx, broken=NAME)`` or ``PTXLAB_STAGE_F2_BROKEN=NAME``): each must FAIL with a detail that
names the mistake.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from ptxlab.lab.registry import Check, StageResult

from .common import H, Refused, compile_row, device_of, launched, preflight_for, resolve_broken

STAGE = "F2"
BROKEN = {
    "no_proxy_fence": 1,     # generic SMEM writes read by the TMA store without fence.proxy.async
    "no_swizzle": 2,         # SMEM image written row-major, the map says SWIZZLE_64B
    "halves_swapped": 3,     # cvt.rn.f16x2.f32 operands swapped: column 2i lands in the high half
    "no_wait_read": 4,       # the SMEM is rewritten for the next tile before the stores have read it
    "wrong_quarter": 5,      # warp w stores its rows at 32*(w-2) instead of its TMEM lane quarter 32*(w%4)
}
CASES: Tuple[Tuple[int, int, int, int], ...] = ((512, 64, 2, 64), (256, 96, 1, 32))   # (M, N, L, BN)
SASS = ["UTMASTG", "STS", "LDTM", "STTM"]
preflight = preflight_for(STAGE, BROKEN)


def _values(seed: int, shape) -> np.ndarray:
    """fp32 words over fp16's range: half of them fp16 rounding ties (midpoints of adjacent fp16 values)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    mag = rng.uniform(-26.0, 17.0, n)                       # 2^-26 .. 2^17: subnormal, normal, overflow
    x = (np.exp2(mag) * rng.choice([-1.0, 1.0], n)).astype(np.float32)
    h = rng.integers(0, 0x7BFF, n).astype(np.uint16).view(np.float16).astype(np.float32)
    tie = ((h + np.nextafter(h.astype(np.float16), np.float16(np.inf)).astype(np.float32)) / 2).astype(np.float32)
    x = np.where(rng.random(n) < 0.5, x, tie * rng.choice([-1.0, 1.0], n).astype(np.float32))
    x[:4] = [0.0, -0.0, 65520.0, -1e30]                     # signed zeros, the overflow threshold, -inf
    return x.reshape(shape)


def _hint(got: np.ndarray, exp: np.ndarray, bn: int) -> str:
    bad = np.argwhere(got != exp)
    l, m, n = (int(v) for v in bad[0])
    if n % 2 == 0 and n + 1 < got.shape[2] and got[l, m, n] == exp[l, m, n + 1] and got[l, m, n + 1] == exp[l, m, n]:
        return f"; columns {n} and {n + 1} are swapped: cvt.rn.f16x2.f32 d, hi, lo puts its FIRST operand in the high half"
    row = exp[l, :, n - n % 32:n - n % 32 + 32]
    hits = [r for r in range(exp.shape[1]) if np.array_equal(got[l, m, n - n % 32:n - n % 32 + 32], row[r])]
    if hits and hits[0] == m + 128 and m % 256 < 128:
        return (f"; row {m} (a CTA's first tile) holds row {hits[0]}'s values (its second tile): the SMEM sub-tiles were "
                "rewritten before the TMA stores had read them (cp.async.bulk.wait_group.read 0 before reusing them)")
    if hits and hits[0] // 32 != m // 32:
        return (f"; row {m} holds row {hits[0]}'s values: a warp stored its 32 rows at another lane quarter's rows "
                "(epilogue warp w owns TMEM lanes 32*(w%4)..)")
    same_row = sorted(set(exp[l, m].tolist()) - set(got[l, m].tolist()))
    if not same_row:
        return ("; every value of the row is there, in another column order: the SMEM image is not the "
                "SWIZZLE_64B layout the map expects (16-B chunk c of row r at (c ^ (r/2 % 4)) * 16)")
    return ""


def run_f2(ctx, cases: Sequence[Tuple[int, int, int, int]] = CASES, broken: Optional[str] = None) -> StageResult:
    broken = resolve_broken(STAGE, broken, BROKEN)
    rows: List[Check] = []
    t = H.Timer()
    try:
        dev, _ = device_of(ctx, STAGE)
        for (m, n, l, bn) in cases:
            tag = f"c (M,N,L)=({m},{n},{l}), tiles 128x{bn}, 2 per CTA"
            mod = compile_row(rows, "f2_tma_store.cu", {"BN": bn, "BROKEN": BROKEN.get(broken, 0)}, tag, sass=SASS)
            if mod is None:
                continue
            seed = H.fresh_seed()
            acc = _values(seed, (l, m, n))
            with np.errstate(over="ignore"):          # the values above fp16's range become +-inf, as cvt.rn does
                exp = acc.astype(np.float16).view(np.uint16)
            d_acc = dev.to_device(acc.view(np.uint32))
            out = H.poisoned(dev, 2 * l * m * n)
            tm_c = dev.tensor_map(out, dtype="FLOAT16", global_shape=(n, m, l), global_strides=(2 * n, 2 * m * n),
                                  box=(32, 32, 1), element_strides=(1, 1, 1), swizzle="64B", interleave="none",
                                  l2_promotion="none", oob_fill="none")
            if not launched(dev, rows, STAGE, tag, seed, lambda: dev.launch(
                    mod, "f2_tma_store", grid=(m // 256, n // bn, l), block=(192, 1, 1),
                    shared_bytes=128 * bn * 2 + 1024, args=[tm_c, d_acc, np.uint32(m), np.uint32(n)])):
                continue
            got = dev.to_host(out, np.uint16).reshape(l, m, n)
            bad = np.argwhere(got != exp)
            detail = f"seed={seed}"
            if len(bad):
                i = tuple(int(v) for v in bad[0])
                detail += (f": {len(bad)} of {got.size} fp16 values differ; first at (l, m, n) = {i}: got "
                           f"0x{int(got[i]):04x}{' (POISON: never stored)' if got[i] == 0xA5A5 else ''}, expected "
                           f"0x{int(exp[i]):04x} (fp32 {float(acc[i])!r}){_hint(got, exp, bn)}")
            else:
                detail += f"; {got.size} values, {int(np.isinf(exp.view(np.float16)).sum())} of them +-inf"
            rows.append(Check(f"fp16 c == RNE(fp32 accumulators), every element ({tag})", not len(bad), detail))
    except Refused as r:
        return r.result
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2)})
