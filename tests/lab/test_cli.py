"""CLI tests: ``lab.py list`` / ``lab.py`` with empty and fake stage dirs, ordering, errors, subcommand table."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ptxlab.errors import PtxlabError
from ptxlab.lab import cli
from ptxlab.lab.registry import Stage, StageResult, discover, select, stage_sort_key

REPO = Path(__file__).resolve().parents[2]


def _lab(*args: str, stages_dir: Path, **env: str) -> subprocess.CompletedProcess:
    e = dict(os.environ, PTXLAB_STAGES_DIR=str(stages_dir), PTXLAB_DEBUG="", **env)
    return subprocess.run([sys.executable, str(REPO / "lab.py"), *args], capture_output=True, text=True, env=e,
                          cwd=stages_dir, timeout=120)


def _write_driver(d: Path, body: str) -> None:
    d.mkdir(parents=True)
    (d / "driver.py").write_text(textwrap.dedent(body))


FAKE = """
from ptxlab.lab.registry import Stage, StageResult, Check
from ptxlab.errors import LaunchError
from .helper import VALUE

def ok(ctx):
    return StageResult.from_rows([Check("value is {v}", VALUE == {v}, "from [sibling] module")], metrics={{"gbps": 1.5}})

def bad(ctx):
    raise LaunchError("grid too large at {stage}: pass a smaller grid")

def never(ctx):
    raise AssertionError("must not run after a failure")

STAGES = [Stage("{late}", "late stage", "never reached", never),
          Stage("{stage}", "failing stage", "raises LaunchError", bad),
          Stage("A1", "first stage", "sibling import works", ok)]
