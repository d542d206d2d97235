"""The skip policy (tests/skip_policy.py): with CI set, a skip for any reason but "no GPU" / "no torch" fails the run;
every run with skips prints a reason -> count summary; and every skip written in tests/ uses an allowed reason."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import skip_policy
from skip_policy import ALLOWED, reason_allowed

TESTS = Path(skip_policy.__file__).resolve().parent        # tests/ (skip_policy.py lives at its top)
ROOT = TESTS.parent

SAMPLE = '''
import pytest

def test_ok():
    assert 1 + 1 == 2

@pytest.mark.skip(reason="no GPU: cuInit failed")
def test_gpu():
    pass

def test_torch():
    pytest.importorskip("surely_not_a_module_xyz", reason="no torch: not installed")
'''
BAD = '''
import pytest

def test_headers():
    pytest.skip("CUTLASS headers missing")
'''
BAD_MODULE = '''
import pytest
pytest.importorskip("surely_not_a_module_xyz")
'''


def _pytest(tmp_path: Path, files: dict[str, str], ci: str | None, *extra: str,
            summary: Path | None = None) -> subprocess.CompletedProcess:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    env.pop("PTXLAB_SKIP_SUMMARY", None)
    if ci is not None:
        env["CI"] = ci
    if summary is not None:
        env["PTXLAB_SKIP_SUMMARY"] = str(summary)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "skip_policy", "-p", "no:cacheprovider", "-q",
                           "--rootdir", str(tmp_path), *extra, str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


def test_reason_allowed_is_precise() -> None:
    assert ALLOWED == ("no GPU", "no torch")
    for r in ("no GPU", "no torch", "no GPU: cuInit failed", "no torch: the optional extra .[torch] is not installed"):
        assert reason_allowed(r), r
    for r in ("", "no GPUs", "no GPU cuInit", "needs a CUDA GPU: x", "CUTLASS headers missing", "got empty parameter set",
              "could not import 'torch': No module named 'torch'", "No GPU: x", "no torchvision"):
        assert not reason_allowed(r), r


def test_allowed_skips_pass_in_ci_with_summary(tmp_path: Path) -> None:
    r = _pytest(tmp_path, {"test_sample.py": SAMPLE}, "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "skip summary (reason -> count)" in r.stdout
    assert "1  no GPU: cuInit failed" in r.stdout and "1  no torch: not installed" in r.stdout


@pytest.mark.parametrize("workers", [None, "2"])
def test_other_skip_fails_in_ci(tmp_path: Path, workers: str | None) -> None:
    extra = ("-n", workers) if workers else ("-p", "no:xdist")
    r = _pytest(tmp_path, {"test_sample.py": SAMPLE, "test_bad.py": BAD, "test_badmod.py": BAD_MODULE}, "1", *extra)
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    assert "CUTLASS headers missing   <- not an allowed skip reason" in out
    assert "could not import 'surely_not_a_module_xyz'" in out           # a module-level (collection) skip counts too
    assert "CI: 2 skip(s) with a reason other than 'no GPU' / 'no torch': the run fails" in out


@pytest.mark.parametrize("ci", [None, "", "0", "false"])
def test_other_skip_only_warns_outside_ci(tmp_path: Path, ci: str | None) -> None:
    r = _pytest(tmp_path, {"test_bad.py": BAD}, ci, "-p", "no:xdist")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 skip(s) with a reason other than 'no GPU' / 'no torch' (the run would fail with CI set)" in r.stdout


def test_a_real_failure_keeps_its_status(tmp_path: Path) -> None:
    r = _pytest(tmp_path, {"test_f.py": "def test_f():\n    assert False\n", "test_bad.py": BAD}, "1", "-p", "no:xdist")
    assert r.returncode == 1


def _literal_head(node: ast.expr | None) -> str | None:
    """The leading literal text of a str constant or f-string (None for anything else)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    return None


