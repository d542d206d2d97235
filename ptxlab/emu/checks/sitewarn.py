"""Warnings of the emulator: behaviour the PTX text forbids (or leaves undefined) but hardware is known or expected to
tolerate.  Per the project's fidelity policy the default models the hardware and warns here, at the site; the strict
rule (an EmuError) stays one switch away (``PTXLAB_EMU_STRICT=<rule>|all|1`` or ``open_device("emu", strict=...)``, fidelity.py).

Warnings are Python ``warnings`` of category :class:`EmuWarning` (shown once per distinct message by the default
filter; ``-W error::ptxlab.emu.checks.sitewarn.EmuWarning`` turns them into exceptions) and are also recorded on the device
(``dev.emu_warnings``, a list of strings) so tests and the lab CLI can show them.
"""
from __future__ import annotations

import warnings


class EmuWarning(UserWarning):
    """The emulated kernel relies on behaviour the PTX ISA text forbids or leaves undefined."""


def strict_of(device, rule: str) -> bool:
    """True when ``rule`` is strict for the device (``EmuDevice(strict=...)`` or PTXLAB_EMU_STRICT): the one switch of
    fidelity.py, which holds every rule's name and hardware evidence."""
    from .fidelity import parse_strict
    rules = getattr(device, "strict", None)
    return rule in (parse_strict(None) if rules is None else rules)


_KEYS_SEEN: set = set()     # keys of warnings given by devices without a record (plain Wave tests)


def emu_warn(msg: str, device=None, key=None, category=EmuWarning, stacklevel: int = 2):
    """Warn once per ``key`` (default: the message) per device (``category``: EmuWarning or a subclass;
    ``stacklevel``: passed to ``warnings.warn``; the default 2 names emu_warn's caller)."""
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
    warnings.warn(category(msg), stacklevel=stacklevel)
