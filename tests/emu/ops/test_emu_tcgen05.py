"""Known-answer tcgen05 probe kernels run on the emulator (ptxlab.open_device("emu")), plus SASS checks and the
error probes (leak, ld before wait::ld, TMEM read before the MMA's commit completed)."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError
from ptxlab.toolchain.sass import require

from probes.tcgen05_probes import alloc_only, mma_f16, roundtrip

SEED = np.random.SeedSequence().entropy


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


@pytest.fixture
def rng() -> np.random.Generator:
    print(f"seed={SEED}")
    return np.random.default_rng(SEED)


def _poisoned(dev, nbytes: int):
    buf = dev.empty(nbytes)
    dev.memset(buf, 0xA5)
    return buf


def test_alloc_only(dev) -> None:
    mod = ptxlab.compile(alloc_only(64), arch="sm_100a")
    require(mod, ["UTCATOMSWS"])
    out = _poisoned(dev, 4)
    dev.launch(mod, "k", grid=(2, 1, 1), block=(64, 1, 1), args=[out])
    assert int(dev.to_host(out, np.uint32)[0]) == 0  # lane 0, column 0 (one CTA resident, first fit)


def test_leak_is_caught(dev) -> None:
    mod = ptxlab.compile(alloc_only(32, dealloc=False), arch="sm_100a")
    with pytest.raises(EmuError) as e:
        dev.launch(mod, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[_poisoned(dev, 4)])
    msg = str(e.value)
    assert "TMEM not freed at kernel exit" in msg and "9.7.16.7.1" in msg and "line" in msg


CASES = [("32x32b", 1, False), ("32x32b", 8, True), ("16x64b", 4, False), ("16x64b", 2, True),
         ("16x128b", 2, False), ("16x128b", 4, True), ("16x256b", 1, False), ("16x256b", 2, True),
         ("16x32bx2", 4, False), ("16x32bx2", 2, True), ("32x32b", 64, False)]      # .x64: the CuTe DSL's


@pytest.mark.parametrize("shape,num,pack", CASES)
def test_st_ld_roundtrip(dev, rng: np.random.Generator, shape: str, num: int, pack: bool) -> None:
    from ptxlab.emu.hw.tcgen05_maps import ldst_num_regs

    n = ldst_num_regs(shape, num)
    mod = ptxlab.compile(roundtrip(shape, num, pack), arch="sm_100a")
    x = rng.integers(1, 2**32, 128 * n, dtype=np.uint64).astype(np.uint32)
    out = _poisoned(dev, x.nbytes)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(128, 1, 1), args=[dev.to_device(x), out])
    assert np.array_equal(dev.to_host(out, np.uint32), x)


def test_roundtrip_sass() -> None:
    mod = ptxlab.compile(roundtrip("16x256b", 2, False), arch="sm_100a")
    require(mod, ["UTCATOMSWS", "STTM", "LDTM"])


def test_ld_without_wait_is_caught_when_strict(dev) -> None:
    mod = ptxlab.compile(roundtrip("32x32b", 2, False, wait_ld=False), arch="sm_100a")
    with dev.strict_rules("tcgen05_wait_ld"), pytest.raises(EmuError) as e:
        dev.launch(mod, "k", grid=(1, 1, 1), block=(128, 1, 1),
                   args=[dev.to_device(np.ones(256, np.uint32)), _poisoned(dev, 1024)])
    msg = str(e.value)
    assert "tcgen05.wait::ld" in msg and "before the asynchronous tcgen05.ld at PTX line" in msg
    assert "strict rule 'tcgen05_wait_ld'" in msg and "scoreboard" in msg
    assert "strict mode stops here" in msg and "the emulator continues" not in msg   # says what it does: stop


def test_ld_without_wait_default_warns_and_reads_loaded_value(rng) -> None:
    """Default: like the hardware (ptxas scoreboards LDTM destinations), the loaded value is read; one warning per
    reading site naming it."""
    from ptxlab.emu.checks.fidelity import EmuFidelityWarning

    dev = ptxlab.open_device("emu", strict=())
    mod = ptxlab.compile(roundtrip("32x32b", 2, False, wait_ld=False), arch="sm_100a")
    x = rng.integers(1, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    out = _poisoned(dev, 1024)
    with pytest.warns(EmuFidelityWarning, match=r"tcgen05_wait_ld.*read before the asynchronous tcgen05\.ld"):
        dev.launch(mod, "k", grid=(1, 1, 1), block=(128, 1, 1), args=[dev.to_device(x), out])
    assert np.array_equal(dev.to_host(out, np.uint32), x)
    warns = dev.last_stats["fidelity_warnings"]
    assert 1 <= len(warns) <= 2 and all("PTX line" in w or "ptx    : line" in w for w in warns)
    assert all("the emulator continues with the loaded value" in w for w in warns)


def _run_mma(dev, a: np.ndarray, b: np.ndarray, **kw) -> np.ndarray:
    M, K = a.shape
    N = b.shape[0]
    mod = ptxlab.compile(mma_f16(M, N, K // 16, **kw), arch="sm_100a")
    out = _poisoned(dev, M * N * 4)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(a.astype(np.float16).view(np.uint32)),
                     dev.to_device(b.astype(np.float16).view(np.uint32)), out])
    return dev.to_host(out, np.uint32).reshape(M, N).view(np.float32)


def test_mma_ones_gives_k(dev) -> None:
    a, b = np.ones((128, 32)), np.ones((16, 32))
    assert (_run_mma(dev, a, b) == 32.0).all()
    mod = ptxlab.compile(mma_f16(128, 16, 2), arch="sm_100a")
    require(mod, ["UTCATOMSWS", "UTCHMMA", "UTCBAR", "LDTM"])


@pytest.mark.parametrize("nk,collector", [(1, ""), (4, ""), (4, ".collector::a::discard")])
def test_mma_random_integers_exact(dev, rng: np.random.Generator, nk: int, collector: str) -> None:
    """.collector::a::discard (the CuTe DSL's MMAs) only releases the A collector buffer: the same D."""
    N = int(rng.choice([8, 16, 32]))
    a = rng.integers(-8, 9, (128, 16 * nk)).astype(np.float64)
    b = rng.integers(-8, 9, (N, 16 * nk)).astype(np.float64)
    assert np.array_equal(_run_mma(dev, a, b, collector=collector), (a @ b.T).astype(np.float32))


def test_read_before_commit_is_caught(dev) -> None:
    a, b = np.ones((128, 16)), np.ones((8, 16))
    with pytest.raises(EmuError) as e:
        _run_mma(dev, a, b, wait_commit=False)
    msg = str(e.value)
    assert "before the mma issued at PTX line" in msg and "tcgen05.commit mbarrier" in msg
    assert "ptx    : line" in msg


def test_accumulate_into_uninitialized_tmem_is_caught(dev) -> None:
    with pytest.raises(EmuError) as e:
        _run_mma(dev, np.ones((128, 16)), np.ones((8, 16)), accumulate_first=True)
    assert "never written since tcgen05.alloc" in str(e.value)


def _blocked_sf(sf: np.ndarray) -> np.ndarray:
    """(rows<=128, 4) SF codes -> the gpu-mode permuted/blocked 512-B chunk: byte 16*(r%32) + 4*(r/32) + j."""
    out = np.zeros(512, np.uint8)
    for r in range(sf.shape[0]):
        for j in range(4):
            out[16 * (r % 32) + 4 * (r // 32) + j] = sf[r, j]
    return out


@pytest.mark.parametrize("N,block", [(8, ".block16"), (64, ".block16"), (8, ".scale_vec::4X")])
def test_nvfp4_cp_scales_and_mma_exact(dev, rng: np.random.Generator, N: int, block: str) -> None:
    """.scale_vec::4X (the CuTe DSL 4.3's spelling) is .block16 for kind::mxf4nvf4: the same D."""
    from ptxlab.numerics import E2M1_VALUES

    from probes.tcgen05_probes import mma_nvfp4

    mod = ptxlab.compile(mma_nvfp4(N, block), arch="sm_100a")
    require(mod, ["UTCCP", "UTCATOMSWS", "UTCBAR", "LDTM"])
    a = rng.integers(0, 16, (128, 64), dtype=np.uint8)
    b = rng.integers(0, 16, (N, 64), dtype=np.uint8)
    ue4m3 = {0x00: 0.0, 0x30: 0.5, 0x38: 1.0, 0x40: 2.0, 0x44: 3.0}
    sfa = rng.choice(list(ue4m3), (128, 4)).astype(np.uint8)
    sfb = rng.choice(list(ue4m3), (N, 4)).astype(np.uint8)
    pack = lambda c: (c[:, 0::2] | (c[:, 1::2] << 4)).astype(np.uint8)  # noqa: E731 (low nibble = even k)
    out = _poisoned(dev, 128 * N * 4)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(pack(a).view(np.uint32)), dev.to_device(pack(b).view(np.uint32)),
                     dev.to_device(_blocked_sf(sfa).view(np.uint32)), dev.to_device(_blocked_sf(sfb).view(np.uint32)),
                     out])
    got = dev.to_host(out, np.uint32).reshape(128, N).view(np.float32)
    sa = np.vectorize(ue4m3.get)(np.repeat(sfa, 16, axis=1))
    sb = np.vectorize(ue4m3.get)(np.repeat(sfb, 16, axis=1))
    ref = (E2M1_VALUES[a] * sa).astype(np.float64) @ (E2M1_VALUES[b] * sb).astype(np.float64).T
    assert np.array_equal(got, ref.astype(np.float32))


def test_cta_group_2_without_cluster_is_rejected(dev) -> None:
    """A CTA outside a cluster of >= 2 CTAs has no pair: .cta_group::2 faults (PTX 9.7.16.5.1)."""
    mod = ptxlab.compile(alloc_only(32).replace("cta_group::1", "cta_group::2"), arch="sm_100a")
    with pytest.raises(EmuError) as e:
        dev.launch(mod, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[_poisoned(dev, 4)])
    assert "[tcgen05:pair-no-cluster]" in str(e.value) and "9.7.16.5.1" in str(e.value)