def _skip_sites() -> list[tuple[str, int, str | None]]:
    """(file, line, reason head) of every pytest.skip / importorskip / mark.skip / mark.skipif call in tests/."""
    out = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            name = node.func.attr
            kw = {k.arg: k.value for k in node.keywords}
            base = ast.unparse(node.func.value)
            if name == "skip" and base == "pytest":
                reason = kw.get("reason", node.args[0] if node.args else None)
            elif name in ("skip", "skipif") and base.endswith("mark"):
                reason = kw.get("reason")
            elif name == "importorskip" and base == "pytest":
                reason = kw.get("reason")
            else:
                continue
            out.append((str(path.relative_to(ROOT)), node.lineno, _literal_head(reason)))
    return out


def test_every_skip_in_the_suite_uses_an_allowed_reason() -> None:
    sites = _skip_sites()
    assert len(sites) >= 10            # the scan sees the suite's GPU and torch skips
    me = str(Path(__file__).resolve().relative_to(ROOT))
    bad = [f"{f}:{ln}: {r!r}" for f, ln, r in sites
           if f != me and (r is None or not any(r.startswith(a) for a in ALLOWED))]
    assert not bad, "skip reasons must start with 'no GPU' or 'no torch':\n" + "\n".join(bad)


def test_summary_file_for_ci_run(tmp_path: Path) -> None:
    out = tmp_path / "summary.txt"
    (tmp_path / "t").mkdir()
    r = _pytest(tmp_path / "t", {"test_sample.py": SAMPLE}, "1", "-p", "no:xdist", summary=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_text().splitlines() == ["    1  no GPU: cuInit failed", "    1  no torch: not installed"]


def test_ci_run_runs_the_readme_command_with_the_policy_on() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("Run the tests", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0].strip()
    cmd = block.replace("python3.11", "$PY")
    ci = (ROOT / ".ci" / "run").read_text()
    assert cmd in ci, f"the README's test command {block!r} is not what .ci/run runs"
    assert 'export CI="${CI:-1}"' in ci and "PTXLAB_SKIP_SUMMARY" in ci
    assert ci.index("cat \"$PTXLAB_SKIP_SUMMARY\"") > ci.index(cmd)       # the summary is printed after the run


FAKE_PY = r'''#!/usr/bin/env bash
# stands in for python3.11: "-m venv .venv" makes a .venv whose pip succeeds and whose python acts as pytest
mkdir -p .venv/bin
printf '#!/usr/bin/env bash\nexit 0\n' > .venv/bin/pip
cat > .venv/bin/python <<'PYEOF'
#!/usr/bin/env bash
echo "fake pytest: $* CI=$CI"
[ -n "${FAKE_SUMMARY:-}" ] && printf '%s\n' "$FAKE_SUMMARY" > "$PTXLAB_SKIP_SUMMARY"
exit "${FAKE_RC:-0}"
PYEOF
chmod +x .venv/bin/pip .venv/bin/python
'''


@pytest.mark.parametrize("fake_rc,want_rc", [(0, 0), (1, 1), (5, 1)])
def test_ci_run_prints_the_summary_last_and_keeps_the_status(tmp_path: Path, fake_rc: int, want_rc: int) -> None:
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "run").write_text((ROOT / ".ci" / "run").read_text())
    py = tmp_path / "fakepy"
    py.write_text(FAKE_PY)
    py.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PTXLAB_SKIP_SUMMARY")}
    env.update(PYTHON=str(py), FAKE_RC=str(fake_rc), FAKE_SUMMARY="    3  no GPU: cuInit failed")
    r = subprocess.run(["bash", str(tmp_path / ".ci" / "run")], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=60)
    assert r.returncode == want_rc, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "fake pytest: -m pytest -n 2 --dist worksteal CI=1"
    assert lines[-2:] == ["ci: skip summary (reason -> count):", "    3  no GPU: cuInit failed"]
    assert ("collected no tests" in r.stderr) == (fake_rc == 5)
