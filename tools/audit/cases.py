"""The audit's cases, by category (tools/audit/audit.py runs them; its docstring lists the categories).

Every case says which exit statuses are right. Usage errors are 2 (one ``error:`` line, nothing recorded), a stage
failure 1, an emulator fault reached through the library API is an exception of the ptxlab hierarchy (the API
wrapper ``API`` below turns it into exit 3, anything else into a traceback). Cases that write files check afterwards
that nothing was lost.
"""
from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path
from typing import Dict, List

import numpy as np

from runner import REPO, Case, command

# python -c wrapper for library-API cases: exit 0 = ran, 3 = a ptxlab error (the message's class printed), else the
# interpreter's traceback (exit 1)
API = textwrap.dedent("""
    import sys, warnings
    import numpy as np, ptxlab
    from ptxlab.errors import PtxlabError
    warnings.simplefilter("ignore")
    try:
    {body}
    except PtxlabError as exc:
        print(type(exc).__name__ + ": " + str(exc).splitlines()[0])
        sys.exit(3)
""")
STAGES = {"passing": "from ptxlab.lab.registry import Stage, StageResult, Check\n"
                     "def run(ctx):\n    return StageResult.from_rows([Check('ok', True, '')])\n"
                     "STAGES = [Stage('Z1', 'passing', 'nothing', run)]\n",
          "dumping": "import numpy as np, time\nfrom ptxlab.lab.registry import Stage, StageResult, Check\n"
                     "from ptxlab.lab.dumps import write_dump\n"
                     "def run(ctx):\n    paths = []\n    for i in range(40):\n"
                     "        a = np.full((256, 256), i, np.uint32)\n"
                     "        paths.append(write_dump(ctx.dump_dir, 'Z1', f'd{i % 3}', {'got': a, 'expected': a}))\n"
                     "    return StageResult.from_rows([Check('ok', True, '')], dump_paths=paths)\n"
                     "STAGES = [Stage('Z1', 'dumping', 'nothing', run)]\n"}
KERNEL = 'extern "C" __global__ void k(unsigned* o) { o[threadIdx.x] = threadIdx.x + SALT; }'


def api(body: str) -> List[str]:
    return ["-c", API.format(body=textwrap.indent(textwrap.dedent(body), "    "))]


def stages_dir(kind: str):
    def setup(sb: Path) -> None:
        d = sb / "stages" / "z"
        d.mkdir(parents=True)
        (d / "driver.py").write_text(STAGES[kind])
    return setup


