"""The timing model's own counters for corpus kernels, on the CPU (no GPU): what the model thinks each kernel moves
and waits on, to diagnose a miss from the calibration part without touching the validation measurements.

    python benchmarks/timing_corpus/counters.py --part calibration --only leetcuda-transpose [--gpu h100] \\
        [--json out.json]

Per kernel: predicted µs and bound, busy fraction per resource, GPU-wide DRAM / L2 bytes (and as a multiple of the
problem's compulsory bytes: every input read once, every output written once), issued warp-instructions, shared-
memory wavefronts and tensor-core FLOP (to set beside ncu's counters: ncu_counters.py), the SASS-join line, the
grid-footprint line (how DRAM vs L2 was decided) and the instructions waited on longest.
``--replay PARAM*FACTOR ...`` replays the same trace with one parameter of the GPU's table scaled (each alone): which
unmodelled cost would move a miss, asked of the calibration kernels only (a diagnosis, not a fit).  A spec may scale
several (``A*x,B*y``) and name another GPU of the same SM count first (``h200:`` alone: the H200 table as it is).
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE.parent)]

from timing_corpus import manifest  # noqa: E402


def counters(k: manifest.Kernel, gpu: str, root=None, replay=()) -> dict:
    import ptxlab
    from ptxlab.timing import params
    from ptxlab.timing.predict import TimingSampleWarning, resimulate
    from timing_corpus import harness

    warnings.simplefilter("ignore", TimingSampleWarning)
    built = harness.build(k, root)
    dev = ptxlab.open_device("emu", timing=gpu)
    s = harness.Setup.create(built, dev, 1)
    s.launch()
    t = dev.last_timing
    compulsory = sum(a.nbytes for a in s.host.values())
    out = {"kernel": k.name, "split": k.split, "us": round(t.us, 2), "bound": t.bound,
           "utilization": {r: round(v, 3) for r, v in sorted(t.utilization.items(), key=lambda x: -x[1]) if v > 0.01},
           "dram_bytes": round(t.amounts.get("dram_bytes", 0.0)), "l2_bytes": round(t.amounts.get("l2_bytes", 0.0)),
           "compulsory_bytes": compulsory,
           "dram_x_compulsory": round(t.amounts.get("dram_bytes", 0.0) / compulsory, 3),
           "l2_x_compulsory": round(t.amounts.get("l2_bytes", 0.0) / compulsory, 3),
           "instructions": round(t.amounts.get("instructions", 0.0)), "ctas_per_sm": t.ctas_per_sm,
           # shared-memory wavefronts (128 B each, as ncu's l1tex__data_pipe_lsu_wavefronts_mem_shared counts them)
           "smem_wavefronts": round(t.amounts.get("smem_bytes", 0.0) / 128),
           "tensor_flops": round(t.amounts.get("tensor_flops", 0.0)),
           "registers": t.registers, "issue": t.issue, "join": t.join, "footprint": t.footprint,
           "hot": [(round(c), why, Path(where).name, text) for c, why, where, text in t.hot[:6]],  # no local paths
           "warps": {str(w): v for w, v in list(t.warps.items())[:2]}}
    for spec in replay:
        r = resimulate(t, replay_table(gpu, spec))
        out.setdefault("replay", {})[spec] = {"us": round(r.us, 2), "bound": r.bound}
    s.free()
    return out


def replay_table(gpu: str, spec: str):
    """The table of a replay ``spec``: ``[GPU:]PARAM*FACTOR[,PARAM*FACTOR...]``; GPU (same SM count, e.g. h200 for a
    launch predicted as h100: the trace does not depend on the table) defaults to the launch's, no PARAM = its table
    unchanged."""
    from ptxlab.timing import params
    other, _, body = spec.rpartition(":")
    table = params.get(other or gpu)
    for part in filter(None, body.split(",")):
        name, factor = part.split("*")
        table = table.with_(**{name: type(getattr(table, name))(getattr(table, name) * float(factor))})
    return table


def as_predicted(rows: list, gpu: str, spec: str = "", model_commit: str = "?") -> dict:
    """The rows as predict.py's JSON (report.py reads it): each kernel's ``us`` and bound, or those of replay
    ``spec`` (PARAM*FACTOR): a table whose only change is that parameter predicts exactly the replay, because the
    recorded trace does not depend on the parameters (predict.resimulate)."""
    from timing_corpus.predict import describe
    out = {"what": "timing-model predictions of the corpus from counters.py" + (f" (replay {spec})" if spec else ""),
           "model_commit": model_commit, "kernels": []}
    for r in rows:
        if spec and spec not in r.get("replay", {}):
            continue                                  # a kernel that was not replayed so (e.g. no H200 replay)
        row = describe(manifest.BY_NAME[r["kernel"]])
        pick = r["replay"][spec] if spec else r
        row["predicted"] = {(spec.rpartition(":")[0] or gpu): {"us": pick["us"], "bound": pick["bound"]}}
        out["kernels"].append(row)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="calibration", help="calibration | validation | val2 | val3 | all")
    ap.add_argument("--only", nargs="*", help="substrings of kernel names")
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--sources", help="cached sources (default: sources.sources_dir())")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--replay", nargs="*", default=(), help="PARAM*FACTOR: replay with one parameter scaled")
    ap.add_argument("--from-rows", nargs="*", help="read rows (JSON lines or a --json file) instead of predicting")
    ap.add_argument("--as-predicted", nargs="+", metavar=("OUT", "SPEC"),
                    help="also write the rows as predict.py JSON (OUT), the predictions of replay SPEC if given")
    ap.add_argument("--model-commit", default="?", help="the commit whose model the rows (or SPEC) are")
    args = ap.parse_args(argv)
    if args.from_rows:
        rows = []
        for f in args.from_rows:
            text = Path(f).read_text()
            try:
                rows += json.loads(text)
            except json.JSONDecodeError:      # the JSON lines counters.py prints (a log)
                rows += [json.loads(x) for x in text.splitlines() if x.startswith("{")]
        _write_predicted(args, rows)
        return 0
    rows = []
    for k in manifest.select(args.part, args.only):
        rows.append(counters(k, args.gpu, args.sources, args.replay))
        print(json.dumps(rows[-1], default=str), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str) + "\n")
    _write_predicted(args, rows)
    return 0


def _write_predicted(args, rows: list) -> None:
    if args.as_predicted:
        out, spec = args.as_predicted[0], (args.as_predicted[1] if len(args.as_predicted) > 1 else "")
        Path(out).write_text(json.dumps(as_predicted(rows, args.gpu, spec, args.model_commit), indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
