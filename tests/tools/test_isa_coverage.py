"""ptx_docs/isa_coverage.md is what tools/isa_coverage.py writes from the current inputs (legal-form data, the
families' form tables, tools/isa_evidence.json, the generator), every evidence label names a test that exists, and
every instruction the test suite executed when the evidence was recorded is still implemented (the registry never
refuses a form the suite runs; evidence is recorded only for instructions that ran without error)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import isa_coverage  # noqa: E402

from ptxlab.emu.core import isa  # noqa: E402

def test_table_is_current() -> None:
    text = isa_coverage.OUT.read_text()
    assert isa_coverage.recorded_digest(text) == isa_coverage.inputs_digest(), \
        "ptx_docs/isa_coverage.md is out of date: run python tools/isa_coverage.py"


def test_evidence_labels_name_existing_tests() -> None:
    import corpus
    entries = {e.name for e in corpus.all_entries()}
    ev = json.loads(isa_coverage.EVIDENCE.read_text())
    labels = {lab for labs in list(ev["instructions"].values()) + list(ev["special"].values()) for lab in labs}
    bad = []
    for lab in labels:
        kind, _, what = lab.partition(":")
        if kind == "corpus":
            ok = what in entries
        else:
            ok = (REPO / what).is_file()
        if not ok:
            bad.append(lab)
    assert not bad, bad


def test_every_executed_instruction_is_implemented() -> None:
    from ptxlab.emu.ops import load_families
    load_families()
    ev = json.loads(isa_coverage.EVIDENCE.read_text())
    bad = []
    for name in ev["instructions"]:
        op, *mods = name.split(".")
        hit = isa.match(op, tuple(mods))
        if hit is None or hit[1] is None:
            bad.append(name)
    assert not bad, f"the suite executes these, the registry refuses them: {bad}"


def test_merge_replaces_what_a_partial_run_reran() -> None:
    """--collect --merge: labels the partial run re-ran are replaced, other existing labels kept, labels of tests
    that no longer exist dropped."""
    keep = "host:tests/tools/test_isa_coverage.py"
    old = {"instructions": {"add.s32": [keep, "host:tests/gone_test.py"], "ret": ["host:tests/emu/ops/test_emu_float.py"]},
           "special": {"%tid.x": [keep]}}
    new = {"instructions": {"exit": ["host:tests/emu/ops/test_emu_float.py"]}, "special": {}}
    got = isa_coverage.merge(old, new, {"host:tests/emu/ops/test_emu_float.py"})
    assert got == {"instructions": {"add.s32": [keep], "exit": ["host:tests/emu/ops/test_emu_float.py"]},
                   "special": {"%tid.x": [keep]}}
