"""Stages D1-D4: NVFP4 GEMV tile restructure (scalar), one MMA per K chunk with TMEM readback, pipelined K loop,
and (D4, d4.py) one 2-SM MMA over a CTA pair.

Data: fresh gpu-mode nvfp4_gemv inputs each run (seed printed in the rows): codes 0..3, SFs 0..2, so every partial
sum is exact in fp32 and the kernels must match the host float64 sums bit for bit. Outputs and dumps are poisoned
(0xA5 bytes) before each launch. Kernels: D1/D2 stages/D_mma/*.cu (blocks/mma.cuh, blocks/epilogue.cuh + private
blocks/staging.cuh over blocks/tmem.cuh, scales.cuh, mbarrier.cuh; D2 stages its tiles with generic SMEM stores);
D3 the production fused GEMV ptxlab/kernels/nvfp4_gemv_tcgen05.cu (operands by TMA into a multi-stage mbarrier ring,
launched with the production tensor maps, ptxlab.production.gemv_tcgen05.launch_tile_pipeline).
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

from ptxlab.errors import DeviceUnavailable, PtxlabError
from ptxlab.gpumode import generate_gemv, reference_gemv
from ptxlab.lab.dumps import write_dump
from ptxlab.lab.registry import Check, Stage, StageContext, StageResult

from . import host as H
from .d4 import preflight as d4_preflight, run_d4

D1_SHAPES: Tuple[Tuple[int, int, int], ...] = ((128, 256, 1), (256, 1536, 2))
D2_SHAPES: Tuple[Tuple[int, int, int], ...] = ((128, 320, 1), (256, 512, 2))
D3_SHAPES: Tuple[Tuple[int, int, int], ...] = ((128, 1536, 1), (256, 1088, 2))
NB = 16  # MMA N for GEMV: b padded to 16 rows (rows 1..15 are gpu-mode's real padding rows: all compared in D2/D3)


def _dump_dir(ctx: StageContext):
    d = ctx.dump_dir
    d.mkdir(parents=True, exist_ok=True)
    return d


# ------------------------------------------------------------------------------------------------------------ D1
def run_d1(ctx: StageContext, shapes: Sequence[Tuple[int, int, int]] = D1_SHAPES) -> StageResult:
    try:
        dev = ctx.device
        H.check_device(dev)
    except DeviceUnavailable as e:
        return H.refuse_rows("D1", e)
    mod = H.compile_stage(H.HERE / "d1_scalar.cu")
    rows: List[Check] = [H.sass_row(mod, ["FFMA", "LDG"])]
    t = H.Timer()
    for (M, K, L) in shapes:
        seed = H.fresh_seed()
        p = generate_gemv(M, K, L, seed)
        u = H.upload(dev, p)
        acc = H.poisoned(dev, 4 * M * L)
        c = H.poisoned(dev, 2 * M * L)
        dev.launch(mod, "d1_scalar", grid=(M // 128, L, 1), block=(128, 1, 1),
                   args=[u.a, u.b, u.sfa, u.sfb, acc, c, np.uint32(M), np.uint32(K), np.uint32(u.b_rows)])
        got = dev.to_host(acc, np.uint32).reshape(L, M)
        exp = H.f32_bits(H.full_sums(p, 1)[:, :, 0])
        bad = np.argwhere(got != exp)
        detail = f"M={M} K={K} L={L} seed={seed}"
        if len(bad):
            l, m = bad[0]
            detail += (f": {len(bad)} rows differ; first (l={l}, m={m}) got {H.describe_f32(got[l, m])} "
                       f"expected {H.describe_f32(exp[l, m])}")
        rows.append(Check(f"fp32 accumulator == float64 sum, exact ({M}x{K}x{L})", not len(bad), detail))
        got_c = dev.to_host(c, np.uint16).reshape(L, M)
        exp_c = np.ascontiguousarray(reference_gemv(p)[:, 0, :].T).view(np.uint16)
        nbad = int((got_c != exp_c).sum())
        rows.append(Check(f"fp16 c == reference_gemv bit for bit ({M}x{K}x{L})", nbad == 0,
                          f"{nbad} of {M * L} differ" if nbad else f"{M * L} values"))
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2)})


# ------------------------------------------------------------------------------------------------------------ D2
SWIZZLE_NAMES = {0: "NONE", 1: "128B_BASE32B", 2: "128B", 4: "64B", 6: "32B"}


def diagnose_descriptors(desc: np.ndarray, nb: int = NB) -> List[str]:
    """Field-by-field comparison of chunk 0's A/B descriptors and idesc with what the SW128 staging needs."""
    from ptxlab.desc import InstrDesc, SmemDesc, tile_desc

    out: List[str] = []
    for name, d, tile, mn in (("A", int(desc[0]), int(desc[3]), 128), ("B", int(desc[1]), int(desc[4]), nb)):
        want = SmemDesc.decode(tile_desc(tile, "K", "128B", elem_bits=4, mn=mn, k=256, kblock=0))
        got = SmemDesc.decode(d)
        for f in ("start_address", "lbo", "sbo", "version", "base_offset", "lbo_mode", "swizzle"):
            if f == "lbo":  # unused for swizzled K-major
                continue
            if got.codes[f] != want.codes[f]:
                show = (lambda v: SWIZZLE_NAMES.get(v, f"invalid {v}")) if f == "swizzle" else (lambda v: v)
                out.append(f"{name} SMEM descriptor 0x{d:016x}: field {f} = {show(got.codes[f])} (code "
                           f"{got.codes[f]}), the K-major SW128 staged tile needs {show(want.codes[f])} (code "
                           f"{want.codes[f]})")
        out += [f"{name} SMEM descriptor: {e}" for e in SmemDesc.validate(d)]
    idesc = int(desc[2])
    want_i = InstrDesc.encode("mxf4nvf4", m=128, n=nb)
    if idesc != want_i:
        out.append(f"idesc 0x{idesc:08x} != 0x{want_i:08x} expected for mxf4nvf4 M=128 N={nb}: "
                   + "; ".join(InstrDesc.validate("mxf4nvf4", idesc) or ["fields differ"]))
    return out


