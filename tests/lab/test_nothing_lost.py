"""Nothing lost: every file ptxlab writes is written to a temporary file and renamed into place (ptxlab/fileio.py), so
an interrupt or a full disk leaves the old file; dumps carry a completeness marker that `lab.py diff` checks; damaged
compile-cache entries are rebuilt with a warning; an unusable cache directory falls back to a temporary one."""
from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest

import ptxlab
from ptxlab.fileio import atomic_open, atomic_write
from ptxlab.lab.cli import main
from ptxlab.lab.dumps import load_dump, write_dump
from ptxlab.toolchain.paths import CacheWarning
from repo_root import REPO

RAW_WRITE = re.compile(r"\.write_text\(|\.write_bytes\(|np\.savez|\.savefig\(|open\([^)]*[\"'][wa]b?[\"']")


def test_no_module_writes_a_file_except_through_fileio():
    """Every writer of ptxlab/ and stages/ goes through ptxlab/fileio.py (temp file + fsync + rename)."""
    allowed = {"ptxlab/fileio.py": "the helper itself",
               "ptxlab/toolchain/sass.py": "a private temporary cubin for nvdisasm, in a TemporaryDirectory",
               "ptxlab/lab/state.py": "the lock file (opened, never written)",
               "ptxlab/emu/engine/workers.py": "a forked worker's results through a pipe to its parent (no file)"}
    bad = []
    for root in ("ptxlab", "stages"):
        for f in (REPO / root).rglob("*.py"):
            rel = f.relative_to(REPO).as_posix()
            lines = f.read_text().splitlines()
            for i, line in enumerate(lines, 1):
                inside = any("atomic_open" in x for x in lines[max(0, i - 3):i])    # writing the atomic handle
                device = "heap.write_bytes" in line or \
                    (rel == "ptxlab/emu/core/memory.py" and "self.write_bytes(" in line)     # GlobalHeap's own
                if RAW_WRITE.search(line) and rel not in allowed and not inside and not device:   # device memory
                    bad.append(f"{rel}:{i}: {line.strip()}")
    assert not bad, "write these through ptxlab.fileio.atomic_write / atomic_open:\n" + "\n".join(bad)


def test_an_interrupted_write_leaves_the_old_file(tmp_path):
    p = tmp_path / "f.txt"
    atomic_write(p, "old content\n")
    with pytest.raises(KeyboardInterrupt):
        with atomic_open(p, "w") as f:
            f.write("new, half")
            raise KeyboardInterrupt
    assert p.read_text() == "old content\n" and sorted(x.name for x in tmp_path.iterdir()) == ["f.txt"]


def test_export_on_a_full_disk_keeps_the_old_submission(tmp_path, monkeypatch, capsys):
    out = tmp_path / "submission.py"
    out.write_text("# the submission that passed\n")
    real = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    assert main(["export", "--problem", "nvfp4_gemv", "--out", str(out)]) == 2
    monkeypatch.setattr(os, "fsync", real)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and "unchanged" in err[0], err
    assert out.read_text() == "# the submission that passed\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["submission.py"]        # no temporary file left


def _dump(tmp_path, rng, name="run"):
    got = rng.integers(0, 2**32, (128, 16), dtype=np.uint32)
    return write_dump(tmp_path / name, "B2", "roundtrip", {"got": got, "expected": got.copy()}), got


