"""gpu-mode nvfp4_gemv / nvfp4_gemm inputs, references and checks, in numpy.

Mirrors gpu-mode/reference-kernels @ f83cb92 `problems/nvidia/nvfp4_{gemv,gemm}/{reference.py,task.yml}` and
`problems/nvidia/utils.py` (distributions, shapes and memory orders). Values differ from gpu-mode's for the same
seed (they come from torch's CUDA generator; here from numpy's PCG64): only distributions and layouts match.

Storage: fp4 pairs and SF codes are uint8 (byte = two e2m1 codes, element 2i in the low nibble; SF = UE4M3 code);
c is float16. Every array has the torch tensor's shape and the same stride order (batch outermost).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ptxlab.numerics import decode_fp4x2, decode_ue4m3, encode_ue4m3
from ptxlab.scales import ref_from_lmk, ref_to_permuted, permuted_from_physical, sf_rest

__all__ = [
    "SF_VEC",
    "GEMV_N_PADDED",
    "GEMV_TESTS",
    "GEMV_BENCHMARKS",
    "GEMM_TESTS",
    "GEMM_BENCHMARKS",
    "NvFp4Problem",
    "generate_gemv",
    "generate_gemm",
    "reference_gemm",
    "reference_gemv",
    "check_close",
    "to_torch",
    "from_torch",
]

SF_VEC = 16  # elements per scale factor (block16)
GEMV_N_PADDED = 128  # gpu-mode pads the GEMV vector b to 128 rows for torch._scaled_mm; only row 0 matters

# task.yml of nvfp4_gemv @ f83cb92 (args of generate_input)
GEMV_TESTS: tuple[dict[str, int], ...] = tuple(
    {"m": m, "k": k, "l": l, "seed": 1111}
    for m, k, l in [(128, 256, 1), (128, 1536, 1), (128, 3072, 1), (256, 7168, 1), (256, 7168, 1),
                    (2432, 4608, 2), (384, 7168, 2), (512, 512, 2), (512, 4096, 2), (512, 1536, 2)]
)
GEMV_BENCHMARKS: tuple[dict[str, int], ...] = tuple(
    {"m": m, "k": k, "l": l, "seed": 1111} for m, k, l in [(7168, 16384, 1), (4096, 7168, 8), (7168, 2048, 4)]
)
# task.yml of nvfp4_gemm @ f83cb92 (benchmarks are M=128 with large N in the real file)
GEMM_TESTS: tuple[dict[str, int], ...] = tuple(
    {"m": m, "n": n, "k": k, "l": 1, "seed": 1111}
    for m, n, k in [(128, 256, 256), (128, 1536, 7168), (128, 3072, 1536), (256, 7168, 256), (256, 7168, 2048),
                    (2304, 4608, 7168), (384, 7168, 2304), (512, 512, 7168), (512, 4096, 512), (512, 1536, 7168)]
)
GEMM_BENCHMARKS: tuple[dict[str, int], ...] = tuple(
    {"m": m, "n": n, "k": k, "l": 1, "seed": 1111}
    for m, n, k in [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048)]
)

U8 = npt.NDArray[np.uint8]


@dataclass
class NvFp4Problem:
    """One gpu-mode input tuple in numpy. Shapes (torch-like, memory order batch-outermost):
    a (M, K/2, L) u8, b (NB, K/2, L) u8 with NB = N (GEMM) or 128 (GEMV), sfa (M, K/16, L) u8, sfb (NB, K/16, L) u8,
    sfa_permuted (32, 4, ceil(M/128), 4, ceil(K/64), L) u8, sfb_permuted likewise for NB, c (M, N, L) f16.
    n is the logical N (1 for GEMV)."""

    a: U8
    b: U8
    sfa: U8
    sfb: U8
    sfa_permuted: U8
    sfb_permuted: U8
    c: npt.NDArray[np.float16]
    m: int
    n: int
    k: int
    l: int

    def as_tuple(self) -> tuple[Any, ...]:
        """(a, b, sfa, sfb, sfa_permuted, sfb_permuted, c), gpu-mode's order."""
        return (self.a, self.b, self.sfa, self.sfb, self.sfa_permuted, self.sfb_permuted, self.c)


def _batched(rng: np.random.Generator, lo: int, hi: int, l: int, rows: int, cols: int) -> U8:
    """randint[lo, hi) drawn as (l, rows, cols) contiguous, returned as a (rows, cols, l) view (gpu-mode permute(1,2,0));
    negative draws keep their int8 bit pattern (gpu-mode GEMM draws int8 then views as fp4x2)."""
    draws = rng.integers(lo, hi, size=(l, rows, cols), dtype=np.int16)
    return ref_from_lmk(draws.astype(np.int8).view(np.uint8))


