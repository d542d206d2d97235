"""Warnings of the emulator: behaviour the PTX text forbids (or leaves undefined) but hardware is known or expected to
tolerate.  Per the project's fidelity policy the default models the hardware and warns here, at the site; the strict
rule (an EmuError) stays one switch away (``PTXLAB_EMU_STRICT=<rule>|all|1`` or ``open_device("emu", strict=...)``,
fidelity.py, whose ``strict_of`` tells whether a rule is strict for a device).

Warnings are Python ``warnings`` of category :class:`EmuWarning` or a subclass (``fidelity.EmuFidelityWarning``,
``timing.predict.TimingSampleWarning``), shown once per key and device; ``-W error::ptxlab.emu.checks.sitewarn.EmuWarning``
turns them into exceptions. Each is also recorded on the device (``dev.emu_warnings``, a list of strings) so tests
and the lab CLI can show them. The text names the kernel, the PTX line and the CUDA line (lineinfo.py); the warning
is attributed to the user's code that launched the kernel (the first caller outside the ptxlab package), so Python
prints that line under it, never a line of the emulator's own source.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

_PKG = str(Path(__file__).resolve().parents[2])      # .../ptxlab: frames inside it are the library's


class EmuWarning(UserWarning):
    """The emulated kernel relies on behaviour the PTX ISA text forbids or leaves undefined."""


_KEYS_SEEN: set = set()     # keys of warnings given by devices without a record (plain Wave tests)


def _user_frame():
    """(filename, lineno, module globals) of the innermost caller outside the ptxlab package."""
    f = sys._getframe(2)
    while f is not None and str(Path(f.f_code.co_filename).resolve()).startswith(_PKG):
        f = f.f_back
    if f is None:
        return "<ptxlab emulator>", 0, None
    return f.f_code.co_filename, f.f_lineno, f.f_globals


def emu_warn(msg: str, device=None, key=None, category=EmuWarning, stacklevel: int = 2):
    """Warn once per ``key`` (default: the message) per device (``category``: EmuWarning or a subclass).
    ``stacklevel`` is accepted for compatibility: the warning is always attributed to the user's calling line."""
    key = msg if key is None else key
    keys = getattr(device, "_emu_warn_keys", None)
    if keys is None:
        keys = _KEYS_SEEN
        if device is not None:
            try:
                keys = device._emu_warn_keys = set()
            except AttributeError:
                pass
    if key in keys:
        return
    keys.add(key)
    ann = getattr(device, "_annotate_text", None)
    if ann is not None:        # CUDA source lines for modules compiled without -lineinfo (lineinfo.py)
        msg = ann(msg)
    seen = getattr(device, "emu_warnings", None)
    if seen is not None:
        seen.append(msg)
    filename, lineno, globs = _user_frame()
    try:
        warnings.warn_explicit(category(msg), category, filename, lineno, module_globals=globs)
    except ImportError:
        # `python -c`: __main__'s loader (BuiltinImporter) cannot give the source linecache asks it for
        warnings.warn_explicit(category(msg), category, filename, lineno)
