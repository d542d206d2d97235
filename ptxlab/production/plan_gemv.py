"""Host-side plan of the CUDA-core NVFP4 GEMV: kernel configs, the per-shape choice, launch geometry.

One definition for the lab (``ptxlab.production.gemv``) and the gpu-mode adapter (``submission_gemv.py``), which both
import it; ``lab.py export`` writes this text in place of the adapter's import line, so the exported file stays
self-contained. Standard library only.
"""
from __future__ import annotations

ROWS_PER_CTA = 8  # GEMV_ROWS_PER_WARP * GEMV_WARPS / GEMV_KSPLIT of the kernel's default config
THREADS = 64  # 32 * GEMV_WARPS
N_PADDED = 128  # rows of gpu-mode's GEMV b / sfb
CONFIG_NAMES = ("GEMV_ROWS_PER_WARP", "GEMV_WARPS", "GEMV_UNROLL", "GEMV_KSPLIT", "GEMV_PREFETCH")
DEFAULT_CONFIG = (4, 2, 2, 1, 0)  # the kernel's #define defaults, in CONFIG_NAMES order
# flat variant (GEMV_FLAT=1): ("flat", warps, rows per thread per round, prefetch, min CTAs per SM (register cap)[,
# row order: 0 balanced contiguous ranges per CTA (default), 1 row blocks dealt round-robin (the 2026-11-22 order)])
FLAT_NAMES = ("GEMV_WARPS", "GEMV_FLAT_R", "GEMV_PREFETCH", "GEMV_MIN_CTAS", "GEMV_FLAT_RR")
FLAT_DEFAULT = ("flat", 16, 2, 1, 2)  # the row order, when not given, is the kernel's default (0)
# tuned configs of the gpu-mode benchmark shapes (H100 sweeps 2026-11-22, ptx_docs/production.md); others: the rule
# in pick_config
SHAPE_CONFIGS: dict = {
    # H100-measured (benchmarks/bench_gemv_h100.py, 2026-11-28 05:17 UTC, benchmarks/data/bench_gemv_h100_gemv4_20261128.json):
    # after gemv4's per-CTA row ranges the round-robin row order (sixth entry 1) is faster on all three shapes.
    (7168, 16384, 1): ("flat", 16, 2, 1, 2, 1),  # 512 threads = one 8 KiB row side by side, 2 CTAs (32 warps) per SM
    (4096, 7168, 8): ("flat", 14, 2, 1, 2, 1),   # 448 threads = 2 rows of 224 chunks
    (7168, 2048, 4): ("flat", 14, 2, 1, 2, 1),   # 448 threads = 7 rows of 64 chunks
}
# Blackwell (sm_10x): chosen by the timing model's B200 PREDICTIONS (benchmarks/sweep_gemv_b200.py, model tree
# 5ddd42b0a547 of ptxlab/timing; ptx_docs/production.md "GEMV at its DRAM floor"), never measured; shapes not listed
# use SHAPE_CONFIGS. Predicted 14.49 / 22.41 / 8.93 us = 1.125 / 1.019 / 1.071 x the DRAM floor (gemv4, 2026-11-28).
B200_SHAPE_CONFIGS: dict = {
    (7168, 16384, 1): ("flat", 32, 4, 1, 1),   # 1024 threads = 2 rows side by side, 4 rows per thread per round
    (4096, 7168, 8): ("flat", 14, 8, 1, 2),    # 8 rows per thread per round (H100: 2)
    (7168, 2048, 4): ("flat", 10, 8, 1, 2),    # 10 warps = 5 rows of 64 chunks side by side, 8 rows per round
}


def is_flat(config: tuple | None) -> bool:
    return bool(config) and config[0] == "flat"


def full_config(config: tuple | None = None) -> tuple:
    """config padded with the kernel's defaults: (rows_per_warp, warps, unroll, ksplit, prefetch) for the register
    variant, or ("flat", warps, rows_per_round, prefetch, min_ctas_per_sm[, row order]) for the flat variant."""
    if is_flat(config):
        c, most = ("flat",) + tuple(int(v) for v in config[1:]), 1 + len(FLAT_NAMES)
    else:
        c, most = tuple(int(v) for v in (config or ())), len(CONFIG_NAMES)
    if len(c) > most:       # config_defines would drop the extra entries without a word
        raise ValueError(f"config {tuple(config)}: values out of range: at most {most} entries for this variant")
    return c + (FLAT_DEFAULT if is_flat(c) else DEFAULT_CONFIG)[len(c):]


