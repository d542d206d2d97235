"""Emulator: tcgen05 .cta_group::2 over CTA pairs (ops/tcgen05.py + tcgen05_pairing + tcgen05_mma_pair) through the
public launch API with clusters: cp / shift into both CTAs' TMEM, pair alloc/dealloc, commit .multicast::cluster,
and every pairing rule reported. The pair MMA itself (exact against float64 and the tensor-core model) is run by
stage D4 (tests/test_stage_d4.py) and tests/test_tcgen05_mma_pair.py."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError
from ptxlab.kernels import KERNELS_DIR
from ptxlab.toolchain.sass import require

from probes.tcgen05_pair_probes import alloc_dealloc, commit_only, cp_shift

POISON = 0x7FBADBAD


@pytest.fixture
def dev():
    return ptxlab.open_device("emu")


def _mod(src: str):
    return ptxlab.compile(src, arch="sm_100a", include_dirs=[KERNELS_DIR])


def _out(dev, nwords: int):
    buf = dev.empty(4 * nwords)
    dev.memset(buf, 0xA5)
    return buf


@pytest.mark.parametrize("shift", [False, True])
def test_cp_and_shift_reach_both_ctas(dev, rng, shift):
    """cp.cta_group::2 copies each CTA's own SMEM (same descriptor) into its own TMEM; shift.cta_group::2 shifts
    both."""
    mod = _mod(cp_shift(shift))
    require(mod, ["UTCCP.T.S.2CTA", "UTCBAR.2CTA.MULTICAST", "UTCATOMSWS.2CTA"] + (["UTCSHIFT"] if shift else []))
    src = rng.integers(0, 2**32, (2, 128, 8), dtype=np.uint32)   # rank, row, word (row = 32 B)
    out = _out(dev, 2 * 128 * 8)
    dev.launch(mod, "k", grid=(2, 1, 1), block=(128, 1, 1), cluster=(2, 1, 1), args=[dev.to_device(src), out])
    got = dev.to_host(out, np.uint32).reshape(2, 128, 8)
    exp = src.copy()
    if shift:   # lanes 0..30 -> 1..31 of the 32-lane block at the address (ptx_docs/tcgen05.md); lane 0 undefined
        exp[:, 1:32] = src[:, 0:31]
        exp[:, 0] = POISON
    assert np.array_equal(got, exp)


def test_pair_alloc_gives_one_address_to_both(dev):
    out = _out(dev, 4)
    dev.launch(_mod(alloc_dealloc()), "k", grid=(4, 1, 1), block=(64, 1, 1), cluster=(4, 1, 1), args=[out])
    got = dev.to_host(out, np.uint32)
    assert got[0] == got[1] and got[2] == got[3] and got[0] >> 16 == 0


@pytest.mark.parametrize("kw, needles", [
    (dict(odd_alloc=32), ["[tcgen05:pair-alloc-mismatch]", "32 columns", "64 columns"]),
    (dict(odd_dealloc=32), ["[tcgen05:pair-dealloc-mismatch]"]),
    (dict(dealloc_before_barrier=True), ["[tcgen05:pair-wait]", "tcgen05.dealloc.cta_group::2", "Table 48"]),
])
def test_pair_alloc_dealloc_rules(dev, kw, needles):
    with pytest.raises(EmuError) as e:
        dev.launch(_mod(alloc_dealloc(**kw)), "k", grid=(2, 1, 1), block=(64, 1, 1), cluster=(2, 1, 1),
                   args=[_out(dev, 2)])
    for n in needles:
        assert n in str(e.value), str(e.value)


def test_commit_multicast_arrives_on_both_barriers(dev):
    out = _out(dev, 2)
    dev.launch(_mod(commit_only(3)), "k", grid=(2, 1, 1), block=(32, 1, 1), cluster=(2, 1, 1), args=[out])
    assert dev.to_host(out, np.uint32).tolist() == [1, 1]


def test_commit_mask_outside_cluster_is_caught(dev):
    with pytest.raises(EmuError) as e:
        dev.launch(_mod(commit_only(5)), "k", grid=(2, 1, 1), block=(32, 1, 1), cluster=(2, 1, 1),
                   args=[_out(dev, 2)])
    assert "names %cluster_ctarank 2" in str(e.value)


def test_peer_exited_is_caught(dev):
    with pytest.raises(EmuError) as e:
        dev.launch(_mod(commit_only(1, odd_exits_first=True)), "k", grid=(2, 1, 1), block=(32, 1, 1),
                   cluster=(2, 1, 1), args=[_out(dev, 2)])
    assert "[tcgen05:pair-peer-exited]" in str(e.value) and "Table 46" in str(e.value)


def test_odd_cluster_has_a_cta_without_peer(dev):
    with pytest.raises(EmuError) as e:
        dev.launch(_mod(alloc_dealloc()), "k", grid=(3, 1, 1), block=(32, 1, 1), cluster=(3, 1, 1),
                   args=[_out(dev, 3)])
    assert "[tcgen05:pair-no-peer]" in str(e.value) and "rank 2" in str(e.value)


def test_cta_group_mismatch_in_ptx_is_caught(dev):
    """ptxas refuses mixing .cta_group in one function; the emulator checks PTX it is given directly too."""
    import dataclasses

    mod = _mod(alloc_dealloc())
    bad = dataclasses.replace(mod, ptx=mod.ptx.replace("tcgen05.alloc.cta_group::2", "tcgen05.alloc.cta_group::1", 1))
    with pytest.raises(EmuError) as e:
        dev.launch(bad, "k", grid=(2, 1, 1), block=(64, 1, 1), cluster=(2, 1, 1), args=[_out(dev, 2)])
    assert "[tcgen05:cta-group-mismatch]" in str(e.value) and "9.7.16.10.9" in str(e.value)


def test_cute_2sm_partition_puts_half_of_a_b_and_c_in_each_cta(dev):
    """The operand placement the emulator implements (ptx_docs/tcgen05_cta_pair.md) as CUTLASS computes it: CuTe's
    partition_shape_A/B/C of its 2-SM atoms, compiled by NVRTC and evaluated on the emulator, give each CTA 128 of
    the 256 A rows, N/2 B rows and a 128 x N accumulator (the tutorial 04 comment '((_256,_16),_1,_4)' for B is
    stale)."""
    from cutlass_tutorial import build
    from probes.tcgen05_pair_probes import cute_partition_shapes

    mod = ptxlab.compile(cute_partition_shapes(), arch="sm_100a", name="cute_2sm_shapes.cu", options=build.OPTIONS,
                         include_dirs=build.include_dirs())
    out = _out(dev, 8)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(1, 1, 1), args=[out])
    assert dev.to_host(out, np.int32)[:6].tolist() == [128, 128, 128, 256, 64, 64 * 256]


@pytest.mark.parametrize("m_mma, n", [(128, 32), (128, 128), (256, 64)])
def test_pair_accumulator_matches_cute_fragment(dev, m_mma, n):
    """The TMEM cell where the emulator's pair MMA puts D[m][j] of a CTA's M/2 rows equals the address CuTe's own
    accumulator fragment (tmem_frg_2sm) gives that element, for every (m, j): Layout B for M = 128 (64 rows over all
    128 lanes, N/2 columns), Layout A for M = 256 (lane m, column j)."""
    from ptxlab.desc.smem import SmemDesc
    from ptxlab.emu.hw.tcgen05_mma import spec_from_idesc
    from ptxlab.emu.hw.tcgen05_mma_pair import run_mma_pair

    from cutlass_tutorial import build
    from probes.tcgen05_pair_probes import cute_accumulator_addresses

    rows = m_mma // 2
    mod = ptxlab.compile(cute_accumulator_addresses(m_mma, n), arch="sm_100a", name=f"cute_acc_{m_mma}x{n}.cu",
                         options=build.OPTIONS, include_dirs=build.include_dirs())
    out = _out(dev, 2 + rows * n)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(1, 1, 1), args=[out])
    got = dev.to_host(out, np.uint32)
    assert got[:2].tolist() == [rows, n]
    cute = got[2:].reshape(rows, n)
    # emulator: D[m][j] = (m + 1) + 256 (j + 1) (unique, exact) from A = [m+1, 1, 0...], B = [1, 256 (j+1), 0...]
    a = np.zeros((rows, 16))
    a[:, 0], a[:, 1] = np.arange(1, rows + 1), 1
    b = np.zeros((n, 16))
    b[:, 0], b[:, 1] = 1, 256 * np.arange(1, n + 1)
    smems = []
    for v in (0, 1):
        smem = np.zeros(32768, np.uint8)
        for src, base in ((a, 0), (b[(n // 2) * v: (n // 2) * (v + 1)], 0x4000)):
            by = src.astype(np.float16).view(np.uint8).reshape(src.shape[0], 32)
            for r in range(by.shape[0]):
                for kb in range(32):
                    smem[base + (r % 8) * 16 + (r // 8) * 256 + (kb % 16) + (kb // 16) * 128] = by[r, kb]
        smems.append(smem)
    spec = spec_from_idesc("f16", (1 << 4) | ((n >> 3) << 17) | ((m_mma >> 4) << 24), cta_group=2)
    res = run_mma_pair(spec, smems, [np.zeros((128, 512), np.uint32)] * 2, d_taddr=(0, 0),
                       a_desc=SmemDesc.encode(0, 128, 256, "NONE"), b_desc=SmemDesc.encode(0x4000, 128, 256, "NONE"),
                       enable_input_d=False)[0]
    val = res.d.view(np.float32).astype(np.int64)
    where = {}
    for li, lane in enumerate(res.lanes):
        for ci, col in enumerate(res.cols):
            x = int(val[li, ci])
            where[((x % 256) - 1, x // 256 - 1)] = (int(lane) << 16) | int(col)
    emu = np.array([[where[(m, j)] for j in range(n)] for m in range(rows)], np.uint32)
    assert np.array_equal(emu, cute)
