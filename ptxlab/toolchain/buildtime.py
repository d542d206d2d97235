"""Progress and an estimate for long NVRTC builds (a CUTLASS example takes 1.5-2 minutes and up to 4 GB).

``with build_progress(name, arch): nvrtcCompileProgram(...)`` (NVRTC releases the GIL, so a thread can report):
once a build has run ``QUIET_S`` seconds, stderr shows what is being built, the time so far and an estimate, the
time the last build of the same file for the same arch took (``<cache>/build_times.json``, written atomically
after every build longer than ``RECORD_S``). The form follows ``PTXLAB_PROGRESS`` (ptxlab/progress.py): on a
terminal one line rewritten in place; ``1``/``lines`` one line every ``LINE_EVERY_S`` seconds (logs); off, and by
default when stderr is not a terminal, nothing. Never on stdout.
"""
from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from typing import Iterator, Optional

__all__ = ["build_progress", "estimate"]

QUIET_S = 3.0
RECORD_S = 1.0
LINE_EVERY_S = 15.0
_FILE = "build_times.json"


def _path():
    from ptxlab.toolchain.paths import cache_dir

    return cache_dir() / _FILE


def _load() -> dict:
    try:
        data = json.loads(_path().read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def estimate(name: str, arch: str) -> Optional[float]:
    """Seconds the last build of ``name`` for ``arch`` took, if recorded."""
    v = _load().get(f"{name}|{arch}")
    return float(v) if isinstance(v, (int, float)) else None


def _record(name: str, arch: str, seconds: float) -> None:
    from ptxlab.fileio import atomic_write

    data = _load()
    data[f"{name}|{arch}"] = round(seconds, 1)
    try:
        atomic_write(_path(), json.dumps(data, indent=1, sort_keys=True))
    except OSError:
        pass


def _text(name: str, arch: str, elapsed: float, est: Optional[float]) -> str:
    guess = (f", about {max(est - elapsed, 0):.0f} s left (the last build took {est:.0f} s)" if est else
             ", no earlier build recorded (a CUTLASS example takes 1.5-2 minutes)")
    return f"ptxlab: NVRTC building {name} for {arch}: {elapsed:.0f} s{guess}"


@contextlib.contextmanager
def build_progress(name: str, arch: str) -> Iterator[None]:
    """Report a build that runs longer than QUIET_S (module doc); record its time."""
    from ptxlab.progress import mode

    try:
        form = mode()
    except Exception:       # noqa: BLE001 - a bad PTXLAB_PROGRESS is reported by the settings check, not here
        form = "off"
    est = estimate(name, arch)
    done = threading.Event()
    t0 = time.monotonic()

    def report() -> None:
        if done.wait(QUIET_S):
            return
        live = form == "live"
        while True:
            line = _text(name, arch, time.monotonic() - t0, est)
            print(("\r" + line + "\033[K") if live else line, end="" if live else "\n", file=sys.stderr, flush=True)
            if done.wait(1.0 if live else LINE_EVERY_S):
                break
        if live:
            print("\r\033[K", end="", file=sys.stderr, flush=True)

    th = None
    if form != "off":
        th = threading.Thread(target=report, name="ptxlab-build-progress", daemon=True)
        th.start()
    try:
        yield
    finally:
        done.set()
        if th is not None:
            th.join(timeout=2.0)
        secs = time.monotonic() - t0
        if secs >= RECORD_S:
            _record(name, arch, secs)
