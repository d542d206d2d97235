"""Problem families of the corpus: inputs, kernel arguments and the host reference check.

A family instance (``make(family, **params)``) gives fresh random non-zero inputs (``arrays(rng)``; output arrays
start as poison: a NaN bit pattern, or random data for in/out arrays), the scalar arguments by name, the reference
(``reference(arrays)``: float64 or exact) and its tolerance.  ``check`` compares a device's outputs with the
reference: an element counts as written when its bits differ from the poison; ``full=True`` (a GPU run, or a run
that emulates every CTA) requires every element written, ``full=False`` (a timing-only emulation, where only the
sampled CTAs ran) requires at least ``min_written`` and checks those.  ``bytes`` is the least DRAM traffic of the
problem (inputs read once, outputs written once), for the report.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

POISON_F32 = np.uint32(0xFFC0DEAD)       # a NaN no arithmetic produces
POISON_F16 = np.uint16(0xFDEA)


def _poison(shape, dtype) -> np.ndarray:
    if np.dtype(dtype) == np.float16:
        return np.full(shape, POISON_F16, np.uint16).view(np.float16)
    return np.full(shape, POISON_F32, np.uint32).view(np.float32)


def _normal(rng, shape, dtype=np.float32) -> np.ndarray:
    a = rng.standard_normal(shape).astype(dtype)
    a[a == 0] = 1                            # non-zero
    return a


@dataclass
class Problem:
    """Base: subclasses define arrays / scalars / reference; ``outputs`` names the checked arrays."""
    outputs: tuple = ()
    rtol: float = 0.0
    atol: float = 0.0
    scalars: dict = field(default_factory=dict)

    def arrays(self, rng) -> dict:
        raise NotImplementedError

    @property
    def array_names(self) -> tuple:
        """The device arrays (kernel arguments "ptr:NAME"), without allocating them."""
        return self.ARRAYS

    def reference(self, arrays: dict) -> dict:
        raise NotImplementedError

    @property
    def bytes(self) -> int:
        raise NotImplementedError

    @property
    def flops(self) -> int:
        return 0

    def check(self, arrays: dict, got: dict, full: bool, min_written: int = 1) -> dict:
        """{'ok', 'written', 'total', 'max_err', 'detail'} comparing ``got`` (host copies of the outputs)."""
        ref = self.reference(arrays)
        res = {"ok": True, "written": 0, "total": 0, "max_err": 0.0, "detail": ""}
        for name in self.outputs:
            g, init, r = got[name].reshape(-1), arrays[name].reshape(-1), ref[name].reshape(-1)
            w = g.view(np.uint8).reshape(g.size, -1) != init.view(np.uint8).reshape(init.size, -1)
            w = w.any(axis=1)
            res["written"] += int(w.sum())
            res["total"] += g.size
            if full and not w.all():
                res["ok"] = False
                res["detail"] += f"{name}: {int((~w).sum())} of {g.size} elements not written; "
            gw, rw = g[w].astype(np.float64), r[w].astype(np.float64)
            if gw.size:
                err = np.abs(gw - rw)
                bad = ~(err <= self.atol + self.rtol * np.abs(rw))
                res["max_err"] = max(res["max_err"], float(np.nanmax(np.where(np.isnan(err), np.inf, err))))
                if bad.any():
                    i = int(np.flatnonzero(w)[np.flatnonzero(bad)[0]])
                    res["ok"] = False
                    res["detail"] += (f"{name}: {int(bad.sum())} of {gw.size} written elements wrong, first at "
                                      f"{i}: got {g[i]!r}, want {r[i]!r}; ")
        if res["written"] < min_written:
            res["ok"] = False
            res["detail"] += f"only {res['written']} elements written (want >= {min_written}); "
        return res


@dataclass
class Gemm(Problem):
    """C = alpha * A @ B + beta * C (``alpha_beta``) or C = A @ B; row- or column-major storage (``layout``)."""
    ARRAYS = ("A", "B", "C")
    M: int = 1024
    N: int = 1024
    K: int = 1024
    layout: str = "row"
    alpha_beta: bool = True

    def __post_init__(self):
        self.outputs = ("C",)
        self.rtol, self.atol = 1e-4, 1e-4 * math.sqrt(self.K)
        a, b = (1.25, 0.5) if self.alpha_beta else (1.0, 0.0)
        self.scalars = dict(M=self.M, N=self.N, K=self.K, alpha=a, beta=b, lda=self.K, ldb=self.N, ldc=self.N,
                            A_ldg_step=4 * self.K, B_ldg_step=32 * self.N)   # byte strides (YHs' SGEMM)

    def _store(self, x: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(x.T if self.layout == "col" else x)

    def arrays(self, rng) -> dict:
        A, B = _normal(rng, (self.M, self.K)), _normal(rng, (self.K, self.N))
        C = _normal(rng, (self.M, self.N)) if self.alpha_beta else _poison((self.M, self.N), np.float32)
        return {"A": self._store(A), "B": self._store(B), "C": self._store(C)}

    def _logical(self, x: np.ndarray) -> np.ndarray:
        return x.T if self.layout == "col" else x

    def reference(self, arrays: dict) -> dict:
        A, B = self._logical(arrays["A"]).astype(np.float64), self._logical(arrays["B"]).astype(np.float64)
        C = A @ B * self.scalars["alpha"]
        if self.alpha_beta:
            C += self.scalars["beta"] * self._logical(arrays["C"]).astype(np.float64)
        return {"C": self._store(C)}

    @property
    def bytes(self) -> int:
        return 4 * (self.M * self.K + self.K * self.N + (2 if self.alpha_beta else 1) * self.M * self.N)

    @property
    def flops(self) -> int:
        return 2 * self.M * self.N * self.K


@dataclass
class BlockSums(Problem):
    """out[b] = sum of x[b * per_block : (b + 1) * per_block] (a reduction's per-block partial sums)."""
    ARRAYS = ("x", "out")
    n: int = 1 << 25
    per_block: int = 256

    def __post_init__(self):
        self.outputs = ("out",)
        self.rtol, self.atol = 1e-4, 1e-5 * math.sqrt(self.per_block)
        self.scalars = dict(n=self.n)

    def arrays(self, rng) -> dict:
        return {"x": _normal(rng, self.n), "out": _poison(self.n // self.per_block, np.float32)}

    def reference(self, arrays: dict) -> dict:
        return {"out": arrays["x"].astype(np.float64).reshape(-1, self.per_block).sum(axis=1)}

    @property
    def bytes(self) -> int:
        return 4 * (self.n + self.n // self.per_block)


@dataclass
class Gemv(Problem):
    """y = A @ x, A row-major M x K."""
    ARRAYS = ("A", "x", "y")
    M: int = 1 << 19
    K: int = 32

    def __post_init__(self):
        self.outputs = ("y",)
        self.rtol, self.atol = 1e-4, 1e-4 * math.sqrt(self.K)
        self.scalars = dict(M=self.M, K=self.K)

    def arrays(self, rng) -> dict:
        return {"A": _normal(rng, (self.M, self.K)), "x": _normal(rng, self.K), "y": _poison(self.M, np.float32)}

    def reference(self, arrays: dict) -> dict:
        return {"y": arrays["A"].astype(np.float64) @ arrays["x"].astype(np.float64)}

    @property
    def bytes(self) -> int:
        return 4 * (self.M * self.K + self.K + self.M)


@dataclass
class Transpose(Problem):
    """y = x.T (x: rows x cols, row-major), or y = x (``copy``): exact."""
    ARRAYS = ("x", "y")
    rows: int = 4096
    cols: int = 4096
    copy: bool = False

    def __post_init__(self):
        self.outputs = ("y",)
        self.scalars = dict(rows=self.rows, cols=self.cols)

    def arrays(self, rng) -> dict:
        return {"x": _normal(rng, (self.rows, self.cols)), "y": _poison((self.cols, self.rows), np.float32)}

    def reference(self, arrays: dict) -> dict:
        x = arrays["x"]
        return {"y": x.reshape(self.cols, self.rows) if self.copy else np.ascontiguousarray(x.T)}

    @property
    def bytes(self) -> int:
        return 8 * self.rows * self.cols


UNARY = {   # y = f(x) of the activation kernels (LeetCUDA kernels/<op>/<op>.cu), in float64
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-np.clip(x, -88.3762626647949, 88.3762626647949))),
    "swish": lambda x: x / (1 + np.exp(-x)),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "gelu": lambda x: (lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))))(
        np.clip(x, -88.3762626647949, 88.3762626647949)),
    "hardswish": lambda x: np.where(x >= 3, x, np.where(x <= -3, 0, x * (x + 3) / 6)),
    "hardshrink": lambda x: np.where(np.abs(x) > 0.5, x, 0),
}
EXACT_UNARY = ("relu", "hardshrink")