# ------------------------------------------------------------------------------------------------ 1. CLI flags
def cli_cases() -> List[Case]:
    out: List[Case] = []

    def c(name, *argv, ok=(2,), **kw):
        out.append(Case(f"cli-{name}", "CLI subcommands and flags", ["lab.py", *argv], ok_rc=ok, **kw))

    c("help", "help", ok=(0,))
    c("unknown-subcommand", "frobnicate")
    c("run-unknown-flag", "--frob")
    c("run-unknown-stage", "--stage", "Z9")
    c("run-empty-stage", "--stage", ",,")
    c("run-bad-backend", "--backend", "tpu")
    c("run-bad-debug", "--debug", "bogus")
    c("run-dump-is-file", "--stage", "B1", "--dump", "{sandbox}/state.json")
    c("run-dump-unwritable", "--stage", "B1", "--dump", "/proc/ptxlab-dump")
    c("run-stages-dir-missing", "--stages-dir", "{sandbox}/nope")
    c("run-stages-dir-file", "--stages-dir", "{sandbox}/state.json")
    for s in ("-1", "abc", "1.5", str(2**64), "", "0x10"):
        c(f"run-seed-{s or 'empty'}", "--seed", s, "--stage", "B1")
    c("run-seed-ok", "--seed", "7", "--stage", "Z1", "--stages-dir", "{sandbox}/stages", ok=(0,), setup=stages_dir("passing"))
    c("list-ok", "list", ok=(0,))
    c("list-stages-dir-missing", "list", "--stages-dir", "/nonexistent")
    for argv in (["smem"], ["smem", "zz"], ["smem", "0x4000404000010040", "--rows", "1000000000"],
                 ["smem", "0x4000404000010040", "--rows", "0"], ["smem", "0x4000404000010040", "--rows", "-7"],
                 ["smem", "0x4000404000010040", "--chunks", "100000"], ["smem", "0x4000404000010040", "--elem", "fp7"],
                 ["smem", "0x4000404000010040", "--major", "diagonal"], ["smem", str(2**70)], ["smem", "-1"],
                 ["idesc", "0x1"], ["idesc", "--kind", "f99", "0x1"], ["idesc", "--kind", "f16", str(2**40)],
                 ["idesc", "--kind", "f16", "0x1", "--block", "7"], ["tmem", str(2**33)], ["tmem", "x"],
                 ["encode", "smem"], ["encode", "smem", "--start", str(2**40)], ["encode", "smem", "--start", "7"],
                 ["encode", "smem", "--start", "0", "--swizzle", "17B"], ["encode", "smem", "--start", "0", "--lbo", "-16"],
                 ["encode", "idesc", "--kind", "f16", "--m", "7", "--n", "16"],
                 ["encode", "idesc", "--kind", "f16", "--m", str(10**12), "--n", "16"],
                 ["encode", "idesc", "--kind", "mxf4nvf4", "--m", "128", "--n", "16", "--block", "3"], ["frob"]):
        c("desc-" + "-".join(a.strip("-")[:12] for a in argv), "desc", *argv)
    for argv in (["smem", "0x4000404000010040", "--elem", "e2m1", "--rows", "8"], ["tmem", "0x00200040"],
                 ["encode", "smem", "--start", "0x400", "--lbo", "16", "--sbo", "1024"]):
        c("desc-ok-" + argv[0] + argv[-1], "desc", *argv, ok=(0,))
    for argv, ok in ((["--problem", "nvfp4_gemm", "--splits", "99999999999999"], (2,)),
                     (["--problem", "nvfp4_gemm", "--splits", "0"], (2,)), (["--problem", "nvfp4_gemm", "--splits", "-3"], (2,)),
                     (["--problem", "nvfp4_gemm", "--splits", "x"], (2,)), (["--problem", "nvfp4_gemv", "--splits", "2"], (2,)),
                     (["--problem", "nvfp4_gemm", "--variant", "3sm"], (2,)),
                     (["--problem", "nvfp4_gemm", "--variant", "2sm", "--splits", "4"], (2,)),
                     (["--problem", "matmul"], (2,)), (["--out", "{sandbox}"], (2,)), (["--out", "{sandbox}/no/dir/s.py"], (2,)),
                     (["--out", "/proc/s.py"], (2,)), (["--problem", "nvfp4_gemm", "--variant", "1sm", "--splits", "auto", "--out", "{sandbox}/s.py"], (0,)),
                     (["--problem", "nvfp4_gemm", "--splits", "auto", "--out", "{sandbox}/s.py"], (2,)),
                     (["--out", "{sandbox}/s.py"], (0,))):
        c("export-" + "-".join(a.strip("-")[:10] for a in argv), "export", *argv, ok=ok,
          check=_export_ok if ok == (0,) else None)
    for argv in (["--problem", "nvfp4_gemv"], ["--problem", "nvfp4_gemv", "--shape", "1,2"],
                 ["--problem", "nvfp4_gemv", "--shape", "100,200,1"], ["--problem", "nvfp4_gemv", "--shape", "0,256,1"],
                 ["--problem", "nvfp4_gemv", "--shape", "a,b,c"], ["--problem", "nvfp4_gemv", "--shape", "128,256,1", "--seed", "-1"],
                 ["--problem", "nvfp4_gemv", "--shape", "128,256,1", "--config", "x,y"],
                 ["--problem", "nvfp4_gemv", "--shape", "128,256,1", "--config", "0,0,0"],
                 ["--problem", "nvfp4_gemv", "--shape", "128,256,1", "--config", "4096,2,2"],
                 ["--problem", "nvfp4_gemm", "--shape", "128,256,256,1", "--config", "4,2,2"],
                 ["--problem", "nvfp4_gemm", "--shape", "100,256,256,1"], ["--problem", "nvfp4_gemm_2sm", "--shape", "64,256,256,1"],
                 ["--problem", "nvfp4_gemv_tcgen05", "--shape", "100,256,1"],
                 ["--problem", "nvfp4_gemv", "--shape", "100000,100000,100"], ["--problem", "nvfp4_gemv", "--shape", f"128,{2**40},1"],
                 ["--gpu", "a100", "--problem", "nvfp4_gemv", "--shape", "128,256,1"], ["--sample", "most"],
                 ["--stage", "Z9"], ["{sandbox}/missing.py"], ["--trace", "{sandbox}", "--stage", "B1"],
                 ["--png", "/proc/x/t.png", "--stage", "B1"], ["--config", "4,2,2"]):
        c("time-" + "-".join(a.strip("-")[:10] for a in argv), "time", *argv)
    for argv in (["tutorial_02", "--m", "100", "--n", "100", "--k", "100"], ["tutorial_02", "--m", "1000000000"],
                 ["tutorial_02", "--m", "0"], ["example_72b", "--seed", "-5"], ["example_72b", "--wave-ctas", "0"],
                 ["tutorial_02", "--strict", "bogus"], ["tutorial_02", "--clc", "sometimes"], ["tutorial_02", "--alpha", "nan"],
                 ["example_99"], ["tutorial_02", "--backend", "tpu"], ["tutorial_02", "--m", "x"]):
        c("cutlass-" + "-".join(a.strip("-")[:10] for a in argv), "cutlass", *argv)
    c("cutlass-list", "cutlass", ok=(0,))
    for target in ("a", "nvfp4_gemv", "nope:1,2,3", "{sandbox}/missing.py", "nvfp4_gemv:512,4096",
                   "nvfp4_gemv:512,4096,2:x,y", "nvfp4_gemv:512,200,2", "nvfp4_gemm:100,256,256,1",
                   "nvfp4_gemv:100000,100000,100", "nvfp4_gemv:512,4096,2:0,0,0", "nvfp4_gemm:128,256,256,1:4,2,2",
                   "nvfp4_gemv:512,4096,2:4,2,2:9", f"nvfp4_gemm_2sm:128,256,{2**40},1"):
        c("time-compare-" + Path(target).name[:30], "time", "--compare", "nvfp4_gemv:512,4096,2", target)
    c("time-compare-one-target", "time", "--compare", "nvfp4_gemv:512,4096,2")
    two = ["--compare", "nvfp4_gemv:512,4096,2", "nvfp4_gemv:512,4096,2"]
    for name, argv in (("compare-and-stage", [*two, "--stage", "B1"]), ("compare-and-script", [*two, "{sandbox}/ok.py"]),
                       ("compare-sensitivity", [*two, "--sensitivity"]), ("compare-png", [*two, "--png", "{sandbox}/t.png"]),
                       ("stage-and-problem", ["--stage", "B1", "--problem", "nvfp4_gemv", "--shape", "512,4096,2"]),
                       ("shape-no-problem", ["--stage", "B1", "--shape", "512,4096,2"])):
        c(f"time-{name}", "time", *argv, setup=_scripts)     # one of the two would be ignored: a usage error
    c("time-compare-no-launch", "time", "--compare", "{sandbox}/ok.py", "{sandbox}/ok.py", ok=(1,), setup=_scripts)
    for argv, ok in (([], (2,)), (["{sandbox}/missing.py"], (2,)), (["{sandbox}"], (2,)), (["--frob", "{sandbox}/ok.py"], (2,)),
                     (["{sandbox}/ok.py"], (0,)), (["{sandbox}/five.py"], (5,)), (["--no-torch-cuda", "{sandbox}/ok.py"], (0,))):
        c("exec-" + "-".join(Path(a).name.strip("-")[:12] for a in argv), "exec", *argv, ok=ok, setup=_scripts)
    for action in DRIVER_FAULTS:        # driver calls that must fail with an error code (exit 3), never a traceback
        c(f"exec-driver-{action}", "exec", "{sandbox}/drv.py", action, ok=(3,), setup=_scripts)
    for argv in (["{sandbox}/none.npz"], ["{sandbox}"], ["{sandbox}/state.json"], ["{sandbox}/partial.npz"],
                 ["{sandbox}/good.npz", "--key", "nope"], ["{sandbox}/good.npz", "--limit", "-1"],
                 ["{sandbox}/good.npz", "--decode", "hex"], ["{sandbox}/good.npz", "{sandbox}/partial.npz"],
                 ["{sandbox}/truncated.npz"]):
        c("diff-" + "-".join(Path(a).name[:12] for a in argv), "diff", *argv, setup=_dumps)
    c("diff-ok", "diff", "{sandbox}/good.npz", ok=(0,), setup=_dumps)
    c("diff-two-ok", "diff", "{sandbox}/good.npz", "{sandbox}/good2.npz", ok=(1,), setup=_dumps)
    c("status-ok", "status", ok=(0,))
    c("status-json", "status", "--json", ok=(0,))
    c("status-stages-dir", "status", "--stages-dir", "{sandbox}/stages", ok=(0,), setup=stages_dir("passing"))
    c("status-stages-dir-missing", "status", "--stages-dir", "{sandbox}/nope")
    c("graduate-unknown", "graduate", "Z9")
    c("graduate-never-passed", "graduate", "Z1", "--stages-dir", "{sandbox}/stages", ok=(1,), setup=stages_dir("passing"))
    c("graduate-list", "graduate", "--list", ok=(0,))
    c("graduate-stages-dir-missing", "graduate", "Z1", "--stages-dir", "{sandbox}/nope")
    return out


