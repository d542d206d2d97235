"""What every CUTLASS example runner shares: the result record, the module cache, the examples' data recipe and
host reference GEMM (example_utils.hpp)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import build, capture


@dataclass
class ExampleResult:
    name: str
    shape: dict
    outputs: dict                    # name -> array from the device
    references: dict                 # name -> numpy reference of the example's host reference
    launch: capture.Launch
    stats: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        return all(np.array_equal(self.outputs[k], self.references[k]) for k in self.references)

    def mismatches(self) -> dict:
        return {k: int(np.count_nonzero(self.outputs[k] != self.references[k])) for k in self.references}

    # the GEMM tutorials' single output
    @property
    def d(self) -> np.ndarray:
        return self.outputs["D"]

    @property
    def reference(self) -> np.ndarray:
        return self.references["D"]


_MODULES: dict = {}


def module(wrapper: str, dirs, arch: str = "sm_100a"):
    key = (wrapper, arch)
    if key not in _MODULES:
        _MODULES[key] = build.compile_wrapper(wrapper, dirs, arch=arch)
    return _MODULES[key]


# ------------------------------------------------------------------------------------------------ inputs
def initialize_tensor(rng: np.random.Generator, shape, lo: int = -2, hi: int = 2) -> np.ndarray:
    """example_utils.hpp initialize_tensor: int((max-min) * (rand() / double(RAND_MAX)) + min), C truncation."""
    rand_max = 2**31 - 1
    r = rng.integers(0, rand_max, size=shape, endpoint=True).astype(np.float64)
    return np.trunc((hi - lo) * (r / rand_max) + lo)


def reference_gemm(a, b, c, alpha: float, beta: float) -> np.ndarray:
    """example_utils.hpp reference_gemm<float>: D(m,n) = alpha * sum_k A(m,k)*B(n,k) + beta * C(m,n) in float."""
    acc = np.zeros((a.shape[0], b.shape[0]), np.float32)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    for k in range(a.shape[1]):           # the host loop's k order (exact anyway for the examples' integer data)
        acc += np.outer(a32[:, k], b32[:, k])
    return (np.float32(alpha) * acc + np.float32(beta) * c.astype(np.float32)).astype(np.float32)
