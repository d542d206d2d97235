"""Check a gpu-mode submission against its problem's own reference, as the competition's harness does for its tests:
``data = generate_input(**test); out = custom_kernel(data); ok = check_implementation(data, out)``.

Run on the emulator with ``python lab.py exec benchmarks/gpumode_check.py PROBLEM_DIR [--test I ...] [--spec JSON]``
(PROBLEM_DIR: a gpu-mode ``problems/nvidia/<problem>`` directory with reference.py, submission.py, task.py,
task.yml; ``utils.py`` is taken from the directory or its parent, as the task's ``files:`` list does). The problem's
files are imported unmodified; their ``device="cuda"`` tensors become emulator tensors (ptxlab/driver/torch_cuda.py)
and ``torch._scaled_mm`` of NVFP4 operands is computed from its definition. Exit status 0 when every test passes.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path


def _tests(task_yml: Path) -> list:
    """The ``tests:`` entries of task.yml (one flow mapping per line)."""
    out, inside = [], False
    for line in task_yml.read_text().splitlines():
        if re.match(r"^tests:\s*$", line):
            inside = True
            continue
        if inside:
            m = re.match(r"^\s*-\s*(\{.*\})\s*$", line)
            if not m:
                break
            out.append(ast.literal_eval(re.sub(r'"(\w+)"\s*:', r'"\1":', m.group(1))))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("problem_dir")
    ap.add_argument("--test", type=int, action="append", default=[], help="index into task.yml's tests (repeat)")
    ap.add_argument("--spec", action="append", default=[], help="a test spec as JSON instead (repeat)")
    args = ap.parse_args(argv)
    src = Path(args.problem_dir).resolve()
    work = Path(tempfile.mkdtemp(prefix="gpumode_"))
    try:
        for name in ("reference.py", "submission.py", "task.py"):
            shutil.copy(src / name, work / name)
        shutil.copy(src / "utils.py" if (src / "utils.py").exists() else src.parent / "utils.py", work / "utils.py")
        sys.path.insert(0, str(work))
        os.chdir(work)
        from reference import check_implementation, generate_input   # noqa: E402 (the problem's own files)
        from submission import custom_kernel
        specs = [json.loads(s) for s in args.spec] + [_tests(src / "task.yml")[i] for i in args.test]
        failed = 0
        for spec in specs:
            t0 = time.perf_counter()
            data = generate_input(**spec)
            out = custom_kernel(data)
            res = check_implementation(data, out)
            ok, msg = (res if isinstance(res, tuple) else (bool(res), ""))
            failed += not ok
            print(f"{src.name} {spec}: {'PASS' if ok else 'FAIL'} ({time.perf_counter() - t0:.1f} s) {msg}".rstrip(),
                  flush=True)
        return 1 if failed or not specs else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
