"""Host side of stages D/E: compiling the stage kernels, fresh gpu-mode data, uploads and independent references.

Shared by stages/D_mma/driver.py and stages/E_epilogue/driver.py (E loads this file by path). Expected values come
from ptxlab.gpumode / ptxlab.mma on the host arrays (float64 sums over the reference-layout tensors), never from
the kernels' index math.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

import numpy as np

import ptxlab
from ptxlab.errors import DeviceUnavailable, PtxlabError
from ptxlab.gpumode import NvFp4Problem
from ptxlab.kernels import KERNELS_DIR
from ptxlab.lab.registry import Check, StageResult
from ptxlab.numerics import decode_fp4x2, decode_ue4m3
from ptxlab.production import gemv_tcgen05 as G
from ptxlab.scales import permuted_bytes

HERE = Path(__file__).resolve().parent
# the fused GEMV kernel (D3 pipeline, E1/E2 with EPILOGUE=1) is production code in ptxlab/kernels/nvfp4_gemv_tcgen05.cu;
# the stage compiles tile_pipeline.cu, which only #includes it (so the stage's source hash covers it)
PIPELINE = HERE / "tile_pipeline.cu"
NEEDS_SM100 = "needs an sm_100a GPU or --backend emu"
POISON_BYTE = 0xA5  # 0xA5A5A5A5 as f32 is -2.9e-16: never an exact accumulator of this data


def compile_stage(path: Path, defines: Optional[Dict[str, int]] = None) -> Any:
    """Compile a stage .cu for sm_100a with #defines prepended (include dir: ptxlab/kernels)."""
    pre = "".join(f"#define {k} {v}\n" for k, v in (defines or {}).items())
    src = pre + path.read_text()
    return ptxlab.compile(src, arch="sm_100a", name=path.name, include_dirs=[KERNELS_DIR])


def fresh_seed() -> int:
    """PTXLAB_SEED (lab.py --seed N: replays a run's data) or a fresh seed (ptxlab/lab/seed.py)."""
    from ptxlab.lab.seed import stage_seed

    return stage_seed()


@dataclass
class Uploaded:
    """A problem on the device: buffers in the kernels' argument order plus sizes."""

    p: NvFp4Problem
    a: Any
    b: Any
    sfa: Any
    sfb: Any
    b_rows: int


def upload(dev: Any, p: NvFp4Problem) -> Uploaded:
    """a/b in gpu-mode memory order (L, rows, K/2); SFs as the permuted tensors' memory (blocked per batch)."""
    a = np.ascontiguousarray(p.a.transpose(2, 0, 1))
    b = np.ascontiguousarray(p.b.transpose(2, 0, 1))
    return Uploaded(p, dev.to_device(a), dev.to_device(b), dev.to_device(permuted_bytes(p.sfa_permuted)),
                    dev.to_device(permuted_bytes(p.sfb_permuted)), b.shape[1])


PIPELINE_STAGES = G.STAGES  # TMA ring depth the stages compile (-DSTAGES) and launch the fused kernel with


def compile_pipeline(defines: Dict[str, int]) -> Any:
    """Compile the fused kernel (tile_pipeline.cu) with `defines` and the production ring depth."""
    return compile_stage(PIPELINE, {"STAGES": PIPELINE_STAGES, **defines})


def run_pipeline(dev: Any, mod: Any, p: NvFp4Problem, nb: int, nc: int) -> "tuple[np.ndarray, np.ndarray]":
    """Launch the fused GEMV kernel (tile_pipeline) on problem p through the production launcher
    (ptxlab.production.gemv_tcgen05.launch_tile_pipeline: TMA tensor maps, ring depth, SMEM size); returns
    (acc (L, M, nb) uint32 bits, c (L, M, nc) uint16 bits), both poisoned before the launch."""
    u = upload(dev, p)
    M, K, L = p.m, p.k, p.l
    acc = poisoned(dev, 4 * L * M * nb)
    c = poisoned(dev, 2 * L * M * nc)
    G.launch_tile_pipeline(dev, mod, u.a, u.b, u.sfa, u.sfb, acc, c, M, K, L, u.b_rows, nc, nb=nb,
                           stages=PIPELINE_STAGES)
    return dev.to_host(acc, np.uint32).reshape(L, M, nb), dev.to_host(c, np.uint16).reshape(L, M, nc)


