"""benchmarks/predict_b200.py: its timed launches charge every TMA load's global reads (the timing recorder must see
them, or the DRAM / L2 bytes of a TMA-fed kernel are charged as zero), and the tables it prints from rows
(before/after table, geomeans under the sensitivity scenarios)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab import gpumode
from ptxlab.production.gemm import model_c, nvfp4_gemm

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "predict_b200.py"


@pytest.fixture(scope="module")
def pb():
    spec = importlib.util.spec_from_file_location("predict_b200_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


def test_timed_tma_launch_charges_its_bytes_and_keeps_the_result(pb, rng) -> None:
    """A timed cluster-GEMM launch: DRAM + L2 bytes at least B's (every CTA's B tile is read once from somewhere), c
    (every CTA emulated) bit-exact vs the tensor-core model; afterwards the emulator's one-gather TMA path is back."""
    seed = int(rng.integers(1 << 31))
    p = gpumode.generate_gemm(128, 256, 512, 1, seed)
    dev = ptxlab.open_device("emu", timing="b200", timing_sample="all")   # every CTA: c complete
    c = nvfp4_gemm(dev, p, config={"bn": 64, "cluster": 2, "stages": 2, "warm": 1})
    amounts = dev.last_timing.amounts
    assert amounts["tma_ops"] > 0
    b_bytes = 256 * 512 // 2
    assert amounts["dram_bytes"] + amounts["l2_bytes"] >= b_bytes, (seed, amounts)
    assert (c.view(np.uint16) == model_c(p).view(np.uint16)).all(), f"seed={seed}"
    assert getattr(dev.heap, "gather_rows", True)        # the recorder's switch is gone after the launch


def _rows(kernel: str, us: tuple, model: str, sens=None) -> list:
    out = []
    for b, t in zip(gpumode.GEMM_BENCHMARKS, us):
        r = {"kernel": kernel, "shape": [b["m"], b["n"], b["k"], b["l"]], "predicted_us": t, "bound": "tensor core",
             "model": model}
        if sens is not None:
            r["sensitivity"] = [("launch_us", t - sens, t + sens)]
        out.append(r)
    return out


def test_compare_table_and_sensitivity_ranking(pb) -> None:
    before = _rows("nvfp4_gemm", (8.0, 8.0, 8.0), "old") + _rows("cluster_c1", (16.0, 16.0, 16.0), "old")
    after = _rows("nvfp4_gemm", (10.0, 10.0, 10.0), "new", 1.0) + _rows("cluster_c1", (4.0, 8.0, 2.0), "new", 1.0)
    table = pb.compare_table(before, after)
    lines = table.splitlines()
    assert lines[2].startswith("| cluster_c1 |") and "4.00 (16.00)" in lines[2] and "| 4.00 (16.00) |" in lines[2]
    assert lines[3].startswith("| nvfp4_gemm |") and "| 10.00 (8.00) |" in lines[3]
    assert "Model new; in parentheses: model old." in table
    rank = pb.sensitivity_ranking(after)
    want_lo = round(float(np.exp(np.mean(np.log([3.0, 7.0, 1.0])))), 2)
    assert rank[3] == "| table's values | 4.00 | 10.00 | cluster_c1 |"
    assert rank[4] == f"| launch_us x0.5 | {want_lo:.2f} | 9.00 | cluster_c1 |"
    assert rank[5].startswith("| launch_us x2 | ") and rank[5].endswith("| 11.00 | cluster_c1 |")
    assert pb.sensitivity_ranking(before) == []
