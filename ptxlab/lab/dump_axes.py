"""What the axes of a stage dump mean, for ``lab.py diff``: how to fold an N-D mismatch mask into a 2-D heat map and
how to name one entry with the coordinates the stage's own FAIL row prints.

Three kinds of dumps exist (ptxlab.lab.dumps, stages/*/driver.py):

* TMEM images: axes end in ``lane, column`` (B2 / C1 ``["lane", "column"]``; D2 ``(l, m_tile, chunk, lane,
  column)``). Heat map: rows = lanes, columns = TMEM columns, chunk by chunk (chunk-major), every other axis folded
  in; an entry reads like the stage's FAIL row: ``lane 5 col 2`` (B2 / C1), ``chunk 3, lane 5, column 2 [l=0,
  m-tile 1, row m=133]`` (D2).
* SMEM stage images (A1 / A2): ``(tile, k-block, stage bytes)`` plus the ``tiles`` (m_tile, n_tile, l) and
  ``region_*`` arrays. Heat map: rows = (tile, k-block) pairs, columns = byte offset in the stage. An entry reads
  like stage A's FAIL row: ``tile (m_tile=1, n_tile=0, l=1) k-block 2 (stage 2), A row 3 byte 5 (stage offset 389)``.
* anything else: named axes from the dump's ``axes`` metadata or ``layout`` text, else ``dim0, dim1, ...``; rows =
  every axis but the last, columns = the last (1-D: rows of 64).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

__all__ = ["DumpAxes", "axes_for"]


def _names_from(meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray], ndim: int) -> Optional[List[str]]:
    axes = meta.get("axes")
    if isinstance(axes, (list, tuple)) and len(axes) == ndim:
        return [str(a) for a in axes]
    layout = meta.get("layout")
    if layout is None and "layout" in arrays and np.asarray(arrays["layout"]).dtype.kind == "U":
        layout = str(arrays["layout"])
    if isinstance(layout, str):
        m = re.search(r"\(([^()]*)\)", layout)
        if m:
            names = [n.strip() for n in m.group(1).split(",") if n.strip()]
            if len(names) == ndim:
                return names
    return None


def _canon(name: str) -> str:
    n = name.lower().replace("-", "_").replace(" ", "_")
    return {"col": "column", "columns": "column", "lanes": "lane", "k_block": "k_block", "kb": "k_block"}.get(n, n)


@dataclass
class DumpAxes:
    """Axis names of one dumped array and how to show its mismatches."""

    names: List[str]
    kind: str                                   # "tmem" | "smem_stage" | "generic"
    ctx: Dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ heat map
    def grid(self, mask: np.ndarray) -> Tuple[np.ndarray, str, str, str]:
        """(2-D array of mismatch fractions, row label, column label, note) for the heat map."""
        m = np.asarray(mask, dtype=np.float64)
        canon = [_canon(n) for n in self.names]
        if self.kind == "tmem":
            lane, col = canon.index("lane"), canon.index("column")
            chunk = canon.index("chunk") if "chunk" in canon else None
            keep = [lane] + ([chunk] if chunk is not None else []) + [col]
            other = tuple(i for i in range(m.ndim) if i not in keep)
            folded = m.mean(axis=other) if other else m
            order = sorted(keep)                              # axes of `folded`, in original order
            folded = np.transpose(folded, [order.index(i) for i in keep])
            g = folded.reshape(folded.shape[0], -1)
            cols = "chunk x column (chunk-major)" if chunk is not None else "columns"
            note = f"each cell averaged over {', '.join(self.names[i] for i in other)}" if other else ""
            return g, "lanes", cols, note
        if self.kind == "smem_stage":
            return m.reshape(-1, m.shape[-1]), "(tile, k-block) pairs", "byte offset in the stage", ""
        if m.ndim == 2:
            return m, self.names[0], self.names[1], ""
        if m.ndim <= 1:
            flat = m.reshape(-1)
            cols = 64 if flat.size > 64 else max(flat.size, 1)
            pad = (-flat.size) % cols
            n = self.names[0] if self.names else "index"
            return np.concatenate([flat, np.zeros(pad)]).reshape(-1, cols), f"{n} // {cols}", f"{n} % {cols}", ""
        return m.reshape(-1, m.shape[-1]), "(" + ", ".join(self.names[:-1]) + ")", self.names[-1], ""

    # ------------------------------------------------------------------ one entry
    def describe(self, idx: Sequence[int]) -> str:
        """One entry's coordinates, worded as the stage's FAIL row words them."""
        idx = [int(i) for i in idx]
        canon = [_canon(n) for n in self.names]
        if self.kind == "tmem":
            pos = dict(zip(canon, idx))
            if "chunk" not in pos:               # B2 / C1 rows (mismatch_report): "lane L col C"
                head = f"lane {pos['lane']} col {pos['column']}"
            else:                                # D2 row: "chunk K, lane L, column C [l=.., m-tile .., row m=..]"
                head = f"chunk {pos['chunk']}, lane {pos['lane']}, column {pos['column']}"
            extra = [f"m-tile {v}" if c == "m_tile" else f"{n}={v}"
                     for n, c, v in zip(self.names, canon, idx) if c not in ("chunk", "lane", "column")]
            if "m_tile" in pos:
                extra.append(f"row m={pos['m_tile'] * 128 + pos['lane']}")
            return head + (f" [{', '.join(extra)}]" if extra else "")
        if self.kind == "smem_stage":
            t, kb, byte = idx
            tiles = self.ctx.get("tiles")
            where = f"tile {t}"
            if tiles is not None and t < len(tiles):
                mt, nt, l = (int(v) for v in tiles[t][:3])
                where = f"tile (m_tile={mt}, n_tile={nt}, l={l})"
            stages = self.ctx.get("pipeline_stages")
            where += f" k-block {kb}" + (f" (stage {kb % int(stages)})" if stages else "")
            for name, off, size in self.ctx.get("regions", []):
                if off <= byte < off + size:
                    row, col = divmod(byte - off, 128)
                    return f"{where}, {name} row {row} byte {col} (stage offset {byte})"
            return f"{where}, stage offset {byte}"
        return ", ".join(f"{n} {v}" for n, v in zip(self.names, idx)) if self.names else "(scalar)"


def axes_for(arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any], shape: Tuple[int, ...],
             image: bool = True) -> DumpAxes:
    """The DumpAxes of an array of `shape` in a dump (its other arrays and metadata say what the axes are). The
    metadata describes the dump's image arrays (got / expected); pass image=False for any other array."""
    ndim = len(shape)
    if not image:
        return DumpAxes([f"dim{i}" for i in range(ndim)], "generic")
    names = _names_from(meta, arrays, ndim)
    canon = [_canon(n) for n in names] if names else []
    if names and "lane" in canon and "column" in canon:
        return DumpAxes(names, "tmem")
    regions = ("region_names", "region_offsets", "region_sizes")
    if ndim == 3 and "tiles" in arrays and all(r in arrays for r in regions):
        regs = [(str(n), int(o), int(s)) for n, o, s in zip(*(np.asarray(arrays[r]).tolist() for r in regions))]
        ctx = {"tiles": np.asarray(arrays["tiles"]), "regions": regs, "pipeline_stages": meta.get("pipeline_stages")}
        return DumpAxes(names or ["tile", "k-block", "stage byte"], "smem_stage", ctx)
    return DumpAxes(names or [f"dim{i}" for i in range(ndim)], "generic")
