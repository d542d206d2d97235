"""gpu-mode ``nvfp4_gemv`` adapter: ``custom_kernel(data)`` on the 7-tuple that gpu-mode's ``generate_input`` builds.

This file is SELF-CONTAINED on purpose: ``python lab.py export --problem nvfp4_gemv`` copies it into a single-file
submission, with ``KERNEL_SRC`` replaced by the kernel text and the ``from ptxlab.production.plan_gemv import (...)``
statement by the text of ``plan_gemv.py`` (the configs and launch plan the lab's ``ptxlab.production.gemv`` imports
too). It needs only what a gpu-mode runner has:
torch, and on a GPU cuda-python (``cuda.bindings``: NVRTC + driver API; the gpu-mode NVIDIA runners ship it, CuTe DSL
depends on it). It never includes a CUDA header, so bare NVRTC compiles it.

Paths:
  * CUDA (``a.is_cuda``), backend ``GEMV_BACKEND`` = auto (default) | nvrtc | load_inline: the kernel is compiled
    once per process and config (``pick_config(M, K, L)``: a tuned config per gpu-mode benchmark shape, else a rule;
    see below) with NVRTC for the GPU's arch (sm_90a on Hopper,
    sm_100a on Blackwell; other archs get sm_XY without the "a" features: the sm_90 decode path), loaded with the
    driver API, and launched on torch's current stream with the tensors' ``data_ptr()`` -- gpu-mode's tensors are read
    in place, c is written in place and returned. Nothing is repacked in the timed path. Without cuda-python (or with
    GEMV_BACKEND=load_inline) torch.utils.cpp_extension.load_inline builds the same kernel text with nvcc instead
    (UNTESTED on a GPU runner so far: needs nvcc + ninja there). A tensor that is not laid out
    batch-outermost (as gpu-mode builds them) is made so with a copy (never the case for gpu-mode's inputs).
  * CPU tensors: the ptxlab emulator runs the same kernel (needs the ``ptxlab`` package; copies numpy views in and c
    out). This is the test path of the lab, not a fast path.

Configs (``#define``s prepended to the kernel text, ``config_defines``): the flat variant ("flat", warps, rows per
round, prefetch, min CTAs per SM) for K % 1024 == 0 (persistent CTAs, grid from the driver's occupancy), else the
register variant (rows_per_warp, warps, unroll, ksplit, prefetch). ROWS_PER_CTA / THREADS describe the register
variant's default config.
"""
from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["custom_kernel", "KERNEL_NAME", "ROWS_PER_CTA", "THREADS", "kernel_source", "nvrtc_compile", "nvrtc_cubin",
           "CudaGemv", "cuda_gemv", "gemv_arch", "InlineGemv", "inline_gemv", "CONFIG_NAMES", "DEFAULT_CONFIG",
           "SHAPE_CONFIGS", "FLAT_DEFAULT", "is_flat", "flat_fits", "fits", "full_config", "rows_per_cta",
           "config_defines", "launch_plan", "pick_config"]

KERNEL_SRC = None  # the exporter embeds the kernel text here; None: read ptxlab/kernels/nvfp4_gemv_cudacore.cu
KERNEL_NAME = "nvfp4_gemv_cudacore"
from ptxlab.production.plan_gemv import (ROWS_PER_CTA, THREADS, N_PADDED, CONFIG_NAMES, DEFAULT_CONFIG, FLAT_NAMES,
    FLAT_DEFAULT, SHAPE_CONFIGS, B200_SHAPE_CONFIGS, is_flat, full_config, rows_per_cta, config_defines, flat_fits, fits, launch_plan,
    pick_config)  # noqa: E402,F401  (export: replaced by plan_gemv.py's text)


def kernel_source() -> str:
    if KERNEL_SRC is not None:
        return KERNEL_SRC
    from ptxlab.kernels import read

    return read("nvfp4_gemv_cudacore.cu")


def gemv_arch(major: int, minor: int) -> str:
    """NVRTC target for a GPU of compute capability major.minor."""
    if major >= 9:
        return f"sm_{major}{minor}a"  # sm_100a/sm_103a/sm_120a: cvt e2m1x2 decode; sm_90a: integer decode
    return f"sm_{major}{minor}"  # pre-Hopper: integer decode (cvt e4m3x2 needs sm_89+)


