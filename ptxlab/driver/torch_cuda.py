"""``device="cuda"`` torch tensors on the emulator, for scripts run by ``lab.py exec`` (when torch is installed: the
CPU build is enough).

A CUDA tensor becomes an :class:`EmuCudaTensor`: a CPU tensor whose storage is mirrored in the emulator's global
memory the first time a kernel can see it (``__dlpack__`` exports the device copy as ``kDLCUDA`` device 0;
``data_ptr()`` returns the device address, for ``cute.runtime.make_ptr``). The mirrors behave as unified memory:
before every launch the host bytes of each live mirror are copied to the device, after it the device bytes back,
so torch code between launches (references, ``assert_close``, ``.cpu()``) sees what the kernels wrote.

``enable()`` installs a ``TorchFunctionMode`` that turns ``device="cuda"`` arguments, ``.cuda()`` and
``.to("cuda")`` into mirrors, and replaces the ``torch.cuda`` functions such scripts call (``is_available``,
``synchronize``, ``current_stream``, ``Event``, capability queries) with ones that describe the emulated device.
Torch's own CUDA kernels do not exist here: ops on mirrors run on the CPU build, or fail with torch's own error.
One exception, because NVIDIA's NVFP4 examples and the gpu-mode problems use it as their reference:
``torch._scaled_mm`` of ``float4_e2m1fn_x2`` operands with ``float8_e4m3fn`` block scales (16 values per scale, cuBLAS
"blocked" scale layout), which the CPU build refuses, is computed from its definition (:func:`scaled_mm_nvfp4`:
every product and sum in float64, rounded once to the output type).
"""
from __future__ import annotations

import ctypes
import time
import weakref
from typing import Any, Dict

import torch
from torch.overrides import TorchFunctionMode

from ptxlab.driver.install import install

__all__ = ["EmuCudaTensor", "enable", "mirror", "sync_to_device", "sync_to_host"]

kDLCUDA = 2
_MIRRORS: Dict[int, list] = {}       # host storage address -> [device address, nbytes, weakref to the storage]


class EmuCudaTensor(torch.Tensor):
    """A CPU tensor that kernels see in the emulator's memory (module docstring)."""

    @property
    def is_cuda(self) -> bool:       # what the script asked for
        return True

    def data_ptr(self) -> int:
        return _device_address(self)

    def __dlpack__(self, stream: Any = None, max_version=None, dl_device=None, copy=None):
        plain = self.as_subclass(torch.Tensor)
        cap = plain.__dlpack__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        mt = get(cap, b"dltensor")
        host = ctypes.c_void_p.from_address(mt).value or 0          # DLTensor.data
        ctypes.c_void_p.from_address(mt).value = _device_address(self, host)
        ctypes.c_int32.from_address(mt + 8).value = kDLCUDA         # DLTensor.device
        ctypes.c_int32.from_address(mt + 12).value = 0
        return cap

    def __dlpack_device__(self):
        return (kDLCUDA, 0)


def _storage(t: torch.Tensor):
    return t.as_subclass(torch.Tensor).untyped_storage()


def _device_address(t: torch.Tensor, host_ptr: int = None) -> int:
    """The device address of t's first element (its storage mirrored on first use)."""
    from ptxlab.driver.api_memory import alloc
    st = _storage(t)
    base, nbytes = st.data_ptr(), st.nbytes()
    ent = _MIRRORS.get(base)
    if ent is None or ent[2]() is not st:
        s = install().state
        s.ensure_primary()
        dev = alloc(s, max(nbytes, 1), "torch cuda tensor")
        # the mirror lives as long as the storage (one Python object per storage, kept while any view uses it)
        ent = _MIRRORS[base] = [dev, nbytes, weakref.ref(st)]
        if nbytes:
            s.dev._write(dev, ctypes.string_at(base, nbytes))
        weakref.finalize(st, _release, base, dev)
    if host_ptr is None:
        host_ptr = t.as_subclass(torch.Tensor).data_ptr()
    return ent[0] + (host_ptr - base)


def _release(base: int, dev: int) -> None:
    ent = _MIRRORS.get(base)
    if ent is not None and ent[0] == dev:
        del _MIRRORS[base]
        from ptxlab.driver.api_memory import free
        try:
            free(install().state, dev, "torch cuda tensor")
        except Exception:            # noqa: BLE001 - interpreter shutdown
            pass


