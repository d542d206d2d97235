"""ptx_docs/README.md is the index of the notes: it links every document of ptx_docs/ (and each link exists)."""
from __future__ import annotations

import re

from repo_root import REPO


def test_index_lists_every_document():
    docs = REPO / "ptx_docs"
    text = (docs / "README.md").read_text()
    linked = set(re.findall(r"\]\(([\w./-]+\.md)\)", text))
    present = {p.relative_to(docs).as_posix() for p in docs.rglob("*.md")} - {"README.md"}
    assert present - linked == set(), f"documents missing from ptx_docs/README.md: {sorted(present - linked)}"
    assert linked - present == set(), f"ptx_docs/README.md links documents that do not exist: {sorted(linked - present)}"
