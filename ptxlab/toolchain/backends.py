"""Thin wrappers over NVRTC (CUDA C++ -> PTX + cubin) and nvJitLink (PTX -> cubin) from cuda.bindings."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from ptxlab.errors import CompileError

__all__ = ["RawResult", "nvrtc_compile", "jitlink_ptx", "compiler_versions"]


@dataclass
class RawResult:
    """Outcome of one compiler invocation (ok False means the log holds the errors)."""

    ok: bool
    ptx: Optional[str]
    cubin: Optional[bytes]
    log: str


def _check(res: tuple, what: str) -> tuple:
    from cuda.bindings import nvrtc

    err = res[0]
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CompileError(f"NVRTC call {what} failed with {err!r}; check the NVRTC install (pip nvidia-cuda-nvrtc)")
    return res[1:]


def compiler_versions() -> Tuple[str, str]:
    """(NVRTC version, nvJitLink version) strings, part of the cache key."""
    from cuda.bindings import nvjitlink, nvrtc

    major, minor = _check(nvrtc.nvrtcVersion(), "nvrtcVersion")
    try:
        jl = ".".join(str(v) for v in nvjitlink.version())
    except Exception:  # pragma: no cover - nvJitLink missing
        jl = "none"
    return f"{major}.{minor}", jl


def nvrtc_compile(source: str, name: str, options: Sequence[str]) -> RawResult:
    """Compile CUDA C++ with NVRTC; returns PTX, cubin (when -arch=sm_*) and the program log."""
    from cuda.bindings import nvrtc

    (prog,) = _check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in options]
        from ptxlab.toolchain.buildtime import build_progress   # stderr progress + estimate for long builds

        arch = next((o.split("=", 1)[1] for o in options if o.startswith("-arch=")), "?")
        with build_progress(name, arch):
            (res,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        (n,) = _check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        # bytearray buffers: NVRTC writes into them, and ``b" " * 1`` is CPython's shared one-byte ``b" "`` (an empty
        # log has size 1: writing its NUL there changed every b" " / " " of the process)
        buf = bytearray(n)
        _check(nvrtc.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
        log = bytes(buf).rstrip(b"\x00 ").decode(errors="replace")
        if res != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return RawResult(False, None, None, log)
        (n,) = _check(nvrtc.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
        pbuf = bytearray(n)
        _check(nvrtc.nvrtcGetPTX(prog, pbuf), "nvrtcGetPTX")
        ptx = bytes(pbuf).rstrip(b"\x00").decode()
        cubin = None
        err, n = nvrtc.nvrtcGetCUBINSize(prog)
        if err == nvrtc.nvrtcResult.NVRTC_SUCCESS and n > 0:
            cbuf = bytearray(n)
            _check(nvrtc.nvrtcGetCUBIN(prog, cbuf), "nvrtcGetCUBIN")
            cubin = bytes(cbuf)
        return RawResult(True, ptx, cubin, log)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _jl_log(handle: int, kind: str) -> str:
    from cuda.bindings import nvjitlink

    size = getattr(nvjitlink, f"get_{kind}_log_size")(handle)
    if not size:
        return ""
    buf = bytearray(size)
    getattr(nvjitlink, f"get_{kind}_log")(handle, buf)
    return bytes(buf).rstrip(b"\x00").decode(errors="replace")


def jitlink_ptx(ptx: str, name: str, options: Sequence[str]) -> RawResult:
    """Assemble PTX text to a cubin with nvJitLink; the log holds ptxas verbose/error output."""
    from cuda.bindings import nvjitlink

    opts: List[str] = list(options)
    handle = nvjitlink.create(len(opts), opts)
    try:
        data = ptx.encode()
        try:
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), name)
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError as exc:
            log = "\n".join(x for x in (_jl_log(handle, "error"), _jl_log(handle, "info")) if x) or str(exc)
            return RawResult(False, ptx, None, log)
        size = nvjitlink.get_linked_cubin_size(handle)
        buf = bytearray(size)
        nvjitlink.get_linked_cubin(handle, buf)
        return RawResult(True, ptx, bytes(buf), _jl_log(handle, "info"))
    finally:
        nvjitlink.destroy(handle)
