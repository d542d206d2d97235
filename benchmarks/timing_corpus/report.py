"""Compare the timing model's predictions of the corpus with measurements: per kernel error, and per part
(calibration / validation) the median |error|, the share within 30 %, the max, and Spearman's rank correlation
within each series (issue 21's goals: median <= 15 %, 90 % within 30 %, Spearman >= 0.9 per series).

    python benchmarks/timing_corpus/report.py --predicted benchmarks/timing_corpus/data/predicted_X.json \\
        --measured benchmarks/timing_corpus/data/measured_h100_X.json [--gpu h100] [--md out.md] [--json out.json] \\
        [--before benchmarks/timing_corpus/data/predicted_baseline_X.json]

``--predicted``, ``--measured`` and ``--before`` each take several files (their kernels merged: e.g. both parts'
predictions).  ``--before`` adds another model's predictions (the BEFORE baseline) of the same measurements as three
more columns and its own summary lines.

Only kernels with both a prediction (for ``--gpu``) and a measurement (a timed median and a passed check) are
compared; the others are listed as missing.  Spearman needs >= 3 kernels of a series in a part ("n/a" otherwise).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

GOAL_MEDIAN, GOAL_WITHIN, GOAL_SHARE, GOAL_RHO = 0.15, 0.30, 0.90, 0.90


def ranks(xs: list) -> list:
    """1-based ranks, ties get their average rank."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for t in range(i, j + 1):
            r[order[t]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x: list, y: list) -> float:
    """Spearman's rho: Pearson correlation of the ranks (ties averaged); nan for < 2 points or a constant side."""
    if len(x) != len(y):
        raise ValueError("spearman: x and y differ in length")
    if len(x) < 2:
        return float("nan")
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def median(xs: list) -> float:
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return float("nan")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


PARTS = ("cal", "val", "val2", "val3")   # manifest.PARTS: round 1's calibration and validation, rounds 2-3's validation


def summarize(rows: list) -> dict:
    """rows: dicts with name, series, split, predicted_us, measured_us.  Returns per part (cal, val, val2, val3 where
    present, and all): n, median |error|, share within 30 %, max |error|, Spearman per series (None for < 3 kernels)
    and the goal flags."""
    out = {}
    present = {r["split"] for r in rows}
    for part in [p for p in PARTS if p in present or p in ("cal", "val")] + ["all"]:
        rs = [r for r in rows if part == "all" or r["split"] == part]
        errs = [abs(r["predicted_us"] - r["measured_us"]) / r["measured_us"] for r in rs]
        series = {}
        for r in rs:
            series.setdefault(r["series"], []).append(r)
        rho = {s: (spearman([r["predicted_us"] for r in v], [r["measured_us"] for r in v]) if len(v) >= 3 else None)
               for s, v in sorted(series.items())}
        share = sum(e <= GOAL_WITHIN for e in errs) / len(errs) if errs else float("nan")
        med = median(errs)
        valid_rho = [v for v in rho.values() if v is not None]
        out[part] = {"n": len(rs), "median_abs_err": med, "within_30": share, "max_abs_err": max(errs, default=nan()),
                     "spearman": rho,
                     "goals": {"median<=15%": med <= GOAL_MEDIAN, "90%within30%": share >= GOAL_SHARE,
                               "spearman>=0.9": bool(valid_rho) and all(v >= GOAL_RHO for v in valid_rho)}}
    return out


def nan() -> float:
    return float("nan")


def join(predicted: dict, measured: dict, gpu: str) -> tuple:
    """(rows, missing): kernels with a prediction for ``gpu`` and a valid measurement, and the names of the others."""
    meas = {m["name"]: m for m in measured.get("kernels", []) if m.get("median_us") and m.get("check", {}).get("ok")}
    measured_names = {m["name"] for m in measured.get("kernels", [])}
    rows, missing = [], []
    for p in predicted.get("kernels", []):
        pr = p.get("predicted", {}).get(gpu)
        m = meas.get(p["name"])
        if pr is None or m is None:
            if p["name"] in measured_names:
                missing.append(p["name"])
            continue
        rows.append({"name": p["name"], "series": p["series"], "split": p["split"], "predicted_us": pr["us"],
                     "measured_us": m["median_us"], "bound": pr.get("bound", "?"),
                     "error": (pr["us"] - m["median_us"]) / m["median_us"]})
    return rows, missing