@dataclass
class Elementwise(Problem):
    """c = a + b (``op='add'``) or y = f(x) (``op`` one of ``UNARY``), float32 or float16.  add, relu and hardshrink
    are exact; the others are compared with the float64 formula within a few float32 ulps (CUDA's expf / tanhf) or
    float16 roundings (the f16 kernels compute in half: __hmul, __hdiv, hexp)."""
    n: int = 1 << 25
    op: str = "add"
    dtype: str = "float32"

    @property
    def array_names(self) -> tuple:
        return ("a", "b", "c") if self.op == "add" else ("x", "y")

    def __post_init__(self):
        if self.op != "add" and self.op not in UNARY:
            raise KeyError(f"elementwise op {self.op!r}: add or one of {sorted(UNARY)}")
        self.outputs = ("c",) if self.op == "add" else ("y",)
        self.scalars = dict(n=self.n)
        if self.op != "add" and self.op not in EXACT_UNARY:
            self.rtol, self.atol = (1e-5, 1e-6) if self.dtype == "float32" else (1e-2, 2e-3)

    def arrays(self, rng) -> dict:
        dt = np.dtype(self.dtype)
        if self.op == "add":
            return {"a": _normal(rng, self.n, dt), "b": _normal(rng, self.n, dt), "c": _poison(self.n, dt)}
        return {"x": _normal(rng, self.n, dt), "y": _poison(self.n, dt)}

    def reference(self, arrays: dict) -> dict:
        dt = np.dtype(self.dtype)
        if self.op == "add":       # a float32 sum of two halves is exact, then one rounding: __hadd's result
            return {"c": (arrays["a"].astype(np.float32) + arrays["b"].astype(np.float32)).astype(dt)}
        if self.op in EXACT_UNARY:
            return {"y": UNARY[self.op](arrays["x"]).astype(dt)}
        return {"y": UNARY[self.op](arrays["x"].astype(np.float64))}

    @property
    def bytes(self) -> int:
        return np.dtype(self.dtype).itemsize * self.n * (3 if self.op == "add" else 2)


