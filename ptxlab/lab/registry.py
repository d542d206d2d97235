"""Stage registry: Stage / StageContext / StageResult, and discovery of ``stages/<dir>/driver.py`` modules.

A stage driver is a module that defines ``STAGES = [Stage(...), ...]``. Drivers are loaded as the module
``ptxlab_stages.<dir>.driver`` inside a package whose path is the stage dir, so a driver can use relative
imports of its siblings (``from .kernels import SRC``).
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ptxlab.debug import DebugFlags
from ptxlab.errors import PtxlabError, UsageError

__all__ = [
    "Check",
    "Stage",
    "StageContext",
    "StageResult",
    "stage_sort_key",
    "default_stages_dir",
    "discover",
    "load_shared",
    "select",
    "set_stages_dir",
]

ENV_STAGES_DIR = "PTXLAB_STAGES_DIR"
_ID = re.compile(r"^([A-Z])(\d+)([a-z]?)$")


def stage_sort_key(stage_id: str) -> Tuple[str, int, str]:
    """Order ids as A1 < A2 < A10 < B1 < ... (letter, number, optional lowercase suffix)."""
    m = _ID.match(stage_id)
    if not m:
        raise PtxlabError(
            f"stage id {stage_id!r} is not of the form <capital letter><number>[suffix] (e.g. 'A1', 'C2', 'D3b'); "
            "rename the stage in its driver.py"
        )
    return m.group(1), int(m.group(2)), m.group(3)


@dataclass
class Check:
    """One row of a stage's result: what was checked, whether it held, and details."""

    name: str
    ok: bool
    detail: str = ""


@dataclass
class StageResult:
    """Outcome of one stage run."""

    passed: bool
    rows: List[Check] = field(default_factory=list)
    metrics: Dict[str, Any] = field(default_factory=dict)
    dump_paths: List[Path] = field(default_factory=list)
    message: str = ""
    refused: str = ""   # non-empty: the stage could not run on this device (e.g. "needs an sm_100a GPU"); not a failure

    @classmethod
    def refuse(cls, reason: str, rows: Sequence[Union[Check, Tuple[str, bool, str]]] = ()) -> "StageResult":
        """The device cannot run this stage (an sm_100a stage on the cuda backend of an H100): say so, cleanly."""
        checks = [r if isinstance(r, Check) else Check(*r) for r in rows]
        return cls(passed=False, rows=checks, message=reason, refused=reason)

    @classmethod
    def from_rows(cls, rows: Sequence[Union[Check, Tuple[str, bool, str]]], **kw: Any) -> "StageResult":
        """Passed iff every row is ok (and there is at least one row)."""
        checks = [r if isinstance(r, Check) else Check(*r) for r in rows]
        return cls(passed=bool(checks) and all(c.ok for c in checks), rows=checks, **kw)


@dataclass
class StageContext:
    """What a stage gets: the backend, a lazily-opened device, the dump dir and the debug flags."""

    backend: str  # requested: "emu" | "cuda" | "auto"
    dump_dir: Path
    debug: DebugFlags
    _device: Any = None
    opener: Optional[Callable[[str], Any]] = None

    @property
    def device(self) -> Any:
        """The device for ``backend`` (opened on first use via ``ptxlab.open_device``)."""
        if self._device is None:
            opener = self.opener
            if opener is None:
                import ptxlab

                opener = ptxlab.open_device
            self._device = opener(self.backend)
        return self._device

    @property
    def backend_name(self) -> str:
        """Concrete backend once a device is open (e.g. "emu" for "auto"), else the requested name."""
        dev = self._device
        for attr in ("kind", "backend", "name"):
            val = getattr(dev, attr, None) if dev is not None else None
            if isinstance(val, str) and val:
                return val
        return self.backend


@dataclass
class Stage:
    """A registered bring-up stage."""

    id: str
    title: str
    checks: str
    run: Callable[[StageContext], StageResult]
    source: str = ""  # driver file that registered it (filled in by discover)
    # checks the stage's settings (e.g. its PTXLAB_STAGE_* variables) before any stage runs or prints: raises
    # UsageError (lab.py exits 2 with one line and records nothing)
    preflight: Optional[Callable[[], None]] = None

    def __post_init__(self) -> None:
        stage_sort_key(self.id)


