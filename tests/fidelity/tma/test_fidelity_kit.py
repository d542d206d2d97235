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


def test_tx_probe_is_conclusive_on_the_model() -> None:
    """Deferred-arrival tx cases: exactly one expect_tx value per group may complete, and the verdict names it."""
    cases = {c.name: c for c in kit.build_cases(3, {"tx"}, quick=True)}
    assert all(c.tx_mode == 1 for c in cases.values())
    arrays = {}
    for name, c in cases.items():
        res = kit.run_one("model", c, 1)
        arrays[f"{name}:info"], arrays[f"{name}:error"] = res["info"], np.array(res["error"])
    text = kit.tx_verdicts(arrays_z(arrays), cases)
    assert "tx/128B/UINT8/2d/hi: completed for ['full'] of ['full', 'fullm16', 'inbound'] -> complete_tx = FULL" in text
    assert "INCONCLUSIVE" not in text
    arrays["tx/128B/UINT8/2d/hi/inbound:info"] = np.array([1, 0, 0, 0, 0, 0, 0, 0], np.uint64)   # as the old probe saw
    assert "tx/128B/UINT8/2d/hi: completed for ['full', 'inbound']" in kit.tx_verdicts(arrays_z(arrays), cases)


class arrays_z(dict):
    """A dict that looks like an np.load result."""

    @property
    def files(self):
        return list(self.keys())


def test_children_restart_after_a_poisoning_fault(tmp_path, monkeypatch) -> None:
    """cuda path on the emulator: with every error treated as context-killing, each fault ends its child and the
    next case runs in a fresh one; the results equal an in-process run."""
    a, b = str(tmp_path / "inproc.npz"), str(tmp_path / "children.npz")
    assert kit.main(["run", "--backend", "emu", "--out", a, "--probes", "align", "--quick"]) == 0
    monkeypatch.setenv("TMA_FIDELITY_FAKE_POISON", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([os.path.abspath(os.path.join(os.path.dirname(__file__), "..",
                                                                                   "..", "..")),
                                                      os.environ.get("PYTHONPATH", "")]))
    assert kit.main(["run", "--backend", "emu", "--child-backend", "emu", "--out", b, "--probes", "align",
                     "--quick"]) == 0
    za, zb = np.load(a), np.load(b)
    names = [c["name"] for c in __import__("json").loads(str(za["cases_json"]))]
    n_err = 0
    for n in names:
        ea, eb = str(za[f"{n}:error"]), str(zb[f"{n}:error"])
        assert bool(ea) == bool(eb), n
        n_err += bool(ea)
        if ea:
            assert "fresh process" in eb
        else:
            assert np.array_equal(za[f"{n}:image"], zb[f"{n}:image"]), n
    assert n_err == 9 and len(names) == 18


def test_compare_fails_on_an_unexplained_one_sided_error(tmp_path, capsys) -> None:
    """One side raising where the other ran is a failure, unless it is a host-side refusal of an encoding that the
    GPU does not have (then the case carries no information)."""
    out = str(tmp_path / "m.npz")
    assert kit.main(["run", "--backend", "model", "--out", out, "--probes", "store", "--quick"]) == 0
    z = dict(np.load(out))
    for err, rc in (("TmaUnconfirmed: not measured", 1),
                    ("TensorMapError: tensor map: dtype 16U4_ALIGN8B needs a compute capability 10.x GPU", 0)):
        bad = dict(z)
        bad["store/128B/UINT8/2d/hi:error"] = np.array(err)
        p = str(tmp_path / "bad.npz")
        np.savez(p, **bad)
        assert kit.main(["compare", out, p]) == rc, err
        assert f"{rc} unexplained" in capsys.readouterr().out