def run_d2(ctx: StageContext, shapes: Sequence[Tuple[int, int, int]] = D2_SHAPES, broken: int = 0) -> StageResult:
    try:
        dev = ctx.device
        H.check_device(dev)
    except DeviceUnavailable as e:
        return H.refuse_rows("D2", e)
    mod = H.compile_stage(H.HERE / "d2_chunks.cu", {"NB": NB, "BROKEN": broken})
    rows: List[Check] = [H.sass_row(mod, ["UTCOMMA.4X", "UTCBAR", "LDTM", "UTCCP"])]
    dumps = []
    t = H.Timer()
    for (M, K, L) in shapes:
        seed = H.fresh_seed()
        p = generate_gemv(M, K, L, seed)
        u = H.upload(dev, p)
        nch, mtiles = K // 64, M // 128
        dump = H.poisoned(dev, 4 * L * mtiles * nch * 128 * NB)
        desc = H.poisoned(dev, 8 * 5)
        tag = f"M={M} K={K} L={L} seed={seed}"
        try:
            dev.launch(mod, "d2_chunks", grid=(mtiles, L, 1), block=(128, 1, 1),
                       args=[u.a, u.b, u.sfa, u.sfb, dump, desc, np.uint32(M), np.uint32(K), np.uint32(u.b_rows)])
        except DeviceUnavailable as e:
            return H.refuse_rows("D2", e)
        except PtxlabError as e:
            rows.append(Check(f"kernel ran ({M}x{K}x{L})", False, f"{tag}: {e}"))
            continue
        got = dev.to_host(dump, np.uint32).reshape(L, mtiles, nch, 128, NB)
        exp = H.f32_bits(H.partial_sums(p, NB).reshape(L, nch, mtiles, 128, NB).transpose(0, 2, 1, 3, 4))
        path = write_dump(_dump_dir(ctx), "D2", f"tmem_readback_{M}x{K}x{L}",      # atomic, with a completeness marker
                          {"got": got, "expected": exp, "layout": np.array("(l, m_tile, chunk, lane, column) fp32 bits"),
                           "seed": np.array(seed)})
        dumps.append(path)
        bad = np.argwhere(got != exp)
        detail = f"{tag}; {L * mtiles * nch} readbacks of 128x{NB}"
        if len(bad):
            order = np.lexsort((bad[:, 4], bad[:, 3], bad[:, 0], bad[:, 1], bad[:, 2]))  # earliest chunk first
            l, mt, kc, lane, col = (int(v) for v in bad[order[0]])
            detail = (f"{tag}: {len(bad)} words differ; first mismatch (chunk {kc}, lane {lane}, column {col}) "
                      f"[l={l}, m-tile {mt}, row m={mt * 128 + lane}]: TMEM {H.describe_f32(got[l, mt, kc, lane, col])},"
                      f" expected partial sum {H.describe_f32(exp[l, mt, kc, lane, col])}")
            if kc == 0:
                detail += "; chunk 0 is already wrong: the operand fetch (descriptors / swizzle / SF copy) is broken"
            diag = diagnose_descriptors(dev.to_host(desc, np.uint64))
            if diag:
                detail += "; " + "; ".join(diag)
            detail += f"; dump {path}"
        rows.append(Check(f"per-chunk TMEM accumulator == scalar partial sums, exact ({M}x{K}x{L})", not len(bad),
                          detail))
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2)}, dump_paths=dumps)


