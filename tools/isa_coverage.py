#!/usr/bin/env python3
"""Generate ptx_docs/isa_coverage.md: every legal instruction form of the PTX ISA for sm_90a and sm_100a (the data
tables of ptxlab/emu/core/ptx_isa/), every special register and WARP_SZ, and for each whether the emulator runs it
(a registered form of ptxlab/emu/ops accepts it) and which tests execute it, or refuses it.

    python tools/isa_coverage.py                       # rewrite ptx_docs/isa_coverage.md
    python tools/isa_coverage.py --check               # exit 1 if the file is not what the data give
    PTXLAB_EMU_ENGINE=interp PTXLAB_ISA_EVIDENCE=/tmp/ev python -m pytest -n 2   # record what each test executes
    python tools/isa_coverage.py --collect /tmp/ev     # ... fold it into tools/isa_evidence.json, then rewrite
    python tools/isa_coverage.py --collect /tmp/ev --merge   # a run of some test files / corpus entries only: replace
                                                             # their evidence, keep the other tests' evidence

Record on the interpreter: the native engine (the default) runs most instructions without the recorder (measured
2026-11-27: tests/emu/ops/test_emu_float.py::test_approx_and_testp records 8 instructions on it, 30 on the
interpreter).

A combination counts as *tested* when a test executes it verbatim, or when it is an instance of an implemented form
every one of whose modifier values (each value of each slot, and the absence of each optional slot) some test
executes ("slot coverage").  An implemented combination that is neither is an error: the tool exits 1 and names it
("No row may be 'runs, untested'": test it, or drop it from its family's form table so that it is refused).
"""
from __future__ import annotations

import argparse
import functools
import glob
import hashlib
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from ptxlab.emu.core import isa, ptx_isa  # noqa: E402
from ptxlab.emu.ops import load_families  # noqa: E402

EVIDENCE = REPO / "tools" / "isa_evidence.json"
OUT = REPO / "ptx_docs" / "isa_coverage.md"
SHOW = 4          # evidence labels shown per row


# ------------------------------------------------------------------------------------------------ evidence
def label_of(nodeid: str) -> str:
    """An evidence label for a pytest node id: the corpus entry (H100 comparison), CUTLASS oracle, or test file."""
    path, _, rest = nodeid.partition("::")
    if path.endswith("tests/emu/test_corpus.py") and "[" in rest:
        return "corpus:" + rest[rest.index("[") + 1:rest.rindex("]")]
    if "/cutlass" in path or path.startswith("tests/cutlass"):
        return "cutlass:" + path
    return "host:" + path


def collect(dirname: str) -> dict:
    """Fold the ev.*.tsv files of an evidence run into {"instructions": {name: [labels]}, "special": {...}}."""
    ins: dict = defaultdict(set)
    sreg: dict = defaultdict(set)
    for p in glob.glob(os.path.join(dirname, "ev.*.tsv")):
        for line in open(p):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or not parts[2]:
                continue
            name, regs, test = parts
            lab = label_of(test)
            ins[name].add(lab)
            for r in filter(None, regs.split(",")):
                sreg[r].add(lab)
    return {"instructions": {k: sorted(v) for k, v in sorted(ins.items())},
            "special": {k: sorted(v) for k, v in sorted(sreg.items())}}


@functools.lru_cache(maxsize=None)
def _corpus_entries() -> frozenset:
    sys.path.insert(0, str(REPO / "tests"))
    import corpus
    return frozenset(e.name for e in corpus.all_entries())


def label_exists(label: str) -> bool:
    """Whether an evidence label still names a test: a corpus entry, or a test file of the repository."""
    kind, _, what = label.partition(":")
    return what in _corpus_entries() if kind == "corpus" else (REPO / what).is_file()


def merge(old: dict, new: dict, rerun: set) -> dict:
    """Evidence of a partial run folded into the recorded evidence: the labels the partial run re-ran (``rerun``: a
    corpus entry, or a whole test file) are replaced by what they executed now; labels naming tests that no longer
    exist are dropped; other labels are kept.  Re-run whole files: a file's label stands for all its tests."""
    out = {}
    for key in ("instructions", "special"):
        acc: dict = defaultdict(set)
        for name, labs in old[key].items():
            acc[name].update(lab for lab in labs if lab not in rerun and label_exists(lab))
        for name, labs in new[key].items():
            acc[name].update(labs)
        out[key] = {k: sorted(v) for k, v in sorted(acc.items()) if v}
    return out


def rerun_labels(dirname: str) -> set:
    """The labels (tests) an evidence run recorded anything for."""
    out = set()
    for p in glob.glob(os.path.join(dirname, "ev.*.tsv")):
        for line in open(p):
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3 and parts[2]:
                out.add(label_of(parts[2]))
    return out


def load_evidence() -> dict:
    if not EVIDENCE.exists():
        return {"instructions": {}, "special": {}}
    return json.loads(EVIDENCE.read_text())


# ------------------------------------------------------------------------------------------------ classification
def _order(labels) -> list:
    rank = {"corpus": 0, "cutlass": 1, "host": 2}
    return sorted(set(labels), key=lambda x: (rank.get(x.split(":")[0], 3), x))


