"""One runner per CUTLASS example: inputs as the example's main() makes them, the captured launch, the reference."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

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


def tutorial_dir() -> Path:
    return build.cutlass_source_dir() / "examples" / "cute" / "tutorial" / "blackwell"


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


# ------------------------------------------------------------------------------------------------ tutorials
def _tutorial_f16_gemm(wrapper: str, tile: tuple) -> Callable:
    """Runner for the CuTe Blackwell GEMM tutorials (half_t A/B K-major, float C/D N-major, alpha/beta float)."""

    def run_tutorial(dev: Any, m: int, n: int, k: int, alpha: float = 1.0, beta: float = 0.0, seed: int = 0,
                     host_dev: Any = None) -> ExampleResult:
        if m % tile[0] or n % tile[1] or k % tile[2]:
            raise ValueError(f"{wrapper}: ({m},{n},{k}) must be multiples of the MMA tiler {tile} (the example refuses "
                             "other shapes: 'OOB accesses are not supported')")
        t0 = time.perf_counter()
        mod = module(wrapper, [tutorial_dir()])
        t1 = time.perf_counter()
        rng = np.random.default_rng(seed)
        a = initialize_tensor(rng, (m, k)).astype(np.float16)
        b = initialize_tensor(rng, (n, k)).astype(np.float16)
        c = initialize_tensor(rng, (m, n)).astype(np.float32)
        bufs = [dev.to_device(a), dev.to_device(b), dev.to_device(c), dev.empty(m * n * 4)]
        dev.memset(bufs[3], 0xFF)
        hdev = host_dev or dev       # the example's host code runs on the emulator
        if hdev is not dev:
            raise ValueError("host_dev must be the launching device for now (its pointers go into the parameters)")
        launch = capture.run_host(hdev, mod, [*bufs, np.int32(m), np.int32(n), np.int32(k), np.float32(alpha),
                                              np.float32(beta)])
        t2 = time.perf_counter()
        args = capture.resolve_tensor_maps(dev, launch, bufs)
        capture.launch_captured(dev, mod, capture.kernel_entry(mod, "gemm_device"), launch, args)
        t3 = time.perf_counter()
        d = dev.to_host(bufs[3], np.float32).reshape(m, n)
        return ExampleResult(wrapper.removesuffix(".cu"), dict(m=m, n=n, k=k, alpha=alpha, beta=beta), {"D": d},
                             {"D": reference_gemm(a, b, c, alpha, beta)}, launch,
                             dict(getattr(dev, "last_stats", {}) or {}),
                             dict(build=t1 - t0, host=t2 - t1, kernel=t3 - t2))
    return run_tutorial


EXAMPLES: dict = {
    # name: (runner, description, smallest shape)
    "tutorial_02": (_tutorial_f16_gemm("tutorial_02.cu", (128, 256, 64)),
                    "CuTe Blackwell tutorial 02: tcgen05.mma + TMA (02_mma_tma_sm100.cu)", dict(m=128, n=256, k=64)),
}


def examples() -> dict:
    """{name: description}"""
    return {k: v[1] for k, v in EXAMPLES.items()}


def run(name: str, dev: Any, **shape) -> ExampleResult:
    """Build and run example ``name`` on ``dev``; ``shape`` as the runner takes it (defaults: smallest shape)."""
    if name not in EXAMPLES:
        raise KeyError(f"unknown CUTLASS example {name!r}; available: {sorted(EXAMPLES)}")
    fn, _, smallest = EXAMPLES[name]
    return fn(dev, **{**smallest, **shape})
