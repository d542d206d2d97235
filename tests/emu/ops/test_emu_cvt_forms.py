"""Every modifier value of the integer and widening cvt forms (PTX ISA 9.7.9.21: integer <-> integer, float ->
integer, integer -> float, f16/bf16 -> f32/f64, f32 -> f64) runs at least once (the slot-coverage rule of
tools/isa_coverage.py) in one generated raw-PTX kernel, against the references of tests/emu/ops/test_emu_cvt.py
(exact Fractions for float -> integer, correctly rounded integer -> float, H100-measured NaN results) plus the ISA's
integer rules written here: narrowing integer conversions chop, .sat clamps to the destination range; float ->
integer always saturates; .sat on a float destination clamps to [0.0, 1.0] (NaN -> +0); .ftz flushes .f32 subnormal
inputs (an f16 / bf16 subnormal is a normal f32, not flushed).  NaN -> 8/16-bit integers follows the H100's rule for
32-bit destinations, and NaN inputs of bf16 -> f64 are not checked (no hardware evidence;
ptx_docs/isa_coverage_notes.md).
Fresh random operands each run (seed printed)."""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np

import ptxlab

sys.path.insert(0, str(Path(__file__).resolve().parent))
import form_sweep  # noqa: E402
import test_emu_cvt as C  # noqa: E402

SEED = int.from_bytes(os.urandom(4), "little")
print(f"test_emu_cvt_forms: seed {SEED}")
N = 128
INT = {"u8": 8, "u16": 16, "u32": 32, "u64": 64, "s8": 8, "s16": 16, "s32": 32, "s64": 64}
FW = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
FORMS = ("cvt.ityp.ityp", "cvt.sat.satii", "cvt.irnd{.ftz}{.sat}.ityp.f32", "cvt.irnd{.sat}.ityp.nf32",
         "cvt.frnd{.ftz}{.sat}.f32.ityp", "cvt.frnd{.sat}.nf32.ityp", "cvt{.ftz}{.sat}.f32.hf",
         "cvt{.ftz}{.sat}.f64.f32", "cvt{.sat}.f64.hf")
REG = {8: "%h", 16: "%h", 32: "%r", 64: "%rd"}          # 8-bit values live in 16-bit registers


def _width(t):
    return INT.get(t) or FW[t]


def _ival(bits, t):
    w = INT[t]
    bits &= (1 << w) - 1
    return bits - (1 << w) if t[0] == "s" and bits >> (w - 1) else bits


def _fval(bits, t):
    return {"f16": C.f16v, "bf16": C.bf16v, "f32": C.f32v, "f64": C.f64v}[t](bits)


def _sat01(v):
    return 0.0 if (isinstance(v, float) and math.isnan(v)) or v <= 0 else min(v, 1.0)


