"""The SASS a kernel runs as on the timing target, with each SASS instruction's line in the emulated PTX.

``kernel_sass(module, kernel, arch)`` -> ``SassView`` (or None, with the reason in ``why_not(...)``):

1. **Build with line info for the target arch.**  A module compiled from CUDA is recompiled by NVRTC with its own
   final options (``module.options``, include paths and ``-D`` defines included) plus ``-lineinfo``, for the target
   (``sm_90a`` for the H100/H200, ``sm_100a`` for the B200); ``-lineinfo`` does not change the code ptxas emits
   (checked: tests/timing/test_timing_sass.py compares the opcodes).  A module given as PTX text is assembled again by
   nvJitLink with ``-lineinfo`` (its ``.target`` rewritten when the target arch differs).  If the target arch does
   not compile (e.g. tcgen05 PTX for an H100), the module's own arch is used and the view says so.
2. ``nvdisasm -c -hex -gp``: SASS with control codes and, per instruction, the line of the PTX text ptxas was given
   (sass_text.py).
3. **Lines of the emulated PTX.**  The emulator runs ``module.ptx``; the PTX of a ``-lineinfo`` build differs from it
   only by ``.loc`` / ``.file`` directives (and, for another arch, possibly by arch-specific instructions), so the two
   texts are aligned instruction by instruction (difflib over whitespace-normalised instruction text, as
   ``emu/checks/lineinfo.py`` does for source lines) and every SASS instruction gets the matching line of
   ``module.ptx`` (0 where its PTX instruction has no counterpart).

Results are cached on disk with the compile cache (``$PTXLAB_CACHE``; the SASS listing is stored as the entry's log)
and on the module object per arch.
"""
from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass
from typing import Dict, Optional

from . import sass_text

_TARGET = re.compile(r"^(\s*\.target\s+)(sm_\d+[af]?)", re.M)


@dataclass
class SassView:
    """One kernel's SASS for the timing model."""
    kernel: sass_text.SassKernel
    arch: str                       # the arch the SASS is for
    ptx_line: list                  # per SASS instruction: line in module.ptx (0 = none)
    note: str                       # how it was obtained (shown in the prediction's table)
    matched: float                  # fraction of SASS instructions with a PTX line


def arch_for(gpu: str) -> str:
    return {"h100": "sm_90a", "h200": "sm_90a", "b200": "sm_100a"}.get(str(gpu).lower(), "sm_90a")


def _norm(line: str) -> Optional[str]:
    s = line.strip()
    if not s or s.startswith("//") or s.startswith(".loc") or s.startswith(".file") or s.startswith(".target"):
        return None
    return re.sub(r"\s+", " ", s)


def align_lines(ptx_from: str, ptx_to: str) -> Dict[int, int]:
    """{line of ptx_from: line of ptx_to} for instructions/labels that match after alignment (1-based)."""
    a_text, a_line, b_text, b_line = [], [], [], []
    for i, ln in enumerate(ptx_from.splitlines(), 1):
        n = _norm(ln)
        if n is not None:
            a_text.append(n)
            a_line.append(i)
    for i, ln in enumerate(ptx_to.splitlines(), 1):
        n = _norm(ln)
        if n is not None:
            b_text.append(n)
            b_line.append(i)
    if a_text == b_text:
        return dict(zip(a_line, b_line))
    sm = difflib.SequenceMatcher(None, a_text, b_text, autojunk=False)
    return {a_line[blk.a + k]: b_line[blk.b + k] for blk in sm.get_matching_blocks() for k in range(blk.size)}


def _is_ptx_module(module) -> bool:
    src = getattr(module, "source", "") or ""
    if not src and getattr(module, "ptx", None):
        return True          # a module known only by its PTX (loaded through ptxlab.driver from a cubin/PTX image)
    return str(getattr(module, "name", "")).endswith(".ptx") or src == getattr(module, "ptx", None) or \
        bool(re.search(r"^\s*\.(version|target)\s", src, re.M))


