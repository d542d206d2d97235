"""Hardware counters (Nsight Compute) of corpus kernels, to test the hypotheses of ptx_docs/timing_validation.md
"Diagnosis" on the **calibration** part (the validation part must not feed the model, so it is refused).

    # device machine (run tool, carry=[".timing_corpus_sources"] made by fetch.py --pack):
    PYTHONPATH=. PTXLAB_CACHE=/tmp/ptxlab_cache python3 benchmarks/timing_corpus/ncu_counters.py [--only SUBSTR ...]

The wrapper asks ncu which of ``METRICS`` the GPU has (an unknown name would fail the whole run), then runs ncu
over this script's ``driver`` mode: one launch of each selected kernel (fresh inputs, seed 1; a 128 MiB buffer
rewritten before each launch so that L2 holds none of its inputs), the prebuilt cubin the predictions were made
from.  It writes ``$OUT/ncu_counters_<gpu>_calibration.json`` (per kernel: its metrics, launch order = ncu's IDs)
and prints a short table last.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE.parent)]

from timing_corpus import manifest  # noqa: E402

FLUSH_BYTES = 128 << 20
STALLS = ("barrier", "long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "math_pipe_throttle",
          "wait", "not_selected", "dispatch_stall", "no_instruction", "drain", "membar", "tex_throttle")
METRICS = (
    "gpu__time_duration.sum", "smsp__inst_executed.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct", "l1tex__t_sector_hit_rate.pct",
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_requests_srcunit_tex_op_read.sum", "lts__t_requests_srcunit_tex_op_write.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "smsp__inst_executed_pipe_lsu.sum", "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
    # asked for by the round-3 diagnosis (ptx_docs/timing_validation.md "Round 3 diagnosis"): the SM clock under ncu,
    # the mma.sync tensor pipe and the non-bulk cp.async (LDGSTS) traffic; absent ones drop out (available())
    "sm__cycles_elapsed.avg.per_second", "sm__cycles_active.avg",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor_op_hmma.sum",
    "smsp__inst_executed_op_ldgsts.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
) + tuple(f"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio" for s in STALLS)


def kernels(only) -> list:
    return manifest.select(os.environ.get("PTXLAB_NCU_PART", "calibration"), only)


def available(metrics, query_text: str) -> list:
    """The metrics whose base name (before the first '.') ncu --query-metrics lists; all when the query failed."""
    names = {ln.split()[0] for ln in query_text.splitlines() if ln.strip() and "__" in ln.split()[0]}
    return [m for m in metrics if m.split(".")[0] in names] if names else list(metrics)


def parse_csv(text: str, order: list) -> dict:
    """ncu --csv output (its ==PROF== lines ignored) -> {kernel name: {metric: value}}, the n-th profiled launch
    (by ID) being order[n].  Values lose their thousands separators; non-numbers stay strings."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        return {}
    by_id: dict = {}
    for r in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        v = r["Metric Value"].replace(",", "")
        try:
            val = float(v)
        except ValueError:
            val = r["Metric Value"]
        by_id.setdefault(int(r["ID"]), {"ncu_kernel": r["Kernel Name"]})[r["Metric Name"]] = val
    ids = sorted(by_id)
    if len(ids) != len(order):
        raise ValueError(f"ncu profiled {len(ids)} launches, the driver made {len(order)}: cannot match them")
    return {name: by_id[i] for name, i in zip(order, ids)}


def driver(only, root=None) -> int:
    """One launch of each kernel (what ncu profiles); prints {"launch": name} per launch, in order."""
    import numpy as np

    import ptxlab
    from timing_corpus import bundle, harness, measure, sources
    dev = ptxlab.open_device("cuda")
    prebuilt = bundle.load_all(sources.sources_dir(root))
    junk = np.arange(FLUSH_BYTES, dtype=np.uint8)
    flush = dev.to_device(junk)
    for k in kernels(only):
        built = bundle.built(k, prebuilt, root)
        try:
            if built is not None:
                measure._module(built)
        except RuntimeError:
            built = None
        built = built or harness.build(k, root)
        s = harness.Setup.create(built, dev, measure.SEED)
        dev.write(flush, junk)
        dev.synchronize()
        s.launch()
        dev.synchronize()
        print(json.dumps({"launch": k.name, "ok": s.check(full=True)["ok"]}), flush=True)
        s.free()
    return 0


