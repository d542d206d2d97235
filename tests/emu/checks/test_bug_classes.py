"""Known bug classes (shared/reference/anchors.md) that had no test elsewhere: each test injects the bug into a
correct lab kernel / input and asserts the lab's specific detection. The full map of bug class -> test is
ptx_docs/bug_classes.md. Fresh random data every run (seeds printed by the stage rows or here)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.desc.smem import SmemDesc
from ptxlab.emu.hw.tcgen05_mma import run_mma, spec_from_idesc
from ptxlab.errors import CompileError, EmuError
from ptxlab import gpumode
from ptxlab.gpumode import check_close, generate_gemv, reference_gemv
from ptxlab.lab.registry import _load_driver, discover
from ptxlab.numerics import decode_ue4m3

from probes.tcgen05_probes import mma_f16

ROOT = Path(__file__).resolve().parents[3]
SEED = np.random.SeedSequence().entropy


@pytest.fixture
def rng() -> np.random.Generator:
    print(f"seed={SEED}")
    return np.random.default_rng(SEED)


def _fails(res) -> str:
    assert not res.passed
    return "\n".join(f"{c.name}: {c.detail}" for c in res.rows if not c.ok)


def _launch_mma_probe(dev, src: str, rng: np.random.Generator) -> None:
    a = rng.integers(-8, 9, (128, 16)).astype(np.float16)
    b = rng.integers(-8, 9, (8, 16)).astype(np.float16)
    mod = ptxlab.compile(src, arch="sm_100a")
    dev.launch(mod, "k", grid=(1, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(a.view(np.uint32)), dev.to_device(b.view(np.uint32)), dev.empty(128 * 8 * 4)])


# ----------------------------------------------------------------------------------- SF tensors / dtype
def test_reference_sf_instead_of_permuted_is_caught(ctx, monkeypatch):
    """Stage C1 fed the memory of the REFERENCE sfa/sfb ([MN, K/16, L], row-major per batch) where the kernel
    expects gpu-mode's sfa_permuted memory: the TMEM image compare fails and locates the first wrong SFA word."""
    C = _load_driver(ROOT / "stages" / "C_scale_cp" / "driver.py")
    seen = {}
    gen = C.generate_gemm

    def spy(*a, **k):
        seen["p"] = gen(*a, **k)
        return seen["p"]

    def reference_memory(perm):  # the bug: hand the kernel p.sfa / p.sfb instead of the permuted tensors
        p = seen["p"]
        ref = p.sfa if perm is p.sfa_permuted else p.sfb
        return np.ascontiguousarray(np.asarray(ref).transpose(2, 0, 1)).reshape(-1)  # memory order (L, MN, K/16)

    monkeypatch.setattr(C, "generate_gemm", spy)
    monkeypatch.setattr(C, "permuted_memory", reference_memory)
    text = _fails(C.run_c1(ctx))
    assert "TMEM image == host SF image" in text and "words differ" in text, text
    assert "SFA K-chunk" in text and "ue4m3[" in text, text


def _decode_e4m3fnuz(codes: np.ndarray) -> np.ndarray:
    """float8_e4m3fnuz (bias 8, no -0/inf, NaN = 0x80), positive codes only, by formula."""
    c = codes.astype(np.int64)
    e, m = (c >> 3) & 0xF, c & 7
    return np.where(e == 0, m / 8.0 * 2.0 ** -7, (1 + m / 8.0) * 2.0 ** (e - 8))


def test_e4m3fnuz_decode_of_the_scales_is_caught(rng, monkeypatch):
    """The gpu-mode data are float8_e4m3fn; a kernel/host that decodes the UE4M3 scales as e4m3fnuz (what some
    task text says) halves every scale: the gpu-mode check_close against reference_gemv reports the mismatch."""
    codes = np.arange(1, 127, dtype=np.uint8)                      # 0x7F: NaN in fn, 240 in fnuz
    fn = decode_ue4m3(codes).astype(np.float64)
    assert fn[0x38 - 1] == 1.0 and fn[0x7E - 1] == 448.0          # the lab decodes e4m3fn
    assert np.array_equal(_decode_e4m3fnuz(codes), fn / 2)        # fnuz: every code is worth half
    p = generate_gemv(128, 256, 1, int(rng.integers(0, 2**31)))
    ref = reference_gemv(p)
    with monkeypatch.context() as mp:  # the same dequantize-and-sum pipeline, only the SF decode swapped
        mp.setattr(gpumode, "decode_ue4m3", lambda sf: _decode_e4m3fnuz(np.asarray(sf)))
        c_fnuz = reference_gemv(p)
    assert np.count_nonzero(ref) > 64                              # the data are not trivially zero
    errs = check_close(c_fnuz, ref)
    assert errs and "ERROR AT" in "\n".join(errs), errs


