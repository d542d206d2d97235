"""Stage F3: the ordered (deterministic) split-K fixup of blocks/splitk.cuh, as the 1sm GEMM's split-K uses it.

Kernel stages/F_gemm/f3_splitk.cu: S CTAs per 128 x 16 tile hold fresh random fp32 partial tiles (values spread over
2^-8 .. 2^8, so the order of the fp32 additions changes the bits); each stores its partial into its workspace slot and
arrives on the tile's counter; the last arriver sums the S partials in split order. The tile must equal the host's
fp32 sum ((p_0 + p_1) + ..) + p_{S-1} bit for bit, whichever split finishes last: the stage runs each case with the
splits in index order and reversed, once with the emulator's CTAs one after another (1 CTA per wave: "who is last"
then really varies and a CTA can read a slot before its writer ran), and launches twice on one workspace (the
counters must be back at 0). Outputs poisoned (0xA5) before each launch. Plain CUDA + PTX of sm_90: on a GPU without
sm_100a (an H100) the stage runs its sm_90a build.

Broken variants (``run_f3(ctx, broken=NAME)`` or ``PTXLAB_STAGE_F3_BROKEN=NAME``): each must FAIL.
"""
from __future__ import annotations

import contextlib
from typing import List, Optional, Sequence, Tuple

import numpy as np

from ptxlab.errors import DeviceUnavailable
from ptxlab.lab.registry import Check, StageResult

from .common import H, Refused, compile_row, device_of, launched, preflight_for, resolve_broken

STAGE = "F3"
BROKEN = {
    "arrival_order": 1,    # the last arriver adds its own partial first: bits depend on who finishes last
    "first_arriver": 2,    # the first arriver does the fixup: it reads slots nobody has written yet
    "no_reset": 3,         # atom.inc bound S instead of S-1: the counter never returns to 0
    "wrong_slot": 4,       # split s stores into slot s+1
}
BN = 16
CASES: Tuple[Tuple[int, int, bool, bool], ...] = ((3, 3, False, False), (2, 4, True, False), (2, 3, True, True))
#: (tiles, splits, reversed split order, one CTA per emulator wave)
preflight = preflight_for(STAGE, BROKEN)


def arch_of(dev) -> str:
    """sm_100a where the device runs it, else sm_90a (an H100), else DeviceUnavailable."""
    for arch in ("sm_100a", "sm_90a"):
        if dev.arch_supported(arch):
            return arch
    raise DeviceUnavailable(f"{dev.describe()} runs neither sm_100a nor sm_90a code")


@contextlib.contextmanager
def sequential_ctas(dev, on: bool):
    """The emulator runs the CTAs of a wave in lock step (every split stores before any arrives); one CTA per wave
    runs them one after another instead. No effect on a GPU."""
    if not on or getattr(dev, "backend", "") == "cuda":
        yield
        return
    from ptxlab.emu.engine import machine

    saved = machine.WAVE_THREADS
    machine.WAVE_THREADS = 128
    try:
        yield
    finally:
        machine.WAVE_THREADS = saved


def expected(p: np.ndarray) -> np.ndarray:
    """fp32 sum over splits in split order: p (S, tiles, 128, BN) float32 -> (tiles, 128, BN) uint32 bits."""
    acc = p[0].copy()
    for s in range(1, p.shape[0]):
        acc = (acc + p[s]).astype(np.float32)
    return acc.view(np.uint32)


def run_f3(ctx, cases: Sequence[Tuple[int, int, bool, bool]] = CASES, broken: Optional[str] = None) -> StageResult:
    broken = resolve_broken(STAGE, broken, BROKEN)
    rows: List[Check] = []
    t = H.Timer()
    try:
        dev, arch = device_of(ctx, STAGE, arch_of)
    except Refused as r:
        return r.result
    mod = compile_row(rows, "f3_splitk.cu", {"BN": BN, "BROKEN": BROKEN.get(broken, 0)}, "F3", arch,
                      sass=["ATOMG.E.INC", "MEMBAR", "LDG.E.128.STRONG.GPU", "STG.E.128"])
    for tiles, splits, rev, seq in (cases if mod is not None else ()):
        assert 2 <= splits <= 8, "f3_splitk.cu holds at most MAX_SPLITS = 8 partials per row batch"
        tag = f"{tiles} tiles x {splits} splits, {'reversed' if rev else 'index'} order" + \
            (", CTAs one after another" if seq else "")
        ws = dev.empty(4 * splits * tiles * 128 * BN)
        counters = dev.empty(4 * tiles)
        dev.memset(counters, 0)
        dev.memset(ws, 0xA5)
        for launch in (1, 2):
            seed = H.fresh_seed()
            rng = np.random.default_rng(seed)
            p = (rng.uniform(-1, 1, (splits, tiles, 128, BN)) * np.exp2(rng.integers(-8, 9, (splits, tiles, 128, BN)))
                 ).astype(np.float32)
            out = H.poisoned(dev, 4 * tiles * 128 * BN)
            with sequential_ctas(dev, seq):
                ran = launched(dev, rows, STAGE, f"{tag}, launch {launch}", seed, lambda: dev.launch(
                    mod, "f3_splitk", grid=(tiles, 1, splits), block=(128, 1, 1),
                    args=[dev.to_device(p.view(np.uint32)), ws, counters, out, np.uint32(splits), np.uint32(rev)]),
                    strict_rules=False)
            if not ran:
                break
            got = dev.to_host(out, np.uint32).reshape(tiles, 128, BN)
            exp = expected(p)
            bad = np.argwhere(got != exp)
            detail = f"seed={seed}"
            if len(bad):
                i = tuple(int(v) for v in bad[0])
                poison = got[i] == 0xA5A5A5A5
                detail += (f": {len(bad)} words differ; first (tile, row, column) {i}: got {H.describe_f32(got[i])}, "
                           f"expected {H.describe_f32(exp[i])}" +
                           ("; the tile was never written: no CTA saw itself last (the counter's bound or its reset)"
                            if poison and (got[i[0]] == 0xA5A5A5A5).all() else
                            "; the partials are right, the order of the additions is not (sum in split order "
                            "0..S-1, whoever is last)" if _same_set(got[i], p[:, i[0], i[1], i[2]]) else ""))
            cnt = dev.to_host(counters, np.uint32)
            rows.append(Check(f"tile == fp32 sum in split order, bit for bit ({tag}, launch {launch})", not len(bad),
                              detail + ("" if not cnt.any() else f"; counters after the launch {cnt.tolist()}, "
                                        "expected all 0")))
            if cnt.any() and not len(bad):
                rows[-1] = Check(rows[-1].name, False, rows[-1].detail)
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2), "arch": arch})


def _same_set(got_word, parts: np.ndarray) -> bool:
    """True when got is the fp32 sum of the same partials in some other order."""
    import itertools

    g = np.uint32(got_word).view(np.float32)
    for perm in itertools.permutations(range(len(parts))):
        acc = np.float32(parts[perm[0]])
        for j in perm[1:]:
            acc = np.float32(acc + parts[j])
        if acc == g:
            return True
    return False
