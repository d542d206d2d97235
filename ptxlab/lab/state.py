"""Lab state: which stage passed where (backend) on which source hash, and which stages graduated.

State file: ``<repo>/.ptxlab/lab_state.json`` (``.ptxlab/`` is gitignored; ``$PTXLAB_STATE_FILE`` overrides), written
atomically (temp file in the same directory + ``os.replace``) under an advisory ``flock`` on ``<file>.lock``, so
parallel ``lab.py`` runs do not lose each other's updates.

Layout::

    {"version": 1,
     "results":   {"B2": {"emu": {"passed": true, "source_hash": "3f2a...", "time": "2025-...Z"}, "cuda": {...}}},
     "graduated": {"B2": {"source_hash": "3f2a...", "backends": ["emu"], "time": "...", "blocks": ["blocks/tmem.cuh"],
                          "emu_only": true, "note": "graduated on emu; never run on sm_100a hardware ..."}}}

Source hash of a stage: sha256 over the stage directory's source files (``*.cu *.cuh *.h *.ptx *.py``: kernels and
driver) plus every ``blocks/*.cuh`` they ``#include``, transitively (includes resolved against the including file's
directory, then ``ptxlab/kernels/``, then the stage directory). Editing a kernel, the driver or a shared block thus
makes earlier passes stale.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

from ptxlab.errors import PtxlabError, UsageError

__all__ = ["state_path", "load_state", "record_result", "record_stage_run", "stage_source_files", "emu_only",
           "EMU_ONLY_NOTE",
           "stage_source_hash", "current_source_hash", "stage_dir", "graduate", "graduated", "graduation_info",
           "graduated_blocks", "SOURCE_SUFFIXES"]

ENV_STATE_FILE = "PTXLAB_STATE_FILE"
VERSION = 1
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".ptx", ".py")
REPO_ROOT = Path(__file__).resolve().parents[2]
_INCLUDE = re.compile(r'#\s*include\s*"([^"]+)"')


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def state_path() -> Path:
    env = os.environ.get(ENV_STATE_FILE)
    return Path(env) if env else REPO_ROOT / ".ptxlab" / "lab_state.json"


def _empty() -> Dict[str, Any]:
    return {"version": VERSION, "results": {}, "graduated": {}}


def load_state(path: Optional[Path] = None) -> Dict[str, Any]:
    """The state dict (empty skeleton when the file does not exist)."""
    p = Path(path) if path is not None else state_path()
    if not p.is_file():
        return _empty()
    try:
        data = json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"lab state {p} is not valid JSON ({exc}); delete it to start over (it only records "
                         "stage results)") from exc
    except OSError as exc:
        raise UsageError(f"lab state {p} cannot be read ({exc.strerror or exc}); fix its permissions or set "
                         f"{ENV_STATE_FILE} to another file") from exc
    problem = _shape_problem(data)
    if problem:
        raise UsageError(f"lab state {p} is damaged ({problem}); delete it (or move it away) to start over: it only "
                         "records stage results")
    data.setdefault("results", {})
    data.setdefault("graduated", {})
    return data


def _shape_problem(data: Any) -> str:
    """What is wrong with a state file's JSON layout (module doc), '' when it has the documented shape."""
    if not isinstance(data, dict):
        return f"the top level is a {type(data).__name__}, not an object"
    if data.get("version") != VERSION:
        return f"unknown format version {data.get('version')!r}"
    for key in ("results", "graduated"):
        if not isinstance(data.get(key, {}), dict):
            return f"'{key}' is a {type(data[key]).__name__}, not an object"
    for sid, per in data.get("results", {}).items():
        if not isinstance(per, dict) or not all(isinstance(e, dict) and isinstance(e.get("passed"), bool)
                                                and isinstance(e.get("source_hash"), str) for e in per.values()):
            return f"results of stage {sid!r} are not {{backend: {{passed, source_hash, time}}}}"
    for sid, e in data.get("graduated", {}).items():
        if not (isinstance(e, dict) and isinstance(e.get("source_hash"), str) and isinstance(e.get("backends"), list)
                and isinstance(e.get("time", ""), str)):
            return f"graduation of stage {sid!r} is not {{source_hash, backends, time, blocks}}"
    return ""


def _write_atomic(p: Path, data: Dict[str, Any]) -> None:
    from ptxlab.fileio import atomic_write

    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(p, json.dumps(data, indent=1, sort_keys=True))


