"""CUTLASS's own tcgen05 kernel on the emulator: the CuTe Blackwell tutorial 01 (examples/cute/tutorial/blackwell/
01_mma_sm100.cu from the installed nvidia-cutlass wheel, included unchanged by tests/cutlass_tutorial/
mma_sm100_wrapper.cu) compiled by NVRTC for sm_100a and run on ptxlab's emulator with the example's data recipe;
D must equal the example's host reference exactly. See ptx_docs/cutlass_tutorial.md and tests/cutlass_tutorial/build.py.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError
from ptxlab.toolchain import sass

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cutlass_tutorial import build  # noqa: E402

# the warnings and reports here are read for rule names, never for a CUDA line: no -lineinfo rebuild of the example
pytestmark = pytest.mark.usefixtures("no_lineinfo_recompile")


@pytest.fixture(scope="module")
def mod():
    return build.compile_tutorial()


@pytest.fixture(scope="module")
def emu_mod(mod):
    return build.compile_for_emulator(mod)


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


def test_example_comes_from_the_wheel():
    ex = build.example_dir() / "01_mma_sm100.cu"
    assert ex.exists() and "gemm_device" in ex.read_text()
    assert '#include PTXLAB_TUTORIAL_FILE' in build.WRAPPER.read_text()
    assert not (build.HERE / "01_mma_sm100.cu").exists()  # used from the wheel, never copied


def test_compiles_one_gemm_entry_with_expected_params(mod, dev):
    k = build.gemm_entry(mod)
    assert k.startswith("_Z11gemm_device")
    sizes = [p.size for p in dev.param_layout(mod, k)]
    # A, B, C, D tensors (24 B), MmaTiler (empty), TiledMMA (idesc + accumulate_), ClusterShape (empty), alpha, beta
    assert sizes == [24, 24, 24, 24, 1, 8, 1, 4, 4]


def test_sass_has_tcgen05_instructions(mod):
    k = build.gemm_entry(mod)
    counts = sass.require(mod, ["UTCHMMA", "UTCBAR", "LDTM", "UTCATOMSWS", "ELECT"], kernel=k)
    assert counts["LDTM"] == 256  # 256 x tcgen05.ld.32x32b.x1 (one TMEM column each, fully unrolled)
    ptx_ops = [ln.split()[0] for ln in mod.ptx.splitlines() if ln.lstrip().startswith("tcgen05.")]
    assert sum(o.startswith("tcgen05.mma.cta_group::1.kind::f16") for o in ptx_ops) == 4   # 4 x K16 per k-tile
    assert sum(o.startswith("tcgen05.ld.sync.aligned.32x32b.x1.b32") for o in ptx_ops) == 256
    for op in ("tcgen05.alloc", "tcgen05.dealloc", "tcgen05.commit", "tcgen05.relinquish_alloc_permit"):
        assert any(o.startswith(op) for o in ptx_ops), op


def test_hand_packed_params_equal_cutes_bytes(mod, dev):
    f = build.cute_param_facts(dev, build.compile_for_emulator(mod), m=384, k=192)
    assert f["tiled_mma"] == build.pack_tiled_mma()
    assert f["tensor_a"] == build.pack_tensor(f["a_ptr"], 384, 192, 192)
    assert build.instr_desc() == 0x08400010
    assert f["smem_bytes"] == 49280  # sizeof(SMEMStorage): A 16 KiB + B 32 KiB + barrier + TMEM base pointer


def test_unmodified_ptx_runs_until_the_tutorials_missing_proxy_fence(mod, dev, capsys):
    """NVRTC's PTX as is (device printf of the layouts, glued operands): the emulator runs it and stops only at
    the tutorial's own first bug: A/B written to SMEM by cooperative_copy (generic stores) and read by tcgen05.mma
    (async proxy) with only __syncthreads() between, no fence.proxy.async (PTX ISA 8.6, 9.7.13.4)."""
    assert "fence.proxy.async" not in mod.ptx
    with dev.strict_rules("all"), \
            pytest.raises(EmuError, match=r"tcgen05\.mma operand A\) without fence\.proxy\.async"):
        build.run_gemm(dev, mod, 256, 256, 64)
    assert "tmem" in capsys.readouterr().out.lower() or True  # the kernel's layout printf output (not asserted)


def test_with_proxy_fences_the_tutorial_runs_until_its_missing_wait_ld(mod, dev):
    nowait = build.compile_for_emulator(mod, wait_ld=False, proxy_fence=True)
    with dev.strict_rules("all"), pytest.raises(EmuError, match=r"read before the asynchronous tcgen05\.ld"):
        build.run_gemm(dev, nowait, 256, 256, 64)


def test_tutorial_reads_tcgen05_ld_registers_without_wait(mod, dev):
    """The tutorial never executes tcgen05.wait::ld before using the loaded accumulators: the emulator reports it."""
    assert "tcgen05.wait" not in mod.ptx
    nowait = build.compile_for_emulator(mod, wait_ld=False)
    with dev.strict_rules("tcgen05_wait_ld"), pytest.raises(EmuError, match=r"read before the asynchronous tcgen05\.ld"):
        build.run_gemm(dev, nowait, 256, 256, 64)


def test_unmodified_tutorial_is_bit_exact_by_default(mod):
    """Default fidelity rules (ptxlab/emu/checks/fidelity.py): the tutorial's missing fence.proxy.async and missing
    tcgen05.wait::ld are warnings (what hardware is known to do), and NVRTC's PTX as is gives the exact D."""
    from ptxlab.emu.checks.fidelity import EmuFidelityWarning

    dev = ptxlab.open_device("emu", strict=())
    with pytest.warns(EmuFidelityWarning) as rec:
        d, ref, _, stats = build.run_gemm(dev, mod, 256, 256, 64, alpha=1.0, beta=0.0, seed=7)
    np.testing.assert_array_equal(d, ref)
    text = "\n".join(str(w.message) for w in rec)
    assert "[proxy:fence-async]" in text and "tcgen05.mma operand" in text
    assert "tcgen05_wait_ld" in text and "sites in kernel" in text      # first site in full, then the summary
    rules = [w.split("]")[0] for w in stats["fidelity_warnings"]]
    assert len(stats["fidelity_warnings"]) > 2 and len(rec) <= 4


def test_glued_operands_are_counted(mod):
    assert build.glued_operand_lines(mod.ptx) == 256
    assert build.glued_operand_lines(build.emulator_ptx(mod.ptx)) == 0


@pytest.mark.parametrize("m,n,k,alpha,beta", [(256, 256, 256, 1.0, 0.0), (256, 512, 128, 2.0, -1.0)])
def test_gemm_exact_on_emulator(emu_mod, dev, m, n, k, alpha, beta):
    d, ref, secs, stats = build.run_gemm(dev, emu_mod, m, n, k, alpha, beta, seed=m + n + k)
    assert np.abs(ref).max() > 0
    np.testing.assert_array_equal(d, ref)  # integer-valued inputs: fp32 accumulation is exact, zero error
    print(f"\n{m}x{n}x{k} alpha={alpha} beta={beta}: emulator {stats['seconds']:.2f} s, "
          f"{stats['thread_instrs']} thread-instructions, launch {secs:.2f} s")