def nvrtc_compile(source: str, arch: str, name: str = "kernel.cu", options: tuple = ()) -> tuple[str, bytes]:
    """Compile CUDA C++ with bare NVRTC (no include paths): (ptx, cubin) for arch; raises RuntimeError with the log.

    Shared with the GEMM adapter (submission_gemm.py): the exporter copies this function's text into the GEMM
    submission, so it must stay self-contained (stdlib + cuda.bindings imported inside)."""
    from cuda.bindings import nvrtc

    def ok(res: tuple, what: str) -> tuple:
        if res[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC {what} failed: {res[0]!r}")
        return res[1:]

    (prog,) = ok(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []), "create")
    try:
        opts = [f"-arch={arch}".encode(), b"-std=c++17", *(str(o).encode() for o in options)]
        (res,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if res != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            (n,) = ok(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
            buf = bytearray(n)       # never b" " * n: NVRTC writes into it, and b" " * 1 is CPython's shared b" "
            ok(nvrtc.nvrtcGetProgramLog(prog, buf), "log")
            raise RuntimeError(f"NVRTC could not compile {name} for {arch}:\n{bytes(buf).decode(errors='replace')}")
        (n,) = ok(nvrtc.nvrtcGetPTXSize(prog), "ptx size")
        ptx = bytearray(n)
        ok(nvrtc.nvrtcGetPTX(prog, ptx), "ptx")
        (n,) = ok(nvrtc.nvrtcGetCUBINSize(prog), "cubin size")
        cubin = bytearray(n)
        ok(nvrtc.nvrtcGetCUBIN(prog, cubin), "cubin")
        return bytes(ptx).rstrip(b"\0").decode(), bytes(cubin)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def nvrtc_cubin(arch: str, source: str | None = None) -> bytes:
    """Compile the kernel with bare NVRTC (no include paths) to a cubin for arch; raises RuntimeError with the log."""
    src = kernel_source() if source is None else source
    return nvrtc_compile(src, arch, "nvfp4_gemv_cudacore.cu")[1]


class CudaGemv:
    """The GEMV loaded on one CUDA device through the driver API; ``launch`` takes raw device pointers."""

    def __init__(self, device_index: int = 0, arch: str | None = None, rows_per_warp: int = 4, warps: int = 2,
                 unroll: int = 2, ksplit: int = 1, prefetch: int = 0, config: tuple | None = None,
                 defines: dict | None = None, source: str | None = None) -> None:
        """config = (rows_per_warp, warps, unroll[, ksplit[, prefetch]]) (or the keyword arguments) sets the kernel's
        GEMV_ROWS_PER_WARP/GEMV_WARPS/GEMV_UNROLL/GEMV_KSPLIT/GEMV_PREFETCH; ("flat", warps, rows_per_round,
        prefetch, min_ctas) selects the flat variant; defines: further #defines (tuning); source: kernel text instead
        of kernel_source() (benchmarks compare against older kernels)."""
        from cuda.bindings import driver as drv

        self._drv = drv
        self._check(drv.cuInit(0), "cuInit")
        dev = self._check(drv.cuDeviceGet(device_index), "cuDeviceGet")
        attr = drv.CUdevice_attribute
        major = self._check(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cc")
        minor = self._check(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cc")
        self.arch = arch or gemv_arch(major, minor)
        # torch uses the primary context too: retaining it and making it current is a no-op when torch already did
        self._ctx = self._check(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        self._check(drv.cuCtxSetCurrent(self._ctx), "cuCtxSetCurrent")
        cfg = tuple(config) if config is not None else (rows_per_warp, warps, unroll, ksplit, prefetch)
        self.config = full_config(cfg)
        self.flat = is_flat(self.config)
        self.rows_per_cta = 0 if self.flat else rows_per_cta(self.config)
        self.threads = 32 * self.config[1]
        self.sms = self._check(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "SMs")
        extra = "".join(f"#define {n} {v}\n" for n, v in (defines or {}).items())
        self.cubin = nvrtc_cubin(self.arch, config_defines(self.config) + extra + (source or kernel_source()))
        self._module = self._check(drv.cuModuleLoadData(self.cubin), "cuModuleLoadData")
        self._func = self._check(drv.cuModuleGetFunction(self._module, KERNEL_NAME.encode()), "cuModuleGetFunction")
        self._plans: dict = {}

    def plan(self, m: int, k: int, l: int) -> tuple:
        """(grid, threads, dynamic shared bytes) for M x K x L; the flat variant's grid follows the driver's occupancy
        of this kernel (persistent CTAs)."""
        key = (m, k, l)
        if key not in self._plans:
            if not fits(self.config, m, k):
                raise ValueError(f"nvfp4 GEMV: config {self.config} cannot run M={m} K={k}")
            per_sm = None
            if self.flat:
                drv = self._drv
                per_sm = max(1, int(self._check(drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    self._func, self.threads, 0), "cuOccupancyMaxActiveBlocksPerMultiprocessor")))
            grid, block, smem = launch_plan(m, k, l, self.config, self.sms, per_sm)
            self._plans[key] = (grid, block[0], smem)
        return self._plans[key]

    def _check(self, res: Any, what: str) -> Any:
        err = res[0]
        if err != self._drv.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA driver call {what} failed: {err!r}")
        return None if len(res) == 1 else (res[1] if len(res) == 2 else res[1:])

    def params(self, a: int, b: int, sfa: int, sfb: int, c: int, m: int, k: int, l: int) -> tuple[Any, int]:
        """Packed kernel parameters (keep the returned object alive until the launch is enqueued)."""
        vals = [ctypes.c_uint64(a), ctypes.c_uint64(b), ctypes.c_uint64(sfa), ctypes.c_uint64(sfb), ctypes.c_uint64(c),
                ctypes.c_int32(m), ctypes.c_int32(k), ctypes.c_int32(l)]
        ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])
        return (vals, ptrs), ctypes.addressof(ptrs)

    def launch(self, a: int, b: int, sfa: int, sfb: int, c: int, m: int, k: int, l: int, stream: int = 0,
               packed: Any = None) -> None:
        """Enqueue c(L, M) fp16 = GEMV of the physical (L, rows, cols) buffers at those addresses on stream."""
        keep, addr = packed if packed is not None else self.params(a, b, sfa, sfb, c, m, k, l)
        grid, threads, smem = self.plan(m, k, l)
        self._check(self._drv.cuLaunchKernel(self._func, *grid, threads, 1, 1, smem, self._drv.CUstream(stream),
                                             addr, 0),
                    f"cuLaunchKernel({KERNEL_NAME}, grid={grid}, smem={smem})")
        del keep


_RUNNERS: dict[tuple, CudaGemv] = {}
_EMU_MODULES: dict[tuple, Any] = {}


def cuda_gemv(device_index: int, config: tuple | None = None) -> CudaGemv:
    """The per-process CudaGemv of a device and config (default config; compiled on first use)."""
    key = (device_index, full_config(config))
    if key not in _RUNNERS:
        _RUNNERS[key] = CudaGemv(device_index, config=key[1])
    return _RUNNERS[key]


def _backend() -> str:
    """GEMV_BACKEND=nvrtc | load_inline | auto (default): NVRTC via cuda-python when importable, else load_inline."""
    import os

    want = os.environ.get("GEMV_BACKEND", "auto").strip().lower()
    if want in ("nvrtc", "load_inline"):
        return want
    try:
        import cuda.bindings.driver  # noqa: F401
        import cuda.bindings.nvrtc  # noqa: F401
    except ImportError:
        return "load_inline"
    return "nvrtc"


_INLINE_DECL = ("void gemv_launch(torch::Tensor a, torch::Tensor b, torch::Tensor sfa, torch::Tensor sfb, "
                "torch::Tensor c, int64_t m, int64_t k, int64_t l, int64_t gx);")
_INLINE_LAUNCHER = r"""
void gemv_launch(torch::Tensor a, torch::Tensor b, torch::Tensor sfa, torch::Tensor sfb, torch::Tensor c,
                 int64_t m, int64_t k, int64_t l, int64_t gx) {
  dim3 grid((unsigned)gx, (unsigned)l, 1u);
  nvfp4_gemv_cudacore<<<grid, GEMV_THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
      static_cast<const unsigned char*>(a.data_ptr()), static_cast<const unsigned char*>(b.data_ptr()),
      static_cast<const unsigned char*>(sfa.data_ptr()), static_cast<const unsigned char*>(sfb.data_ptr()),
      static_cast<unsigned short*>(c.data_ptr()), (int)m, (int)k, (int)l);
}
"""


class InlineGemv:
    """Fallback when cuda-python is missing: torch.utils.cpp_extension.load_inline (needs nvcc, ninja and a host
    compiler on the machine; builds in tens of seconds). Same kernel text, launched with <<<>>> on torch's stream."""

    def __init__(self, device_index: int = 0, config: tuple | None = None) -> None:
        import torch
        from torch.utils.cpp_extension import load_inline

        major, minor = torch.cuda.get_device_capability(device_index)
        self.arch = gemv_arch(major, minor)
        self.config = full_config(config)
        num = self.arch[3:]
        cuda_src = ("#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n" + config_defines(self.config)
                    + kernel_source() + _INLINE_LAUNCHER)
        tag = "_".join(str(v) for v in self.config)
        self._mod = load_inline(name=f"ptxlab_nvfp4_gemv_sm{num}_{tag}", cpp_sources=[_INLINE_DECL],
                                cuda_sources=[cuda_src],
                                functions=["gemv_launch"], verbose=False,
                                extra_cuda_cflags=["-O3", f"-gencode=arch=compute_{num},code=sm_{num}"])

    def launch_tensors(self, a: Any, b: Any, sfa: Any, sfb: Any, c: Any, m: int, k: int, l: int) -> None:
        import torch

        sms = torch.cuda.get_device_properties(a.device).multi_processor_count
        grid, _, _ = launch_plan(m, k, l, self.config, sms)  # flat: the config's min CTAs per SM
        self._mod.gemv_launch(a, b, sfa, sfb, c, m, k, l, grid[0])


_INLINE: dict[tuple, InlineGemv] = {}


def inline_gemv(device_index: int, config: tuple | None = None) -> InlineGemv:
    key = (device_index, full_config(config))
    if key not in _INLINE:
        _INLINE[key] = InlineGemv(device_index, key[1])
    return _INLINE[key]


def _lmk(t: Any) -> Any:
    """t (rows, cols, L) -> a tensor whose storage is (L, rows, cols) contiguous: t itself when gpu-mode built it."""
    p = t.permute(2, 0, 1)
    return t if p.is_contiguous() else p.contiguous().permute(1, 2, 0)


def _shape(data: Any) -> tuple[int, int, int]:
    a, b, sfa, sfb, _, _, c = data
    m, half_k, l = a.shape
    k = 2 * half_k
    if k % 32:
        raise ValueError(f"nvfp4_gemv custom_kernel: K={k} must be a multiple of 32")
    want = {"b": (b, (N_PADDED, half_k, l)), "sfa": (sfa, (m, k // 16, l)), "sfb": (sfb, (N_PADDED, k // 16, l)),
            "c": (c, (m, 1, l))}
    for name, (t, shape) in want.items():
        if tuple(t.shape) != shape:
            raise ValueError(f"nvfp4_gemv custom_kernel: {name} has shape {tuple(t.shape)}, expected {shape}")
    return m, k, l


def custom_kernel(data: Any) -> Any:
    """gpu-mode entry point: data = (a, b, sfa, sfb, sfa_permuted, sfb_permuted, c); returns c (M, 1, L) fp16.

    Reads a, b (row 0), sfa, sfb in the reference layout (the permuted scale tensors are not used)."""
    a, b, sfa, sfb, _, _, c = data
    m, k, l = _shape(data)
    if a.is_cuda:
        import torch

        a, b, sfa, sfb = (_lmk(t) for t in (a, b, sfa, sfb))
        out = c if c.permute(2, 0, 1).is_contiguous() else \
            torch.empty((l, m, 1), dtype=c.dtype, device=c.device).permute(1, 2, 0)
        index = a.device.index if a.device.index is not None else torch.cuda.current_device()
        cfg = pick_config(m, k, l, gemv_arch(*torch.cuda.get_device_capability(index)))
        # the device guard makes the tensors' device (its primary context, which the runner's module lives in)
        # current for the driver-API launch; a no-op when it already is (the single-GPU case)
        with torch.cuda.device(index):
            if _backend() == "load_inline":
                inline_gemv(index, cfg).launch_tensors(a, b, sfa, sfb, out, m, k, l)
            else:
                cuda_gemv(index, cfg).launch(a.data_ptr(), b.data_ptr(), sfa.data_ptr(), sfb.data_ptr(),
                                             out.data_ptr(), m, k, l,
                                             stream=torch.cuda.current_stream(a.device).cuda_stream)
        if out is not c:
            c.copy_(out)
        return c
    return _emulator_gemv(data, m, k, l)


def _emulator_gemv(data: Any, m: int, k: int, l: int) -> Any:
    """CPU tensors: run the kernel's PTX on the ptxlab emulator (copies in and out; lab/test path)."""
    import numpy as np
    import torch

    try:
        from ptxlab.gpumode import from_torch
        from ptxlab.production.gemv import run_gemv
    except ImportError as exc:  # pragma: no cover - exported file outside the lab
        raise RuntimeError("nvfp4_gemv custom_kernel: CPU tensors need the ptxlab emulator (pip install ptxlab), "
                           "or pass CUDA tensors") from exc
    c = data[6]
    p = from_torch(data)  # numpy views with the tensors' strides (no copy)
    import os

    import ptxlab

    arch = os.environ.get("PTXLAB_GEMV_EMU_ARCH", "sm_90a")  # the emulator runs either arch's PTX
    cfg = pick_config(m, k, l, arch)
    if (arch, cfg) not in _EMU_MODULES:  # compile THIS file's kernel text (the embedded one in an exported submission)
        _EMU_MODULES[arch, cfg] = ptxlab.compile(config_defines(cfg) + kernel_source(), arch=arch,
                                                 name="nvfp4_gemv_cudacore.cu")
    out = run_gemv(p, "emu", arch=arch, module=_EMU_MODULES[arch, cfg], config=cfg)
    c.copy_(torch.from_numpy(np.ascontiguousarray(out.transpose(2, 0, 1))).permute(1, 2, 0))
    return c
