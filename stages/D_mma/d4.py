"""Stage D4: one 2-SM MMA (tcgen05.mma.cta_group::2, kind::mxf4nvf4 block16, M=256 over a CTA pair).

Kernel stages/D_mma/d4_pair.cu (blocks/pair.cuh). Data: fresh random e2m1 codes (all 16) and UE4M3 scale factors
from {0.5, 1, 2} each run (seed in the rows): every product and every partial sum of a 64-term dot product is a
multiple of 1/16 below 2^14, so the fp32 accumulator must equal the host float64 sum bit for bit; it must also equal
the bit-exact tensor-core model (ptxlab.mma.mma) of the whole 256-row MMA. Outputs are poisoned (0xA5) before
each launch. Both CTAs' TMEM readbacks are compared (rows 0..127 = the even CTA, 128..255 = the odd CTA).

Broken variants (``run_d4(ctx, broken=NAME)`` or env ``PTXLAB_STAGE_D4_BROKEN=NAME``): each must FAIL with a detail
naming the pairing mistake. See ptx_docs/tcgen05_cta_pair.md.
"""
from __future__ import annotations

import contextlib

import os
from typing import List, Optional, Sequence, Tuple

import numpy as np

from ptxlab.errors import DeviceUnavailable, PtxlabError, UsageError
from ptxlab.lab.dumps import write_dump
from ptxlab.lab.registry import Check, StageResult
from ptxlab.numerics import pack_fp4
from ptxlab.scales import to_blocked

from . import host as H

ENV_BROKEN = "PTXLAB_STAGE_D4_BROKEN"
#: name -> (BROKEN define, launch with a cluster)
BROKEN = {
    "odd_issuer": (1, True),        # the odd CTA issues the pair MMA
    "alloc_cta_group1": (2, True),  # alloc with .cta_group::1, mma/cp/commit with ::2
    "peer_no_alloc": (3, True),     # only the even CTA's warp executes alloc.cta_group::2
    "no_multicast": (4, True),      # commit without .multicast::cluster: the odd CTA's barrier never completes
    "no_cluster": (0, False),       # launched without a cluster: no CTA pair exists
    "b_not_split": (6, True),       # both CTAs stage B rows 0..N/2-1 (B is split over the pair by N)
    "peer_no_proxy_fence": (7, True),  # the odd CTA skips fence.proxy.async before the cluster barrier
}
#: (N, cluster size, pairs): one pair in a 2-CTA cluster; two pairs in one 4-CTA cluster with N = 256
D4_CASES: Tuple[Tuple[int, int, int], ...] = ((64, 2, 1), (256, 4, 2))
SASS = ["UTCATOMSWS.2CTA", "UTCCP.T.S.2CTA", "UTCOMMA.2CTA", "UTCBAR.2CTA.MULTICAST", "UCGABAR_ARV", "LDTM"]
UE4M3 = {0x30: 0.5, 0x38: 1.0, 0x40: 2.0}


def _problem(seed: int, rows: int, n: int):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 16, (rows, 64), dtype=np.uint8)
    b = rng.integers(0, 16, (n, 64), dtype=np.uint8)
    sfa = rng.choice(list(UE4M3), (rows, 4)).astype(np.uint8)
    sfb = rng.choice(list(UE4M3), (n, 4)).astype(np.uint8)
    return a, b, sfa, sfb


def references(a, b, sfa, sfb) -> Tuple[np.ndarray, np.ndarray]:
    """(float64 sum as fp32 bits, tensor-core model bits), both (rows, N): the scalar path and ptxlab.mma."""
    from ptxlab.mma import mma
    from ptxlab.numerics import E2M1_VALUES

    sa = np.vectorize(UE4M3.get)(np.repeat(sfa, 16, axis=1)).astype(np.float64)
    sb = np.vectorize(UE4M3.get)(np.repeat(sfb, 16, axis=1)).astype(np.float64)
    exact = (E2M1_VALUES[a].astype(np.float64) * sa) @ (E2M1_VALUES[b].astype(np.float64) * sb).T
    model = np.concatenate([mma("mxf4nvf4", a[i:i + 256], b, a_fmt="e2m1", b_fmt="e2m1", sfa=sfa[i:i + 256], sfb=sfb,
                                scale_fmt="ue4m3", block=16) for i in range(0, a.shape[0], 256)])
    return H.f32_bits(exact), np.asarray(model, np.uint32)


