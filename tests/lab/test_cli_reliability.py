"""lab.py arguments checked before anything runs: bad values and sizes are usage errors (exit 2, one error line, no
traceback, nothing recorded); the state file's shape is checked; graduate/status take --stages-dir and treat an
unknown id as a usage error; --seed replays a stage's data."""
from __future__ import annotations

import json

import pytest

from ptxlab.lab.cli import main

SEEDED = """
import numpy as np
from ptxlab.lab.registry import Stage, StageResult, Check
from ptxlab.lab.seed import stage_seed

def run(ctx):
    seed = stage_seed()
    draw = np.random.default_rng(seed).integers(0, 2**62)
    return StageResult.from_rows([Check("draw", True, f"seed={seed} draw={draw}")])

STAGES = [Stage("Z1", "seeded", "nothing", run)]
"""


@pytest.fixture
def lab(tmp_path, monkeypatch, capsys):
    d = tmp_path / "stages" / "z"
    d.mkdir(parents=True)
    (d / "driver.py").write_text(SEEDED)
    state = tmp_path / "state.json"
    monkeypatch.setenv("PTXLAB_STATE_FILE", str(state))
    for name in ("PTXLAB_STAGES_DIR", "PTXLAB_SEED"):     # lab.py sets them for its run: restored after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)

    def run(*argv, stages=True):
        monkeypatch.delenv("PTXLAB_SEED", raising=False)     # --seed exports it for the run (a fresh process each time)
        rc = main([*argv, *(["--stages-dir", str(tmp_path / "stages")] if stages else [])])
        out = capsys.readouterr()
        return rc, out.out, [x for x in out.err.splitlines() if x.strip()], state
    return run


def _usage(rc, err, *words):
    assert rc == 2, (rc, err)
    errors = [x for x in err if x.startswith("error:") or ": error: " in x]
    assert len(errors) == 1 and not any("Traceback" in x for x in err), err
    for w in words:
        assert w in errors[0], (w, errors[0])


def test_seed_replays_the_data(lab, rng):
    seed = str(int(rng.integers(0, 2**62)))
    rc1, out1, _, _ = lab("--seed", seed)
    rc2, out2, _, _ = lab("--seed", seed)
    draws = [x.split("draw=")[1].split()[0] for x in (out1, out2)]
    assert rc1 == rc2 == 0 and f"seed={seed}" in out1 and draws[0] == draws[1]
    rc3, out3, _, _ = lab()
    assert rc3 == 0 and out3.split("draw=")[1].split()[0] != draws[0]
    for bad in ("-1", "abc", str(2**64)):
        rc, _, err, state = lab("--seed", bad)
        _usage(rc, err, "PTXLAB_SEED")


@pytest.mark.parametrize("content", ["[]", '{"version": 1, "results": []}', '{"version": 1, "results": {"Z1": 5}}',
                                     '{"version": 1, "graduated": {"Z1": {"backends": "emu"}}}', "{not json",
                                     '"text"', '{"version": 99}'])
def test_damaged_state_file_is_a_usage_error(lab, content):
    rc, _, _, state = lab("--seed", "1")
    state.write_text(content)
    rc, _, err, _ = lab("status", stages=False)
    _usage(rc, err, str(state), "delete it")
    rc, _, err, _ = lab("graduate", "--list", stages=False)
    _usage(rc, err, str(state))
    assert state.read_text() == content                     # never rewritten over


def test_graduate_and_status(lab):
    rc, _, err, _ = lab("graduate", "Z9")
    _usage(rc, err, "Z9")
    rc, _, err, _ = lab("graduate", "Z1")
    assert rc == 1 and "refused" in err[0]                  # a known stage that never passed: refused, exit 1
    assert lab("--seed", "3")[0] == 0
    rc, out, err, state = lab("graduate", "Z1")
    assert rc == 0 and "graduated Z1" in out
    rc, out, err, _ = lab("status")
    assert rc == 0 and "Z1" in out and "seeded" in out       # registered via --stages-dir
    rc, _, err, _ = lab("status", "--stages-dir", "/nonexistent/dir", stages=False)
    _usage(rc, err, "does not exist")


@pytest.mark.parametrize("argv,words", [
    (["desc", "smem", "0x4000404000010040", "--rows", "1000000000"], ["--rows"]),
    (["desc", "smem", "0x4000404000010040", "--chunks", "-1"], ["--chunks"]),
    (["desc", "tmem", "0x1ffffffff"], ["32-bit"]),
    (["export", "--problem", "nvfp4_gemm", "--splits", "99999999999999"], ["--splits", "65535"]),
    (["export", "--problem", "nvfp4_gemv", "--splits", "4"], ["--splits"]),
    (["time", "--problem", "nvfp4_gemv", "--shape", "100,200,1"], ["K=200"]),
    (["time", "--problem", "nvfp4_gemv", "--shape", "128,256,1", "--seed", "-1"], ["--seed"]),
    (["time", "--problem", "nvfp4_gemv", "--shape", "128,256,1", "--config", "x,y"], ["--config"]),
    (["time", "--problem", "nvfp4_gemm", "--shape", "128,256,256,1", "--config", "4,2,2"], ["--config"]),
    (["time", "--problem", "nvfp4_gemv", "--shape", "100000,100000,100"], ["too large"]),
    (["cutlass", "tutorial_02", "--m", "100", "--n", "100", "--k", "100"], ["multiples"]),
    (["cutlass", "tutorial_02", "--m", "1000000000"], ["--m"]),
    (["cutlass", "example_72b", "--seed", "-5"], ["--seed"]),
    (["cutlass", "tutorial_02", "--strict", "bogus"], ["strict"]),
    (["--stage", ",,"], ["no stage id given"]),          # was exit 0, "no stages registered ... nothing to run"
    (["time", "--stage", ",,"], ["no stage id given"]),
])
def test_bad_arguments_are_usage_errors(lab, argv, words, tmp_path):
    if argv[0] == "export":
        argv = argv + ["--out", str(tmp_path / "s.py")]
    rc, out, err, state = lab(*argv, stages=False)
    _usage(rc, err, *words)
    assert not state.exists() and not (tmp_path / "s.py").exists()


def test_unknown_setting_name_is_reported(lab, monkeypatch):
    monkeypatch.setenv("PTXLAB_EMU_INITCHEK", "1")
    rc, _, err, _ = lab("list")
    assert rc == 0 and err == ["warning: PTXLAB_EMU_INITCHEK is not a ptxlab setting and does nothing (did you mean "
                               "PTXLAB_EMU_INITCHECK?)"]
