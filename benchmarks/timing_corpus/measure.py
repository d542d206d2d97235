"""Measure the corpus on a GPU: build each kernel with NVRTC (ptxlab.compile, sm_90a), check it against the host
reference, time it with CUDA events; JSON of times + device info under $OUT.

    PYTHONPATH=. python3 benchmarks/timing_corpus/measure.py --part calibration [--check all] [--iters 200] \\
        [--sources .timing_corpus_sources] [--only SUBSTR ...]

``--part`` picks the kernels to TIME (calibration | validation | val2 | val3 | all); ``--check`` the kernels whose
output is checked (default: the timed part; ``all`` checks every kernel, timed or not). Method (as
benchmarks/validate_timing.py): one launch on input set 0 with poisoned outputs, every output element must be
written and match the reference (problems.py); then S input sets (copies at other addresses, S x bytes >= 4 x L2, at
most 64 and 6 GiB) are rotated launch after launch so every timed launch reads its inputs from DRAM (a cold run);
per-launch CUDA events, launches queued in batches of 50 behind a GPU sleep (bench_gemv_h100.time_launches), warm-up
first, median of ``--iters`` (fewer for kernels over 2 ms); set 0 is checked again after timing. Needs torch
(events, sleep) and cuda-python. Modules come from the packed bundle (bundle.py: the cubins the predictions were
made from) when present and current, else ptxlab.compile on this machine; each row says which.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import platform
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE.parent), str(ROOT / "benchmarks")]

from timing_corpus import bundle, harness, manifest, sources  # noqa: E402

SEED = 1
L2_BYTES = 50 << 20
ROTATION_CAP_BYTES = 6 << 30


class RawLaunch:
    """cuLaunchKernel with pre-packed parameters (no per-launch synchronisation), for timing."""

    def __init__(self, built: harness.Built, setup: harness.Setup, stream: int):
        from cuda.bindings import driver as drv
        from ptxlab.device.args import pack_params
        self.drv, self.k, self.stream = drv, built.kernel, stream
        self.func = _ok(drv.cuModuleGetFunction(_module(built), built.name.encode()))
        layout = setup.dev.param_layout(built.module, built.name)
        params, offsets = pack_params(layout, setup.args, built.name)
        self.storage = ctypes.create_string_buffer(params, max(len(params), 1))
        base = ctypes.addressof(self.storage)
        self.ptrs = (ctypes.c_void_p * max(len(offsets), 1))(*[base + o for o in offsets])
        if self.k.smem > 48 * 1024:                  # over the default limit: opt in, as the project's launcher does
            attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _ok(drv.cuFuncSetAttribute(self.func, attr, self.k.smem))

    def __call__(self) -> None:
        _ok(self.drv.cuLaunchKernel(self.func, *self.k.grid, *self.k.block, self.k.smem,
                                    self.drv.CUstream(self.stream),
                                    ctypes.addressof(self.ptrs), 0))


_MODULES: dict = {}


def _module(built: harness.Built):
    from cuda.bindings import driver as drv
    key = built.module.cubin      # not id(module): a freed module's id is reused, and the old CUmodule lacks the kernel
    if key not in _MODULES:
        _MODULES[key] = _ok(drv.cuModuleLoadData(built.module.cubin))
    return _MODULES[key]


def _ok(res):
    from cuda.bindings import driver as drv
    if res[0] != drv.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver call failed: {res[0]!r}")
    return None if len(res) == 1 else res[1]


def rotation_sets(per_set: int) -> int:
    """Input sets to rotate so that a set is evicted from L2 before its next use: S x bytes >= 4 x L2, S >= 2,
    at most 64 sets and ROTATION_CAP_BYTES in all (then a set of >= 96 MiB still rotates through 2)."""
    want = math.ceil(4 * L2_BYTES / per_set)
    return int(max(2, min(64, want, ROTATION_CAP_BYTES // per_set)))


def measure_one(k, dev, torch, B, timed: bool, iters: int, sleep: int, root=None, prebuilt=None) -> dict:
    row = {"name": k.name, "series": k.series, "split": k.split}
    built = bundle.built(k, prebuilt or {}, root)
    row["build"] = f"prebuilt, NVRTC {prebuilt['nvrtc']}" if built else "compiled on this machine"
    if built is not None and dev.name == "cuda":
        try:
            _module(built)                            # the driver must load the prebuilt cubin
        except RuntimeError as e:
            row["build"] = f"compiled on this machine (prebuilt cubin not loadable: {e})"
            built = None
    built = built or harness.build(k, root)
    s0 = harness.Setup.create(built, dev, SEED)
    s0.launch()
    row["check"] = s0.check(full=True)
    if not timed:
        s0.free()
        return row
    per_set = sum(a.nbytes for a in s0.host.values())
    nsets = rotation_sets(per_set)
    sets = [s0] + [harness.Setup.create(built, dev, SEED, problem=s0.problem, host=s0.host) for _ in range(nsets - 1)]
    stream = torch.cuda.current_stream().cuda_stream
    fns = [RawLaunch(built, s, stream) for s in sets]
    for f in fns:                                    # warm-up: module load, every set once
        f()
    torch.cuda.synchronize()
    probe = B.time_launches(torch, fns[:2], 4, sleep, batch=4)["median_us"]
    n = iters if probe < 2000 else max(20, iters // 4)
    r = B.time_launches(torch, fns, n, sleep)
    row.update({k2: round(v, 3) if isinstance(v, float) else v for k2, v in r.items()})
    row["input_sets"] = nsets
    row["bytes_per_set"] = per_set
    for n in s0.problem.outputs:                      # in/out arrays (beta * C) changed launch after launch
        dev.write(s0.bufs[n], s0.host[n])
    s0.launch()
    row["check_after"] = s0.check(full=True)["ok"]
    row["registers"] = getattr(built.module.resources.get(built.name), "registers", None) \
        if getattr(built.module, "resources", None) else None
    for s in sets:
        s.free()
    return row


def _write(rep: dict, part: str) -> None:
    o = os.environ.get("OUT")
    if o:
        tag = "h200" if "H200" in rep["device"] else "h100" if "H100" in rep["device"] else "gpu"
        Path(o, f"corpus_measured_{tag}_{part}.json").write_text(json.dumps(rep, indent=1) + "\n")


def device_info(torch, dev) -> dict:
    p = torch.cuda.get_device_properties(0)
    info = {"device": p.name, "sms": p.multi_processor_count, "cc": f"{p.major}.{p.minor}",
            "memory_gib": round(p.total_memory / 2**30, 1), "torch": torch.__version__}
    try:
        from cuda.bindings import driver as drv, nvrtc
        info["driver"] = _ok(drv.cuDriverGetVersion())
        info["nvrtc"] = ".".join(str(x) for x in nvrtc.nvrtcVersion()[1:])
    except Exception:  # noqa: BLE001
        pass
    try:
        import subprocess
        info["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw",
             "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:  # noqa: BLE001
        pass
    return info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="calibration",
                    help="kernels to time: calibration | validation | val2 | val3 | all")
    ap.add_argument("--check", default=None,
                    help="kernels to check: calibration | validation | val2 | val3 | all (default: --part)")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--sources", help="cached sources (default: sources.sources_dir())")
    args = ap.parse_args(argv)
    import torch
    import bench_gemv_h100 as B
    import ptxlab
    torch.cuda.init()
    dev = ptxlab.open_device("cuda")
    timed = {k.name for k in manifest.select(args.part, args.only)}
    checked = {k.name for k in manifest.select(args.check or args.part, args.only)} | timed
    rep = {"date": time.strftime("%Y-%m-%d %H:%M"), **device_info(torch, dev), "part": args.part,
           "host": f"{platform.node()}, {os.cpu_count()} CPUs", "kernels": [], "errors": []}
    sleep = int(1.98e9 * 3e-3)
    rep["copy_GBps"] = round(B.copy_bandwidth(torch, sleep, 20)["GBps"], 1)
    prebuilt = bundle.load_all(sources.sources_dir(args.sources))
    print(f"{rep['device']}: {rep['sms']} SMs, copy {rep['copy_GBps']} GB/s; timing {len(timed)} kernels, "
          f"checking {len(checked)}", flush=True)
    t0 = time.perf_counter()
    for k in manifest.KERNELS:
        if k.name not in checked:
            continue
        try:
            row = measure_one(k, dev, torch, B, k.name in timed, args.iters, sleep, args.sources, prebuilt)
            rep["kernels"].append(row)
            c = row["check"]
            t = f"{row['median_us']:10.2f} us (p10 {row['p10_us']:.2f}, p90 {row['p90_us']:.2f})" if "median_us" in \
                row else " " * 10 + "   (not timed)"
            print(f"{k.name:58s} {k.split} {t} check {'ok' if c['ok'] else 'FAIL ' + c['detail'][:200]}", flush=True)
        except Exception:  # noqa: BLE001
            # repo-relative paths: the JSON is committed (tests/test_no_machine_paths.py)
            rep["errors"].append(f"{k.name}: " + traceback.format_exc(limit=6).replace(f"{ROOT}/", ""))
            print(rep["errors"][-1], flush=True)
        rep["wall_s"] = round(time.perf_counter() - t0, 1)
        _write(rep, args.part)                        # after every kernel: a timeout keeps what was measured
    bad = [r["name"] for r in rep["kernels"] if not r["check"]["ok"]]
    print(f"\n{len(rep['kernels'])} kernels in {rep['wall_s']} s; checks failed: {bad or 'none'}; "
          f"errors: {len(rep['errors'])}")
    print(f"{'kernel':58s} part  median us")
    for r in rep["kernels"]:
        if "median_us" in r:
            print(f"{r['name']:58s} {r['split']}  {r['median_us']:10.2f}")
    return 1 if bad or rep["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
