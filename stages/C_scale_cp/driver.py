"""Stage C1: NVFP4 scale-factor blocks SMEM -> TMEM with tcgen05.cp.cta_group::1.32x128b.warpx4.

Kernel c1_sf_copy.cu (blocks/scales.cuh + tmem.cuh + mbarrier.cuh). Inputs: a fresh gpu-mode NvFp4Problem (random
M, N, K, L each run); the kernel gets the MEMORY of sfa_permuted / sfb_permuted (what gpu-mode hands a kernel) and
copies K-chunk blocks of one random (l, m-block, n-block). Expected TMEM image is computed from the REFERENCE sfa/sfb
tensors ([MN, K/16, L], not the permuted ones) by the semantic rule (ptx_facts §6):
    word (lane i + 32q, column 8kc + c) byte j = SFA[128*mblk + 32c + i, 4kc + j, l]   (SFB at column 8kc + 4 + c)
so neither the kernel's index math nor ptxlab.scales is used on the expected path.

Variants (tests): "wrong_reshape" feeds blocks built on the host with the (m,32,4) row split instead of (m,4,32);
"no_commit_wait" skips the mbarrier wait on the tcgen05.commit; "no_proxy_fence" drops the fence.proxy.async between
the threads' generic SMEM stores and the tcgen05.cp that reads them (a race on hardware; the emulator's proxy check,
ptxlab/emu/hw/proxy.py, reports it).
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence

import numpy as np

import ptxlab
from ptxlab.gpumode import generate_gemm
from ptxlab.kernels import KERNELS_DIR
from ptxlab.lab.dumps import NEEDS_SM100, launch_guarded, mismatch_report, write_dump
from ptxlab.lab.registry import Check, Stage, StageContext, StageResult
from ptxlab.lab.seed import stage_seed
from ptxlab.lab.state import stage_source_hash

HERE = Path(__file__).resolve().parent
ARCH = "sm_100a"
VARIANTS = {None: (), "wrong_reshape": (), "no_commit_wait": ("PTXLAB_BROKEN_NO_COMMIT_WAIT",),
            "no_proxy_fence": ("PTXLAB_BROKEN_NO_PROXY_FENCE",)}


def compile_kernel(defines: Sequence[str] = ()) -> "ptxlab.toolchain.Module":
    src = "".join(f"#define {d} 1\n" for d in defines) + (HERE / "c1_sf_copy.cu").read_text()
    return ptxlab.compile(src, arch=ARCH, name="c1_sf_copy.cu", include_dirs=[KERNELS_DIR])


def host_blocked(sf_ref: np.ndarray, order: str = "m,4,32") -> np.ndarray:
    """SF bytes in blocked order built from the reference [MN, SFK, L] tensor, independently of ptxlab.scales:
    per (l, 128-row group g, K-chunk kc) a 512-B block of (32, 4, 4) = (row % 32, row // 32, K-block) when
    order == "m,4,32" (row = 32a + i, correct), or rows split (32, 4) = (row // 4, row % 4) for "m,32,4" (bug)."""
    mn, sfk, L = sf_ref.shape
    out = []
    for l in range(L):
        for g in range(mn // 128):
            for kc in range(sfk // 4):
                blk = sf_ref[128 * g:128 * g + 128, 4 * kc:4 * kc + 4, l]  # (128 rows, 4 K-blocks)
                if order == "m,4,32":
                    b = blk.reshape(4, 32, 4).transpose(1, 0, 2)  # [i, a, j] = row 32a + i
                elif order == "m,32,4":
                    b = blk.reshape(32, 4, 4)  # [i, a, j] = row 4i + a  (the bug)
                else:
                    raise ValueError(order)
                out.append(np.ascontiguousarray(b).reshape(-1))
    return np.concatenate(out).astype(np.uint8)


def permuted_memory(sf_perm: np.ndarray) -> np.ndarray:
    """The bytes a kernel sees for the gpu-mode permuted tensor (32, 4, rest_m, 4, rest_k, L): its memory order is
    (L, rest_m, rest_k, 32, 4, 4) (ptx_facts §8)."""
    return np.ascontiguousarray(np.asarray(sf_perm).transpose(5, 2, 4, 0, 1, 3)).reshape(-1)


def expected_image(sfa: np.ndarray, sfb: np.ndarray, l: int, mblk: int, nblk: int, nk: int,
                   row_of=lambda i, c: 32 * c + i) -> np.ndarray:
    """lanes x (8*nk) words: per K-chunk 4 SFA then 4 SFB columns; row_of(i, c) is the source row of (lane i, col c)."""
    img = np.zeros((128, 8 * nk), dtype=np.uint32)
    for lane in range(128):
        i = lane % 32  # every quarter q holds the same replica
        for kc in range(nk):
            for c in range(4):
                for half, (sf, blk) in enumerate(((sfa, mblk), (sfb, nblk))):
                    r = 128 * blk + row_of(i, c)
                    w = 0
                    for j in range(4):
                        w |= int(sf[r, 4 * kc + j, l]) << (8 * j)
                    img[lane, 8 * kc + 4 * half + c] = w
    return img


def run_c1(ctx: StageContext, variant: Optional[str] = None, seed: Optional[int] = None) -> StageResult:
    if variant not in VARIANTS:
        raise ptxlab.PtxlabError(f"C1: unknown variant {variant!r}; known: {sorted(k for k in VARIANTS if k)}")
    seed = stage_seed() if seed is None else seed      # PTXLAB_SEED / lab.py --seed N replays a run's data
    rng = np.random.default_rng(seed)
    rest_m_a, rest_m_b = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    rest_k, L = int(rng.integers(2, 7)), int(rng.integers(1, 3))
    M, N, K = 128 * rest_m_a, 128 * rest_m_b, 64 * rest_k
    p = generate_gemm(M, N, K, L, seed=int(rng.integers(0, 2**31)))
    l, mblk, nblk, nk = int(rng.integers(0, L)), int(rng.integers(0, rest_m_a)), int(rng.integers(0, rest_m_b)), rest_k
    shape = dict(M=M, N=N, K=K, L=L, l=l, mblk=mblk, nblk=nblk, kchunks=nk)

    rows: List[Check] = []
    a_mem, b_mem = permuted_memory(p.sfa_permuted), permuted_memory(p.sfb_permuted)
    same = np.array_equal(a_mem, host_blocked(p.sfa)) and np.array_equal(b_mem, host_blocked(p.sfb))
    rows.append(Check("gpu-mode permuted SF memory == host (m,4,32) blocking of the reference SFs", same,
                      "(32,4,rest_m,4,rest_k,L) tensor, memory (L,rest_m,rest_k,32,4,4)"))
    if variant == "wrong_reshape":
        a_mem, b_mem = host_blocked(p.sfa, "m,32,4"), host_blocked(p.sfb, "m,32,4")

    mod = compile_kernel(VARIANTS[variant])
    rows.append(Check("compile", True, f"{mod.name} for {ARCH}; data seed={seed}"))
    from ptxlab.toolchain.sass import require

    try:
        counts = require(mod, ["UTCATOMSWS", "UTCCP", "UTCBAR", "LDTM"])
        rows.append(Check(f"SASS ({ARCH})", True, ", ".join(f"{k} x{v}" for k, v in counts.items())))
    except ptxlab.PtxlabError as exc:
        rows.append(Check(f"SASS ({ARCH})", False, str(exc)))
    try:
        d = ctx.device
    except ptxlab.DeviceUnavailable as exc:
        rows.append(Check("device", False, f"{NEEDS_SM100}: {exc}"))
        return StageResult.refuse(f"not run: {NEEDS_SM100}", rows)
    out = d.empty(128 * 8 * nk * 4)
    d.memset(out, 0xA5)
    res = launch_guarded(lambda: d, mod, "c1_sf_copy", grid=(1, 1, 1), block=(128, 1, 1),
                         args=[d.to_device(a_mem), d.to_device(b_mem), out, np.uint32(rest_m_a), np.uint32(rest_m_b),
                               np.uint32(rest_k), np.uint32(l), np.uint32(mblk), np.uint32(nblk), np.uint32(nk)])
    if res.refused:
        rows.append(Check("device", False, res.detail))
        return StageResult.refuse(f"not run: {NEEDS_SM100}", rows)
    rows.append(Check(f"launch ({nk} K-chunks, SFA+SFB per chunk)", res.ok, res.detail or str(shape)))
    if not res.ok:
        return StageResult.from_rows(rows, metrics=shape)
    got = d.to_host(out, np.uint32).reshape(128, 8 * nk)
    exp = expected_image(p.sfa, p.sfb, l, mblk, nblk, nk)

    def label(col: int) -> str:
        kc, r = divmod(col, 8)
        which, c = ("SFA", r) if r < 4 else ("SFB", r - 4)
        return f"{which} K-chunk {kc} word {c}: rows 32*{c}+lane%32, K-blocks {4 * kc}..{4 * kc + 3}"

    rep = mismatch_report(got, exp, decode="ue4m3x4", col_label=label)
    if rep:
        alt = expected_image(p.sfa, p.sfb, l, mblk, nblk, nk, row_of=lambda i, c: 4 * i + c)
        if np.array_equal(got, alt):
            rep = ("diagnosis: TMEM holds SF blocks whose rows were split (m,32,4) (row 4i+c at lane i, col c) "
                   "instead of (m,4,32) (row 32c+i); fix the SF reshape/permute order to gpu-mode's "
                   "(32,4,rest_m,4,rest_k,L) (ptx_facts §6, §8)\n" + rep)
    rows.append(Check("TMEM image == host SF image, all 128 lanes (4 replicas) x 8 cols/chunk (exact)", not rep,
                      rep or f"{exp.size} words equal"))
    dump = write_dump(ctx.dump_dir, "C1", "tmem_sf", {"got": got, "expected": exp},
                      {"backend": ctx.backend_name, "arch": ARCH, "source_hash": stage_source_hash(HERE),
                       "axes": ["lane", "column"], "decode": "ue4m3x4", "variant": variant or "", **shape})
    return StageResult.from_rows(rows, metrics=shape, dump_paths=[dump])


STAGES = [
    Stage("C1", "SF blocks SMEM->TMEM (tcgen05.cp 32x128b.warpx4)",
          "random gpu-mode SFA/SFB, several K-chunks: cp + commit->mbarrier, TMEM image vs host from reference SFs",
          lambda ctx: run_c1(ctx)),
]