def sync_to_device() -> None:
    dev = install().state.dev
    for base, (dptr, n, _) in list(_MIRRORS.items()):
        if n:
            dev._write(dptr, ctypes.string_at(base, n))


def sync_to_host() -> None:
    dev = install().state.dev
    for base, (dptr, n, _) in list(_MIRRORS.items()):
        if n:
            ctypes.memmove(base, dev._read(dptr, n), n)


def _lazy_init() -> None:
    """What torch's lazy CUDA initialisation does to the driver: cuInit, the primary context current."""
    install().state.ensure_primary()


def mirror(t: torch.Tensor) -> EmuCudaTensor:
    _lazy_init()
    return t if isinstance(t, EmuCudaTensor) else t.as_subclass(EmuCudaTensor)


def _is_cuda(dev: Any) -> bool:
    if dev is None:
        return False
    if isinstance(dev, int):
        return True                   # torch treats a bare ordinal as a CUDA device
    return str(dev).split(":")[0] == "cuda"


def _fresh(out: Any, inputs) -> Any:
    """A mirror that does not share storage with an input (a GPU copy never does)."""
    if isinstance(out, torch.Tensor):
        for x in inputs:
            if isinstance(x, torch.Tensor) and _storage(x).data_ptr() == _storage(out).data_ptr():
                out = out.as_subclass(torch.Tensor).clone()
                break
        return mirror(out)
    return out


