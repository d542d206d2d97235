"""Stages E1-E2: epilogue (TMEM -> registers -> fp16 -> GMEM, blocks/epilogue.cuh) and the fused NVFP4 GEMV.

The kernel is ptxlab/kernels/nvfp4_gemv_tcgen05.cu (the D3 TMA pipeline, production code) compiled with EPILOGUE=1;
the host helpers are stages/D_mma/host.py (loaded by path), which launch it through the production launcher (tensor
maps). Fresh random inputs every run, outputs poisoned before each launch.
E2 runs a representative subset of ptxlab.gpumode.GEMV_TESTS by default; set PTXLAB_E2_FULL=1 for all ten shapes.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List, Sequence, Tuple

import numpy as np

from ptxlab.errors import DeviceUnavailable, PtxlabError
from ptxlab.gpumode import GEMV_TESTS, generate_gemm, generate_gemv, reference_gemv
from ptxlab.lab.registry import Check, Stage, StageContext, StageResult, load_shared

_D = Path(__file__).resolve().parents[1] / "D_mma"


H = load_shared("ptxlab_stages_de_host", _D / "host.py")

NB = 16
PIPELINE = H.PIPELINE
E1_K = 512
# default E2 subset: smallest K, two-batch, largest-M and largest-K shapes of the task.yml list (indices into GEMV_TESTS)
E2_DEFAULT = (0, 7, 5, 6)
FULL_ENV = "PTXLAB_E2_FULL"


def launch(dev: Any, mod: Any, p: Any, nc: int, nb: int = NB) -> Tuple[np.ndarray, np.ndarray]:
    """The fused kernel on p (stages/D_mma/host.run_pipeline): (acc bits or poison, c fp16 bits)."""
    return H.run_pipeline(dev, mod, p, nb, nc)


def _f16_diff(got: np.ndarray, exp: np.ndarray) -> str:
    bad = np.argwhere(got != exp)
    if not len(bad):
        return ""
    i = tuple(int(v) for v in bad[0])
    g, e = got[i], exp[i]
    return (f"{len(bad)} of {got.size} fp16 values differ; first (l, m, n)={i}: got {np.uint16(g).view(np.float16)} "
            f"(0x{int(g):04x}{', POISON' if g == 0xA5A5 else ''}) expected {np.uint16(e).view(np.float16)} "
            f"(0x{int(e):04x})")


def _compile(**defs: int) -> Any:
    return H.compile_pipeline({"NB": NB, "EPILOGUE": 1, **defs})


# ------------------------------------------------------------------------------------------------------------ E1
def run_e1(ctx: StageContext, broken_epi: int = 0) -> StageResult:
    try:
        dev = ctx.device
        H.check_device(dev)
    except DeviceUnavailable as e:
        return H.refuse_rows("E1", e)
    mod = _compile(DUMP_ACC=0, NSTORE=NB, BROKEN_EPI=broken_epi)
    rows: List[Check] = [H.sass_row(mod, ["UTMALDG", "UTCOMMA.4X", "UTCBAR", "LDTM", "UTCCP", "F2FP"])]
    t = H.Timer()
    # (a) gpu-mode GEMV data, all 16 B rows stored as a (M, 16, L) c: exact sums -> fp16 of the float64 sum
    # (b) gpu-mode GEMM data (all fp4 codes incl. negatives, SF 0..3), N = 16: bit-exact MMA model -> fp16
    cases = [("gpu-mode GEMV data (exact)", lambda s: generate_gemv(256, E1_K, 2, s)),
             ("gpu-mode GEMM data (bit-exact model)", lambda s: generate_gemm(128, NB, E1_K, 1, s))]
    for what, gen in cases:
        seed = H.fresh_seed()
        p = gen(seed)
        tag = f"M={p.m} N={NB} K={p.k} L={p.l} seed={seed}"
        try:
            _, c = launch(dev, mod, p, NB)
        except DeviceUnavailable as e:
            return H.refuse_rows("E1", e)
        except PtxlabError as e:
            hint = ""
            if "out-of-bounds global store" in str(e):
                hint = ("; cause: the epilogue's c index left the (M, Nc, L) fp16 output -- its index math must be "
                        "c[(l*M + m)*Nc + n] with m = m0 + 32*(warp%4) + lane (TMEM lane = row), not the swizzled "
                        "SW128 SMEM tile layout ((m/8)*1024 + (m%8)*128 + chunk^(m%8) ...)")
            rows.append(Check(f"epilogue kernel ran: {what}", False, f"{tag}: {e}{hint}"))
            continue
        if p.n == 1:
            exp32 = H.full_sums(p, NB).astype(np.float32)
        else:
            exp32 = H.model_accumulator(p, NB).view(np.float32)
        exp = exp32.astype(np.float16).view(np.uint16)
        d = _f16_diff(c, exp)
        rows.append(Check(f"fp16 c (M, 16, L) == fp16(expected accumulator): {what}", not d,
                          tag + (": " + d if d else "")))
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2)})


# ------------------------------------------------------------------------------------------------------------ E2
def e2_cases(full: bool) -> List[dict]:
    return list(GEMV_TESTS) if full else [GEMV_TESTS[i] for i in E2_DEFAULT]


def run_e2(ctx: StageContext, cases: Sequence[dict] | None = None) -> StageResult:
    try:
        dev = ctx.device
        H.check_device(dev)
    except DeviceUnavailable as e:
        return H.refuse_rows("E2", e)
    from ptxlab import settings
    full = bool(settings.get(FULL_ENV))          # a bad value was refused before any stage ran (ptxlab.settings)
    cases = list(cases) if cases is not None else e2_cases(full)
    mod = _compile(DUMP_ACC=0, NSTORE=1)
    rows: List[Check] = [H.sass_row(mod, ["UTMALDG", "UTCOMMA.4X", "UTCBAR", "LDTM", "UTCCP", "F2FP"])]
    t = H.Timer()
    per: List[str] = []
    from ptxlab.progress import track   # stderr only (PTXLAB_PROGRESS); bar when stderr is a terminal

    for kw in track(cases, "E2", label=lambda kw: f"m={kw['m']} k={kw['k']} l={kw['l']}"):
        M, K, L = kw["m"], kw["k"], kw["l"]
        seed = H.fresh_seed()  # task.yml uses seed 1111 with torch's RNG; we draw fresh data of the same shape
        p = generate_gemv(M, K, L, seed)
        t0 = H.Timer()
        try:
            _, c = launch(dev, mod, p, 1)
        except DeviceUnavailable as e:
            return H.refuse_rows("E2", e)
        except PtxlabError as e:
            rows.append(Check(f"fused GEMV m={M} k={K} l={L}", False, f"seed={seed}: {e}"))
            continue
        secs = t0()
        per.append(f"{M}x{K}x{L}:{secs:.1f}s")
        exp = np.ascontiguousarray(reference_gemv(p).transpose(2, 0, 1)).view(np.uint16)  # (L, M, 1)
        d = _f16_diff(c, exp)
        rows.append(Check(f"fused GEMV m={M} k={K} l={L} == reference_gemv bit for bit", not d,
                          f"seed={seed}, {secs:.1f}s emu" + (": " + d if d else "")))
    scope = "all GEMV_TESTS" if len(cases) == len(GEMV_TESTS) else \
        f"subset {len(cases)}/{len(GEMV_TESTS)} of GEMV_TESTS (set {FULL_ENV}=1 for all)"
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 1), "shapes": scope,
                                                "per_shape": " ".join(per)})


STAGES = [
    Stage("E1", "epilogue: TMEM -> registers (tcgen05.ld 32x32b.x16 per lane quarter) -> fp16 -> GMEM (gpu-mode c)",
          "fp16 c (M,16,L) == fp16 of exact sums (GEMV data) and of the bit-exact MMA model (GEMM data); SASS", run_e1),
    Stage("E2", "fused NVFP4 GEMV A->E (128-row tiles, 64-wide MMA chunks, N padded to 16) on gpu-mode test shapes",
          "c == reference_gemv bit for bit on GEMV_TESTS (subset by default, PTXLAB_E2_FULL=1 for all); SASS", run_e2),
]
