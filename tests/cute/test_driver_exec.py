"""The driver layer under ``lab.py exec``: a plain cuda-python program runs unmodified on the emulator; errors and
unimplemented calls are one clear line; the script's exit status is lab.py's."""
from __future__ import annotations

import importlib.util
import textwrap

import pytest

from cute_helpers import SCRIPTS, run_exec


def test_plain_driver_api_script_runs_bit_exact(rng):
    seed, n = int(rng.integers(1, 2**31)), int(rng.integers(300, 2000))
    p = run_exec(SCRIPTS / "driver_axpy.py", seed, n)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"axpy n={n}: bit-exact" in p.stdout


def _lab_time(*args):
    import subprocess
    import sys
    from cute_helpers import REPO
    return subprocess.run([sys.executable, str(REPO / "lab.py"), "time", "--gpu", "b200", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("use_torch", [False, True], ids=["driver", "torch"])
def test_lab_time_runs_the_script_as_exec_does_and_times_its_launches(rng, use_torch):
    """``lab.py time script.py`` prepares the process as ``lab.py exec`` does (the driver layer, and torch
    ``device="cuda"`` tensors when torch is installed) and predicts each launch."""
    if use_torch and importlib.util.find_spec("torch") is None:
        pytest.skip("no torch: the optional extra .[torch] is not installed")
    seed, n = int(rng.integers(1, 2**31)), int(rng.integers(300, 2000))
    p = _lab_time(SCRIPTS / "driver_axpy.py", seed, n, *(["--torch"] if use_torch else []))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert f"axpy n={n}: bit-exact" in p.stdout
    assert "axpy — PREDICTED on B200" in p.stdout, p.stdout[-3000:]
    assert "SASS sm_" in p.stdout, "a module the driver layer loaded is issued from its SASS (ptxlab/timing/sass_build.py)"


def test_lab_time_returns_the_scripts_exit_status(tmp_path, rng):
    """A script that launches (and is timed) and then exits 3: ``lab.py time`` prints the prediction and exits 3,
    as ``lab.py exec`` would."""
    n = int(rng.integers(300, 900))
    wrapper = tmp_path / "w.py"
    wrapper.write_text(f"import runpy, sys\nfrom cuda.bindings import driver  # a cuda-python script\nsys.argv = [{str(SCRIPTS / 'driver_axpy.py')!r}, '5', '{n}']\n"
                       f"try:\n    runpy.run_path(sys.argv[0], run_name='__main__')\nexcept SystemExit:\n    pass\nsys.exit(3)\n")
    p = _lab_time(wrapper)
    assert p.returncode == 3, p.stdout[-3000:] + p.stderr[-3000:]
    assert "PREDICTED on B200" in p.stdout


def _script(tmp_path, body: str):
    f = tmp_path / "s.py"
    f.write_text(textwrap.dedent(body))
    return f


def test_exit_status_is_the_scripts(tmp_path):
    p = run_exec(_script(tmp_path, "import sys; print('hi'); sys.exit(7)"))
    assert p.returncode == 7 and "hi" in p.stdout
    p = run_exec(_script(tmp_path, "raise ValueError('boom')"))
    assert p.returncode == 1 and "ValueError: boom" in p.stderr


def test_missing_script_is_a_usage_error(tmp_path):
    p = run_exec(tmp_path / "nope.py")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [f"error: script {tmp_path / 'nope.py'}: no such file"]


def test_errors_and_unimplemented_calls_name_the_call(tmp_path):
    body = """
        from cuda.bindings import driver as cu
        assert cu.cuInit(0)[0] == 0
        err, ctx = cu.cuCtxCreate(None, 0, 0)
        err, p = cu.cuMemAlloc(64)
        print("oob", cu.cuMemcpyDtoD(int(p) + 32, int(p), 64)[0].name)
        print("graph", cu.cuGraphCreate(0)[0].name)
        print("graph again", cu.cuGraphCreate(0)[0].name)
        print("no ctx", cu.cuMemAlloc(0)[0].name)
    """
    p = run_exec(_script(tmp_path, body))
    assert p.returncode == 0, p.stderr
    assert "oob CUDA_ERROR_INVALID_VALUE" in p.stdout
    assert "graph CUDA_ERROR_NOT_SUPPORTED" in p.stdout and "graph again CUDA_ERROR_NOT_SUPPORTED" in p.stdout
    lines = p.stderr.strip().splitlines()
    assert any(ln.startswith("ptxlab driver: cuMemcpyDtoD: device range") and "past the end of" in ln for ln in lines)
    graph = [ln for ln in lines if "cuGraphCreate is not implemented" in ln]
    assert len(graph) == 1, lines                     # once per process, not per call
    assert any("cuMemAlloc(0): the size must be > 0" in ln for ln in lines)


def test_kernel_fault_is_reported_and_the_context_is_lost(tmp_path):
    body = r'''
        import numpy as np
        from cuda.bindings import driver as cu
        PTX = """.version 8.0
        .target sm_90
        .address_size 64
        .visible .entry bad(.param .u64 p)
        {
          .reg .b64 rd<3>; .reg .b32 r<2>;
          ld.param.u64 rd1, [p]; add.u64 rd2, rd1, 4096; mov.u32 r1, 5; st.global.u32 [rd2], r1; ret;
        }
        """
        cu.cuInit(0); cu.cuCtxCreate(None, 0, 0)
        mod = cu.cuModuleLoadData(PTX.encode() + b"\0")[1]
        fn = cu.cuModuleGetFunction(mod, b"bad")[1]
        buf = cu.cuMemAlloc(16)[1]
        arg = np.array([int(buf)], np.uint64); ptrs = np.array([arg.ctypes.data], np.uint64)
        print("launch", cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 0, ptrs.ctypes.data, 0)[0].name)
        print("sync", cu.cuCtxSynchronize()[0].name)
    '''
    p = run_exec(_script(tmp_path, body))
    assert "launch CUDA_ERROR_LAUNCH_FAILED" in p.stdout and "sync CUDA_ERROR_LAUNCH_FAILED" in p.stdout
    assert "the emulator stopped a kernel" in p.stderr and "kernel : bad" in p.stderr
    assert "st.global.u32" in p.stderr


def test_launch_geometry_error_is_invalid_value_naming_the_call(tmp_path):
    """A launch the device refuses (block of 2048 threads) is CUDA_ERROR_INVALID_VALUE with one line naming the call
    (issue 26 audit: it was a NameError inside the driver layer, CUDA_ERROR_UNKNOWN and an internal traceback)."""
    body = f"""
        import numpy as np
        from cuda.bindings import driver as cu
        PTX = b".version 8.0\\n.target sm_90\\n.address_size 64\\n.visible .entry k(.param .u64 p) {{ ret; }}\\n\\0"
        cu.cuInit(0); cu.cuCtxCreate(None, 0, 0)
        fn = cu.cuModuleGetFunction(cu.cuModuleLoadData(PTX)[1], b"k")[1]
        arg = np.array([0], np.uint64); ptrs = np.array([arg.ctypes.data], np.uint64)
        err = cu.cuLaunchKernel(fn, 1, 1, 1, 2048, 1, 1, 0, 0, ptrs.ctypes.data, 0)[0]
        print("launch", err.name)
    """
    p = run_exec(_script(tmp_path, body))
    assert p.returncode == 0, p.stderr
    assert "launch CUDA_ERROR_INVALID_VALUE" in p.stdout, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    assert "ptxlab driver: cuLaunchKernel: kernel 'k': block (2048, 1, 1)" in p.stderr, p.stderr


def test_a_stream_handle_no_call_returned_is_invalid_handle(tmp_path):
    """A launch on, or a synchronisation of, a stream handle that cuStreamCreate never returned (or that was destroyed)
    is CUDA_ERROR_INVALID_HANDLE naming the call; NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD and a created stream
    work (issue 26 audit: any integer was accepted as a stream)."""
    body = """
        import numpy as np
        from cuda.bindings import driver as cu
        PTX = b".version 8.0\\n.target sm_90\\n.address_size 64\\n.visible .entry k(.param .u64 p) { ret; }\\n\\0"
        cu.cuInit(0); cu.cuCtxCreate(None, 0, 0)
        fn = cu.cuModuleGetFunction(cu.cuModuleLoadData(PTX)[1], b"k")[1]
        arg = np.array([0], np.uint64); ptrs = np.array([arg.ctypes.data], np.uint64)
        made = cu.cuStreamCreate(0)[1]
        gone = cu.cuStreamCreate(0)[1]
        cu.cuStreamDestroy(gone)
        for name, st in (("null", 0), ("legacy", 1), ("per-thread", 2), ("made", made), ("gone", gone), ("wild", 12345)):
            print(name, cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, st, ptrs.ctypes.data, 0)[0].name,
                  cu.cuStreamSynchronize(st)[0].name, cu.cuStreamQuery(st)[0].name)
    """
    p = run_exec(_script(tmp_path, body))
    assert p.returncode == 0, p.stderr
    got = dict(ln.split(" ", 1) for ln in p.stdout.strip().splitlines())
    ok, bad = " ".join(["CUDA_SUCCESS"] * 3), " ".join(["CUDA_ERROR_INVALID_HANDLE"] * 3)
    assert got == {"null": ok, "legacy": ok, "per-thread": ok, "made": ok, "gone": bad, "wild": bad}, got
    for call in ("cuLaunchKernel", "cuStreamSynchronize", "cuStreamQuery"):
        assert f"ptxlab driver: {call}: expected a stream handle, got 0x3039" in p.stderr, p.stderr


def test_a_scripts_traceback_starts_at_the_script_as_pythons_does(tmp_path):
    """An uncaught exception / SyntaxError of the script prints as ``python script.py`` prints it: from the script's
    first frame, without lab.py exec's own and runpy's frames (issue 26 audit: four internal frames came first)."""
    p = run_exec(_script(tmp_path, "def f():\n    raise ValueError('boom')\nf()\n"))
    assert p.returncode == 1
    lines = p.stderr.strip().splitlines()
    assert lines[0] == "Traceback (most recent call last):" and lines[1].startswith(f'  File "{tmp_path / "s.py"}", line 3')
    assert lines[-1] == "ValueError: boom" and "runpy" not in p.stderr and "exec_cli" not in p.stderr, p.stderr
    p = run_exec(_script(tmp_path, "x = (\n"))
    assert p.returncode == 1 and "Traceback" not in p.stderr and "runpy" not in p.stderr, p.stderr
    assert p.stderr.strip().splitlines()[-1].startswith("SyntaxError: "), p.stderr
