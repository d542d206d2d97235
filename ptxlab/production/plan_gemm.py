"""Host-side plan of the tcgen05 NVFP4 GEMM: tile constants, shape checks, SMEM sizes, tensor-map parameters, split-K
and variant settings, launch geometry.

One definition for the lab (``ptxlab.production.gemm``) and the gpu-mode adapter (``submission_gemm.py``), which both
import it; ``lab.py export`` writes this text in place of the adapter's import line, so the exported file stays
self-contained (and its ``GEMM_SPLITS`` / ``GEMM_VARIANT`` lines are the ones ``--splits`` / ``--variant`` bake).
Standard library only.
"""
from __future__ import annotations

import os
from typing import Any

KERNEL_FILE = "nvfp4_gemm_tcgen05.cu"
KERNEL_NAME = "nvfp4_gemm_tcgen05"
THREADS = 192  # warp 0 TMA producer, warp 1 MMA issuer, warps 2-5 epilogue
BM = 128  # tile M
BK_BYTES = 128  # bytes of packed fp4 per row per K block (K block = 256)
SF_BOX = (128, 16)  # bytes x rows: 2048 B = 4 SF blocks of 512 B (128 rows x 256 K)
DEFAULT_STAGES = {128: 4, 256: 4}  # TMA ring depth per tile N
GEMM_SPLITS = 1  # split-K default: 1 | S | "auto" (export --splits bakes it; env PTXLAB_GEMM_SPLITS overrides)
SPLITS_ENV = "PTXLAB_GEMM_SPLITS"
GEMM_VARIANT = "1sm"  # "1sm" (one CTA per 128 x BN tile) | "2sm" (CTA pairs; export --variant bakes it; env overrides)
VARIANT_ENV = "PTXLAB_GEMM_VARIANT"
VARIANTS = ("1sm", "2sm")
PAIR_CLUSTER = (2, 1, 1)
B200_SMS = 148

# CUtensorMap* enum values (cuda.h) of the parameters used here (ptxlab.tensormap has the full tables)
_DTYPE_CODES = {"UINT8": 0}
_SWIZZLE_CODES = {"none": 0, "128B": 3}
_INTERLEAVE_CODES = {"none": 0}
_L2_PROMOTION_CODES = {"none": 0}
_OOB_FILL_CODES = {"none": 0}


# ------------------------------------------------------------------------------------------------ host-side plan
def choose_bn(n: int) -> int:
    """Tile N: 256 when N allows it (fewer CTAs re-reading A), else 128."""
    return 256 if n % 256 == 0 else 128


def check_shape(m: int, n: int, k: int, l: int, bn: int) -> None:
    if min(m, n, k, l) <= 0:
        raise ValueError(f"nvfp4 GEMM: sizes must be positive, got M={m} N={n} K={k} L={l}")
    if m % BM:
        raise ValueError(f"nvfp4 GEMM: M={m} must be a multiple of the tile M {BM}")
    if n % bn:
        raise ValueError(f"nvfp4 GEMM: N={n} must be a multiple of the tile N {bn}")
    if k % 256:
        raise ValueError(f"nvfp4 GEMM: K={k} must be a multiple of 256 (one 128-B swizzle row per pipeline stage)")
    if m // BM > 2**31 - 1 or n // bn > 65535 or l > 65535:
        raise ValueError(f"nvfp4 GEMM: grid ({m // BM}, {n // bn}, {l}) too large")