def scaled_mm_nvfp4(a, b, scale_a, scale_b, bias=None, out_dtype=None, **kwargs):
    """``torch._scaled_mm`` for NVFP4: a (m, k/2) and b (k/2, n) ``float4_e2m1fn_x2`` (b the transpose of a K-major
    (n, k/2) tensor), scale_a / scale_b ``float8_e4m3fn`` in cuBLAS's blocked layout of (m, k/16) / (n, k/16)."""
    import numpy as np

    from ptxlab.numerics import decode_e4m3, decode_fp4x2
    from ptxlab.scales import from_blocked
    if bias is not None or kwargs.get("scale_result") is not None:
        raise NotImplementedError("ptxlab torch._scaled_mm (NVFP4): bias / scale_result are not supported")
    u8 = lambda t: t.as_subclass(torch.Tensor).contiguous().view(torch.uint8).numpy()  # noqa: E731
    av = decode_fp4x2(u8(a)).astype(np.float64)                      # (m, k)
    bv = decode_fp4x2(u8(b.t())).astype(np.float64)                  # (n, k)
    m, k = av.shape
    n = bv.shape[0]
    sa = decode_e4m3(from_blocked(u8(scale_a).reshape(-1), m, k // 16)).astype(np.float64)
    sb = decode_e4m3(from_blocked(u8(scale_b).reshape(-1), n, k // 16)).astype(np.float64)
    out = (av * np.repeat(sa, 16, axis=1)) @ (bv * np.repeat(sb, 16, axis=1)).T
    target = out_dtype or torch.float32                              # one rounding, from float64 to the output type
    if target == torch.bfloat16:
        import ml_dtypes
        res = torch.from_numpy(out.astype(ml_dtypes.bfloat16).view(np.int16)).view(torch.bfloat16)
    else:
        res = torch.from_numpy(out.astype({torch.float16: np.float16, torch.float32: np.float32}[target]))
    return mirror(res) if isinstance(a, EmuCudaTensor) else res


def _is_nvfp4_scaled_mm(func, args) -> bool:
    return func is torch._scaled_mm and len(args) >= 2 and all(
        isinstance(x, torch.Tensor) and x.dtype == torch.float4_e2m1fn_x2 for x in args[:2])


class _CudaOnEmulator(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if _is_nvfp4_scaled_mm(func, args):
            return scaled_mm_nvfp4(*args, **kwargs)
        if func is torch.Tensor.cuda:
            return _fresh(args[0].as_subclass(torch.Tensor), [args[0]])
        if func is torch.Tensor.cpu and isinstance(args[0], EmuCudaTensor):
            return args[0].as_subclass(torch.Tensor).clone()
        to_cuda = _is_cuda(kwargs.get("device"))
        if to_cuda:
            kwargs["device"] = "cpu"
        if func is torch.Tensor.to:
            rest = list(args[1:])
            for i, a in enumerate(rest):
                if _is_cuda(a) and not isinstance(a, torch.Tensor):
                    rest[i], to_cuda = "cpu", True
                elif isinstance(a, str) and a.split(":")[0] == "cpu" and isinstance(args[0], EmuCudaTensor):
                    return args[0].as_subclass(torch.Tensor).clone().to(*rest[i + 1:], **kwargs)
            if kwargs.get("device") is not None and str(kwargs["device"]) == "cpu" and not to_cuda \
                    and isinstance(args[0], EmuCudaTensor):
                return args[0].as_subclass(torch.Tensor).clone().to(**{k: v for k, v in kwargs.items()
                                                                         if k != "device"})
            args = (args[0], *rest)
        out = func(*args, **kwargs)
        return _fresh(out, args) if to_cuda else out


class _Stream:
    cuda_stream = 0

    def synchronize(self) -> None:
        pass

    def wait_stream(self, other) -> None:
        pass


class _Event:
    def __init__(self, enable_timing: bool = False, **kwargs) -> None:
        self.t = None

    def record(self, stream=None) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: "_Event") -> float:
        return (end.t - self.t) * 1e3


class CUDAGraph:
    """``torch.cuda.CUDAGraph``: kernel launches made during capture are recorded (with their parameter bytes) and
    run, in order, by ``replay()``; other GPU work during a capture is not recorded (copies run at once)."""

    def __init__(self, *args, **kwargs) -> None:
        self.launches: list = []

    def capture_begin(self, *args, **kwargs) -> None:
        install().state.capture = self.launches = []

    def capture_end(self) -> None:
        install().state.capture = None

    def replay(self) -> None:
        from ptxlab.errors import EmuError
        s = install().state
        for run in self.launches:
            try:
                run()
            except EmuError as e:           # as a launch does: report once, context lost; torch raises
                s.record_fault(e)
                raise RuntimeError("CUDA error: unspecified launch failure (the emulator stopped a kernel of the "
                                   "graph; report above)") from None

    def reset(self) -> None:
        self.launches = []


class _graph:
    def __init__(self, cuda_graph: CUDAGraph, *args, **kwargs) -> None:
        self.g = cuda_graph

    def __enter__(self):
        self.g.capture_begin()
        return self.g

    def __exit__(self, *exc) -> None:
        self.g.capture_end()


_CUDA_FUNCS = {
    "CUDAGraph": CUDAGraph,
    "graph": _graph,
    "is_available": lambda: True,
    "device_count": lambda: 1,
    "current_device": lambda: 0,
    "set_device": lambda d: None,
    "synchronize": lambda *a, **k: None,
    "current_stream": lambda *a, **k: _Stream(),
    "default_stream": lambda *a, **k: _Stream(),
    "Stream": lambda *a, **k: _Stream(),
    "Event": _Event,
    "get_device_capability": lambda *a, **k: (10, 0),
    "get_device_name": lambda *a, **k: "ptxlab emulated NVIDIA B200 (sm_100a)",
    "manual_seed": lambda seed: None,
    "manual_seed_all": lambda seed: None,
    "empty_cache": lambda: None,
}

_mode = None


def _initializing(fn):
    def wrapper(*args, **kwargs):
        _lazy_init()
        return fn(*args, **kwargs)
    wrapper.__name__ = getattr(fn, "__name__", "fn")
    return wrapper


def enable() -> None:
    """Turn on the CUDA-tensor mirrors and the torch.cuda replacements for this process (idempotent)."""
    global _mode
    if _mode is not None:
        return
    layer = install()
    hooks = (sync_to_device, sync_to_host)
    layer.state.launch_hooks.append(hooks)
    saved = {name: getattr(torch.cuda, name, None) for name in _CUDA_FUNCS}
    for name, fn in _CUDA_FUNCS.items():
        setattr(torch.cuda, name, _initializing(fn))
    _mode = _CudaOnEmulator()
    _mode.__enter__()

    def disable() -> None:          # ptxlab.driver.uninstall(): torch as it was (mirrors already made stay CPU tensors)
        global _mode
        _mode.__exit__(None, None, None)
        _mode = None
        for name, orig in saved.items():
            setattr(torch.cuda, name, orig)
        layer.state.launch_hooks.remove(hooks)
    layer.undo.append(disable)
