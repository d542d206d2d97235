"""``python lab.py exec script.py [args ...]``: run a Python script with its CUDA driver calls served by the
emulator (ptxlab/driver, ptx_docs/cute_dsl.md).

The script runs as ``python script.py args`` would (``__main__``, ``sys.argv``, its directory first on
``sys.path``), after ``ptxlab.driver.install()`` has put the stand-in ``libcuda.so.1`` in place: cuda-python and the
CuTe DSL then reach the emulator. The exit status is the script's (an uncaught exception prints its traceback and
exits 1, as Python does); emulator faults are reported on stderr when they happen, naming the kernel's PTX line and
its source line (for CuTe DSL kernels the Python line: ``CUTE_DSL_LINEINFO=1`` is set). With torch installed,
``device="cuda"`` tensors become emulator tensors (``ptxlab/driver/torch_cuda.py``; ``--no-torch-cuda`` to opt out).
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from typing import List

from ptxlab.errors import UsageError

__all__ = ["main", "prepare", "run_script"]


def prepare(torch_cuda: bool = True) -> None:
    """Serve the process's CUDA driver calls by the emulator, as ``lab.py exec`` does before it runs a script (also
    ``lab.py time``): the stand-in ``libcuda.so.1`` (``ptxlab.driver.install()``) and, when torch is installed and
    ``torch_cuda``, ``device="cuda"`` tensors as emulator tensors."""
    from ptxlab.driver import install
    install()
    import importlib.util
    if torch_cuda and importlib.util.find_spec("torch") is not None:
        from ptxlab.driver import torch_cuda as tc
        tc.enable()


def run_script(script: str, args: List[str]) -> int:
    """Run ``script`` as ``__main__`` with ``args``; return its exit status."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [script] + list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
        return 0
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        raise
    except BaseException as exc:          # noqa: BLE001 - the script's own failure: show it as Python would,
        tb = exc.__traceback__            # from the script's first frame (not lab.py exec's own and runpy's)
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
        if tb is None and not (isinstance(exc, SyntaxError) and exc.filename == script):
            tb = exc.__traceback__        # (a SyntaxError in the script prints without frames, as Python's does)
        traceback.print_exception(type(exc), exc, tb)
        return 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(prog="lab.py exec", description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-torch-cuda", action="store_true",
                    help="do not turn device='cuda' torch tensors into emulator tensors (ptxlab/driver/torch_cuda.py)")
    ap.add_argument("script", help="the Python script to run")
    ap.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    args = ap.parse_args(argv)
    if not os.path.isfile(args.script):
        raise UsageError(f"script {args.script}: no such file")
    prepare(torch_cuda=not args.no_torch_cuda)
    sys.stdout.flush()
    return run_script(args.script, args.script_args)
