"""The fidelity kit itself: deterministic cases, model backend, and the compare mode catching a flipped byte."""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np

_spec = importlib.util.spec_from_file_location(
    "run_tma_fidelity", os.path.join(os.path.dirname(__file__), "run_tma_fidelity.py"))
kit = importlib.util.module_from_spec(_spec)
sys.modules["run_tma_fidelity"] = kit   # dataclasses resolve their module through sys.modules
_spec.loader.exec_module(kit)


def test_cases_are_deterministic_and_valid() -> None:
    a = kit.build_cases(7, {"images", "tx", "align"}, quick=True)
    b = kit.build_cases(7, {"images", "tx", "align"}, quick=True)
    assert [c.name for c in a] == [c.name for c in b] and [c.coords for c in a] == [c.coords for c in b]
    assert len({c.name for c in a}) == len(a)
    c = next(x for x in a if x.name == "tx/128B/UINT8/2d/hi/inbound")
    assert 0 < c.inbound_bytes() < c.box_bytes()


def test_model_run_and_compare(tmp_path) -> None:
    out = str(tmp_path / "m.npz")
    assert kit.main(["run", "--backend", "model", "--out", out, "--probes", "tx,store", "--quick"]) == 0
    z = np.load(out)
    # the model assumes full-box complete_tx: expect=full completes, expect=in-bound (< full) does not
    assert int(z["tx/128B/UINT8/2d/hi/full:info"][0]) == 1
    assert int(z["tx/128B/UINT8/2d/hi/inbound:info"][0]) == 0
    assert kit.main(["compare", out, out]) == 0
    bad = dict(z)
    img = bad["store/128B/UINT8/2d/hi:image"].copy()
    img[5] ^= 1
    bad["store/128B/UINT8/2d/hi:image"] = img
    out2 = str(tmp_path / "bad.npz")
    np.savez(out2, **bad)
    assert kit.main(["compare", out, out2]) == 1
