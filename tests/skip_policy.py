"""The suite's skip policy, as pytest hooks (tests/conftest.py re-exports them; `-p skip_policy` loads them alone).

A test may skip only because the machine has no (suitable) CUDA GPU or no torch. Such a skip's reason starts with
one of ``ALLOWED``: exactly ``"no GPU"`` / ``"no torch"``, or that word followed by ``": "`` and the detail, e.g.
``"no GPU: cuInit failed: CUDA_ERROR_NO_DEVICE"`` or ``"no torch: the optional extra .[torch] is not installed"``.

At the end of every run with skips, a summary (reason -> count) is printed. When the environment variable ``CI`` is
set (``.ci/run`` sets it), any skip whose reason is not allowed fails the run (exit status 1), so a family of tests
cannot silently collapse into skips (as the CUTLASS cross-checks once did when a header path was wrong).
With ``PTXLAB_SKIP_SUMMARY=FILE`` the summary is also written to FILE (``.ci/run`` prints it as its last lines).
"""
from __future__ import annotations

import collections
import os

import pytest

ALLOWED = ("no GPU", "no torch")
ENV_CI = "CI"
ENV_SUMMARY_FILE = "PTXLAB_SKIP_SUMMARY"      # where to write the summary too (set by .ci/run)

_skips: list[str] = []


def reason_allowed(reason: str) -> bool:
    """Is `reason` an allowed skip reason ("no GPU" / "no torch", alone or followed by ": detail")?"""
    return any(reason == a or reason.startswith(a + ": ") for a in ALLOWED)


def _ci() -> bool:
    return os.environ.get(ENV_CI, "").strip().lower() not in ("", "0", "false", "no")


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    lr = report.longrepr
    text = lr[2] if isinstance(lr, tuple) and len(lr) == 3 else str(lr)
    return text.removeprefix("Skipped: ").strip()


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")      # xdist workers report to the controller, which decides


def pytest_sessionstart(session: pytest.Session) -> None:
    _skips.clear()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _skips.append(_reason(report))


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped:
        _skips.append(_reason(report))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _controller(session.config) and _ci() and exitstatus == 0 and not all(map(reason_allowed, _skips)):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def summary_lines() -> list[str]:
    """The skip summary: one `count  reason` line per reason (most frequent first), then the verdict line if any
    reason is not allowed."""
    lines, bad = [], 0
    for reason, n in sorted(collections.Counter(_skips).items(), key=lambda kv: (-kv[1], kv[0])):
        ok = reason_allowed(reason)
        bad += 0 if ok else n
        lines.append(f"{n:5d}  {reason}" + ("" if ok else "   <- not an allowed skip reason"))
    if bad:
        allowed = " / ".join(repr(a) for a in ALLOWED)
        lines.append(f"CI: {bad} skip(s) with a reason other than {allowed}: the run fails" if _ci() else
                     f"{bad} skip(s) with a reason other than {allowed} (the run would fail with CI set)")
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # noqa: ANN001
    if not _controller(config):
        return
    lines = summary_lines()
    out = os.environ.get(ENV_SUMMARY_FILE)
    if out:                             # .ci/run prints this file after pytest's own last line
        with open(out, "w") as f:
            f.write("\n".join(lines or ["    0  (no skips)"]) + "\n")
    if lines:
        terminalreporter.section("skip summary (reason -> count)")
        for line in lines:
            terminalreporter.line(line)