def wrapper(args) -> int:
    out = Path(os.environ.get("OUT", "ncu_out"))
    out.mkdir(parents=True, exist_ok=True)
    q = subprocess.run(["ncu", "--query-metrics"], capture_output=True, text=True, timeout=120)
    metrics = available(METRICS, q.stdout)
    log = out / "ncu.csv"
    cmd = ["ncu", "--clock-control", "none", "--metrics", ",".join(metrics), "--csv", "--log-file", str(log),
           sys.executable, str(Path(__file__).resolve()), "driver"] + (["--only", *args.only] if args.only else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    launches = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith('{"launch"')]
    rows = parse_csv(log.read_text() if log.is_file() else "", [x["launch"] for x in launches])
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True)
    gpu = "h200" if "H200" in smi.stdout else "h100" if "H100" in smi.stdout else "gpu"
    shown = [{str(out / "ncu.csv"): "$OUT/ncu.csv", sys.executable: "python3",
              str(Path(__file__).resolve()): "benchmarks/timing_corpus/ncu_counters.py"}.get(c, c) for c in cmd]
    rep = {"device": smi.stdout.strip(), "command": " ".join(shown[:4] + ["<metrics>"] + shown[5:]),
           "metrics_missing": sorted(set(METRICS) - set(metrics)),
           "ncu_rc": p.returncode, "ncu_stderr_tail": p.stderr[-1500:], "checks": launches, "kernels": rows}
    part = os.environ.get("PTXLAB_NCU_PART", "calibration")
    (out / f"ncu_counters_{gpu}_{part}.json").write_text(json.dumps(rep, indent=1) + "\n")
    print(f"{'kernel':58s} {'us':>9s} {'inst M':>8s} {'DRAM rd MB':>10s} {'wr MB':>7s} {'L2 rd req M':>11s} top stall")
    for name, m in rows.items():
        stall = max(STALLS, key=lambda s: _num(m.get(f"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio")))
        print(f"{name:58s} {_num(m.get('gpu__time_duration.sum')) / 1e3:9.2f} "
              f"{_num(m.get('smsp__inst_executed.sum')) / 1e6:8.2f} {_num(m.get('dram__bytes_read.sum')) / 1e6:10.1f} "
              f"{_num(m.get('dram__bytes_write.sum')) / 1e6:7.1f} "
              f"{_num(m.get('lts__t_requests_srcunit_tex_op_read.sum')) / 1e6:11.2f} {stall}")
    return 0 if p.returncode == 0 and rows else 1


def _num(v) -> float:
    return v if isinstance(v, float) else 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", nargs="?", default="run", choices=("run", "driver"))
    ap.add_argument("--part", default="calibration", help="calibration only (the validation part is refused)")
    ap.add_argument("--spent-validation", action="store_true",
                    help="allow --part validation/all: only once the validation part's round is over (measured and "
                         "reported, 2026-11-27) and a fresh validation set takes its place (ptx_docs/timing_validation.md)")
    ap.add_argument("--only", nargs="*", help="substrings of kernel names")
    ap.add_argument("--timeout", type=int, default=480)
    args = ap.parse_args(argv)
    if args.part not in ("calibration", "cal") and not args.spent_validation:
        ap.error(f"--part {args.part}: only the calibration part may be diagnosed (the validation part is held out)")
    if args.mode == "run":   # the driver (ncu's child) inherits the part from the environment
        os.environ["PTXLAB_NCU_PART"] = {"cal": "calibration", "val": "validation"}.get(args.part, args.part)
    return driver(args.only) if args.mode == "driver" else wrapper(args)


if __name__ == "__main__":
    sys.exit(main())
