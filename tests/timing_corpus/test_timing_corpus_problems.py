"""problems.py: fresh non-zero inputs, poisoned outputs, references and the written-elements check."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from repo_root import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from timing_corpus import problems  # noqa: E402

SMALL = {"gemm": dict(M=48, N=40, K=24), "block_sums": dict(n=1024, per_block=64), "gemv": dict(M=96, K=16),
         "transpose": dict(rows=24, cols=40), "elementwise": dict(n=4096),
         "sepconv": dict(width=64, height=32, radius=2, taps=(0.5, 0.25, 1.0, 0.125, 2.0)),
         "rownorm": dict(rows=6, cols=64, op="layernorm"), "batchdot": dict(vectors=5, elements=96),
         "blackscholes": dict(n=512), "embedding": dict(tokens=7, vocab=11, emb=16),
         "hgemm": dict(M=32, N=16, K=32), "hgemv": dict(N=40, K=64)}


@pytest.mark.parametrize("family", sorted(problems.FAMILIES))
def test_arrays_fresh_nonzero_and_poisoned(family, rng) -> None:
    p = problems.make(family, **SMALL[family])
    a1, a2 = p.arrays(rng), p.arrays(rng)
    assert tuple(a1) == p.array_names
    for name, arr in a1.items():
        if name in p.outputs and not np.isfinite(arr).any():
            continue                                               # poison
        assert np.all(arr != 0), name
        assert not np.array_equal(arr, a2[name]), f"{name}: not fresh"
    good = _emulate(p, a1)
    for name in p.outputs:                                         # an untouched output fails a full check
        assert not p.check(a1, {**good, name: a1[name].copy()}, full=True)["ok"]


def _emulate(p, arrays) -> dict:
    """What a correct kernel writes (the reference in the output's dtype)."""
    return {n: np.asarray(r).astype(arrays[n].dtype) for n, r in p.reference(arrays).items()}


@pytest.mark.parametrize("family", sorted(problems.FAMILIES))
def test_check_full_partial_and_wrong(family, rng) -> None:
    p = problems.make(family, **SMALL[family])
    arrays = p.arrays(rng)
    good = _emulate(p, arrays)
    assert p.check(arrays, good, full=True)["ok"]
    name = p.outputs[0]
    part = {n: v.copy() for n, v in good.items()}
    flat, init = part[name].reshape(-1), arrays[name].reshape(-1)
    flat[: flat.size // 2] = init[: flat.size // 2]                # half not written (a timing-only sample)
    r = p.check(arrays, part, full=False, min_written=1)
    others = sum(good[n].size for n in p.outputs if n != name)    # the other outputs (BlackScholes: put) all written
    assert r["ok"] and r["written"] == flat.size - flat.size // 2 + others
    assert not p.check(arrays, part, full=True)["ok"]
    assert not p.check(arrays, part, full=False, min_written=flat.size + others)["ok"]
    bad = {n: v.copy() for n, v in good.items()}
    bad[name].reshape(-1)[-1] += bad[name].dtype.type(1.5) * (abs(bad[name].reshape(-1)[-1]) + 1)
    r = p.check(arrays, bad, full=True)
    assert not r["ok"] and "wrong" in r["detail"]


def test_gemm_layouts_agree(rng) -> None:
    row = problems.make("gemm", M=8, N=6, K=5, layout="row")
    col = problems.make("gemm", M=8, N=6, K=5, layout="col")
    a = row.arrays(rng)
    ca = {n: np.ascontiguousarray(v.T) for n, v in a.items()}      # the same matrices stored column-major
    assert np.allclose(col.reference(ca)["C"].T, row.reference(a)["C"])
    A, B, C = (v.astype(np.float64) for v in (a["A"], a["B"], a["C"]))
    assert np.allclose(row.reference(a)["C"], 1.25 * A @ B + 0.5 * C)


def test_sepconv_reference_by_loops(rng) -> None:
    taps = (0.5, 0.25, 1.0, 0.125, 2.0)
    for axis in ("rows", "cols"):
        p = problems.make("sepconv", width=12, height=9, radius=2, axis=axis, taps=taps)
        x = p.arrays(rng)
        src = x["src"].astype(np.float64)
        want = np.zeros_like(src)
        for i in range(9):
            for j in range(12):
                for d in range(-2, 3):
                    ii, jj = (i, j + d) if axis == "rows" else (i + d, j)
                    if 0 <= ii < 9 and 0 <= jj < 12:
                        want[i, j] += taps[2 - d] * src[ii, jj]
        assert np.allclose(p.reference(x)["dst"], want)
