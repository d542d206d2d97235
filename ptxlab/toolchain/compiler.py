"""``compile``: CUDA C++ (NVRTC) or PTX text (nvJitLink) -> Module, with disk cache and debug switches."""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Iterable, List, Sequence, Union

from ptxlab import debug
from ptxlab.errors import CompileError
from ptxlab.toolchain import backends, cache
from ptxlab.toolchain.diagnostics import (
    Diagnostic,
    format_report,
    parse_nvrtc_log,
    parse_ptxas_errors,
    ptx_line_to_source,
)
from ptxlab.toolchain.module import Module

__all__ = ["compile", "is_ptx_source", "build_options"]

_ARCH = re.compile(r"^sm_(\d+)[af]?$")
_PTX_HEADER = re.compile(r"^\s*\.(?:version|target)\s+\S", re.M)

PathLike = Union[str, Path]


def is_ptx_source(source: str, name: str) -> bool:
    """True for PTX text: a name ending in .ptx, or a ``.version``/``.target`` directive at a line start."""
    return name.endswith(".ptx") or bool(_PTX_HEADER.search(source))


def _check_arch(arch: str) -> int:
    m = _ARCH.match(arch)
    if not m:
        raise CompileError(
            f"ptxlab.compile: arch {arch!r} is not a real SM target; pass e.g. arch='sm_100a' or 'sm_90a' "
            "(a cubin is always built, so compute_XX virtual archs are not accepted)"
        )
    return int(m.group(1))


def _tmem_check_ok(sm: int) -> bool:
    return 100 <= sm < 120  # tcgen05/TMEM exist on the sm_100 family only


def build_options(
    arch: str, ptx_input: bool, options: Sequence[str], include_dirs: Iterable[PathLike], flags: debug.DebugFlags
) -> List[str]:
    """Full option list for NVRTC (CUDA C++) or nvJitLink (PTX), including the debug-switch options."""
    sm = _check_arch(arch)
    user = [str(o) for o in options]
    for o in user:
        if o.startswith(("-arch", "--gpu-architecture", "-gpu-name")):
            raise CompileError(f"ptxlab.compile: option {o!r} conflicts with arch={arch!r}; pass the arch argument instead")
    if ptx_input:
        opts = [f"-arch={arch}", "-verbose"]
        if flags.lineinfo:
            opts.append("-lineinfo")
        if flags.tmem_check and _tmem_check_ok(sm):
            opts.append("-Xptxas=-g-tmem-access-check")
        if list(include_dirs):
            raise CompileError("ptxlab.compile: include_dirs apply to CUDA C++ only, but the source is PTX text")
        return opts + user
    opts = [f"-arch={arch}", "-Xptxas", "-v"]
    if not any(o.startswith(("-std", "--std")) for o in user):
        opts.append("-std=c++17")
    if flags.lineinfo:
        opts.append("-lineinfo")
    if flags.tmem_check and _tmem_check_ok(sm):
        opts += ["-Xptxas", "-g-tmem-access-check"]
    for d in include_dirs:
        p = Path(d)
        if not p.is_dir():
            raise CompileError(f"ptxlab.compile: include dir {str(p)!r} does not exist; fix the include_dirs argument")
        opts.append(f"-I{p.resolve()}")
    from .paths import cuda_include_dirs  # pip CUDA headers (cuda_fp16.h, cccl) after the caller's own dirs
    opts += [f"-I{d}" for d in cuda_include_dirs()]
    from .stdshim import shim_dir  # <cstdint>, <cassert>, ... for pasted kernels (NVRTC has no std headers), last
    opts.append(f"{STDSHIM_OPT}{shim_dir()}")
    return opts + user


STDSHIM_OPT = "-I"   # the std-wrapper dir is the last -I before the user's options (see _key_options)


def _key_options(opts: List[str], ptx_input: bool, source: str) -> "tuple[List[str], str]":
    """Options and std-wrapper digest for the cache key: the wrapper dir's path (which lives in the cache dir) is left
    out, so adding it changed no existing key; its content digest counts for sources that include a wrapped header
    directly (a user header that includes one is covered by the first compile succeeding only with the wrappers)."""
    if ptx_input:
        return opts, ""
    from .stdshim import shim_dir, shim_digest, uses_shim

    shim = f"{STDSHIM_OPT}{shim_dir()}"
    return [o for o in opts if o != shim], (shim_digest() if uses_shim(source) else "")


def _locate_via_lineinfo(diags: List[Diagnostic], ptx: str, source: str, name: str) -> List[Diagnostic]:
    """Rewrite PTX-located diagnostics to CUDA source lines using ``.loc`` directives."""
    out = []
    for d in diags:
        loc = ptx_line_to_source(ptx, d.line)
        if loc is None:
            out.append(d)
            continue
        file, line = loc
        src_lines = source.splitlines()
        same = file == name or Path(file).name == Path(name).name
        src = src_lines[line - 1] if same and 1 <= line <= len(src_lines) else None
        file = name if same else file
        ptx_text = (d.source_line or "").strip()
        out.append(Diagnostic(file, line, d.severity, f"{d.message} [ptx line {d.line}: {ptx_text}]", src))
    return out


