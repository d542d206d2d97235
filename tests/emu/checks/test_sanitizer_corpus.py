"""The sanitizer-parity corpus (tests/emu/checks/sanitizer/sanitizer_corpus.py) on the emulator with its default checks: every
buggy kernel gets its specific report (an EmuError or an EmuWarning in dev.emu_warnings) and every control runs
clean. Fresh random inputs each run. The compute-sanitizer side runs on a GPU (tools/audit/sanitizer_parity.py)."""
from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

sys.path.insert(0, str(Path(__file__).resolve().parent / "sanitizer"))
from sanitizer_corpus import ENTRIES, compile_entry, launch  # noqa: E402

_MODS: dict = {}


def _module(e):
    key = (e.source, e.arch)
    if key not in _MODS:
        _MODS[key] = compile_entry(e)
    return _MODS[key]


def run_entry(e, rng):
    """('error' | 'warning' | 'clean', text) of one entry on a fresh emulator device."""
    dev = ptxlab.open_device("emu", **e.emu_options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            launch(dev, _module(e), e, rng)
        except EmuError as exc:
            return "error", str(exc)
    if dev.emu_warnings:
        return "warning", "\n".join(dev.emu_warnings)
    return "clean", ""


def test_corpus_has_twenty_bugs_of_every_class():
    bugs = [e for e in ENTRIES if not e.name.startswith("ok_")]
    assert len(bugs) >= 20
    classes = {e.name.split("_")[0] for e in bugs}
    assert {"race", "uninit", "oob", "misaligned", "barrier", "mbar", "tmem"} <= classes, classes


@pytest.mark.parametrize("e", ENTRIES, ids=[e.name for e in ENTRIES])
def test_entry_on_emulator(e, rng):
    kind, text = run_entry(e, rng)
    want, pattern = e.emu
    assert kind == want, f"{e.name}: expected {want}, got {kind}:\n{text}"
    if pattern:
        assert re.search(pattern, text), f"{e.name}: {pattern!r} not in:\n{text}"
    if kind == "error":       # the report names the kernel and where (a PTX line; a deadlock: each waiting warp's)
        assert f"kernel : {e.name}" in text and ("ptx    : line" in text or "PTX line" in text), text
