"""Run audit cases (tools/audit/cases.py) in subprocesses and classify each outcome.

A case runs in its own sandbox directory with its own lab state (seeded with a recorded PASS, so an error that
overwrites an outcome shows), a shared warm compile cache (unless the case sets PTXLAB_CACHE) and a timeout. Outcome
classes (the issue's): ``ok``; ``traceback`` (a Python traceback on stdout/stderr); ``hang`` (the timeout hit);
``wrong-exit`` (an exit status the case does not allow); ``silent`` (exit 0 where an error was required: bad input
accepted); ``data-loss`` (the case's after-check found a file damaged, truncated or overwritten, or the recorded PASS
changed); ``internal`` (exit 4: ptxlab caught a bug of its own).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable
SEED_STATE = {"version": 1, "graduated": {},
              "results": {"A0": {"emu": {"passed": True, "source_hash": "0123456789abcdef", "time": "2026-11-27T00:00:00+00:00"}}}}


@dataclass
class Case:
    id: str
    category: str
    argv: Sequence[str]                 # the command, ["lab.py", ...] -> python lab.py ...; ["-c", code] -> python -c
    ok_rc: Tuple[int, ...] = (2,)       # allowed exit statuses
    env: Dict[str, str] = field(default_factory=dict)
    timeout: float = 120.0
    setup: Optional[Callable[[Path], None]] = None        # prepares files in the sandbox
    check: Optional[Callable[[Path, "subprocess.CompletedProcess"], str]] = None   # '' or what was lost
    stderr_has: str = ""                # a required substring of stderr (e.g. the variable's name)
    run: Optional[Callable[[Path, Dict[str, str]], "subprocess.CompletedProcess"]] = None   # custom driver (kills)


@dataclass
class Result:
    id: str
    category: str
    outcome: str
    rc: Optional[int]
    seconds: float
    detail: str = ""


def _env(sandbox: Path, cache: Path, extra: Dict[str, str]) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTXLAB_")}
    env.update(PYTHONPATH=str(REPO), PTXLAB_STATE_FILE=str(sandbox / "state.json"), PTXLAB_CACHE=str(cache),
               PTXLAB_DUMP_DIR=str(sandbox / "dump"), PTXLAB_PROGRESS="0", PYTHONDONTWRITEBYTECODE="1")
    env.update({k: v.replace("{sandbox}", str(sandbox)) for k, v in extra.items()})
    return env


def command(argv: Sequence[str], sandbox: Path) -> List[str]:
    args = [a.replace("{sandbox}", str(sandbox)) for a in argv]
    if args and args[0] == "lab.py":
        return [PY, str(REPO / "lab.py"), *args[1:]]
    return [PY, *args]


def run_case(case: Case, workdir: Path, cache: Path) -> Result:
    sandbox = Path(tempfile.mkdtemp(prefix=re.sub(r"[^\w.-]", "_", case.id[:40]) + "-", dir=workdir))
    (sandbox / "state.json").write_text(json.dumps(SEED_STATE))
    env = _env(sandbox, cache, case.env)
    t0 = time.monotonic()
    try:
        if case.setup is not None:
            case.setup(sandbox)
        if case.run is not None:
            p = case.run(sandbox, env)
        else:
            p = subprocess.run(command(case.argv, sandbox), cwd=sandbox, env=env, capture_output=True, text=True,
                               timeout=case.timeout)
    except subprocess.TimeoutExpired:
        return Result(case.id, case.category, "hang", None, time.monotonic() - t0, f"no exit in {case.timeout:.0f} s")
    secs = time.monotonic() - t0
    text = (p.stdout or "") + (p.stderr or "")
    if "Traceback (most recent call last)" in text:
        return Result(case.id, case.category, "traceback", p.returncode, secs, _tail(text))
    lost = ""
    state = sandbox / "state.json"
    try:
        data = json.loads(state.read_text())
        if data["results"].get("A0") != SEED_STATE["results"]["A0"]:
            lost = "the recorded PASS of A0 changed"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        lost = f"state file unreadable after the run: {exc}"
    if not lost and case.check is not None:
        lost = case.check(sandbox, p)
    if lost:
        return Result(case.id, case.category, "data-loss", p.returncode, secs, lost)
    if p.returncode == 4:
        return Result(case.id, case.category, "internal", 4, secs, _tail(p.stderr))
    if p.returncode not in case.ok_rc:
        kind = "silent" if p.returncode == 0 else "wrong-exit"
        return Result(case.id, case.category, kind, p.returncode, secs,
                      f"exit {p.returncode}, allowed {case.ok_rc}: {_tail(text)}")
    if case.stderr_has and case.stderr_has not in text:
        return Result(case.id, case.category, "wrong-exit", p.returncode, secs,
                      f"output lacks {case.stderr_has!r}: {_tail(text)}")
    shutil.rmtree(sandbox, ignore_errors=True)
    return Result(case.id, case.category, "ok", p.returncode, secs)


def _tail(text: str, n: int = 400) -> str:
    text = (text or "").strip()
    return text[-n:].replace("\n", " | ")


def _safe(case: Case, workdir: Path, cache: Path) -> Result:
    try:
        return run_case(case, workdir, cache)
    except Exception as exc:  # noqa: BLE001 - a broken case must not stop the audit
        return Result(case.id, case.category, "audit-error", None, 0.0, f"{type(exc).__name__}: {exc}")


def run_all(cases: Sequence[Case], workers: int = 2, cache: Optional[Path] = None,
            progress: Callable[[Result], None] = lambda r: None) -> List[Result]:
    workdir = Path(tempfile.mkdtemp(prefix="ptxlab-audit-"))
    cache = cache or Path(os.environ.get("PTXLAB_CACHE") or Path.home() / ".cache" / "ptxlab")   # warm: fast cases
    results: List[Result] = []
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for r in pool.map(lambda c: _safe(c, workdir, cache), cases):
                progress(r)
                results.append(r)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results