def rows_per_cta(config: tuple | None = None) -> int:
    """Rows of one CTA of the register variant (the flat variant's CTAs are persistent: see launch_plan)."""
    r, w, _, s, _ = full_config(config)
    return r * w // s


def config_defines(config: tuple | None = None) -> str:
    """#define lines that select config in the kernel text."""
    c = full_config(config)
    if is_flat(c):
        return "#define GEMV_FLAT 1\n" + "".join(f"#define {n} {v}\n" for n, v in zip(FLAT_NAMES, c[1:]))
    return "".join(f"#define {n} {v}\n" for n, v in zip(CONFIG_NAMES, c))


def flat_fits(config: tuple, m: int, k: int) -> bool:
    """Whether the flat variant with config can run M x K: K % 1024 == 0, K/32 chunks dividing the CTA's threads, and
    one batch's A under 2 GiB (the kernel's 32-bit row offsets)."""
    c = full_config(config)
    w, r = c[1], c[2]
    return (k % 1024 == 0 and (32 * w) % (k // 32) == 0 and 32 * w <= 1024 and r & (r - 1) == 0 and r <= 32
            and m >= 1 and m * (k // 2) < 2 ** 31)


def fits(config: tuple | None, m: int, k: int) -> bool:
    """Whether config can run an M x K problem (the register variant runs any K % 32 == 0)."""
    if is_flat(config):
        return flat_fits(config, m, k)
    return k % 32 == 0


def launch_plan(m: int, k: int, l: int, config: tuple | None = None, sms: int = 132,
                ctas_per_sm: int | None = None) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
    """(grid, block, dynamic shared bytes). Register variant: one CTA per rows_per_cta rows. Flat variant: persistent
    CTAs, as many per batch as are resident on the GPU at once (ctas_per_sm: the driver's occupancy of the kernel,
    else the config's min CTAs per SM), at most one per round of rows (so every CTA's balanced range has a row)."""
    c = full_config(config)
    if is_flat(c):
        w, r, min_ctas = c[1], c[2], c[4]
        rows_round = (32 * w // max(1, k // 32)) * r
        nblk = -(-m // max(1, rows_round))
        per_sm = ctas_per_sm if ctas_per_sm is not None else max(1, min_ctas)
        g = max(1, min(nblk, (sms * per_sm) // l))
        return (g, l, 1), (32 * w, 1, 1), 0
    rows = rows_per_cta(c)
    return ((m + rows - 1) // rows, l, 1), (32 * c[1], 1, 1), 0


def pick_config(m: int, k: int, l: int, arch: str | None = None) -> tuple:
    """The kernel config for an M x K x L problem: the tuned one of a gpu-mode benchmark shape; else the flat variant
    where it applies (K % 1024 == 0 and K <= 32768: whole rows of 512-byte warp loads, K/32 threads per row) with
    about 16 warps per CTA, 2 rows per thread per round, prefetch, 2 CTAs per SM; else the register variant's
    default. arch: a Blackwell target (sm_10x) takes B200_SHAPE_CONFIGS first (model-chosen); every variant runs on any
    arch the kernel compiles for."""
    cfg = B200_SHAPE_CONFIGS.get((m, k, l)) if arch and arch.startswith("sm_10") else None
    cfg = cfg or SHAPE_CONFIGS.get((m, k, l))
    if cfg is not None and fits(cfg, m, k):
        return full_config(cfg)
    if k % 1024 == 0 and k <= 32768:
        wpr = k // 1024  # warps per row (K/32 chunks, one per thread)
        w = wpr * max(1, 16 // wpr)
        cfg = ("flat", w, 2, 1, 2 if w <= 16 else 1)
        if fits(cfg, m, k):
            return full_config(cfg)
    return DEFAULT_CONFIG
