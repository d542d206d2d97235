"""Run NVIDIA's CuTe DSL Blackwell examples and the gpu-mode reference submissions on the emulator through
``lab.py exec``, unmodified, and tabulate result and wall time (issue 23 item 3; ptx_docs/cute_dsl.md "Coverage").

The sources are not in this repository: pass a checkout of NVIDIA/cutlass (``--cutlass``, the examples are read from
``examples/python/CuTeDSL/cute/blackwell``) and of gpu-mode/reference-kernels (``--gpumode``). Each entry of
``ENTRIES`` is (name, script relative to its checkout, arguments): the arguments shrink the problem to what the
emulator runs in seconds; ``--default-size`` runs each script with its own defaults instead (and ``--only`` picks
entries by name). A script passes when it exits 0 (each checks itself against its own reference).

An entry written for an older DSL release names that release series (``WRITTEN_FOR``): the gpu-mode
``nvfp4_group_gemm`` submission (2026-01-20) is rejected by the DSL 4.6+ compiler ("expected tma descriptor pointer
to have alignment at least 64"); ``--dsl-python 4.3=PYTHON`` runs it with the interpreter of a venv holding that
release (ptx_docs/cute_dsl.md "Coverage"), otherwise it runs with this interpreter's DSL.

    python benchmarks/cute_dsl_coverage.py --cutlass ../cutlass --gpumode ../reference-kernels [--only fp16_gemm_0]
        [--dsl-python 4.3=/path/to/venv-with-nvidia-cutlass-dsl-4.3.5/bin/python]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TUT = "examples/python/CuTeDSL/cute/blackwell/tutorial"
KER = "examples/python/CuTeDSL/cute/blackwell/kernel"

# (name, checkout: "cutlass" | "gpumode", script, small-size arguments)
ENTRIES = [
    ("fp16_gemm_0", "cutlass", f"{TUT}/tutorial_gemm/fp16_gemm_0.py", ["--mnk", "256,256,128"]),
    ("fp16_gemm_1", "cutlass", f"{TUT}/tutorial_gemm/fp16_gemm_1.py", ["--mnk", "256,256,128"]),
    ("fp16_gemm_2", "cutlass", f"{TUT}/tutorial_gemm/fp16_gemm_2.py", ["--mnk", "256,256,128"]),
    ("fp16_gemm_3", "cutlass", f"{TUT}/tutorial_gemm/fp16_gemm_3.py", ["--mnk", "256,256,128"]),
    ("fp16_gemm_3_1", "cutlass", f"{TUT}/tutorial_gemm/fp16_gemm_3_1.py", ["--mnk", "256,256,128"]),
    ("fp16_gemm_4", "cutlass", f"{TUT}/tutorial_gemm/fp16_gemm_4.py", ["--mnk", "256,256,128"]),
    ("fp16_gemm_5", "cutlass", f"{TUT}/tutorial_gemm/fp16_gemm_5.py", ["--mnk", "256,128,128"]),
    ("fp16_gemm_6", "cutlass", f"{TUT}/tutorial_gemm/fp16_gemm_6.py", ["--mnk", "256,256,128"]),
    ("nvfp4_gemm_0", "cutlass", f"{TUT}/tutorial_gemm/nvfp4_gemm_0.py", ["--mnkl", "128,256,256,1"]),
    ("nvfp4_gemm_1", "cutlass", f"{TUT}/tutorial_gemm/nvfp4_gemm_1.py", ["--mnkl", "256,256,256,1"]),
    ("tma_v0", "cutlass", f"{TUT}/tutorial_tma/tma_v0.py", ["--M", "128", "--N", "64", "--num_warmup", "0",
                                                           "--num_iters", "1"]),
    ("tma_v1", "cutlass", f"{TUT}/tutorial_tma/tma_v1.py", ["--M", "128", "--N", "64", "--num_warmup", "0",
                                                           "--num_iters", "1"]),
    ("tma_v2", "cutlass", f"{TUT}/tutorial_tma/tma_v2.py", ["--M", "128", "--N", "64", "--num_warmup", "0",
                                                           "--num_iters", "1"]),
    ("dense_gemm_persistent", "cutlass", f"{KER}/dense_gemm/dense_gemm_persistent.py",
     ["--mnkl", "256,256,64,1", "--ab_dtype", "Float16", "--c_dtype", "Float16", "--acc_dtype", "Float32",
      "--mma_tiler_mn", "128,128", "--cluster_shape_mn", "1,1"]),
    ("dense_blockscaled_gemm_persistent", "cutlass", f"{KER}/blockscaled_gemm/dense_blockscaled_gemm_persistent.py",
     ["--mnkl", "256,256,256,1", "--mma_tiler_mn", "128,128", "--cluster_shape_mn", "1,1"]),
    ("grouped_blockscaled_gemm", "cutlass", f"{KER}/blockscaled_grouped_gemm/grouped_blockscaled_gemm.py",
     ["--num_groups", "2", "--problem_sizes_mnkl", "(128,128,256,1),(256,128,256,1)", "--mma_tiler_mn", "128,128",
      "--cluster_shape_mn", "1,1"]),
    # gpu-mode reference submissions, checked by benchmarks/gpumode_check.py against the problem's own reference
    ("gpumode nvfp4_gemm", "gpumode", "problems/nvidia/nvfp4_gemm", ["--test", "0"]),
    ("gpumode nvfp4_dual_gemm", "gpumode", "problems/nvidia/nvfp4_dual_gemm", ["--test", "1"]),
    ("gpumode nvfp4_group_gemm", "gpumode", "problems/nvidia/nvfp4_group_gemm", ["--test", "0"]),
]
# entries written for an older DSL release series than the pinned one (see the module docstring)
WRITTEN_FOR = {"gpumode nvfp4_group_gemm": "4.3"}


def run(entry, roots: dict, default_size: bool, timeout: int, pythons: dict | None = None) -> tuple:
    name, root, script, small = entry
    python = (pythons or {}).get(WRITTEN_FOR.get(name), sys.executable)
    path = Path(roots[root]) / script
    if not (path.is_dir() if root == "gpumode" else path.is_file()):
        return name, "MISSING", 0.0, f"{path} not found"
    if root == "gpumode":      # a problem directory: its submission against its reference (gpumode_check.py)
        cmd = [python, str(REPO / "lab.py"), "exec", str(REPO / "benchmarks" / "gpumode_check.py"), str(path)]
        cmd += small if not default_size else ["--test", "0"]
        path = path / "task.yml"
    else:
        cmd = [python, str(REPO / "lab.py"), "exec", str(path)] + ([] if default_size else small)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=path.parent, capture_output=True, text=True, timeout=timeout)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out = "TIMEOUT", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else ""
    dt = time.perf_counter() - t0
    lines = [ln for ln in out.splitlines() if ln.strip()]
    tail = next((ln for ln in reversed(lines) if "Error" in ln or "error" in ln), lines[-1] if lines else "")
    return name, "PASS" if rc == 0 else f"FAIL ({rc})", dt, tail.strip()[:160]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cutlass", required=True, help="checkout of NVIDIA/cutlass")
    ap.add_argument("--gpumode", help="checkout of gpu-mode/reference-kernels")
    ap.add_argument("--only", action="append", default=[], help="run only these entries (repeat)")
    ap.add_argument("--default-size", action="store_true", help="run each script with its own default size")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per script (default 900)")
    ap.add_argument("--dsl-python", action="append", default=[], metavar="SERIES=PYTHON",
                    help="run the entries written for DSL release SERIES (WRITTEN_FOR) with PYTHON (repeat)")
    args = ap.parse_args(argv)
    roots = {"cutlass": args.cutlass, "gpumode": args.gpumode or ""}
    pythons = dict(x.split("=", 1) for x in args.dsl_python)
    rows = []
    for e in ENTRIES:
        if args.only and e[0] not in args.only:
            continue
        r = run(e, roots, args.default_size, args.timeout, pythons)
        rows.append(r)
        print(f"{r[0]:<36} {r[1]:<12} {r[2]:7.1f}s  {r[3]}", flush=True)
    failed = [r for r in rows if r[1] != "PASS"]
    print(f"{len(rows) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
