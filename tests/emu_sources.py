"""The CUDA source (``SRC``) of an emulator test module of tests/emu/ops, for GPU tests that run the same kernels on
the device and compare (tests/gpu). Importable from every test module (tests/ is on ``sys.path``, as for repo_root)."""
from __future__ import annotations

import importlib.util
from pathlib import Path


def emu_ops_source(stem: str) -> str:
    """``SRC`` of tests/emu/ops/<stem>.py."""
    spec = importlib.util.spec_from_file_location(f"emu_ops_{stem}", Path(__file__).resolve().parent / "emu" / "ops" /
                                                  f"{stem}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SRC
