"""wgmma.mma_async accumulators read before wgmma.wait_group (PTX ISA 9.7.15.5.2: the accumulator registers are
undefined until a wait covers the commit group): the fidelity rule ``wgmma_wait`` (ptxlab/emu/checks/fidelity.py).

Hardware evidence: ptxas (sm_90a) guards the first use of the accumulators with WARPGROUP.DEPBAR.LE whether or not the
PTX has wgmma.wait_group, so the value read is the MMA result; the emulator's default warns and continues with it,
strict mode stops.  The arithmetic and layouts of every wgmma variant are checked by the corpus entry 'wgmma'
(tests/corpus/kernels_wgmma.py, run by tests/emu/test_corpus.py)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.checks.fidelity import EmuFidelityWarning
from ptxlab.errors import EmuError

KDIR = Path(__file__).resolve().parents[2] / "kernels"
sys.path.insert(0, str(KDIR))
import gen_wgmma  # noqa: E402

WAIT = 'asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");'
VARIANT = gen_wgmma.VARIANTS[0]            # wg_f16_f32_n8: m64n8k16, f16 inputs, f32 accumulators


def _src(wait: bool) -> str:
    src = gen_wgmma.HEAD + gen_wgmma.kernel(VARIANT)
    assert WAIT in src
    return src if wait else src.replace(WAIT, "")


def test_generated_corpus_kernels_are_current() -> None:
    assert (KDIR / "wgmma.cu").read_text() == gen_wgmma.source(), "run python tests/kernels/gen_wgmma.py"


@pytest.mark.parametrize("wait", [True, False])
def test_ptxas_guards_the_first_accumulator_use(wait: bool) -> None:
    """Between the HGMMA and the first store of D, the SASS waits on the warpgroup's MMA (WARPGROUP.DEPBAR.LE),
    with or without wgmma.wait_group in the PTX."""
    sass = ptxlab.compile(_src(wait), arch="sm_90a").sass()
    ops = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass)]
    first_mma = next(i for i, o in enumerate(ops) if o.startswith("HGMMA"))
    first_store = next(i for i, o in enumerate(ops) if i > first_mma and o.startswith("STG"))
    assert any(o.startswith("WARPGROUP.DEPBAR.LE") for o in ops[first_mma:first_store]), ops[first_mma:first_store]


def _run(dev, wait: bool, rng):
    a = rng.integers(-4, 5, 64 * 16).astype(np.float16).view(np.uint16).astype(np.uint32)
    b = rng.integers(-4, 5, 8 * 16).astype(np.float16).view(np.uint16).astype(np.uint32)
    c = rng.integers(-64, 65, 64 * 8).astype(np.float32).view(np.uint32)
    out = dev.empty(64 * 8 * 4)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(_src(wait), arch="sm_90a"), VARIANT[0], grid=(1, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(a), dev.to_device(b), dev.to_device(c), out])
    want = (a.view(np.uint32).astype(np.uint16).view(np.float16).astype(np.float64).reshape(64, 16)
            @ b.astype(np.uint16).view(np.float16).astype(np.float64).reshape(8, 16).T
            + c.view(np.float32).reshape(64, 8))
    return dev.to_host(out, np.uint32).view(np.float32).reshape(64, 8), want.astype(np.float32)


def test_read_after_wait_is_silent(rng) -> None:
    dev = ptxlab.open_device("emu", strict="wgmma_wait")
    got, want = _run(dev, True, rng)
    np.testing.assert_array_equal(got, want)
    assert not dev.last_stats.get("fidelity_warnings")


def test_read_before_wait_warns_and_reads_the_mma_result(rng) -> None:
    dev = ptxlab.open_device("emu", strict=())
    with pytest.warns(EmuFidelityWarning, match="wgmma_wait"):
        got, want = _run(dev, False, rng)
    np.testing.assert_array_equal(got, want)
    warns = dev.last_stats["fidelity_warnings"]
    assert warns and all("the emulator continues with the MMA result" in w for w in warns)


def test_read_before_wait_stops_when_strict(rng) -> None:
    dev = ptxlab.open_device("emu", strict="wgmma_wait")
    with pytest.raises(EmuError) as e:
        _run(dev, False, rng)
    msg = str(e.value)
    assert "strict rule 'wgmma_wait'" in msg and "wgmma.wait_group" in msg and "WARPGROUP.DEPBAR" in msg, msg