@dataclass
class SeparableConv(Problem):
    """One pass of a separable convolution (cuda-samples convolutionSeparable): rows or columns, radius ``radius``,
    zero outside the image; taps are the kernel's __constant__ array (``taps``)."""
    ARRAYS = ("src", "dst")
    width: int = 3072
    height: int = 3072
    radius: int = 8
    axis: str = "rows"
    taps: tuple = ()

    def __post_init__(self):
        self.outputs = ("dst",)
        self.rtol, self.atol = 1e-5, 1e-5
        self.scalars = dict(width=self.width, height=self.height, pitch=self.width)

    def arrays(self, rng) -> dict:
        return {"src": _normal(rng, (self.height, self.width)), "dst": _poison((self.height, self.width), np.float32)}

    def reference(self, arrays: dict) -> dict:
        x = arrays["src"].astype(np.float64)
        r = self.radius
        ax = 1 if self.axis == "rows" else 0
        pad = [(0, 0), (0, 0)]
        pad[ax] = (r, r)
        xp = np.pad(x, pad)
        out = np.zeros_like(x)
        n = x.shape[ax]
        for j in range(-r, r + 1):      # sum += c[R - j] * x[i + j]
            sl = [slice(None), slice(None)]
            sl[ax] = slice(r + j, r + j + n)
            out += self.taps[r - j] * xp[tuple(sl)]
        return {"dst": out}

    @property
    def bytes(self) -> int:
        return 8 * self.width * self.height


