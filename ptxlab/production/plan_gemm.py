"""Host-side plan of the tcgen05 NVFP4 GEMMs: tile constants, shape checks, SMEM sizes, tensor-map parameters, split-K
and variant settings, launch geometry. Two kernels: the cluster kernel (``nvfp4_gemm_cluster.cu``, variant "cluster",
the default: narrow N tiles, A multicast over an N-cluster, TMA-store epilogue) and the 1-SM / 2-SM kernel
(``nvfp4_gemm_tcgen05.cu``, variants "1sm" and "2sm", split-K opt-in).

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
# split-K reduction: "ordered" (deterministic: the last arriver sums the splits' slots in split order) | "atomic"
# (opt-in, NON-DETERMINISTIC: fp32 red.add in arrival order); env PTXLAB_GEMM_SPLITK_REDUCE overrides
GEMM_SPLITK_REDUCE = "ordered"
SPLITK_REDUCE_ENV = "PTXLAB_GEMM_SPLITK_REDUCE"
SPLITK_REDUCES = ("ordered", "atomic")
GEMM_VARIANT = "cluster"  # "cluster" | "1sm" (one CTA per 128 x BN tile) | "2sm" (CTA pairs); export --variant bakes it
VARIANT_ENV = "PTXLAB_GEMM_VARIANT"
VARIANTS = ("cluster", "1sm", "2sm")
PAIR_CLUSTER = (2, 1, 1)
B200_SMS = 148

# CUtensorMap* enum values (cuda.h) of the parameters used here (ptxlab.tensormap has the full tables)
_DTYPE_CODES = {"UINT8": 0, "FLOAT16": 6}
_SWIZZLE_CODES = {"none": 0, "64B": 2, "128B": 3}
_INTERLEAVE_CODES = {"none": 0}
_L2_PROMOTION_CODES = {"none": 0, "256B": 3}
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
    """"cluster", "1sm" or "2sm" (case-insensitive); ValueError naming `source` otherwise."""
    v = str(value).strip().lower() if isinstance(value, str) else None
    if v not in VARIANTS:
        raise ValueError(f"nvfp4_gemm: {source}={value!r} is not a GEMM variant: use 'cluster' (narrow N tiles, A "
                         "multicast over an N-cluster, TMA-store epilogue: the default), '1sm' (one CTA per 128 x BN "
                         "tile, split-K opt-in) or '2sm' (CTA pairs with tcgen05 cta_group::2 on 256 x BN tiles)")
    return v


def variant_is_pair(variant: Any, splits: int) -> bool:
    """True for the 2sm variant (CTA pairs), False for 1sm and cluster (:func:`parse_variant`); ValueError for a
    variant other than 1sm with split-K (splits != 1), a combination the kernels do not have."""
    v = parse_variant(variant)
    if v != "1sm" and splits != 1:
        raise ValueError(f"nvfp4 GEMM: the {v} variant does not combine with split-K (splits={splits}); split-K is "
                         "an option of the 1sm variant")
    return v == "2sm"


def resolve_variant(setting: Any = None) -> str:
    """The GEMM variant: `setting`, else the environment's PTXLAB_GEMM_VARIANT, else GEMM_VARIANT."""
    if setting is None:
        env = os.environ.get(VARIANT_ENV)
        setting, source = (GEMM_VARIANT, "GEMM_VARIANT") if env is None or env.strip() == "" else (env, VARIANT_ENV)
        return parse_variant(setting, source)
    return parse_variant(setting)


def parse_reduce(value: Any, source: str = "reduce") -> str:
    """"ordered" or "atomic" (case-insensitive); ValueError naming `source` otherwise."""
    v = value.strip().lower() if isinstance(value, str) else None
    if v not in SPLITK_REDUCES:
        raise ValueError(f"nvfp4_gemm: {source}={value!r} is not a split-K reduction: use 'ordered' (deterministic, "
                         "the default) or 'atomic' (fp32 red.add in arrival order: NOT deterministic)")
    return v