# ------------------------------------------------------------------------------------------------------------ D3
def first_diff(got: np.ndarray, exp: np.ndarray, what: str) -> str:
    bad = np.argwhere(got != exp)
    if not len(bad):
        return ""
    l, m, n = (int(v) for v in bad[0])
    return (f"{len(bad)} {what} differ; first (l={l}, m={m}, n={n}) got {H.describe_f32(got[l, m, n])} expected "
            f"{H.describe_f32(exp[l, m, n])}")


def run_d3(ctx: StageContext, shapes: Sequence[Tuple[int, int, int]] = D3_SHAPES) -> StageResult:
    try:
        dev = ctx.device
        H.check_device(dev)
    except DeviceUnavailable as e:
        return H.refuse_rows("D3", e)
    mod = H.compile_pipeline({"NB": NB, "DUMP_ACC": 1, "EPILOGUE": 0})
    rows: List[Check] = [H.sass_row(mod, ["UTMALDG", "UTCOMMA.4X", "UTCBAR", "LDTM", "UTCCP"])]
    t = H.Timer()
    for (M, K, L) in shapes:
        seed = H.fresh_seed()
        p = generate_gemv(M, K, L, seed)
        try:
            acc, _ = H.run_pipeline(dev, mod, p, NB, 1)
        except DeviceUnavailable as e:
            return H.refuse_rows("D3", e)
        exp = H.f32_bits(H.full_sums(p, NB))
        d = first_diff(acc, exp, "accumulator words")
        rows.append(Check(f"pipelined K loop ({-(-K // 256)} tiles x 4 chunks, TMA ring of {H.PIPELINE_STAGES}) "
                          f"accumulator exact ({M}x{K}x{L})", not d, f"M={M} K={K} L={L} seed={seed}" + (": " + d if d else "")))
    return StageResult.from_rows(rows, metrics={"emu_seconds": round(t(), 2)})


STAGES = [
    Stage("D1", "tile restructure, scalar math (CTA per 128-row tile, 64-wide K chunks, permuted SFs)",
          "fp32 accumulator == float64 sum exactly; fp16 c == reference_gemv; SASS FFMA/LDG", run_d1),
    Stage("D2", "one tcgen05.mma (mxf4nvf4 block16, 128xN16x64) per K chunk, TMEM readback after each chunk",
          "every chunk's TMEM accumulator == scalar partial sums exactly (first mismatch as chunk/lane/column); "
          "SASS UTCOMMA.4X/UTCBAR/LDTM/UTCCP", run_d2),
    Stage("D3", f"full K loop: TMA operand loads (SW128 tensor maps) into a {H.PIPELINE_STAGES}-slot mbarrier ring "
          "(full expect_tx / empty commit) and TMEM accumulation",
          "final accumulator (all 16 columns) == float64 sums exactly; SASS UTMALDG/UTCOMMA.4X/UTCBAR/LDTM/UTCCP",
          run_d3),
    Stage("D4", "2-SM MMA: a CTA pair (cluster) issues one tcgen05.mma.cta_group::2 (mxf4nvf4 block16, M=256), "
          "pair alloc, cp.cta_group::2 of the SFs, commit .multicast::cluster to both CTAs",
          "both CTAs' TMEM readback == float64 sums and the M=256 tensor-core model exactly; SASS "
          "UTCATOMSWS.2CTA/UTCCP.2CTA/UTCOMMA.2CTA/UTCBAR.2CTA.MULTICAST; broken variants (PTXLAB_STAGE_D4_BROKEN) "
          "caught", run_d4, preflight=d4_preflight),
]
