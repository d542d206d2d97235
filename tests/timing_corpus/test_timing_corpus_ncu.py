"""ncu_counters.py's CPU parts (benchmarks/timing_corpus/ncu_counters.py; the GPU run is a device request): the metric
filter, the CSV parser and the refusal of the validation part."""
from __future__ import annotations

import sys

import pytest
from repo_root import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from timing_corpus import ncu_counters as N  # noqa: E402

CSV = '''==PROF== Connected to process 123
==PROF== Profiling "k": 0%....50%....100% - 9 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","123","python3","h","reduce1(float*, float*)","1","7","(256, 1, 1)","(131072, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","196,130"
"0","123","python3","h","reduce1(float*, float*)","1","7","(256, 1, 1)","(131072, 1, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed.sum","inst","138,412,032"
"1","123","python3","h","relu_f32_kernel(float*, float*, int)","1","7","(256, 1, 1)","(131072, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","116,352"
"1","123","python3","h","relu_f32_kernel(float*, float*, int)","1","7","(256, 1, 1)","(131072, 1, 1)","0","9.0","Command line profiler metrics","lts__t_sector_hit_rate.pct","%","n/a"
'''


def test_parse_csv_matches_launches_in_order() -> None:
    rows = N.parse_csv(CSV, ["liu-reduce/reduce1", "leetcuda-elementwise/relu_f32_kernel"])
    assert rows["liu-reduce/reduce1"]["gpu__time_duration.sum"] == 196130.0
    assert rows["liu-reduce/reduce1"]["smsp__inst_executed.sum"] == 138412032.0
    assert rows["leetcuda-elementwise/relu_f32_kernel"]["lts__t_sector_hit_rate.pct"] == "n/a"
    assert rows["leetcuda-elementwise/relu_f32_kernel"]["ncu_kernel"].startswith("relu_f32_kernel")
    with pytest.raises(ValueError, match="profiled 2 launches"):
        N.parse_csv(CSV, ["only-one"])
    assert N.parse_csv("==PROF== nothing profiled\n", []) == {}


def test_available_keeps_the_metrics_ncu_lists() -> None:
    query = "Device NVIDIA H100\n---\ngpu__time_duration   Counter   nsecond   duration\n" \
            "smsp__inst_executed  Counter  inst  instructions\n"
    assert N.available(["gpu__time_duration.sum", "smsp__inst_executed.sum", "made_up__thing.sum"], query) == \
        ["gpu__time_duration.sum", "smsp__inst_executed.sum"]
    assert N.available(["a__b.sum"], "") == ["a__b.sum"]            # query failed: try them all


def test_only_the_calibration_part() -> None:
    assert {k.split for k in N.kernels(None)} == {"cal"} and len(N.kernels(None)) == 28
    with pytest.raises(SystemExit):
        N.main(["--part", "validation"])
