"""NVRTC builds of CUTLASS's own examples from the installed nvidia-cutlass wheel, for ptxlab's devices.

Nothing of CUTLASS is committed here: the example files are #included by path from the wheel, unchanged, and the
few CUTLASS/CCCL header sections NVRTC cannot take are *generated* at build time into the ptxlab cache (a copy of
the installed header with one marked edit each), ahead of the wheel on the include path:

* CCCL compatibility (``cccl_compat_dir``): CUTLASS 4.2's CuTe forward-declares ``std::tuple_size<class... _Tp>`` /
  ``tuple_element<size_t, class... _Tp>`` under NVRTC, the pip CCCL (13.x) declares the primaries with one ``class
  _Tp`` ("declaration is incompatible"), and CCCL 13.3's ``cuda::std::get<I>(integer_sequence)`` is ambiguous with
  CuTe's under ADL (NVIDIA/cutlass PR #3386): the primaries made variadic, that overload removed.
* TMA encode record (``shim_dir``, ``cute/atom/copy_traits_sm90_tma.hpp``): CuTe's ``make_tma_copy_desc`` computes
  every input of ``cuTensorMapEncodeTiled`` and calls the driver inside ``#if !defined(__CUDACC_RTC__)``; the copy
  adds, before that block, a call of ``ptxlab::record_tma_encode`` (stubs/ptxlab_tma_record.cuh) that stores the
  inputs in the 128-byte descriptor, so capture.py can make the real map with ``dev.tensor_map``.
Host-only headers the examples include resolve to ``stubs/`` (first on the include path). NVRTC options:
``-default-device`` (the example's host functions become device functions: ptxlab runs the example's own host
code on the emulator to get the kernel's parameters, see capture.py) and ``-Dmain=...`` (a device function may not
be called ``main``).
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable

import ptxlab
import ptxlab.toolchain as tc

HERE = Path(__file__).resolve().parent
STUBS = HERE / "stubs"
WRAPPERS = HERE / "wrappers"
OPTIONS = ("-default-device", "-Dmain=ptxlab_example_main_unused", "-include", "ptxlab_prelude.cuh")

_CCCL_PATCHES = {  # header relative to the CCCL include dir -> (text as installed, replacement)
    "cuda/std/__tuple_dir/tuple_size.h": (
        "_CCCL_BEGIN_NAMESPACE_STD\n\ntemplate <class _Tp>\nstruct tuple_size;",
        "_CCCL_BEGIN_NAMESPACE_STD\n\ntemplate <class... _Tp>\nstruct tuple_size;",
    ),
    "cuda/std/__tuple_dir/tuple_element.h": (
        "_CCCL_BEGIN_NAMESPACE_STD\n\ntemplate <size_t _Ip, class _Tp>\nstruct tuple_element;",
        "_CCCL_BEGIN_NAMESPACE_STD\n\ntemplate <size_t _Ip, class... _Tp>\nstruct tuple_element;",
    ),
    "cuda/std/__utility/integer_sequence.h": (
        "template <size_t _Ip, class _Tp, _Tp... _Indices>\n[[nodiscard]] _CCCL_API constexpr _Tp get(integer_sequence"
        "<_Tp, _Indices...>) noexcept\n{\n  static_assert(_Ip < sizeof...(_Indices), \"Index out of bounds in "
        "cuda::std::get<> (cuda::std::integer_sequence)\");\n  constexpr _Tp __indices[]{_Indices...};\n"
        "  return __indices[_Ip];\n}\n",
        "// ptxlab: cuda::std::get<I>(integer_sequence) removed (ambiguous with cute::get under ADL)\n",
    ),
}

_TMA_HEADER = "cute/atom/copy_traits_sm90_tma.hpp"
class BuildError(RuntimeError):
    pass


def cutlass_source_dir() -> Path:
    """The wheel's CUTLASS source root (include/, examples/)."""
    return Path(tc.cutlass_include_dir()).parent


def cccl_include_dir() -> Path:
    from ptxlab.toolchain.paths import cuda_include_dirs

    for d in cuda_include_dirs():
        if (Path(d) / "cuda" / "std" / "__tuple_dir" / "tuple_size.h").exists():
            return Path(d)
    raise BuildError("pip CCCL headers (cuda/std/__tuple_dir/tuple_size.h) not found on ptxlab's include path")


