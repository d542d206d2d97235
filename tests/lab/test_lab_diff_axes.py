"""`lab.py diff` on N-D dumps: real axes in the heat map, entries at the coordinates the stage's FAIL row prints,
values labelled got / expected, and --key validated (exit 2, one line)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ptxlab.debug import DebugFlags
from ptxlab.lab.dumps import write_dump
from ptxlab.lab.registry import StageContext, discover

from repo_root import REPO


def _diff(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, str(REPO / "lab.py"), "diff", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_d2_readback_is_lanes_by_chunk_columns(tmp_path: Path, rng: np.random.Generator) -> None:
    L, MT, NCH, NB = 2, 2, 5, 16
    exp = rng.integers(0, 1 << 32, (L, MT, NCH, 128, NB), dtype=np.uint32)
    got = exp.copy()
    l, mt, kc, lane, col = (int(rng.integers(0, n)) for n in (L, MT, NCH, 128, NB))
    got[l, mt, kc, lane, col] ^= np.uint32(1 << int(rng.integers(0, 32)))
    path = write_dump(tmp_path, "D2", "tmem_readback_256x320x2",   # written as stages/D_mma/driver.py writes it
                      {"got": got, "expected": exp, "layout": np.array("(l, m_tile, chunk, lane, column) fp32 bits"),
                       "seed": np.array(7)})
    p = _diff(str(path))
    out = p.stdout
    assert p.returncode == 1 and "Traceback" not in out + p.stderr, out + p.stderr
    assert "axes l, m_tile, chunk, lane, column" in out
    assert "rows = lanes (4 per cell), cols = chunk x column (chunk-major) (2 per cell); each cell averaged over l, m_tile" in out
    want = f"chunk {kc}, lane {lane}, column {col} [l={l}, m-tile {mt}, row m={mt * 128 + lane}]"
    line = next(x for x in out.splitlines() if want in x)
    g, e = int(got[l, mt, kc, lane, col]), int(exp[l, mt, kc, lane, col])
    assert f"got 0x{g:08x} fp32=" in line and f"| expected 0x{e:08x} fp32=" in line, line
    # the heat map cell of (lane, chunk-major column) is the only shaded one
    rows = [x for x in out.splitlines() if re.match(r"^\s+\d+-\d+\s*\|", x)]
    shaded = [(i, j) for i, r in enumerate(rows) for j, ch in enumerate(r.split("|")[1]) if ch != " "]
    assert shaded == [(lane // 4, (kc * NB + col) // 2)], shaded


def test_two_dumps_and_key_validation(tmp_path: Path, rng: np.random.Generator) -> None:
    exp = rng.integers(0, 1 << 32, (128, 32), dtype=np.uint32)
    got = exp.copy()
    got[int(rng.integers(0, 128)), int(rng.integers(0, 32))] += np.uint32(1)
    meta = {"axes": ["lane", "column"], "decode": "u32"}
    a = write_dump(tmp_path / "run1", "B2", "tmem_roundtrip", {"got": got, "expected": exp}, meta)
    b = write_dump(tmp_path / "run2", "B2", "tmem_roundtrip", {"got": exp, "expected": exp}, meta)
    p = _diff(str(a), str(b), "--key", "got")
    assert p.returncode == 1, p.stdout + p.stderr
    lines = [x for x in p.stdout.splitlines() if x.startswith("  lane ")]
    assert len(lines) == 1 and "run1/B2_tmem_roundtrip.npz 0x" in lines[0] and "| run2/B2_tmem_roundtrip.npz 0x" in lines[0]
    assert " A " not in p.stdout and " B " not in p.stdout
    for key, needle in (("nope", "--key 'nope' is not an array of both dumps; arrays in both: expected, got"),
                        ("__meta__", "--key '__meta__' is not an array")):
        p = _diff(str(a), str(b), "--key", key)
        assert p.returncode == 2 and "Traceback" not in p.stderr and p.stderr.strip().count("\n") == 0, p.stderr
        assert needle in p.stderr, p.stderr
    p = _diff(str(a), "--key", "got")                      # one dump compares got/expected: --key is refused
    assert p.returncode == 2 and "--key picks the array to compare between TWO dumps" in p.stderr, p.stderr


@pytest.fixture(scope="module")
def stage_a(tmp_path_factory):
    root = tmp_path_factory.mktemp("stages")
    (root / "A_tma").symlink_to(REPO / "stages" / "A_tma", target_is_directory=True)
    discover(root)
    return sys.modules["ptxlab_stages.A_tma.driver"]


def test_smem_dump_entries_match_stage_a_fail_row(stage_a, tmp_path: Path, emu) -> None:
    ctx = StageContext(backend="emu", dump_dir=tmp_path, debug=DebugFlags(dump_dir=tmp_path), _device=emu)
    res = stage_a.run_a1(ctx, fault="swizzle_none")
    assert not res.passed
    for dump in res.dump_paths:
        case = dump.stem.split("_", 1)[1]
        row = next(r for r in res.rows if not r.ok and r.name == f"A1 {case}: A SMEM image")
        m = re.search(r"first at (tile .*?\(stage offset \d+\)): expected (0x[0-9a-f]{2}), got (0x[0-9a-f]{2})",
                      row.detail)
        assert m, row.detail
        p = _diff(str(dump), "--limit", "1")
        assert p.returncode == 1, p.stdout + p.stderr
        assert "rows = (tile, k-block) pairs" in p.stdout and "cols = byte offset in the stage" in p.stdout
        entry = [x.strip() for x in p.stdout.splitlines() if x.startswith("  tile ")]
        assert entry == [f"{m.group(1)}: got {m.group(3)} | expected {m.group(2)}"], (entry, row.detail)


def test_other_arrays_of_a_dump_are_not_labelled_as_the_image(tmp_path: Path, rng: np.random.Generator) -> None:
    """Two SMEM-image dumps: their 'trace' (tile, k-block, 4 words) is not a stage image; its entries stay plain."""
    img = rng.integers(0, 256, (2, 3, 256), dtype=np.uint8)
    extra = {"tiles": np.array([[0, 0, 0], [1, 0, 0]]), "region_names": np.array(["A"]),
             "region_offsets": np.array([0]), "region_sizes": np.array([256])}
    tr = rng.integers(0, 9, (2, 3, 4), dtype=np.uint32)
    tr2 = tr.copy()
    tr2[1, 2, 3] += np.uint32(1)
    a = write_dump(tmp_path / "r1", "A1", "c", {"got": img, "expected": img, "trace": tr, **extra})
    b = write_dump(tmp_path / "r2", "A1", "c", {"got": img, "expected": img, "trace": tr2, **extra})
    p = _diff(str(a), str(b), "--key", "trace")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "axes dim0, dim1, dim2" in p.stdout and "  dim0 1, dim1 2, dim2 3: " in p.stdout, p.stdout
    p = _diff(str(a), str(b), "--key", "got")
    assert p.returncode == 0 and "identical" in p.stdout
