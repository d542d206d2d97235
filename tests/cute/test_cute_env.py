"""The DSL environment ``lab.py exec`` sets (ptxlab/driver/cute_dsl.py ``setup_env``): each DSL release is told to keep
its PTX the way it reads it (CUTE_DSL_KEEP tokens from 4.5.0, one switch per artifact before), and undo restores."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from ptxlab.driver import cute_dsl, images


@pytest.mark.parametrize("version,want", [
    ((4, 3, 5), {"CUTE_DSL_KEEP_PTX": "1", "CUTE_DSL_KEEP_CUBIN": "1", "CUTE_DSL_KEEP": "ir"}),
    ((4, 4, 2), {"CUTE_DSL_KEEP_PTX": "1", "CUTE_DSL_KEEP_CUBIN": "1", "CUTE_DSL_KEEP": "ir"}),
    ((4, 5, 0), {"CUTE_DSL_KEEP_PTX": None, "CUTE_DSL_KEEP_CUBIN": None, "CUTE_DSL_KEEP": "cubin,ir,ptx"}),
    ((4, 8, 1), {"CUTE_DSL_KEEP_PTX": None, "CUTE_DSL_KEEP_CUBIN": None, "CUTE_DSL_KEEP": "cubin,ir,ptx"}),
])
def test_keep_switches_follow_the_dsl_release(monkeypatch, tmp_path, version, want):
    for k in cute_dsl._ENV:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("CUTE_DSL_KEEP", "ir")                 # the user's own choice is kept
    monkeypatch.setenv("CUTE_DSL_DUMP_DIR", str(tmp_path))
    monkeypatch.setattr(images, "CUBIN_PTX_DIRS", [])
    monkeypatch.setattr(cute_dsl, "dsl_version", lambda: version)
    undo = []
    lib = tmp_path / "libcuda.so.1"
    assert cute_dsl.setup_env(lib, undo) == Path(tmp_path) and images.CUBIN_PTX_DIRS == [Path(tmp_path)]
    assert {k: os.environ.get(k) for k in want} == want
    assert os.environ["CUTE_DSL_LIBS"] == str(tmp_path / "libcute_dsl_runtime.so")
    assert os.environ["CUTE_DSL_LINEINFO"] == "1"
    for fn in reversed(undo):
        fn()
    assert {k: os.environ.get(k) for k in cute_dsl._ENV} == {
        **{k: None for k in cute_dsl._ENV}, "CUTE_DSL_KEEP": "ir", "CUTE_DSL_DUMP_DIR": str(tmp_path)}


def test_dsl_version_reads_the_installed_release():
    from importlib import metadata
    try:
        text = metadata.version("nvidia-cutlass-dsl")
    except metadata.PackageNotFoundError:
        assert cute_dsl.dsl_version() == ()
        return
    assert cute_dsl.dsl_version() == tuple(int(x) for x in text.split(".")[:3])
