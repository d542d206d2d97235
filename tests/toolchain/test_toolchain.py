"""Toolchain tests: NVRTC / nvJitLink compile, cache, errors, resources, debug switches (CPU only)."""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab import debug
from ptxlab.errors import CompileError, PtxlabError
from ptxlab.toolchain import cutlass_include_dir, nvdisasm_path
from ptxlab.toolchain.diagnostics import ptx_line_to_source
from ptxlab.toolchain.resources import parse_ptxas_log

ELF = b"\x7fELF"

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i] + %(salt)d.0f;
}
"""


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty compile cache and no debug flags, so results do not depend on the user's environment."""
    monkeypatch.setenv("PTXLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("PTXLAB_DEBUG", raising=False)
    return tmp_path / "cache"


def _src(rng: np.random.Generator) -> str:
    return SAXPY % {"salt": int(rng.integers(1, 1 << 20))}


@pytest.mark.parametrize("arch", ["sm_100a", "sm_90a"])
def test_cuda_source_to_ptx_and_cubin(arch: str, rng: np.random.Generator, fresh_cache: Path) -> None:
    mod = ptxlab.compile(_src(rng), arch=arch)
    assert re.search(rf"^\.target\s+{arch}\b", mod.ptx, re.M)
    assert mod.cubin[:4] == ELF
    assert mod.kernels == ["saxpy"]
    assert (mod.arch, mod.name) == (arch, "k.cu")
    assert f".target\t{arch}" in mod.sass() or f".target {arch}" in mod.sass()
    assert "FFMA" in mod.sass() or "FADD" in mod.sass()
    assert not mod.cache_hit


def test_editing_an_included_header_recompiles(rng: np.random.Generator, fresh_cache: Path, tmp_path: Path) -> None:
    """The cache key covers the headers under include_dirs: an edited header gives a new module, not a stale hit."""
    inc = tmp_path / "inc"
    inc.mkdir()
    hdr = inc / "k.cuh"
    c1, c2 = (int(v) for v in rng.integers(1 << 20, 1 << 30, 2))
    hdr.write_text(f"#define KCONST {c1}u\n")
    src = 'extern "C" __global__ void kc(unsigned* y) { y[threadIdx.x] = KCONST; }\n'
    src = '#include "k.cuh"\n' + src
    first = ptxlab.compile(src, arch="sm_90a", include_dirs=[inc])
    assert ptxlab.compile(src, arch="sm_90a", include_dirs=[inc]).cache_hit
    hdr.write_text(f"#define KCONST {c2 if c2 != c1 else c1 + 1}u\n")
    second = ptxlab.compile(src, arch="sm_90a", include_dirs=[inc])
    assert not second.cache_hit and second.key != first.key
    assert str(c1) in first.ptx and str(c1) not in second.ptx


@pytest.mark.parametrize("arch", ["sm_100a", "sm_90a"])
def test_ptx_text_input_goes_through_nvjitlink(arch: str, rng: np.random.Generator, fresh_cache: Path) -> None:
    ptx = ptxlab.compile(_src(rng), arch=arch).ptx
    mod = ptxlab.compile(ptx, arch=arch, name="saxpy.ptx")
    assert mod.ptx == ptx and mod.source == ptx
    assert mod.cubin[:4] == ELF and mod.kernels == ["saxpy"]
    assert "-verbose" in mod.options  # nvJitLink option set, not NVRTC's
    assert mod.resources["saxpy"].registers > 0
    # detected from the .version/.target header even without a .ptx name
    assert ptxlab.compile(ptx, arch=arch).name == "k.ptx"


def test_cache_hit_and_miss(rng: np.random.Generator, fresh_cache: Path) -> None:
    src = _src(rng)
    first = ptxlab.compile(src, arch="sm_100a")
    second = ptxlab.compile(src, arch="sm_100a")
    assert (first.cache_hit, second.cache_hit) == (False, True)
    assert second.cubin == first.cubin and second.ptx == first.ptx and second.key == first.key
    assert second.resources == first.resources
    assert any(fresh_cache.rglob("k.cubin"))
    assert not ptxlab.compile(src, arch="sm_90a").cache_hit  # arch is in the key
    assert not ptxlab.compile(src, arch="sm_100a", options=["-DFOO=1"]).cache_hit  # options too


def test_compile_error_shows_file_line_and_source(rng: np.random.Generator, fresh_cache: Path) -> None:
    line = int(rng.integers(3, 9))
    bad = "\n" * (line - 1) + "extern \"C\" __global__ void k(int* x) { x[0] = undefined_thing_%d; }\n" % line
    with pytest.raises(CompileError) as ei:
        ptxlab.compile(bad, name="bad.cu")
    msg = str(ei.value)
    assert f"bad.cu:{line}" in msg
    assert f"undefined_thing_{line}; }}" in msg  # the offending source line is quoted
    assert "is undefined" in msg  # the compiler message
    assert isinstance(ei.value, PtxlabError)


def test_inline_asm_error_is_mapped_to_the_source_line(fresh_cache: Path) -> None:
    src = 'extern "C" __global__ void k(int* x) {\n  int y;\n  asm volatile("tcgen05.bogus.b32 %0, 1;" : "=r"(y));\n  x[0] = y;\n}\n'
    with pytest.raises(CompileError) as ei:
        ptxlab.compile(src, name="asm.cu")
    msg = str(ei.value)
    assert "asm.cu:3" in msg and "tcgen05.bogus.b32" in msg and "Unknown modifier '.bogus'" in msg


def test_ptx_error_shows_ptx_line(fresh_cache: Path) -> None:
    ptx = ".version 8.8\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n  .reg .b32 %r<3>;\n  add.s32 %r1, %r2, %r9;\n  ret;\n}\n"
    with pytest.raises(CompileError) as ei:
        ptxlab.compile(ptx, name="bad.ptx")
    msg = str(ei.value)
    assert "bad.ptx:7" in msg and "add.s32 %r1, %r2, %r9;" in msg and "Unknown symbol '%r9'" in msg


def test_bad_arch_and_conflicting_options(fresh_cache: Path) -> None:
    with pytest.raises(CompileError, match="not a real SM target"):
        ptxlab.compile(SAXPY % {"salt": 1}, arch="compute_100a")
    with pytest.raises(CompileError, match="conflicts with arch"):
        ptxlab.compile(SAXPY % {"salt": 1}, options=["-arch=sm_80"])
    with pytest.raises(CompileError, match="options must be a sequence"):
        ptxlab.compile(SAXPY % {"salt": 1}, options="-lineinfo")
    with pytest.raises(CompileError, match="include dir"):
        ptxlab.compile(SAXPY % {"salt": 1}, include_dirs=["/nonexistent/ptxlab"])


def test_resources_static_shared_and_registers(rng: np.random.Generator, fresh_cache: Path) -> None:
    n = int(rng.integers(1, 3000))
    src = r"""
extern "C" __global__ void sm(float* x) {
  __shared__ float s[%d];
  for (int i = threadIdx.x; i < %d; i += blockDim.x) s[i] = x[i];
  __syncthreads();
  x[threadIdx.x] = s[(threadIdx.x * 7) %% %d] * 2.0f;
}
extern "C" __global__ void nosm(float* x) { x[threadIdx.x] += 1.0f; }
""" % (n, n, n)
    for arch in ("sm_100a", "sm_90a"):
        res = ptxlab.compile(src, arch=arch).resources
        assert set(res) == {"sm", "nosm"}
        assert res["sm"].shared_bytes == 4 * n
        assert res["nosm"].shared_bytes == 0
        assert res["sm"].registers > 0 and res["nosm"].registers > 0
        assert res["sm"].spill_stores == 0 and res["sm"].barriers == 1


def test_resources_stack_frame(rng: np.random.Generator, fresh_cache: Path) -> None:
    n = int(rng.integers(300, 600))  # too big for registers whatever the compiler version: needs a stack frame
    src = r"""
extern "C" __global__ void stk(float* x, int j) {
  volatile float a[%d];
  for (int i = 0; i < %d; ++i) a[i] = x[i];
  a[j] = 1.0f;
  x[0] = a[(j * 7) %% %d];
}
""" % (n, n, n)
    r = ptxlab.compile(src).resources["stk"]
    assert r.stack_bytes >= 4 * n
    assert "STL" in ptxlab.compile(src).sass()


def test_parse_ptxas_log_multiple_kernels() -> None:
    log = (
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'a' for 'sm_100a'\n"
        "ptxas info    : Function properties for a\n"
        "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 400 bytes cmem[0]\n"
        "ptxas info    : Compiling entry function 'b' for 'sm_100a'\n"
        "ptxas info    : Function properties for b\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 6 registers, used 0 barriers\n"
        "info    : used 99 registers\n"
    )
    r = parse_ptxas_log(log)
    assert (r["a"].registers, r["a"].shared_bytes, r["a"].stack_bytes) == (40, 2048, 8)
    assert (r["a"].spill_stores, r["a"].spill_loads, r["a"].cmem0_bytes) == (4, 12, 400)
    assert (r["b"].registers, r["b"].shared_bytes, r["b"].barriers) == (6, 0, 0)


def test_debug_dump_lineinfo_tmem_check_verbose(
    rng: np.random.Generator, fresh_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    dump = tmp_path / "dump"
    monkeypatch.setenv("PTXLAB_DUMP_DIR", str(dump))
    monkeypatch.setenv("PTXLAB_DEBUG", "dump_ptx,dump_sass,lineinfo,tmem_check,verbose")
    mod = ptxlab.compile(_src(rng), arch="sm_100a", name="dbg.cu")
    assert "-lineinfo" in mod.options and "-g-tmem-access-check" in mod.options
    assert ".loc" in mod.ptx
    ptx_files, sass_files = sorted(dump.glob("dbg.sm_100a.*.ptx")), sorted(dump.glob("dbg.sm_100a.*.sass"))
    assert len(ptx_files) == 1 and len(sass_files) == 1
    assert ptx_files[0].read_text() == mod.ptx and "saxpy" in sass_files[0].read_text()
    assert set(mod.dump_paths) == {ptx_files[0], sass_files[0]}
    err = capsys.readouterr().err
    assert "dbg.cu for sm_100a: compiled" in err and "Used" in err and "registers" in err
    # tmem_check is sm_100-family only: silently not passed for sm_90a
    mod90 = ptxlab.compile(_src(rng), arch="sm_90a")
    assert "-g-tmem-access-check" not in mod90.options and "-lineinfo" in mod90.options
    monkeypatch.setenv("PTXLAB_DEBUG", "")
    assert "-lineinfo" not in ptxlab.compile(_src(rng), arch="sm_100a").options


def test_debug_flag_parsing() -> None:
    assert debug.parse_flags("dump_ptx, LINEINFO") == {"dump_ptx", "lineinfo"}
    assert debug.parse_flags("all") == debug.KNOWN_FLAGS
    assert debug.parse_flags("") == frozenset()
    with pytest.raises(PtxlabError, match="unknown debug flag 'nope'"):
        debug.parse_flags("dump_ptx,nope")
    flags = debug.current({"PTXLAB_DEBUG": "verbose", "PTXLAB_DUMP_DIR": "/x/y"})
    assert flags.verbose and not flags.dump_ptx and flags.dump_dir == Path("/x/y")
    assert debug.current({}).dump_dir == Path("ptxlab_dump")


def test_ptx_line_to_source_uses_loc() -> None:
    ptx = '.loc 1 7 3\nadd.s32 %r1, %r2, %r3;\n.loc 1 9 1\nret;\n.file 1 "/a/k.cu"\n'
    assert ptx_line_to_source(ptx, 2) == ("/a/k.cu", 7)
    assert ptx_line_to_source(ptx, 4) == ("/a/k.cu", 9)
    assert ptx_line_to_source("ret;\n", 1) is None


def test_installed_tool_paths() -> None:
    inc = cutlass_include_dir()
    assert (inc / "cute" / "tensor.hpp").is_file() and (inc / "cutlass" / "cutlass.h").is_file()
    exe = nvdisasm_path()
    assert exe.is_file() and os.access(exe, os.X_OK)


def test_include_dirs_are_passed(tmp_path: Path, rng: np.random.Generator, fresh_cache: Path) -> None:
    val = int(rng.integers(1, 1 << 30))
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "lab_const.h").write_text(f"#define LAB_CONST {val}u\n")
    src = '#include "lab_const.h"\nextern "C" __global__ void k(unsigned* x) { x[0] = LAB_CONST; }\n'
    mod = ptxlab.compile(src, include_dirs=[tmp_path / "inc", cutlass_include_dir()])
    assert f"-I{cutlass_include_dir().resolve()}" in mod.options
    assert str(val) in mod.ptx or hex(val) in mod.ptx.lower()


def _cu(res: tuple) -> tuple:
    from cuda.bindings import driver

    err, *rest = res if isinstance(res, tuple) else (res,)
    assert err == driver.CUresult.CUDA_SUCCESS, f"CUDA driver call failed: {err}"
    return tuple(rest)


@pytest.mark.gpu
def test_cubin_loads_and_runs_on_gpu(rng: np.random.Generator, fresh_cache: Path) -> None:
    """The cubin from ptxlab.compile runs on the local GPU (plain driver API, independent of ptxlab.device)."""
    import ctypes

    from cuda.bindings import driver

    _cu(driver.cuInit(0))
    (dev,) = _cu(driver.cuDeviceGet(0))
    attr = driver.CUdevice_attribute
    (major,) = _cu(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    (minor,) = _cu(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    arch = {(9, 0): "sm_90a", (10, 0): "sm_100a"}.get((major, minor))
    if arch is None:
        pytest.skip(f"no GPU: needs sm_90 or sm_100, this GPU is sm_{major}{minor}")
    salt = int(rng.integers(1, 1 << 10))
    mod = ptxlab.compile(SAXPY % {"salt": salt}, arch=arch)
    (ctx,) = _cu(driver.cuDevicePrimaryCtxRetain(dev))
    _cu(driver.cuCtxSetCurrent(ctx))
    try:
        (cumod,) = _cu(driver.cuModuleLoadData(mod.cubin))
        (fn,) = _cu(driver.cuModuleGetFunction(cumod, b"saxpy"))
        n = int(rng.integers(1000, 5000))
        a = np.float32(rng.integers(-8, 9))
        x = rng.integers(-1000, 1000, n).astype(np.float32)  # small integers: every result is exact in fp32
        y = rng.integers(-1000, 1000, n).astype(np.float32)
        (dx,) = _cu(driver.cuMemAlloc(x.nbytes))
        (dy,) = _cu(driver.cuMemAlloc(y.nbytes))
        _cu(driver.cuMemcpyHtoD(dx, x.ctypes.data, x.nbytes))
        _cu(driver.cuMemcpyHtoD(dy, y.ctypes.data, y.nbytes))
        params = ((a, dx, dy, np.int32(n)), (ctypes.c_float, None, None, ctypes.c_int))
        _cu(driver.cuLaunchKernel(fn, (n + 127) // 128, 1, 1, 128, 1, 1, 0, 0, params, 0))
        _cu(driver.cuCtxSynchronize())
        out = np.full(n, np.nan, dtype=np.float32)  # poisoned
        _cu(driver.cuMemcpyDtoH(out.ctypes.data, dy, out.nbytes))
        np.testing.assert_array_equal(out, a * x + y + np.float32(salt))
        _cu(driver.cuMemFree(dx))
        _cu(driver.cuMemFree(dy))
        _cu(driver.cuModuleUnload(cumod))
    finally:
        _cu(driver.cuDevicePrimaryCtxRelease(dev))


def test_nvrtc_leaves_cpythons_shared_bytes_alone(rng: np.random.Generator, tmp_path: Path) -> None:
    """An empty NVRTC log has size 1, and ``b" " * 1`` is the constant itself -- CPython's one shared ``b" "`` when the
    module was compiled from source: NVRTC wrote the log's NUL there, and every one-byte ``b" "`` of the process
    (print's separator included) became NUL. A fresh process compiles ptxlab from source (empty pycache prefix)."""
    import subprocess
    import sys
    from repo_root import REPO

    code = ("from ptxlab.toolchain import backends\n"
            f"raw = backends.nvrtc_compile({_src(rng)!r}, 'k.cu', ['-arch=sm_100a'])\n"
            "assert raw.ok and raw.log == '', raw.log\n"
            "print('a', 'b', list(b'x y'[1:2]))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONPYCACHEPREFIX": str(tmp_path)}
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, timeout=600)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert p.stdout == b"a b [32]\n"
