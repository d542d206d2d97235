"""Stages F1-F7 (stages/F_gemm: the production GEMM's mechanisms for small M) on the emulator, each broken variant
caught with a detail naming the mistake; the unknown-variant usage error; F3/F4 (sm_90a-capable blocks) on a GPU."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ptxlab import debug
from ptxlab.errors import UsageError
from ptxlab.lab.registry import StageContext, discover

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def f():
    stages = {s.id: s for s in discover(REPO / "stages")}
    assert {"F1", "F2", "F3", "F4", "F5", "F6", "F7"} <= set(stages)
    return {i: sys.modules[f"ptxlab_stages.F_gemm.f{i}"] for i in range(1, 8)}


@pytest.fixture
def ctx(tmp_path):
    return StageContext(backend="emu", dump_dir=tmp_path, debug=debug.current())


def _text(res) -> str:
    return "\n".join(f"{r.name}: {r.ok}: {r.detail}" for r in res.rows)


@pytest.mark.parametrize("i", [1, 2, 3, 4, 5, 6, 7])
def test_stage_passes(f, ctx, i):
    res = getattr(f[i], f"run_f{i}")(ctx)
    assert res.passed, _text(res)


# (stage, variant, small cases for the broken run, needles in the failure text)
BROKEN = [
    (1, "no_cluster_barrier", [(4, 128, 512)], ["before that CTA is known to have started", "cluster barrier"]),
    (1, "commit_no_multicast", [(4, 128, 512)], ["deadlock", "UTCBAR.MULTICAST"]),
    (1, "mask_half", [(4, 128, 512)], ["deadlock", "pending"]),
    (1, "slice_at_zero", [(4, 128, 512)], ["multicast slice lands", "rank q's 32 rows"]),
    (1, "no_sfb_shift", [(4, 128, 512)], ["only n tiles with n % 4 != 0 are wrong", "scale-B TMEM address"]),
    (2, "no_proxy_fence", [(256, 64, 1, 64)], ["[proxy:fence-async]", "TMA store"]),
    (2, "no_swizzle", [(256, 64, 1, 64)], ["not the SWIZZLE_64B layout"]),
    (2, "halves_swapped", [(256, 64, 1, 64)], ["are swapped", "high half"]),
    (2, "no_wait_read", [(256, 64, 1, 64)], ["rewritten before the TMA stores had read them"]),
    (2, "wrong_quarter", [(256, 64, 1, 64)], ["another lane quarter's rows"]),
    (3, "arrival_order", [(2, 3, False, False)], ["the order of the additions is not"]),
    (3, "first_arriver", [(2, 3, True, True)], ["words differ"]),
    (3, "no_reset", [(2, 3, False, False)], ["never written", "counters after the launch"]),
    (3, "wrong_slot", [(2, 3, False, False)], ["words differ"]),
    (4, "claim_per_warp", [(3, 7, 8, False)], ["not done by exactly one whole CTA"]),
    (4, "no_reset", [(3, 7, 8, False)], ["must reset both to 0"]),
    (4, "reset_early", [(3, 7, 8, True)], ["not done by exactly one whole CTA"]),
    (4, "past_the_end", [(3, 7, 8, False)], ["out-of-bounds global load"]),
    (5, "wrong_empty_parity", [4], ["deadlock"]),
    (5, "single_buffer", [4], ["hold another tile's result"]),
    (5, "wrong_full_parity", [4], ["deadlock"]),
    (5, "epilogue_other_buffer", [4], ["words differ"]),
    (6, "wrong_slot", [(1, 4, 128)], ["words differ"]),
    (6, "own_first", [(1, 4, 128)], ["words differ"]),
    (6, "wrong_owner", [(1, 2, 64)], ["words differ"]),
    (7, "wrong_slot", [(1, 4, 128)], ["words differ"]),
    (7, "own_first", [(1, 4, 128)], ["words differ"]),
    (7, "wrong_owner", [(1, 2, 64)], ["words differ"]),
    (7, "no_start_barrier", [(1, 2, 64)], ["before that CTA is known to have started"]),
    (7, "extra_arrival", [(1, 2, 64)], ["deadlock", "pending"]),
]


@pytest.mark.parametrize("i,broken,cases,needles", BROKEN, ids=[f"F{b[0]}-{b[1]}" for b in BROKEN])
def test_broken_variants_are_caught(f, ctx, i, broken, cases, needles):
    res = getattr(f[i], f"run_f{i}")(ctx, cases=cases, broken=broken)
    text = _text(res)
    assert not res.passed, text
    for n in needles:
        assert n in text, f"{n!r} missing from:\n{text}"


def test_every_broken_variant_is_tested(f):
    listed = {(i, b) for i, b, _, _ in BROKEN}
    assert listed == {(i, b) for i in range(1, 8) for b in f[i].BROKEN}


def test_unknown_variant_is_a_usage_error(f, ctx, monkeypatch):
    monkeypatch.setenv("PTXLAB_STAGE_F2_BROKEN", "nope")
    with pytest.raises(UsageError, match="unknown F2 broken variant 'nope'"):
        f[2].preflight()
    with pytest.raises(UsageError):
        f[2].run_f2(ctx)


@pytest.mark.gpu
@pytest.mark.parametrize("i", [3, 4])
def test_sm90_blocks_on_gpu(f, tmp_path, i):
    """The split-K ordered fixup (F3) and the tile scheduler (F4) run their sm_90a builds on an H100 (sm_100a on a
    B200): real concurrency, so the last arriver / the last finisher really varies."""
    ctx = StageContext(backend="cuda", dump_dir=tmp_path, debug=debug.current())
    for _ in range(3):
        res = getattr(f[i], f"run_f{i}")(ctx)
        assert res.passed, _text(res)
    assert res.metrics["arch"] in ("sm_90a", "sm_100a")