def markdown(rows: list, summary: dict, title: str, before: list = None, before_summary: dict = None) -> str:
    """The per-kernel table (sorted by series, name) and one summary line per part; ``before``: the baseline model's
    rows of the same kernels (three more columns, and its summary lines under the heading "BEFORE")."""
    old = {r["name"]: r for r in before or []}
    head = "| kernel | part | measured µs | predicted µs | error | bound |"
    rule = "|---|---|---:|---:|---:|---|"
    if before is not None:
        head += " BEFORE µs | BEFORE error | BEFORE bound |"
        rule += "---:|---:|---|"
    lines = [f"### {title}", "", head, rule]
    for r in sorted(rows, key=lambda r: (r["series"], r["name"])):
        line = (f"| {r['name']} | {r['split']} | {r['measured_us']:.2f} | {r['predicted_us']:.2f} | "
                f"{100 * r['error']:+.1f} % | {r['bound']} |")
        if before is not None:
            b = old.get(r["name"])
            line += (f" {b['predicted_us']:.2f} | {100 * b['error']:+.1f} % | {b['bound']} |" if b else " - | - | - |")
        lines.append(line)
    lines.append("")
    lines += _summary_lines(summary, "")
    if before_summary is not None:
        lines += _summary_lines(before_summary, "BEFORE, ")
    return "\n".join(lines) + "\n"


def _summary_lines(summary: dict, label: str) -> list:
    out = []
    for part, s in summary.items():
        if not s["n"]:
            continue
        rho = ", ".join(f"{k} {v:+.2f}" if v is not None and v == v else f"{k} n/a" for k, v in s["spearman"].items())
        out.append(f"* **{label}{part}** ({s['n']} kernels): median |error| {100 * s['median_abs_err']:.1f} %, "
                   f"{100 * s['within_30']:.0f} % within 30 %, max {100 * s['max_abs_err']:.1f} %; "
                   f"Spearman per series: {rho}")
    return out


def load_merged(paths: list) -> dict:
    """The JSON files' ``kernels`` lists concatenated; the other keys from the first file that has them."""
    out = {"kernels": []}
    for p in paths:
        d = json.loads(Path(p).read_text())
        for k, v in d.items():
            if k != "kernels":
                out.setdefault(k, v)
        out["kernels"] += d.get("kernels", [])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--predicted", required=True, nargs="+", help="predict.py JSON(s), merged")
    ap.add_argument("--measured", required=True, nargs="+", help="measure.py JSON(s), merged")
    ap.add_argument("--before", nargs="+", help="a baseline model's predict.py JSON(s): extra columns")
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--md", help="write the markdown table here")
    ap.add_argument("--json", help="write rows + summary here")
    args = ap.parse_args(argv)
    pred, meas = load_merged(args.predicted), load_merged(args.measured)
    rows, missing = join(pred, meas, args.gpu)
    summary = summarize(rows)
    before = before_summary = None
    if args.before:
        names = {r["name"] for r in rows}
        before = [r for r in join(load_merged(args.before), meas, args.gpu)[0] if r["name"] in names]
        before_summary = summarize(before)
    title = f"{args.gpu} prediction vs {meas.get('device', '?')} measurement ({len(rows)} kernels)"
    md = markdown(rows, summary, title, before, before_summary)
    print(md)
    if missing:
        print(f"not compared (no valid measurement or prediction): {', '.join(missing)}")
    if args.md:
        Path(args.md).write_text(md)
    if args.json:
        rep = {"rows": rows, "summary": summary, "missing": missing}
        if before is not None:
            rep.update(before_rows=before, before_summary=before_summary)
        Path(args.json).write_text(json.dumps(rep, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
