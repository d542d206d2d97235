"""Every modifier value of the IEEE floating-point arithmetic forms (PTX ISA 9.7.3.3-15: add, sub, mul, fma, mad, div,
rcp, sqrt with every rounding mode, .ftz, .sat; abs, neg, min, max with .ftz / .NaN; 9.7.4: the f16 / bf16 / x2 forms
with .ftz, .sat, .relu, .NaN) runs at least once (the slot-coverage rule of tools/isa_coverage.py) in one generated
raw-PTX kernel, bit for bit against the exact references of tests/emu/ops/test_emu_float.py (exact rationals rounded by
constructing the encoding, IEEE special cases written out).  Fresh random operands each run (seed printed) with the
edge values of each format.  The approximate forms (.approx, div.full) are tested by test_emu_float.py."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

import ptxlab

sys.path.insert(0, str(Path(__file__).resolve().parent))
import form_sweep  # noqa: E402
import test_emu_float as F  # noqa: E402

SEED = int.from_bytes(os.urandom(4), "little")
print(f"test_emu_float_forms: seed {SEED}")
N = 128
OPS = ("add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "abs", "neg", "min", "max")
TYPES = ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2")
ROW = {"f32": 0, "f64": 3, "f16": 6, "f16x2": 6, "bf16": 9, "bf16x2": 9}     # first of the 3 operand rows
WIDTH = {"f32": 32, "f64": 64, "f16": 16, "bf16": 16, "f16x2": 32, "bf16x2": 32}
REG = {16: "%h", 32: "%r", 64: "%rd"}
ONE = {"f32": 0x3F800000, "f64": 0x3FF0000000000000}


def ok(mods):
    return mods[-1] in TYPES and "approx" not in mods and "full" not in mods and "xorsign" not in mods \
        and (len(mods) < 2 or mods[-2] not in ("f32", "f16", "bf16"))        # not the mixed-precision forms


def ref_lane(op, mods, a, b, c, fmt):
    mode = next((m for m in mods if m in ("rn", "rz", "rm", "rp")), "rn")
    ftz, sat, relu, nan = "ftz" in mods, "sat" in mods, "relu" in mods, "NaN" in mods
    if op in ("add", "sub"):
        r = F.ref_add(a, b, fmt, mode, ftz, sub=op == "sub")
    elif op == "mul":
        r = F.ref_mul(a, b, fmt, mode, ftz)
    elif op in ("fma", "mad"):
        r = F.ref_fma(a, b, c, fmt, mode, ftz)
    elif op == "div":
        r = F.ref_div(a, b, fmt, mode, ftz)
    elif op == "rcp":
        r = F.ref_div(ONE[fmt], a, fmt, mode, ftz)
    elif op == "sqrt":
        r = F.ref_sqrt(a, fmt, mode, ftz)
    elif op in ("abs", "neg"):
        r = F.ref_negabs(F.ftz_in(a, fmt) if ftz else a, fmt, op == "neg")
    else:
        r = F.ref_minmax(a, b, fmt, op == "max", nan, ftz)
    if sat:
        r = F.ref_sat(r, fmt)
    if relu:
        r = F.ref_relu(r, fmt)
    return r


def ref(op, mods, a, b, c):
    ty = mods[-1]
    if ty.endswith("x2"):
        fmt = ty[:-2]
        return sum(ref_lane(op, mods, (a >> s) & 0xFFFF, (b >> s) & 0xFFFF, (c >> s) & 0xFFFF, fmt) << s
                   for s in (0, 16))
    m = (1 << WIDTH[ty]) - 1
    return ref_lane(op, mods, a & m, b & m, c & m, ty)


def _forms():
    """The IEEE arithmetic forms of OPS (type slot f32 / f64 / half types; not .approx / .full / .xorsign / mixed)."""
    inst, miss = [], []
    for op in OPS:
        for f in form_sweep.forms_of(op):
            if all(v in TYPES for v in f.values()[-1][1]) and not any(
                    x in f.text for x in ("approx", "full", "xorsign", "atype", "abtype")):
                i, m = form_sweep.cover(f, ok)
                inst += [(op, mods, t) for mods, t in i]
                miss += [(f.text, k, v) for k, v in m]
    return inst, miss


INSTANCES, MISSING = _forms()


def build(instances):
    lines, n = [], {"%h": 0, "%r": 10, "%rd": 10}

    def reg(w):
        n[REG[w]] += 1
        return f"{REG[w]}{n[REG[w]]}"
    for k, (op, mods, _) in enumerate(instances):
        ty = mods[-1]
        w = WIDTH[ty]
        srcs = []
        nsrc = 3 if op in ("fma", "mad") else (1 if op in ("rcp", "sqrt", "abs", "neg") else 2)
        for i in range(nsrc):
            r = reg(w)
            lines.append(f"  ld.global.b{w} {r}, [%rd2+{(ROW[ty] + i) * N * 8}];")
            srcs.append(r)
        d = reg(w)
        lines.append(f"  {'.'.join((op,) + mods)} {d}, {', '.join(srcs)};")
        lines.append(f"  cvt.u64.u{w} %rd9, {d};" if w < 64 else f"  mov.b64 %rd9, {d};")
        lines.append(f"  st.global.b64 [%rd3+{k * N * 8}], %rd9;")
    head = [".version 8.8", ".target sm_90a", ".address_size 64",
            ".visible .entry k(.param .u64 pin, .param .u64 pout)", "{",
            f"  .reg .b16 %h<{n['%h'] + 1}>; .reg .b32 %r<{n['%r'] + 1}>; .reg .b64 %rd<{n['%rd'] + 1}>;",
            "  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd4, [pout];",
            "  mov.u32 %r1, %tid.x; mul.wide.u32 %rd6, %r1, 8; add.s64 %rd2, %rd1, %rd6; add.s64 %rd3, %rd4, %rd6;"]
    return "\n".join(head + lines + ["  ret;", "}"]) + "\n"


def test_instances_cover_every_value() -> None:
    assert len(INSTANCES) > 60 and not MISSING, MISSING


def test_every_float_form_runs_right() -> None:
    rng = np.random.default_rng(SEED)
    rows = []
    for fmt in ("f32", "f64"):
        rows += [F.gen_inputs(rng, fmt, N).astype(np.uint64) for _ in range(3)]
    for fmt in ("f16", "bf16"):                    # two independent lanes per word
        rows += [F.gen_inputs(rng, fmt, N).astype(np.uint64) | (F.gen_inputs(rng, fmt, N).astype(np.uint64) << 16)
                 for _ in range(3)]
    table = np.stack(rows).astype(np.uint64)
    dev = ptxlab.open_device("emu")
    out = dev.empty(len(INSTANCES) * N * 8)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(build(INSTANCES), arch="sm_90a"), "k", grid=(1, 1, 1), block=(N, 1, 1),
               args=[dev.to_device(table), out])
    got = dev.to_host(out, np.uint64).reshape(len(INSTANCES), N)
    bad = []
    for k, (op, mods, _) in enumerate(INSTANCES):
        r0 = ROW[mods[-1]]
        for t in range(N):
            a, b, c = (int(table[r0 + i, t]) for i in range(3))
            want = ref(op, mods, a, b, c)
            if int(got[k, t]) != want:
                bad.append(f"{op}.{'.'.join(mods)} a={a:#x} b={b:#x} c={c:#x}: got {int(got[k, t]):#x} want {want:#x}")
    assert not bad, f"{len(bad)} mismatches (seed {SEED}):\n" + "\n".join(bad[:15])