def resolve_reduce(setting: Any = None) -> str:
    """The split-K reduction: `setting`, else the environment's PTXLAB_GEMM_SPLITK_REDUCE, else GEMM_SPLITK_REDUCE."""
    if setting is None:
        env = os.environ.get(SPLITK_REDUCE_ENV)
        if env is None or env.strip() == "":
            return parse_reduce(GEMM_SPLITK_REDUCE, "GEMM_SPLITK_REDUCE")
        return parse_reduce(env, SPLITK_REDUCE_ENV)
    return parse_reduce(setting)


def workspace_bytes(m: int, n: int, l: int, bn: int, splits: int, reduce: str = GEMM_SPLITK_REDUCE) -> int:
    """Device bytes split-K needs, 0 for splits == 1: one u32 counter per tile plus the fp32 workspace: S slots of
    (L, M, N) for the ordered reduction, one (L, M, N) image for the atomic one."""
    if splits == 1:
        return 0
    return (splits if parse_reduce(reduce) == "ordered" else 1) * l * m * n * 4 + l * (m // BM) * (n // bn) * 4


def launch_grid(m: int, n: int, l: int, bn: int, splits: int = 1, pair: bool = False) -> tuple[int, int, int]:
    """The launch grid: (M/128, N/bn, L*splits); 2sm: (2 * ceil(M/256), N/bn, L), a CTA pair per 256 rows (with
    M % 256 == 128 the last odd CTA has no rows of its own and only loads its half of B)."""
    return (2 * (-(-m // 256)), n // bn, l) if pair else (m // BM, n // bn, l * splits)


def launch_plan(m: int, n: int, k: int, l: int, splits: int = 1, variant: str = GEMM_VARIANT,
                reduce: str = GEMM_SPLITK_REDUCE) -> dict[str, Any]:
    """Kernel, tile config and launch geometry for a shape, split-K factor and variant. "cluster": the dict of
    :func:`cluster_launch_plan`; "1sm" / "2sm": kernel, bn, stages, splits, pair, grid (:func:`launch_grid`), cluster
    (None, or (2,1,1) for 2sm), block, shared_bytes (dynamic), reduce (split-K reduction), workspace_bytes (0
    without split-K)."""
    if parse_variant(variant) == "cluster":
        variant_is_pair(variant, check_splits(splits, k, l))
        return cluster_launch_plan(m, n, k, l)
    bn = choose_bn(n)
    check_shape(m, n, k, l, bn)
    splits = check_splits(splits, k, l)
    pair = variant_is_pair(variant, splits)
    stages = DEFAULT_STAGES[bn]
    grid = launch_grid(m, n, l, bn, splits, pair)
    return {"kernel": KERNEL_NAME, "variant": "2sm" if pair else "1sm", "bn": bn, "stages": stages, "splits": splits,
            "pair": pair, "grid": grid, "cluster": PAIR_CLUSTER if pair else None, "block": (THREADS, 1, 1),
            "shared_bytes": shared_bytes(bn, stages, pair), "reduce": parse_reduce(reduce),
            "workspace_bytes": workspace_bytes(m, n, l, bn, splits, reduce)}


def gemm_arch(major: int, minor: int) -> str:
    """NVRTC target for a GPU of compute capability major.minor; RuntimeError where tcgen05 does not exist."""
    if major != 10:
        raise RuntimeError(
            f"nvfp4_gemm custom_kernel: this kernel uses tcgen05 (TMEM, UMMA block-scaled MMA) and needs a compute "
            f"capability 10.x GPU (B200: sm_100a); this GPU is {major}.{minor}. Run it on a Blackwell datacenter GPU, "
            "or pass CPU tensors to run it on the ptxlab emulator")
    return f"sm_{major}{minor}a"  # sm_100a on B200 (the tested target); other 10.x untested


# ------------------------------------------------------------------------------------------------ cluster kernel
# nvfp4_gemm_cluster.cu: one 128 x BN tile per CTA over the whole K, BN in 32..256; clusters of C CTAs along N share
# (multicast) the A operand; TMA-store epilogue. Design and predictions: ptx_docs/production_gemm.md.
CLUSTER_KERNEL_FILE = "nvfp4_gemm_cluster.cu"
CLUSTER_KERNEL_NAME = "nvfp4_gemm_cluster"
CLUSTER_BNS = (256, 128, 64, 32)          # tile N choices, widest first
CLUSTER_SIZES = (16, 8, 4, 2, 1)          # CTAs per cluster along N (16: non-portable size)
CLUSTER_MAX_STAGES = 8
CLUSTER_SPLITS = (1, 2, 4, 8)             # split-K factors over the cluster (KS CTAs of a tile in one cluster)
SPLIT_K = 4                               # the automatic split-K factor over the cluster
SPLIT_MIN_KB = 7                          # K blocks each split keeps at least (the automatic split-K)
CLUSTER_EXCHANGES = ("signal", "barrier")  # split-K exchange: remote mbarrier arrives (default, stage F7) | cluster
#                                          barrier (opt-in, stage F6) -- blocks/cluster_splitk.cuh
CLUSTER_WARM_KB = 3                       # K blocks loaded without multicast while the cluster barrier completes
SMEM_OPTIN = 232448                       # sm_100: largest dynamic shared memory a block may opt in to (227 KiB)
STATIC_SMEM = 1024                        # the kernel's static __shared__ (ptxas reports 1024: barriers, TMEM slot)
TMEM_COLS = 512
C_BOX = (32, 32, 1)                       # fp16 output sub-tile of one TMA store (64 B x 32 rows, SWIZZLE_64B)


def cluster_stage_bytes(bn: int) -> int:
    """Bytes of one pipeline stage: A 128 x 128 B, B bn x 128 B, SFA 2 KiB, SFB 2 KiB per 128 N rows (one whole
    128-row block for bn < 128)."""
    return BM * BK_BYTES + bn * BK_BYTES + 2048 + 2048 * max(1, bn // 128)


def cluster_tmem_cols(bn: int, stages: int) -> int:
    """TMEM columns the kernel's plan uses: D (bn), SFA (16 per stage), SFB (16 per stage per 128 N rows)."""
    return bn + 16 * stages + 16 * max(1, bn // 128) * stages


def cluster_shared_bytes(bn: int, stages: int) -> int:
    """Dynamic SMEM: the stages (the fp16 C tile overlays them after the main loop) + 1024 B alignment slack."""
    return stages * cluster_stage_bytes(bn) + 1024


def cluster_stages(bn: int) -> int:
    """Deepest ring (<= CLUSTER_MAX_STAGES) that fits the SMEM opt-in limit and 512 TMEM columns and holds the C
    tile (128 x bn fp16)."""
    s = CLUSTER_MAX_STAGES
    while s > 2 and (cluster_shared_bytes(bn, s) + STATIC_SMEM > SMEM_OPTIN or cluster_tmem_cols(bn, s) > TMEM_COLS):
        s -= 1
    return s


def sfb_share(bn: int, cluster: int) -> int:
    """CTAs that split (and multicast) one 128-row SFB block: the 128/bn n tiles it covers when they are in one
    cluster, else 1 (each loads the whole block)."""
    p = 128 // bn if bn < 128 else 1
    return p if cluster >= p else 1


def choose_cluster_config(m: int, n: int, k: int, l: int = 1, sms: int = B200_SMS,
                          bn: int | None = None, splits: int | None = None) -> dict[str, int]:
    """Tile N, split-K factor, cluster size, stages and warm-up K blocks for a shape.

    Split-K over the cluster (``splits`` None = chosen here, with ``bn`` None only): BN 128 and SPLIT_K splits when
    SPLIT_K x the 128-column tiles fit the SMs in one wave and each split keeps >= SPLIT_MIN_KB K blocks (of the
    gpu-mode benchmark shapes only 128x4096x7168: 32 tiles x 4 splits of 7 K blocks): a CTA's tensor-pipe cost per K
    block is paid on a quarter of K at a cheaper-per-column tile, and the exchange (one cluster barrier + one global
    round trip, ~1.2 us predicted) is amortised; 2 splits were predicted slower on the other two shapes
    (ptx_docs/production_gemm.md). A split-K cluster has 16 CTAs (16 / splits along N: A is multicast only within
    a split). Otherwise (splits 1): the widest bn whose tile count reaches half of the SMs (so the B stream is spread
    over most SMs; else the narrowest that divides N), then the largest cluster along N (<= 16 for K >= 8192, where
    A's share of the traffic matters most, else <= 8) that divides the N tiles. `bn` / `splits` fix those (the rest
    is chosen for them).
    The gpu-mode benchmark shapes get bn/cluster/splits 64/16/1, 128/4/4, 64/8/1 (predictions:
    ptx_docs/production_gemm.md)."""
    bns = [b for b in CLUSTER_BNS if n % b == 0]
    if not bns:
        raise ValueError(f"nvfp4 GEMM (cluster): N={n} must be a multiple of 32")
    tiles = lambda b: (m // BM) * (n // b) * l  # noqa: E731
    if splits is None:
        splits = SPLIT_K if (bn is None and 128 in bns and SPLIT_K * tiles(128) <= sms
                             and k // 256 >= SPLIT_K * SPLIT_MIN_KB) else 1

    if bn is None and splits > 1:
        bn = 128 if 128 in bns else bns[0]
    if bn is None:
        bn = next((b for b in bns if 2 * tiles(b) >= sms), bns[-1])
    elif bn not in bns:
        raise ValueError(f"nvfp4 GEMM (cluster): BN={bn} must be one of {CLUSTER_BNS} and divide N={n}")
    cmax = (16 if k >= 8192 or splits > 1 else 8) // splits
    nt = n // bn
    cluster = next(c for c in CLUSTER_SIZES if c <= cmax and nt % c == 0)
    stages = cluster_stages(bn)
    return {"bn": bn, "cluster": cluster, "stages": stages, "warm": min(CLUSTER_WARM_KB, stages) if cluster > 1 else 0,
            "splits": splits}


def check_cluster_splits(k: int, bn: int, cluster: int, splits: int) -> None:
    """Split-K over the cluster (blocks/cluster_splitk.cuh): splits in CLUSTER_SPLITS, bn / splits a multiple of 32
    (each split owns that many columns of the tile), at least one K block per split, cluster x splits <= 16 CTAs."""
    if splits not in CLUSTER_SPLITS:
        raise ValueError(f"nvfp4 GEMM (cluster): splits={splits} must be one of {CLUSTER_SPLITS}")
    if splits > 1 and ((bn // splits) % 32 or bn % splits):
        raise ValueError(f"nvfp4 GEMM (cluster): BN={bn} / splits={splits} must be a multiple of 32 (the columns each "
                         "split owns)")
    if k // 256 < splits:
        raise ValueError(f"nvfp4 GEMM (cluster): K={k} has {k // 256} K blocks, fewer than splits={splits}")
    if cluster * splits > max(CLUSTER_SIZES):
        raise ValueError(f"nvfp4 GEMM (cluster): cluster {cluster} x splits {splits} exceeds "
                         f"{max(CLUSTER_SIZES)} CTAs per cluster")


def cluster_workspace_bytes(m: int, n: int, l: int, bn: int, splits: int) -> int:
    """fp32 exchange workspace of split-K over the cluster: per tile splits x splits slots of 128 x bn/splits."""
    return 0 if splits == 1 else l * (m // BM) * (n // bn) * splits * splits * BM * (bn // splits) * 4


def check_cluster_config(m: int, n: int, k: int, l: int, bn: int, cluster: int, stages: int) -> None:
    check_shape(m, n, k, l, bn)
    if bn not in CLUSTER_BNS:
        raise ValueError(f"nvfp4 GEMM (cluster): BN={bn} must be one of {CLUSTER_BNS}")
    if cluster not in CLUSTER_SIZES or (n // bn) % cluster:
        raise ValueError(f"nvfp4 GEMM (cluster): cluster size {cluster} must be one of {CLUSTER_SIZES} and divide the "
                         f"{n // bn} N tiles")
    if not 2 <= stages <= CLUSTER_MAX_STAGES or cluster_shared_bytes(bn, stages) + STATIC_SMEM > SMEM_OPTIN \
            or cluster_tmem_cols(bn, stages) > TMEM_COLS or stages * cluster_stage_bytes(bn) < BM * bn * 2:
        raise ValueError(f"nvfp4 GEMM (cluster): {stages} stages of BN={bn} do not fit (SMEM {SMEM_OPTIN} B, "
                         f"{TMEM_COLS} TMEM columns); at most {cluster_stages(bn)}")


def cluster_tensor_map_params(m: int, n: int, k: int, l: int, bn: int, cluster: int) -> dict[str, dict[str, Any]]:
    """The five cuTensorMapEncodeTiled inputs (but the address) of the cluster kernel: a / sfa boxes are one rank's
    slice of the multicast box (128/C rows of A, 16/C 128-B rows of the SFA box), b box {128 B, bn, 1}, sfb box
    16/share rows (:func:`sfb_share`) for bn < 128 else 16, c: fp16 (L, M, N) -> {N, M, L}, box {32, 32, 1},
    SWIZZLE_64B. a and b (the streamed operands) ask for 256-B L2 promotion."""
    prm = tensor_map_params(m, n, k, l, 128)
    prm["a"] = {**prm["a"], "box": (BK_BYTES, BM // cluster, 1), "l2_promotion": "256B"}
    prm["b"] = {**prm["b"], "box": (BK_BYTES, bn, 1), "l2_promotion": "256B"}
    prm["sfa"] = {**prm["sfa"], "box": (SF_BOX[0], SF_BOX[1] // cluster)}
    prm["sfb"] = {**prm["sfb"], "box": (SF_BOX[0], SF_BOX[1] // sfb_share(bn, cluster) if bn < 128 else SF_BOX[1])}
    prm["c"] = {"dtype": "FLOAT16", "global_shape": (n, m, l), "global_strides": (2 * n, 2 * m * n), "box": C_BOX,
                "element_strides": (1, 1, 1), "swizzle": "64B", "interleave": "none", "l2_promotion": "none",
                "oob_fill": "none"}
    return prm


def cluster_launch_plan(m: int, n: int, k: int, l: int, config: dict | None = None) -> dict[str, Any]:
    """Launch of the cluster kernel: kernel, variant, bn, cluster (C), stages, warm, splits (1), grid (M/128, N/bn,
    L), cluster_dims ((1, C, 1) or None), non_portable (C > 8), block, shared_bytes, workspace_bytes (0)."""
    cfg = {**choose_cluster_config(m, n, k, l, bn=(config or {}).get("bn"), splits=(config or {}).get("splits")),
           **(config or {})}
    bn, c, s, ks = cfg["bn"], cfg["cluster"], cfg["stages"], int(cfg.get("splits", 1))
    xchg = cfg.get("exchange", CLUSTER_EXCHANGES[0])
    if xchg not in CLUSTER_EXCHANGES:
        raise ValueError(f"nvfp4 GEMM (cluster): exchange={xchg!r} must be one of {CLUSTER_EXCHANGES}")
    check_cluster_config(m, n, k, l, bn, c, s)
    check_cluster_splits(k, bn, c, ks)
    if not 0 <= int(cfg["warm"]) <= s:
        raise ValueError(f"nvfp4 GEMM (cluster): warm={cfg['warm']} K blocks must be in [0, stages={s}] (one round "
                         "of the ring at most)")
    return {"kernel": CLUSTER_KERNEL_NAME, "variant": "cluster", "bn": bn, "cluster_size": c, "stages": s,
            "warm": int(cfg["warm"]) if c > 1 else 0, "splits": ks, "pair": False, "grid": (m // BM, n // bn, l * ks),
            "cluster": (1, c, ks) if c * ks > 1 else None, "non_portable": c * ks > 8, "block": (THREADS, 1, 1),
            "shared_bytes": cluster_shared_bytes(bn, s), "workspace_bytes": cluster_workspace_bytes(m, n, l, bn, ks),
            "exchange": xchg if ks > 1 else CLUSTER_EXCHANGES[0]}


def cluster_options(bn: int, cluster: int, stages: int, splits: int = 1,
                    exchange: str = CLUSTER_EXCHANGES[0]) -> tuple[str, ...]:
    """NVRTC -D options of one cluster-kernel build (-DGEMM_SPLITS only for split-K over the cluster; -DGEMM_XCHG=0
    only for its opt-in cluster-barrier exchange)."""
    return (f"-DGEMM_BN={bn}", f"-DGEMM_CLUSTER={cluster}", f"-DGEMM_STAGES={stages}") + \
        ((f"-DGEMM_SPLITS={splits}",) if splits > 1 else ()) + \
        (("-DGEMM_XCHG=0",) if splits > 1 and exchange == "barrier" else ())