def poisoned(dev: Any, nbytes: int) -> Any:
    buf = dev.empty(nbytes)
    dev.memset(buf, POISON_BYTE)
    return buf


def dequant(x: np.ndarray, sf: np.ndarray) -> np.ndarray:
    """(R, K/2, L) fp4 bytes + (R, K/16, L) UE4M3 -> (L, R, K) float64 (exact)."""
    vals = decode_fp4x2(x.transpose(2, 0, 1)).astype(np.float64)
    scale = decode_ue4m3(sf.transpose(2, 0, 1)).astype(np.float64)
    return vals * np.repeat(scale, 16, axis=2)


def partial_sums(p: NvFp4Problem, nb: int) -> np.ndarray:
    """float64 (L, K/64, M, nb): sum over k < 64*(c+1) of a*sfa*b*sfb for b rows 0..nb-1 (cumulative per chunk)."""
    a = dequant(p.a, p.sfa)
    b = dequant(p.b[:nb], p.sfb[:nb])
    L, M, K = a.shape
    prod = np.einsum("lmcx,lncx->lcmn", a.reshape(L, M, K // 64, 64), b.reshape(L, nb, K // 64, 64))
    return np.cumsum(prod, axis=1)


def full_sums(p: NvFp4Problem, nb: int) -> np.ndarray:
    """float64 (L, M, nb) sum over all K."""
    a = dequant(p.a, p.sfa)
    b = dequant(p.b[:nb], p.sfb[:nb])
    return np.matmul(a, b.transpose(0, 2, 1))


def model_accumulator(p: NvFp4Problem, nb: int) -> np.ndarray:
    """(L, M, nb) uint32 fp32 bits of the chained-MMA result from the bit-exact model ptxlab.mma.mma (one MMA
    per 64-wide K chunk, D of chunk i is C of chunk i+1) -- for data outside the exact regime."""
    from ptxlab.mma import mma
    from ptxlab.numerics import unpack_fp4

    out = []
    for l in range(p.l):
        a = unpack_fp4(p.a[:, :, l]).astype(np.uint8)
        b = unpack_fp4(p.b[:nb, :, l]).astype(np.uint8)
        out.append(mma("mxf4nvf4", a, b, a_fmt="e2m1", b_fmt="e2m1", sfa=np.ascontiguousarray(p.sfa[:, :, l]),
                       sfb=np.ascontiguousarray(p.sfb[:nb, :, l]), scale_fmt="ue4m3", block=16))
    return np.stack(out)


def f32_bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def describe_f32(bits: int) -> str:
    v = np.array([bits], dtype=np.uint32).view(np.float32)[0]
    return f"{float(v)!r} (0x{int(bits):08x}{', POISON' if bits == 0xA5A5A5A5 else ''})"


def refuse_rows(stage: str, exc: Exception) -> StageResult:
    """Clean result for a device that cannot run sm_100a code (e.g. the cuda backend on an H100)."""
    rows = [Check("device can run sm_100a", False, f"{NEEDS_SM100}: {exc}")]
    if hasattr(StageResult, "refuse"):  # lab marks it REFUSED (exit 3), not FAIL
        return StageResult.refuse(f"{stage}: {NEEDS_SM100}", rows)
    return StageResult.from_rows(rows, message=f"{stage}: {NEEDS_SM100}")


def check_device(dev: Any) -> None:
    """Raise DeviceUnavailable unless the device runs sm_100a modules."""
    if not dev.arch_supported("sm_100a"):
        raise DeviceUnavailable(f"{dev.describe()} cannot run sm_100a (tcgen05) code; {NEEDS_SM100}")


def sass_row(mod: Any, wanted: Sequence[str]) -> Check:
    from ptxlab.toolchain.sass import require

    try:
        counts = require(mod, list(wanted))
        return Check("SASS " + " ".join(wanted), True, ", ".join(f"{k}x{v}" for k, v in counts.items()))
    except PtxlabError as e:
        return Check("SASS " + " ".join(wanted), False, str(e))


class Timer:
    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self.t0
