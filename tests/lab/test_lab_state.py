"""Lab state (record/graduate, atomic writes, source hash), dumps, and the diff / status / graduate subcommands."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ptxlab.errors import PtxlabError
from ptxlab.lab import state
from ptxlab.lab.cli import main
from ptxlab.lab.dumps import decode_word, load_dump, mismatch_report, ue4m3_value, write_dump

DRIVER = '''
from ptxlab.lab.registry import Check, Stage, StageResult
from pathlib import Path
import os
def _run(ctx):
    ok = (Path(__file__).parent / "verdict.txt").read_text().strip() == "pass"
    return StageResult.from_rows([Check("verdict", ok, "")])
STAGES = [Stage("Z1", "toy stage", "reads verdict.txt", _run)]
'''


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A private stages dir with one toy stage (kernel including a local header and blocks/tmem.cuh) and state file."""
    sdir = tmp_path / "stages" / "Z_toy"
    sdir.mkdir(parents=True)
    (sdir / "driver.py").write_text(DRIVER)
    (sdir / "verdict.txt").write_text("pass")
    (sdir / "z.cu").write_text('#include "local.cuh"\n#include "blocks/tmem.cuh"\n__global__ void k() {}\n')
    (sdir / "local.cuh").write_text("// v1\n")
    monkeypatch.setenv("PTXLAB_STAGES_DIR", str(tmp_path / "stages"))
    monkeypatch.setenv("PTXLAB_STATE_FILE", str(tmp_path / "st" / "lab_state.json"))
    return sdir


def test_record_and_atomic_write(lab, tmp_path):
    p = state.state_path()
    assert state.load_state() == {"version": 1, "results": {}, "graduated": {}}
    state.record_result("z1", "emu", "abc", True)
    state.record_result("Z1", "cuda", "abc", False)
    data = json.loads(p.read_text())
    assert data["results"]["Z1"]["emu"]["passed"] is True and data["results"]["Z1"]["cuda"]["passed"] is False
    leftovers = [f.name for f in p.parent.iterdir() if f.name not in ("lab_state.json", "lab_state.json.lock")]
    assert leftovers == []


def test_bad_state_file_is_reported(lab):
    p = state.state_path()
    p.parent.mkdir(parents=True)
    p.write_text("{not json")
    with pytest.raises(PtxlabError, match="not valid JSON"):
        state.load_state()


def test_source_hash_covers_includes(lab):
    files = {f.name for f in state.stage_source_files(lab)}
    assert {"driver.py", "z.cu", "local.cuh", "tmem.cuh", "common.cuh"} <= files
    h1 = state.stage_source_hash(lab)
    (lab / "local.cuh").write_text("// v2\n")
    assert state.stage_source_hash(lab) != h1


def test_graduate_rules(lab):
    with pytest.raises(PtxlabError, match="never run"):
        state.graduate("Z1")
    h = state.current_source_hash("Z1")
    state.record_result("Z1", "emu", h, False)
    with pytest.raises(PtxlabError, match="FAIL"):
        state.graduate("Z1")
    state.record_result("Z1", "emu", "0123456789abcdef", True)  # passed, but on other sources
    with pytest.raises(PtxlabError, match="current source"):
        state.graduate("Z1")
    state.record_result("Z1", "emu", h, True)
    e = state.graduate("Z1")
    assert e["source_hash"] == h and e["backends"] == ["emu"] and "blocks/tmem.cuh" in e["blocks"]
    assert state.graduated("Z1")
    assert "Z1" in state.graduated_blocks()["blocks/tmem.cuh"]
    (lab / "z.cu").write_text("// edited\n")  # sources changed: graduation is stale
    assert not state.graduated("Z1") and state.graduated("Z1", check_current=False)


def test_cli_run_records_then_status_and_graduate(lab, capsys):
    assert main(["graduate", "Z1"]) == 1
    assert "has not passed" in capsys.readouterr().err
    (lab / "verdict.txt").write_text("fail")
    assert main(["--stage", "Z1", "--backend", "emu"]) == 1
    assert state.load_state()["results"]["Z1"]["emu"]["passed"] is False
    assert main(["graduate", "Z1"]) == 1
    (lab / "verdict.txt").write_text("pass")
    assert main(["--stage", "Z1", "--backend", "emu"]) == 0
    capsys.readouterr()
    assert main(["graduate", "Z1"]) == 0
    assert "graduated Z1" in capsys.readouterr().out
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "Z1" in out and "PASS" in out and "yes" in out
    assert main(["status", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    z = [r for r in rows if r["stage"] == "Z1"][0]
    assert z["results"]["emu"]["current"] and z["graduated"]["current"]
    (lab / "local.cuh").write_text("// changed\n")
    assert main(["status"]) == 0
    assert "stale" in capsys.readouterr().out
    assert main(["graduate", "--list"]) == 0


def test_record_hook_never_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXLAB_STATE_FILE", str(tmp_path / "f" / "x.json"))
    (tmp_path / "f").write_text("a file where the directory should be")

    class S:
        id, source = "Q1", ""

    assert "could not record" in state.record_stage_run(S(), "emu", True)


def _pair(tmp_path):
    rng = np.random.default_rng()
    exp = rng.integers(1, 2**32, size=(128, 16), dtype=np.uint64).astype(np.uint32)
    got = exp.copy()
    got[5:9, 3] ^= np.uint32(0x01000000)
    a = write_dump(tmp_path, "C1", "ok", {"got": exp, "expected": exp}, {"decode": "ue4m3x4", "source_hash": "h1", "axes": ["lane", "column"]})
    b = write_dump(tmp_path, "C1", "bad", {"got": got, "expected": exp}, {"decode": "ue4m3x4", "source_hash": "h1", "axes": ["lane", "column"]})
    return a, b, got, exp


def test_dump_roundtrip(tmp_path):
    a, _, _, exp = _pair(tmp_path)
    arrays, meta = load_dump(a)
    assert np.array_equal(arrays["got"], exp) and meta["stage"] == "C1" and meta["shape"] == [128, 16]
    assert json.loads(a.with_suffix(".json").read_text())["source_hash"] == "h1"
    with pytest.raises(PtxlabError):
        load_dump(tmp_path / "missing.npz")


def test_diff_cli(tmp_path, capsys):
    a, b, got, exp = _pair(tmp_path)
    assert main(["diff", str(a), str(a)]) == 0
    capsys.readouterr()
    assert main(["diff", str(a), str(b), "--key", "got"]) == 1
    out = capsys.readouterr().out
    assert "4 of 2048 entries differ" in out and "heat map" in out and "lane 5 col 3" in out and "ue4m3[" in out
    assert main(["diff", str(b), "--decode", "fp32"]) == 1  # one dump: got vs expected
    out = capsys.readouterr().out
    assert "got vs expected" in out and "fp32=" in out
    assert main(["diff", str(a), str(tmp_path / "nope.npz")]) == 2


def test_decoders_and_report():
    assert ue4m3_value(0x38) == 1.0 and ue4m3_value(0x44) == 3.0 and ue4m3_value(0x01) == 2.0 ** -9
    assert np.isnan(ue4m3_value(0x7F))
    assert "fp32=1" in decode_word(0x3F800000) and "38=1" in decode_word(0x38)
    e = np.arange(8, dtype=np.uint32).reshape(2, 4)
    g = e.copy()
    g[1, 2] = 99
    rep = mismatch_report(g, e, col_label=lambda c: f"c{c}")
    assert "1 of 8 words differ" in rep and "lane 1 col 2 (c2)" in rep
    assert mismatch_report(e, e) == ""
