"""report.py's statistics on synthetic data (benchmarks/timing_corpus/report.py): Spearman with and without ties,
medians, the per-part summary and the join of predictions with measurements."""
from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from repo_root import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from timing_corpus import report  # noqa: E402


def _spearman_by_formula(x, y) -> float:
    """1 - 6 sum d^2 / (n (n^2 - 1)): valid without ties."""
    n = len(x)
    rx = np.argsort(np.argsort(x)) + 1
    ry = np.argsort(np.argsort(y)) + 1
    return 1 - 6 * float(((rx - ry) ** 2).sum()) / (n * (n * n - 1))


def test_spearman_perfect_reversed_and_formula(rng) -> None:
    x = list(rng.permutation(50).astype(float) + rng.random(50))
    assert report.spearman(x, [2 * v + 7 for v in x]) == pytest.approx(1.0)
    assert report.spearman(x, [math.exp(v / 10) for v in x]) == pytest.approx(1.0)      # monotone, not linear
    assert report.spearman(x, [-v for v in x]) == pytest.approx(-1.0)
    for _ in range(5):
        y = list(rng.random(50))
        assert report.spearman(x, y) == pytest.approx(_spearman_by_formula(x, y), abs=1e-12)


def test_spearman_ties_and_degenerate() -> None:
    # ranks with ties: x -> [1.5, 1.5, 3, 4], y -> [1, 2, 3, 4]; Pearson of the ranks by hand
    rx, ry = [1.5, 1.5, 3, 4], [1, 2, 3, 4]
    mx, my = 2.5, 2.5
    want = sum((a - mx) * (b - my) for a, b in zip(rx, ry)) / math.sqrt(
        sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    assert report.ranks([5.0, 5.0, 6.0, 9.0]) == rx
    assert report.spearman([5.0, 5.0, 6.0, 9.0], [1, 2, 3, 4]) == pytest.approx(want)
    assert math.isnan(report.spearman([1.0], [2.0]))
    assert math.isnan(report.spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))
    with pytest.raises(ValueError):
        report.spearman([1.0, 2.0], [1.0])


def test_median(rng) -> None:
    for n in (1, 2, 7, 10):
        xs = list(rng.random(n))
        assert report.median(xs) == pytest.approx(float(np.median(xs)))
    assert math.isnan(report.median([]))


def _rows(errors, series, split, meas):
    return [{"name": f"k{i}", "series": s, "split": p, "measured_us": m, "predicted_us": m * (1 + e)}
            for i, (e, s, p, m) in enumerate(zip(errors, series, split, meas))]


def test_summarize_parts_and_goals() -> None:
    errs = [0.10, -0.20, 0.05, 0.50, -0.40, 0.01]
    series = ["a", "a", "a", "b", "b", "b"]
    split = ["cal", "val", "val", "cal", "val", "val"]
    meas = [10.0, 20.0, 30.0, 5.0, 50.0, 500.0]
    s = report.summarize(_rows(errs, series, split, meas))
    assert s["all"]["n"] == 6 and s["cal"]["n"] == 2 and s["val"]["n"] == 4
    assert s["cal"]["median_abs_err"] == pytest.approx((0.10 + 0.50) / 2)
    assert s["val"]["median_abs_err"] == pytest.approx((0.05 + 0.20) / 2)
    assert s["val"]["within_30"] == pytest.approx(3 / 4)
    assert s["all"]["max_abs_err"] == pytest.approx(0.50)
    # series a: predicted 11, 16, 31.5 vs 10, 20, 30 -> same order; b: 7.5, 30, 505 vs 5, 50, 500 -> same order
    assert s["all"]["spearman"] == {"a": pytest.approx(1.0), "b": pytest.approx(1.0)}
    assert s["val"]["spearman"] == {"a": None, "b": None}          # 2 kernels each: n/a
    assert s["val"]["goals"] == {"median<=15%": True, "90%within30%": False, "spearman>=0.9": False}


def test_summarize_round2_part() -> None:
    """Round 2's part (val2) gets its own summary and its own Spearman per series; round 1's parts stay listed."""
    errs = [0.10, -0.20, 0.05, 0.60]
    s = report.summarize(_rows(errs, ["c", "c", "c", "d"], ["val2"] * 4, [10.0, 20.0, 30.0, 5.0]))
    assert s["val2"]["n"] == 4 and s["all"]["n"] == 4 and s["cal"]["n"] == 0
    assert s["val2"]["median_abs_err"] == pytest.approx((0.10 + 0.20) / 2)
    assert s["val2"]["within_30"] == pytest.approx(3 / 4)
    # series c: predicted 11, 16, 31.5 vs measured 10, 20, 30: same order; d: one kernel
    assert s["val2"]["spearman"] == {"c": pytest.approx(1.0), "d": None}
    md = report.markdown(report.join(
        {"kernels": [{"name": r["name"], "series": r["series"], "split": "val2",
                      "predicted": {"h100": {"us": r["predicted_us"], "bound": "DRAM"}}}
                     for r in _rows(errs, ["c", "c", "c", "d"], ["val2"] * 4, [10.0, 20.0, 30.0, 5.0])]},
        {"kernels": [{"name": f"k{i}", "median_us": m, "check": {"ok": True}}
                     for i, m in enumerate([10.0, 20.0, 30.0, 5.0])]}, "h100")[0], s, "t")
    assert "* **val2** (4 kernels): median |error| 15.0 %, 75 % within 30 %, max 60.0 %" in md
    assert "| k3 | val2 | 5.00 | 8.00 | +60.0 % | DRAM |" in md


