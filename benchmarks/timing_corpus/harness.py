"""Build, set up, launch and check one corpus kernel on a ptxlab device (the emulator or the GPU: same code).

``source(k)`` assembles the kernel's compilation unit at run time from the cached public files (prelude + device
code of each file + the explicit instantiation); ``build(k)`` compiles it with ``ptxlab.compile`` (NVRTC, sm_90a)
and finds the entry's (mangled) name; ``Setup`` holds one input set on a device: the arrays, the packed arguments,
the launch, and ``check`` against the host reference (problems.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from . import extract, problems, sources
from .manifest import Kernel

ARCH = "sm_90a"
_SCALAR = {"i32": np.int32, "u32": np.uint32, "u64": np.uint64, "f32": np.float32}


def source(k: Kernel, root=None) -> str:
    """The compilation unit of kernel ``k`` (nothing of it is stored in the repo)."""
    parts = [k.prelude]
    for path in k.files:
        text = sources.read(k.source, path, root)
        for old, new in k.replace:
            if old not in text and path == k.files[-1]:
                raise ValueError(f"{k.name}: replacement target {old!r} not found in {path}")
            text = text.replace(old, new)
        parts.append(extract.device_code(text, k.types))
    unit = "\n".join(parts)
    if k.targs:
        unit += "\n" + extract.instantiation(unit, k.entry, k.targs, dict(k.subst)) + "\n"
    return unit


def entry_name(kernels, entry: str) -> str:
    """The module's name of ``entry``: itself (extern "C") or its one mangled form ``_Z<len><entry>...``."""
    if entry in kernels:
        return entry
    pref = f"_Z{len(entry)}{entry}"          # the length prefix makes a longer name with this start impossible
    hits = sorted(n for n in kernels if n.startswith(pref))
    if len(hits) != 1:
        raise LookupError(f"kernel {entry!r}: {len(hits)} matching entries in the module ({sorted(kernels)})")
    return hits[0]


@dataclass
class Built:
    kernel: Kernel
    module: object
    name: str                  # the entry as the module names it


def build(k: Kernel, root=None) -> Built:
    import ptxlab
    mod = ptxlab.compile(source(k, root), arch=ARCH, name=re.sub(r"\W", "_", k.name) + ".cu")
    return Built(k, mod, entry_name(mod.kernels, k.entry))


@dataclass
class Setup:
    """One input set of kernel ``built`` on device ``dev``."""
    built: Built
    dev: object
    problem: problems.Problem
    host: dict                                    # name -> host array (initial contents)
    bufs: dict = field(default_factory=dict)      # name -> device buffer
    args: list = field(default_factory=list)

    @classmethod
    def create(cls, built: Built, dev, seed: int, problem=None, host=None) -> "Setup":
        k = built.kernel
        prob = problem or problems.make(k.problem[0], **k.params)
        host = host if host is not None else prob.arrays(np.random.default_rng(seed))
        s = cls(built, dev, prob, host)
        s.bufs = {n: dev.to_device(a) for n, a in host.items()}
        s.args = [s._arg(a) for a in k.args]
        return s

    def _arg(self, spec: str):
        kind, name = spec.split(":")
        if kind == "ptr":
            return self.bufs[name]
        return _SCALAR[kind](self.problem.scalars[name])

    def launch(self) -> None:
        k = self.built.kernel
        self.dev.launch(self.built.module, self.built.name, grid=k.grid, block=k.block, args=self.args,
                        shared_bytes=k.smem)

    def outputs(self) -> dict:
        return {n: self.dev.to_host(self.bufs[n], dtype=self.host[n].dtype, shape=self.host[n].shape)
                for n in self.problem.outputs}

    def check(self, full: bool, min_written: int = 1) -> dict:
        return self.problem.check(self.host, self.outputs(), full=full, min_written=min_written)

    def free(self) -> None:
        for b in self.bufs.values():
            self.dev.free(b)
