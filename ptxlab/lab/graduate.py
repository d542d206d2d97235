"""``python lab.py graduate ID [ID ...]`` / ``python lab.py graduate --list``.

Graduating records that a stage passed on its CURRENT source (kernel files, driver and the ``blocks/*.cuh`` they
include; see ptxlab.lab.state) so the production build can report which building blocks are verified
(``ptxlab.lab.state.graduated(id)`` / ``graduated_blocks()``). A stage that never passed, or whose sources changed
since it passed, is refused (exit code 1); an unknown stage id is a usage error (exit code 2).
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from ptxlab.errors import PtxlabError
from ptxlab.lab.state import EMU_ONLY_NOTE, emu_only, graduate, graduated_blocks, load_state

__all__ = ["main"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="lab.py graduate", description="record stages that passed on their current source")
    p.add_argument("stages", nargs="*", metavar="ID")
    p.add_argument("--list", action="store_true", help="list graduated stages and the blocks they cover")
    p.add_argument("--stages-dir", metavar="DIR", help="stage drivers dir (default $PTXLAB_STAGES_DIR or <repo>/stages)")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    from ptxlab.lab.registry import discover, select, set_stages_dir

    set_stages_dir(args.stages_dir)
    if args.stages:          # unknown ids are a usage error (exit 2), as for `lab.py --stage`, before anything changes
        select(discover(), args.stages)
    if args.list or not args.stages:
        grads = load_state()["graduated"]
        if not grads:
            print("no stage graduated yet")
        for sid, e in sorted(grads.items()):
            only = " [emu only: never run on sm_100a hardware]" if emu_only(e["backends"]) else ""
            print(f"{sid}: source {e['source_hash']} (passed on {', '.join(e['backends'])}, {e['time']}){only}; "
                  f"blocks: {', '.join(e.get('blocks', [])) or '-'}")
        blocks = graduated_blocks()
        if blocks:
            print("blocks verified by current graduated stages: "
                  + "; ".join(f"{b} ({', '.join(s)})" for b, s in sorted(blocks.items())))
        return 0
    rc = 0
    for sid in args.stages:
        try:
            e = graduate(sid)
            print(f"graduated {sid.upper()}: source {e['source_hash']}, passed on {', '.join(e['backends'])}; "
                  f"blocks {', '.join(e['blocks']) or '-'}")
            if e.get("emu_only"):
                print(f"  note: {EMU_ONLY_NOTE}")
        except PtxlabError as exc:
            print(f"refused: {exc}", file=sys.stderr)
            rc = 1
    return rc