# a cuda-python driver-API script for ``lab.py exec``: exit 3 when the call named by argv[1] returned an error code,
# 0 when it succeeded (a bad call accepted)
DRIVER_SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    from cuda.bindings import driver as cu
    PTX = (".version 8.0\\n.target sm_90\\n.address_size 64\\n.visible .entry bad(.param .u64 p) { .reg .b64 rd1; "
           ".reg .b32 r1; ld.param.u64 rd1, [p]; mov.u32 r1, 5; st.global.u32 [rd1+4096], r1; ret; }\\n")
    def ok(r):
        if r[0] != cu.CUresult.CUDA_SUCCESS:
            print("driver error:", r[0].name)
            sys.exit(3)
        return r[1] if len(r) > 1 else None
    action = sys.argv[1]
    if action == "no-init":
        ok(cu.cuMemAlloc(64))
    ok(cu.cuInit(0))
    if action == "no-context":
        ok(cu.cuMemAlloc(64))
    ctx = ok(cu.cuCtxCreate(None, 0, 0))
    if action == "alloc-huge":
        ok(cu.cuMemAlloc(2**62))
    if action == "copy-wild":
        ok(cu.cuMemcpyHtoD(12345, np.zeros(4, np.uint32).ctypes.data, 16))
    if action == "image-garbage":
        ok(cu.cuModuleLoadData(b"garbage\\0"))
    if action == "ptx-bad":
        ok(cu.cuModuleLoadData(b".version 8.0\\n.target sm_90\\n.address_size 64\\nbogus;\\0"))
    mod = ok(cu.cuModuleLoadData(PTX.encode() + b"\\0"))
    if action == "function-unknown":
        ok(cu.cuModuleGetFunction(mod, b"nope"))
    fn = ok(cu.cuModuleGetFunction(mod, b"bad"))
    buf = ok(cu.cuMemAlloc(16))
    arg = np.array([int(buf)], np.uint64)
    ptrs = np.array([arg.ctypes.data], np.uint64)
    if action == "block-too-big":
        ok(cu.cuLaunchKernel(fn, 1, 1, 1, 2048, 1, 1, 0, 0, ptrs.ctypes.data, 0))
    if action == "stream-wild":
        ok(cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 12345, ptrs.ctypes.data, 0))
    if action == "sync-destroyed-stream":
        st = ok(cu.cuStreamCreate(0))
        ok(cu.cuStreamDestroy(st))
        ok(cu.cuStreamSynchronize(st))
    if action == "double-free":
        ok(cu.cuMemFree(buf))
        ok(cu.cuMemFree(buf))
    if action == "kernel-fault":
        ok(cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 0, ptrs.ctypes.data, 0))
        ok(cu.cuCtxSynchronize())
