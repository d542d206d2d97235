"""The lab.py contract for usage/setup errors, each through a subprocess: exit code 2 (3 for a refusal), exactly one
`error: ...` line on stderr, no traceback, and nothing recorded in `lab.py status` (only real stage outcomes are)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from repo_root import REPO


PASSING = """
from ptxlab.lab.registry import Stage, StageResult, Check

def run(ctx):
    return StageResult.from_rows([Check("value is {v}", True, "")])

STAGES = [Stage("Z1", "passing stage", "nothing", run)]
"""
REFUSING = """
from ptxlab.lab.registry import Stage, StageResult
from ptxlab.errors import DeviceUnavailable

def refuse(ctx):
    return StageResult.refuse("needs an sm_100a GPU or --backend emu", [("device", False, "sm_90")])

def unavailable(ctx):
    raise DeviceUnavailable("this GPU cannot run sm_100a code")

STAGES = [Stage("Z1", "refusing stage", "nothing", refuse), Stage("Z2", "unavailable", "nothing", unavailable)]
"""


@pytest.fixture
def lab(tmp_path: Path, rng: np.random.Generator):
    """run(*args, stages=driver text or None (the repo's stages), code=None) -> (CompletedProcess, state dict)."""
    state = tmp_path / "state" / "lab_state.json"

    def run(*args: str, stages: str | None = PASSING, code: str | None = None, env: dict | None = None):
        e = dict(os.environ, PTXLAB_STATE_FILE=str(state), PTXLAB_DEBUG="", PYTHONPATH=str(REPO))
        e.pop("PTXLAB_STAGES_DIR", None)
        e.pop("PTXLAB_DUMP_DIR", None)
        if stages is not None:
            d = tmp_path / "stages" / "z"
            d.mkdir(parents=True, exist_ok=True)
            (d / "driver.py").write_text(textwrap.dedent(stages.replace("{v}", str(int(rng.integers(1, 1000))))))
            e["PTXLAB_STAGES_DIR"] = str(tmp_path / "stages")
        e.update(env or {})
        cmd = [sys.executable, "-c", code, *args] if code else [sys.executable, str(REPO / "lab.py"), *args]
        p = subprocess.run(cmd, capture_output=True, text=True, env=e, cwd=tmp_path, timeout=300)
        data = json.loads(state.read_text()) if state.exists() else {"results": {}, "graduated": {}}
        return p, data

    return run


def assert_usage_error(p: subprocess.CompletedProcess, *needles: str, rc: int = 2) -> str:
    out = p.stdout + p.stderr
    assert p.returncode == rc, out
    assert "Traceback" not in out, out
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# ---------------------------------------------------------------------------------------------- export
def test_export_out_missing_directory(lab, tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "sub.py"
    p, _ = lab("export", "--problem", "nvfp4_gemv", "--out", str(out), stages=None)
    assert_usage_error(p, f"{out.parent} does not exist")
    assert not out.parent.exists()


def test_export_out_is_a_directory(lab, tmp_path: Path) -> None:
    d = tmp_path / "outdir"
    d.mkdir()
    p, _ = lab("export", "--out", str(d), stages=None)
    assert_usage_error(p, "is a directory", "submission.py")
    assert list(d.iterdir()) == []


# ---------------------------------------------------------------------------------------------- diff
def _dump(tmp_path: Path, rng: np.random.Generator) -> Path:
    from ptxlab.lab.dumps import write_dump

    got = rng.integers(0, 1 << 32, (128, 32), dtype=np.uint32)
    return write_dump(tmp_path / "dumps", "B2", "roundtrip", {"got": got, "expected": got.copy()})


@pytest.mark.parametrize("frac", [0.0, 0.1, 0.5, 0.9, 0.99])
def test_diff_truncated_dump(lab, tmp_path: Path, rng: np.random.Generator, frac: float) -> None:
    good = _dump(tmp_path, rng)
    data = good.read_bytes()
    bad = tmp_path / "trunc.npz"
    bad.write_bytes(data[: max(int(len(data) * frac), 1)])
    p, _ = lab("diff", str(bad), stages=None)
    line = assert_usage_error(p, str(bad))
    assert "allow_pickle" not in line and "pickle" not in line


@pytest.mark.parametrize("content", [b"hello, not a dump\n", b"\x80\x04\x95 pickled bytes", b""])
def test_diff_non_dump_file(lab, tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "x.npz"
    bad.write_bytes(content + os.urandom(16))
    p, _ = lab("diff", str(bad), stages=None)
    line = assert_usage_error(p, "not a lab dump")
    assert "pickle" not in line


def test_diff_directory_argument(lab, tmp_path: Path, rng: np.random.Generator) -> None:
    good = _dump(tmp_path, rng)
    p, _ = lab("diff", str(good.parent), stages=None)
    assert_usage_error(p, "is a directory", good.name)
    p, _ = lab("diff", str(good), stages=None)          # the good dump itself diffs fine (identical)
    assert p.returncode == 0 and "identical" in p.stdout, p.stdout + p.stderr


# ---------------------------------------------------------------------------------------------- --dump
def test_dump_to_a_file(lab, tmp_path: Path) -> None:
    f = tmp_path / "afile"
    f.write_text("x")
    p, state = lab("--backend", "emu", "--dump", str(f))
    assert_usage_error(p, "is a file, not a directory")
    assert state["results"] == {}


def test_dump_to_an_unwritable_path(lab, tmp_path: Path) -> None:
    f = tmp_path / "afile"
    f.write_text("x")
    p, state = lab("--backend", "emu", "--dump", str(f / "sub"))    # below a file: cannot be created, even as root
    assert_usage_error(p, "is not writable")
    assert state["results"] == {}
    p, state = lab("--backend", "emu", env={"PTXLAB_DUMP_DIR": str(f / "sub")})
    assert_usage_error(p, "is not writable")
    p, state = lab("--backend", "emu", "--dump", str(tmp_path / "new" / "dir"))   # a creatable one is fine
    assert p.returncode == 0, p.stdout + p.stderr
    assert state["results"]["Z1"]["emu"]["passed"] is True


# ---------------------------------------------------------------------------------------------- backends
NO_DRIVER = """
import sys
import ptxlab.device.cuda as cuda_mod

class NoDriver:  # cuda.bindings.driver of a machine without libcuda: cuInit raises
    @staticmethod
    def cuInit(flags):
        raise RuntimeError("Failed to dlopen libcuda.so.1")

cuda_mod._driver = lambda: NoDriver
from ptxlab.lab.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_backend_cuda_without_driver(lab) -> None:
    p, state = lab("--backend", "cuda", code=NO_DRIVER)
    assert_usage_error(p, "--backend cuda", "no NVIDIA driver")
    assert state["results"] == {}
    p, state = lab("status", "--json", code=NO_DRIVER)
    assert p.returncode == 0 and [r["results"] for r in json.loads(p.stdout)] == [{}], p.stdout
    p, state = lab("--backend", "auto", code=NO_DRIVER)            # auto falls back to the emulator
    assert p.returncode == 0, p.stdout + p.stderr
    assert list(state["results"]["Z1"]) == ["emu"]


def test_refusals_are_not_recorded(lab) -> None:
    p, state = lab("--backend", "emu", stages=REFUSING)
    assert p.returncode == 3 and "REFUSED" in p.stdout and "Traceback" not in p.stdout + p.stderr, p.stdout
    assert state["results"] == {}
    p, state = lab("--backend", "emu", "--stage", "Z2", stages=REFUSING)   # DeviceUnavailable escaping a stage
    assert p.returncode == 3 and "cannot run sm_100a" in p.stdout and "Traceback" not in p.stdout, p.stdout
    assert state["results"] == {}


# ---------------------------------------------------------------------------------------------- stages
def test_unknown_stage_a_fault_is_a_usage_error(lab, rng: np.random.Generator) -> None:
    bogus = f"swizzle_{int(rng.integers(1000, 9999))}"
    p, state = lab("--stage", "A1", "--backend", "emu", stages=None, env={"PTXLAB_STAGE_A_FAULT": bogus})
    assert_usage_error(p, repr(bogus), "PTXLAB_STAGE_A_FAULT", "swizzle_none")
    assert state["results"] == {}
    assert p.stdout == ""                                     # nothing printed before the error (no stage header)
    p, _ = lab("status", "--json", stages=None)
    rows = json.loads(p.stdout)
    assert all(r["results"] == {} for r in rows)             # no FAIL, and no "auto" column


def test_unknown_d4_broken_variant_is_a_usage_error(lab, rng: np.random.Generator) -> None:
    bogus = f"odd_{int(rng.integers(1000, 9999))}"
    p, state = lab("--stage", "D4", "--backend", "emu", stages=None, env={"PTXLAB_STAGE_D4_BROKEN": bogus})
    assert_usage_error(p, repr(bogus), "PTXLAB_STAGE_D4_BROKEN", "odd_issuer")
    assert p.stdout == "" and state["results"] == {}


def test_stages_dir_pointing_nowhere(lab, tmp_path: Path) -> None:
    nowhere = tmp_path / "nowhere"
    for args in (("--stages-dir", str(nowhere)), ("list", "--stages-dir", str(nowhere))):
        p, state = lab(*args, stages=None)
        assert_usage_error(p, str(nowhere), "does not exist")
    p, _ = lab(stages=None, env={"PTXLAB_STAGES_DIR": str(nowhere)})
    assert_usage_error(p, "$PTXLAB_STAGES_DIR", "does not exist")
    f = tmp_path / "file"
    f.write_text("")
    p, _ = lab("--stages-dir", str(f), stages=None)
    assert_usage_error(p, "not a directory")
    empty = tmp_path / "empty"
    empty.mkdir()
    p, _ = lab("--stages-dir", str(empty), stages=None)         # an existing empty dir: nothing to run, exit 0
    assert p.returncode == 0 and "no stages registered" in p.stdout


def test_status_records_real_outcomes(lab) -> None:
    p, state = lab("--backend", "emu")
    assert p.returncode == 0, p.stdout + p.stderr
    assert set(state["results"]) == {"Z1"} and set(state["results"]["Z1"]) == {"emu"}
