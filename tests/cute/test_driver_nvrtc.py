"""The driver layer is harmless to NVRTC in the same process: NVRTC (CUDA 13) finds the stand-in ``libcuda.so.1``
already loaded, calls ``cuInit(0)`` and then ``dlsym(.., "cuGetExportTable")`` with no NULL check; without that
export the next ``nvrtcCompileProgram`` crashed (SIGSEGV; ptxlab/driver/install.py ``_PROBED``)."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap

from cute_helpers import REPO

_COMPILE = """
from ptxlab.toolchain import backends
r = backends.nvrtc_compile(SRC, "k.cu", ["-arch=sm_100a"])
assert r.ok, r.log
import hashlib
print("ptx", hashlib.sha256(r.ptx.encode()).hexdigest(), "cubin", hashlib.sha256(r.cubin).hexdigest())
"""


def _source(rng) -> str:
    a, b = (int(x) for x in rng.integers(1, 1 << 20, 2))
    return (f'extern "C" __global__ void k(unsigned *x) {{ unsigned i = threadIdx.x + blockIdx.x * blockDim.x; '
            f'x[i] = x[i] * {a}u + (i ^ {b}u); }}')


def test_nvrtc_compiles_after_install_in_the_same_process(rng, tmp_path):
    """install(), a driver call through cuda-python, then NVRTC in one fresh process: same PTX and cubin as NVRTC with
    no layer (this pytest process), and no line from the layer (cuGetExportTable fails quietly)."""
    src = _source(rng)
    script = tmp_path / "after_install.py"
    script.write_text(textwrap.dedent(f"""
        SRC = {src!r}
        import ptxlab.driver
        ptxlab.driver.install()
        from cuda.bindings import driver as cu
        assert cu.cuInit(0)[0] == cu.CUresult.CUDA_SUCCESS
        assert cu.cuDeviceGetCount() == (cu.CUresult.CUDA_SUCCESS, 1)     # the emulated B200 answers
    """) + _COMPILE)
    p = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    assert "ptxlab driver:" not in p.stderr, p.stderr

    from ptxlab.toolchain import backends
    r = backends.nvrtc_compile(src, "k.cu", ["-arch=sm_100a"])
    assert r.ok, r.log
    want = f"ptx {hashlib.sha256(r.ptx.encode()).hexdigest()} cubin {hashlib.sha256(r.cubin).hexdigest()}"
    assert p.stdout.strip().splitlines()[-1] == want


def test_uninstall_gives_the_process_back(tmp_path):
    """uninstall(): cuda-python and open_device see no GPU (CUDA_ERROR_NOT_INITIALIZED: no driver), the environment,
    cuda.bindings.runtime and torch are as before; install() again serves the driver calls again."""
    script = tmp_path / "uninstall.py"
    script.write_text(textwrap.dedent("""
        import importlib.util, os
        import ptxlab.driver
        from ptxlab import open_device
        from cuda.bindings import driver as cu, runtime as rt
        keys = ("CUTE_DSL_LIBS", "CUTE_DSL_KEEP", "CUTE_DSL_DUMP_DIR", "CUTE_DSL_LINEINFO")
        env0, count0 = {k: os.environ.get(k) for k in keys}, rt.cudaGetDeviceCount
        torch = None
        if importlib.util.find_spec("torch") is not None:
            import torch
            cuda0 = torch.cuda.is_available
        from ptxlab.lab.exec_cli import prepare
        for round in (1, 2):
            prepare()
            assert cu.cuInit(0)[0] == cu.CUresult.CUDA_SUCCESS
            assert cu.cuDeviceGetCount() == (cu.CUresult.CUDA_SUCCESS, 1)
            assert "emulated" in open_device("auto").gpu_name
            assert rt.cudaGetDeviceCount is not count0 and os.environ["CUTE_DSL_LIBS"]
            assert torch is None or torch.cuda.is_available()
            ptxlab.driver.uninstall()
            assert not ptxlab.driver.installed()
            assert cu.cuInit(0)[0] == cu.CUresult.CUDA_ERROR_NOT_INITIALIZED
            assert type(open_device("auto")).__name__ == "EmuDevice", open_device("auto")
            assert {k: os.environ.get(k) for k in keys} == env0 and rt.cudaGetDeviceCount is count0
            assert torch is None or torch.cuda.is_available is cuda0
            print("round", round, "ok")
    """))
    p = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    assert p.stdout.split() == ["round", "1", "ok", "round", "2", "ok"], p.stdout