class Coverage:
    def __init__(self, evidence: dict):
        load_families()
        self.ev = evidence["instructions"]
        self.ev_sreg = evidence["special"]
        self._slot_seen: dict = {}
        self.untested: list = []

    def slot_coverage(self, form) -> tuple:
        """(covered?, labels, missing values) for a registered form from the executed instances."""
        key = id(form)
        if key not in self._slot_seen:
            seen: dict = defaultdict(set)
            labels: set = set()
            for name, labs in self.ev.items():
                op, *mods = name.split(".")
                if op != form.opcode:
                    continue
                hit = isa.match(op, tuple(mods))
                if hit is None or hit[0] is not form:
                    continue
                for k, v in form.match(tuple(mods)).items():
                    seen[k].add(v)
                labels.update(labs)
            missing = [f"{k}={v or '(absent)'}" for k, alts in form.values() for v in alts if v not in seen[k]]
            self._slot_seen[key] = (not missing and bool(labels), labels, missing)
        return self._slot_seen[key]

    def row(self, r) -> dict:
        """Classify every combination of a legal row."""
        out = {"total": 0, "impl": 0, "verbatim": 0, "refused": 0, "labels": set(), "examples": [],
               "forms": set(), "core": False, "withdrawn": set()}
        op = r.form.opcode
        if op.startswith("%") or op == "WARP_SZ":
            for mods in r.form.expand():
                name = ".".join((op,) + mods)
                out["total"] += 1
                labs = self.ev_sreg.get(name)
                if labs:
                    out["impl"] += 1
                    out["verbatim"] += 1
                    out["labels"].update(labs)
                else:
                    out["refused"] += 1
                    if len(out["examples"]) < 3:
                        out["examples"].append(name)
            return out
        for mods in r.form.expand():
            out["total"] += 1
            name = ".".join((op,) + mods)
            hit = isa.match(op, mods)
            if hit is None or r.operands:
                out["refused"] += 1
                why = isa.withdrawn_reason(op, mods)
                if why:
                    out["withdrawn"].add(why)
                if len(out["examples"]) < 3:
                    out["examples"].append(name)
                continue
            f, b, _ = hit
            out["impl"] += 1
            out["forms"].add(f.text)
            labs = self.ev.get(name)
            if labs:
                out["verbatim"] += 1
                out["labels"].update(labs)
                continue
            ok, labels, missing = self.slot_coverage(f)
            if not ok:
                self.untested.append((name, f.text, missing[:6]))
                continue
            out["labels"].update(labels)
        return out

    def sreg_supported(self, name: str) -> bool:
        return name in self.ev_sreg


# ------------------------------------------------------------------------------------------------ inputs hash
def inputs_digest() -> str:
    """sha256 of everything the table is computed from: the legal-form data, every registered form (text, section,
    implemented or refused), the evidence file and this generator.  The table records it; a test compares it with
    the current inputs cheaply (tests/tools/test_isa_coverage.py), ``--check`` regenerates the whole table."""
    load_families()
    h = hashlib.sha256()
    for p in sorted((REPO / "ptxlab" / "emu" / "core" / "ptx_isa").glob("*.txt")):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    for f, b in isa.registered():
        h.update(f"{f.text}|{f.section}|{b is not None}\n".encode())
    for f, why in isa.withdrawn():
        h.update(f"withdrawn {f.text}|{f.section}|{why}\n".encode())
    h.update(EVIDENCE.read_bytes() if EVIDENCE.exists() else b"")
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


DIGEST_LINE = "<!-- inputs sha256: {} -->"


def recorded_digest(text: str):
    for line in text.splitlines():
        if line.startswith("<!-- inputs sha256: "):
            return line.split()[3]
    return None


# ------------------------------------------------------------------------------------------------ rendering
HEADER = """# PTX ISA coverage of the emulator (sm_90a, sm_100a)

Generated by `python tools/isa_coverage.py` from the legal forms of the PTX ISA 9.1 (`ptxlab/emu/core/ptx_isa/`,
syntax blocks, Target ISA Notes and the text's restrictions, ptxas-checked), the form tables of the instruction families
(`ptxlab/emu/ops/*.py`, the `FORMS = register(...)` at the end of each module) and the record of which tests execute
which instruction (`tools/isa_evidence.json`, from `PTXLAB_ISA_EVIDENCE=<dir> python -m pytest` and `--collect <dir>`).
Do not edit by hand; `tests/tools/test_isa_coverage.py` fails when the inputs changed since it was written.

Each row is one syntax line of the ISA (a *form*; `{.x}` optional, `.name` one value of a set) and counts its
modifier / type *combinations*: **implemented** combinations run in the emulator and are tested (executed by a test
verbatim, or an instance of an implemented form every modifier value of which some test executes); **refused**
combinations fail with `not implemented: <instruction>` naming the PTX line when they execute, including legal
modifier values that no test executes (the family tables list only tested values). No combination is implemented and
untested: the generator refuses to write such a table. Evidence labels: `corpus:<entry>` a `tests/corpus` entry,
checked against its host reference on the emulator (`tests/emu/test_corpus.py`) and bit for bit against an H100 by
`tests/fidelity/run_corpus.py` (the entries `mma_sync_*`, `ldmatrix_stmatrix`, `wgmma`, `bulk_reduce`, `async_store`
and `tensormap_replace` await their first H100 run; sm_100a-only forms have host references only),
`cutlass:<test>` a CUTLASS example against its host reference, `host:<test>` a test comparing with a host (numpy /
Python) reference. Columns sm_90a / sm_100a: whether the form is legal PTX for that target (`yes`), or not (`-`).
What the ISA leaves open and the emulator assumes: `ptx_docs/isa_coverage_notes.md`.
"""


