"""Fidelity corpus on the emulator: every entry of tests/corpus against its independent reference (exact unless the
entry marks an output otherwise), plus self-tests of the H100 comparison harness (tests/fidelity/run_corpus.py).

Fresh random inputs every run (seed printed and reported on failure); outputs are poisoned with 0xFF by each
entry's run().  sm_100a entries run too (the emulator supports them)."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fidelity"))

import corpus  # noqa: E402
import ptxlab  # noqa: E402

ENTRIES = corpus.all_entries()
SEED = int.from_bytes(os.urandom(8), "little")
print(f"test_corpus: seed {SEED}")


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


def test_registry_shape():
    assert len(ENTRIES) >= 25
    for e in ENTRIES:
        assert (corpus.KDIR / e.source).is_file(), e.source
        assert e.arch in ("sm_90a", "sm_100a"), e.arch
        for k, m in e.modes.items():
            kind = m.partition(":")[0]
            assert kind in ("exact", "nanclass", "approx", "approx16", "abs", "rel", "bounded") + corpus.VALIDATED, (e.name, m)
            if kind in corpus.VALIDATED:
                assert e.validate is not None, e.name


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_entry_on_emulator(dev, entry):
    ins = entry.make_inputs(corpus.entry_rng(SEED, entry.name))
    if "emu" in entry.refused:                 # a form the emulator refuses: it must raise, naming why
        with pytest.raises(Exception, match=re.escape(entry.refused["emu"])):
            entry.run(dev, corpus.compile_entry(entry), ins)
        return
    outs = entry.run(dev, corpus.compile_entry(entry), ins)
    assert outs, entry.name
    exp = entry.expected(ins) if entry.expected else None
    if exp is not None:
        # every output is covered by the reference or by the validator
        for k in outs:
            assert k in exp or entry.mode(k) in corpus.VALIDATED, f"{entry.name}: output {k} has no reference"
    probs = corpus.check_against_expected(entry, ins, outs, exp)
    assert not probs, f"seed {SEED} entry {entry.name}:\n" + "\n".join(probs)


def test_inputs_are_deterministic_per_seed():
    for e in ENTRIES:
        a = e.make_inputs(corpus.entry_rng(SEED, e.name))
        b = e.make_inputs(corpus.entry_rng(SEED, e.name))
        assert set(a) == set(b)
        for k in a:
            assert np.array_equal(a[k], b[k]), (e.name, k)


def test_serial_chain():
    add = lambda c, v: (c + v) & 0xFFFFFFFF  # noqa: E731
    assert corpus.serial_chain(5, [5, 8, 9], [3, 1, 2], 11, add)           # order 0, 1, 2
    assert corpus.serial_chain(5, [6, 5, 8], [2, 1, 3], 11, add)           # order 1, 0, 2
    assert not corpus.serial_chain(5, [5, 8, 9], [3, 1, 2], 12, add)       # wrong final
    assert not corpus.serial_chain(5, [5, 5, 9], [3, 1, 2], None, add)     # two ops saw the initial value
    cas = lambda c, v: v if c == 0 else c  # noqa: E731
    assert corpus.serial_chain(0, [0, 7, 7], [7, 9, 4], 7, cas)


def test_mode_ok():
    f = lambda *v: np.array(v, np.float32).view(np.uint32)  # noqa: E731
    assert corpus.mode_ok(f(1.0), np.nextafter(np.float32(1.0), np.float32(2)).reshape(1).view(np.uint32),
                          "approx:1").all()
    assert not corpus.mode_ok(f(1.0), f(1.0 + 2**-21), "approx:1").all()
    assert corpus.mode_ok(np.array([0x7FC00000], np.uint32), np.array([0x7FFFFFFF], np.uint32), "nanclass").all()
    assert not corpus.mode_ok(np.array([0x7FC00000], np.uint32), np.array([0x7FFFFFFF], np.uint32), "exact").all()
    assert corpus.mode_ok(f(1e-40), f(0.0), "approx:1").all()                  # subnormal flushed by MUFU
    assert corpus.mode_ok(f(0.3), f(0.3 + 4e-7), "abs:5.2e-7").all()
    assert not corpus.mode_ok(f(0.3), f(0.3 + 1e-5), "abs:5.2e-7").all()
    assert corpus.mode_ok(f(0.9), f(-0.2), "bounded:1").all()
    assert not corpus.mode_ok(f(np.nan), f(0.5), "bounded:1").all()


def test_harness_run_and_compare(tmp_path, capsys):
    """run twice with one seed -> compare exits 0; a flipped bit / a broken serialization / other inputs -> 1."""
    import run_corpus

    only = ["int_ops32", "float_approx", "atomics_hist", "float_edge", "divergence"]
    pa, pb = str(tmp_path / "a.npz"), str(tmp_path / "b.npz")
    assert run_corpus.main(["run", "--backend", "emu", "--out", pa, "--seed", str(SEED), "--only", *only]) == 0
    assert run_corpus.main(["run", "--backend", "emu", "--out", pb, "--seed", str(SEED), "--only", *only]) == 0
    assert run_corpus.compare(pa, pb, out=lambda s: None) == 0
    pc = str(tmp_path / "c.npz")                   # the stored inputs and PTX of run A, executed again
    assert run_corpus.main(["run", "--backend", "emu", "--out", pc, "--inputs-from", pa, "--ptx-from", pa,
                            "--only", *only]) == 0
    assert run_corpus.compare(pa, pc, out=lambda s: None) == 0
    arrays, meta = run_corpus.load(pb)
    assert meta["seed"] == SEED and set(meta["kernels"]) == set(only) and not meta["errors"]

    def variant(name, mutate):
        arr = {k: v.copy() for k, v in arrays.items()}
        mutate(arr)
        p = str(tmp_path / f"{name}.npz")
        run_corpus.save(p, arr, meta)
        lines = []
        rc = run_corpus.compare(pa, p, out=lines.append)
        return rc, "\n".join(lines)

    def flip(arr):
        arr["int_ops32::out::out"].reshape(-1)[123] ^= np.uint32(1 << 7)
    rc, text = variant("flip", flip)
    assert rc == 1 and "int_ops32" in text and "NOT explained" in text, text

    def one_ulp(arr):                        # rcp.approx 1 ulp away: allowed by approx:1
        v = arr["float_approx::out::rcp"]
        fin = np.isfinite(v.view(np.float32)) & (v.view(np.float32) != 0)
        v[np.flatnonzero(fin)[:5]] += np.uint32(1)
    rc, text = variant("ulp", one_ulp)
    assert rc == 0, text

    def swap_tickets(arr):                   # a different (valid) serialization of the ticket counter
        t, s = arr["atomics_hist::out::ticket"], arr["atomics_hist::out::slot"]
        c0 = int(arr["atomics_hist::in::c0"][0])
        i, j = int(s[0]), int(s[1])
        t[i], t[j] = t[j], t[i]
        s[t[i] - c0], s[t[j] - c0] = i, j
    rc, text = variant("swap", swap_tickets)
    assert rc == 0 and "both sides valid" in text, text

    def dup_ticket(arr):
        arr["atomics_hist::out::ticket"][3] = arr["atomics_hist::out::ticket"][4]
    rc, text = variant("dup", dup_ticket)
    assert rc == 1 and "VALIDATION FAILED" in text, text

    def other_inputs(arr):
        arr["divergence::in::a"][0] ^= np.uint32(1)
    rc, text = variant("inputs", other_inputs)
    assert rc == 1 and "INPUTS DIFFER" in text, text


def test_compare_judges_expected_refusals(tmp_path):
    """An entry expecting a refusal (Entry.refused) agrees when each side refuses as expected or (where no refusal
    is expected) runs; a side that runs what it should refuse, or refuses with another error, is a failure."""
    import run_corpus

    name = "bulk_reduce_t_or_int64"                   # expects: emu refuses (signed map), cuda illegal instruction
    pa = str(tmp_path / "a.npz")
    assert run_corpus.main(["run", "--backend", "emu", "--out", pa, "--seed", str(SEED), "--only", name]) == 1
    arrays, meta = run_corpus.load(pa)
    assert "on a signed tensor map" in meta["errors"][name], meta["errors"]

    def side(backend, error):
        m = dict(meta, backend=backend, errors={name: error} if error else {})
        p = str(tmp_path / f"{backend}_{bool(error)}.npz")
        run_corpus.save(p, arrays, m)
        return p

    illegal = "LaunchError: kernel 'red_t_or' failed: CUDA_ERROR_ILLEGAL_INSTRUCTION (an illegal instruction)"
    lines: list = []
    assert run_corpus.compare(side("cuda", illegal), pa, out=lines.append) == 0, lines
    assert any("REFUSED as expected" in x for x in lines), lines
    lines = []
    assert run_corpus.compare(side("cuda", None), pa, out=lines.append) == 1     # the hardware ran it
    assert any("expects the refusal" in x for x in lines), lines
    lines = []
    assert run_corpus.compare(side("cuda", "LaunchError: CUDA_ERROR_LAUNCH_TIMEOUT"), pa, out=lines.append) == 1
    assert any("something else" in x for x in lines), lines


def test_new_kernels_contain_their_ptx_features():
    from corpus.kernels_cluster import PTX_FEATURES as CLUSTER_FEATURES
    from corpus.kernels_new import PTX_FEATURES

    PTX_FEATURES = {**PTX_FEATURES, **CLUSTER_FEATURES}

    ents = {e.name: e for e in ENTRIES}
    for name, (kernel, feats) in PTX_FEATURES.items():
        ptx = corpus.compile_entry(ents[name]).ptx
        i = ptx.find(f".entry {kernel}(")
        assert i >= 0, (name, kernel)
        j = ptx.find(".entry", i + 8)
        body = ptx[i:j if j > 0 else None]
        missing = [f for f in feats if f not in body]
        assert not missing, f"{name}: PTX of {kernel} lacks {missing}"
