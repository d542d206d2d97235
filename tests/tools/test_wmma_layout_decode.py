"""tools/wmma_layout_decode.py: probe words (as tests/kernels/wmma.cu's ``dump`` writes them into 0xFF-poisoned
buffers) decode to the maps they were built from; a fragment missing an element, a .col load that disagrees with the
.row one, and two results that disagree are errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import wmma_layout_decode as dec  # noqa: E402

POISON = np.uint64(0xFFFFFFFFFFFFFFFF)


def _words(flat: np.ndarray) -> np.ndarray:
    w = np.full(32 * 64, POISON)
    w[:flat.size] = flat.reshape(-1)
    return w.reshape(32, 64)


def _result(rng) -> tuple:
    """Random fragments of every kind the probe has: f16 A (two copies), s8 B (low / high byte), f32 C."""
    a = rng.permutation(256).reshape(32, 8)
    b = rng.permutation(256).reshape(32, 8)
    c = rng.permutation(256).reshape(32, 8)
    res = {}
    for lay in ("row", "col"):
        res[f"{dec.PREFIX}lay_a_{lay}_f16_m16n16k16"] = _words(np.concatenate([a, a], 1).astype(np.uint64))
        res[f"{dec.PREFIX}lay_b_{lay}_s8_m16n16k16"] = _words((b & 0xFF).astype(np.uint64))
        res[f"{dec.PREFIX}lay_b_{lay}_s8_m16n16k16_hi"] = _words((b >> 8).astype(np.uint64))
    res[f"{dec.PREFIX}lay_c_f32_m16n16k16"] = _words(c.astype(np.uint64))
    return res, {"a_f16_m16n16k16": np.concatenate([a, a], 1), "b_s8_m16n16k16": b, "c_f32_m16n16k16": c}


def test_decode_round_trip_and_errors(rng, tmp_path):
    res, want = _result(rng)
    got = dec.decode(res)
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
    bad = dict(res)
    w = bad[f"{dec.PREFIX}lay_c_f32_m16n16k16"].copy()
    w[0, 0], w[0, 1] = w[0, 1], w[0, 0]                       # lanes 0's elements 0 and 1 swapped: still complete
    bad[f"{dec.PREFIX}lay_c_f32_m16n16k16"] = w
    np.savez(tmp_path / "x.npz", **res)
    np.savez(tmp_path / "y.npz", **bad)
    with pytest.raises(SystemExit, match="disagree"):
        dec.main([str(tmp_path / "out.npz"), str(tmp_path / "x.npz"), str(tmp_path / "y.npz")])
    w[0, 0] = w[0, 1]                                          # an element held nowhere
    with pytest.raises(ValueError, match="not a fragment"):
        dec.decode(bad)
    col = dict(res)
    a = want["a_f16_m16n16k16"][::-1]                          # the lanes reversed
    col[f"{dec.PREFIX}lay_a_col_f16_m16n16k16"] = _words(a.astype(np.uint64))
    with pytest.raises(ValueError, match="depends on the memory layout"):
        dec.decode(col)
