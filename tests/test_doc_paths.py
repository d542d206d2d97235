"""README.md and ptx_docs/*.md point only at files a clone has: every repository path they mention (a token starting
with a top-level directory of the repo, e.g. `ptxlab/emu/engine/machine.py`, `tests/test_x.py::test_y`, `stages/A_tma/`) and
every relative markdown link exists; nothing points at the team's shared reference by path."""
from __future__ import annotations

import re

from repo_root import REPO as ROOT

DOCS = sorted((ROOT / "ptx_docs").glob("*.md")) + [ROOT / "README.md"]
TOP = ("ptxlab", "stages", "tests", "benchmarks", "ptx_docs", ".ci")
PATH = re.compile(r"(?<![\w/.$~-])((?:" + "|".join(re.escape(t) for t in TOP) + r")/[^\s`'\"()\[\],;|]*)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"[*<>{}]|\.\.\.|\bX\b|\bN\b")


def _clean(ref: str) -> str:
    ref = ref.split("::", 1)[0]
    ref = re.sub(r":\d+(-\d+)?$", "", ref)
    return ref.rstrip(".:")


def _refs(text: str) -> list[tuple[int, str]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        out += [(n, _clean(m.group(1))) for m in PATH.finditer(line)]
    return out


def test_extractor() -> None:
    text = ("see `ptxlab/emu/engine/machine.py:120`, tests/test_a.py::test_b, (stages/A_tma/driver.py). and "
            "`ptxlab/kernels/blocks/*.cuh`, stages/<dir>/driver.py, my_tests/x.py, ./tests/y.py")
    assert [r for _, r in _refs(text)] == ["ptxlab/emu/engine/machine.py", "tests/test_a.py", "stages/A_tma/driver.py",
                                           "ptxlab/kernels/blocks/*.cuh", "stages/<dir>/driver.py"]


def test_every_repo_path_in_the_docs_exists() -> None:
    bad, seen = [], 0
    for doc in DOCS:
        for n, ref in _refs(doc.read_text()):
            if PLACEHOLDER.search(ref):
                continue
            seen += 1
            if not (ROOT / ref).exists():
                bad.append(f"{doc.relative_to(ROOT)}:{n}: {ref}")
    assert seen > 50, seen                       # the scan does see the docs' paths
    assert not bad, "docs point at files a clone does not have:\n" + "\n".join(bad)


def test_every_relative_markdown_link_exists() -> None:
    bad = []
    for doc in DOCS:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            for m in LINK.finditer(line):
                target = m.group(1).split("#", 1)[0]
                if not target or re.match(r"^[a-z]+:", target):
                    continue
                if not (doc.parent / target).exists():
                    bad.append(f"{doc.relative_to(ROOT)}:{n}: {m.group(1)}")
    assert not bad, "\n".join(bad)


def test_no_path_to_the_shared_reference() -> None:
    bad = [f"{d.relative_to(ROOT)}:{n}" for d in DOCS for n, line in enumerate(d.read_text().splitlines(), 1)
           if "shared/reference" in line]
    assert not bad, "the shared reference is not in a clone; name it in words: " + ", ".join(bad)


def test_readme_stage_example_uses_no_real_stage_id() -> None:
    """The 'Writing a stage' example must not reuse a registered stage's id (under another title)."""
    from ptxlab.lab.registry import discover

    readme = (ROOT / "README.md").read_text()
    example = readme.split("### Writing a stage", 1)[1].split("```", 2)[1]
    ids = re.findall(r'Stage\("([A-Z]\d+[a-z]?)"', example)
    assert ids, example
    real = {s.id for s in discover(ROOT / "stages")}
    assert real and not set(ids) & real, (ids, sorted(real))