def _write_once(dst: Path, text: str) -> None:
    if dst.exists():
        return
    from ptxlab.fileio import atomic_write   # a unique temp file: two builders never share one

    dst.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(dst, text)


def cccl_compat_dir() -> Path:
    """Directory shadowing the CCCL headers patched for CuTe under NVRTC (module doc)."""
    src = cccl_include_dir()
    texts = {rel: (src / rel).read_text() for rel in _CCCL_PATCHES}
    h = hashlib.sha256("".join(texts[r] for r in sorted(texts)).encode()).hexdigest()[:16]
    out = Path(tc.cache_dir()) / "cutlass_tutorial_cccl_compat" / h
    for rel, (old, new) in _CCCL_PATCHES.items():
        txt = texts[rel]
        if old not in txt:
            if new in txt:
                continue
            raise BuildError(f"CCCL header {src / rel} changed: {old[:60]!r}... not found; update ptxlab/cutlass/build.py")
        _write_once(out / rel, f"// ptxlab: generated from {src / rel} (CuTe/NVRTC compatibility)\n"
                    + txt.replace(old, new, 1))
    return out


_RECORD_CALL = (
    "#if defined(__CUDACC_RTC__)  // ptxlab: the encode inputs go into the descriptor (ptxlab_tma_record.cuh); "
    "L2 promotion 128B (2) and OOB fill NONE (0) as in the host branch above\n"
    "    ptxlab::record_tma_encode<TmaInternalType>(&tma_desc, tma_dim, gmem_address, gmem_prob_shape, "
    "gmem_prob_stride, smem_box_shape, smem_box_stride, unsigned(get_tma_swizzle_bits(swizzle)), "
    "unsigned(get_tma_swizzle_base(swizzle)), 2u, 0u);\n#endif\n")
_ENCODE_END = "  #endif // (__CUDACC_VER_MAJOR__ >= 12) && !defined(__CUDACC_RTC__)\n  auto recast_ratio"


def tma_shim_text(original: str) -> str:
    """The generated copy of cute/atom/copy_traits_sm90_tma.hpp (module doc)."""
    anchor = "#include <cutlass/cuda_host_adapter.hpp>\n"
    if original.count(anchor) != 1 or original.count(_ENCODE_END) != 1:
        raise BuildError(f"{_TMA_HEADER} of this CUTLASS has changed (encode block not found once); update "
                         "ptxlab/cutlass/build.py")
    out = original.replace(anchor, anchor + "#if defined(__CUDACC_RTC__)\n#include \"ptxlab_tma_record.cuh\"\n#endif\n")
    i = out.index(_ENCODE_END) + len("  #endif // (__CUDACC_VER_MAJOR__ >= 12) && !defined(__CUDACC_RTC__)\n")
    return out[:i] + _RECORD_CALL + out[i:]


def unguard_includes(text: str, wanted: tuple, where: str) -> str:
    """In the first ``#if !defined(__CUDACC_RTC__)`` block of #include lines, move the includes whose path contains
    one of ``wanted`` out of the guard (NVRTC then compiles them); the rest stay guarded."""
    lines = text.splitlines(keepends=True)
    i = next((k for k, ln in enumerate(lines) if ln.strip().startswith("#if !defined(__CUDACC_RTC__)")
              and k + 1 < len(lines) and lines[k + 1].lstrip().startswith("#include")), None)
    if i is None:
        raise BuildError(f"{where}: no '#if !defined(__CUDACC_RTC__)' include block; update ptxlab/cutlass/build.py")
    j = next(k for k in range(i + 1, len(lines)) if lines[k].lstrip().startswith("#endif"))
    body = lines[i + 1:j]
    take = [ln for ln in body if ln.lstrip().startswith("#include") and any(w in ln for w in wanted)]
    if not take:
        raise BuildError(f"{where}: none of {wanted} in the guarded includes")
    keep = [ln for ln in body if ln not in take]
    out = (["// ptxlab: includes moved out of the NVRTC guard (generated copy, ptxlab/cutlass/build.py)\n"] + take
           + [lines[i]] + keep + [lines[j]])
    return "".join(lines[:i] + out + lines[j + 1:])