def _fmt_labels(labels) -> str:
    ls = _order(labels)
    if not ls:
        return ""
    s = ", ".join(f"`{x}`" for x in ls[:SHOW])
    return s + (f" +{len(ls) - SHOW}" if len(ls) > SHOW else "")


def render(cov: Coverage) -> str:
    rows = ptx_isa.legal_forms()
    lines = [HEADER, DIGEST_LINE.format(inputs_digest()), ""]
    totals = {t: [0, 0, 0] for t in ptx_isa.TARGETS}      # legal, implemented, refused
    body = []
    section_of = None
    for r in rows:
        c = cov.row(r)
        legal = [ptx_isa.legal_on(r, t) for t in ptx_isa.TARGETS]
        for t, ok in zip(ptx_isa.TARGETS, legal):
            if ok:
                totals[t][0] += c["total"]
                totals[t][1] += c["impl"]
                totals[t][2] += c["refused"]
        if r.section != section_of:
            section_of = r.section
        status = "implemented" if c["refused"] == 0 else ("refused" if c["impl"] == 0 else "partly")
        impl = f"{c['impl']}" + (f" ({c['verbatim']} verbatim)" if c["impl"] else "")
        refused = f"{c['refused']}" + (": " + ", ".join(f"`{e}`" for e in c["examples"]) +
                                        (" ..." if c["refused"] > len(c["examples"]) else "") if c["refused"] else "")
        if r.operands:
            refused += f" (operands: {r.operands})"
        if c["withdrawn"]:
            refused += " (withdrawn: " + "; ".join(sorted(c["withdrawn"])) + ")"
        body.append(f"| {r.section} | `{r.text}` | {'yes' if legal[0] else '-'} | {'yes' if legal[1] else '-'} "
                    f"| {c['total']} | {status} | {impl} | {refused} | {_fmt_labels(c['labels'])} |")
    lines.append("## Summary\n")
    lines.append("| target | legal combinations | implemented and tested | refused |")
    lines.append("|---|---|---|---|")
    for t in ptx_isa.TARGETS:
        n, i, f = totals[t]
        lines.append(f"| {t} | {n} | {i} | {f} |")
    lines.append("")
    lines.append("## Instructions, special registers and WARP_SZ, by PTX ISA section\n")
    lines.append("| § | form | sm_90a | sm_100a | combinations | status | implemented + tested | refused "
                 "(examples) | evidence |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    lines.extend(body)
    lines.append("")
    extra = _extra_forms(cov)
    if extra:
        lines.append("## Implemented forms outside the legal tables\n")
        lines.append("Registered forms with instances that no legal row lists (ptxas rejects them, so they never "
                     "reach the emulator): " + ", ".join(f"`{x}`" for x in extra) + ".\n")
    return "\n".join(lines)


def _extra_forms(cov: Coverage) -> list:
    legal_ops = defaultdict(list)
    for r in ptx_isa.instructions():
        legal_ops[r.form.opcode].append(r.form)
    out = []
    for f, b in isa.registered():
        if b is None or f.opcode == "ptxlab":
            continue
        sample = next(iter(f.expand()))
        if not any(lf.match(sample) is not None for lf in legal_ops.get(f.opcode, [])):
            out.append(f.text)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if ptx_docs/isa_coverage.md is out of date")
    ap.add_argument("--collect", metavar="DIR", help="fold an evidence run (PTXLAB_ISA_EVIDENCE=DIR) into "
                                                    "tools/isa_evidence.json first")
    ap.add_argument("--merge", action="store_true", help="with --collect: the run re-ran only some tests (whole files "
                    "or corpus entries); replace their evidence, keep the rest")
    a = ap.parse_args(argv)
    if a.collect:
        ev = collect(a.collect)
        if a.merge:
            ev = merge(load_evidence(), ev, rerun_labels(a.collect))
        EVIDENCE.write_text(json.dumps(ev, indent=0, sort_keys=True) + "\n")
        print(f"wrote {EVIDENCE.relative_to(REPO)}: {len(ev['instructions'])} instructions, "
              f"{len(ev['special'])} special registers")
    cov = Coverage(load_evidence())
    text = render(cov)
    if cov.untested:
        print(f"{len(cov.untested)} implemented combinations are untested (implement tests or refuse them):")
        for name, form, missing in cov.untested[:40]:
            print(f"  {name}  (form {form}; no test executes {', '.join(missing)})")
        return 1
    if a.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(REPO)} is out of date: run python tools/isa_coverage.py")
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
