"""``python lab.py diff A.npz [B.npz] [--key NAME] [--limit N] [--decode all|fp32|ue4m3x4|u32]``.

Two dumps: compares array NAME of A with NAME of B (default: every array both hold). One dump: compares its
``got`` with its ``expected``. Shows a lane x column heat map of mismatches (rich; each cell = a bin of lanes x
columns, shaded by the fraction of differing words) and the first differing entries with decoded values (hex,
fp32, UE4M3 bytes). Exit code 0 = identical, 1 = differences, 2 = usage error.
"""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional, Sequence, Tuple

import numpy as np
from rich.console import Console
from rich.text import Text

from ptxlab.errors import PtxlabError
from ptxlab.lab.dumps import decode_word, load_dump

__all__ = ["main", "heatmap", "as_grid"]

SHADES = [(0.0, " ", ""), (0.25, "░", "yellow"), (0.5, "▒", "dark_orange"), (0.75, "▓", "red"), (1.01, "█", "bold red")]


def as_grid(a: np.ndarray) -> np.ndarray:
    """2-D view for the heat map: 2-D arrays as they are (lanes x columns); others flattened into rows of 64."""
    a = np.asarray(a)
    if a.ndim == 2:
        return a
    flat = a.reshape(-1)
    cols = 64 if flat.size > 64 else max(flat.size, 1)
    pad = (-flat.size) % cols
    return np.concatenate([flat, np.zeros(pad, flat.dtype)]).reshape(-1, cols) if flat.size else flat.reshape(0, 1)


def heatmap(diff: np.ndarray, max_rows: int = 32, max_cols: int = 64) -> Text:
    """Rich Text heat map of a boolean (rows x cols) mismatch mask, binned to at most max_rows x max_cols cells."""
    r, c = diff.shape
    rb, cb = -(-r // max_rows) if r else 1, -(-c // max_cols) if c else 1
    nr, nc = -(-r // rb), -(-c // cb)
    t = Text()
    t.append(f"mismatch heat map: rows = lanes ({rb} per cell), cols = columns ({cb} per cell); "
             f"' ' none, ░ <25%, ▒ <50%, ▓ <75%, █ >=75%\n")
    t.append("        col 0" + " " * max(nc - 5, 1) + f"{c - 1}\n")
    for i in range(nr):
        t.append(f"{i * rb:>5}-{min((i + 1) * rb, r) - 1:<3}|" if rb > 1 else f"{i:>9}|")
        for j in range(nc):
            cell = diff[i * rb:(i + 1) * rb, j * cb:(j + 1) * cb]
            frac = float(cell.mean()) if cell.size else 0.0
            for lim, ch, style in SHADES:
                if frac == 0.0 or frac < lim:
                    t.append(ch if frac else " ", style=style if frac else "")
                    break
        t.append("|\n")
    return t


def _pairs(a_arrays: dict, b_arrays: Optional[dict], key: Optional[str]) -> List[Tuple[str, np.ndarray, np.ndarray]]:
    if b_arrays is None:
        if "got" not in a_arrays or "expected" not in a_arrays:
            raise PtxlabError(f"a single dump needs arrays 'got' and 'expected' (it has {sorted(a_arrays)}); "
                              "or pass two dumps")
        return [("got vs expected", a_arrays["got"], a_arrays["expected"])]
    keys = [key] if key else sorted(set(a_arrays) & set(b_arrays))
    missing = [k for k in keys if k not in a_arrays or k not in b_arrays]
    if missing or not keys:
        raise PtxlabError(f"array(s) {missing or '(none in common)'} not in both dumps "
                          f"(A: {sorted(a_arrays)}, B: {sorted(b_arrays)})")
    return [(k, a_arrays[k], b_arrays[k]) for k in keys]


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="lab.py diff", description=__doc__.split("\n\n")[0])
    p.add_argument("a")
    p.add_argument("b", nargs="?")
    p.add_argument("--key", help="compare only this array")
    p.add_argument("--limit", type=int, default=10, help="differing entries to list (default 10)")
    p.add_argument("--decode", choices=("all", "fp32", "ue4m3x4", "u32", "auto"), default="auto",
                   help="how to show words (auto: the dump's 'decode' metadata, else all)")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    console = Console(width=None if sys.stdout.isatty() else 140, highlight=False)
    a_arr, a_meta = load_dump(args.a)
    b_arr, b_meta = load_dump(args.b) if args.b else (None, {})
    decode = a_meta.get("decode", "all") if args.decode == "auto" else args.decode
    if decode not in ("all", "fp32", "ue4m3x4", "u32"):
        decode = "all"
    for label, meta in (("A", a_meta), ("B", b_meta)):
        if meta:
            console.print(f"{label}: stage {meta.get('stage')} {meta.get('name', '')} backend {meta.get('backend')} "
                          f"arch {meta.get('arch')} source {meta.get('source_hash')} shape {meta.get('shape')}",
                          markup=False)
    if a_meta.get("source_hash") and b_meta.get("source_hash") and a_meta["source_hash"] != b_meta["source_hash"]:
        console.print("note: the dumps come from different sources (source hashes differ)", markup=False)
    any_diff = False
    for name, x, y in _pairs(a_arr, b_arr, args.key):
        if x.shape != y.shape:
            console.print(f"[red]{name}: shapes differ {x.shape} vs {y.shape}[/]")
            any_diff = True
            continue
        gx, gy = as_grid(x), as_grid(y)
        dm = gx != gy
        if x.dtype.kind == "f":
            dm &= ~(np.isnan(gx) & np.isnan(gy))
        n = int(dm.sum())
        if n == 0:
            console.print(f"[green]{name}: identical ({x.size} entries, shape {x.shape})[/]")
            continue
        any_diff = True
        console.print(f"[red]{name}: {n} of {dm.size} entries differ[/] (shape {x.shape})")
        console.print(heatmap(dm))
        for r, c in np.argwhere(dm)[: args.limit]:
            va, vb = gx[r, c], gy[r, c]
            if gx.dtype.itemsize == 4 and gx.dtype.kind in "uif":
                wa, wb = (int(np.asarray(v).view(np.uint32)) for v in (va, vb))
                console.print(f"  lane {r} col {c}: A {decode_word(wa, decode)} | B {decode_word(wb, decode)}",
                              markup=False)
            else:
                console.print(f"  [{r}, {c}]: A {va.item()!r} | B {vb.item()!r}", markup=False)
    return 1 if any_diff else 0
