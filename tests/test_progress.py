"""ptxlab.progress.track: progress on stderr only (a bar on a terminal, plain lines with PTXLAB_PROGRESS=1, nothing
otherwise), stdout unchanged; wired into stage E2 and the emulator GEMV/GEMM test-list benchmarks."""
from __future__ import annotations

import importlib.util
import os
import pty
import select
import subprocess
import sys
import time

import numpy as np
import pytest

from ptxlab import gpumode

from repo_root import REPO


DEMO = """
import sys, time
from ptxlab.progress import track
items = sys.argv[1].split(",")
for x in track(items, "demo", label=lambda s: "item " + s):
    time.sleep(float(sys.argv[2]))
    print("out", x, flush=True)
"""


def _demo(items: list[str], progress: str | None, sleep: float = 0.0, stderr=subprocess.PIPE):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("PTXLAB_PROGRESS", None)
    if progress is not None:
        env["PTXLAB_PROGRESS"] = progress
    return subprocess.run([sys.executable, "-c", DEMO, ",".join(items), str(sleep)], stdout=subprocess.PIPE,
                          stderr=stderr, text=True, env=env, timeout=120)


def _items(rng: np.random.Generator) -> list[str]:
    return [f"s{int(v)}" for v in rng.integers(0, 10**6, int(rng.integers(2, 6)))]


def test_lines_mode(rng: np.random.Generator) -> None:
    items = _items(rng)
    p = _demo(items, "1")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"out {x}" for x in items]          # stdout exactly as without progress
    err = p.stderr.splitlines()
    n = len(items)
    assert len(err) == n + 1, err
    for i, (line, x) in enumerate(zip(err, items)):
        assert line.startswith(f"demo: [{i + 1}/{n}] item {x} (elapsed ") and line.endswith(" s)"), line
    assert err[-1].startswith(f"demo: {n}/{n} done in ")


@pytest.mark.parametrize("progress", [None, "0", "off", "auto"])
def test_silent_off_a_terminal(rng: np.random.Generator, progress: str | None) -> None:
    items = _items(rng)
    p = _demo(items, progress)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout.splitlines() == [f"out {x}" for x in items]


def test_bar_on_a_terminal(rng: np.random.Generator) -> None:
    """stderr on a pseudo-terminal: a rich bar naming the item with done/total and elapsed; stdout (a pipe) intact."""
    items = _items(rng)
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="120", TERM="xterm")
    env.pop("PTXLAB_PROGRESS", None)
    proc = subprocess.Popen([sys.executable, "-c", DEMO, ",".join(items), "0.4"], stdout=subprocess.PIPE,
                            stderr=slave, text=True, env=env)
    os.close(slave)
    tty = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            tty += chunk
        elif proc.poll() is not None:
            break
    out = proc.stdout.read()
    proc.wait(timeout=60)
    os.close(master)
    text = tty.decode(errors="replace")
    assert proc.returncode == 0
    assert out.splitlines() == [f"out {x}" for x in items]
    assert f"demo: item {items[-1]}" in text and f"/{len(items)}" in text and "elapsed" in text, text[-2000:]


# ------------------------------------------------------------------------------------------------ wiring
def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", REPO / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_gemv_benchmark_reports_progress(monkeypatch, capsys) -> None:
    """emu_gemv_tests.py with the kernel replaced by the reference (the loop, not the kernel, is under test)."""
    from ptxlab.production import gemv

    monkeypatch.setattr(gemv, "compile_gemv", lambda arch: None)
    monkeypatch.setattr(gemv, "run_gemv", lambda p, dev, arch, **_kw: gpumode.reference_gemv(p))
    monkeypatch.setattr(gpumode, "GEMV_TESTS", gpumode.GEMV_TESTS[:2])
    monkeypatch.setenv("PTXLAB_PROGRESS", "1")
    assert _load("emu_gemv_tests").main(["--arch", "sm_90a"]) == 0
    out, err = capsys.readouterr()
    t0, t1 = gpumode.GEMV_TESTS[:2]
    assert f"GEMV shapes sm_90a: [1/2] m={t0['m']} k={t0['k']} l={t0['l']}" in err
    assert f"GEMV shapes sm_90a: [2/2] m={t1['m']} k={t1['k']} l={t1['l']}" in err and "2/2 done in" in err
    assert "GEMV shapes sm_90a" not in out and out.count("exact") == 3


def test_gemm_benchmark_reports_progress(monkeypatch, capsys) -> None:
    bench = _load("emu_gemm_tests")

    def fake_gemm(dev, p, stages=None, report=None, **_variant):
        report.update(variant="1sm", bn=128, stages=2, grid=(1, 1, 1))
        return gpumode.reference_gemm(p)

    small = sorted(range(len(gpumode.GEMM_TESTS)), key=lambda i: bench.work(gpumode.GEMM_TESTS[i]))[:2]
    monkeypatch.setattr(bench.G, "nvfp4_gemm", fake_gemm)
    monkeypatch.setenv("PTXLAB_PROGRESS", "1")
    assert bench.main(["--only", ",".join(map(str, small))]) == 0
    out, err = capsys.readouterr()
    for j, i in enumerate(small):
        t = gpumode.GEMM_TESTS[i]
        assert f"GEMM_TESTS: [{j + 1}/2] [{i}] m={t['m']} n={t['n']} k={t['k']} l={t['l']} W=" in err, err
    assert "GEMM_TESTS: [" not in out


def test_e2_reports_progress(monkeypatch, capsys, ctx) -> None:
    from ptxlab.lab.registry import discover

    root = ctx.dump_dir / "stages"
    root.mkdir()
    (root / "E_epilogue").symlink_to(REPO / "stages" / "E_epilogue", target_is_directory=True)
    discover(root)
    E = sys.modules["ptxlab_stages.E_epilogue.driver"]
    case = min(gpumode.GEMV_TESTS, key=lambda t: t["m"] * t["k"] * t["l"])
    monkeypatch.setenv("PTXLAB_PROGRESS", "1")
    res = E.run_e2(ctx, cases=[case])
    assert res.passed
    out, err = capsys.readouterr()
    assert f"E2: [1/1] m={case['m']} k={case['k']} l={case['l']} (elapsed " in err and "E2: 1/1 done in" in err
    assert "E2:" not in out
