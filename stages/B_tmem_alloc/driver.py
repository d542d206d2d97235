"""Stages B1 (TMEM alloc/dealloc/relinquish lifecycle) and B2 (tcgen05.st/ld round trip over 128 lanes).

Kernels: b1_lifecycle.cu, b2_roundtrip.cu (device code from ptxlab/kernels/blocks/tmem.cuh). Broken variants are
selected with ``run_b1(ctx, variant=...)`` / ``run_b2(ctx, variant=...)`` (tests drive them): each compiles the
kernel with a PTXLAB_BROKEN_* define (or feeds bad host inputs) and must FAIL with a detail naming the cause.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

import ptxlab
from ptxlab.kernels import KERNELS_DIR
from ptxlab.lab.dumps import NEEDS_SM100, launch_guarded, mismatch_report, write_dump
from ptxlab.lab.registry import Check, Stage, StageContext, StageResult
from ptxlab.lab.seed import stage_seed
from ptxlab.lab.state import stage_source_hash

HERE = Path(__file__).resolve().parent
ARCH = "sm_100a"
NLANES, MAXCOLS = 128, 512

B1_VARIANTS = {
    None: (),
    "non_pow2": (),  # host passes 48 columns to one CTA's first alloc
    "no_dealloc": ("PTXLAB_BROKEN_NO_DEALLOC",),
    "alloc_after_relinquish": ("PTXLAB_BROKEN_ALLOC_AFTER_RELINQUISH",),
}
B2_VARIANTS = {
    None: (),
    "wrong_quarter": ("PTXLAB_BROKEN_WRONG_QUARTER",),
    "no_wait_ld": ("PTXLAB_BROKEN_NO_WAIT_LD",),
}


def compile_kernel(fname: str, defines: Sequence[str] = ()) -> "ptxlab.toolchain.Module":
    src = "".join(f"#define {d} 1\n" for d in defines) + (HERE / fname).read_text()
    return ptxlab.compile(src, arch=ARCH, name=fname, include_dirs=[KERNELS_DIR])


def sass_check(mod, wanted: Sequence[str]) -> Check:
    from ptxlab.toolchain.sass import require

    try:
        counts = require(mod, list(wanted))
        return Check(f"SASS ({ARCH})", True, ", ".join(f"{k} x{v}" for k, v in counts.items()))
    except ptxlab.PtxlabError as exc:
        return Check(f"SASS ({ARCH})", False, str(exc))


def _meta(ctx: StageContext, stage: str, **kw) -> Dict:
    return {"stage": stage, "backend": ctx.backend_name, "arch": ARCH, "source_hash": stage_source_hash(HERE), **kw}


def _refused(rows: List[Check], detail: str) -> StageResult:
    rows.append(Check("device", False, detail))
    return StageResult.refuse(f"not run: {NEEDS_SM100}", rows)


def _variant(table: dict, variant: Optional[str], stage: str) -> Tuple[str, ...]:
    if variant not in table:
        raise ptxlab.PtxlabError(f"{stage}: unknown variant {variant!r}; known: {sorted(k for k in table if k)}")
    return table[variant]


# ------------------------------------------------------------------------------------------------ B1
def b1_counts(rng: np.random.Generator, nctas: int) -> np.ndarray:
    """Per CTA (n0, n1, n2): n0 from a shuffled set of powers of 2 (one CTA takes all 512 columns), n1 <= n0 with
    n0 + n1 <= 512 (0 = no second allocation), n2 <= the last count. Non-increasing, as PTX 9.7.16.7.1 requires."""
    pows = [32, 64, 128, 256, 512]
    n0s = list(rng.permutation([512] + list(rng.choice(pows[:4], nctas - 1))))
    out = []
    for n0 in n0s:
        n1 = 0 if n0 == 512 else int(rng.choice([p for p in pows if p <= n0 and n0 + p <= 512]))
        last = n1 or n0
        n2 = int(rng.choice([p for p in pows if p <= last]))
        out.append((int(n0), n1, n2))
    return np.array(out, dtype=np.uint32)


def b1_rules(addrs: np.ndarray, counts: np.ndarray, nctas: int) -> List[Check]:
    """Host checks of the recorded addresses (no kernel index math involved)."""
    rows = []
    marks = addrs[:, 3]
    want = np.arange(nctas, dtype=np.uint32) ^ np.uint32(0xB1B1B1B1)
    rows.append(Check("every CTA ran and recorded", bool(np.array_equal(marks, want)),
                      f"markers {[hex(int(m)) for m in marks]}"))
    bad: List[str] = []
    for cta in range(nctas):
        live = []
        for i in range(3):
            n = int(counts[cta, i])
            if n == 0:
                if addrs[cta, i] != 0xFFFFFFFF:
                    bad.append(f"CTA {cta} alloc {i}: skipped but address {addrs[cta, i]:#x} recorded")
                continue
            a = int(addrs[cta, i])
            lane, col = a >> 16, a & 0xFFFF
            if lane != 0:
                bad.append(f"CTA {cta} alloc {i} ({n} cols): address {a:#010x} has lane {lane}, expected 0 "
                           "(PTX 9.7.16.7.1: the allocation starts at lane 0)")
            if col % 32 or col + n > MAXCOLS:
                bad.append(f"CTA {cta} alloc {i} ({n} cols): column {col} not a multiple of 32 or past column 511")
            if i < 2:
                live.append((col, n, i))
        if len(live) == 2:
            (c0, n0, _), (c1, n1, _) = live
            if c0 < c1 + n1 and c1 < c0 + n0:
                bad.append(f"CTA {cta}: live allocations overlap: [{c0},{c0 + n0}) and [{c1},{c1 + n1})")
    rows.append(Check("addresses: lane 0, 32-col units, in range, live ranges disjoint", not bad,
                      "; ".join(bad) if bad else f"{int((counts > 0).sum())} allocations ok"))
    return rows


def run_b1(ctx: StageContext, variant: Optional[str] = None, seed: Optional[int] = None) -> StageResult:
    defines = _variant(B1_VARIANTS, variant, "B1")
    seed = stage_seed() if seed is None else seed      # PTXLAB_SEED / lab.py --seed N replays a run's data
    rng = np.random.default_rng(seed)
    nctas = 4
    counts = b1_counts(rng, nctas)
    if variant == "non_pow2":
        counts[1] = (48, 32, 32)
    rows: List[Check] = []
    mod = compile_kernel("b1_lifecycle.cu", defines)
    rows.append(Check("compile", True, f"{mod.name} for {ARCH}; data seed={seed}"))
    rows.append(sass_check(mod, ["UTCATOMSWS"]))
    holder: Dict = {}

    def dev():
        holder["dev"] = ctx.device
        return holder["dev"]

    try:
        d = dev()
    except ptxlab.DeviceUnavailable as exc:
        return _refused(rows, f"{NEEDS_SM100}: {exc}")
    out = d.empty(nctas * 16)
    d.memset(out, 0xA5)
    res = launch_guarded(dev, mod, "b1_lifecycle", grid=(nctas, 1, 1), block=(128, 1, 1),
                         args=[d.to_device(counts.reshape(-1)), out])
    if res.refused:
        return _refused(rows, res.detail)
    rows.append(Check("launch (4 CTAs x 128 threads)", res.ok, res.detail or f"counts per CTA {counts.tolist()}"))
    if not res.ok:
        return StageResult.from_rows(rows)
    addrs = d.to_host(out, np.uint32).reshape(nctas, 4)
    rows += b1_rules(addrs, counts, nctas)
    return StageResult.from_rows(rows, metrics={"counts": counts.tolist(),
                                                "addresses": [[hex(int(a)) for a in r[:3]] for r in addrs]})


# ------------------------------------------------------------------------------------------------ B2
def run_b2(ctx: StageContext, variant: Optional[str] = None, seed: Optional[int] = None,
           ncols: Optional[int] = None) -> StageResult:
    defines = _variant(B2_VARIANTS, variant, "B2")
    seed = stage_seed() if seed is None else seed      # PTXLAB_SEED / lab.py --seed N replays a run's data
    rng = np.random.default_rng(seed)
    ncols = int(ncols or rng.choice([128, 256, 512]))
    x = rng.integers(1, 2**32, size=(NLANES, ncols), dtype=np.uint64).astype(np.uint32)  # non-zero words
    rows: List[Check] = []
    mod = compile_kernel("b2_roundtrip.cu", defines)
    rows.append(Check("compile", True, f"{mod.name} for {ARCH}; data seed={seed}"))
    rows.append(sass_check(mod, ["UTCATOMSWS", "STTM", "LDTM"]))
    try:
        d = ctx.device
    except ptxlab.DeviceUnavailable as exc:
        return _refused(rows, f"{NEEDS_SM100}: {exc}")
    out = d.empty(x.nbytes)
    d.memset(out, 0xA5)  # poison (a run that writes nothing fails the exact compare)
    res = launch_guarded(lambda: d, mod, "b2_roundtrip", grid=(1, 1, 1), block=(128, 1, 1),
                         args=[d.to_device(x), out, np.uint32(ncols)])
    if res.refused:
        return _refused(rows, res.detail)
    rows.append(Check(f"launch (128 threads, {ncols} columns)", res.ok, res.detail))
    if not res.ok:
        return StageResult.from_rows(rows)
    got = d.to_host(out, np.uint32).reshape(NLANES, ncols)
    rep = mismatch_report(got, x, decode="u32")
    rows.append(Check("st/ld round trip, 128 lanes x all columns (exact)", not rep,
                      rep or f"{x.size} words equal"))
    dump = write_dump(ctx.dump_dir, "B2", "tmem_roundtrip", {"got": got, "expected": x},
                      _meta(ctx, "B2", axes=["lane", "column"], decode="u32", ncols=ncols,
                            variant=variant or ""))
    return StageResult.from_rows(rows, metrics={"ncols": ncols}, dump_paths=[dump])


STAGES = [
    Stage("B1", "TMEM alloc/dealloc/relinquish lifecycle",
          "4 CTAs, random power-of-2 column counts: lane-0 addresses, 32-col units, disjoint live ranges, "
          "no leak", lambda ctx: run_b1(ctx)),
    Stage("B2", "TMEM tcgen05.st/ld round trip",
          "random words over 128 lanes x all allocated columns, 4 warps each in its quarter; exact; TMEM dump",
          lambda ctx: run_b2(ctx)),
]
