"""Stage D4 (one 2-SM MMA over a CTA pair) on the emulator, and each pairing mistake caught with a detail naming it."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ptxlab import debug
from ptxlab.lab.registry import StageContext, discover

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def d4():
    stages = {s.id: s for s in discover(REPO / "stages")}
    assert "D4" in stages
    return sys.modules["ptxlab_stages.D_mma.d4"]


@pytest.fixture
def ctx(tmp_path):
    return StageContext(backend="emu", dump_dir=tmp_path, debug=debug.current())


def _text(res) -> str:
    return "\n".join(f"{r.name}: {r.ok}: {r.detail}" for r in res.rows)


def test_d4_pair_mma_exact(d4, ctx):
    res = d4.run_d4(ctx)   # N=64 one pair (cluster 2) and N=256 two pairs in one 4-CTA cluster
    assert res.passed, _text(res)
    text = _text(res)
    assert "UTCOMMA.2CTAx1" in text and "UTCBAR.2CTA.MULTICASTx1" in text, text
    assert len(res.dump_paths) == 2


@pytest.mark.parametrize("broken, needles", [
    ("odd_issuer", ["[tcgen05:pair-mma-odd-issuer]", "Figure 205"]),
    ("alloc_cta_group1", [".cta_group::1", ".cta_group::2", "not allowed"]),       # ptxas refuses the mix
    ("peer_no_alloc", ["[tcgen05:pair-wait]", "tcgen05.alloc.cta_group::2", "never reached it"]),
    ("no_multicast", ["block (1, 0, 0)", "wait on mbarrier", "pending arrivals 1/1"]),
    ("no_cluster", ["[tcgen05:pair-no-cluster]", "9.7.16.5.1"]),
    ("b_not_split", ["only columns >= N/2 = 32 are wrong", "stage B rows (N/2)v.. in CTA v"]),
])
def test_d4_broken_variants_are_caught(d4, ctx, broken, needles):
    res = d4.run_d4(ctx, cases=[(64, 2, 1)], broken=broken)
    text = _text(res)
    assert not res.passed, text
    for n in needles:
        assert n in text, f"{n!r} missing from:\n{text}"


def test_d4_broken_variant_from_env(d4, ctx, monkeypatch):
    monkeypatch.setenv(d4.ENV_BROKEN, "no_cluster")
    res = d4.run_d4(ctx, cases=[(64, 2, 1)])
    assert not res.passed and "[tcgen05:pair-no-cluster]" in _text(res)


def test_d4_refuses_cleanly_without_sm100a(d4, tmp_path):
    class _Hopper:
        def arch_supported(self, arch: str) -> bool:
            return arch.startswith("sm_90")

        def describe(self) -> str:
            return "the cuda device (NVIDIA H100, sm_90)"

    ctx = StageContext(backend="cuda", dump_dir=tmp_path, debug=debug.current(), opener=lambda b: _Hopper())
    res = d4.run_d4(ctx)
    assert not res.passed and "needs an sm_100a GPU or --backend emu" in _text(res)
    assert "needs an sm_100a GPU" in getattr(res, "refused", "")
