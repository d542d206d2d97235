"""H100 evidence behind the emulator's barrier-divergence defaults (ptx_docs/emulator_checks.md "Barrier
divergence"): reruns the key cases of tools/probes/barrier_divergence_probe.py on the GPU. Every case runs in a worker
process watched by the probe's driver, so a case that hangs is killed and reported instead of hanging the suite."""
from __future__ import annotations

import importlib.util
from pathlib import Path

PROBE = Path(__file__).resolve().parents[2] / "tools" / "probes" / "barrier_divergence_probe.py"
_spec = importlib.util.spec_from_file_location("barrier_divergence_probe", PROBE)
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)

# case -> threads per CTA that read a partner's slot each iteration (exit_lanes_late: 112 alive, 16 of them have an
# exited partner); count_more_once exchanges no data
COMPLETES = {"exit_warps": 64, "exit_lanes_late": 96, "div_warps_aligned": 128, "div_warps_nonaligned": 128,
             "div_lanes_nonaligned": 128, "count_more_once": 0}


def test_barrier_cases_the_hardware_completes_and_orders(cuda_dev, tmp_path):
    grid, iters, repeats = 132, 16, 2
    res = {r["case"]: r for r in probe.drive(list(COMPLETES), "cuda", str(tmp_path / "hw.jsonl"), grid=grid,
                                             iters=iters, repeats=repeats, delay=2000)}
    for name in COMPLETES:
        r = res[name]
        assert r["outcome"] == "completed", (name, r)
        assert r["missing_records"] == 0 and r["extra_records"] == 0 and r["bad"] == 0, (name, r)
        # every reading thread saw its partner's value of each iteration: the barrier ordered both sides
        assert r["good"] == repeats * grid * COMPLETES[name] * iters, (name, r)
    # the late-exiting lanes set their flag before exiting: the barrier waited for them
    assert res["exit_lanes_late"]["flag_set"] == repeats * grid * 112


def test_warp_split_over_aligned_barriers_hangs(cuda_dev, tmp_path):
    """The case the emulator keeps as an error: the lanes of one warp at two bar.sync instructions."""
    res = probe.drive(["div_lanes_aligned"], "cuda", str(tmp_path / "hang.jsonl"), grid=4, iters=2, repeats=1,
                      delay=100, hang_s=4.0)
    assert res[0]["outcome"] == "hang", res