"""


@pytest.fixture
def fake_stages(tmp_path: Path, rng: np.random.Generator) -> tuple:
    v = int(rng.integers(1, 10_000))
    stage = f"B{int(rng.integers(1, 9))}"
    root = tmp_path / "stages"
    _write_driver(root / "s1", FAKE.format(v=v, stage=stage, late="C1"))
    (root / "s1" / "helper.py").write_text(f"VALUE = {v}\n")
    return root, v, stage


def test_list_and_run_with_no_stages(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for args in (("list",), ()):
        p = _lab(*args, stages_dir=empty)
        assert p.returncode == 0, p.stderr
        assert "no stages registered" in p.stdout


def test_run_stops_at_first_failure_with_table(fake_stages: tuple) -> None:
    root, v, stage = fake_stages
    p = _lab("--backend", "emu", stages_dir=root)
    assert p.returncode == 1, p.stdout + p.stderr
    out = p.stdout
    assert f"value is {v}" in out and "gbps=1.5" in out and "from [sibling] module" in out
    assert f"grid too large at {stage}" in out and "Traceback" not in out + p.stderr
    assert "ptxlab bring-up" in out  # summary table
    for col in ("stage", "what it checks", "backend", "result", "time"):
        assert col in out
    assert "PASS" in out and "FAIL" in out and "emu" in out
    assert "must not run" not in out and "1 later stage(s) not run" in out
    assert out.index("A1") < out.index(stage)


def test_list_orders_stages_and_stage_filter(fake_stages: tuple) -> None:
    root, v, stage = fake_stages
    p = _lab("list", stages_dir=root)
    assert p.returncode == 0, p.stderr
    assert p.stdout.index("A1") < p.stdout.index(stage) < p.stdout.index("C1")
    p = _lab("--stage", "a1", stages_dir=root)
    assert p.returncode == 0 and "all 1 stage(s) passed" in p.stdout, p.stdout + p.stderr
    p = _lab("--stage", "Z9", stages_dir=root)
    assert p.returncode == 2 and "unknown stage id(s) Z9" in p.stderr and "Traceback" not in p.stderr


def test_cli_errors_are_one_clear_message(tmp_path: Path) -> None:
    root = tmp_path / "stages"
    _write_driver(root / "broken", "import nonexistent_module_xyz\n")
    p = _lab("list", stages_dir=root)
    assert p.returncode == 2
    assert "failed to import" in p.stderr and "nonexistent_module_xyz" in p.stderr and "Traceback" not in p.stderr
    p = _lab("--debug", "bogus", stages_dir=tmp_path)
    assert p.returncode == 2 and "unknown debug flag 'bogus'" in p.stderr
    p = _lab("frobnicate", stages_dir=tmp_path)
    assert p.returncode == 2 and "unknown subcommand" in p.stderr


def test_debug_and_dump_flags_reach_stages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    root = tmp_path / "stages"
    _write_driver(root / "s", """
        import os
        from ptxlab.lab.registry import Stage, StageResult, Check
        def run(ctx):
            return StageResult.from_rows([Check("flags", ctx.debug.lineinfo and ctx.debug.dump_ptx,
                                                os.environ["PTXLAB_DEBUG"] + "|" + str(ctx.dump_dir))])
        STAGES = [Stage("A1", "flags", "debug flags visible", run)]
    """)
    monkeypatch.setenv("PTXLAB_STAGES_DIR", str(root))
    monkeypatch.delenv("PTXLAB_DEBUG", raising=False)
    monkeypatch.delenv("PTXLAB_DUMP_DIR", raising=False)
    dump = tmp_path / "dumps"
    assert cli.main(["--debug", "lineinfo,dump_ptx", "--dump", str(dump)]) == 0
    out = capsys.readouterr().out
    assert "dump_ptx,lineinfo|" in out and str(dump) in out.replace("\n", "")
    assert os.environ["PTXLAB_DUMP_DIR"] == str(dump)


def test_registry_sorting_and_validation() -> None:
    ids = ["E2", "A2", "B1", "A10", "A1", "D3b", "D3"]
    assert sorted(ids, key=stage_sort_key) == ["A1", "A2", "A10", "B1", "D3", "D3b", "E2"]
    with pytest.raises(PtxlabError, match="not of the form"):
        Stage("stage1", "t", "c", lambda ctx: StageResult(True))
    stages = [Stage(i, i, "", lambda ctx: StageResult(True)) for i in ("A1", "B2")]
    assert [s.id for s in select(stages, ["b2,A1"])] == ["A1", "B2"]
    assert not StageResult.from_rows([]).passed and StageResult.from_rows([("x", True, "")]).passed


def test_duplicate_stage_ids_raise(tmp_path: Path) -> None:
    body = """
        from ptxlab.lab.registry import Stage, StageResult
        STAGES = [Stage("A1", "t", "c", lambda ctx: StageResult(True))]
    """
    _write_driver(tmp_path / "a", body)
    _write_driver(tmp_path / "b", body)
    with pytest.raises(PtxlabError, match="defined twice"):
        discover(tmp_path)


def test_subcommand_table_and_missing_desc(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    assert {"run", "list", "desc"} <= set(cli.SUBCOMMANDS)
    seen = []
    monkeypatch.setitem(cli.SUBCOMMANDS, "echo", cli.Subcommand("echo", "test", lambda argv: seen.append(argv) or 7))
    assert cli.main(["echo", "--x", "y"]) == 7 and seen == [["--x", "y"]]
    missing = cli.Subcommand("nothere", "test", "ptxlab.no_such_module_xyz.cli:main")
    monkeypatch.setitem(cli.SUBCOMMANDS, "nothere", missing)
    assert cli.main(["nothere", "a"]) == 2
    assert "needs ptxlab.no_such_module_xyz.cli" in capsys.readouterr().err


def test_refused_stage_is_reported_as_refused_not_failed(tmp_path):
    """A stage that cannot run on the device (sm_100a on an H100) shows REFUSED and exits 3, not FAIL/1."""
    d = tmp_path / "stages" / "X_refuse"
    d.mkdir(parents=True)
    (d / "driver.py").write_text(
        "from ptxlab.lab.registry import Stage, StageResult\n"
        "def run(ctx):\n"
        "    return StageResult.refuse('not run: needs an sm_100a GPU or --backend emu', [('device', False, 'sm_90')])\n"
        "STAGES = [Stage('X1', 'refusing stage', 'nothing', run)]\n")
    env = dict(os.environ, PTXLAB_STAGES_DIR=str(tmp_path / "stages"))
    p = subprocess.run([sys.executable, str(REPO / "lab.py"), "--backend", "emu"], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "REFUSED" in p.stdout and "cannot run on this device" in p.stdout and "FAIL" not in p.stdout
