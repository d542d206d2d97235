"""Stage A (TMA + mbarrier pipeline) through the lab registry on the emulator, plus injected faults that must be caught
with a message naming the cause. The cuda test runs the same stages on a GPU (H100: sm_90a build)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ptxlab.debug import DebugFlags
from ptxlab.lab.registry import StageContext, discover, select

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stages(tmp_path_factory):
    """Discover only stages/A_tma (via a symlinked stages dir) so other stages' work in progress cannot break this test."""
    root = tmp_path_factory.mktemp("stages")
    (root / "A_tma").symlink_to(REPO / "stages" / "A_tma", target_is_directory=True)
    found = discover(root)
    return {s.id: s for s in found}


@pytest.fixture(scope="module")
def driver(stages):
    return sys.modules["ptxlab_stages.A_tma.driver"]


def ctx(tmp_path: Path, backend: str = "emu") -> StageContext:
    return StageContext(backend=backend, dump_dir=tmp_path, debug=DebugFlags(dump_dir=tmp_path))


def _rows(result) -> str:
    return "\n".join(f"{r.name}: {'ok' if r.ok else 'FAIL'} {r.detail}" for r in result.rows) + "\n" + result.message


@pytest.mark.parametrize("sid", ["A1", "A2"])
def test_stage_passes_on_emulator(stages, sid, tmp_path, monkeypatch):
    monkeypatch.delenv("PTXLAB_STAGE_A_FAULT", raising=False)
    assert [s.id for s in select(list(stages.values()), [sid])] == [sid]
    res = stages[sid].run(ctx(tmp_path))
    assert res.passed, _rows(res)
    names = " ".join(r.name for r in res.rows)
    assert "A SMEM image" in names and "B SMEM image" in names and "pipeline" in names
    assert any("UTMALDG" in r.detail for r in res.rows if r.name.startswith("sm_100a SASS"))
    if sid == "A2":
        assert "SFA SMEM image" in names and "SFB SMEM image" in names
    # every case dumped its images; actual == expected in the dump too
    assert len(res.dump_paths) == 2
    with np.load(res.dump_paths[0]) as z:
        assert z["got"].shape == z["expected"].shape and np.array_equal(z["got"], z["expected"])
    assert res.metrics["bytes_compared"] > 400_000


def test_wrong_swizzle_is_caught_and_named(driver, tmp_path):
    res = driver.run_a1(ctx(tmp_path), fault="swizzle_none")
    assert not res.passed
    bad = [r for r in res.rows if not r.ok]
    assert bad and all(" A SMEM image" in r.name for r in bad), _rows(res)
    d = bad[0].detail
    assert "first at tile (m_tile=0, n_tile=0, l=0) k-block 0" in d
    assert "swizzle 'none', not '128B'" in d and "swizzle='128B'" in d
    # B (still SW128) and the pipeline rows stay green
    assert all(r.ok for r in res.rows if "B SMEM" in r.name or "pipeline" in r.name)


def test_expect_tx_too_large_reports_deadlock_and_cause(driver, tmp_path):
    with pytest.raises(driver.StageAError) as ei:
        driver.run_a1(ctx(tmp_path), fault="expect_tx")
    msg = str(ei.value)
    assert "deadlock" in msg and "mbarrier.try_wait.parity" in msg  # the emulator's report
    assert "16 bytes expected (expect_tx) but not delivered" in msg
    assert "CAUSE: expect_tx per stage = 18448 B but the TMA boxes of a stage deliver 18432 B" in msg


def test_flipped_byte_is_located(driver, tmp_path):
    """The comparison reports (tile, k-block, region, row, byte) of the first difference and the count."""
    case = driver.A1_CASES[0]
    run = driver.run_case(ctx(tmp_path), case, load_ab=True, load_sf=False)
    assert all(r.ok for r in driver.compare(run, "A1"))
    t, kb, row, col = 3, 2, 77, 45  # tile 3 = (m_tile 1, n_tile 0, l 1) in this case's order
    run.dump[t, kb, row * 128 + col] ^= 0x5A
    run.dump[t, kb, 16384 + 5] ^= 0x01  # and one byte of B
    rows = driver.compare(run, "A1")
    a = next(r for r in rows if r.name.endswith(" A SMEM image"))
    b = next(r for r in rows if r.name.endswith(" B SMEM image"))
    assert not a.ok and not b.ok
    assert a.detail.startswith("1 of 262144 bytes differ; first at tile (m_tile=1, n_tile=0, l=1) k-block 2 (stage 2), "
                               "A row 77 byte 45")
    assert "B row 0 byte 5" in b.detail


def test_host_images_are_independent_of_emulator_helpers(driver):
    """The driver's SW128 XOR and SF formula agree with the emulator's swizzle and ptxlab.scales (cross-check only)."""
    from ptxlab import gpumode, scales
    from ptxlab.emu.hw.swizzle import swizzle_addr

    rng = np.random.default_rng()
    dense = rng.integers(0, 256, size=(16, 128), dtype=np.uint8)
    img = driver.swizzle_rows_xor(dense, 7).reshape(-1)
    flat = dense.reshape(-1)
    ref = np.empty_like(flat)
    for o in range(flat.size):
        ref[swizzle_addr("128B", o)] = flat[o]
    assert np.array_equal(img, ref)
    p = gpumode.generate_gemm(256, 128, 512, 2, int(rng.integers(1 << 31)))
    assert np.array_equal(driver.sf_blocked_formula(p.sfa), scales.permuted_bytes(p.sfa_permuted))


@pytest.mark.gpu
@pytest.mark.parametrize("sid", ["A1", "A2"])
def test_stage_passes_on_cuda(stages, sid, tmp_path, monkeypatch):
    monkeypatch.delenv("PTXLAB_STAGE_A_FAULT", raising=False)
    res = stages[sid].run(ctx(tmp_path, backend="cuda"))
    assert res.passed, _rows(res)


def test_bounded_wait_build_passes_on_emulator(driver, tmp_path, monkeypatch):
    """The hardware build (bounded mbarrier waits, -DPTXLAB_WAIT_PROBES) behaves the same when nothing goes wrong."""
    monkeypatch.setattr(driver, "FORCE_BOUNDED_WAIT", True)
    res = driver.run_a1(ctx(tmp_path), fault="none")
    assert res.passed, _rows(res)


def test_h100_build_passes_on_emulator(stages, tmp_path, monkeypatch):
    """The sm_90a build (what --backend cuda runs on an H100) gives the same images on the emulator."""
    monkeypatch.delenv("PTXLAB_STAGE_A_FAULT", raising=False)
    monkeypatch.setenv("PTXLAB_STAGE_A_ARCH", "sm_90a")
    res = stages["A2"].run(ctx(tmp_path))
    assert res.passed, _rows(res)
    assert res.metrics["arch"] == "sm_90a"