def test_a_dump_without_its_marker_or_with_damage_is_refused_by_diff(tmp_path, rng, capsys):
    path, got = _dump(tmp_path, rng)
    assert main(["diff", str(path)]) == 0
    partial = tmp_path / "partial.npz"                  # what an interrupted np.savez left: `got` only, valid zip
    np.savez(partial, got=got)
    assert main(["diff", str(partial), str(path)]) == 2
    assert "incomplete lab dump" in capsys.readouterr().err
    damaged = tmp_path / "damaged.npz"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(damaged, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "expected.npy":
                data = data[:-4] + bytes(b ^ 0x5A for b in data[-4:])      # one damaged word
            zout.writestr(item, data)
    assert main(["diff", str(damaged)]) == 2
    assert "damaged lab dump" in capsys.readouterr().err


def test_two_writers_of_one_dump_leave_a_complete_file(tmp_path):
    code = ("import sys, numpy as np\nfrom ptxlab.lab.dumps import write_dump\nv = int(sys.argv[1])\n"
            "for i in range(15):\n    a = np.full((64, 64), v * 1000 + i, np.uint32)\n"
            "    write_dump(sys.argv[2], 'D2', 'x', {'got': a, 'expected': a})\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(v), str(tmp_path)], env=env) for v in (1, 2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    arrays, meta = load_dump(tmp_path / "D2_x.npz")
    assert np.array_equal(arrays["got"], arrays["expected"]) and len(np.unique(arrays["got"])) == 1
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".")]


KERNEL = 'extern "C" __global__ void k(unsigned* o) {{ o[threadIdx.x] = {v}u; }}'


def test_a_damaged_cache_entry_is_rebuilt_with_a_warning(tmp_path, monkeypatch, rng):
    monkeypatch.setenv("PTXLAB_CACHE", str(tmp_path / "cache"))
    src = KERNEL.format(v=int(rng.integers(1, 2**31)))
    first = ptxlab.compile(src, arch="sm_90a")
    cubin = next((tmp_path / "cache").glob("*/*/k.cubin"))
    b = bytearray(cubin.read_bytes())
    b[len(b) // 2] ^= 0x40
    cubin.write_bytes(bytes(b))
    with pytest.warns(CacheWarning, match=r"is damaged \(k\.cubin does not match its checksum\); rebuilding it"):
        again = ptxlab.compile(src, arch="sm_90a")
    assert again.cubin == first.cubin and not again.cache_hit
    assert cubin.read_bytes() == first.cubin                     # the entry was replaced
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ptxlab.compile(src, arch="sm_90a").cache_hit      # and is trusted again, silently


@pytest.mark.parametrize("kind", ["file", "inside_a_file"])
def test_an_unusable_cache_dir_falls_back_with_one_warning(tmp_path, monkeypatch, rng, kind):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    monkeypatch.setenv("PTXLAB_CACHE", str(blocker if kind == "file" else blocker / "cache"))
    with pytest.warns(CacheWarning, match="is unusable .*; using .* for this run") as rec:
        mod = ptxlab.compile(KERNEL.format(v=int(rng.integers(1, 2**31))), arch="sm_90a")
    assert len([w for w in rec if issubclass(w.category, CacheWarning)]) == 1 and mod.cubin[:4] == b"\x7fELF"
    assert blocker.read_text() == "not a directory"


def test_stage_environment_error_records_nothing(tmp_path, monkeypatch, capsys):
    """A stage that hits a full disk is an environment error: exit 2, one line, and a recorded PASS stays."""
    d = tmp_path / "stages" / "z"
    d.mkdir(parents=True)
    (d / "driver.py").write_text(
        "import errno, os\nfrom ptxlab.lab.registry import Stage, StageResult, Check\n"
        "def run(ctx):\n    if os.environ.get('FULL_DISK'):\n"
        "        raise OSError(errno.ENOSPC, 'No space left on device', str(ctx.dump_dir / 'Z1.npz'))\n"
        "    return StageResult.from_rows([Check('ok', True, '')])\n"
        "STAGES = [Stage('Z1', 'disk', 'nothing', run)]\n")
    state = tmp_path / "state.json"
    monkeypatch.setenv("PTXLAB_STATE_FILE", str(state))
    monkeypatch.setenv("PTXLAB_STAGES_DIR", str(tmp_path / "stages"))
    assert main(["--stage", "Z1", "--backend", "emu", "--dump", str(tmp_path / "dump")]) == 0
    before = json.loads(state.read_text())
    monkeypatch.setenv("FULL_DISK", "1")
    assert main(["--stage", "Z1", "--backend", "emu", "--dump", str(tmp_path / "dump")]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and "environment error" in err[0] and "No space left on device" in err[0], err
    assert json.loads(state.read_text()) == before and before["results"]["Z1"]["emu"]["passed"] is True
