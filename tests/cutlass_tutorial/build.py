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


# ---------------------------------------------------------------------------------------------------------------
# Parameters, packed by hand to the PTX .param layout (dev.param_layout shows it; ptxlab_tutorial_param_bytes in
# the wrapper reports CuTe's own bytes so the test can compare):
#   param_0..3  A, B, C, D: cute::Tensor<ViewEngine<gmem_ptr<T*>>, Layout<Shape<int,int>, Stride<int,_1>>>,
#               .align 8 .b8 [24] = { int shape0, int shape1, int stride0, (pad 4), u64 pointer }
#               (Tensor stores tuple<Layout, Engine>; static _1 stride and empty tuples take no bytes)
#   param_4     MmaTiler (all static)       .b8 [1] (empty struct)
#   param_5     TiledMMA                    .align 4 .b8 [8] = { u32 UMMA::InstrDescriptor idesc_,
#               u8 UMMA::ScaleOut accumulate_ (One = 1), pad 3 }  -- idesc_ is built on the host by CuTe's
#               make_instr_desc, here by ptxlab.desc.InstrDesc (kind::f16, M=128, N=256, F16 x F16 -> F32, K/K)
#   param_6     ClusterShape (all static)   .b8 [1]
#   param_7, 8  alpha, beta                 .f32
# ---------------------------------------------------------------------------------------------------------------
import struct  # noqa: E402

import numpy as np  # noqa: E402

MMA_M, MMA_N, MMA_K_TILE = 128, 256, 64   # mma_tiler of the example (bK = 4 x K16)
BLOCK = 128                               # dimBlock(128)


def pack_tensor(ptr: int, rows: int, cols: int, row_stride: int) -> bytes:
    return struct.pack("<iiiIQ", rows, cols, row_stride, 0, ptr)


def instr_desc() -> int:
    from ptxlab.desc import InstrDesc

    return InstrDesc.encode("f16", MMA_M, MMA_N, a_fmt="F16", b_fmt="F16", d_fmt="F32", a_major="K", b_major="K")


def pack_tiled_mma(accumulate_one: bool = True) -> bytes:
    return struct.pack("<IB3x", instr_desc(), 1 if accumulate_one else 0)


def initialize_tensor(rng: np.random.Generator, shape, lo: int = -2, hi: int = 2) -> np.ndarray:
    """example_utils.hpp initialize_tensor: int((max-min) * (rand() / double(RAND_MAX)) + min), C truncation."""
    rand_max = 2**31 - 1
    r = rng.integers(0, rand_max, size=shape, endpoint=True).astype(np.float64)
    return np.trunc((hi - lo) * (r / rand_max) + lo)


def reference_gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """example_utils.hpp reference_gemm<float>: D(m,n) = alpha * sum_k A(m,k)*B(n,k) + beta * C(m,n), float acc."""
    acc = np.zeros((a.shape[0], b.shape[0]), np.float32)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    for k in range(a.shape[1]):  # same k order as the host loop (exact anyway: integer data)
        acc += np.outer(a32[:, k], b32[:, k])
    return (np.float32(alpha) * acc + np.float32(beta) * c.astype(np.float32)).astype(np.float32)


