"""Build CUTLASS's CuTe Blackwell tutorial 01 (examples/cute/tutorial/blackwell/01_mma_sm100.cu, from the installed
nvidia-cutlass wheel) with NVRTC through ptxlab.compile, for the emulator.

Pieces:
* ``mma_sm100_wrapper.cu`` (#includes the example file unchanged and explicitly instantiates ``gemm_device`` for
  the configuration the example's host code builds),
* ``stubs/`` (no-op declarations for the host-only headers the example includes: <iostream>, <cstdio>, thrust,
  cutlass/util/print_error.hpp, cutlass/cluster_launch.hpp),
* a generated CCCL compatibility shim (``cccl_compat_dir``): CUTLASS 4.2's CuTe forward-declares
  ``std::tuple_size<class... _Tp>`` / ``std::tuple_element<size_t, class... _Tp>`` under NVRTC, while the pip CCCL
  (13.3) declares the primaries with a single ``class _Tp`` -> "declaration is incompatible with template parameter
  _Tp" (NVIDIA/cutlass PR #3386 tracks this). The shim is the installed CCCL header with only that primary
  declaration made variadic, written to the ptxlab cache and put ahead of the pip CCCL on the include path.
* NVRTC options: ``-default-device`` (CUDA 13 NVRTC refuses unannotated host functions; the example's host functions
  ``gemm_host_*``/``main`` are never called from device code, so treating them as device functions only affects
  parsing) and ``-Dmain=...`` (a device function may not be called ``main``).
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import ptxlab
import ptxlab.toolchain as tc

HERE = Path(__file__).resolve().parent
WRAPPER = HERE / "mma_sm100_wrapper.cu"
STUBS = HERE / "stubs"
OPTIONS = ("-default-device", "-Dmain=ptxlab_tutorial_main_unused")

_PATCHES = {  # header relative to cccl include -> (primary declaration as installed, variadic replacement)
    "cuda/std/__tuple_dir/tuple_size.h": (
        "_CCCL_BEGIN_NAMESPACE_STD\n\ntemplate <class _Tp>\nstruct tuple_size;",
        "_CCCL_BEGIN_NAMESPACE_STD\n\ntemplate <class... _Tp>\nstruct tuple_size;",
    ),
    "cuda/std/__tuple_dir/tuple_element.h": (
        "_CCCL_BEGIN_NAMESPACE_STD\n\ntemplate <size_t _Ip, class _Tp>\nstruct tuple_element;",
        "_CCCL_BEGIN_NAMESPACE_STD\n\ntemplate <size_t _Ip, class... _Tp>\nstruct tuple_element;",
    ),
    # CCCL 13.3 adds C++26 cuda::std::get<I>(integer_sequence); CuTe aliases cute::integer_sequence to
    # cuda::std::integer_sequence and has its own get<I>(integer_sequence) -> ambiguous call via ADL (same PR).
    "cuda/std/__utility/integer_sequence.h": (
        "template <size_t _Ip, class _Tp, _Tp... _Indices>\n[[nodiscard]] _CCCL_API constexpr _Tp get(integer_sequence"
        "<_Tp, _Indices...>) noexcept\n{\n  static_assert(_Ip < sizeof...(_Indices), \"Index out of bounds in "
        "cuda::std::get<> (cuda::std::integer_sequence)\");\n  constexpr _Tp __indices[]{_Indices...};\n"
        "  return __indices[_Ip];\n}\n",
        "// ptxlab: cuda::std::get<I>(integer_sequence) removed (ambiguous with cute::get under ADL)\n",
    ),
}


def example_dir() -> Path:
    d = Path(tc.cutlass_include_dir()).parent / "examples" / "cute" / "tutorial" / "blackwell"
    if not (d / "01_mma_sm100.cu").exists():
        raise FileNotFoundError(f"CUTLASS tutorial not found under {d}; reinstall nvidia-cutlass")
    return d


def cccl_include_dir() -> Path:
    from ptxlab.toolchain.paths import cuda_include_dirs

    for d in cuda_include_dirs():
        if (Path(d) / "cuda" / "std" / "__tuple_dir" / "tuple_size.h").exists():
            return Path(d)
    raise FileNotFoundError("pip CCCL headers (cuda/std/__tuple_dir/tuple_size.h) not found on ptxlab's include path")


def cccl_compat_dir() -> Path:
    """Directory shadowing the two CCCL tuple-protocol headers with variadic std primaries (see module doc)."""
    src = cccl_include_dir()
    texts = {rel: (src / rel).read_text() for rel in _PATCHES}
    h = hashlib.sha256("".join(texts[r] for r in sorted(texts)).encode()).hexdigest()[:16]
    out = Path(tc.cache_dir()) / "cutlass_tutorial_cccl_compat" / h
    for rel, (old, new) in _PATCHES.items():
        txt = texts[rel]
        if old not in txt:
            if new in txt:  # already variadic in this CCCL: nothing to shadow
                continue
            raise RuntimeError(f"CCCL header {src / rel} changed: primary declaration {old!r} not found; "
                               "update tests/cutlass_tutorial/build.py")
        dst = out / rel
        if not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_suffix(".tmp")
            tmp.write_text(f"// ptxlab: generated from {src / rel} (CuTe/NVRTC compatibility, see build.py)\n"
                           + txt.replace(old, new, 1))
            tmp.replace(dst)
    return out


def include_dirs() -> list:
    return [STUBS, cccl_compat_dir(), example_dir(), Path(tc.cutlass_include_dir())]


def compile_tutorial(arch: str = "sm_100a"):
    """ptxlab.Module of the wrapper: one .entry, the gemm_device specialization."""
    return ptxlab.compile(WRAPPER.read_text(), arch=arch, name=WRAPPER.name, options=OPTIONS,
                          include_dirs=include_dirs())


def gemm_entry(mod) -> str:
    ks = [k for k in mod.kernels if "gemm_device" in k]
    if len(ks) != 1:
        raise RuntimeError(f"expected one gemm_device entry, got {mod.kernels}")
    return ks[0]