@dataclass
class RowNorm(Problem):
    """A row-wise normalisation of x (rows x cols, row-major; one row per CTA in LeetCUDA's kernels): ``softmax``
    exp(x) / sum exp(x) (the per-token kernels; the safe and online ones subtract the row max first: the same
    values), ``layernorm`` (x - mean) / sqrt(var + 1e-5) * g + b, ``rmsnorm`` x / sqrt(mean(x^2) + 1e-5) * g.
    Scalars: ``total`` (rows * cols: the softmax kernels' N), ``rows`` / ``cols`` (the norms' N / K), ``g``, ``b``."""
    ARRAYS = ("x", "y")
    rows: int = 8192
    cols: int = 1024
    op: str = "softmax"
    axis: str = "rows"          # "cols": softmax of each column (Tongkaio's softmax_col_kernel)
    dtype: str = "float32"      # float16: half in and out (LeetCUDA's f16 kernels; their sums in f32 or half)

    def __post_init__(self):
        if self.op not in ("softmax", "layernorm", "rmsnorm") or self.axis not in ("rows", "cols") or \
                (self.axis == "cols" and self.op != "softmax"):
            raise KeyError(f"row op {self.op!r} along {self.axis!r}: softmax, layernorm or rmsnorm along rows, "
                           "or softmax along cols")
        self.outputs = ("y",)
        self.rtol, self.atol = 1e-4, 1e-5 if self.op != "softmax" else 1e-9
        if self.dtype == "float16":       # one half rounding of the output, plus half arithmetic in some kernels
            self.rtol, self.atol = 1e-2, 4e-3 if self.op != "softmax" else 1e-6
        self.scalars = dict(total=self.rows * self.cols, rows=self.rows, cols=self.cols, g=1.5, b=0.25)

    def arrays(self, rng) -> dict:
        shape, dt = (self.rows, self.cols), np.dtype(self.dtype)
        return {"x": _normal(rng, shape, dt), "y": _poison(shape, dt)}

    def reference(self, arrays: dict) -> dict:
        x = arrays["x"].astype(np.float64)
        g, b = self.scalars["g"], self.scalars["b"]
        if self.op == "softmax":
            ax = 1 if self.axis == "rows" else 0
            e = np.exp(x - x.max(axis=ax, keepdims=True))
            return {"y": e / e.sum(axis=ax, keepdims=True)}
        if self.op == "layernorm":
            xc = x - x.mean(axis=1, keepdims=True)
            return {"y": xc / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5) * g + b}
        return {"y": x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-5) * g}

    @property
    def bytes(self) -> int:
        return 2 * np.dtype(self.dtype).itemsize * self.rows * self.cols


@dataclass
class BatchDot(Problem):
    """C[v] = dot(A[v, :], B[v, :]) for ``vectors`` rows of ``elements`` (cuda-samples scalarProd)."""
    ARRAYS = ("A", "B", "C")
    vectors: int = 256
    elements: int = 4096

    def __post_init__(self):
        self.outputs = ("C",)
        self.rtol, self.atol = 1e-4, 1e-5 * math.sqrt(self.elements)
        self.scalars = dict(vectors=self.vectors, elements=self.elements)

    def arrays(self, rng) -> dict:
        shape = (self.vectors, self.elements)
        return {"A": _normal(rng, shape), "B": _normal(rng, shape), "C": _poison(self.vectors, np.float32)}

    def reference(self, arrays: dict) -> dict:
        return {"C": np.einsum("ij,ij->i", arrays["A"].astype(np.float64), arrays["B"].astype(np.float64))}

    @property
    def bytes(self) -> int:
        return 4 * (2 * self.vectors * self.elements + self.vectors)


@dataclass
class BlackScholes(Problem):
    """European call and put prices (cuda-samples BlackScholes: its polynomial CND, riskfree 0.02, volatility 0.30;
    stock price in [5, 30], strike in [1, 100], years in [0.25, 10] as its main() draws them); float64 reference."""
    ARRAYS = ("call", "put", "S", "X", "T")
    n: int = 4_000_000

    def __post_init__(self):
        self.outputs = ("call", "put")
        self.rtol, self.atol = 1e-4, 2e-4          # __expf / __logf / __fdividef: a few ulps of prices up to 100
        self.scalars = dict(n=self.n, riskfree=0.02, volatility=0.30)

    def arrays(self, rng) -> dict:
        u = lambda lo, hi: rng.uniform(lo, hi, self.n).astype(np.float32)   # noqa: E731
        return {"call": _poison(self.n, np.float32), "put": _poison(self.n, np.float32), "S": u(5, 30),
                "X": u(1, 100), "T": u(0.25, 10)}

    @staticmethod
    def _cnd(d):
        k = 1 / (1 + 0.2316419 * np.abs(d))
        poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
        c = 0.39894228040143267794 * np.exp(-0.5 * d * d) * poly
        return np.where(d > 0, 1 - c, c)

    def reference(self, arrays: dict) -> dict:
        S, X, T = (arrays[k].astype(np.float64) for k in "SXT")
        R, V = self.scalars["riskfree"], self.scalars["volatility"]
        sq = np.sqrt(T)
        d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sq)
        d2 = d1 - V * sq
        c1, c2, e = self._cnd(d1), self._cnd(d2), np.exp(-R * T)
        return {"call": S * c1 - X * e * c2, "put": X * e * (1 - c2) - S * (1 - c1)}

    @property
    def bytes(self) -> int:
        return 4 * 5 * self.n


