"""Shared host side of stages F1-F5 (stages/F_gemm): the D/E host helpers (loaded by path, as stage E does), data
whose fp32 sums are exact, references, and the broken-variant plumbing every F stage uses.

Broken variants: stage Fn reads ``PTXLAB_STAGE_Fn_BROKEN`` (or its runner's ``broken=`` argument); an unknown name is
a usage error before any stage runs (``preflight``), like D4's.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Dict, Optional

import numpy as np

from ptxlab.errors import DeviceUnavailable, PtxlabError, UsageError
from ptxlab.lab.registry import Check, StageResult, load_shared

HERE = Path(__file__).resolve().parent
_D = HERE.parent / "D_mma"


H = load_shared("ptxlab_stages_de_host", _D / "host.py")
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


class Refused(Exception):
    """The device cannot run the stage (e.g. an H100 for an sm_100a stage): carries the refused StageResult."""

    def __init__(self, result: StageResult) -> None:
        super().__init__(str(result))
        self.result = result


def device_of(ctx: Any, stage: str, pick_arch: Any = None) -> Any:
    """(device, arch): the sm_100a device (or, with pick_arch(dev), the arch it picks); Refused otherwise."""
    try:
        dev = ctx.device
        if pick_arch is None:
            H.check_device(dev)
            return dev, "sm_100a"
        return dev, pick_arch(dev)
    except DeviceUnavailable as e:
        raise Refused(H.refuse_rows(stage, e)) from e


def compile_row(rows: list, name: str, defines: Dict[str, int], tag: str, arch: str = "sm_100a",
                sass: Optional[list] = None) -> Any:
    """compile_f; a compile error becomes a failing row (None returned); the first module's SASS check becomes a row
    when `sass` is given and no SASS row is in `rows` yet."""
    try:
        mod = compile_f(name, defines, arch)
    except PtxlabError as e:
        rows.append(Check(f"kernel compiles ({tag})", False, str(e)))
        return None
    if sass and not any(r.name.startswith("SASS ") for r in rows):
        rows.append(H.sass_row(mod, sass))
    return mod


def launched(dev: Any, rows: list, stage: str, tag: str, seed: int, launch: Any, strict_rules: bool = True) -> bool:
    """Run launch() (under the strict emulator rules); a kernel error becomes a failing 'kernel ran' row (False
    returned); a device that cannot run it refuses the stage."""
    try:
        with (strict(dev) if strict_rules else contextlib.nullcontext()):
            launch()
        return True
    except DeviceUnavailable as e:
        raise Refused(H.refuse_rows(stage, e)) from e
    except PtxlabError as e:
        rows.append(Check(f"kernel ran ({tag})", False, f"seed={seed}: {e}"))
        return False


_MAP = {"dtype": "UINT8", "interleave": "none", "l2_promotion": "none", "oob_fill": "none"}


def mat_map(dev: Any, buf: Any, k: int, rows: int, box_rows: int) -> Any:
    """K-major packed fp4 operand (rows, K/2) bytes -> 3-D map {K/2, rows, 1}, box {128 B, box_rows, 1}, SW128."""
    return dev.tensor_map(buf, global_shape=(k // 2, rows, 1), global_strides=(k // 2, rows * k // 2),
                          box=(128, box_rows, 1), element_strides=(1, 1, 1), swizzle="128B", **_MAP)


def sf_map(dev: Any, buf: Any, mn: int, k: int, box_rows: int) -> Any:
    """Blocked (permuted) SFs of mn rows -> 2-D map {128 B, 128-B rows}, box {128, box_rows}, no swizzle."""
    return dev.tensor_map(buf, global_shape=(128, (-(-mn // 128)) * (k // 64) * 4), global_strides=(128,),
                          box=(128, box_rows), element_strides=(1, 1), swizzle="none", **_MAP)
