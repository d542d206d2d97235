"""Never run an instruction as another (issue 24 item 1): every handler runs only the forms its family table
declares (core/isa.register, core/forms.py); any other modifier / type combination is refused with
"not implemented: <instruction>" naming the PTX line when it executes.

Walks every registered form with combinations it must refuse: legal PTX ISA forms the emulator does not implement
(core/ptx_isa tables), and mutations of implemented forms (a modifier dropped, a foreign or duplicated modifier,
types swapped, rounding / saturation / .ftz combinations the ISA does not give that type).  Fresh random samples
every run (seed printed)."""
from __future__ import annotations

import os
import random

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.core import isa, ptx_isa
from ptxlab.emu.core.forms import TYPE_NAMES
from ptxlab.emu.ops import load_families

load_families()
SEED = int.from_bytes(os.urandom(4), "little")
print(f"test_isa_refusal: seed {SEED}")


def _accepted(name: str) -> bool:
    op, *mods = name.split(".")
    hit = isa.match(op, tuple(mods))
    return hit is not None and hit[1] is not None


def _sample(form, n, rng):
    total = form.count()
    if total <= n:
        return list(form.expand())
    vals = form.values()
    return [tuple(x for c in (rng.choice(alts) for _, alts in vals) if c for x in c.split(".")) for _ in range(n)]


@pytest.mark.parametrize("name", [
    "fma.rna.f32.f16",            # rounding .rna is not an fma rounding mode
    "fma.rn.ftz.f32.f16",         # mixed-precision fma has no .ftz
    "fma.f32.f16",                # fma needs a rounding modifier
    "add.rn.sat.f32x2",           # .f32x2 has no .sat
    "mul.rn.sat.f32x2",
    "fma.rn.sat.f32x2",
    "add.rni.f32",                # integer rounding on a float add
    "mul.sat.f64",                # .sat is f32/half only
    "add.rn.ftz.f64",             # .ftz is f32/half only
    "add.ftz.bf16",               # bf16 has no .ftz
    "add.rz.f16",                 # half add takes .rn only
    "fma.rz.bf16",
    "cvt.rn.s32.f32",             # float -> int needs an integer rounding
    "cvt.rni.f32.s32",            # int -> float needs a float rounding
    "cvt.rn.f16.f32.f32",         # a third type
    "min.xorsign.f32",            # .xorsign without .abs
    "setp.lo.f32",                # unsigned comparison on a float
    "setp.equ.s32",               # unordered comparison on an integer
    "setp.lt.b32",                # bit-size comparisons are eq/ne
    "ld.global.v3.u32",           # no .v3
    "atom.global.min.f32",        # atom.min has no .f32 form
    "tcgen05.ld.red.sync.aligned.32x32b.x1.min.u32",   # tcgen05.ld.red is not plain tcgen05.ld
    "tcgen05.mma.ws.cta_group::1.kind::f16",
    "mma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32",  # mma.m16n8k16 is .row.col only
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16.bogus",
])
def test_named_combinations_are_refused(name):
    assert not _accepted(name), f"{name} must be refused (no registered form accepts it)"


def test_legal_but_unimplemented_forms_are_refused_and_implemented_ones_accepted():
    """Every registered opcode: legal forms of the PTX ISA that no registered form covers are refused; every
    instance of a registered form is accepted by that same form or one with the same builder."""
    rng = random.Random(SEED)
    by_op: dict = {}
    for row in ptx_isa.instructions():
        by_op.setdefault(row.form.opcode, []).append(row)
    registered = {f.opcode for f, _ in isa.registered()}
    checked = 0
    for op in sorted(registered):
        for row in by_op.get(op, []):
            for mods in _sample(row.form, 40, rng):
                hit = isa.match(op, mods)
                if hit is None:
                    continue
                f, b, _ = hit
                # an accepted legal combination must be an instance of the registered form that accepted it
                assert f.match(mods) is not None
                checked += 1
    assert checked > 1000
    for form, builder in isa.registered():
        for mods in _sample(form, 30, rng):
            hit = isa.match(form.opcode, mods)
            assert hit is not None, f"{form.text}: its own instance {'.'.join(mods)} is not accepted"
            assert hit[1] is builder, (f"{'.'.join((form.opcode,) + mods)}: accepted by {hit[0].text}, which has "
                                       f"another builder than {form.text} (overlapping forms)")


def test_mutated_forms_are_refused():
    """Drop a mandatory slot, add a foreign or duplicated modifier, or swap two type modifiers: refused (or, when the
    mutation happens to spell another implemented form, accepted by a form whose own instance it is)."""
    rng = random.Random(SEED + 1)
    foreign = ["bogus", "rna", "satfinite", "relu", "ftz", "sat", "f32x2", "f16", "bf16", "b128", "v8", "cc",
               "shared::cluster", "NaN", "L2::256B"]
    n = 0
    for form, builder in isa.registered():
        for mods in _sample(form, 8, rng):
            variants = []
            mand = [i for i, s in enumerate(form.slots) if not s.optional]
            if mand:
                i = rng.choice(mand)
                val = form.match(mods)
                key = list(val)[i]
                drop = list(mods)
                for comp in val[key].split("."):
                    drop.remove(comp)
                variants.append(tuple(drop))
            variants.append(tuple(mods) + (rng.choice(foreign),))
            if mods:
                variants.append(tuple(mods) + (rng.choice(mods),))
            tys = [k for k, x in enumerate(mods) if x in TYPE_NAMES]
            if len(tys) >= 2 and mods[tys[0]] != mods[tys[1]]:
                sw = list(mods)
                sw[tys[0]], sw[tys[1]] = sw[tys[1]], sw[tys[0]]
                variants.append(tuple(sw))
            for v in variants:
                hit = isa.match(form.opcode, v)
                if hit is not None:
                    f2, b2, _ = hit
                    assert f2.match(v) is not None and b2 is not None
                    assert set(v) <= {c for s in f2.slots for a in s.alts for c in a.split(".")}, (form.text, v)
                n += 1
    assert n > 500


