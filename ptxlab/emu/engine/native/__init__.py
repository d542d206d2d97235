"""The native engine: each kernel's PTX translated once to C, compiled with the system C compiler, run by the
interpreter's scheduler (ptx_docs/emulator_engines.md).

``open_device("emu", engine="native" | "interp")`` or ``PTXLAB_EMU_ENGINE`` picks the engine; the default is native
when a C compiler works.  The interpreter (engine/machine.py) stays the reference: every instruction the native code
does not translate runs through the interpreter's handler, and the results are bit-identical by construction and by
test (tests/emu/engine/).
"""
from __future__ import annotations

import os
import sys
from typing import Callable, Optional

from ....errors import UsageError

ENV = "PTXLAB_EMU_ENGINE"
ENGINES = ("native", "interp")
_notices: set = set()


def engine_mode(spec: Optional[str] = None) -> str:
    """'native' or 'interp' from open_device's ``engine=`` (None: PTXLAB_EMU_ENGINE, default native)."""
    from_env = spec is None
    v = (os.environ.get(ENV) or "native") if from_env else spec
    v = str(v).strip().lower()
    if v not in ENGINES:
        where = f"{ENV}={v!r}" if from_env else f"open_device('emu', engine={spec!r})"
        raise UsageError(f"{where}: the emulator's engines are {', '.join(ENGINES)}")
    return v


def notice(key: str, text: str) -> None:
    """One line on stderr, once per process and key."""
    if key not in _notices:
        _notices.add(key)
        print(f"[ptxlab emu] {text}", file=sys.stderr)


def scheduler_for(prog, engine: str) -> Optional[Callable]:
    """The scheduler factory for ``run_kernel`` (None: the interpreter's)."""
    if engine != "native":
        return None
    from . import build
    if not build.available():
        notice("no-cc", "no C compiler found (set CC): the native engine is off, the emulator interprets")
        return None
    from .runner import NativeScheduler, kernel_of
    if getattr(prog, "_native_kernel", None) is False:     # its build failed before
        return None
    try:
        k = kernel_of(prog)
    except build.NativeBuildError as e:
        notice(f"build:{prog.kernel}", f"native build of {prog.kernel} failed, interpreting it: {e}")
        prog._native_kernel = False
        return None

    def make(st, budget, watch):
        return NativeScheduler(st, budget, watch, k)
    return make