def _first_diff(got: np.ndarray, exp: np.ndarray, n: int) -> str:
    bad = np.argwhere(got != exp)
    if not len(bad):
        return ""
    r, c = (int(x) for x in bad[0])
    cta = "even" if (r // 128) % 2 == 0 else "odd"
    msg = (f"{len(bad)} words differ; first row {r} ({cta} CTA of pair {r // 256}, lane {r % 128}), column {c}: "
           f"got {H.describe_f32(got[r, c])}, expected {H.describe_f32(exp[r, c])}")
    cols = np.unique(bad[:, 1])
    if cols.min() >= n // 2:
        msg += (f"; only columns >= N/2 = {n // 2} are wrong: B rows N/2.. come from the ODD CTA's SMEM (B is split "
                "over the pair by N): stage B rows (N/2)v.. in CTA v")
    return msg


def check_broken(broken: Optional[str]) -> None:
    """A usage error (lab.py exits 2, records nothing) unless `broken` names a variant of BROKEN (or is None)."""
    if broken is not None and broken not in BROKEN:
        raise UsageError(f"unknown D4 broken variant {broken!r} ({ENV_BROKEN}); use one of {', '.join(sorted(BROKEN))}")


def preflight() -> None:
    """lab.py's check before any stage runs: the variant named by the environment must exist."""
    check_broken(os.environ.get(ENV_BROKEN, "") or None)


def run_d4(ctx, cases: Sequence[Tuple[int, int, int]] = D4_CASES, broken: Optional[str] = None) -> StageResult:
    broken = broken if broken is not None else (os.environ.get(ENV_BROKEN, "") or None)
    check_broken(broken)
    define, with_cluster = BROKEN.get(broken, (0, True))
    try:
        dev = ctx.device
        H.check_device(dev)
    except DeviceUnavailable as e:
        return H.refuse_rows("D4", e)
    rows: List[Check] = []
    dumps = []
    t = H.Timer()
    sass_done = False
    for (n, csize, pairs) in cases:
        tag = f"M=256x{pairs} N={n} K=64, cluster ({csize},1,1)"
        try:
            mod = H.compile_stage(H.HERE / "d4_pair.cu", {"NB": n, "BROKEN": define})
        except PtxlabError as e:
            rows.append(Check(f"kernel compiles ({tag})", False, str(e)))
            continue
        if not sass_done:
            rows.append(H.sass_row(mod, SASS))
            sass_done = True
        seed = H.fresh_seed()
        a, b, sfa, sfb = _problem(seed, 256 * pairs, n)
        d = H.poisoned(dev, 4 * 256 * pairs * n)
        strict = getattr(dev, "strict_rules", None)   # the lab checks the PTX ISA text: strict emulator rules, as
        try:                                          # launch_guarded does (ptxlab/emu/checks/fidelity.py)
            with (strict("all") if callable(strict) else contextlib.nullcontext()):
                dev.launch(mod, "d4_pair", grid=(2 * pairs, 1, 1), block=(128, 1, 1),
                           cluster=(csize, 1, 1) if with_cluster else None,
                           args=[dev.to_device(pack_fp4(a)), dev.to_device(pack_fp4(b)),
                                 dev.to_device(to_blocked(sfa).view(np.uint32)),   # gpu-mode blocked 512-B SF blocks
                                 dev.to_device(to_blocked(sfb).view(np.uint32)), d])
        except DeviceUnavailable as e:
            return H.refuse_rows("D4", e)
        except PtxlabError as e:
            rows.append(Check(f"kernel ran ({tag})", False, f"seed={seed}: {e}"))
            continue
        got = dev.to_host(d, np.uint32).reshape(256 * pairs, n)
        exact, model = references(a, b, sfa, sfb)
        dump = write_dump(ctx.dump_dir, "D4", f"pair_readback_N{n}_x{pairs}",     # atomic, with a completeness marker
                          {"got": got, "exact": exact, "model": model, "seed": np.array(seed),
                           "layout": np.array("(256*pair + 128*(rank&1) + lane, column) fp32 bits")})
        dumps.append(dump)
        d1, d2 = _first_diff(got, exact, n), _first_diff(got, model, n)
        rows.append(Check(f"both CTAs' TMEM == float64 sum, exact ({tag})", not d1,
                          f"seed={seed}" + (f": {d1}; dump {dump}" if d1 else f"; {got.size} words")))
        rows.append(Check(f"both CTAs' TMEM == M=256 tensor-core model, exact ({tag})", not d2,
                          f"seed={seed}" + (f": {d2}" if d2 else "")))
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2)}, dump_paths=dumps)