def _nvrtc_failure(source: str, name: str, arch: str, opts: List[str], log: str) -> CompileError:
    diags = parse_nvrtc_log(log, name, source)
    if not diags and "ptxas" in log:
        # Front end passed, ptxas rejected the PTX (typically inline asm): rebuild the PTX with line info
        # for a virtual arch, re-assemble it to get the failing PTX lines, and map them back to the source.
        virt = [o for o in opts if not o.startswith("-arch=")]
        virt = [o for i, o in enumerate(virt) if o != "-Xptxas" and not (i > 0 and virt[i - 1] == "-Xptxas")]
        raw = backends.nvrtc_compile(source, name, [f"-arch={arch.replace('sm_', 'compute_')}", "-lineinfo", *virt])
        if raw.ok and raw.ptx:
            jl = backends.jitlink_ptx(raw.ptx, Path(name).stem + ".ptx", [f"-arch={arch}"])
            diags = _locate_via_lineinfo(parse_ptxas_errors(jl.log, "<ptx>", raw.ptx), raw.ptx, source, name)
    first = f" at {diags[0].file}:{diags[0].line}" if diags else ""
    return CompileError(
        format_report(
            f"NVRTC could not compile {name} for {arch}{first}",
            diags,
            log,
            "fix the first error above (file:line); for inline-asm PTX errors see the PTX line quoted in brackets",
        ),
        log=log,
        source_name=name,
        arch=arch,
    )


def _jitlink_failure(ptx: str, name: str, arch: str, log: str) -> CompileError:
    diags = parse_ptxas_errors(log, name, ptx)
    first = f" at {diags[0].file}:{diags[0].line}" if diags else ""
    return CompileError(
        format_report(
            f"nvJitLink could not assemble PTX {name} for {arch}{first}",
            diags,
            log,
            "fix the first PTX error above (file:line); check .target matches arch and the PTX ISA .version",
        ),
        log=log,
        source_name=name,
        arch=arch,
    )


def _dump(mod: Module, flags: debug.DebugFlags) -> None:
    if not (flags.dump_ptx or flags.dump_sass):
        return
    from ptxlab.fileio import atomic_write

    d = flags.dump_dir
    d.mkdir(parents=True, exist_ok=True)
    stem = f"{Path(mod.name).stem}.{mod.arch}.{mod.key[:10]}"
    if flags.dump_ptx:
        mod.dump_paths.append(atomic_write(d / f"{stem}.ptx", mod.ptx))
    if flags.dump_sass:
        mod.dump_paths.append(atomic_write(d / f"{stem}.sass", mod.sass()))


def compile(  # noqa: A001 - mirrors ptxlab.compile
    source: str,
    arch: str = "sm_100a",
    name: str = "k.cu",
    options: Sequence[str] = (),
    include_dirs: Iterable[PathLike] = (),
) -> Module:
    """Compile CUDA C++ (NVRTC) or PTX text (nvJitLink) for ``arch`` into a Module (no GPU needed).

    Results are cached on disk under ``$PTXLAB_CACHE`` (default ``~/.cache/ptxlab``), keyed by the sha256 of
    source, name, arch, final options and compiler versions, plus the state (path, size, mtime) of every header under
    the caller's include_dirs, so editing an included header recompiles.
    Raises CompileError with file:line, the offending line and the compiler log on failure.
    """
    if not isinstance(source, str) or not source.strip():
        raise CompileError(f"ptxlab.compile({name!r}): source must be a non-empty str of CUDA C++ or PTX text")
    for what, val in (("options", options), ("include_dirs", include_dirs)):
        if isinstance(val, (str, bytes, Path)):
            raise CompileError(f"ptxlab.compile({name!r}): {what} must be a sequence, e.g. [{str(val)!r}], not a single string")
    flags = debug.current()
    ptx_input = is_ptx_source(source, name)
    if ptx_input and not name.endswith(".ptx"):
        name = Path(name).stem + ".ptx"
    opts = build_options(arch, ptx_input, tuple(options), tuple(include_dirs), flags)
    nvrtc_v, jl_v = backends.compiler_versions()
    key_opts, shim = _key_options(opts, ptx_input, source)
    extra = {"std_shims": shim} if shim else {}
    key = cache.cache_key(source=source, name=name, arch=arch, options=key_opts, ptx=ptx_input, nvrtc=nvrtc_v,
                          nvjitlink=jl_v, headers=cache.include_digest(include_dirs) if include_dirs else "", **extra)

    hit = cache.load(key)
    if hit is not None:
        ptx, cubin, log = hit
    elif ptx_input:
        raw = backends.jitlink_ptx(source, name, opts)
        if not raw.ok or raw.cubin is None:
            raise _jitlink_failure(source, name, arch, raw.log)
        ptx, cubin, log = source, raw.cubin, raw.log
    else:
        raw = backends.nvrtc_compile(source, name, opts)
        if not raw.ok:
            raise _nvrtc_failure(source, name, arch, opts, raw.log)
        if raw.cubin is None or raw.ptx is None:
            raise CompileError(f"NVRTC compiled {name} for {arch} but returned no cubin; report this with the options {opts}")
        ptx, cubin, log = raw.ptx, raw.cubin, raw.log
    if hit is None:
        cache.store(key, ptx, cubin, log)

    mod = Module(ptx=ptx, cubin=cubin, arch=arch, name=name, source=source, log=log,
                 options=tuple(opts), key=key, cache_hit=hit is not None)
    _dump(mod, flags)
    if flags.verbose:
        state = "cache hit" if hit is not None else "compiled"
        print(f"[ptxlab] {name} for {arch}: {state} (key {key[:12]})\n{log.rstrip()}", file=sys.stderr)
    return mod