def test_join_and_markdown() -> None:
    pred = {"kernels": [{"name": n, "series": "s", "split": "cal", "predicted": {"h100": {"us": u, "bound": "DRAM"}}}
                        for n, u in (("x", 11.0), ("y", 9.0), ("z", 5.0))]}
    meas = {"kernels": [{"name": "x", "median_us": 10.0, "check": {"ok": True}},
                        {"name": "y", "median_us": 10.0, "check": {"ok": False}},       # failed check: not compared
                        {"name": "z", "check": {"ok": True}}]}                          # checked, not timed
    rows, missing = report.join(pred, meas, "h100")
    assert [r["name"] for r in rows] == ["x"] and rows[0]["error"] == pytest.approx(0.1)
    assert missing == ["y", "z"]
    assert report.join(pred, meas, "h200")[0] == []
    md = report.markdown(rows, report.summarize(rows), "t")
    assert "| s/x" not in md and "| x | cal | 10.00 | 11.00 | +10.0 % | DRAM |" in md


def test_markdown_with_before_columns_and_merged_inputs(tmp_path) -> None:
    """--before adds the baseline's prediction, error and bound per kernel and its own summary lines; several
    --predicted / --measured files are merged (both parts in one table)."""
    def pred(us):
        return {"kernels": [{"name": n, "series": "s", "split": p, "predicted": {"h100": {"us": u, "bound": b}}}
                            for n, p, u, b in zip("xyz", ("cal", "val", "val"), us, ("DRAM", "L2", "L1/LSU"))]}
    meas = [{"kernels": [{"name": n, "median_us": 10.0 * (i + 1), "check": {"ok": True}}]}
            for i, n in enumerate("xyz")]
    after, before = pred([11.0, 18.0, 45.0]), pred([5.0, 20.0, 30.0])
    files = {}
    for key, d in [("a1", {"kernels": after["kernels"][:1]}), ("a2", {"kernels": after["kernels"][1:]}),
                   ("b", before), ("m0", meas[0]), ("m1", meas[1]), ("m2", meas[2])]:
        files[key] = tmp_path / f"{key}.json"
        files[key].write_text(json.dumps(d))
    out = tmp_path / "t.md"
    assert report.main(["--predicted", str(files["a1"]), str(files["a2"]), "--measured", str(files["m0"]),
                        str(files["m1"]), str(files["m2"]), "--before", str(files["b"]), "--md", str(out)]) == 0
    md = out.read_text()
    assert "| x | cal | 10.00 | 11.00 | +10.0 % | DRAM | 5.00 | -50.0 % | DRAM |" in md
    assert "| y | val | 20.00 | 18.00 | -10.0 % | L2 | 20.00 | +0.0 % | L2 |" in md
    assert "| z | val | 30.00 | 45.00 | +50.0 % | L1/LSU | 30.00 | +0.0 % | L1/LSU |" in md
    assert "* **val** (2 kernels): median |error| 30.0 %, 50 % within 30 %, max 50.0 %" in md
    assert "* **BEFORE, cal** (1 kernels): median |error| 50.0 %, 0 % within 30 %, max 50.0 %" in md
    assert "* **BEFORE, val** (2 kernels): median |error| 0.0 %, 100 % within 30 %" in md


def test_counters_rows_become_predictions_of_a_replay(tmp_path):
    """counters.py --as-predicted: a replay's values become the predictions report.py reads (round 2 of issue 21)."""
    import random
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    sys.path[:0] = [str(root / "benchmarks")]
    from timing_corpus import counters, manifest
    names = [k.name for k in manifest.select("all", None)][:3]
    rows = [{"kernel": n, "us": random.uniform(1, 100), "bound": "DRAM",
             "replay": {"p*2": {"us": random.uniform(1, 100), "bound": "L2"}}} for n in names]
    base = counters.as_predicted(rows, "h100")
    rep = counters.as_predicted(rows, "h100", "p*2", "abc")
    assert [k["predicted"]["h100"]["us"] for k in base["kernels"]] == [r["us"] for r in rows]
    assert [k["predicted"]["h100"] for k in rep["kernels"]] == [r["replay"]["p*2"] for r in rows]
    assert rep["model_commit"] == "abc" and [k["name"] for k in rep["kernels"]] == names
