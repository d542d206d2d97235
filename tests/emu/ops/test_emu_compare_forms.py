"""Every modifier value of every implemented set / setp / selp / slct form (PTX ISA 9.7.6.1-4, 9.7.7.1-2) runs at
least once (the slot-coverage rule of tools/isa_coverage.py) in a generated raw-PTX kernel, checked against a host
model written here from the ISA text:
  comparisons  signed / unsigned / bit-size integers; floats ordered (false on NaN) and unordered (.equ ... .geu,
               true on NaN), .num / .nan; .ftz flushes subnormal f32 / f16 inputs to zero of the same sign;
  set          d = true ? (0xFFFFFFFF for .u32/.s32, 1.0 for .f32; per 16-bit half for .f16x2/.bf16x2 sources:
               0xFFFF, or 1.0 for a .f16x2 / .bf16x2 destination; 0xFFFF for a .u16/.s16 destination, 1.0 for
               a scalar .f16 / .bf16 destination) : 0;
  setp         p = cmp BoolOp c, q = !cmp BoolOp c (the lower halves into p, the upper into q for .f16x2 / .bf16x2);
  selp         d = c ? a : b;  slct  d = (c >= 0) ? a : b (c .s32, or .f32 with .ftz flushing a subnormal c).
Operands: fresh random values each run (seed printed) with NaN, infinities, signed zeros, subnormals and equal pairs;
the instances (tests/emu/ops/form_sweep.py) are deterministic."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ptxlab

sys.path.insert(0, str(Path(__file__).resolve().parent))
import form_sweep  # noqa: E402

SEED = int.from_bytes(os.urandom(4), "little")
print(f"test_emu_compare_forms: seed {SEED}")
N = 64                                       # threads = data lanes
BITS = {"b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16, "b32": 32, "u32": 32, "s32": 32, "f32": 32,
        "f16x2": 32, "bf16x2": 32, "b64": 64, "u64": 64, "s64": 64, "f64": 64}
KINDS = ["i16", "f16", "bf16", "f16x2", "bf16x2", "i32", "f32", "i64", "f64"]
FLOATS = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
UNORD = {"equ": "eq", "neu": "ne", "ltu": "lt", "leu": "le", "gtu": "gt", "geu": "ge"}
CMPS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu",
        "num", "nan")


def kind_of(ty: str) -> str:
    return ty if ty in ("f16", "bf16", "f16x2", "bf16x2", "f32", "f64") else f"i{BITS[ty]}"


# ---------------------------------------------------------------------------------------------- data
def _floats(rng, dt, n):
    v = (rng.standard_normal(n) * np.exp2(rng.integers(-6, 7, n))).astype(dt)
    fi = ml_dtypes.finfo(dt)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, float(fi.smallest_subnormal),
                        -3 * float(fi.smallest_subnormal), float(fi.max), 1.0, -1.0], np.float64).astype(dt)
    pick = rng.integers(0, 4, n) == 0
    v[pick] = special[rng.integers(0, special.size, pick.sum())]
    return v


def data(rng):
    """(A, B) per kind: uint64 bit patterns (low bits used), B equal to A, -A or random per lane."""
    out = {}
    for k in KINDS:
        if k.startswith("i"):
            w = int(k[1:])
            a = rng.integers(0, 2**63, N, dtype=np.uint64) >> np.uint64(64 - w) if w < 64 else \
                rng.integers(0, 2**63, N, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, N).astype(np.uint64)
            b = rng.integers(0, 2**63, N, dtype=np.uint64) >> np.uint64(64 - w) if w < 64 else \
                rng.integers(0, 2**63, N, dtype=np.uint64) * np.uint64(2)
            small = rng.integers(0, 3, N) == 0                      # near values, so lt/le/eq all happen
            b = np.where(small, a ^ rng.integers(0, 2, N).astype(np.uint64), b)
            out[k] = (a, b)
            continue
        base = k.replace("x2", "")
        dt = FLOATS[base]
        lanes = 2 if k.endswith("x2") else 1
        av = [_floats(rng, dt, N) for _ in range(lanes)]
        bv = []
        for a in av:
            r = _floats(rng, dt, N)
            sel = rng.integers(0, 4, N)
            bv.append(np.where(sel == 0, a, np.where(sel == 1, -a, r)).astype(dt))
        ub = np.uint16 if base in ("f16", "bf16") else (np.uint32 if base == "f32" else np.uint64)
        pack = lambda vs: sum(v.view(ub).astype(np.uint64) << np.uint64(16 * i) for i, v in enumerate(vs))  # noqa
        out[k] = (pack(av), pack(bv))
    return out


# ---------------------------------------------------------------------------------------------- reference
def _value(bits: int, ty: str, ftz: bool):
    """A comparable Python value (float, int, or None for NaN)."""
    if ty in ("f16", "bf16", "f32", "f64"):
        ub = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}[ty]
        x = float(np.array(bits, ub).view(FLOATS[ty]))
        if x != x:
            return None
        if ftz and ty in ("f32", "f16") and 0 < abs(x) < float(ml_dtypes.finfo(FLOATS[ty]).tiny):
            x = 0.0
        return x
    w = BITS[ty]
    bits &= (1 << w) - 1
    if ty[0] == "s" and bits >> (w - 1):
        bits -= 1 << w
    return bits


def compare(op: str, a, b) -> bool:
    if op == "num":
        return a is not None and b is not None
    if op == "nan":
        return a is None or b is None
    if op in UNORD:
        if a is None or b is None:
            return True
        op = UNORD[op]
    elif a is None or b is None:
        return False
    op = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(op, op)
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]


def boolop(op: str, x: bool, c: bool) -> bool:
    return {"": x, "and": x and c, "or": x or c, "xor": x != c}[op]


def _lanes(ty):
    return (2, ty[:-2]) if ty.endswith("x2") else (1, ty)


def ref(op, mods, a, b, c):
    """Expected result words for one lane: set -> [d], setp -> [p, q], selp / slct -> [d]."""
    if op == "selp":
        return [(a if c else b) & ((1 << BITS[mods[0]]) - 1)]
    if op == "slct":
        ty = mods[-1]
        cv = _value(c, ty, "ftz" in mods)
        w = BITS[mods[-2]]
        ge = cv is not None and (cv > 0 or cv == 0)               # -0.0 >= 0: true; NaN: false
        return [(a if ge else b) & ((1 << w) - 1)]
    cmp_ = next(m for m in mods if m in CMPS)
    bop = next((m for m in mods if m in ("and", "or", "xor")), "")
    ftz = "ftz" in mods
    stype = mods[-1]
    nl, base = _lanes(stype)
    res = []
    for lane in range(nl):
        sh = 16 * lane
        wa, wb = (a >> sh, b >> sh) if nl == 2 else (a, b)
        res.append(compare(cmp_, _value(wa & 0xFFFF if nl == 2 else wa, base, ftz),
                           _value(wb & 0xFFFF if nl == 2 else wb, base, ftz)))
    if op == "setp":
        if nl == 2:
            return [int(boolop(bop, res[0], c)), int(boolop(bop, res[1], c))]
        return [int(boolop(bop, res[0], c)), int(boolop(bop, not res[0], c))]
    dtype = mods[-2]
    if nl == 2:
        one = {"f16x2": 0x3C00, "bf16x2": 0x3F80}.get(dtype, 0xFFFF)
        return [sum(one << (16 * i) for i in range(2) if boolop(bop, res[i], c))]
    true = {"f32": 0x3F800000, "u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF, "u16": 0xFFFF, "s16": 0xFFFF,
            "f16": 0x3C00, "bf16": 0x3F80}[dtype]
    return [true if boolop(bop, res[0], c) else 0]


# ---------------------------------------------------------------------------------------------- kernel
REG = {16: "%h", 32: "%r", 64: "%rd"}


def build(instances):
    lines, outs = [], []
    nreg = {"%h": 0, "%r": 10, "%rd": 10}

    def reg(w):
        nreg[REG[w]] += 1
        return f"{REG[w]}{nreg[REG[w]]}"

    def load(kind_, which, w):
        r = reg(w)
        row = 2 * KINDS.index(kind_) + which
        lines.append(f"  ld.global.b{w} {r}, [%rd2+{row * N * 8}];")
        return r
    for op, mods, _ in instances:
        name = ".".join((op,) + mods)
        stype = mods[-1]
        w = BITS[stype]
        if op in ("selp", "slct"):
            dty = mods[0] if op == "selp" else mods[-2]
            dw = BITS[dty]
            k = kind_of(dty)
            a, b = load(k, 0, dw), load(k, 1, dw)
            if op == "selp":
                c = "%p9"
                src = "c"
            else:
                c = load(kind_of(stype), 0, w)
                src = "a-of-" + kind_of(stype)
            d = reg(dw)
            lines.append(f"  {name} {d}, {a}, {b}, {c};")
            lines.append(f"  cvt.u64.u{dw} %rd9, {d};" if dw < 64 else f"  mov.b64 %rd9, {d};")
            lines.append(f"  st.global.b64 [%rd3+{len(outs) * N * 8}], %rd9;")
            outs.append((op, mods, k, src, 0))
            continue
        k = kind_of(stype)
        a, b = load(k, 0, w), load(k, 1, w)
        bop = any(m in ("and", "or", "xor") for m in mods)
        cpart = ", %p9" if bop else ""
        if op == "setp":
            pq = ("%p1",) if stype in ("f16", "bf16") else ("%p1", "%p2")    # scalar halves: p only (9.7.7.2)
            lines.append(f"  {name} {'|'.join(pq)}, {a}, {b}{cpart};")
            for i, p in enumerate(pq):
                lines.append(f"  selp.u64 %rd9, 1, 0, {p};")
                lines.append(f"  st.global.b64 [%rd3+{len(outs) * N * 8}], %rd9;")
                outs.append((op, mods, k, "c", i))
            continue
        dw = 16 if mods[-2] in ("u16", "s16", "f16", "bf16") else 32
        d = reg(dw)
        lines.append(f"  {name} {d}, {a}, {b}{cpart};")
        lines.append(f"  cvt.u64.u{dw} %rd9, {d};")
        lines.append(f"  st.global.b64 [%rd3+{len(outs) * N * 8}], %rd9;")
        outs.append((op, mods, k, "c", 0))
    head = [".version 8.8", ".target sm_90a", ".address_size 64",
            ".visible .entry k(.param .u64 pin, .param .u64 pout, .param .u64 pc)", "{",
            f"  .reg .b16 %h<{nreg['%h'] + 1}>; .reg .b32 %r<{nreg['%r'] + 1}>; .reg .b64 %rd<{nreg['%rd'] + 1}>;",
            "  .reg .pred %p<10>;",
            "  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd4, [pout]; ld.param.u64 %rd5, [pc];",
            "  mov.u32 %r1, %tid.x; mul.wide.u32 %rd6, %r1, 8;",
            "  add.s64 %rd2, %rd1, %rd6; add.s64 %rd3, %rd4, %rd6; add.s64 %rd7, %rd5, %rd6;",
            "  ld.global.u64 %rd8, [%rd7]; setp.ne.u64 %p9, %rd8, 0;"]
    return "\n".join(head + lines + ["  ret;", "}"]) + "\n", outs


INSTANCES, MISSING = form_sweep.all_instances(["set", "setp", "selp", "slct"], lambda m: True)


def test_instances_cover_every_value() -> None:
    assert not MISSING, MISSING


def test_every_compare_form_runs_right(rng) -> None:
    ptx, outs = build(INSTANCES)
    rng = np.random.default_rng(SEED)
    d = data(rng)
    table = np.zeros((2 * len(KINDS), N), np.uint64)
    for i, k in enumerate(KINDS):
        table[2 * i], table[2 * i + 1] = d[k]
    cbits = rng.integers(0, 2, N).astype(np.uint64)
    dev = ptxlab.open_device("emu")
    out = dev.empty(len(outs) * N * 8)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(ptx, arch="sm_90a"), "k", grid=(1, 1, 1), block=(N, 1, 1),
               args=[dev.to_device(table), out, dev.to_device(cbits)])
    got = dev.to_host(out, np.uint64).reshape(len(outs), N)
    bad = []
    for j, (op, mods, k, src, idx) in enumerate(outs):
        for t in range(N):
            a, b = int(d[k][0][t]), int(d[k][1][t])
            if src == "c":
                c = bool(cbits[t])
            else:                                   # slct: c is the first operand of its own kind
                c = int(d[src[5:]][0][t])
            want = ref(op, mods, a, b, c)[idx]
            if int(got[j, t]) != want:
                bad.append(f"{'.'.join((op,) + mods)} lane {t}: a={a:#x} b={b:#x} c={c} got {int(got[j, t]):#x} "
                           f"want {want:#x}")
    assert not bad, f"{len(bad)} mismatches (seed {SEED}):\n" + "\n".join(bad[:12])
