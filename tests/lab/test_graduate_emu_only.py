"""`lab.py graduate` after a pass on the emulator only says so in its output, in `graduate --list`, in `status`, and in
the recorded state (emu_only + note); a real-GPU pass on the same source clears it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from ptxlab.lab import state

from repo_root import REPO


DRIVER = """
from ptxlab.lab.registry import Stage, StageResult, Check

def run(ctx):
    return StageResult.from_rows([Check("value {v}", True, "")])

STAGES = [Stage("Z{n}", "graduation probe", "nothing", run)]
"""


def test_emu_only_graduation_is_said_and_recorded(tmp_path: Path, rng: np.random.Generator) -> None:
    n = int(rng.integers(1, 99))
    sid = f"Z{n}"
    d = tmp_path / "stages" / "z"
    d.mkdir(parents=True)
    (d / "driver.py").write_text(textwrap.dedent(DRIVER.replace("{v}", str(int(rng.integers(1 << 30))))
                                                 .replace("{n}", str(n))))
    st = tmp_path / "state.json"
    env = dict(os.environ, PTXLAB_STATE_FILE=str(st), PTXLAB_STAGES_DIR=str(tmp_path / "stages"), PTXLAB_DEBUG="",
               COLUMNS="200")

    def lab(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(REPO / "lab.py"), *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=120)

    assert lab("--backend", "emu").returncode == 0
    p = lab("graduate", sid)
    assert p.returncode == 0, p.stderr
    assert f"graduated {sid}:" in p.stdout and "passed on emu" in p.stdout
    assert "note: graduated on emu; never run on sm_100a hardware" in p.stdout
    g = json.loads(st.read_text())["graduated"][sid]
    assert g["emu_only"] is True and g["note"].startswith("graduated on emu; never run on sm_100a hardware")
    assert "[emu only: never run on sm_100a hardware]" in lab("graduate", "--list").stdout
    assert "emu only" in lab("status").stdout

    # a pass on a real GPU (recorded as the cuda backend would) on the same source: no longer emu-only
    h = json.loads(st.read_text())["results"][sid]["emu"]["source_hash"]
    state.record_result(sid, "cuda", h, True, path=st)
    p = lab("graduate", sid)
    assert p.returncode == 0 and "passed on cuda, emu" in p.stdout and "note:" not in p.stdout, p.stdout
    g = json.loads(st.read_text())["graduated"][sid]
    assert g["emu_only"] is False and "note" not in g
    assert "emu only" not in lab("status").stdout and "emu only" not in lab("graduate", "--list").stdout


def test_emu_only_rule() -> None:
    assert state.emu_only(["emu"]) and not state.emu_only(["cuda"]) and not state.emu_only(["cuda", "emu"])
