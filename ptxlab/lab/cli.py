"""The lab CLI: ``python lab.py [run] [--stage ID] [--backend emu|cuda|auto] [--dump DIR] [--debug FLAGS]``,
``python lab.py list`` and forwarding subcommands (``desc ...``).

Subcommands live in one table, ``SUBCOMMANDS``: add an entry (a handler or a lazy ``"module:function"``
taking the remaining argv and returning an exit code) to plug in a new one.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Union

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ptxlab import debug
from ptxlab.errors import DeviceUnavailable, PtxlabError, UsageError
from ptxlab.lab.registry import (Stage, StageContext, StageResult, default_stages_dir, discover, select,
                                 set_stages_dir)

__all__ = ["main", "SUBCOMMANDS", "Subcommand"]

Handler = Callable[[List[str]], int]


@dataclass(frozen=True)
class Subcommand:
    """A CLI subcommand: a handler, or a lazy ``"package.module:function"`` reference."""

    name: str
    help: str
    target: Union[Handler, str]

    def resolve(self) -> Handler:
        if callable(self.target):
            return self.target
        mod_name, _, func = self.target.partition(":")
        try:
            mod = importlib.import_module(mod_name)
        except ModuleNotFoundError as exc:
            if exc.name and (mod_name == exc.name or mod_name.startswith(exc.name + ".")):
                raise PtxlabError(
                    f"`lab.py {self.name}` needs {mod_name}, which is not installed/written yet "
                    f"({exc}); run the other subcommands, or add {mod_name.replace('.', '/')}.py"
                ) from exc
            raise
        fn = getattr(mod, func or "main", None)
        if not callable(fn):
            raise PtxlabError(f"`lab.py {self.name}`: {mod_name} has no function {func or 'main'}(argv); add it")
        return fn


def _console() -> Console:
    return Console(width=None if sys.stdout.isatty() else 140, highlight=False)


def _parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="ptxlab bring-up stages")
    p.add_argument("--stage", action="append", default=[], metavar="ID", help="run only these stages (repeat or comma list)")
    p.add_argument("--backend", choices=("emu", "cuda", "auto"), default="auto", help="device backend (default auto)")
    p.add_argument("--dump", metavar="DIR", help="dump directory for PTX/SASS/stage outputs (sets PTXLAB_DUMP_DIR)")
    p.add_argument("--debug", metavar="FLAGS", help="comma list of " + ",".join(sorted(debug.KNOWN_FLAGS)) + " or all")
    p.add_argument("--stages-dir", metavar="DIR", help="stage drivers dir (default $PTXLAB_STAGES_DIR or <repo>/stages)")
    p.add_argument("--seed", metavar="N", help="replay a stage's data: the seed its FAIL rows print (sets PTXLAB_SEED; "
                                               "default: fresh data every run)")
    return p


def set_seed(value: Optional[str]) -> None:
    """``--seed N``: checked like PTXLAB_SEED (ptxlab.settings) and exported so every stage draws this data."""
    if value is None:
        return
    from ptxlab import settings

    if not value.strip():
        raise UsageError("--seed: give a seed (an integer 0 .. 2**63-1, as a stage's FAIL rows print it)")
    settings.get("PTXLAB_SEED", env={"PTXLAB_SEED": value})       # UsageError for a bad value
    os.environ["PTXLAB_SEED"] = value.strip()


def _setup(args: argparse.Namespace) -> debug.DebugFlags:
    set_stages_dir(args.stages_dir)
    set_seed(getattr(args, "seed", None))
    if args.debug is not None or args.dump is not None:
        flags_text = args.debug if args.debug is not None else os.environ.get(debug.ENV_DEBUG, "")
        return debug.set_flags(flags_text, dump=args.dump)
    return debug.current()


def check_dump_dir(path: Path) -> None:
    """The dump dir must be (or become) a writable directory; else a usage error (before any stage runs, so a bad
    --dump never turns a passing stage into a FAIL)."""
    where = f"dump dir {path} (--dump / ${debug.ENV_DUMP_DIR})"
    if path.exists() and not path.is_dir():
        raise UsageError(f"{where} is a file, not a directory; pass a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise UsageError(f"{where} is not writable (creating a file there failed: {exc.strerror or exc}); "
                         "pass a writable directory") from exc


def _open_device(ctx: StageContext, backend: str) -> None:
    """Open the backend before any stage runs: a missing driver is a setup error (exit 2), not a stage FAIL."""
    try:
        ctx.device
    except DeviceUnavailable as exc:
        raise UsageError(f"--backend {backend}: {exc}") from exc


def _no_stages(console: Console) -> int:
    console.print(f"no stages registered (no {default_stages_dir()}/*/driver.py defines STAGES); nothing to run", markup=False)
    return 0


def cmd_list(argv: List[str]) -> int:
    """``lab.py list``: the registered stages in run order."""
    args = _parser("lab.py list").parse_args(argv)
    _setup(args)
    console = _console()
    stages = discover()
    if not stages:
        return _no_stages(console)
    table = Table(title=f"ptxlab stages ({default_stages_dir()})")
    for col in ("stage", "title", "what it checks", "driver"):
        table.add_column(col)
    for s in stages:
        table.add_row(s.id, escape(s.title), escape(s.checks), escape(os.path.relpath(s.source)) if s.source else "")
    console.print(table)
    return 0


def _run_one(stage: Stage, ctx: StageContext) -> "tuple[StageResult, float]":
    t0 = time.perf_counter()
    try:
        result = stage.run(ctx)
        if not isinstance(result, StageResult):
            result = StageResult(False, message=f"stage {stage.id} returned {type(result).__name__}, not StageResult")
    except UsageError:    # a bad setting, not a kernel outcome: abort the run (exit 2), record nothing
        raise
    except (OSError, MemoryError) as exc:   # the machine, not the kernel (disk full, permissions): exit 2, record nothing
        what = f"{exc.strerror or exc}: {exc.filename}" if isinstance(exc, OSError) and exc.filename else \
            f"{type(exc).__name__}: {exc}"
        raise UsageError(f"stage {stage.id} stopped by an environment error ({what}); nothing was recorded for it; "
                         "free disk space / fix permissions and run it again") from exc
    except DeviceUnavailable as exc:  # the device cannot run this stage: refused (exit 3), not failed
        result = StageResult.refuse(str(exc))
    except PtxlabError as exc:
        result = StageResult(False, message=str(exc))
    except Exception:  # a bug in the stage: keep the traceback
        result = StageResult(False, message=traceback.format_exc())
    return result, time.perf_counter() - t0


def _print_result(stage: Stage, result: StageResult, console: Console) -> None:
    if result.rows:
        t = Table(title=escape(f"{stage.id} {stage.title}"), show_header=True)
        for col in ("check", "ok", "detail"):
            t.add_column(col)
        for r in result.rows:
            bad = "[yellow]n/a[/]" if result.refused else "[red]FAIL[/]"
            t.add_row(escape(r.name), "[green]ok[/]" if r.ok else bad, escape(str(r.detail)))
        console.print(t)
    if result.metrics:
        console.print("  metrics: " + ", ".join(f"{k}={v}" for k, v in result.metrics.items()), markup=False)
    for p in result.dump_paths:
        console.print(f"  dump: {p}", markup=False)
    if result.message:
        style = "red" if not result.passed else ""
        console.print(f"{stage.id}: {result.message}", style=style, markup=False, soft_wrap=True)


def cmd_run(argv: List[str]) -> int:
    """``lab.py [run]``: run the selected stages in order, stopping at the first failure."""
    args = _parser("lab.py").parse_args(argv)
    flags = _setup(args)
    console = _console()
    stages = select(discover(), args.stage)
    if not stages:
        return _no_stages(console)
    dump = Path(args.dump) if args.dump else flags.dump_dir
    check_dump_dir(dump)
    for stage in stages:          # bad stage settings are usage errors before anything runs or prints
        if stage.preflight is not None:
            stage.preflight()
    ctx = StageContext(backend=args.backend, dump_dir=dump, debug=flags)
    _open_device(ctx, args.backend)
    summary = Table(title="ptxlab bring-up")
    for col in ("stage", "what it checks", "backend", "result", "time"):
        summary.add_column(col)
    failed: Optional[Stage] = None
    for stage in stages:
        console.print(f"[bold]{stage.id}[/] {escape(stage.title)} ...")
        result, dt = _run_one(stage, ctx)
        if not result.refused:   # status records real outcomes only (not refusals, not setup/usage errors)
            from ptxlab.lab.state import record_stage_run  # lab state (status / graduate); never raises

            warn = record_stage_run(stage, ctx.backend_name, result.passed)
            if warn:
                console.print(f"warning: {warn}", style="yellow", markup=False)
        _print_result(stage, result, console)
        verdict = "[green]PASS[/]" if result.passed else ("[yellow]REFUSED[/]" if result.refused else "[red]FAIL[/]")
        summary.add_row(stage.id, escape(stage.checks), ctx.backend_name, verdict, f"{dt:.2f}s")
        if not result.passed:
            failed = stage
            break
    console.print(summary)
    if failed is not None and result.refused:
        skipped = len(stages) - stages.index(failed) - 1
        console.print(f"[yellow]stage {failed.id} cannot run on this device: {escape(result.refused)}[/]"
                      + (f"; {skipped} later stage(s) not run" if skipped else ""))
        return 3
    if failed is not None:
        skipped = len(stages) - stages.index(failed) - 1
        console.print(f"[red]stage {failed.id} failed[/]" + (f"; {skipped} later stage(s) not run" if skipped else ""))
        return 1
    console.print(f"[green]all {len(stages)} stage(s) passed[/]")
    return 0


SUBCOMMANDS: Dict[str, Subcommand] = {
    s.name: s
    for s in (
        Subcommand("run", "run stages (default)", cmd_run),
        Subcommand("list", "list registered stages", cmd_list),
        Subcommand("desc", "UMMA/TMA descriptor tools (ptxlab.desc.cli)", "ptxlab.desc.cli:main"),
        Subcommand("export", "write a single-file gpu-mode submission (ptxlab.production.export)",
                   "ptxlab.production.export:main"),
        Subcommand("time", "predict a kernel's time (b200/h100/h200) with a timeline (ptxlab.timing)",
                   "ptxlab.timing.cli:main"),
        Subcommand("diff", "compare stage dumps: lane x column heat map (ptxlab.lab.diff)", "ptxlab.lab.diff:main"),
        Subcommand("status", "which stages passed where, on which source hash", "ptxlab.lab.status:main"),
        Subcommand("graduate", "record a stage that passed on its current source", "ptxlab.lab.graduate:main"),
        Subcommand("cutlass", "run a CUTLASS example unmodified, bit-exact vs its reference (ptxlab.cutlass)",
                   "ptxlab.cutlass.cli:main"),
        Subcommand("exec", "run a Python script (cuda-python, CuTe DSL) with its CUDA driver calls on the emulator "
                   "(ptxlab.driver)", "ptxlab.lab.exec_cli:main"),
    )
}


def _usage() -> str:
    lines = ["usage: lab.py [SUBCOMMAND] [options]", "subcommands:"]
    lines += [f"  {s.name:<8} {s.help}" for s in SUBCOMMANDS.values()]
    lines.append("run `lab.py run --help` for the stage-run options")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point; returns the process exit code (0 ok, 1 stage failure, 2 usage/setup error, 3 refused, 4 internal
    error: a bug in ptxlab, one line; PTXLAB_DEBUG_TRACEBACK=1 shows its traceback)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("help", "-h", "--help"):
        print(_usage())
        return 0
    from ptxlab import settings

    try:        # every PTXLAB_* setting checked before anything runs (ptxlab/settings.py)
        for w in settings.check():
            print(f"warning: {w}", file=sys.stderr)
    except PtxlabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    name = args[0] if args and args[0] in SUBCOMMANDS else "run"
    rest = args[1:] if args and args[0] in SUBCOMMANDS else args
    if name == "run" and rest and not rest[0].startswith("-"):
        print(f"lab.py: unknown subcommand {rest[0]!r}\n{_usage()}", file=sys.stderr)
        return 2
    try:
        return int(SUBCOMMANDS[name].resolve()(rest) or 0)
    except SystemExit as exc:     # argparse: --help (0) or a usage error it already printed (2)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except PtxlabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path the user gave cannot be read/written: a setup error, one line
        print(f"error: {exc.strerror or exc}: {exc.filename}" if exc.filename else f"error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print("error: out of host memory; emulate a smaller problem (sizes are bounded per option: see --help)",
              file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug in ptxlab: one line, exit 4; the switch shows the traceback
        from ptxlab.errors import debug_traceback

        if debug_traceback():
            raise
        print(f"error: internal error in ptxlab ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
              "; this is a bug: rerun with PTXLAB_DEBUG_TRACEBACK=1 for the traceback and report it", file=sys.stderr)
        return 4
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
