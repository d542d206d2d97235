"""What the CuTe DSL (PyPI ``nvidia-cutlass-dsl``) needs besides the driver calls, set up before it is imported:

* ``CUTE_DSL_LIBS`` -> the stand-in library (it also exports the DSL runtime's ``_cuda*`` entry points,
  ``api_runtime.py``), so the JIT host code's launches reach the emulator;
* ``CUTE_DSL_KEEP`` += ``ptx,cubin`` (``CUTE_DSL_KEEP_PTX=1``, ``CUTE_DSL_KEEP_CUBIN=1`` for DSL releases before 4.5)
  and a dump directory (``CUTE_DSL_DUMP_DIR``; unless set, a temporary one that is removed at exit): the DSL
  writes each kernel's PTX next to its cubin there, and ``images.py`` finds the PTX of the cubin it loads;
* ``CUTE_DSL_LINEINFO=1`` unless set: the PTX carries ``.loc`` lines of the kernel's Python source, so emulator
  reports name the DSL kernel's Python line;
* the few CUDA-runtime functions the DSL's Python code calls through ``cuda.bindings.runtime`` (whose statically
  linked CUDA runtime needs the driver's private export tables, which the layer does not serve) are replaced by
  ones that go through the driver layer (``RUNTIME_PATCHES``); CUDA graphs are refused with a line;
* a compile given its own dump directory (``cute.compile(..., options="--dump-dir=D")``, as the DSL's
  ``HardwareInfo`` does) has that directory searched too (``watch_dump_dirs``).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ptxlab.driver import images
from ptxlab.driver.calls import CUresult, dispatch, report

__all__ = ["setup_env", "patch_cuda_runtime", "watch_dump_dirs", "dsl_version", "RUNTIME_PATCHES", "KEEP_TOKENS_SINCE"]


_ENV = ("CUTE_DSL_LIBS", "CUTE_DSL_KEEP", "CUTE_DSL_KEEP_PTX", "CUTE_DSL_KEEP_CUBIN", "CUTE_DSL_DUMP_DIR",
        "CUTE_DSL_LINEINFO")
# How a DSL release is told to keep PTX and cubin: from 4.5.0 one token list (CUTE_DSL_KEEP=ptx,cubin; the old switches
# are deprecated there and warn), before it one switch per artifact (base_dsl/env_manager.py of each release).
KEEP_TOKENS_SINCE = (4, 5)


def dsl_version() -> tuple:
    """The installed nvidia-cutlass-dsl release as a tuple of ints (read from its metadata, without importing it;
    () when it is not installed)."""
    from importlib import metadata
    try:
        text = metadata.version("nvidia-cutlass-dsl")
    except metadata.PackageNotFoundError:
        return ()
    return tuple(int(x) for x in text.split(".")[:3] if x.isdigit())


def setup_env(lib_path: Path, undo: list) -> Path:
    """Set the DSL's environment (see the module docstring); returns the dump directory. Appends to ``undo`` what
    restores the previous environment."""
    saved = {k: os.environ.get(k) for k in _ENV}
    undo.append(lambda: [os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
                         for k, v in saved.items()])
    runtime = lib_path.parent / "libcute_dsl_runtime.so"
    os.environ["CUTE_DSL_LIBS"] = str(runtime)
    if dsl_version() and dsl_version() < KEEP_TOKENS_SINCE:
        os.environ["CUTE_DSL_KEEP_PTX"] = os.environ["CUTE_DSL_KEEP_CUBIN"] = "1"
    else:
        keep = {t.strip().lower() for t in os.environ.get("CUTE_DSL_KEEP", "").split(",") if t.strip()}
        os.environ["CUTE_DSL_KEEP"] = ",".join(sorted(keep | {"ptx", "cubin"}))
    dump = os.environ.get("CUTE_DSL_DUMP_DIR")
    if not dump:
        import atexit
        import shutil
        dump = tempfile.mkdtemp(prefix="ptxlab_cute_")
        os.environ["CUTE_DSL_DUMP_DIR"] = dump
        atexit.register(shutil.rmtree, dump, True)      # ours: removed when the process ends
    os.environ.setdefault("CUTE_DSL_LINEINFO", "1")
    path = Path(dump)
    if path not in images.CUBIN_PTX_DIRS:
        images.CUBIN_PTX_DIRS.append(path)
    return path


def _rt():
    from cuda.bindings import runtime
    return runtime


_STATE: list = []            # the DriverState the replaced functions use (patch_cuda_runtime sets it)


def _call(name: str, *values: int) -> int:
    return dispatch(_STATE[0], name, list(values) + [0] * (16 - len(values)))


def _get_device_count():
    import ctypes
    n = ctypes.c_int(0)
    code = _call("_cudaGetDeviceCount", ctypes.addressof(n))
    return (_rt().cudaError_t(code), n.value)


def _library_unload(library):
    return (_rt().cudaError_t(_call("_cudaLibraryUnload", int(library))),)


def _device_synchronize():
    return (_rt().cudaError_t(_call("_cudaDeviceSynchronize")),)


def _refuse(name: str):
    def fn(*args, **kwargs):
        report(f"cuda.bindings.runtime.{name}: CUDA graphs are not supported by the emulator's driver layer; run "
               "without graph capture (e.g. cutlass.cute.testing.benchmark(..., use_cuda_graphs=False))")
        return (_rt().cudaError_t(CUresult.NOT_SUPPORTED),)
    fn.__name__ = name
    return fn


RUNTIME_PATCHES = {
    "cudaGetDeviceCount": _get_device_count,
    "cudaLibraryUnload": _library_unload,
    "cudaDeviceSynchronize": _device_synchronize,
    **{n: _refuse(n) for n in ("cudaStreamBeginCapture", "cudaStreamEndCapture", "cudaGraphInstantiate",
                               "cudaGraphLaunch", "cudaGraphExecDestroy", "cudaGraphDestroy", "cudaGraphGetNodes")},
}


def patch_cuda_runtime(state):
    """Replace the functions of ``cuda.bindings.runtime`` listed in RUNTIME_PATCHES, served by ``state`` (idempotent);
    returns what puts the originals back."""
    _STATE[:] = [state]
    rt = _rt()
    saved = {}
    for name, fn in RUNTIME_PATCHES.items():
        if getattr(rt, name, None) is not fn:
            saved[name] = getattr(rt, name, None)
            setattr(rt, name, fn)

    def restore():
        for name, orig in saved.items():
            setattr(rt, name, orig)
        _STATE.clear()
    return restore


def watch_dump_dirs() -> None:
    """Add the dump directory of every DSL compile to the PTX search path (wraps
    ``CompileOptions.apply_envar_settings``, where the DSL resolves it; a DSL without it is left alone)."""
    try:
        from cutlass.base_dsl import compiler as C
    except Exception:            # noqa: BLE001 - no CuTe DSL in this environment
        return
    orig = getattr(C.CompileOptions, "apply_envar_settings", None)
    if orig is None or getattr(orig, "_ptxlab", False):
        return

    def apply_envar_settings(self, envar, function_name):
        orig(self, envar, function_name)
        own = getattr(C, "DumpDir", None)       # the --dump-dir compile option (DSL 4.3.1 and later)
        d = (self.options[own].value if own is not None and own in self.options else None) or envar.dump_dir
        if d and Path(d) not in images.CUBIN_PTX_DIRS:
            images.CUBIN_PTX_DIRS.append(Path(d))
    apply_envar_settings._ptxlab = True
    C.CompileOptions.apply_envar_settings = apply_envar_settings
