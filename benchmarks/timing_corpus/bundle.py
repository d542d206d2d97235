"""Prebuilt modules for the device machine: the PTX, cubin and ptxas log of every corpus kernel, compiled here
(``fetch.py --pack``) by the same NVRTC the emulator's predictions used, so the GPU runs exactly the SASS that was
predicted and the device's own NVRTC is not needed.  A gzip'd JSON next to the packed sources; an entry is used only
while the kernel's compilation unit is unchanged (its sha256), else the kernel is compiled on the device.
"""
from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

from . import harness, sources

NAME = "modules.json.gz"


def prebuild(kernels, dest: Path, root=None) -> Path:
    """Compile ``kernels`` and write the bundle into folder ``dest``."""
    from ptxlab.toolchain.backends import compiler_versions
    out = {"nvrtc": compiler_versions()[0], "arch": harness.ARCH, "kernels": {}}
    for k in kernels:
        b = harness.build(k, root)
        m = b.module
        out["kernels"][k.name] = {"entry": b.name, "source_sha": sources.digest(harness.source(k, root).encode()),
                                  "ptx": m.ptx, "log": m.log, "cubin": base64.b64encode(m.cubin).decode()}
    dest.mkdir(parents=True, exist_ok=True)
    p = dest / NAME
    p.write_bytes(gzip.compress(json.dumps(out).encode()))
    return p


def load_all(folder: Path) -> dict:
    p = Path(folder) / NAME
    return json.loads(gzip.decompress(p.read_bytes())) if p.is_file() else {"kernels": {}}


def built(k, bundle: dict, root=None):
    """The prebuilt module of ``k`` (harness.Built) or None when absent or stale."""
    from ptxlab.toolchain.module import Module
    e = bundle.get("kernels", {}).get(k.name)
    if not e or e["source_sha"] != sources.digest(harness.source(k, root).encode()):
        return None
    mod = Module(ptx=e["ptx"], cubin=base64.b64decode(e["cubin"]), arch=bundle["arch"], name=k.name,
                 source="(prebuilt)", log=e["log"])
    return harness.Built(k, mod, e["entry"])
