"""``lab.py time`` usage errors (issue 13 review), each through a subprocess: exit 2, exactly one ``error: ...`` line
on stderr, no traceback, and nothing emulated first (no table on stdout)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from repo_root import REPO


def _time(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), PTXLAB_DEBUG="")
    env.pop("PTXLAB_TIMING", None)
    return subprocess.run([sys.executable, str(REPO / "lab.py"), "time", *args], capture_output=True, text=True,
                          env=env, cwd=cwd or REPO, timeout=120)


def _usage_error(p: subprocess.CompletedProcess, *needles: str) -> str:
    out = p.stdout + p.stderr
    assert p.returncode == 2, out
    assert "Traceback" not in out, out
    assert "PREDICTED" not in p.stdout, out           # refused before any emulation
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.mark.parametrize("args,needles", [
    (("--problem", "nvfp4_gemm", "--shape", "128,7168"), ("--shape 128,7168", "M,N,K,L")),
    (("--problem", "nvfp4_gemv", "--shape", "128,7168,16384,1"), ("M,K,L",)),
    (("--problem", "nvfp4_gemv", "--shape", "512,x,2"), ("--shape 512,x,2",)),
    (("--problem", "nvfp4_gemv"), ("needs --shape M,K,L",)),
    (("--gpu", "a100", "--problem", "nvfp4_gemv", "--shape", "512,4096,2"), ("a100", "h100", "h200", "b200")),
    (("--problem", "nvfp4_gemv", "--shape", "512,4096,2", "--sample", "full"), ("--sample full",)),
    (("--stage", "ZZ"), ("unknown stage id(s) ZZ",)),
    (("no_such_script.py",), ("no_such_script.py",)),
])
def test_time_usage_errors(args, needles):
    _usage_error(_time(*args), *needles)


@pytest.mark.parametrize("opt,name", [("--trace", "t.json"), ("--png", "t.png")])
def test_time_output_into_missing_directory_is_refused_up_front(tmp_path, opt, name):
    out = tmp_path / "missing" / name
    _usage_error(_time("--problem", "nvfp4_gemv", "--shape", "512,4096,2", opt, str(out)), str(out.parent),
                 "does not exist")
    assert not out.parent.exists()


@pytest.mark.parametrize("opt", ["--trace", "--png"])
def test_time_output_to_a_directory_is_refused(tmp_path, opt):
    _usage_error(_time("--problem", "nvfp4_gemv", "--shape", "512,4096,2", opt, str(tmp_path)), "is a directory")
    assert not tmp_path.with_suffix(".png").exists()


def test_png_is_written_to_the_path_given(tmp_path):
    """A name without an extension is written as given (matplotlib would append .png) and reported as written."""
    from ptxlab.timing import trace_export
    from test_timing import _pipe

    t, _, _ = _pipe(stages=2, nctas=1, work=1, chunks=2)
    p = trace_export.write_png(t, tmp_path / "timeline")
    assert p == tmp_path / "timeline" and p.read_bytes()[:4] == b"\x89PNG"
    assert not (tmp_path / "timeline.png").exists()


def test_compare_two_designs_side_by_side():
    """``lab.py time --compare A B``: both predictions, their bounds and waits, and which is faster by how much."""
    p = _time("--gpu", "h100", "--compare", "nvfp4_gemv:512,4096,2:4,2,2", "nvfp4_gemv:512,4096,2:8,1,2")
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert "PREDICTED on H100" in out and "nvfp4_gemv:512,4096,2:4,2,2" in out and "bound" in out
    assert "is predicted" in out and "x faster than" in out and "warps wait on" in out or "faster" in out


@pytest.mark.parametrize("target,needle", [("nvfp4_gemv:512,4096", "takes M,K,L"), ("nope:1,2,3", "PROBLEM"),
                                           ("missing.py", "no such file")])
def test_compare_bad_targets_are_usage_errors(target, needle):
    _usage_error(_time("--compare", target, "nvfp4_gemv:512,4096,2"), needle)


@pytest.mark.parametrize("target,needle", [
    ("nvfp4_gemv:512,4096,2:x,y", "--config x,y"),                 # was exit 4 (internal error: ValueError)
    ("nvfp4_gemv:512,200,2", "multiple of 32"),                    # was exit 4 (make_gemv's ValueError)
    ("nvfp4_gemm:100,256,256,1", "multiple of the tile M"),        # was exit 4
    ("nvfp4_gemv:100000,100000,100", "too large"),                 # was an allocation of the whole problem first
    ("nvfp4_gemv:512,4096,2:0,0,0", "out of range"),               # was an NVRTC compile error
    ("nvfp4_gemm:128,256,256,1:4,2,2", "nvfp4_gemv only"),         # was accepted and ignored
    ("nvfp4_gemv:512,4096,2:4,2,2:9", "PROBLEM:SHAPE[:CONFIG]")])  # was accepted, ':9' ignored
def test_compare_targets_get_the_problem_checks(target, needle):
    """A ``--compare`` PROBLEM:SHAPE[:CONFIG] target is checked as ``--problem/--shape/--config`` are (issue 26 audit)."""
    _usage_error(_time("--compare", "nvfp4_gemv:512,4096,2", target), needle)


@pytest.mark.parametrize("args,needle", [
    (["--compare", "nvfp4_gemv:512,4096,2", "nvfp4_gemv:512,4096,2", "--stage", "B1"], "--compare and --stage"),
    (["--compare", "nvfp4_gemv:512,4096,2", "nvfp4_gemv:512,4096,2", "s.py"], "--compare and script s.py"),
    (["--stage", "B1", "--problem", "nvfp4_gemv", "--shape", "512,4096,2"], "--problem and --stage"),
    (["--compare", "nvfp4_gemv:512,4096,2", "nvfp4_gemv:512,4096,2", "--sensitivity"], "not with --compare"),
    (["--compare", "nvfp4_gemv:512,4096,2", "nvfp4_gemv:512,4096,2", "--trace", "t.json"], "not with --compare"),
    (["--stage", "B1", "--shape", "512,4096,2"], "--shape applies to --problem only")])
def test_an_option_that_would_be_ignored_is_a_usage_error(args, needle):
    """Two modes at once (--compare / --problem / --stage / a script), or an option the chosen mode ignores, is refused
    before anything runs (issue 26 audit: the first mode won and the rest was ignored without a word)."""
    _usage_error(_time(*args), needle)


def test_time_problem_gemm_times_the_production_default(capsys, monkeypatch):
    """`lab.py time --problem nvfp4_gemm` predicts the GEMM users get (the default variant, cluster), and
    PTXLAB_GEMM_VARIANT selects another, as it does for the production call."""
    from ptxlab.lab.cli import main

    monkeypatch.delenv("PTXLAB_GEMM_VARIANT", raising=False)
    assert main(["time", "--problem", "nvfp4_gemm", "--shape", "128,512,512,1", "--gpu", "b200"]) == 0
    assert "nvfp4_gemm_cluster — PREDICTED on B200" in capsys.readouterr().out
    monkeypatch.setenv("PTXLAB_GEMM_VARIANT", "1sm")
    assert main(["time", "--problem", "nvfp4_gemm", "--shape", "128,512,512,1", "--gpu", "b200"]) == 0
    out = capsys.readouterr().out
    assert "PREDICTED on B200" in out and "nvfp4_gemm_cluster" not in out


def test_time_of_a_script_uninstalls_the_driver_layer_after_it(tmp_path, capsys, rng):
    """`lab.py time script.py` prepares the process as `lab.py exec` does (the CUDA driver layer) for the script only:
    afterwards the layer is gone, the environment is as before, and NVRTC compiles in the same process (with the
    layer left installed, a later NVRTC compile crashed: NVRTC calls the loaded driver's cuGetExportTable)."""
    import os
    from ptxlab import driver
    from ptxlab.lab.cli import main
    from ptxlab.toolchain import backends

    before = {k: os.environ.get(k) for k in ("CUTE_DSL_LIBS", "CUTE_DSL_KEEP", "CUTE_DSL_DUMP_DIR")}
    n = int(rng.integers(64, 512))
    script = tmp_path / "s.py"
    script.write_text("import numpy as np, ptxlab\n"
                      "from ptxlab.driver import installed\n"
                      "from ptxlab.timing import synthetic as S\n"
                      "assert installed()\n"
                      "mod = ptxlab.compile(S.STREAM, arch='sm_90a', name='s.cu')\n"
                      "dev = ptxlab.open_device('emu')\n"
                      f"x = dev.to_device(np.ones(4 * {n}, np.float32)); y = dev.empty(16 * {n})\n"
                      f"dev.launch(mod, 'stream', grid=(4,1,1), block=(256,1,1), args=[x, y, np.int32({n})])\n")
    assert main(["time", "--gpu", "b200", str(script)]) == 0
    assert "PREDICTED on B200" in capsys.readouterr().out
    assert not driver.installed()
    assert {k: os.environ.get(k) for k in before} == before
    a = int(rng.integers(1, 1 << 20))
    raw = backends.nvrtc_compile(f'extern "C" __global__ void k(int *x) {{ x[threadIdx.x] += {a}; }}', "k.cu",
                                 ["-arch=sm_100a"])
    assert raw.ok and raw.cubin[:4] == b"\x7fELF", raw.log


def test_gemv_config_lengths():
    """--config takes every entry the kernel has: the flat variant's sixth (row order, GEMV_FLAT_RR; the H100 table
    uses it) is accepted, a seventh or a sixth register-variant value is refused (gemv4 found the sixth refused)."""
    from ptxlab.errors import UsageError
    from ptxlab.timing import cli
    cli._check_problem("nvfp4_gemv", (512, 4096, 2), "flat,16,2,1,2,1")
    cli._check_problem("nvfp4_gemv", (512, 4096, 2), "4,2,2,1,0")
    for bad in ("flat,16,2,1,2,1,1", "4,2,2,1,0,1"):
        with pytest.raises(UsageError, match="out of range"):
            cli._check_problem("nvfp4_gemv", (512, 4096, 2), bad)
