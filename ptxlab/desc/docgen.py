"""Print the field tables of every descriptor layout as Markdown (source of ptx_docs/descriptors.md tables).

    python -m ptxlab.desc.docgen
"""
from __future__ import annotations

from ptxlab.desc.idesc import IDESC_LAYOUTS
from ptxlab.desc.smem import SMEM_DESC
from ptxlab.desc.tmem import TMEM_ADDR

__all__ = ["tables_markdown"]


def tables_markdown() -> str:
    out = [f"### SMEM matrix descriptor (64-bit) — {SMEM_DESC.source}", "", SMEM_DESC.markdown(), ""]
    for kind, lay in IDESC_LAYOUTS.items():
        out += [f"### Instruction descriptor, kind::{kind} — {lay.source}", "", lay.markdown(), ""]
    out += [f"### TMEM address (32-bit) — {TMEM_ADDR.source}", "", TMEM_ADDR.markdown(), ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(tables_markdown())