''')
DRIVER_FAULTS = ("no-init", "no-context", "alloc-huge", "copy-wild", "image-garbage", "ptx-bad", "function-unknown",
                 "block-too-big", "stream-wild", "sync-destroyed-stream", "double-free", "kernel-fault")


def _scripts(sb: Path) -> None:
    (sb / "ok.py").write_text("raise SystemExit(0)\n")
    (sb / "five.py").write_text("import sys\nsys.exit(5)\n")
    (sb / "drv.py").write_text(DRIVER_SCRIPT)


def _dumps(sb: Path) -> None:
    from ptxlab.lab.dumps import write_dump

    a = np.arange(256, dtype=np.uint32).reshape(16, 16)
    write_dump(sb, "B2", "good", {"got": a, "expected": a})
    b = a.copy()
    b[3, 4] ^= 1
    write_dump(sb, "B2", "good2", {"got": b, "expected": a})
    (sb / "B2_good.npz").rename(sb / "good.npz")
    (sb / "B2_good2.npz").rename(sb / "good2.npz")
    np.savez(sb / "partial.npz", got=a)
    data = (sb / "good.npz").read_bytes()
    (sb / "truncated.npz").write_bytes(data[: len(data) // 2])


def _export_ok(sb: Path, p) -> str:
    f = sb / "s.py"
    try:
        ast.parse(f.read_text())
    except (OSError, SyntaxError) as exc:
        return f"export wrote no valid file: {exc}"
    return ""


# ------------------------------------------------------------------------------------------------ 2. settings
BAD_VALUES = {"bool": ["maybe", "2"], "int": ["abc", "-1", "1.5", "1e99"], "float": ["abc", "-5", "nan"],
              "enum": ["bogus", "9"], "custom": ["bogus,zzz", "!"], "text": [], "path": []}


def settings_cases() -> List[Case]:
    import sys

    sys.path.insert(0, str(REPO))
    from ptxlab import settings

    special = {"PTXLAB_STATE_FILE": ["{sandbox}", "/proc/self/status/s.json"],
               "PTXLAB_NVDISASM": ["{sandbox}/state.json", "/nonexistent/nvdisasm"]}
    out: List[Case] = []
    for s in settings.SETTINGS:
        for raw in special.get(s.name) or BAD_VALUES[s.kind]:
            if s.kind == "enum" and raw.lower() in s.choices:
                continue
            for cmd in (["--stage", "B1"], ["list"]):
                out.append(Case(f"env-{s.name}-{raw}-{cmd[0].strip('-')}", "PTXLAB_* settings", ["lab.py", *cmd],
                                env={s.name: raw}, stderr_has=s.name))
        if s.kind in ("bool", "int", "float", "enum") and s.group in ("emu", "lab", "timing"):
            good = "1" if s.kind == "bool" else (s.default or (s.choices[0] if s.choices else "1"))
            if good:
                out.append(Case(f"env-{s.name}-valid", "PTXLAB_* settings", ["lab.py", "list"], env={s.name: good},
                                ok_rc=(0,)))
    for s in settings.SETTINGS:        # the commands added since (exec) check the settings before the script runs
        raws = BAD_VALUES[s.kind]
        if s.group in ("emu", "driver", "timing") and raws:
            out.append(Case(f"env-{s.name}-{raws[0]}-exec", "PTXLAB_* settings", ["lab.py", "exec", "{sandbox}/ok.py"],
                            env={s.name: raws[0]}, stderr_has=s.name, setup=_scripts))
    for name, raw, stage in (("PTXLAB_STAGE_A_FAULT", "bogus", "A1"), ("PTXLAB_STAGE_D4_BROKEN", "bogus", "D4"),
                             ("PTXLAB_STAGE_A_ARCH", "sm_75", "A1"), ("PTXLAB_DUMP_DIR", "{sandbox}/state.json", "B1"),
                             ("PTXLAB_STAGES_DIR", "{sandbox}/nope", "B1"), ("PTXLAB_STATE_FILE", "{sandbox}", "B1"),
                             ("PTXLAB_NVDISASM", "{sandbox}/state.json", "B1"), ("PTXLAB_EMU_INITCHEK", "1", None),
                             ("PTXLAB_EMU_BUDGET", "1", "B1")):
        ok = (0,) if stage is None else ((1,) if name == "PTXLAB_EMU_BUDGET" else (2,))
        argv = ["lab.py", "list"] if stage is None else ["lab.py", "--stage", stage, "--backend", "emu"]
        out.append(Case(f"env-{name}-{Path(raw).name}", "PTXLAB_* settings", argv, env={name: raw}, ok_rc=ok,
                        timeout=300))
    return out


# ------------------------------------------------------------------------------------------------ 3. library API
def api_cases() -> List[Case]:
    out: List[Case] = []
    pre = ("dev = ptxlab.open_device('emu')\n"
           "mod = ptxlab.compile('extern \"C\" __global__ void k(unsigned* o, unsigned n) { if (threadIdx.x < n) "
           "o[threadIdx.x] = n; }', arch='sm_90a')\n"
           "o = dev.empty(4096)\n")
    bad = {
        "grid-str": "dev.launch(mod, 'k', grid='12', block=32, args=[o, np.uint32(1)])",
        "grid-float": "dev.launch(mod, 'k', grid=1.0, block=32, args=[o, np.uint32(1)])",
        "grid-zero": "dev.launch(mod, 'k', grid=(0, 1, 1), block=32, args=[o, np.uint32(1)])",
        "grid-4d": "dev.launch(mod, 'k', grid=(1, 1, 1, 1), block=32, args=[o, np.uint32(1)])",
        "grid-none": "dev.launch(mod, 'k', grid=None, block=32, args=[o, np.uint32(1)])",
        "grid-bool": "dev.launch(mod, 'k', grid=True, block=32, args=[o, np.uint32(1)])",
        "grid-huge": "dev.launch(mod, 'k', grid=(2**31 - 1, 65535, 1), block=1024, args=[o, np.uint32(1)])",
        "block-2048": "dev.launch(mod, 'k', grid=1, block=2048, args=[o, np.uint32(1)])",
        "block-str": "dev.launch(mod, 'k', grid=1, block='32', args=[o, np.uint32(1)])",
        "smem-neg": "dev.launch(mod, 'k', grid=1, block=32, args=[o, np.uint32(1)], shared_bytes=-1)",
        "smem-huge": "dev.launch(mod, 'k', grid=1, block=32, args=[o, np.uint32(1)], shared_bytes=10**9)",
        "smem-float": "dev.launch(mod, 'k', grid=1, block=32, args=[o, np.uint32(1)], shared_bytes=1.5)",
        "args-count": "dev.launch(mod, 'k', grid=1, block=32, args=[o])",
        "args-pyint": "dev.launch(mod, 'k', grid=1, block=32, args=[o, 1])",
        "args-width": "dev.launch(mod, 'k', grid=1, block=32, args=[o, np.uint64(1)])",
        "args-ndarray": "dev.launch(mod, 'k', grid=1, block=32, args=[np.zeros(4), np.uint32(1)])",
        "args-str": "dev.launch(mod, 'k', grid=1, block=32, args='ab')",
        "kernel-unknown": "dev.launch(mod, 'nope', grid=1, block=32, args=[o, np.uint32(1)])",
        "kernel-none": "dev.launch(mod, None, grid=1, block=32, args=[o, np.uint32(1)])",
        "freed-buffer": "dev.free(o); dev.launch(mod, 'k', grid=1, block=32, args=[o, np.uint32(1)])",
        "double-free": "dev.free(o); dev.free(o)",
        "other-device-buffer": "d2 = ptxlab.open_device('emu'); dev.launch(mod, 'k', grid=1, block=32, args=[d2.empty(64), np.uint32(1)])",
        "empty-neg": "dev.empty(-5)",
        "empty-float": "dev.empty(1.5)",
        "empty-huge": "dev.empty(10**15)",
        "empty-huge-then-use": "\n".join(["try:", "    dev.empty(10**15)", "except PtxlabError:", "    pass",
                                          "dev.launch(mod, 'k', grid=1, block=32, args=[o, np.uint32(32)])",
                                          "assert (dev.to_host(o, np.uint32)[:32] == 32).all()",
                                          "raise ptxlab.PtxlabError('heap usable after the failed allocation')"]),
        "to-host-shape": "dev.to_host(o, np.uint32, (2000,))",
        "to-host-dtype": "dev.to_host(o, np.dtype('V3'))",
        "memset-value": "dev.memset(o, 300)",
        "memset-size": "dev.memset(o, 1, 10**6)",
        "write-past": "dev.write(o, np.zeros(2000, np.uint32))",
        "tensor-map-bad": "dev.tensor_map(o, np.uint8, [10**6], [], [16])",
        "tensor-map-box": "dev.tensor_map(o, np.uint8, [4096], [], [1000])",
        "open-bad-kind": "ptxlab.open_device('tpu')",
        "open-kind-int": "ptxlab.open_device(7)",
        "open-bad-option": "ptxlab.open_device('emu', bogus=1)",
        "open-budget-neg": "ptxlab.open_device('emu', budget=-1)",
        "open-stall-str": "ptxlab.open_device('emu', stall_seconds='45')",
        "open-wave-ctas": "ptxlab.open_device('emu', wave_ctas=0)",
        "open-initcheck": "ptxlab.open_device('emu', initcheck='sometimes')",
        "open-racecheck": "ptxlab.open_device('emu', racecheck='x')",
        "open-strict": "ptxlab.open_device('emu', strict='bogus')",
        "open-clc": "ptxlab.open_device('emu', clc='sometimes')",
        "open-memory": "ptxlab.open_device('emu', memory=5)",
        "open-timing": "ptxlab.open_device('emu', timing='a100')",
        "open-cuda-emu-option": "ptxlab.open_device('cuda', budget=1)",
        "open-engine": "ptxlab.open_device('emu', engine='bogus')",
        "open-engine-int": "ptxlab.open_device('emu', engine=3)",
        "open-workers": "ptxlab.open_device('emu', workers=2)",
        "open-timing-sample": "ptxlab.open_device('emu', timing='b200', timing_sample='bogus')",
        "compile-empty": "ptxlab.compile('', arch='sm_90a')",
        "compile-arch": "ptxlab.compile('extern \"C\" __global__ void k() {}', arch='sm_7')",
        "compile-options-str": "ptxlab.compile('extern \"C\" __global__ void k() {}', arch='sm_90a', options='-O3')",
        "compile-syntax": "ptxlab.compile('extern \"C\" __global__ void k() { int x = ; }', arch='sm_90a')",
        "compile-include-dir": "ptxlab.compile('extern \"C\" __global__ void k() {}', arch='sm_90a', include_dirs=['/nonexistent'])",
        "compile-ptx-bad": "ptxlab.compile('.version 8.0\\n.target sm_90a\\n.address_size 64\\nbogus;', arch='sm_90a')",
    }
    for name, body in bad.items():
        needs = pre if any(w in body for w in ("dev.", "mod", " o")) else ""
        out.append(Case(f"api-{name}", "library API", api(needs + body), ok_rc=(3,), timeout=180))
    for engine in ("native", "interp"):     # both engines run the same launch right (exit 0)
        body = pre.replace("open_device('emu')", f"open_device('emu', engine={engine!r})") + (
            "dev.launch(mod, 'k', grid=1, block=32, args=[o, np.uint32(7)])\n"
            "assert (dev.to_host(o, np.uint32)[:7] == 7).all()\n")
        out.append(Case(f"api-engine-{engine}-ok", "library API", api(body), ok_rc=(0,)))
    out.append(Case("api-ok", "library API", api(pre + "dev.launch(mod, 'k', grid=(1,), block=[32], args=[o, np.uint32(5)])"),
                    ok_rc=(0,)))
    return out


# ------------------------------------------------------------------------------------------------ 4. buggy kernels
def kernel_cases() -> List[Case]:
    out: List[Case] = []
    corpus = REPO / "tests" / "emu" / "checks" / "sanitizer"
    import sys

    sys.path.insert(0, str(corpus))
    from sanitizer_corpus import ENTRIES

    for e in ENTRIES:
        want, _ = e.emu
        body = (f"import sys; sys.path.insert(0, {str(corpus)!r})\nfrom sanitizer_corpus import BY_NAME, compile_entry, launch\n"
                f"e = BY_NAME[{e.name!r}]\ndev = ptxlab.open_device('emu', **e.emu_options)\n"
                "launch(dev, compile_entry(e), e, np.random.default_rng(1))\n"
                "print('warnings:', len(dev.emu_warnings))\n")
        if want == "warning":
            body += "assert dev.emu_warnings, 'no warning'\n"
        out.append(Case(f"kernel-{e.name}", "kernels with classic bugs", api(body),
                        ok_rc=(3,) if want == "error" else (0,), timeout=180))
    spin = {"spin-no-barrier": "while (flag[0] == 0u) { }",
            "spin-with-barrier": "while (flag[0] == 0u) { s[threadIdx.x] = 1u; __syncthreads(); }",
            "spin-with-two-barriers": "unsigned k = 0; while (flag[0] == 0u) { s[threadIdx.x] = k; __syncthreads(); "
                                      "k = s[(threadIdx.x + 1u) & 127u] & 3u; __syncthreads(); }",
            "runaway-counter": "for (unsigned i = 0; ; ++i) { s[threadIdx.x] = i; if (flag[0] == 7u) break; }"}
    for name, loop in spin.items():
        src = ('extern "C" __global__ void k(volatile unsigned* flag, unsigned* y) { __shared__ unsigned s[128]; '
               + loop + " y[threadIdx.x] = 1u; }")
        body = (f"dev = ptxlab.open_device('emu', stall_seconds=3, budget=2 * 10**8)\n"
                f"mod = ptxlab.compile({src!r}, arch='sm_90a')\n"
                "dev.launch(mod, 'k', grid=1, block=128, args=[dev.to_device(np.zeros(4, np.uint32)), dev.empty(512)])\n")
        out.append(Case(f"kernel-{name}", "kernels with classic bugs", api(body), ok_rc=(3,), timeout=120))
    return out


# ------------------------------------------------------------------------------------------------ 5. kills mid-run
def _killer(argv: List[str], delay: float, sig: int):
    def run(sb: Path, env: Dict[str, str]):
        p = subprocess.Popen(command(argv, sb), cwd=sb, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        time.sleep(delay)
        if p.poll() is None:
            p.send_signal(sig)
        out, err = p.communicate(timeout=120)
        return subprocess.CompletedProcess(p.args, 0 if p.returncode in (-sig, 130, 0, 1, 2) else p.returncode,
                                           out, err)
    return run


def _state_intact(sb: Path, p) -> str:
    return ""      # the runner checks the state file and the recorded PASS of every case


def _dumps_whole(sb: Path, p) -> str:
    from ptxlab.errors import UsageError
    from ptxlab.lab.dumps import load_dump

    for f in sorted((sb / "dump").glob("*.npz")):
        try:
            load_dump(f)
        except UsageError as exc:
            return f"{f.name}: {exc}"
    return ""


def _export_whole(sb: Path, p) -> str:
    f = sb / "s.py"
    text = f.read_text()
    if text == "# the old submission\n":
        return ""
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return f"export left a broken file: {exc}"
    return ""


def kill_cases(rng: np.random.Generator) -> List[Case]:
    out: List[Case] = []
    old_export = lambda sb: (sb / "s.py").write_text("# the old submission\n")  # noqa: E731
    for i in range(10):
        delay = float(rng.uniform(0.3, 3.0))
        sig = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)[i % 3]
        out.append(Case(f"kill-run-{i}-{sig.name}-{delay:.1f}s", "kills mid-run",
                        ["lab.py", "--stage", "Z1", "--stages-dir", "{sandbox}/stages", "--dump", "{sandbox}/dump"],
                        ok_rc=(0,), setup=stages_dir("dumping"), run=_killer(
                            ["lab.py", "--stage", "Z1", "--stages-dir", "{sandbox}/stages", "--dump", "{sandbox}/dump"],
                            delay, sig), check=_dumps_whole))
        out.append(Case(f"kill-export-{i}-{sig.name}-{delay:.1f}s", "kills mid-run", [], ok_rc=(0,), setup=old_export,
                        run=_killer(["lab.py", "export", "--problem", "nvfp4_gemm", "--out", "{sandbox}/s.py"],
                                    delay / 2, sig), check=_export_whole))
        out.append(Case(f"kill-stage-{i}-{sig.name}-{delay:.1f}s", "kills mid-run", [], ok_rc=(0,),
                        run=_killer(["lab.py", "--stage", "B1,B2", "--backend", "emu", "--dump", "{sandbox}/dump"],
                                    delay * 2, sig), check=_dumps_whole))
    return out


# ------------------------------------------------------------------------------------------------ 6. concurrent runs
def _concurrent(argvs: List[List[str]]):
    def run(sb: Path, env: Dict[str, str]):
        ps = [subprocess.Popen(command(a, sb), cwd=sb, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True) for a in argvs]
        outs = [p.communicate(timeout=300) for p in ps]
        rc = max(p.returncode for p in ps)
        return subprocess.CompletedProcess("concurrent", rc, "".join(o for o, _ in outs), "".join(e for _, e in outs))
    return run


def _all_recorded(sb: Path, p) -> str:
    data = json.loads((sb / "state.json").read_text())
    missing = [s for s in ("Z1",) if s not in data["results"]]
    return f"state lost {missing}" if missing else _dumps_whole(sb, p)


def concurrent_cases() -> List[Case]:
    out: List[Case] = []
    for n in (2, 3, 4):
        argv = ["lab.py", "--stage", "Z1", "--stages-dir", "{sandbox}/stages", "--dump", "{sandbox}/dump"]
        out.append(Case(f"concurrent-runs-{n}", "concurrent runs", [], ok_rc=(0,), setup=stages_dir("dumping"),
                        run=_concurrent([argv] * n), check=_all_recorded, timeout=300))
        out.append(Case(f"concurrent-exports-{n}", "concurrent runs", [], ok_rc=(0,),
                        run=_concurrent([["lab.py", "export", "--problem", p, "--out", "{sandbox}/s.py"]
                                         for p in ("nvfp4_gemv", "nvfp4_gemm", "nvfp4_gemv", "nvfp4_gemm")[:n]]),
                        check=_export_whole, timeout=300))
        code = ("import numpy as np\nfrom ptxlab.lab.dumps import write_dump\n"
                "for i in range(20):\n    a = np.full((128, 128), i, np.uint32)\n"
                "    write_dump('{sandbox}/dump', 'D2', 'same', {'got': a, 'expected': a})\n")
        out.append(Case(f"concurrent-dump-writers-{n}", "concurrent runs", [], ok_rc=(0,),
                        run=_concurrent([["-c", code]] * n), check=_dumps_whole, timeout=300))
        src = KERNEL.replace("SALT", str(1000 + n))
        comp = f"import ptxlab\nm = ptxlab.compile({src!r}, arch='sm_90a')\nassert m.cubin[:4] == b'\\x7fELF'\n"
        out.append(Case(f"concurrent-compiles-{n}", "concurrent runs", [], ok_rc=(0,),
                        env={"PTXLAB_CACHE": "{sandbox}/cache"}, run=_concurrent([["-c", comp]] * n), timeout=300))
    return out


# ------------------------------------------------------------------------------------------------ 7. locations
def _mount(sb: Path, opts: str) -> bool:
    d = sb / "mnt"
    d.mkdir(exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(d)], capture_output=True).returncode == 0


def _with_mount(opts: str, fill: bool, argv: List[str], prepare=None, verify=None):
    """Run argv with {sandbox}/mnt a small tmpfs (full, or read-only); verify(mount) -> '' or what was lost, checked
    before the unmount (reported through stderr as AUDIT-LOSS: ...)."""
    def run(sb: Path, env: Dict[str, str]):
        ro = "ro" in opts.split(",")
        mounted = _mount(sb, ",".join(o for o in opts.split(",") if o != "ro"))
        try:
            if mounted and prepare is not None:
                prepare(sb / "mnt")
            if mounted and fill:
                try:
                    with open(sb / "mnt" / "filler", "wb") as f:
                        while True:
                            f.write(b"\0" * 4096)
                except OSError:
                    pass
            if mounted and ro:
                subprocess.run(["mount", "-o", "remount,ro", str(sb / "mnt")], capture_output=True)
            if not mounted:      # no tmpfs (not root): simulate a full disk at fsync inside ptxlab's writer
                env = dict(env, PYTHONPATH=str(Path(__file__).parent / "enospc") + os.pathsep + env["PYTHONPATH"],
                           AUDIT_ENOSPC="1")
            p = subprocess.run(command(argv, sb), cwd=sb, env=env, capture_output=True, text=True, timeout=300)
            lost = verify(sb / "mnt") if (verify is not None and mounted) else ""
            if lost:
                p.stderr += f"\nAUDIT-LOSS: {lost}"
            return p
        finally:
            if mounted:
                subprocess.run(["umount", "-l", str(sb / "mnt")], capture_output=True)
    return run


def _fill_cache(mnt: Path) -> None:
    (mnt / "cache").mkdir()


def location_cases(rng: np.random.Generator) -> List[Case]:
    out: List[Case] = []
    comp = lambda v: ["-c", f"import ptxlab\nm = ptxlab.compile({KERNEL.replace('SALT', str(v))!r}, arch='sm_90a')\n"  # noqa: E731
                      "assert m.cubin[:4] == b'\\x7fELF'\n"]
    for name, cache in (("file", "{sandbox}/state.json"), ("under-a-file", "{sandbox}/state.json/c"),
                        ("proc", "/proc/ptxlab-cache"), ("empty-name", " "), ("nul", "\x01bad")):
        out.append(Case(f"cache-{name}", "cache and output locations", comp(int(rng.integers(1, 10**9))), ok_rc=(0,),
                        env={"PTXLAB_CACHE": cache}))
    for name, opts, fill in (("full", "size=64k", True), ("read-only", "size=1m,ro", False)):
        v = int(rng.integers(1, 10**9))
        out.append(Case(f"cache-{name}", "cache and output locations", [], ok_rc=(0,),
                        env={"PTXLAB_CACHE": "{sandbox}/mnt/cache"},
                        run=_with_mount(opts, fill, comp(v)[:], prepare=_fill_cache)))
        out.append(Case(f"export-{name}", "cache and output locations", [], ok_rc=(2,),
                        run=_with_mount(opts, fill, ["lab.py", "export", "--out", "{sandbox}/mnt/s.py"],
                                        prepare=lambda m: (m / "s.py").write_text("# the old submission\n"),
                                        verify=lambda m: "" if (m / "s.py").read_text() == "# the old submission\n"
                                        else "the old submission was replaced or truncated"),
                        check=_loss_marker))
        out.append(Case(f"dump-{name}", "cache and output locations", [], ok_rc=(2,),
                        run=_with_mount(opts, fill, ["lab.py", "--stage", "Z1", "--stages-dir", "{sandbox}/stages",
                                                     "--dump", "{sandbox}/mnt/dump"]),
                        setup=stages_dir("dumping")))
        out.append(Case(f"state-{name}", "cache and output locations", [], ok_rc=(0,) if fill else (2,),
                        env={"PTXLAB_STATE_FILE": "{sandbox}/mnt/state.json"},
                        run=_with_mount(opts, fill, ["lab.py", "--stage", "Z1", "--stages-dir", "{sandbox}/stages"]),
                        setup=stages_dir("passing")))
    damage = {"flip-cubin": lambda e: _flip(e / "k.cubin"), "truncate-ptx": lambda e: _trunc(e / "k.ptx"),
              "delete-sum": lambda e: (e / "k.sum").unlink(), "garbage-sum": lambda e: (e / "k.sum").write_text("x"),
              "empty-cubin": lambda e: (e / "k.cubin").write_bytes(b""), "delete-log": lambda e: (e / "k.log").unlink(),
              "sum-is-dir": lambda e: ((e / "k.sum").unlink(), (e / "k.sum").mkdir()),
              "binary-ptx": lambda e: (e / "k.ptx").write_bytes(b"\xff\xfe" * 50)}
    for name, fn in damage.items():
        v = int(rng.integers(1, 10**9))
        out.append(Case(f"cache-damaged-{name}", "cache and output locations", comp(v), ok_rc=(0,),
                        env={"PTXLAB_CACHE": "{sandbox}/cache"}, setup=_damaged_cache(v, fn)))
    sd = ["--stages-dir", "{sandbox}/stages"]
    for name, argv in (("dump-is-file", ["--stage", "Z1", *sd, "--dump", "{sandbox}/state.json"]),
                       ("dump-proc", ["--stage", "Z1", *sd, "--dump", "/proc/d"]),
                       ("out-dir", ["export", "--out", "{sandbox}"]), ("out-proc", ["export", "--out", "/proc/x.py"]),
                       ("trace-dir", ["time", "--stage", "Z1", "--trace", "{sandbox}"]),
                       ("png-missing-dir", ["time", "--stage", "Z1", "--png", "{sandbox}/no/t.png"])):
        out.append(Case(f"out-{name}", "cache and output locations", ["lab.py", *argv], setup=stages_dir("passing"),
                        env={"PTXLAB_STAGES_DIR": "{sandbox}/stages"}))
    for name, content in (("list", "[]"), ("results-list", '{"version": 1, "results": []}'),
                          ("bad-entry", '{"version": 1, "results": {"B1": {"emu": 5}}}'), ("truncated", '{"version": 1, "res'),
                          ("version", '{"version": 7}'), ("binary", "\udcff")):
        def setup(sb: Path, content=content) -> None:
            (sb / "state2.json").write_text(content, errors="surrogateescape")
        for cmd in (["status"], ["graduate", "--list"], ["--stage", "Z1", "--stages-dir", "{sandbox}/stages"]):
            out.append(Case(f"state-{name}-{cmd[0].strip('-')}", "cache and output locations", ["lab.py", *cmd],
                            ok_rc=(2,) if cmd[0] != "--stage" else (0,),
                            env={"PTXLAB_STATE_FILE": "{sandbox}/state2.json"},
                            setup=lambda sb, s=setup: (s(sb), stages_dir("passing")(sb)),
                            check=lambda sb, p, c=content: "" if (sb / "state2.json").read_text(errors="surrogateescape")
                            == c else "the damaged state file was overwritten"))
    return out


def _loss_marker(sb: Path, p) -> str:
    return p.stderr.split("AUDIT-LOSS: ", 1)[1].strip() if "AUDIT-LOSS: " in (p.stderr or "") else ""


def _flip(f: Path) -> None:
    b = bytearray(f.read_bytes())
    b[len(b) // 2] ^= 0x10
    f.write_bytes(bytes(b))


def _trunc(f: Path) -> None:
    f.write_bytes(f.read_bytes()[:40])


def _damaged_cache(v: int, fn):
    def setup(sb: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO), PTXLAB_CACHE=str(sb / "cache"))
        src = KERNEL.replace("SALT", str(v))
        subprocess.run(command(["-c", f"import ptxlab; ptxlab.compile({src!r}, arch='sm_90a')"], sb), env=env,
                       check=True, capture_output=True, timeout=120)
        entry = next(p.parent for p in (sb / "cache").glob("*/*/k.cubin"))
        fn(entry)
    return setup


# ------------------------------------------------------------------------------------------------ 8. huge sizes
def huge_cases() -> List[Case]:
    out: List[Case] = []
    for name, argv in (("desc-rows", ["desc", "smem", "0x4000404000010040", "--rows", "1000000000"]),
                       ("desc-chunks", ["desc", "smem", "0x4000404000010040", "--chunks", "1000000000"]),
                       ("time-gemv", ["time", "--problem", "nvfp4_gemv", "--shape", "7168,1000000,100"]),
                       ("time-gemm", ["time", "--problem", "nvfp4_gemm", "--shape", "65536,65536,65536,8"]),
                       ("cutlass-m", ["cutlass", "example_72b", "--m", "1048576", "--n", "128", "--k", "256"]),
                       ("export-splits", ["export", "--problem", "nvfp4_gemm", "--splits", str(10**30)]),
                       ("diff-limit", ["diff", "{sandbox}/good.npz", "--limit", str(10**18)])):
        out.append(Case(f"huge-{name}", "huge sizes", ["lab.py", *argv], ok_rc=(0,) if name == "diff-limit" else (2,),
                        setup=_dumps if name.startswith("diff") else None))
    pre = "dev = ptxlab.open_device('emu')\n"
    for name, body in (("empty", "dev.empty(2**62)"), ("to-device", "dev.to_device(np.zeros(1, np.uint8)); dev.empty(2**45)"),
                       ("memory-env", "dev.empty(2**36)"), ("to-host-shape", "dev.to_host(dev.empty(64), np.uint8, (10**12,))"),
                       ("launch-grid", "mod = ptxlab.compile('extern \"C\" __global__ void k(unsigned* o) { o[0] = 1; }', "
                                       "arch='sm_90a')\ndev.launch(mod, 'k', grid=(2**31 - 1, 65535, 65535), block=1024, "
                                       "args=[dev.empty(64)])"),
                       ("tensor-map", "dev.tensor_map(dev.empty(64), np.uint8, [2**40], [], [256])"),
                       ("loop-budget", "mod = ptxlab.compile('extern \"C\" __global__ void k(unsigned* o, unsigned n) { "
                                       "unsigned a = 0; for (unsigned i = 0; i < n; ++i) a = a * 3u + i; o[0] = a; }', "
                                       "arch='sm_90a')\ndev.launch(mod, 'k', grid=1024, block=1024, args=[dev.empty(64), "
                                       "np.uint32(4000000000)])")):
        env = {"PTXLAB_EMU_MEMORY": str(2**30)} if name == "memory-env" else (
            {"PTXLAB_EMU_BUDGET": "1e8"} if name == "loop-budget" else {})
        out.append(Case(f"huge-api-{name}", "huge sizes", api(pre + body), ok_rc=(3,), env=env, timeout=120))
    return out


def all_cases(seed: int) -> List[Case]:
    rng = np.random.default_rng(seed)
    cases = (cli_cases() + settings_cases() + api_cases() + kernel_cases() + kill_cases(rng) + concurrent_cases()
             + location_cases(rng) + huge_cases())
    seen: Dict[str, int] = {}
    for c in cases:                      # ids are made from the arguments: number the repeats
        c.id = c.id.replace("{sandbox}", "SB").replace("/", "_")
        n = seen.get(c.id, 0)
        seen[c.id] = n + 1
        if n:
            c.id = f"{c.id}-{n + 1}"
    return cases


SMOKE = ("cli-run-seed--1", "cli-diff-partial.npz", "env-PTXLAB_EMU_STALL_S-abc-stage", "api-grid-str",
         "api-empty-huge-then-use", "cache-file", "state-list-status", "cli-graduate-unknown")