def unguard_block(text: str, first_line: str, where: str) -> str:
    """Make the ``#if !defined(__CUDACC_RTC__)`` line that precedes ``first_line`` always true."""
    k = text.find(first_line)
    g = text.rfind("#if !defined(__CUDACC_RTC__)", 0, k)
    if k < 0 or g < 0 or text.count(first_line) != 1:
        raise BuildError(f"{where}: guarded block before {first_line[:50]!r} not found; update ptxlab/cutlass/build.py")
    e = text.index("\n", g)
    return text[:g] + "#if 1  // ptxlab: was !defined(__CUDACC_RTC__) (generated copy, ptxlab/cutlass/build.py)" + text[e:]


def host_to_host_device(text: str, where: str) -> str:
    """``CUTE_HOST`` functions (host-only: refused by NVRTC) become ``CUTE_HOST_DEVICE``: the example's host code runs
    as device code on the emulator."""
    n = text.count("\nCUTE_HOST\n")
    if n == 0:
        raise BuildError(f"{where}: no CUTE_HOST function found; update ptxlab/cutlass/build.py")
    return text.replace("\nCUTE_HOST\n", "\nCUTE_HOST_DEVICE  // ptxlab: was CUTE_HOST\n")


_SM100 = ("sm100_", "sm103_")
# header -> function(original text) -> generated text
GENERATED = {
    _TMA_HEADER: lambda t: tma_shim_text(t),
    # SM100 collective builders / mainloops (CUTLASS 4.2 hides them from NVRTC)
    "cutlass/gemm/collective/collective_builder.hpp":
        lambda t: unguard_includes(t, _SM100, "collective_builder.hpp"),
    "cutlass/gemm/collective/collective_mma.hpp": lambda t: unguard_includes(t, _SM100, "collective_mma.hpp"),
    # make_tma_atom_*_sm100 (cute/atom/copy_traits_sm100_tma.hpp)
    "cute/atom/copy_traits_sm100_tma.hpp":
        lambda t: host_to_host_device(unguard_block(t, "/** Make a CuTe CTA-collective TiledCopy for a TMA operation.",
                                                    "copy_traits_sm100_tma.hpp"), "copy_traits_sm100_tma.hpp"),
    # KernelHardwareInfo's device queries (48's args_from_options calls make_kernel_hardware_info): the runtime calls
    # they make are the prelude's (stubs/ptxlab_prelude.cuh: the SM count ptxlab_host sets); cluster occupancy stays
    # 0 (CUTLASS_SM90_CLUSTER_LAUNCH_ENABLED comes from the real cluster_launch.hpp only)
    "cutlass/kernel_hardware_info.h":
        lambda t: unguard_block(unguard_includes(t, ("trace.h",), "kernel_hardware_info.h"),
                                "  static inline int\n  query_device_multiprocessor_count", "kernel_hardware_info.h"),
    # the device adapter names ClusterLauncher (cutlass/cluster_launch.hpp: the capturing stub)
    "cutlass/gemm/device/gemm_universal_adapter.h":
        lambda t: unguard_includes(t, ("cluster_launch.hpp",), "gemm_universal_adapter.h"),
}


def shim_dir() -> Path:
    """Directory with the generated CUTLASS header copies (ahead of the wheel's include dir)."""
    inc = Path(tc.cutlass_include_dir())
    texts = {rel: (inc / rel).read_text() for rel in GENERATED}
    gen_src = (HERE / "build.py").read_text()
    h = hashlib.sha256(("".join(texts[r] for r in sorted(texts)) + gen_src).encode()).hexdigest()[:16]
    out = Path(tc.cache_dir()) / "cutlass_shims" / h
    for rel, fn in GENERATED.items():
        _write_once(out / rel, f"// ptxlab: generated from {inc / rel} by ptxlab/cutlass/build.py\n" + fn(texts[rel]))
    return out


def tools_util_include_dir() -> Path:
    return cutlass_source_dir() / "tools" / "util" / "include"


def include_dirs(example_dirs: Iterable[Path] = ()) -> list:
    return [STUBS, shim_dir(), cccl_compat_dir(), *example_dirs, Path(tc.cutlass_include_dir()),
            tools_util_include_dir()]


def compile_wrapper(wrapper: str, example_dirs: Iterable[Path], arch: str = "sm_100a", defines: Iterable[str] = ()):
    """ptxlab.Module of ``wrappers/<wrapper>`` (which #includes the example by path)."""
    path = WRAPPERS / wrapper
    opts = OPTIONS + tuple(f"-D{d}" for d in defines)
    return ptxlab.compile(path.read_text(), arch=arch, name=path.name, options=opts,
                          include_dirs=include_dirs(example_dirs) + [WRAPPERS])