def run_gemm(dev, mod, m: int, n: int, k: int, alpha: float = 1.0, beta: float = 0.0, seed: int = 0):
    """Run the tutorial kernel like gemm_host_f16xf16_f32_f32_tnt; returns (D, reference D, seconds, stats)."""
    import time

    if m % MMA_M or n % MMA_N or k % MMA_K_TILE:
        raise ValueError(f"({m},{n},{k}) must be multiples of the MMA tiler ({MMA_M},{MMA_N},{MMA_K_TILE}) "
                         "(the example refuses other shapes: no OOB handling)")
    rng = np.random.default_rng(seed)
    a = initialize_tensor(rng, (m, k)).astype(np.float16)   # A (M,K) K-major
    b = initialize_tensor(rng, (n, k)).astype(np.float16)   # B (N,K) K-major
    c = initialize_tensor(rng, (m, n)).astype(np.float32)   # C (M,N) N-major
    da, db, dc = dev.to_device(a), dev.to_device(b), dev.to_device(c)
    dd = dev.empty(m * n * 4)
    dev.memset(dd, 0xFF)
    smem = smem_bytes(dev, mod)
    args = [pack_tensor(da.ptr, m, k, k), pack_tensor(db.ptr, n, k, k), pack_tensor(dc.ptr, m, n, n),
            pack_tensor(dd.ptr, m, n, n), b"\0", pack_tiled_mma(), b"\0", np.float32(alpha), np.float32(beta)]
    t0 = time.perf_counter()
    dev.launch(mod, gemm_entry(mod), grid=(m // MMA_M, n // MMA_N, 1), block=(BLOCK, 1, 1), args=args,
               shared_bytes=smem)
    secs = time.perf_counter() - t0
    d = dev.to_host(dd, np.float32).reshape(m, n)
    return d, reference_gemm(a, b, c, alpha, beta), secs, getattr(dev, "last_stats", None)


_SMEM = {}


def cute_param_facts(dev, mod, m: int = 256, k: int = 512) -> dict:
    """Run ptxlab_tutorial_param_bytes: CuTe's own TiledMma bytes, TensorA bytes and sizeof(SMEMStorage)."""
    a = dev.to_device(np.zeros(16, np.uint16))
    out = dev.empty(64)
    dev.memset(out, 0)
    dev.launch(mod, "ptxlab_tutorial_param_bytes", grid=1, block=32, args=[out, a, np.int32(m), np.int32(k)])
    raw = dev.to_host(out, np.uint8).tobytes()
    smem, s_tensor, s_mma = struct.unpack_from("<III", raw, 32)
    return dict(tiled_mma=raw[:8], tensor_a=raw[8:32], a_ptr=a.ptr, m=m, k=k, smem_bytes=smem,
                sizeof_tensor=s_tensor, sizeof_tiled_mma=s_mma)


def smem_bytes(dev, mod) -> int:
    """sizeof(SMEMStorage), as the example's host code passes it (asked from CuTe on the device, cached)."""
    if mod.key not in _SMEM:
        _SMEM[mod.key] = cute_param_facts(dev, mod)["smem_bytes"]
    return _SMEM[mod.key]


# ---------------------------------------------------------------------------------------------------------------
# The emulator inlines every `call` when it loads a kernel and refuses calls to functions without a body in the
# module ("external functions such as vprintf are not supported by the emulator"). The tutorial kernel calls
# vprintf (cute::print of the layouts under `if (thread0())`, 495 call sites) and __assertfail (CuTe asserts).
# For the emulator run only, the two .extern declarations are replaced by PTX definitions:
#   vprintf       -> returns 0 and prints nothing (the kernel ignores printf's result)
#   __assertfail  -> trap (what a failed device assert does: the kernel aborts)
# Also: CuTe's SM100_TMEM_LOAD_32dp32b1x inline asm emits `tcgen05.ld.sync.aligned.32x32b.x1.b32{%r},[%r];`
# (no blank between opcode and the first operand; legal PTX, ptxas accepts it), but the emulator's parser
# (ptxlab/emu/parser.py `_instr`: opcode = text up to the first whitespace) then sees no operands and the
# tcgen05.ld handler fails with IndexError at load. emulator_ptx inserts the blank (256 lines here).
# The result is re-assembled with nvJitLink (ptxlab.compile of PTX text), so ptxas validates it. The SASS checks
# use the unmodified NVRTC module.
# ---------------------------------------------------------------------------------------------------------------
import re  # noqa: E402

_EXTERN = {
    "vprintf": (re.compile(r"\.extern \.func\s+\(\.param \.b32 func_retval0\) vprintf\s*\(\s*\.param \.b64 "
                           r"vprintf_param_0,\s*\.param \.b64 vprintf_param_1\s*\)\s*;"),
                ".func  (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0,\n"
                "\t.param .b64 vprintf_param_1\n)\n{\n\tst.param.b32 \t[func_retval0], 0;\n\tret;\n}"),
    "__assertfail": (re.compile(r"\.extern \.func __assertfail\s*\(\s*\.param \.b64 __assertfail_param_0,\s*"
                                r"\.param \.b64 __assertfail_param_1,\s*\.param \.b32 __assertfail_param_2,\s*"
                                r"\.param \.b64 __assertfail_param_3,\s*\.param \.b64 __assertfail_param_4\s*\)\s*;"),
                     ".func __assertfail\n(\n\t.param .b64 __assertfail_param_0,\n\t.param .b64 __assertfail_param_1,"
                     "\n\t.param .b32 __assertfail_param_2,\n\t.param .b64 __assertfail_param_3,\n"
                     "\t.param .b64 __assertfail_param_4\n)\n{\n\ttrap;\n\tret;\n}"),
}


_GLUED = re.compile(r"^(\s*(?:@!?%\w+\s+)?[a-z][\w.:]*)(?=[\[{])", re.M)


def glued_operand_lines(ptx: str) -> int:
    """Number of instruction lines whose first operand ({..} or [..]) follows the opcode without a blank."""
    return len(_GLUED.findall(ptx))


# Finding: the tutorial's epilogue does copy(tiled_t2r_copy, tDtAcc, tDrAcc) (256 x tcgen05.ld.32x32b.x1) and then
# axpby on the registers with NO tcgen05.wait::ld in between (the PTX has none; none of the five tutorials in the
# wheel call cutlass::arch::fence_view_async_tmem_load(), which CUTLASS's own SM100 epilogues do call). PTX ISA
# 9.7.16.8.5: tcgen05.ld registers are valid only after tcgen05.wait::ld, and the emulator enforces it:
# "register %r633 is read before the asynchronous tcgen05.ld at PTX line ... has completed".
# With wait_ld=True, emulator_ptx inserts `tcgen05.wait::ld.sync.aligned;` right after the last tcgen05.ld (all
# loads are straight-line and precede every use), i.e. what fence_view_async_tmem_load() would add.
_WAIT_LD = "\ttcgen05.wait::ld.sync.aligned; // ptxlab: added (the tutorial never waits for its tcgen05.ld)\n"


def _insert_wait_ld(ptx: str) -> str:
    if "tcgen05.wait::ld" in ptx:
        raise RuntimeError("the PTX already has tcgen05.wait::ld: do not add another one")
    lines = ptx.splitlines(keepends=True)
    last = max((i for i, ln in enumerate(lines) if ln.lstrip().startswith("tcgen05.ld")), default=None)
    if last is None:
        raise RuntimeError("no tcgen05.ld in the PTX")
    return "".join(lines[:last + 1] + [_WAIT_LD] + lines[last + 1:])


_PROXY_FENCE = ("\tfence.proxy.async.shared::cta; // ptxlab: added (the tutorial's generic SMEM stores feed "
                "tcgen05.mma)\n")


def _insert_proxy_fences(ptx: str) -> str:
    """fence.proxy.async.shared::cta before every CTA barrier: the tutorial's cooperative_copy writes A/B to SMEM with
    generic stores and only __syncthreads() before tcgen05.mma reads them through the async proxy (PTX ISA 8.6,
    9.7.13.4; CUTLASS's own kernels call fence_view_async_shared() there)."""
    if "fence.proxy.async" in ptx:
        raise RuntimeError("the PTX already has fence.proxy.async: do not add more")
    lines = ptx.splitlines(keepends=True)
    out = []
    for ln in lines:
        if ln.lstrip().startswith(("bar.sync", "barrier.sync")):
            out.append(_PROXY_FENCE)
        out.append(ln)
    return "".join(out)


def emulator_ptx(ptx: str, wait_ld: bool = True, proxy_fence: bool = True) -> str:
    """PTX with the external vprintf / __assertfail given bodies, a blank after glued opcodes, (wait_ld) a
    tcgen05.wait::ld after the last tcgen05.ld and (proxy_fence) a fence.proxy.async before each CTA barrier (see
    above)."""
    out = _GLUED.sub(r"\1 ", ptx)
    if wait_ld:
        out = _insert_wait_ld(out)
    if proxy_fence:
        out = _insert_proxy_fences(out)
    for name, (pat, body) in _EXTERN.items():
        if f" {name}" not in out:
            continue
        out, n = pat.subn(body, out)
        if n != 1:
            raise RuntimeError(f"expected one .extern declaration of {name} in the PTX, replaced {n}")
    left = re.findall(r"^\.extern \.func.*$", out, re.M)
    if left:
        raise RuntimeError(f"other external functions remain (the emulator cannot call them): {left}")
    return out


def compile_for_emulator(mod=None, wait_ld: bool = True, proxy_fence: bool = True):
    """The module the emulator runs: emulator_ptx(NVRTC PTX) assembled by nvJitLink."""
    mod = mod or compile_tutorial()
    tag = "emu" + ("" if wait_ld else "_nowait") + ("" if proxy_fence else "_nofence")
    return ptxlab.compile(emulator_ptx(mod.ptx, wait_ld, proxy_fence), arch=mod.arch,
                          name=f"{WRAPPER.stem}.{tag}.ptx")
