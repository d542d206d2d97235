"""Progress of long loops (stage E2 over its GEMV shapes, the emulator benchmarks): which item, how many done, elapsed.

``for item in track(items, "E2", label=...):`` yields the items unchanged. Progress goes to **stderr only**, so
stdout (what tests and scripts parse) is never touched. ``PTXLAB_PROGRESS`` picks the form:

* unset / ``auto``: a rich progress bar (current item, done/total, elapsed) when stderr is a terminal; nothing when
  it is not (pipes, CI logs, pytest);
* ``1`` / ``lines``: one plain line per item on stderr, ``E2: [3/10] m=7168 k=16384 l=1 (elapsed 12.3 s)``, then
  ``E2: 10/10 done in 40.2 s`` (for logs);
* ``0`` / ``off``: nothing.

With a bar on a terminal, lines printed to stdout during the loop appear above the bar (rich redirects them only
when stdout is that terminal too; stdout redirected to a file stays exactly as without a bar).
"""
from __future__ import annotations

import sys
import time
from typing import Callable, Iterable, Iterator, TypeVar

__all__ = ["track", "mode", "ENV_PROGRESS"]

ENV_PROGRESS = "PTXLAB_PROGRESS"
T = TypeVar("T")


def mode() -> str:
    """'live' | 'lines' | 'off' from $PTXLAB_PROGRESS and whether stderr is a terminal."""
    from ptxlab import settings

    v = settings.get(ENV_PROGRESS) or "auto"      # an unknown value is a UsageError naming the accepted ones
    if v in ("0", "off", "no", "false"):
        return "off"
    if v in ("1", "lines", "yes", "true"):
        return "lines"
    if v == "live":
        return "live"
    return "live" if sys.stderr.isatty() else "off"


def track(items: Iterable[T], what: str, label: Callable[[T], str] = str) -> Iterator[T]:
    """Yield `items`, showing progress on stderr (see the module doc); label(item) names the current item."""
    seq = list(items)
    m = mode()
    if m == "off" or not seq:
        yield from seq
        return
    n, t0 = len(seq), time.perf_counter()
    if m == "lines":
        for i, item in enumerate(seq):
            print(f"{what}: [{i + 1}/{n}] {label(item)} (elapsed {time.perf_counter() - t0:.1f} s)", file=sys.stderr,
                  flush=True)
            yield item
        print(f"{what}: {n}/{n} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("elapsed"),
                   TimeElapsedColumn(), console=Console(stderr=True), transient=True,
                   redirect_stdout=sys.stdout.isatty(), redirect_stderr=False)
    with bar:
        task = bar.add_task(what, total=n)
        for item in seq:
            bar.update(task, description=f"{what}: {label(item)}")
            yield item
            bar.advance(task)