# ----------------------------------------------------------------------------------- SMEM descriptors
def test_d2_sbo_in_fp4_elements_is_caught(ctx, monkeypatch):
    """D2's operand descriptors built with the SBO counted in fp4 ELEMENTS (2048 per 8-row group) instead of packed
    BYTES (1024): the A tile's last 8-row group lands past the CTA's shared memory and the emulator names the
    descriptor and what to check."""
    stages = {s.id: s for s in discover(ROOT / "stages")}
    assert "D2" in stages
    import sys

    D = sys.modules["ptxlab_stages.D_mma.driver"]
    compile_stage = D.H.compile_stage

    def bad_compile(path, defines=None):
        src = path.read_text()
        good = "return mma::smem_desc_sw128(addr);"
        assert good in src
        tmp = ctx.dump_dir / path.name
        tmp.write_text(src.replace(good, "return mma::smem_desc(addr, 16u, 2048u, mma::SWZ_128B);"))
        return compile_stage(tmp, defines)

    monkeypatch.setattr(D.H, "compile_stage", bad_compile)
    text = _fails(D.run_d2(ctx, shapes=[(128, 256, 1)]))
    assert "kernel ran (128x256x1)" in text and "SMEM descriptor 0x" in text, text
    assert "A operand: SMEM descriptor" in text and "SBO 2048 B" in text and "beyond the CTA's" in text, text
    assert "start address / SBO / LBO is wrong" in text and "M=128 from the instruction descriptor" in text, text


def _kmajor_none(smem: np.ndarray, base: int, rowbytes: np.ndarray, sbo: int, lbo: int) -> None:
    """K-major SWIZZLE_NONE canonical layout (PTX 9.7.16.3): 8x16-B core matrices, SBO between 8-row groups,
    LBO between K-adjacent core matrices."""
    for r in range(rowbytes.shape[0]):
        for kb in range(rowbytes.shape[1]):
            smem[base + (r % 8) * 16 + (r // 8) * sbo + (kb % 16) + (kb // 16) * lbo] = rowbytes[r, kb]


def test_swapped_lbo_sbo_reads_wrong_operands(rng):
    """A K-major SWIZZLE_NONE f16 MMA whose descriptors swap LBO and SBO: the emulator fetches the operands through
    the descriptor, so D differs from A @ B^T (the stage/test compare catches it); the correct one matches."""
    M, N = 128, 16
    av = rng.integers(-8, 9, (M, 16)).astype(np.float64)
    bv = rng.integers(-8, 9, (N, 16)).astype(np.float64)
    smem = rng.integers(0, 256, 32768, dtype=np.uint8)
    _kmajor_none(smem, 0x0000, av.astype(np.float16).view(np.uint8).reshape(M, 32), sbo=256, lbo=128)
    _kmajor_none(smem, 0x4000, bv.astype(np.float16).view(np.uint8).reshape(N, 32), sbo=256, lbo=128)
    spec = spec_from_idesc("f16", (1 << 4) | ((N >> 3) << 17) | ((M >> 4) << 24))
    want = np.asarray(av @ bv.T, np.float32).view(np.uint32)

    def run(lbo: int, sbo: int) -> np.ndarray:
        tm = np.full((128, 512), 0xDEADBEEF, np.uint32)
        return run_mma(spec, smem, tm, d_taddr=(0, 0), a_desc=SmemDesc.encode(0, lbo, sbo, "NONE"),
                       b_desc=SmemDesc.encode(0x4000, lbo, sbo, "NONE"), enable_input_d=False).d

    assert np.array_equal(run(128, 256), want)
    bad = run(256, 128)
    assert np.count_nonzero(bad != want) > bad.size // 2


# ----------------------------------------------------------------------------------- tcgen05 / mbarrier
def test_cta_group_mismatch_between_mma_and_commit_is_caught():
    """mma with .cta_group::1 and commit with .cta_group::2 in one kernel: ptxas (through ptxlab.compile) refuses."""
    src = mma_f16(128, 8, 1)
    bad = src.replace("tcgen05.commit.cta_group::1", "tcgen05.commit.cta_group::2")
    assert bad != src and "tcgen05.mma.cta_group::1" in bad
    with pytest.raises(CompileError) as e:
        ptxlab.compile(bad, arch="sm_100a")
    assert "uses single CTA(.cta_group::1) and CTA pair granularity(.cta_group::2)" in str(e.value)


def test_commit_parity_off_by_one_is_caught(emu, rng):
    """Waiting on parity 1 for the FIRST phase of the commit's mbarrier (off by one: that is the 'preceding' phase,
    reported complete at once) lets tcgen05.ld run before the MMA finished: [tmem:read-before-complete]."""
    src = mma_f16(128, 8, 1)
    bad = src.replace("p, [%0], 0; @!p bra W;", "p, [%0], 1; @!p bra W;")
    assert bad != src
    _launch_mma_probe(emu, src, rng)  # the correct parity runs clean
    with pytest.raises(EmuError) as e:
        _launch_mma_probe(emu, bad, rng)
    msg = str(e.value)
    assert "[tmem:read-before-complete]" in msg and "wait on its tcgen05.commit mbarrier" in msg, msg


# ----------------------------------------------------------------------------------- sticky errors
def test_sticky_error_is_reported_by_the_launching_stage():
    """A kernel whose fault only surfaces at the next synchronization (sticky error): launch_guarded synchronizes
    right after the launch, so the failure is reported there, with the kernel's error, not in a later copy."""
    from ptxlab.errors import LaunchError
    from ptxlab.lab.dumps import launch_guarded

    calls = []

    class Faulty:
        def launch(self, mod, kernel, **kw):
            calls.append("launch")  # asynchronous: returns fine

        def synchronize(self):
            calls.append("sync")
            raise LaunchError("kernel 'k' failed while running: CUDA_ERROR_ILLEGAL_ADDRESS")

        def to_host(self, *a, **k):  # a later copy would be the first to see the error: never reached
            raise AssertionError("copy after a failed launch")

    res = launch_guarded(lambda: Faulty(), None, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[])
    assert calls == ["launch", "sync"]
    assert not res.ok and not res.refused and "CUDA_ERROR_ILLEGAL_ADDRESS" in res.detail
