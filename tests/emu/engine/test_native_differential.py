"""Differential test of the engines: random PTX kernels (native_corpus.py) run on the interpreter (the reference) and
on the native engine must leave every output bit identical, and every form the corpus lists must actually run
natively (a form that silently fell back to the interpreter would make this test unable to fail)."""
from __future__ import annotations

import types

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.engine import native
from ptxlab.emu.engine.native import build, runner

import native_corpus as nc

def _module(ptx: str):
    return types.SimpleNamespace(ptx=ptx, name="diff.ptx")


def _run(engine: str, mod, data: np.ndarray, grid: int, block: int, racecheck: bool = False):
    # the random kernels share their shared-memory slots between thread tiles (a race racecheck reports; both engines
    # run the threads in the same order, so the values still agree); test_racecheck_reports_alike covers the check
    dev = ptxlab.open_device("emu", engine=engine, racecheck=racecheck)
    x = dev.to_device(data)
    y = dev.empty(4 * nc.OUT_WORDS * grid * block)
    dev.memset(y, 0xFF)
    dev.launch(mod, "k", grid=(grid, 1, 1), block=(block, 1, 1), args=[x, y, np.uint32(grid * block)])
    return dev, dev.to_host(y, np.uint32).reshape(grid * block, nc.OUT_WORDS)


def _outcome(engine, mod, data, grid, block, racecheck: bool = False):
    """(device, output words) or (device, the EmuError's text): a fault must be reported identically too."""
    try:
        return _run(engine, mod, data, grid, block, racecheck)
    except ptxlab.errors.EmuError as e:
        return None, str(e)


def _compare(ptx: str, rng, grid: int = 2, block: int = 80):
    mod = _module(ptx)
    data = nc.inputs(rng, grid * block)
    _, ref = _outcome("interp", mod, data, grid, block)
    dev, got = _outcome("native", mod, data, grid, block)
    if isinstance(ref, str) or isinstance(got, str):
        assert got == ref, f"engines differ:\n--- interp ---\n{ref}\n--- native ---\n{got}"
        pytest.fail(f"the random kernel faulted (a corpus bug): {ref}")
    bad = np.argwhere(ref != got)
    if bad.size:
        t, w = bad[0]
        pytest.fail(f"engines differ in {len(bad)} words; first: thread {t} word {w}: interp 0x{int(ref[t, w]):08x}, "
                    f"native 0x{int(got[t, w]):08x}\n--- kernel ---\n{ptx}")
    return dev


def test_a_compiler_is_there():
    """CI and the reference machine have one; without it every test here would only run the interpreter twice."""
    assert build.available(), "the native engine needs a C compiler (gcc / cc, or CC=...)"


@pytest.mark.parametrize("chunk", range(4))
def test_every_form_runs_natively_and_agrees(chunk, rng):
    """Each form of FORMS (in a straight line, a quarter per test) is translated, and both engines agree on it."""
    forms = nc.FORMS[chunk::4]
    ptx = nc.kernel(rng, n_ins=len(forms) * 2, forms=forms)
    dev = _compare(ptx, rng)
    prog = dev.program(_module(ptx), "k")
    k = runner.kernel_of(prog)
    missing = sorted({e.ins.name for e, nat in zip(prog.code, k.native)
                      if not nat and e.ins.opcode not in ("bra", "exit", "ret")})
    assert not missing, f"forms the native engine did not translate: {missing}"


def test_illegal_forms_refused_alike(rng):
    """Forms the PTX ISA does not define (``setp.lo.s32``, ``add.b16``): the native engine must not run them either;
    both engines stop with the same "not implemented" report."""
    assert nc.ILLEGAL_FORMS, "the generator writes no illegal form any more: pick some by hand"
    for form in nc.ILLEGAL_FORMS[:: max(1, len(nc.ILLEGAL_FORMS) // 8)]:
        mod = _module(nc.kernel(rng, n_ins=2, forms=[form]))
        data = nc.inputs(rng, 64)
        _, ref = _outcome("interp", mod, data, 1, 64)
        _, got = _outcome("native", mod, data, 1, 64)
        assert isinstance(ref, str) and "not implemented" in ref, f"{form[0]}: the interpreter ran it"
        assert got == ref, f"{form[0]}: engines differ:\n--- interp ---\n{ref}\n--- native ---\n{got}"


def test_racecheck_reports_alike(rng):
    """A random kernel with 320 threads per block writes the same shared slot from two thread tiles with no barrier:
    racecheck (on by default) must stop both engines with the same report."""
    for _ in range(20):
        mod = _module(nc.kernel(rng, n_ins=90))
        data = nc.inputs(rng, 320)
        _, ref = _outcome("interp", mod, data, 1, 320, racecheck=True)
        if isinstance(ref, str) and "racecheck" in ref:
            break
    else:
        pytest.fail("20 random kernels of 320 threads raced on no shared slot: the corpus changed, write one by hand")
    _, got = _outcome("native", mod, data, 1, 320, racecheck=True)
    assert got == ref


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_agree(seed, rng):
    """Random mixes with divergent branches, loops and shared/local/generic/param/global memory; every third case
    with blocks of 320 threads (a wave of several of the engine's 256-thread tiles)."""
    _compare(nc.kernel(rng, n_ins=90), rng, block=320 if seed % 3 == 2 else 80)


def test_special_forms_translate(rng):
    """Packs, unpacks, integer cvt (with .sat), cvta and conversions of 16-bit registers: translated, and agreeing."""
    raw = [nc.special(f, rng) for f in nc.SPECIAL_FORMS for _ in range(2)]
    ptx = nc.kernel(rng, n_ins=0, raw=raw)
    dev = _compare(ptx, rng)
    prog = dev.program(_module(ptx), "k")
    k = runner.kernel_of(prog)
    nat = {e.ins.text.strip().rstrip(";").strip() for e, n in zip(prog.code, k.native) if n}
    missing = [r for r in raw if r.rstrip(";") not in nat]
    assert not missing, f"forms the native engine did not translate: {missing}"


def test_engine_switch(monkeypatch):
    assert ptxlab.open_device("emu", engine="interp").engine == "interp"
    monkeypatch.setenv(native.ENV, "interp")
    assert ptxlab.open_device("emu").engine == "interp"
    monkeypatch.setenv(native.ENV, "native")
    assert ptxlab.open_device("emu").engine == "native"
    monkeypatch.setenv(native.ENV, "jit")
    with pytest.raises(ptxlab.errors.UsageError, match="PTXLAB_EMU_ENGINE"):
        ptxlab.open_device("emu")
    with pytest.raises(ptxlab.errors.UsageError, match="engine="):
        ptxlab.open_device("emu", engine="fast")
