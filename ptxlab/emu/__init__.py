"""The ptxlab PTX emulator: runs NVRTC-generated PTX on the CPU (``ptxlab.open_device("emu")``).

Layers (CuTe-style): ``parser`` (PTX text → ir) → ``program`` (inlining, symbol layout, decode) → ``machine``
(SIMT waves, scheduler, memory spaces, async engine) → one ``ops_*`` module per instruction family.
See API.md for the handler API.
"""
from __future__ import annotations

import importlib
import pkgutil

FAMILY_ERRORS: dict[str, str] = {}
_loaded = False


def load_families() -> None:
    """Import every ``ops_*`` module so its handlers register.  A module that fails to import is recorded in
    FAMILY_ERRORS and named in the error of any instruction left without a handler."""
    global _loaded
    if _loaded:
        return
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("ops_"):
            try:
                importlib.import_module(f"{__name__}.{info.name}")
            except Exception as e:  # noqa: BLE001 - reported where it matters (unsupported instruction errors)
                FAMILY_ERRORS[info.name] = f"{type(e).__name__}: {e}"
    _loaded = True
