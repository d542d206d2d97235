"""Device backends behind one API: ``open_device("cuda" | "emu" | "auto", arch=None)``."""
from __future__ import annotations

from typing import Any, Optional

from ptxlab.device.args import Param, pack_params, parse_entry_params
from ptxlab.device.base import Device, DeviceBuffer
from ptxlab.errors import DeviceUnavailable, UsageError

__all__ = ["open_device", "Device", "DeviceBuffer", "Param", "parse_entry_params", "pack_params"]


def _open_emu(**kwargs: Any) -> Device:
    try:
        from ptxlab.emu.device import EmuDevice
    except ImportError as exc:
        if getattr(exc, "name", None) == "ptxlab.emu.device" or "EmuDevice" in str(exc):
            raise DeviceUnavailable(
                "the emulator backend is not available yet (ptxlab/emu/device.py with class EmuDevice is missing); "
                "use open_device('cuda') on a GPU machine, or wait for the emulator backend") from exc
        raise DeviceUnavailable(f"the emulator backend failed to import: {exc}") from exc
    import inspect

    known = [k for k in inspect.signature(EmuDevice.__init__).parameters if k != "self"]
    bad = sorted(set(kwargs) - set(known))
    if bad:
        raise UsageError(f"open_device('emu', {', '.join(f'{k}=...' for k in bad)}): unknown option(s); the emulator "
                         f"takes {', '.join(known)}")
    return EmuDevice(**kwargs)


def _open_cuda(arch: Optional[str]) -> Device:
    from ptxlab.device.cuda import CudaDevice

    dev = CudaDevice()
    if arch is not None and not dev.arch_supported(arch):
        raise DeviceUnavailable(f"open_device('cuda', arch={arch!r}): {dev.describe()} cannot run {arch}; "
                                "use open_device('emu') or a GPU of that architecture")
    return dev


def open_device(kind: str = "auto", arch: Optional[str] = None, **kwargs: Any) -> Device:
    """Open a backend. "auto" picks cuda when a GPU that runs `arch` (any GPU if arch is None) exists, else emu."""
    if not isinstance(kind, str):
        raise UsageError(f"open_device({kind!r}): the backend is a name: 'cuda', 'emu' or 'auto'")
    kind = kind.strip().lower()
    if kind == "cuda":
        if kwargs:
            raise UsageError(f"open_device('cuda', {', '.join(f'{k}=...' for k in sorted(kwargs))}): these are emulator "
                             "options; the cuda backend takes only arch=")
        return _open_cuda(arch)
    if kind == "emu":
        return _open_emu(**kwargs)
    if kind == "auto":
        try:
            return _open_cuda(arch)
        except DeviceUnavailable:
            return _open_emu(**kwargs)
    raise DeviceUnavailable(f"open_device({kind!r}): unknown backend; use 'cuda', 'emu' or 'auto'")
