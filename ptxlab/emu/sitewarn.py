"""Warnings of the emulator: behaviour the PTX text forbids (or leaves undefined) but hardware is known or expected to
tolerate.  Per the project's fidelity policy the default models the hardware and warns here, at the site; the strict
rule (an EmuError) stays one switch away (``PTXLAB_EMU_STRICT=1`` or ``open_device("emu", strict=True)``).

Warnings are Python ``warnings`` of category :class:`EmuWarning` (shown once per distinct message by the default
filter; ``-W error::ptxlab.emu.sitewarn.EmuWarning`` turns them into exceptions) and are also recorded on the device
(``dev.emu_warnings``, a list of strings) so tests and the lab CLI can show them.
"""
from __future__ import annotations

import os
import warnings


class EmuWarning(UserWarning):
    """The emulated kernel relies on behaviour the PTX ISA text forbids or leaves undefined."""


def strict_of(device) -> bool:
    """True when the device (or PTXLAB_EMU_STRICT) asks for the strict PTX-text rules instead of hardware behaviour."""
    v = getattr(device, "strict", None)
    if v is None:
        v = os.environ.get("PTXLAB_EMU_STRICT", "0").strip().lower() not in ("", "0", "no", "off", "false")
    return bool(v)


_KEYS_SEEN: set = set()     # keys of warnings given by devices without a record (plain Wave tests)


def emu_warn(msg: str, device=None, key=None):
    """Warn once per ``key`` (default: the message) per device."""
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
    warnings.warn(EmuWarning(msg), stacklevel=2)
