"""The ptxlab PTX emulator: runs NVRTC-generated PTX on the CPU (``ptxlab.open_device("emu")``).

Layers, each a subpackage; an arrow only ever points down (``tests/test_import_cycles.py`` checks it):

=========== ==========================================================================================================
``device``  ``EmuDevice``: the emulator behind ``open_device("emu")`` (module load, memory, launches)
``ops/``    the instruction families, one module per PTX ISA chapter (9.7.x); handlers register with ``core.isa``
``engine/`` the execution engines: ``machine.py``, the SIMT interpreter (waves, scheduler, memory access, async
            queue); ``native/``, the native engine; ``workers.py`` (parallel waves); ``decode_cache.py``
``hw/``     hardware models beneath the instructions: TMA, mbarrier, TMEM and tcgen05, clusters, CLC, proxies, swizzle
``checks/`` what the emulator enforces and reports: fidelity rules, site warnings, watchdog, synccheck, exit check,
            line info, known hardware behaviour
``core/``   PTX text to a runnable program: parser, IR, types, ISA registry, program, memory, frames, call stack,
            thread states and the engine's hook lists
=========== ==========================================================================================================

``ptxlab.emu.<old name>`` (the flat layout before the layers: ``ptxlab.emu.machine``, ``ptxlab.emu.tma_model``,
``ptxlab.emu.ops_float`` ...) still imports, as the same module object, with a DeprecationWarning naming the new path.
See API.md for the handler API.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

from .core.isa import FAMILY_ERRORS  # noqa: F401  (re-exported)
from .ops import load_families  # noqa: F401  (re-exported)

# the flat module names of the emulator before its layers (kept importable): old name -> new dotted path
MOVED = {
    "parser": "core.parser", "ir": "core.ir", "types": "core.types", "isa": "core.isa", "program": "core.program",
    "memory": "core.memory", "frames": "core.frames", "callstack": "core.callstack",
    "thread_status": "core.thread_status",
    "fidelity": "checks.fidelity", "sitewarn": "checks.sitewarn", "watchdog": "checks.watchdog",
    "synccheck": "checks.synccheck", "exitcheck": "checks.exitcheck", "lineinfo": "checks.lineinfo",
    "hwknown": "checks.hwknown",
    "swizzle": "hw.swizzle", "tma_model": "hw.tma", "mbarrier_model": "hw.mbarrier", "tmem": "hw.tmem",
    "tcgen05_maps": "hw.tcgen05_maps", "tcgen05_mma": "hw.tcgen05_mma", "tcgen05_mma_pair": "hw.tcgen05_mma_pair",
    "tcgen05_pairing": "hw.tcgen05_pairing", "cluster": "hw.cluster", "cta_pair": "hw.cta_pair",
    "clc_model": "hw.clc", "proxy": "hw.proxy",
    "machine": "engine.machine",
    "ops_int": "ops.integer", "ops_float": "ops.floating_point", "ops_cmp": "ops.comparison",
    "ops_cvt": "ops.conversion", "ops_mem": "ops.data_movement", "ops_cpasync": "ops.cp_async",
    "ops_tma": "ops.bulk_copy", "ops_atom": "ops.atomic", "ops_sync": "ops.barrier", "ops_mbarrier": "ops.mbarrier",
    "ops_warp": "ops.warp", "ops_warp_sync": "ops.warp_sync", "ops_cluster": "ops.cluster", "ops_clc": "ops.clc",
    "ops_griddepcontrol": "ops.griddepcontrol", "ops_tcgen05": "ops.tcgen05", "ops_printf": "ops.printf",
}

# public names at the package level: name -> module (under ptxlab.emu) that defines it; imported on first use
PUBLIC = {
    "EmuDevice": "device",
    "EmuWarning": "checks.sitewarn",
    "EmuFidelityWarning": "checks.fidelity",
    "Unsupported": "core.isa",
    "handler": "core.isa",
    "parse": "core.parser",
    "Program": "core.program",
}

__all__ = ["FAMILY_ERRORS", "load_families", "MOVED", *PUBLIC]


def __getattr__(name: str):
    if name in PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{PUBLIC[name]}"), name)
    if name in MOVED:  # `from ptxlab.emu import machine` (the old flat layout)
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``ptxlab.emu.<old name>`` as the module at its new path (one module object under both names)."""

    _specs: dict = {}

    def find_spec(self, fullname, path=None, target=None):
        pkg, _, leaf = fullname.rpartition(".")
        if pkg != __name__ or leaf not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        leaf = spec.name.rpartition(".")[2]
        new = f"{__name__}.{MOVED[leaf]}"
        warnings.warn(f"{spec.name} moved to {new}; import it from there", DeprecationWarning, stacklevel=3)
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__  # the import system overwrites __spec__ with the alias's spec
        return module

    def exec_module(self, module):
        # the new module is already executed; this name only points at it: give it back its own spec
        module.__spec__ = self._specs.pop(module.__spec__.name, module.__spec__)


if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
    sys.meta_path.append(_MovedModuleFinder())