@dataclass
class Embedding(Problem):
    """y[t, :] = weight[idx[t], :] for ``tokens`` indices into a ``vocab`` x ``emb`` table (LeetCUDA embedding):
    exact.  Indices are drawn from 1..vocab-1 (non-zero, as every input here)."""
    ARRAYS = ("idx", "weight", "y")
    tokens: int = 16384
    vocab: int = 32000
    emb: int = 1024
    dtype: str = "float32"

    def __post_init__(self):
        self.outputs = ("y",)
        self.scalars = dict(tokens=self.tokens, emb=self.emb)

    def arrays(self, rng) -> dict:
        dt = np.dtype(self.dtype)
        return {"idx": rng.integers(1, self.vocab, self.tokens, dtype=np.int32),
                "weight": _normal(rng, (self.vocab, self.emb), dt), "y": _poison((self.tokens, self.emb), dt)}

    def reference(self, arrays: dict) -> dict:
        return {"y": arrays["weight"][arrays["idx"]]}

    @property
    def bytes(self) -> int:
        return 4 * self.tokens + 2 * np.dtype(self.dtype).itemsize * self.tokens * self.emb


@dataclass
class Hgemm(Problem):
    """C = A @ B in half precision with half accumulation (``mma.sync...f16.f16.f16.f16``, PTX ISA 9.7.14.5.8):
    A row-major M x K, B column-major (stored N x K), C row-major M x N (Bruce-Lee-LY/cuda_hgemm's layout).
    Reference in float64; tolerance: each m16n8k16 rounds its f16 sum once, K / 16 roundings of values of
    size ~sqrt(K) (inputs standard normal): atol 8 half ulps (2^-11 relative) of sqrt(K) times sqrt(K / 16) (1.0 at
    K = 1024), rtol 1 %; a lost or doubled k-block of 16 products is off by ~4, far outside."""
    ARRAYS = ("A", "B", "C")
    M: int = 2048
    N: int = 2048
    K: int = 1024

    def __post_init__(self):
        self.outputs = ("C",)
        self.rtol, self.atol = 1e-2, 8 * 2.0 ** -11 * math.sqrt(self.K) * math.sqrt(self.K / 16)
        self.scalars = dict(M=self.M, N=self.N, K=self.K)

    def arrays(self, rng) -> dict:
        return {"A": _normal(rng, (self.M, self.K), np.float16), "B": _normal(rng, (self.N, self.K), np.float16),
                "C": _poison((self.M, self.N), np.float16)}

    def reference(self, arrays: dict) -> dict:
        return {"C": arrays["A"].astype(np.float64) @ arrays["B"].astype(np.float64).T}

    @property
    def bytes(self) -> int:
        return 2 * (self.M * self.K + self.K * self.N + self.M * self.N)

    @property
    def flops(self) -> int:
        return 2 * self.M * self.N * self.K


@dataclass
class Hgemv(Problem):
    """C = A @ B for a half vector A (1 x K) and B column-major K x N (stored N x K), C half (1 x N)
    (Bruce-Lee-LY/cuda_hgemv): float32 sums of half products, one half rounding of the result; reference in float64,
    tolerance 4 half ulps (2^-11 relative) plus 1e-4 sqrt(K) for the float32 sums (one lost product is ~1)."""
    ARRAYS = ("A", "B", "C")
    N: int = 16384
    K: int = 4096

    def __post_init__(self):
        self.outputs = ("C",)
        self.rtol, self.atol = 2e-3, 1e-4 * math.sqrt(self.K)      # float32 sums of K terms, then one half rounding
        self.scalars = dict(N=self.N, K=self.K)

    def arrays(self, rng) -> dict:
        return {"A": _normal(rng, self.K, np.float16), "B": _normal(rng, (self.N, self.K), np.float16),
                "C": _poison(self.N, np.float16)}

    def reference(self, arrays: dict) -> dict:
        return {"C": arrays["B"].astype(np.float64) @ arrays["A"].astype(np.float64)}

    @property
    def bytes(self) -> int:
        return 2 * (self.K + self.N * self.K + self.N)


FAMILIES = {"gemm": Gemm, "hgemv": Hgemv, "hgemm": Hgemm, "rownorm": RowNorm, "embedding": Embedding, "batchdot": BatchDot, "blackscholes": BlackScholes, "block_sums": BlockSums, "gemv": Gemv, "transpose": Transpose,
            "elementwise": Elementwise, "sepconv": SeparableConv}


def make(family: str, **params) -> Problem:
    if family not in FAMILIES:
        raise KeyError(f"unknown problem family {family!r}; families: {sorted(FAMILIES)}")
    return FAMILIES[family](**params)
