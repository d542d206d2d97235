"""GPU tests: every test in this folder is marked ``gpu`` and skips cleanly when no usable CUDA device exists."""
from __future__ import annotations

import functools

import pytest

import ptxlab


@functools.lru_cache(maxsize=None)
def gpu_status() -> tuple[bool, str]:
    try:
        ptxlab.open_device("cuda")
    except ptxlab.DeviceUnavailable as exc:
        return False, str(exc)
    return True, ""


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.gpu)
            ok, why = gpu_status()
            if not ok:
                item.add_marker(pytest.mark.skip(reason=f"no GPU: {why}"))


@pytest.fixture(scope="module")
def cuda_dev():
    """The cuda device (compute capability >= 9.0: TMA / tensor maps)."""
    d = ptxlab.open_device("cuda")
    if d.cc < (9, 0):
        pytest.skip(f"no GPU: TMA and tensor maps need compute capability >= 9.0, got {d.cc}")
    yield d
    d.close()
