"""tools/probes/tmap_driver_probe.py dry runs: the real cuda.bindings argument types reach a mocked
cuTensorMapEncodeTiled, and the analysis recovers the mocked driver rule (so the H100 run can pin the real one)."""
from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest

import cuda.bindings.driver  # noqa: E402,F401  (a declared dependency: missing it fails, never skips)
_spec = importlib.util.spec_from_file_location(
    "tmap_driver_probe", os.path.join(os.path.dirname(__file__), "..", "..", "tools", "probes",
                                        "tmap_driver_probe.py"))
probe = importlib.util.module_from_spec(_spec)
sys.modules["tmap_driver_probe"] = probe
_spec.loader.exec_module(probe)


@pytest.mark.parametrize("rule,feature,lo,hi", [("bytes19", "box_bytes_traversed", 524288, 524288),
                                                ("loaded17", "box_bytes_loaded", 131073, 140000)])
def test_mock_rule_is_recovered(tmp_path, capsys, rule, feature, lo, hi) -> None:
    out = str(tmp_path / "t.json")
    assert probe.main(["run", "--encoder", f"mock:{rule}", "--n", "80", "--seeds", "1", "--shrink", "3",
                       "--families", "12", "--out", out]) == 0
    text = capsys.readouterr().out
    with open(out) as f:
        data = json.load(f)
    assert data["random"] and data["shrinks"] and len(data["scans"]) == 12
    assert any(not r["ok"] for r in data["random"]) and any(r["ok"] for r in data["random"])
    mock = probe.MOCK_RULES[rule]
    for sh in data["shrinks"]:                              # minimal specs are rejected, and sit at the boundary
        s = probe.spec_from(sh["minimal"])
        assert not mock(s) and sh["rescue"], sh
        assert any("-> " in r and "increase" not in r for r in sh["rescue"])
    allrecs = data["random"] + [r for sc in data["scans"] for r in probe.scan_records(sc)]
    best = probe.separation(allrecs)[0]
    head = f"rejected iff {feature} >= "
    assert best[0] == 0 and best[1].startswith(head) and lo <= float(best[1][len(head):]) <= hi, best
    assert f"0 wrong: {head}" in text
    assert probe.main(["analyze", out]) == 0


def test_arguments_are_the_cuda_backend_types() -> None:
    """encode_args builds what ptxlab/device/cuda.py builds (the fake driver asserts the cuda.bindings types)."""
    fake = probe._FakeDriver(lambda s: True)
    enc = probe.Encoder(fake, 0x7F0000000000, "fake", (9, 0))
    for s in (probe._mk("UINT8", [4096], [256]), probe._mk("FLOAT32", [64, 8, 8], [32, 8, 8], [1, 2, 3]),
              probe._mk("UINT8", [4096, 256], [128, 16], swizzle="128B", l2_promotion="256B")):
        assert enc(s) == (True, "CUDA_SUCCESS")
    assert enc.calls == 3
    enc(probe._mk("UINT8", [4096], [256]))
    assert enc.calls == 3                                   # cached
    assert probe.ranges([1, 2, 3, 5, 6, 9], [True, True, False, True, True, True]) == "1-2,5-9"