def _scale_tensors(rng: np.random.Generator, hi: int, l: int, mn: int, sf_k: int) -> tuple[U8, U8]:
    """gpu-mode create_scale_factor_tensors: SF values randint[0, hi) as UE4M3, reference layout + permuted layout
    whose padding holds its own independent random SFs (gpu-mode's rand_int_tensor)."""
    to_code = encode_ue4m3(np.arange(hi, dtype=np.float64))  # value v -> code (0 -> 0x00, 1 -> 0x38, ...)
    ref = ref_from_lmk(to_code[rng.integers(0, hi, size=(l, mn, sf_k))])
    rest_m, rest_k = sf_rest(mn, sf_k)
    base = permuted_from_physical(to_code[rng.integers(0, hi, size=(l, rest_m, rest_k, 32, 4, 4))])
    return ref, ref_to_permuted(ref, base=base)


def _c_init(rng: np.random.Generator, m: int, n: int, l: int) -> npt.NDArray[np.float16]:
    """c = randn fp16 (l, m, n) permuted to (m, n, l), like gpu-mode (the kernel overwrites it)."""
    return rng.standard_normal((l, m, n)).astype(np.float16).transpose(1, 2, 0)


def _check_shape(m: int, n: int, k: int, l: int) -> None:
    if min(m, n, k, l) <= 0:
        raise ValueError(f"sizes must be positive, got m={m} n={n} k={k} l={l}")
    if k % SF_VEC:
        raise ValueError(f"k must be a multiple of {SF_VEC} (one UE4M3 scale per 16 elements), got {k}")


