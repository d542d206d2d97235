"""The instruction families: one module per family, named by its PTX ISA chapter (9.7.x), each registering the table
of forms it implements with ``core.isa.register`` when imported (see ../API.md)."""
from __future__ import annotations

import importlib
import pkgutil

from ..core.isa import FAMILY_ERRORS

_loaded = False


def load_families() -> None:
    """Import every family module of this package so its handlers register.  A module that fails to import is
    recorded in ``core.isa.FAMILY_ERRORS`` and named in the error of any instruction left without a handler."""
    global _loaded
    if _loaded:
        return
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        try:
            importlib.import_module(f"{__name__}.{info.name}")
        except Exception as e:  # noqa: BLE001 - reported where it matters (unsupported instruction errors)
            FAMILY_ERRORS[info.name] = f"{type(e).__name__}: {e}"
    _loaded = True
