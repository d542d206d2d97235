"""pytest plugin for benchmarks/suite_profile.py: one JSON line per finished test and per compile, to a file.

    PYTHONPATH=benchmarks SUITE_PROFILE_LOG=FILE python -m pytest -p suite_profile_plugin ...

Per test (``kind: test``): node id, phase durations summed (setup + call + teardown, wall) and the worker's CPU
seconds over the test (getrusage of the process and of its finished children: NVRTC runs in-process, ``lab.py``
subprocesses are children).  Per compile: ``nvrtc`` / ``jitlink`` (ptxlab/toolchain/backends.py, after the compile
cache missed) and ``lineinfo`` (the ``-lineinfo`` rebuild an emulator report asks for, ptxlab/emu/checks/lineinfo.py),
with the module name, a digest of the arguments (the same digest twice = the same module built twice) and wall/CPU.
Works under xdist (every worker appends; lines are written whole)."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import resource
import time

import pytest

_LOG = os.environ.get("SUITE_PROFILE_LOG", "")


def _cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def _write(rec: dict) -> None:
    if _LOG:
        with open(_LOG, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def _digest(*parts) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def _wrap(mod, attr: str, kind: str, describe) -> None:
    fn = getattr(mod, attr)

    @functools.wraps(fn)
    def timed(*a, **k):
        t, c = time.time(), _cpu()
        try:
            return fn(*a, **k)
        finally:
            key, name = describe(*a, **k)
            _write(dict(kind=kind, pid=os.getpid(), t0=round(t, 3), wall=round(time.time() - t, 3),
                        cpu=round(_cpu() - c, 3), key=key, name=name,
                        test=os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]))
    setattr(mod, attr, timed)


def pytest_configure(config: pytest.Config) -> None:
    from ptxlab.emu.checks import lineinfo
    from ptxlab.toolchain import backends

    _wrap(backends, "nvrtc_compile", "nvrtc", lambda src, name, opts, *a, **k: (_digest(src, name, list(opts)), name))
    _wrap(backends, "jitlink_ptx", "jitlink", lambda src, name, opts, *a, **k: (_digest(src, name, list(opts)), name))
    _wrap(lineinfo, "_compile_lineinfo", "lineinfo", lambda m, *a, **k: (_digest(m.source, list(m.options)), m.name))



@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    t, c = time.time(), _cpu()
    yield
    _write(dict(kind="test", pid=os.getpid(), t0=round(t, 3), wall=round(time.time() - t, 3),
                cpu=round(_cpu() - c, 3), test=item.nodeid))
