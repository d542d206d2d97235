"""The emulator's barrier-divergence defaults against the H100 record (tools/probes/data/barrier_divergence_h100.json,
made by tools/probes/barrier_divergence_probe.py; table in ptx_docs/emulator_checks.md): the probe's kernels run on
the emulator here, in default and strict mode."""
from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.checks.sitewarn import EmuWarning
from ptxlab.errors import EmuError

PROBES = Path(__file__).resolve().parents[3] / "tools" / "probes"
_spec = importlib.util.spec_from_file_location("barrier_divergence_probe", PROBES / "barrier_divergence_probe.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)

# case -> (H100 outcome, emulator default: "ok" | "warn" | error text, reading threads per CTA)
DECIDED = {
    "uniform": ("completed", "ok", 128),
    "exit_warps": ("completed", "warn", 64),
    "exit_warps_late": ("completed", "warn", 64),
    "exit_lanes": ("completed", "warn", 80),
    "exit_lanes_late": ("completed", "warn", 96),
    "div_warps_nonaligned": ("completed", "ok", 128),
    "div_warps_aligned": ("completed", "warn", 128),
    "div_warps_aligned_syncwarp": ("completed", "warn", 128),
    "count_exact": ("completed", "ok", 64),
    "count_more": ("hang", "warn", 128),
    "count_more_staggered": ("completed", "ok", 0),    # two generations of 64 (forward progress, SPIN_PICKS)
    "count_more_once": ("completed", "warn", 0),
    "div_lanes_nonaligned": ("completed", "ok", 128),
    "div_lanes_aligned": ("hang", "H100 this hangs", 0),
    "count_fewer_exit": ("hang", "deadlock", 0),
    "partial_deadlock": ("hang", "deadlock", 0),
}
GRID, ITERS = 2, 4


def h100_outcomes() -> dict:
    rec = json.loads((PROBES / "data" / "barrier_divergence_h100.json").read_text())
    out = {}
    for call in rec["calls"]:                    # the later call re-measured count_more: same outcome
        out.update({r["case"]: r for r in call["results"]})
    return out


@pytest.fixture(scope="module")
def mod():
    return probe.compile_module()


def test_the_record_covers_every_probe_case_and_matches_the_decisions():
    hw = h100_outcomes()
    assert set(hw) == set(probe.CASES) == set(DECIDED)
    for name, (outcome, _, readers) in DECIDED.items():
        assert hw[name]["outcome"] == outcome, name
        if outcome == "completed":
            assert hw[name]["bad"] == 0 and hw[name]["missing_records"] == 0, name
            assert hw[name]["good"] == 8 * 264 * readers * 64, name     # every read saw this iteration's value


@pytest.mark.parametrize("name", list(DECIDED))
def test_emulator_default_and_strict_follow_the_h100(mod, rng, name):
    hw, emu, readers = DECIDED[name]
    dev = ptxlab.open_device("emu", strict=False)
    if emu in ("ok", "warn"):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            r = probe.run_case(dev, mod, name, GRID, ITERS, 1, 64, rng)
        warned = [str(w.message) for w in ws if issubclass(w.category, EmuWarning)]
        assert r["completed"] and r["bad"] == 0 and r["extra_records"] == 0, r
        assert r["good"] == GRID * readers * ITERS, r
        assert bool(warned) == (emu == "warn"), warned
        if emu == "warn":
            assert all("synccheck" in w and "PTXLAB_EMU_STRICT" in w for w in warned)
            with pytest.raises(EmuError, match="strict"):
                probe.run_case(ptxlab.open_device("emu", strict=True), mod, name, GRID, ITERS, 1, 64, rng)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error", EmuWarning)
                r = probe.run_case(ptxlab.open_device("emu", strict=True), mod, name, GRID, ITERS, 1, 64, rng)
            assert r["completed"]
    else:
        with pytest.raises(EmuError, match=emu):
            probe.run_case(dev, mod, name, GRID, ITERS, 1, 64, rng)
    if name == "exit_lanes_late":   # the barrier waited for the lanes that were still running
        assert r["flag_set"] == GRID * 112
