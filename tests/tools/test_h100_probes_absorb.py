"""tools/probes/h100_probes_absorb.py on a synthetic hardware result: it runs the emulator halves, compares, and names
the emulator change for each measured outcome (so the real H100 output is absorbed quickly)."""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _load(name: str, rel: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, rel))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@contextlib.contextmanager
def _model_before_run3():
    """hw/tma.py as it was before the H100 probe run absorbed on 2026-11-22 (TMA kit run 3): unmeasured NaN patterns,
    two narrow store pairs, no TF32 conversion; so that the synthetic 'hardware' below still differs from it."""
    from ptxlab.emu.hw import tma as tm

    saved = (dict(tm.OOB_NAN_BITS), tm.NARROW_STORE_CONFIRMED, dict(tm.LOAD_CONVERT))
    try:
        tm.OOB_NAN_BITS.update({k: None for k in ("BFLOAT16", "FLOAT64", "FLOAT32_FTZ", "TFLOAT32", "TFLOAT32_FTZ")})
        tm.NARROW_STORE_CONFIRMED = frozenset({("128B", 64), ("64B", 32)})
        tm.LOAD_CONVERT.clear()
        yield
    finally:
        tm.OOB_NAN_BITS.clear()
        tm.OOB_NAN_BITS.update(saved[0])
        tm.NARROW_STORE_CONFIRMED = saved[1]
        tm.LOAD_CONVERT.clear()
        tm.LOAD_CONVERT.update(saved[2])


@pytest.fixture(scope="module")
def fake_hw(tmp_path_factory):
    import cuda.bindings.driver  # noqa: F401  (a declared dependency: missing it fails, never skips)
    with _model_before_run3():
        return _fake_hw(tmp_path_factory)


def _fake_hw(tmp_path_factory):
    from ptxlab.emu.hw import tma as tm

    d = tmp_path_factory.mktemp("hw")
    probe = _load("tmap_driver_probe", "tools/probes/tmap_driver_probe.py")
    assert probe.main(["run", "--encoder", "mock:bytes19", "--n", "60", "--seeds", "0", "--shrink", "2",
                       "--families", "8", "--out", str(d / "tmap_rule.json")]) == 0
    mb = _load("run_mbar_fidelity", "tests/fidelity/mbarrier/run_mbar_fidelity.py")
    p = str(d / "mbar_cuda.json")
    assert mb.main(["run", "--backend", "model", "--out", p]) == 0
    z = json.load(open(p))
    z["backend"] = "cuda"
    for r in z["results"]:                       # hardware says: expect_tx back to 0 does not complete the phase
        r["raw"] = [f"0x{i:016x}" for i in range(r["k"] + 1)]
        if r["seq"] in ("complete_first", "bulk_first") and r["k"] == 4:
            r["p0"], r["p1"] = 0, 1
    json.dump(z, open(p, "w"))
    kit = _load("run_tma_fidelity", "tests/fidelity/tma/run_tma_fidelity.py")
    m = str(d / "model.npz")
    assert kit.main(["run", "--backend", "model", "--seed", "20261122", "--probes", "narrow,nanfill,txnarrow",
                     "--out", m]) == 0
    hw = dict(np.load(m))
    hw["backend"] = np.array("cuda")
    cases = {c["name"]: kit.Case(**c) for c in json.loads(str(hw["cases_json"]))}
    saved_bits, saved_st = dict(tm.OOB_NAN_BITS), tm.NARROW_STORE_CONFIRMED
    try:
        tm.OOB_NAN_BITS["BFLOAT16"] = 0x7FF7
        tm.NARROW_STORE_CONFIRMED = frozenset(saved_st | {("128B", 32)})
        for n in ("nan/BFLOAT16/2d/hi", "narrow/store/128B/inner32/in", "narrow/store/128B/inner32/hi"):
            r = kit.run_model(cases[n])
            hw[f"{n}:image"], hw[f"{n}:info"], hw[f"{n}:error"] = r["image"], r["info"], np.array("")
    finally:
        tm.OOB_NAN_BITS.update(saved_bits)
        tm.NARROW_STORE_CONFIRMED = saved_st
    img = hw["nan/FLOAT32_FTZ/2d/special:image"].copy().view(np.uint32)
    img[img == 0x00000001] = 0                   # a flushed denormal
    hw["nan/FLOAT32_FTZ/2d/special:image"] = img.view(np.uint8)
    for e in ("full", "padded"):                 # hardware counts the padded rows
        hw[f"tx/narrow/128B/inner64/2d/in/{e}:info"] = np.array([int(e == "padded")] + [0] * 7, np.uint64)
    np.savez(str(d / "tma_cuda3.npz"), **hw)
    return str(d)


def test_absorb_names_each_change(fake_hw, capsys) -> None:
    from ptxlab.emu.hw import tma as tm

    before = (dict(tm.OOB_NAN_BITS), tm.NARROW_STORE_CONFIRMED)
    ab = _load("h100_probes_absorb", "tools/probes/h100_probes_absorb.py")
    with _model_before_run3():
        inside = (dict(tm.OOB_NAN_BITS), tm.NARROW_STORE_CONFIRMED)
        rc = ab.main(["all", fake_hw])
        assert (dict(tm.OOB_NAN_BITS), tm.NARROW_STORE_CONFIRMED) == inside   # candidates tried, then restored
    assert (dict(tm.OOB_NAN_BITS), tm.NARROW_STORE_CONFIRMED) == before
    out = capsys.readouterr().out
    assert rc == 1                                              # differences found
    # tensor maps
    assert "0 wrong: rejected iff box_bytes_traversed >= 524288" in out and "ABSORB (tensor maps)" in out
    # mbarrier
    assert "DIFF complete_first[4]" in out and "DIFF bulk_first[4]" in out
    assert "expect_tx back to tx 0 with pending 0 does NOT complete" in out
    assert "raw 64-bit mbarrier word" in out and "ABSORB (mbarrier)" in out
    # TMA
    assert "nanfill BFLOAT16: 224 OOB elements, patterns ['0x7ff7']" in out
    assert "- hw.tma.OOB_NAN_BITS['BFLOAT16'] = 0x7ff7" in out
    assert "- add ('128B', 32) to hw.tma.NARROW_STORE_CONFIRMED" in out
    assert "special FLOAT32_FTZ:" in out and "0x1->0x0" in out and "FLOAT32_FTZ loads convert data" in out
    assert "special TFLOAT32: in-bound bytes copied unchanged" in out
    assert "complete_tx of narrow box 128B/inner64 = rows x span" in out
