"""Shared host side of stages F1-F5 (stages/F_gemm): the D/E host helpers (loaded by path, as stage E does), data
whose fp32 sums are exact, references, and the broken-variant plumbing every F stage uses.

Broken variants: stage Fn reads ``PTXLAB_STAGE_Fn_BROKEN`` (or its runner's ``broken=`` argument); an unknown name is
a usage error before any stage runs (``preflight``), like D4's.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Dict, Optional

import numpy as np

from ptxlab.errors import UsageError

HERE = Path(__file__).resolve().parent
_D = HERE.parent / "D_mma"


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


H = sys.modules.get("ptxlab_stages_de_host") or _load("ptxlab_stages_de_host", _D / "host.py")
UE4M3 = {0x30: 0.5, 0x38: 1.0, 0x40: 2.0}   # scales whose products keep every 64..1024-term sum exact in fp32


def compile_f(name: str, defines: Dict[str, int], arch: str = "sm_100a") -> Any:
    """Compile stages/F_gemm/<name> for arch with #defines prepended (includes: ptxlab/kernels and this directory)."""
    import ptxlab
    from ptxlab.kernels import KERNELS_DIR

    pre = "".join(f"#define {k} {v}\n" for k, v in defines.items())
    return ptxlab.compile(pre + (HERE / name).read_text(), arch=arch, name=name, include_dirs=[KERNELS_DIR, HERE])


def env_broken(stage: str) -> str:
    return f"PTXLAB_STAGE_{stage}_BROKEN"


def check_broken(stage: str, broken: Optional[str], table: Dict[str, Any]) -> None:
    """A usage error (lab.py exits 2, records nothing) unless `broken` names a variant of `table` (or is None)."""
    if broken is not None and broken not in table:
        raise UsageError(f"unknown {stage} broken variant {broken!r} ({env_broken(stage)}); use one of "
                         f"{', '.join(sorted(table))}")


def resolve_broken(stage: str, broken: Optional[str], table: Dict[str, Any]) -> Optional[str]:
    b = broken if broken is not None else (os.environ.get(env_broken(stage), "") or None)
    check_broken(stage, b, table)
    return b


def preflight_for(stage: str, table: Dict[str, Any]):
    def preflight() -> None:
        check_broken(stage, os.environ.get(env_broken(stage), "") or None, table)
    return preflight


def strict(dev: Any):
    """The lab checks the PTX ISA text: strict emulator rules around a launch (as D4 and launch_guarded do)."""
    s = getattr(dev, "strict_rules", None)
    return s("all") if callable(s) else contextlib.nullcontext()


def nvfp4_operands(seed: int, rows: int, k: int):
    """e2m1 codes (all 16) and UE4M3 scales from {0.5, 1, 2}: (codes (rows, k), scales (rows, k/16))."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 16, (rows, k), dtype=np.uint8),
            rng.choice(list(UE4M3), (rows, k // 16)).astype(np.uint8))


def exact_dot(a, sfa, b, sfb) -> np.ndarray:
    """float64 (rows_a, rows_b) of the dequantised products: exact, and exact in fp32 for this data."""
    from ptxlab.numerics import E2M1_VALUES

    def deq(x, sf):
        return E2M1_VALUES[x].astype(np.float64) * np.vectorize(UE4M3.get)(np.repeat(sf, 16, axis=1))

    return deq(a, sfa) @ deq(b, sfb).T


def first_diff(got: np.ndarray, exp: np.ndarray, what: str = "word") -> str:
    bad = np.argwhere(got != exp)
    if not len(bad):
        return ""
    idx = tuple(int(x) for x in bad[0])
    return (f"{len(bad)} {what}s differ; first at {idx}: got {H.describe_f32(int(got[idx]))}, expected "
            f"{H.describe_f32(int(exp[idx]))}")
