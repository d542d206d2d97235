"""Shared pytest setup: the ``gpu`` marker (skips without a usable CUDA GPU), the skip policy (tests/skip_policy.py)
and a fresh ``rng`` fixture."""
from __future__ import annotations

import functools
import os
from typing import Iterator, Tuple

import numpy as np
import pytest
from skip_policy import (  # noqa: F401  (hooks: allowed skip reasons, skip summary, CI fails on other skips)
    pytest_collectreport, pytest_runtest_logreport, pytest_sessionfinish, pytest_sessionstart,
    pytest_terminal_summary,
)


@functools.lru_cache(maxsize=1)
def cuda_gpu_status() -> Tuple[bool, str]:
    """(usable, reason): whether a CUDA GPU can be used, via cuInit/cuDeviceGetCount; never raises."""
    if os.environ.get("PTXLAB_NO_GPU"):
        return False, "PTXLAB_NO_GPU is set"
    try:
        from cuda.bindings import driver
    except Exception as exc:  # cuda-python missing or broken
        return False, f"cuda.bindings.driver unavailable: {exc}"
    try:
        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return False, f"cuInit failed: {err.name}"
        err, count = driver.cuDeviceGetCount()
        if err != driver.CUresult.CUDA_SUCCESS:
            return False, f"cuDeviceGetCount failed: {err.name}"
        if count < 1:
            return False, "no CUDA device found"
        return True, f"{count} CUDA device(s)"
    except Exception as exc:  # libcuda.so missing, driver too old, ...
        return False, f"CUDA driver unusable: {exc}"


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    ok, reason = cuda_gpu_status() if any(i.get_closest_marker("gpu") for i in items) else (True, "")
    if ok:
        return
    skip = pytest.mark.skip(reason=f"no GPU: {reason}")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> Iterator[np.random.Generator]:
    """A numpy Generator seeded freshly from os.urandom; the seed is reported if the test fails."""
    seed = int.from_bytes(os.urandom(8), "little")
    request.node.user_properties.append(("rng_seed", seed))
    yield np.random.default_rng(seed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for key, value in item.user_properties:
            if key == "rng_seed":
                report.sections.append(("rng", f"rng seed = {value}  (reproduce: np.random.default_rng({value}))"))


@pytest.fixture(autouse=True)
def _isolated_lab_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never touch the user's lab state (.ptxlab/lab_state.json): each test gets its own state file
    (subprocesses inherit it through the environment).  Tests that set PTXLAB_STATE_FILE themselves win."""
    if "PTXLAB_STATE_FILE" not in os.environ or os.environ.get("_PTXLAB_TEST_STATE") == "1":
        monkeypatch.setenv("PTXLAB_STATE_FILE", str(tmp_path_factory.mktemp("labstate") / "lab_state.json"))
        monkeypatch.setenv("_PTXLAB_TEST_STATE", "1")


@pytest.fixture(autouse=True)
def _restore_debug_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """`lab.py --debug/--dump` export their flags to the environment (ptxlab.debug.set_flags), which is right for a
    CLI process but leaked from in-process cli.main() tests into later tests of the same worker (e.g. -lineinfo PTX
    in a PTX-equality test). Record the variables so monkeypatch restores them after every test."""
    from ptxlab import debug

    for name in (debug.ENV_DEBUG, debug.ENV_DUMP_DIR):
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:   # delenv of an absent variable records nothing; setenv first so the undo removes it again
            monkeypatch.setenv(name, "")
            monkeypatch.delenv(name)


@pytest.fixture(scope="module")
def emu():
    """One emulator device per test module (stage-driver tests)."""
    import ptxlab

    return ptxlab.open_device("emu")


@pytest.fixture
def ctx(tmp_path, emu):
    """A StageContext on the emulator with a fresh dump dir and no debug flags, for calling stage drivers directly."""
    from ptxlab.debug import DebugFlags
    from ptxlab.lab.registry import StageContext

    return StageContext(backend="emu", dump_dir=tmp_path, debug=DebugFlags(), _device=emu)


@pytest.fixture
def no_lineinfo_recompile(monkeypatch: pytest.MonkeyPatch) -> None:
    """PTXLAB_EMU_LINEINFO=0 for a test whose modules are CUTLASS-sized (megabytes of PTX) and whose reports or
    warnings it never reads for a CUDA line: by default a report about a module built without -lineinfo recompiles
    the whole module with -lineinfo to name the line (ptxlab/emu/checks/lineinfo.py), a second full NVRTC build of
    ~25-30 CPU-s per CUTLASS example on a cold cache (measured 2026-11-28, NOTES "CI suite time").  The line mapping
    itself is tested in tests/emu/checks/test_emu_lineinfo.py."""
    monkeypatch.setenv("PTXLAB_EMU_LINEINFO", "0")
