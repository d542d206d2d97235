"""A device allocation, the one type both the argument packer (args.py) and the backends (base.py) know."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ptxlab.device.base import Device

__all__ = ["DeviceBuffer"]


@dataclass(eq=False)
class DeviceBuffer:
    """A device allocation: ``ptr`` is the address kernels see, ``nbytes`` its size."""

    ptr: int
    nbytes: int
    device: "Device" = field(repr=False)
    freed: bool = False