def set_stages_dir(value: Optional[str]) -> None:
    """``--stages-dir`` (every subcommand that discovers stages): must be a directory; sets PTXLAB_STAGES_DIR."""
    if value is not None:
        os.environ[ENV_STAGES_DIR] = value
    explicit = value or os.environ.get(ENV_STAGES_DIR)
    if explicit and not Path(explicit).is_dir():
        what = "--stages-dir" if value else f"${ENV_STAGES_DIR}"
        raise UsageError(f"{what} {explicit}: {'not a directory' if Path(explicit).exists() else 'does not exist'}; "
                         "pass the directory holding <stage>/driver.py files")


def default_stages_dir() -> Path:
    """``$PTXLAB_STAGES_DIR`` or ``<repo>/stages``."""
    env = os.environ.get(ENV_STAGES_DIR)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "stages"


def load_shared(name: str, path: Path) -> types.ModuleType:
    """A helper module of one stage directory that drivers of other directories share (stages E and F use
    ``D_mma/host.py``): loaded from ``path`` once per process under ``name`` (``sys.modules``)."""
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _load_driver(path: Path) -> types.ModuleType:
    pkg_name = "ptxlab_stages." + re.sub(r"\W", "_", path.parent.name)
    if "ptxlab_stages" not in sys.modules:
        root = types.ModuleType("ptxlab_stages")
        root.__path__ = []  # type: ignore[attr-defined]
        sys.modules["ptxlab_stages"] = root
    pkg = types.ModuleType(pkg_name)
    pkg.__path__ = [str(path.parent)]  # type: ignore[attr-defined]
    sys.modules[pkg_name] = pkg
    spec = importlib.util.spec_from_file_location(pkg_name + ".driver", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except PtxlabError:
        raise
    except Exception as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).parent == path.parent]
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else str(path)
        raise PtxlabError(
            f"stage driver {path} failed to import at {where}: {type(exc).__name__}: {exc}; "
            "fix the driver (run it with python -X dev to see the full traceback)"
        ) from exc
    return mod


def discover(stages_dir: Optional[Path] = None) -> List[Stage]:
    """Load ``<stages_dir>/*/driver.py`` and return all their STAGES, sorted by id; duplicate ids raise."""
    root = Path(stages_dir) if stages_dir is not None else default_stages_dir()
    if not root.is_dir():
        return []
    stages: List[Stage] = []
    seen: Dict[str, str] = {}
    for driver in sorted(root.glob("*/driver.py")):
        mod = _load_driver(driver)
        listed = getattr(mod, "STAGES", None)
        if listed is None:
            continue
        if not isinstance(listed, (list, tuple)) or not all(isinstance(s, Stage) for s in listed):
            raise PtxlabError(
                f"{driver}: STAGES must be a list of ptxlab.lab.registry.Stage objects; "
                f"got {type(listed).__name__}; fix the driver"
            )
        for s in listed:
            if s.id in seen:
                raise PtxlabError(f"stage id {s.id} is defined twice ({seen[s.id]} and {driver}); rename one of them")
            seen[s.id] = str(driver)
            s.source = str(driver)
            stages.append(s)
    return sorted(stages, key=lambda s: stage_sort_key(s.id))


def select(stages: Sequence[Stage], ids: Sequence[str]) -> List[Stage]:
    """Stages whose ids are listed (case-insensitive, order of the registry); unknown ids raise."""
    if not ids:
        return list(stages)
    wanted = {i.strip().upper() for part in ids for i in part.split(",") if i.strip()}
    if not wanted:           # `--stage ""` / `--stage ,,`: not "every stage", not "nothing registered"
        raise PtxlabError(f"--stage {' '.join(repr(i) for i in ids)}: no stage id given; registered: "
                          f"{', '.join(s.id for s in stages) or 'none'}; see `python lab.py list`")
    known = {s.id.upper() for s in stages}
    unknown = sorted(wanted - known)
    if unknown:
        raise PtxlabError(
            f"unknown stage id(s) {', '.join(unknown)}; registered: {', '.join(s.id for s in stages) or 'none'}; "
            "see `python lab.py list`"
        )
    return [s for s in stages if s.id.upper() in wanted]
