"""``python lab.py diff DUMP [OTHER] [--key NAME] [--limit N] [--decode all|fp32|ue4m3x4|u32]``.

One dump: compares its ``got`` with its ``expected`` (values labelled got / expected). Two dumps: compares array
NAME of DUMP with NAME of OTHER (default: every array both hold; values labelled by the dump file names); ``--key``
must name an array of both. Shows a heat map of mismatches on the dump's real axes (ptxlab.lab.dump_axes: TMEM
images lanes x columns, chunk by chunk; SMEM stage images (tile, k-block) x stage byte) and the first differing
entries at the coordinates the stage's FAIL row uses, with decoded values (hex, fp32, UE4M3 bytes).
Exit code 0 = identical, 1 = differences, 2 = usage error (bad file, unknown --key).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ptxlab.errors import UsageError
from ptxlab.lab.dump_axes import axes_for
from ptxlab.lab.dumps import decode_word, load_dump

__all__ = ["main", "heatmap"]

SHADES = [(0.0, " ", ""), (0.25, "░", "yellow"), (0.5, "▒", "dark_orange"), (0.75, "▓", "red"), (1.01, "█", "bold red")]


def heatmap(diff: np.ndarray, max_rows: int = 32, max_cols: int = 64, row_label: str = "lanes",
            col_label: str = "columns", note: str = "") -> Text:
    """Rich Text heat map of a 2-D mismatch mask (bool) or mismatch-fraction grid (rows x cols), binned to at most
    max_rows x max_cols cells; each cell is shaded by the fraction of differing entries it covers."""
    diff = np.asarray(diff, dtype=np.float64)
    r, c = diff.shape
    rb, cb = -(-r // max_rows) if r else 1, -(-c // max_cols) if c else 1
    nr, nc = -(-r // rb), -(-c // cb)
    t = Text()
    t.append(f"mismatch heat map: rows = {row_label} ({rb} per cell), cols = {col_label} ({cb} per cell); "
             f"{note + '; ' if note else ''}' ' none, ░ <25%, ▒ <50%, ▓ <75%, █ >=75%\n")
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


def _pairs(a_arrays: dict, b_arrays: Optional[dict], key: Optional[str],
           names: Tuple[str, str]) -> List[Tuple[str, np.ndarray, np.ndarray]]:
    if b_arrays is None:
        if key is not None:
            raise UsageError(f"--key {key}: --key picks the array to compare between TWO dumps; one dump compares its "
                             "'got' with its 'expected'")
        if "got" not in a_arrays or "expected" not in a_arrays:
            raise UsageError(f"a single dump needs arrays 'got' and 'expected' (it has {', '.join(sorted(a_arrays))}); "
                             "or pass two dumps")
        return [("got vs expected", a_arrays["got"], a_arrays["expected"])]
    common = sorted(set(a_arrays) & set(b_arrays))
    if key is not None:
        if key not in common:
            raise UsageError(f"--key {key!r} is not an array of both dumps; arrays in both: {', '.join(common) or 'none'}"
                             f" ({names[0]}: {', '.join(sorted(a_arrays))}; {names[1]}: {', '.join(sorted(b_arrays))})")
        return [(key, a_arrays[key], b_arrays[key])]
    if not common:
        raise UsageError(f"the dumps have no array in common ({names[0]}: {', '.join(sorted(a_arrays))}; "
                         f"{names[1]}: {', '.join(sorted(b_arrays))})")
    return [(k, a_arrays[k], b_arrays[k]) for k in common]


def _labels(a: str, b: Optional[str]) -> Tuple[str, str]:
    """Value labels: 'got'/'expected' for one dump; the two dump names (distinct) for two."""
    if b is None:
        return "got", "expected"
    pa, pb = Path(a).resolve().parts, Path(b).resolve().parts
    for n in range(1, max(len(pa), len(pb)) + 1):       # the shortest path tails that tell the two apart
        ta, tb = "/".join(pa[-n:]), "/".join(pb[-n:])
        if ta != tb:
            return ta, tb
    return "first", "second"


def _word(v: Any, decode: str, dtype: np.dtype) -> str:
    if dtype.itemsize == 1 and dtype.kind == "u":          # SMEM image bytes, as stage A's FAIL row shows them
        return f"0x{int(v):02x}"
    if dtype.itemsize == 4 and dtype.kind in "uif":
        return decode_word(int(np.asarray(v, dtype=dtype).view(np.uint32)), decode)
    return repr(np.asarray(v).item())


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="lab.py diff", description=__doc__.split("\n\n")[0])
    p.add_argument("a", metavar="DUMP", help="a stage dump (.npz written under --dump DIR)")
    p.add_argument("b", nargs="?", metavar="OTHER", help="a second dump to compare with (default: DUMP's got vs expected)")
    p.add_argument("--key", help="two dumps: compare only this array (must be in both)")
    p.add_argument("--limit", type=int, default=10, help="differing entries to list (default 10)")
    p.add_argument("--decode", choices=("all", "fp32", "ue4m3x4", "u32", "auto"), default="auto",
                   help="how to show words (auto: the dump's 'decode' metadata, else all)")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.limit < 0:
        raise UsageError(f"--limit {args.limit}: must be >= 0")
    console = Console(width=None if sys.stdout.isatty() else 140, highlight=False)
    a_arr, a_meta = load_dump(args.a)
    b_arr, b_meta = load_dump(args.b) if args.b else (None, {})
    la, lb = _labels(args.a, args.b)
    hint = a_meta.get("decode") or ("fp32" if "fp32" in str(a_arr.get("layout", "")) else "all")
    decode = hint if args.decode == "auto" else args.decode
    if decode not in ("all", "fp32", "ue4m3x4", "u32"):
        decode = "all"
    for label, meta in (((la if args.b else "dump"), a_meta), (lb, b_meta)):
        if meta:
            console.print(f"{label}: stage {meta.get('stage')} {meta.get('name', '')} backend {meta.get('backend')} "
                          f"arch {meta.get('arch')} source {meta.get('source_hash')} shape {meta.get('shape')}",
                          markup=False)
    if a_meta.get("source_hash") and b_meta.get("source_hash") and a_meta["source_hash"] != b_meta["source_hash"]:
        console.print("note: the dumps come from different sources (source hashes differ)", markup=False)
    any_diff = False
    for name, x, y in _pairs(a_arr, b_arr, args.key, (la, lb)):
        if x.shape != y.shape:
            console.print(f"[red]{escape(name)}: shapes differ: {la} {x.shape}, {lb} {y.shape}[/]")
            any_diff = True
            continue
        dm = x != y
        if x.dtype.kind == "f" and y.dtype.kind == "f":
            dm &= ~(np.isnan(x) & np.isnan(y))
        n = int(dm.sum())
        got = a_arr.get("got")
        axes = axes_for(a_arr, a_meta, x.shape, image=name in ("got vs expected", "got", "expected")
                        or (got is not None and x.shape == got.shape))
        if n == 0:
            console.print(f"[green]{escape(name)}: identical ({x.size} entries, shape {x.shape})[/]")
            continue
        any_diff = True
        console.print(f"[red]{escape(name)}: {n} of {dm.size} entries differ[/] "
                      f"(shape {x.shape}, axes {', '.join(axes.names)})", highlight=False)
        grid, rows, cols, note = axes.grid(dm)
        console.print(heatmap(grid, row_label=rows, col_label=cols, note=note))
        for idx in np.argwhere(dm)[: args.limit]:
            i = tuple(int(v) for v in idx)
            console.print(f"  {axes.describe(i)}: {la} {_word(x[i], decode, x.dtype)} | "
                          f"{lb} {_word(y[i], decode, y.dtype)}", markup=False, soft_wrap=True)
    return 1 if any_diff else 0