def ref(mods, src_bits):
    dst, srct = mods[-2], mods[-1]
    sat, ftz = "sat" in mods, "ftz" in mods
    rnd = next((m for m in mods if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")), None)
    if srct in INT and dst in INT:                                   # integer -> integer
        v = _ival(src_bits, srct)
        w = INT[dst]
        if sat:
            lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dst[0] == "s" else (0, (1 << w) - 1)
            v = max(lo, min(hi, v))
        return v & ((1 << w) - 1)
    if dst in INT:                                                   # float -> integer (always saturating)
        x = _fval(src_bits, srct)
        return C.to_int(x, rnd, INT[dst], dst[0] == "s", srct == "f64", ftz and srct == "f32")
    if srct in INT:                                                  # integer -> float
        v = _ival(src_bits, srct)
        if sat:
            v = min(max(v, 0), 1)
        if dst == "f32":
            return C.to_f32(v, rnd)
        if dst == "f64":
            return C.to_f64(v, rnd)
        return (C.T_F16 if dst == "f16" else C.T_BF16).round(v, rnd)
    x = _fval(src_bits, srct)                                        # widening float -> float (exact)
    if ftz and srct == "f32" and 0 < abs(x) < C.TINY32:
        x = math.copysign(0.0, x)
    if math.isnan(x) and not sat:
        if dst == "f32":
            return C.canon32(x) if srct == "f16" else (src_bits & 0xFFFF) << 16
        if srct == "bf16":
            return None
        return C.nan_keep(src_bits, srct, "f64")
    if sat:
        x = _sat01(x)
    return C.f32bits(x) if dst == "f32" else C.f64bits(x)


def _instances():
    inst, miss = [], []
    for f in form_sweep.forms_of("cvt"):
        if f.text in FORMS:
            i, m = form_sweep.cover(f, lambda mods: True)
            inst += [mods for mods, _ in i]
            miss += [(f.text, k, v) for k, v in m]
    return inst, miss


INSTANCES, MISSING = _instances()


def build(instances):
    lines, n = [], {"%h": 0, "%r": 10, "%rd": 10}

    def reg(w):
        n[REG[w]] += 1
        return f"{REG[w]}{n[REG[w]]}"
    for k, mods in enumerate(instances):
        dst, srct = mods[-2], mods[-1]
        sw, dw = _width(srct), _width(dst)
        src = reg(sw)
        ld = 16 if sw == 8 else sw
        row = {"f32": 0, "f64": 1, "f16": 2, "bf16": 2}.get(srct, 3)   # float rows, integer row
        lines.append(f"  ld.global.b{ld} {src}, [%rd2+{row * N * 8}];")
        d = reg(dw)
        if sw == 8 or dw == 8:                                      # 8-bit operands: through .b8 registers
            s8 = "%b1" if sw == 8 else src
            d8 = "%b2" if dw == 8 else d
            if sw == 8:
                lines.append(f"  cvt.u8.u16 %b1, {src};")
            lines.append(f"  {'.'.join(('cvt',) + mods)} {d8}, {s8};")
            if dw == 8:
                lines.append(f"  cvt.u16.u8 {d}, %b2;")
        else:
            lines.append(f"  {'.'.join(('cvt',) + mods)} {d}, {src};")
        out = "%rd9"
        lines.append(f"  cvt.u64.u{16 if dw == 8 else dw} %rd9, {d};" if dw < 64 else f"  mov.b64 %rd9, {d};")
        lines.append(f"  st.global.b64 [%rd3+{k * N * 8}], {out};")
    head = [".version 8.8", ".target sm_90a", ".address_size 64",
            ".visible .entry k(.param .u64 pin, .param .u64 pout)", "{",
            f"  .reg .b8 %b<3>; .reg .b16 %h<{n['%h'] + 1}>; .reg .b32 %r<{n['%r'] + 1}>; "
            f".reg .b64 %rd<{n['%rd'] + 1}>;",
            "  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd4, [pout];",
            "  mov.u32 %r1, %tid.x; mul.wide.u32 %rd6, %r1, 8; add.s64 %rd2, %rd1, %rd6; add.s64 %rd3, %rd4, %rd6;"]
    return "\n".join(head + lines + ["  ret;", "}"]) + "\n"


def test_instances_cover_every_value() -> None:
    assert len(INSTANCES) > 40 and not MISSING, MISSING


def test_every_integer_and_widening_cvt_form_runs_right() -> None:
    rng = np.random.default_rng(SEED)
    f32 = C.mixed_f32(rng, N).astype(np.uint64)
    f64 = C.mixed_f64(rng, N).view(np.uint64)
    h = rng.integers(0, 2**16, N, dtype=np.uint64)
    h[:8] = [0x0001, 0x8001, 0x7C00, 0xFC00, 0x7E00, 0x3C00, 0x0000, 0x8000]   # subnormal, inf, NaN, 1, zeros
    ints = C.mixed_i64(rng, N)
    small = rng.integers(0, 4, N) == 0
    ints = np.where(small, rng.integers(0, 300, N).astype(np.uint64) - np.uint64(150), ints)
    table = np.stack([f32, f64, h, ints]).astype(np.uint64)
    dev = ptxlab.open_device("emu")
    out = dev.empty(len(INSTANCES) * N * 8)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(build(INSTANCES), arch="sm_90a"), "k", grid=(1, 1, 1), block=(N, 1, 1),
               args=[dev.to_device(table), out])
    got = dev.to_host(out, np.uint64).reshape(len(INSTANCES), N)
    bad = []
    for k, mods in enumerate(INSTANCES):
        srct = mods[-1]
        row = {"f32": 0, "f64": 1, "f16": 2, "bf16": 2}.get(srct, 3)
        for t in range(N):
            want = ref(mods, int(table[row, t]))
            if want is not None and int(got[k, t]) != want:
                bad.append(f"cvt.{'.'.join(mods)} in={int(table[row, t]):#x}: got {int(got[k, t]):#x} want {want:#x}")
    assert not bad, f"{len(bad)} mismatches (seed {SEED}):\n" + "\n".join(bad[:15])