def _build(module, arch: str) -> tuple:
    """(ptx text ptxas was given, SASS listing) for ``arch`` with line info; raises on a compile failure."""
    from ptxlab.toolchain import backends, cache
    from ptxlab.toolchain.sass import disassemble
    nv, jl = backends.compiler_versions()
    if _is_ptx_module(module):
        ptx = _TARGET.sub(lambda m: m.group(1) + arch, module.ptx, count=1)
        opts = [f"-arch={arch}", "-lineinfo"]
        key = cache.cache_key(kind="timing-sass", ptx=hashlib.sha256(ptx.encode()).hexdigest(), options=opts,
                              nvrtc=nv, nvjitlink=jl)
        hit = cache.load(key)
        if hit is not None:
            return hit[0], hit[2]
        raw = backends.jitlink_ptx(ptx, str(getattr(module, "name", "k.ptx")), opts)
        if not raw.ok or not raw.cubin:
            raise RuntimeError(raw.log.strip().splitlines()[-1] if raw.log.strip() else "ptxas failed")
    else:
        opts = [o for o in module.options if not str(o).startswith("-arch")] + [f"-arch={arch}"]
        if "-lineinfo" not in opts:
            opts.append("-lineinfo")
        # the module's own PTX stands in for its included headers (a header edit changes it; the source alone
        # would keep serving the SASS of the old header)
        own_ptx = getattr(module, "ptx", "") or ""
        key = cache.cache_key(kind="timing-sass", source=module.source, name=module.name, options=opts, nvrtc=nv,
                              nvjitlink=jl, ptx=hashlib.sha256(own_ptx.encode()).hexdigest())
        hit = cache.load(key)
        if hit is not None:
            return hit[0], hit[2]
        raw = backends.nvrtc_compile(module.source, module.name, opts)
        if not raw.ok or not raw.cubin:
            raise RuntimeError(raw.log.strip().splitlines()[-1] if raw.log.strip() else "NVRTC failed")
        ptx = raw.ptx
    listing = disassemble(raw.cubin, f"the {arch} build of {getattr(module, 'name', 'the module')}",
                          extra_args=("-hex", "-gp"))
    cache.store(key, ptx, raw.cubin, listing)
    return ptx, listing


def kernel_sass(module, kernel: str, arch: str) -> Optional[SassView]:
    """The SassView of ``kernel`` for ``arch`` (cached on the module), or None (``why_not(module, kernel, arch)``)."""
    cache_attr = getattr(module, "_timing_sass", None)
    if cache_attr is None:
        cache_attr = {}
        try:
            module._timing_sass = cache_attr
        except AttributeError:
            pass
    key = (kernel, arch)
    if key in cache_attr:
        return cache_attr[key][0]
    view, why = None, ""
    tried = [arch] + ([module.arch] if getattr(module, "arch", arch) != arch else [])
    errors = []
    for a in tried:
        try:
            ptx, listing = _build(module, a)
        except Exception as e:     # noqa: BLE001 - the model falls back to PTX issue
            errors.append(f"{a}: {e}")
            continue
        kernels = sass_text.parse(listing)
        k = kernels.get(kernel)
        if k is None or not k.instrs:
            errors.append(f"{a}: no SASS section for {kernel}")
            continue
        amap = align_lines(ptx, module.ptx)
        lines = [amap.get(i.ptx_line, 0) for i in k.instrs]
        matched = sum(1 for x in lines if x) / max(1, len(lines))
        note = f"SASS {a}" + (f" (the module's arch: {errors[0]})" if errors else "") + \
            f", {len(k.instrs)} instructions, {100 * matched:.0f} % joined to PTX lines"
        view = SassView(k, a, lines, note, matched)
        break
    if view is None:
        why = "; ".join(errors) or "no SASS"
    cache_attr[key] = (view, why)
    return view


def why_not(module, kernel: str, arch: str) -> str:
    ent = getattr(module, "_timing_sass", {}).get((kernel, arch))
    return ent[1] if ent else ""
