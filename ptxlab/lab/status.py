"""``python lab.py status [--json]``: which stages passed where (backend), on which source hash, and graduation.

A result is *current* when its recorded source hash equals the stage's hash now (ptxlab.lab.state); a stale PASS
means the kernel, driver or an included block changed since it passed.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Optional, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ptxlab.errors import PtxlabError
from ptxlab.lab.state import emu_only, load_state, stage_source_hash, state_path

__all__ = ["main", "collect"]


def collect() -> List[Dict[str, Any]]:
    """One row per stage (registered or recorded): id, title, current hash, results per backend, graduation."""
    from pathlib import Path

    from ptxlab.lab.registry import discover, stage_sort_key

    data = load_state()
    rows: Dict[str, Dict[str, Any]] = {}
    try:
        stages = discover()
    except PtxlabError as exc:  # a broken driver elsewhere must not hide the state
        print(f"warning: stage discovery failed: {exc}", file=sys.stderr)
        stages = []
    for s in stages:
        h = stage_source_hash(Path(s.source).parent) if s.source else None
        rows[s.id] = {"stage": s.id, "title": s.title, "current_hash": h}
    for sid in list(data["results"]) + list(data["graduated"]):
        rows.setdefault(sid, {"stage": sid, "title": "(not registered now)", "current_hash": None})
    for sid, r in rows.items():
        h = r["current_hash"]
        r["results"] = {b: dict(e, current=(h is not None and e.get("source_hash") == h))
                        for b, e in sorted(data["results"].get(sid, {}).items())}
        g = data["graduated"].get(sid)
        r["graduated"] = None if g is None else dict(g, current=(h is not None and g.get("source_hash") == h))

    def key(sid: str):
        try:
            return (0, stage_sort_key(sid))
        except PtxlabError:
            return (1, (sid, 0, ""))

    return [rows[k] for k in sorted(rows, key=key)]


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="lab.py status", description="stage results per backend and source hash")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--stages-dir", metavar="DIR", help="stage drivers dir (default $PTXLAB_STAGES_DIR or <repo>/stages)")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    from ptxlab.lab.registry import set_stages_dir

    set_stages_dir(args.stages_dir)
    rows = collect()
    if args.json:
        print(json.dumps(rows, indent=1, sort_keys=True))
        return 0
    console = Console(width=None if sys.stdout.isatty() else 160, highlight=False)
    backends = sorted({b for r in rows for b in r["results"]}) or ["emu"]
    t = Table(title=f"ptxlab lab status ({state_path()})")
    t.add_column("stage")
    t.add_column("title")
    t.add_column("source now")
    for b in backends:
        t.add_column(b)
    t.add_column("graduated")
    for r in rows:
        cells = []
        for b in backends:
            e = r["results"].get(b)
            if e is None:
                cells.append("-")
                continue
            verdict = "[green]PASS[/]" if e["passed"] else "[red]FAIL[/]"
            cur = "" if e["current"] else " [yellow](stale)[/]"
            cells.append(f"{verdict} @{escape(str(e['source_hash'])[:8])}{cur}\n{escape(e.get('time', ''))}")
        g = r["graduated"]
        gcell = "-" if g is None else (f"[green]yes[/] @{g['source_hash'][:8]}" if g["current"]
                                        else f"[yellow]yes, stale[/] @{g['source_hash'][:8]}")
        if g is not None and emu_only(g.get("backends", [])):
            gcell += "\n[yellow]emu only[/]"
        t.add_row(r["stage"], escape(r["title"]), (r["current_hash"] or "?")[:8], *cells, gcell)
    console.print(t)
    return 0
