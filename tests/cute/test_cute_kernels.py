"""The project's own CuTe DSL kernels (tests/cute/scripts/) run under ``lab.py exec``, kernels and @cute.jit host
functions as a GPU would run them: TMEM round trip, 1-CTA tcgen05 GEMM (TMA, mbarrier ring), block-scaled NVFP4 GEMM
(tcgen05.cp scales, kind::mxf4nvf4) -- each bit-exact on fresh random inputs against a float64 reference, outputs
poisoned by the emulator's fresh allocations. Emulator faults name the kernel's Python line; lab.py time times them."""
from __future__ import annotations

import re

import pytest

from cute_helpers import REPO, SCRIPTS, needs_cute, run_exec

pytestmark = needs_cute


def _ok(p, expect: str):
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert expect in p.stdout, p.stdout[-2000:]


def test_tmem_roundtrip(rng):
    seed, cols = int(rng.integers(1, 2**31)), int(rng.choice([32, 64]))
    _ok(run_exec(SCRIPTS / "tmem_roundtrip.py", seed, cols), f"tmem round trip: 128 x {cols} fp32 bit-exact")


def test_fault_names_the_python_line_of_the_dsl_kernel():
    p = run_exec(SCRIPTS / "tmem_roundtrip.py", 1, 64, "--bug")
    assert p.returncode == 1
    assert "ptxlab driver: the emulator stopped a kernel" in p.stderr
    assert "[tmem:unallocated] tcgen05.st touches TMEM column(s) 32" in p.stderr
    src = (SCRIPTS / "tmem_roundtrip.py").read_text().splitlines()
    line = next(i for i, ln in enumerate(src, 1) if "cute.copy(st, r_in" in ln)
    assert re.search(rf"source : \S*tmem_roundtrip\.py:{line}\b", p.stderr), p.stderr[-3000:]
    assert "cudaErrorLaunchFailure" in p.stderr          # what the DSL's host code then reports, as on a GPU


def test_gemm_1cta(rng):
    seed = int(rng.integers(1, 2**31))
    m, n, k = int(rng.choice([128, 256])), 128, int(rng.choice([64, 192]))
    _ok(run_exec(SCRIPTS / "gemm_1cta.py", seed, m, n, k), f"gemm {m}x{n}x{k}: fp32 result bit-exact")


def test_nvfp4_gemm(rng):
    seed, k = int(rng.integers(1, 2**31)), int(rng.choice([256, 512]))
    _ok(run_exec(SCRIPTS / "nvfp4_gemm.py", seed, 128, 256, k), f"nvfp4 gemm 128x256x{k}: fp32 result bit-exact")


def test_lab_time_predicts_dsl_launches(tmp_path):
    import subprocess
    import sys
    p = subprocess.run([sys.executable, str(REPO / "lab.py"), "time", "--gpu", "b200", str(SCRIPTS / "gemm_1cta.py"),
                        "5", "128", "128", "64"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "gemm 128x128x64: fp32 result bit-exact" in p.stdout
    assert "kernel_cutlass_gemm_kernel" in p.stdout and "predicted" in p.stdout.lower()