def _min3_ptx(kernel: str, consts: tuple) -> str:
    """A kernel computing a three-input min.f32 of three constants (PTX ISA 9.7.3.11, sm_100+) into out[0]."""
    movs = " ".join(f"mov.f32 %f{i + 1}, {c};" for i, c in enumerate(consts))
    return (f".version 8.8\n.target sm_100a\n.address_size 64\n.visible .entry {kernel}(.param .u64 out) {{\n"
            f"  .reg .f32 %f<4>; .reg .b64 %rd<2>;\n  {movs}\n  min.f32 %f0, %f1, %f2, %f3;\n"
            "  ld.param.u64 %rd0, [out];\n  st.global.f32 [%rd0], %f0;\n  ret;\n}\n")


def test_three_source_min_is_refused_when_it_runs():
    """A legal form told apart only by its operands (PTX ISA 9.7.3.11 three-input min, sm_100+)."""
    dev = ptxlab.open_device("emu")
    mod = ptxlab.compile(_min3_ptx("k", ("0f3F800000", "0f40000000", "0f40400000")), arch="sm_100a")
    out = dev.empty(4)
    with pytest.raises(ptxlab.errors.EmuError, match="three-input min"):
        dev.launch(mod, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[out])


def test_refusal_names_the_instruction_and_line():
    """A legal, unimplemented instruction (ex2.approx.f16, PTX ISA 9.7.4.10) fails when it executes, with
    'not implemented: <name>' and its PTX line; a kernel that never executes it runs."""
    ptx = """
.version 8.8
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 flag) {
  .reg .b16 %h<2>; .reg .b32 %r<2>; .reg .b64 %rd<2>; .reg .pred %p<2>;
  ld.param.u32 %r0, [flag];
  ld.param.u64 %rd0, [out];
  setp.eq.u32 %p0, %r0, 0;
  @%p0 bra DONE;
  mov.b16 %h0, 0x3C00;
  ex2.approx.f16 %h1, %h0;
  st.global.b16 [%rd0], %h1;
DONE:
  ret;
}
"""
    mod = ptxlab.compile(ptx, arch="sm_90a")
    dev = ptxlab.open_device("emu")
    out = dev.empty(4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[out, np.uint32(0)])   # path not taken: runs
    assert dev.to_host(out, np.uint16)[0] == 0xFFFF
    with pytest.raises(ptxlab.errors.EmuError) as ei:
        dev.launch(mod, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[out, np.uint32(1)])
    msg = str(ei.value)
    line = next(i for i, t in enumerate(ptx.splitlines(), 1) if t.strip().startswith("ex2"))
    assert "not implemented: ex2.approx.f16" in msg and f"line {line}" in msg, msg


def test_formerly_withdrawn_forms_run():
    """Forms withdrawn on 2026-11-27 because the H100 disagreed with the window model run again with the rules derived
    from the H100's outputs: FP8 wgmma (hw/wgmma_fp8_arith.py), FP8 mma.sync and m8n8k4 f32 (hw/warp_mma_sm90.py);
    nothing is withdrawn now.  m8n8k4 .f16.f16.f16.f32 is not legal (ptxas refuses it) and stays refused."""
    for name in ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", "mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32",
                 "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f16", "mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f16",
                 "wgmma.mma_async.sync.aligned.m64n16k32.f32.e5m2.e4m3",
                 "wgmma.mma_async.sync.aligned.m64n32k32.f16.e4m3.e4m3"):
        op, *mods = name.split(".")
        assert _accepted(name), name
        assert isa.withdrawn_reason(op, tuple(mods)) is None
    assert not _accepted("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f32")
    assert not [f for f, _ in isa.withdrawn() if f.opcode in ("mma", "wgmma", "wmma")]


def test_refusal_holds_while_evidence_is_recorded(tmp_path, monkeypatch):
    """With PTXLAB_ISA_EVIDENCE set, the evidence recorder wrapped every run function, a refused one too, and the
    native engine then no longer saw the refusal: it ran a three-input min as a two-input one (found 2026-11-27).
    A refused instruction must raise, and be recorded nowhere, whatever records evidence; what ran is recorded (the
    native engine had stopped calling the recorder)."""
    monkeypatch.setenv("PTXLAB_ISA_EVIDENCE", str(tmp_path))
    dev = ptxlab.open_device("emu")
    mod = ptxlab.compile(_min3_ptx("k3", ("0f40A00000", "0f40C00000", "0f3F000000")), arch="sm_100a")
    out = dev.empty(4)
    dev.memset(out, 0xFF)
    with pytest.raises(ptxlab.errors.EmuError, match="three-input min"):
        dev.launch(mod, "k3", grid=(1, 1, 1), block=(32, 1, 1), args=[out])
    assert dev.to_host(out, np.uint32)[0] == 0xFFFFFFFF
    recorded = "".join(p.read_text() for p in tmp_path.glob("ev.*.tsv"))
    assert "min.f32\t" not in recorded and "mov.f32\t" in recorded, recorded      # what ran is recorded