def generate_gemv(m: int, k: int, l: int, seed: int) -> NvFp4Problem:
    """nvfp4_gemv generate_input: a/b bytes randint[0,4) (codes 0..3 in the low nibble only), b has 128 rows,
    SFs randint[0,3) -> {0, 1, 2}, c randn fp16 (M, 1, L)."""
    _check_shape(m, 1, k, l)
    rng = np.random.default_rng(seed)
    a = _batched(rng, 0, 4, l, m, k // 2)
    b = _batched(rng, 0, 4, l, GEMV_N_PADDED, k // 2)
    c = _c_init(rng, m, 1, l)
    sf_k = k // SF_VEC
    sfa, sfa_p = _scale_tensors(rng, 3, l, m, sf_k)
    sfb, sfb_p = _scale_tensors(rng, 3, l, GEMV_N_PADDED, sf_k)
    return NvFp4Problem(a, b, sfa, sfb, sfa_p, sfb_p, c, m, 1, k, l)


def generate_gemm(m: int, n: int, k: int, l: int, seed: int) -> NvFp4Problem:
    """nvfp4_gemm generate_input (after b09f481): a/b bytes int8 randint[-128,128) (all 256 byte values),
    SFs randint[0,4) -> {0, 1, 2, 3}, c randn fp16 (M, N, L)."""
    _check_shape(m, n, k, l)
    rng = np.random.default_rng(seed)
    a = _batched(rng, -128, 128, l, m, k // 2)
    b = _batched(rng, -128, 128, l, n, k // 2)
    c = _c_init(rng, m, n, l)
    sf_k = k // SF_VEC
    sfa, sfa_p = _scale_tensors(rng, 4, l, m, sf_k)
    sfb, sfb_p = _scale_tensors(rng, 4, l, n, sf_k)
    return NvFp4Problem(a, b, sfa, sfb, sfa_p, sfb_p, c, m, n, k, l)


def _dequant(x: U8, sf: U8) -> npt.NDArray[np.float64]:
    """(R, K/2, L) fp4 bytes + (R, K/16, L) SFs -> (L, R, K) float64 e2m1 * sf (exact)."""
    vals = decode_fp4x2(x.transpose(2, 0, 1)).astype(np.float64)  # (L, R, K)
    scale = decode_ue4m3(sf.transpose(2, 0, 1)).astype(np.float64)  # (L, R, K/16)
    return vals * np.repeat(scale, SF_VEC, axis=2)


def reference_gemm(p: NvFp4Problem) -> npt.NDArray[np.float16]:
    """c[m, n, l] = fp16( sum_k e2m1(a)*sfa * e2m1(b)*sfb ), summed in float64, for n < p.n (uses b rows 0..n-1).
    Returned as a new (M, N, L) array with gpu-mode's memory order (L, M, N)."""
    a = _dequant(p.a, p.sfa)
    b = _dequant(p.b[: p.n], p.sfb[: p.n])
    acc = np.matmul(a, b.transpose(0, 2, 1))  # (L, M, N) float64
    return acc.astype(np.float16).transpose(1, 2, 0)


def reference_gemv(p: NvFp4Problem) -> npt.NDArray[np.float16]:
    """GEMV reference: c[m, 0, l] from b row 0 (gpu-mode keeps column 0 of the padded product). Shape (M, 1, L)."""
    if p.n != 1:
        raise ValueError(f"reference_gemv: problem has n={p.n}, expected a GEMV problem (n=1)")
    return reference_gemm(p)


def check_close(out: npt.ArrayLike, ref: npt.ArrayLike, rtol: float = 1e-3, atol: float = 1e-3,
                max_print: int = 5) -> list[str]:
    """gpu-mode utils.verbose_allclose: |out - ref| > atol + rtol*|ref|, NaN mismatch, or +-Inf mismatch.
    Returns [] when close, else a count line, up to max_print 'ERROR AT (idx): out ref' lines and a summary."""
    o = np.asarray(out)
    r = np.asarray(ref)
    if o.shape != r.shape:
        return ["SIZE MISMATCH"]
    # gpu-mode subtracts in the tensors' dtype (fp16 for c); compute in that dtype likewise
    dt = np.result_type(o.dtype, r.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(o.astype(dt) - r.astype(dt))
        tol = atol + rtol * np.abs(r.astype(dt))
        bad = diff > tol
    bad |= np.isnan(o) ^ np.isnan(r)
    bad |= np.isposinf(o) ^ np.isposinf(r)
    bad |= np.isneginf(o) ^ np.isneginf(r)
    idx = np.argwhere(bad)
    if len(idx) == 0:
        return []
    lines = [f"Number of mismatched elements: {len(idx)}"]
    for i in idx[:max_print]:
        t = tuple(int(v) for v in i)
        lines.append(f"ERROR AT {t}: {o[t]} {r[t]}")
    if len(idx) > max_print:
        lines.append(f"... and {len(idx) - max_print} more mismatched elements.")
    return lines


# ---------------------------------------------------------------------------------------------- torch bridge
def _torch() -> Any:
    try:
        import torch  # optional dependency
    except ImportError as e:  # pragma: no cover - depends on environment
        raise ImportError("to_torch/from_torch need PyTorch (pip install ptxlab[torch])") from e
    return torch


def to_torch(p: NvFp4Problem, device: str = "cpu") -> tuple[Any, ...]:
    """The 7-tuple gpu-mode builds: (a, b, sfa, sfb, sfa_permuted, sfb_permuted, c) with dtypes
    float4_e2m1fn_x2, float4_e2m1fn_x2, float8_e4m3fn x4, float16, same shapes and strides."""
    torch = _torch()

    def conv(x: np.ndarray, dtype: Any) -> Any:
        # torch.from_numpy keeps numpy's strides; the view reinterprets the bytes
        return torch.from_numpy(np.asarray(x)).view(dtype).to(device)

    fp4, f8 = torch.float4_e2m1fn_x2, torch.float8_e4m3fn
    return (conv(p.a, fp4), conv(p.b, fp4), conv(p.sfa, f8), conv(p.sfb, f8),
            conv(p.sfa_permuted, f8), conv(p.sfb_permuted, f8), torch.from_numpy(np.asarray(p.c)).to(device))


def from_torch(t: tuple[Any, ...]) -> NvFp4Problem:
    """gpu-mode 7-tuple -> NvFp4Problem (strides preserved); n = number of columns of c (1 for GEMV)."""
    torch = _torch()
    if len(t) != 7:
        raise ValueError(f"from_torch: expected the 7-tuple (a, b, sfa, sfb, sfa_p, sfb_p, c), got {len(t)} items")

    def u8(x: Any) -> U8:
        return x.detach().cpu().view(torch.uint8).numpy()

    a, b, sfa, sfb, sfa_p, sfb_p = (u8(x) for x in t[:6])
    c = t[6].detach().cpu().numpy()
    m, half_k, l = a.shape
    n = c.shape[1]
    return NvFp4Problem(a, b, sfa, sfb, sfa_p, sfb_p, c.astype(np.float16, copy=False), m, n, 2 * half_k, l)