@contextlib.contextmanager
def _locked(p: Path) -> Iterator[None]:
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p.with_name(p.name + ".lock"), "w") as lk:
        try:
            import fcntl

            fcntl.flock(lk, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - non-POSIX
            pass
        yield


@contextlib.contextmanager
def _update(path: Optional[Path]) -> Iterator[Dict[str, Any]]:
    p = Path(path) if path is not None else state_path()
    with _locked(p):
        data = load_state(p)
        yield data
        _write_atomic(p, data)


# ------------------------------------------------------------------------------------------------ source hash
def _resolve_include(name: str, including: Path, stage_dir: Path) -> Optional[Path]:
    from ptxlab.kernels import KERNELS_DIR

    for root in (including.parent, KERNELS_DIR, stage_dir):
        cand = (root / name).resolve()
        if cand.is_file():
            return cand
    return None


def stage_source_files(stage_dir: Path) -> List[Path]:
    """The stage dir's source files plus the blocks they include (transitively), sorted."""
    stage_dir = Path(stage_dir).resolve()
    todo = [p for p in sorted(stage_dir.iterdir()) if p.is_file() and p.suffix in SOURCE_SUFFIXES]
    seen: Dict[Path, None] = {}
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen[f] = None
        for name in _INCLUDE.findall(f.read_text(errors="replace")):
            inc = _resolve_include(name, f, stage_dir)
            if inc is not None and inc not in seen:
                todo.append(inc)
    return sorted(seen)


def _label(p: Path) -> str:
    try:
        return p.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return p.as_posix()


def stage_source_hash(stage_dir: Path) -> str:
    """16-hex-digit sha256 of the stage's sources + included blocks (names relative to the repo and contents)."""
    h = hashlib.sha256()
    for f in stage_source_files(stage_dir):
        h.update(_label(f).encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:16]


def stage_dir(stage_id: str) -> Path:
    """Directory of the driver registering stage_id (discovers the stages)."""
    from ptxlab.lab.registry import discover, select

    stages = select(discover(), [stage_id])
    if not stages or not stages[0].source:
        raise PtxlabError(f"stage {stage_id} has no driver file; see `python lab.py list`")
    return Path(stages[0].source).resolve().parent


def current_source_hash(stage_id: str) -> str:
    return stage_source_hash(stage_dir(stage_id))


# ------------------------------------------------------------------------------------------------ results
def record_result(stage_id: str, backend: str, source_hash: str, passed: bool, *, path: Optional[Path] = None,
                  **extra: Any) -> Dict[str, Any]:
    """Record the latest result of stage_id on backend (one entry per stage x backend); returns the entry."""
    entry = {"passed": bool(passed), "source_hash": str(source_hash), "time": _now()}
    entry.update({k: v for k, v in extra.items() if v is not None})
    with _update(path) as data:
        data["results"].setdefault(stage_id.upper(), {})[backend] = entry
    return entry


def record_stage_run(stage: Any, backend: str, passed: bool, *, path: Optional[Path] = None) -> Optional[str]:
    """CLI hook after each stage run: record the result under the stage's current source hash. Never raises;
    returns a warning text when the state could not be written (the run's verdict stands either way)."""
    try:
        src = getattr(stage, "source", "")
        h = stage_source_hash(Path(src).parent) if src else "unknown"
        record_result(stage.id, backend, h, passed, path=path)
        return None
    except Exception as exc:  # noqa: BLE001 - bookkeeping must not break a stage run
        return f"could not record {getattr(stage, 'id', '?')} in the lab state ({type(exc).__name__}: {exc})"


# ------------------------------------------------------------------------------------------------ graduation
def _passing_backends(data: Dict[str, Any], stage_id: str, source_hash: str) -> List[str]:
    res = data["results"].get(stage_id.upper(), {})
    return sorted(b for b, e in res.items() if e.get("passed") and e.get("source_hash") == source_hash)


def _blocks_of(files: Sequence[Path]) -> List[str]:
    from ptxlab.kernels import KERNELS_DIR

    out = []
    for f in files:
        try:
            out.append(f.relative_to(KERNELS_DIR.resolve()).as_posix())
        except ValueError:
            continue
    return sorted(out)


EMU_ONLY_NOTE = ("graduated on emu; never run on sm_100a hardware (no passing --backend cuda run on this source: "
                 "the emulator's verdict only)")


def emu_only(backends: Sequence[str]) -> bool:
    """A pass recorded only on the emulator (no real-GPU backend among `backends`)."""
    return not any(b != "emu" for b in backends)


def graduate(stage_id: str, *, path: Optional[Path] = None, sdir: Optional[Path] = None) -> Dict[str, Any]:
    """Mark stage_id graduated; raises PtxlabError unless it passed on its CURRENT source hash (any backend)."""
    sid = stage_id.upper()
    d = Path(sdir) if sdir is not None else stage_dir(sid)
    h = stage_source_hash(d)
    with _update(path) as data:
        ok = _passing_backends(data, sid, h)
        if not ok:
            res = data["results"].get(sid, {})
            seen = "; ".join(f"{b}: {'PASS' if e.get('passed') else 'FAIL'} on {e.get('source_hash')}"
                             for b, e in sorted(res.items())) or "never run"
            raise PtxlabError(f"stage {sid} has not passed on its current source (hash {h}); recorded: {seen}. "
                              f"Run `python lab.py --stage {sid} --backend emu` (or cuda) first")
        entry = {"source_hash": h, "backends": ok, "time": _now(), "blocks": _blocks_of(stage_source_files(d)),
                 "emu_only": emu_only(ok)}
        if entry["emu_only"]:
            entry["note"] = EMU_ONLY_NOTE
        data["graduated"][sid] = entry
    return entry


def graduation_info(stage_id: str, *, path: Optional[Path] = None,
                    current_hash: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The graduation entry plus ``current`` (its hash equals current_hash; None when not computed)."""
    e = load_state(path)["graduated"].get(stage_id.upper())
    if e is None:
        return None
    e = dict(e)
    e["current"] = None if current_hash is None else e.get("source_hash") == current_hash
    return e


def graduated(stage_id: str, *, check_current: bool = True, path: Optional[Path] = None) -> bool:
    """True if stage_id graduated (and, with check_current, its sources are unchanged since)."""
    h = None
    if check_current:
        try:
            h = current_source_hash(stage_id)
        except PtxlabError:
            return False
    e = graduation_info(stage_id, path=path, current_hash=h)
    return e is not None and (not check_current or bool(e["current"]))


def graduated_blocks(*, path: Optional[Path] = None, check_current: bool = True) -> Dict[str, List[str]]:
    """{"blocks/tmem.cuh": ["B1", "B2"], ...}: blocks covered by graduated (current) stages, for the production build."""
    out: Dict[str, List[str]] = {}
    for sid, e in sorted(load_state(path)["graduated"].items()):
        if check_current and not graduated(sid, path=path):
            continue
        for b in e.get("blocks", []):
            out.setdefault(b, []).append(sid)
    return out