def stage_bytes(bn: int, pair: bool = False) -> int:
    """Bytes one pipeline stage of one CTA receives (1-SM: = the kernel's compile-time expect_tx; 2-SM: each CTA
    holds half of the B tile, and the even CTA expects twice this, both CTAs' bytes)."""
    return BM * BK_BYTES + (bn // 2 if pair else bn) * BK_BYTES + 2048 + 2048 * (bn // 128)


def shared_bytes(bn: int, stages: int, pair: bool = False) -> int:
    return stages * stage_bytes(bn, pair) + 1024  # + slack to round the dynamic SMEM base up to 1024 B


def _sf_rows(mn: int, k: int, l: int) -> int:
    """128-B rows of a permuted SF tensor's memory (L, ceil(mn/128), ceil(K/64), 32, 4, 4)."""
    return l * (-(-mn // 128)) * (-(-k // 64)) * 512 // 128


def tensor_map_params(m: int, n: int, k: int, l: int, bn: int, pair: bool = False) -> dict[str, dict[str, Any]]:
    """Every cuTensorMapEncodeTiled input but the address, per kernel operand (a, b, sfa, sfb), innermost dim first,
    strides in bytes for dims 1.. (the driver's convention). The single source of truth: ``ptxlab.production.gemm``
    builds its maps from this function too.

    a, b: physical (L, rows, K/2) bytes -> 3-D UINT8 {K/2, rows, L}, box {128 B, 128 | BN rows, 1}, SWIZZLE_128B;
    sfa_permuted / sfb_permuted: physical (L, rest, K/64, 32, 4, 4) bytes -> 2-D UINT8 {128 B, total/128 rows},
    box {128, 16} (4 consecutive 512-B SF blocks), no swizzle. pair (2-SM build): the b box has BN/2 rows."""
    kb = k // 2
    common = {"dtype": "UINT8", "interleave": "none", "l2_promotion": "none", "oob_fill": "none"}

    def mat(rows: int, box_rows: int) -> dict[str, Any]:
        return {**common, "global_shape": (kb, rows, l), "global_strides": (kb, rows * kb),
                "box": (BK_BYTES, box_rows, 1), "element_strides": (1, 1, 1), "swizzle": "128B"}

    def sf(mn: int) -> dict[str, Any]:
        return {**common, "global_shape": (128, _sf_rows(mn, k, l)), "global_strides": (128,), "box": SF_BOX,
                "element_strides": (1, 1), "swizzle": "none"}

    return {"a": mat(m, BM), "b": mat(n, bn // 2 if pair else bn), "sfa": sf(m), "sfb": sf(n)}


def check_splits(splits: Any, k: int, l: int) -> int:
    """Validated split-K factor: an integer 1 <= splits <= K/256 (every split gets at least one K block of 256;
    uneven splits are fine) with L * splits <= 65535 (grid z). ``ptxlab.production.gemm`` uses this function."""
    if isinstance(splits, bool) or not hasattr(splits, "__index__"):
        raise ValueError(f"nvfp4 GEMM: splits must be an integer >= 1, got {splits!r}")
    s = int(splits.__index__())
    if s < 1:
        raise ValueError(f"nvfp4 GEMM: splits={s} must be >= 1 (1 = no split-K)")
    if s > k // 256:
        raise ValueError(f"nvfp4 GEMM: splits={s} exceeds the K/256 = {k // 256} K blocks of K={k} (each split needs "
                         "at least one block of 256)")
    if l * s > 65535:
        raise ValueError(f"nvfp4 GEMM: grid z = L*splits = {l * s} exceeds 65535")
    return s


def choose_splits(m: int, n: int, k: int, l: int = 1, bn: int | None = None, sms: int = B200_SMS,
                  min_k_blocks: int = 2) -> int:
    """A split-K factor for one wave: the largest S with tiles * S <= sms (the kernel runs 1 CTA per SM: its SMEM
    ring needs > half an SM's 228 KiB, so tiles * S > sms would start a second, mostly empty wave) and at least
    `min_k_blocks` K blocks of 256 per split; 1 when the tiles alone fill the GPU. The single implementation
    (``ptxlab.production.gemm`` imports it); used only when asked for (``auto``): unmeasured on a B200.
    E.g. 128x7168x16384, BN 256: 28 tiles -> 5."""
    bn = choose_bn(n) if bn is None else int(bn)
    tiles = (m // BM) * (n // bn) * l
    if tiles <= 0 or tiles >= sms:
        return 1
    return max(1, min(sms // tiles, (k // 256) // max(1, int(min_k_blocks)), 65535 // l))


def parse_splits(value: Any, source: str = "splits") -> int | str:
    """A split-K setting: ``"auto"`` or an integer >= 1 (int, or a decimal string as in the environment);
    ValueError naming `source` otherwise."""
    if isinstance(value, str):
        v = value.strip()
        if v.lower() == "auto":
            return "auto"
        if v.isdecimal() and 1 <= int(v) <= 65535:
            return int(v)
    elif not isinstance(value, bool) and hasattr(value, "__index__") and 1 <= int(value.__index__()) <= 65535:
        return int(value.__index__())
    raise ValueError(f"nvfp4_gemm: {source}={value!r} is not a split-K setting: use 1 (no split-K, the default), an "
                     "integer 2 <= S <= 65535 (the grid's z limit), or 'auto' (choose_splits)")


def resolve_splits(m: int, n: int, k: int, l: int, setting: Any = None) -> int:
    """The split-K factor for a shape: `setting`, else the environment's PTXLAB_GEMM_SPLITS, else GEMM_SPLITS.
    'auto' -> choose_splits; an integer S -> min(S, K/256, 65535 // L) (one setting for every shape)."""
    if setting is None:
        env = os.environ.get(SPLITS_ENV)
        setting, source = (GEMM_SPLITS, "GEMM_SPLITS") if env is None or env.strip() == "" else (env, SPLITS_ENV)
    else:
        source = "splits"
    s = parse_splits(setting, source)
    if s == "auto":
        return choose_splits(m, n, k, l)
    return max(1, min(s, k // 256, 65535 // l))


def parse_variant(value: Any, source: str = "variant") -> str:
    """"1sm" or "2sm" (case-insensitive); ValueError naming `source` otherwise."""
    v = str(value).strip().lower() if isinstance(value, str) else None
    if v not in VARIANTS:
        raise ValueError(f"nvfp4_gemm: {source}={value!r} is not a GEMM variant: use '1sm' (one CTA per 128 x BN "
                         "tile, the default) or '2sm' (CTA pairs with tcgen05 cta_group::2 on 256 x BN tiles)")
    return v


def variant_is_pair(variant: Any, splits: int) -> bool:
    """True for the 2sm variant (CTA pairs), False for 1sm (:func:`parse_variant`); ValueError for 2sm with
    split-K (splits != 1), a combination the kernel does not have."""
    pair = parse_variant(variant) == "2sm"
    if pair and splits != 1:
        raise ValueError(f"nvfp4 GEMM: the 2sm variant does not combine with split-K (splits={splits})")
    return pair


def resolve_variant(setting: Any = None) -> str:
    """The GEMM variant: `setting`, else the environment's PTXLAB_GEMM_VARIANT, else GEMM_VARIANT."""
    if setting is None:
        env = os.environ.get(VARIANT_ENV)
        setting, source = (GEMM_VARIANT, "GEMM_VARIANT") if env is None or env.strip() == "" else (env, VARIANT_ENV)
        return parse_variant(setting, source)
    return parse_variant(setting)


def workspace_bytes(m: int, n: int, l: int, bn: int, splits: int) -> int:
    """Device bytes split-K needs: fp32 (L, M, N) workspace + one u32 counter per tile; 0 for splits == 1."""
    return 0 if splits == 1 else l * m * n * 4 + l * (m // BM) * (n // bn) * 4


def launch_grid(m: int, n: int, l: int, bn: int, splits: int = 1, pair: bool = False) -> tuple[int, int, int]:
    """The launch grid: (M/128, N/bn, L*splits); 2sm: (2 * ceil(M/256), N/bn, L), a CTA pair per 256 rows (with
    M % 256 == 128 the last odd CTA has no rows of its own and only loads its half of B)."""
    return (2 * (-(-m // 256)), n // bn, l) if pair else (m // BM, n // bn, l * splits)


def launch_plan(m: int, n: int, k: int, l: int, splits: int = 1, variant: str = "1sm") -> dict[str, Any]:
    """Tile config and launch geometry for a shape, split-K factor and variant: bn, stages, splits, pair, grid
    (:func:`launch_grid`), cluster (None, or (2,1,1) for 2sm), block, shared_bytes (dynamic), workspace_bytes (0
    without split-K)."""
    bn = choose_bn(n)
    check_shape(m, n, k, l, bn)
    splits = check_splits(splits, k, l)
    pair = variant_is_pair(variant, splits)
    stages = DEFAULT_STAGES[bn]
    grid = launch_grid(m, n, l, bn, splits, pair)
    return {"bn": bn, "stages": stages, "splits": splits, "pair": pair, "grid": grid,
            "cluster": PAIR_CLUSTER if pair else None, "block": (THREADS, 1, 1),
            "shared_bytes": shared_bytes(bn, stages, pair), "workspace_bytes": workspace_bytes(m, n, l, bn, splits)}


def gemm_arch(major: int, minor: int) -> str:
    """NVRTC target for a GPU of compute capability major.minor; RuntimeError where tcgen05 does not exist."""
    if major != 10:
        raise RuntimeError(
            f"nvfp4_gemm custom_kernel: this kernel uses tcgen05 (TMEM, UMMA block-scaled MMA) and needs a compute "
            f"capability 10.x GPU (B200: sm_100a); this GPU is {major}.{minor}. Run it on a Blackwell datacenter GPU, "
            "or pass CPU tensors to run it on the ptxlab emulator")
    return f"sm_{major}{minor}a"  # sm_100a on B200 (the tested target); other 10.x untested
