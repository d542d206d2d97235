"""Thread-block cluster launches on the emulator: dev.launch(..., cluster=...), the launch rules shared with the cuda
backend (ptxlab/device/cluster.py), every cluster special register (PTX ISA 10), whole-cluster waves, mapa /
getctarank / isspacep.shared::cluster (PTX ISA 9.7.9.21/22/18) and the wave's cluster helpers (API.md)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.engine import machine
from ptxlab.errors import EmuError, LaunchError

SRC = (Path(__file__).parents[2] / "kernels" / "cluster_launch.cu").read_text()


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_90a", name="cluster_launch.cu")


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


def _expected_sregs(grid, cl, block, seed, explicit):
    rows = []
    gx, gy, gz = grid
    cx, cy, cz = cl
    for z in range(gz):
        for y in range(gy):
            for x in range(gx):
                for t in range(block):
                    cid = (x % cx, y % cy, z % cz)
                    rows.append([*cid, cx, cy, cz, x // cx, y // cy, z // cz, gx // cx, gy // cy, gz // cz,
                                 cid[0] + cid[1] * cx + cid[2] * cx * cy, cx * cy * cz, int(explicit), x, y, z,
                                 seed ^ t])
    return np.array(rows, np.uint32)


@pytest.mark.parametrize("grid,cl", [((4, 2, 2), (2, 1, 1)), ((4, 4, 2), (2, 2, 1)), ((2, 4, 4), (1, 2, 2)),
                                     ((6, 2, 2), (3, 1, 2)), ((8, 1, 1), (8, 1, 1))])
def test_cluster_special_registers(dev, mod, rng, grid, cl):
    block = 40                                   # not a whole number of warps: padding threads stay out
    n = grid[0] * grid[1] * grid[2] * block
    seed = int(rng.integers(1, 2**32, dtype=np.uint64))
    out = dev.empty(n * 19 * 4)
    dev.memset(out, 0xA7)
    dev.launch(mod, "cluster_sregs", grid=grid, block=block, args=[out, np.uint32(seed)], cluster=cl)
    got = dev.to_host(out, np.uint32).reshape(n, 19)
    np.testing.assert_array_equal(got, _expected_sregs(grid, cl, block, seed, True))


def test_special_registers_without_cluster_launch(dev, mod, rng):
    """Every CTA is its own implicit 1x1x1 cluster; %is_explicit_cluster is false."""
    grid, block = (3, 2, 1), 32
    seed = int(rng.integers(1, 2**32, dtype=np.uint64))
    out = dev.empty(6 * block * 19 * 4)
    dev.memset(out, 0xA7)
    dev.launch(mod, "cluster_sregs", grid=grid, block=block, args=[out, np.uint32(seed)])
    got = dev.to_host(out, np.uint32).reshape(-1, 19)
    np.testing.assert_array_equal(got, _expected_sregs(grid, (1, 1, 1), block, seed, False))


def test_grid_not_divisible_by_cluster(dev, mod):
    out = dev.empty(4096)
    with pytest.raises(LaunchError, match=r"grid \(3, 2, 1\) is not divisible by the cluster shape \(2, 1, 1\)"):
        dev.launch(mod, "cluster_sregs", grid=(3, 2, 1), block=32, args=[out, np.uint32(0)], cluster=(2, 1, 1))
    with pytest.raises(LaunchError, match="dimension y"):
        dev.launch(mod, "cluster_sregs", grid=(2, 3, 1), block=32, args=[out, np.uint32(0)], cluster=(1, 2, 1))


def test_non_portable_cluster_size(dev, mod, rng):
    out = dev.empty(32 * 32 * 19 * 4)
    with pytest.raises(LaunchError, match=r"more than the portable maximum of 8; pass non_portable_cluster=True"):
        dev.launch(mod, "cluster_sregs", grid=(16, 1, 1), block=32, args=[out, np.uint32(0)], cluster=(16, 1, 1))
    with pytest.raises(LaunchError, match="no GPU runs clusters of more than 16"):
        dev.launch(mod, "cluster_sregs", grid=(32, 1, 1), block=32, args=[out, np.uint32(0)], cluster=(32, 1, 1),
                   non_portable_cluster=True)
    with pytest.raises(LaunchError, match="non_portable_cluster=True needs cluster="):
        dev.launch(mod, "cluster_sregs", grid=(2, 1, 1), block=32, args=[out, np.uint32(0)], non_portable_cluster=True)
    seed = int(rng.integers(1, 2**32, dtype=np.uint64))
    dev.memset(out, 0xA7)
    dev.launch(mod, "cluster_sregs", grid=(8, 4, 1), block=32, args=[out, np.uint32(seed)], cluster=(4, 4, 1),
               non_portable_cluster=True)
    got = dev.to_host(out, np.uint32).reshape(-1, 19)
    np.testing.assert_array_equal(got, _expected_sregs((8, 4, 1), (4, 4, 1), 32, seed, True))


def test_reqnctapercluster_gives_the_shape(dev, mod):
    out = dev.empty(8 * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "cluster_fixed", grid=8, block=32, args=[out])           # no cluster=: __cluster_dims__(2,1,1)
    np.testing.assert_array_equal(dev.to_host(out, np.uint32), np.arange(8) % 2)
    dev.memset(out, 0xFF)
    dev.launch(mod, "cluster_fixed", grid=8, block=32, args=[out], cluster=(2, 1, 1))   # the same shape: fine
    np.testing.assert_array_equal(dev.to_host(out, np.uint32), np.arange(8) % 2)
    with pytest.raises(LaunchError, match=r"differs from the kernel's .reqnctapercluster \(2, 1, 1\)"):
        dev.launch(mod, "cluster_fixed", grid=8, block=32, args=[out], cluster=(4, 1, 1))
    with pytest.raises(LaunchError, match="not divisible"):
        dev.launch(mod, "cluster_fixed", grid=7, block=32, args=[out])


def test_explicitcluster_and_maxclusterrank(dev, mod):
    out = dev.empty(8 * 4)
    with pytest.raises(LaunchError, match=r"\.explicitcluster .* launched without cluster="):
        dev.launch(mod, "cluster_explicit", grid=8, block=32, args=[out])
    dev.memset(out, 0xFF)
    dev.launch(mod, "cluster_explicit", grid=8, block=32, args=[out], cluster=4)
    np.testing.assert_array_equal(dev.to_host(out, np.uint32), np.full(8, 4))
    with pytest.raises(LaunchError, match=r"more than the kernel's .maxclusterrank 4"):
        dev.launch(mod, "cluster_max4", grid=8, block=64, args=[out], cluster=(8, 1, 1))
    dev.memset(out, 0xFF)
    dev.launch(mod, "cluster_max4", grid=(8, 1, 1), block=64, args=[out], cluster=(4, 1, 1))
    np.testing.assert_array_equal(dev.to_host(out, np.uint32), np.full(8, 4))


@pytest.mark.parametrize("grid,cl", [((8, 1, 1), (4, 1, 1)), ((2, 2, 2), (2, 2, 2)), ((4, 2, 1), (2, 2, 1))])
def test_mapa_getctarank_isspacep(dev, mod, grid, cl):
    block = 64
    nct = grid[0] * grid[1] * grid[2]
    n = cl[0] * cl[1] * cl[2]
    out = dev.empty(nct * block * 5 * 4)
    dev.memset(out, 0xA7)
    bad = dev.to_device(np.array([0xFFFFFFFF], np.uint32))
    dev.launch(mod, "cluster_mapa", grid=grid, block=block, args=[out, bad], cluster=cl)
    got = dev.to_host(out, np.uint32).reshape(nct, block, 5)
    r = np.arange(block) % n
    sr = _expected_sregs(grid, cl, 1, 0, True)[:, 12]          # %cluster_ctarank per CTA
    for c in range(nct):
        np.testing.assert_array_equal(got[c, :, 0], r)          # getctarank(mapa(a, r)) == r
        np.testing.assert_array_equal(got[c, :, 1], (r == sr[c]).astype(np.uint32))   # .shared::cta: own CTA only
        np.testing.assert_array_equal(got[c, :, 2], np.ones(block))                  # .shared::cluster: any rank
        np.testing.assert_array_equal(got[c, :, 3], r)
        np.testing.assert_array_equal(got[c, :, 4], np.full(block, sr[c]))          # a .shared::cta address: own


def test_mapa_rank_outside_cluster(dev, mod):
    """Strict: mapa itself faults. Default (fidelity rule mapa_rank): a warning at the mapa, then the access through
    the address faults."""
    out = dev.empty(4 * 64 * 5 * 4)
    bad = dev.to_device(np.array([4], np.uint32))
    with dev.strict_rules("mapa_rank"), \
            pytest.raises(EmuError, match=r"mapa: target CTA rank 4 is outside the cluster of 4 CTA\(s\)"):
        dev.launch(mod, "cluster_mapa", grid=4, block=64, args=[out, bad], cluster=4)
    with pytest.warns(UserWarning, match=r"mapa: target CTA rank 4 is outside the cluster"), \
            pytest.raises(EmuError, match=r"rank field \(bits 31..24\) is 4, the cluster has 4") as e:
        dev.launch(mod, "cluster_mapa", grid=4, block=64, args=[out, bad], cluster=4)
    assert "mapa:" not in str(e.value).splitlines()[0]


def test_waves_are_whole_clusters_and_helpers(dev, mod, monkeypatch, rng):
    """With a wave budget of one CTA, a 4-CTA cluster still runs as one wave (co-resident); the wave's helpers map
    (cta in wave) <-> (cluster, rank) and give a peer's shared memory."""
    seen = []

    def hook(st):
        n = st.cluster.size
        for c in range(st.nctas):
            assert st.cluster_rank(c) == c % n
            for r in range(n):
                p = st.cluster_peer(c, r)
                assert p // n == c // n and st.cluster_rank(p) == r
                assert st.peer_smem(c, r).base is st.smem and st.peer_smem(c, r).size == st.smem_size
        with pytest.raises(EmuError, match="outside the cluster"):
            st.cluster_peer(0, n)
        seen.append((st.nctas, sorted(int(x) for x in st.cta_ids)))

    monkeypatch.setattr(machine, "WAVE_THREADS", 64)
    monkeypatch.setattr(machine, "WAVE_END_HOOKS", machine.WAVE_END_HOOKS + [hook])
    seed = int(rng.integers(1, 2**32, dtype=np.uint64))
    out = dev.empty(8 * 4 * 64 * 19 * 4)
    dev.memset(out, 0xA7)
    dev.launch(mod, "cluster_sregs", grid=(4, 2, 4), block=64, args=[out, np.uint32(seed)], cluster=(2, 2, 1))
    assert dev.last_stats["waves"] == 8
    assert all(n == 4 for n, _ in seen)
    assert sorted(i for _, ids in seen for i in ids) == list(range(32))
    got = dev.to_host(out, np.uint32).reshape(-1, 19)
    np.testing.assert_array_equal(got, _expected_sregs((4, 2, 4), (2, 2, 1), 64, seed, True))
