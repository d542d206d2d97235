"""Every modifier value of the implemented integer arithmetic forms (PTX ISA 9.7.1: add, sub, mul, mad, sad, div,
rem, abs, neg, min, max, dp2a, dp4a; 9.7.2 extended precision: add.cc, addc, sub.cc, subc, mad.cc, madc; 9.7.8 shl,
shr, cnot) runs at least once (the slot-coverage rule of tools/isa_coverage.py) in one generated raw-PTX kernel,
against a host model on Python integers written here from the ISA text (wrap-around, .hi / .lo / .wide halves,
.sat clamping, signed vs unsigned operands, 16-bit SIMD lanes of .u16x2 / .s16x2, shift counts clamped to the width,
the carry / borrow chain of CC.CF).  Fresh random operands each run (seed printed), with small and extreme values."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

import ptxlab

sys.path.insert(0, str(Path(__file__).resolve().parent))
import form_sweep  # noqa: E402

SEED = int.from_bytes(os.urandom(4), "little")
print(f"test_emu_int_forms: seed {SEED}")
N = 64
OPS = ["add", "sub", "mul", "mad", "sad", "div", "rem", "abs", "neg", "min", "max", "dp2a", "dp4a", "addc", "subc",
       "madc", "shl", "shr", "cnot"]
W = {"u16": 16, "s16": 16, "b16": 16, "u32": 32, "s32": 32, "b32": 32, "u64": 64, "s64": 64, "b64": 64,
     "u16x2": 32, "s16x2": 32}
REG = {16: "%h", 32: "%r", 64: "%rd"}


def s(v, w):
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def lanes(v, ty):
    """Values of the 16-bit lanes of a SIMD operand (or the one value)."""
    if ty.endswith("x2"):
        return [(v >> (16 * i)) & 0xFFFF for i in range(2)]
    return [v & ((1 << W[ty]) - 1)]


def val(v, ty, w=None):
    w = w or (16 if ty.endswith("x2") else W[ty])
    return s(v, w) if ty[0] == "s" else v & ((1 << w) - 1)


def ref(op, mods, a, b, c):
    """The result of one instance (not carry chains) as an unsigned integer of the destination width."""
    ty = mods[-1]
    w = W[ty]
    m = (1 << w) - 1
    if op == "add" and "sat" in mods:
        return max(-2**31, min(2**31 - 1, s(a, 32) + s(b, 32))) & m
    if op == "sub" and "sat" in mods:
        return max(-2**31, min(2**31 - 1, s(a, 32) - s(b, 32))) & m
    if op in ("add", "sub", "min", "max") and ty.endswith("x2"):
        out = 0
        for i, (x, y) in enumerate(zip(lanes(a, ty), lanes(b, ty))):
            x, y = val(x, ty), val(y, ty)
            r = {"add": x + y, "sub": x - y, "min": min(x, y), "max": max(x, y)}[op]
            if "relu" in mods:
                r = max(r, 0)
            out |= (r & 0xFFFF) << (16 * i)
        return out
    x, y, z = val(a, ty), val(b, ty), val(c, ty)
    if op == "add":
        return (x + y) & m
    if op == "sub":
        return (x - y) & m
    if op in ("min", "max"):
        r = min(x, y) if op == "min" else max(x, y)
        return (max(r, 0) if "relu" in mods else r) & m
    if op in ("mul", "mad"):
        p = x * y
        if "wide" in mods:
            return (p + (z if op == "mad" else 0)) & ((1 << (2 * w)) - 1) if op == "mul" else \
                (p + val(c, ty, 2 * w)) & ((1 << (2 * w)) - 1)
        if "hi" in mods:
            r = (p >> w) + (z if op == "mad" else 0)
            if "sat" in mods:
                return max(-2**31, min(2**31 - 1, (p >> w) + z)) & m
            return r & m
        return (p + (z if op == "mad" else 0)) & m
    if op == "sad":
        return (abs(x - y) + z) & m
    if op in ("div", "rem"):
        if y == 0:
            return None                                   # unspecified: not checked
        q = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
        return (q if op == "div" else x - q * y) & m
    if op == "abs":
        return abs(x) & m
    if op == "neg":
        return (-x) & m
    if op in ("shl", "shr"):
        n = b & 0xFFFFFFFF
        if op == "shl":
            return (x << min(n, w)) & m
        return (x >> min(n, w)) & m if ty[0] != "s" else (x >> min(n, w - 1 if x < 0 else w)) & m
    if op == "cnot":
        return int((a & m) == 0)
    if op in ("dp2a", "dp4a"):
        ta, tb = mods[-2], mods[-1]
        if op == "dp4a":
            pa = [val((a >> (8 * i)) & 0xFF, ta, 8) for i in range(4)]
            pb = [val((b >> (8 * i)) & 0xFF, tb, 8) for i in range(4)]
        else:
            pa = [val((a >> (16 * i)) & 0xFFFF, ta, 16) for i in range(2)]
            half = 2 if "hi" in mods else 0
            pb = [val((b >> (8 * (half + i))) & 0xFF, tb, 8) for i in range(2)]
        sgn = ta[0] == "s" or tb[0] == "s"
        return (sum(p * q for p, q in zip(pa, pb)) + (s(c, 32) if sgn else c & 0xFFFFFFFF)) & 0xFFFFFFFF
    raise AssertionError((op, mods))


def chain(kind, mods, ops_):
    """Carry chains: [(mods of step, a, b, c)] -> results of each step (CC.CF starts clear in each chain)."""
    ty = mods[-1]
    w = W[ty]
    m = (1 << w) - 1
    cf, out = 0, []
    for name, a, b, c in ops_:
        a, b, c = a & m, b & m, c & m
        if name.startswith(("add", "addc")):
            t = a + b + (cf if name.startswith("addc") else 0)
            r, cf_new = t & m, t >> w
        elif name.startswith(("sub", "subc")):
            t = a - b - (cf if name.startswith("subc") else 0)     # CF is the borrow
            r, cf_new = t & m, int(t < 0)
        else:                                                         # mad.cc / madc: lo or hi half of a*b, + c
            p = val(a, ty) * val(b, ty)
            half = (p >> w) & m if ".hi" in "." + name else p & m
            t = half + c + (cf if name.startswith("madc") else 0)
            r, cf_new = t & m, t >> w
        out.append(r)
        cf = cf_new if ".cc" in name or name.split(".")[0] in ("add", "sub", "mad") else cf
    return out


# ---------------------------------------------------------------------------------------------- kernel
def build(instances):
    lines, outs = [], []
    nreg = {"%h": 0, "%r": 10, "%rd": 10}
    nrow = [0]

    def reg(w):
        nreg[REG[w]] += 1
        return f"{REG[w]}{nreg[REG[w]]}"

    def load(which, w):
        r = reg(w)
        lines.append(f"  ld.global.b{w} {r}, [%rd2+{which * N * 8}];")
        return r

    def store(r, w):
        row = nrow[0]
        nrow[0] += 1
        if w < 64:
            lines.append(f"  cvt.u64.u{w} %rd9, {r};")
            r = "%rd9"
        lines.append(f"  st.global.b64 [%rd3+{row * N * 8}], {r};")
        return row

    k = 0
    for op, mods, _ in instances:
        name = ".".join((op,) + mods)
        ty = mods[-1]
        w = W[ty]
        if "cc" in mods or op in ("addc", "subc", "madc"):
            # a chain of three: a carry-out step, this instance, a carry-in step to read the carry it left
            base = {"add": "add", "addc": "add", "sub": "sub", "subc": "sub", "mad": "mad", "madc": "mad"}[op]
            hl = next((m for m in mods if m in ("hi", "lo")), None)
            first = f"{base}.{hl + '.' if hl else ''}cc.{ty}"
            last = f"{'addc' if base == 'add' else ('subc' if base == 'sub' else 'madc')}.{hl + '.' if hl else ''}{ty}"
            steps = [first, name, last]
            regs = []
            for st in steps:
                a, b = load(k % 6, w), load((k + 1) % 6, w)
                c = load((k + 2) % 6, w) if base == "mad" else None
                d = reg(w)
                lines.append(f"  {st} {d}, {a}, {b}{', ' + c if c else ''};")
                regs.append((st, (k % 6, (k + 1) % 6, (k + 2) % 6), d))
                k += 1
            rows = [store(d, w) for _, _, d in regs]
            outs.append(("chain", mods, [(st, src) for st, src, _ in regs], rows))
            continue
        wa = 32 if op in ("dp2a", "dp4a") else w
        a, b = load(k % 6, wa), load((k + 1) % 6, 32 if op in ("shl", "shr", "dp2a", "dp4a") else wa)
        srcs = (k % 6, (k + 1) % 6, (k + 2) % 6)
        extra = ""
        if op in ("mad", "sad", "dp2a", "dp4a"):
            cw = 2 * w if "wide" in mods else (32 if op.startswith("dp") else w)
            extra = ", " + load((k + 2) % 6, cw)
        dw = 2 * w if "wide" in mods else (32 if op.startswith("dp") else (w if op != "cnot" else w))
        d = reg(dw)
        operands = f"{a}" if op in ("abs", "neg", "cnot") else f"{a}, {b}"
        lines.append(f"  {name} {d}, {operands}{extra};")
        row = store(d, dw)
        outs.append(("one", (op, mods), srcs, [row]))
        k += 1
    head = [".version 8.8", ".target sm_90a", ".address_size 64",
            ".visible .entry k(.param .u64 pin, .param .u64 pout)", "{",
            f"  .reg .b16 %h<{nreg['%h'] + 1}>; .reg .b32 %r<{nreg['%r'] + 1}>; .reg .b64 %rd<{nreg['%rd'] + 1}>;",
            "  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd4, [pout];",
            "  mov.u32 %r1, %tid.x; mul.wide.u32 %rd6, %r1, 8; add.s64 %rd2, %rd1, %rd6; add.s64 %rd3, %rd4, %rd6;"]
    nrows = sum(len(o[3]) for o in outs)
    return "\n".join(head + lines + ["  ret;", "}"]) + "\n", outs, nrows


def _integer_forms():
    """The integer forms of OPS: every value of the last (type) slot is an integer type."""
    inst, miss = [], []
    for op in OPS:
        for f in form_sweep.forms_of(op):
            if all(v in W for v in f.values()[-1][1]):
                i, m = form_sweep.cover(f, lambda mods: True)
                inst += [(op, mods, t) for mods, t in i]
                miss += [(f.text, k, v) for k, v in m]
    return inst, miss


INSTANCES, MISSING = _integer_forms()


def test_instances_cover_every_value() -> None:
    assert not MISSING, MISSING


def test_every_integer_form_runs_right() -> None:
    ptx, outs, nrows = build(INSTANCES)
    rng = np.random.default_rng(SEED)
    words = rng.integers(0, 2**63, (6, N), dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, (6, N)).astype(
        np.uint64)
    small = rng.integers(0, 3, (6, N)) == 0                    # small magnitudes (shift counts, equal lanes ...)
    words = np.where(small, rng.integers(0, 70, (6, N)).astype(np.uint64), words)
    words[:, :4] = np.array([0, 2**64 - 1, 2**63, 2**31 - 1], np.uint64)[None, :]   # extremes in every row
    dev = ptxlab.open_device("emu")
    out = dev.empty(nrows * N * 8)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(ptx, arch="sm_90a"), "k", grid=(1, 1, 1), block=(N, 1, 1),
               args=[dev.to_device(words), out])
    got = dev.to_host(out, np.uint64).reshape(nrows, N)
    bad = []
    for kind, what, srcs, rows in outs:
        for t in range(N):
            if kind == "one":
                op, mods = what
                a, b, c = (int(words[i, t]) for i in srcs)
                want = [ref(op, mods, a, b, c)]
                label = ".".join((op,) + mods)
            else:
                steps = [(st, *(int(words[i, t]) for i in src)) for st, src in srcs]
                want = chain(kind, what, steps)
                label = " ; ".join(st for st, _ in srcs)
            for r, wv in zip(rows, want):
                if wv is not None and int(got[r, t]) != wv:
                    bad.append(f"{label} lane {t}: got {int(got[r, t]):#x} want {wv:#x}")
    assert not bad, f"{len(bad)} mismatches (seed {SEED}):\n" + "\n".join(bad[:12])


def test_mov_of_every_type_copies_the_bits() -> None:
    """mov.type d, a (PTX ISA 9.7.9.3) for every register type but .pred: d has a's bits."""
    types = [v for v in form_sweep.forms_of("mov")[0].values()[-1][1] if v != "pred"]
    wid = {"b16": 16, "u16": 16, "s16": 16, "b32": 32, "u32": 32, "s32": 32, "f32": 32, "b64": 64, "u64": 64,
           "s64": 64, "f64": 64, "b128": 128}
    lines = []
    for k, t in enumerate(types):
        w = wid[t]
        r = {16: "%h", 32: "%r", 64: "%x", 128: "%q"}[w]
        lines += [f"  ld.global.b{w} {r}1, [%rd2+{16 * k}];", f"  mov.{t} {r}2, {r}1;",
                  f"  st.global.b{w} [%rd3+{16 * k}], {r}2;"]
    ptx = "\n".join([".version 8.8", ".target sm_90a", ".address_size 64",
                     ".visible .entry k(.param .u64 pin, .param .u64 pout)", "{",
                     "  .reg .b16 %h<3>; .reg .b32 %r<3>; .reg .b64 %rd<4>; .reg .b64 %x<3>; .reg .b128 %q<3>;",
                     "  ld.param.u64 %rd2, [pin]; ld.param.u64 %rd3, [pout];"] + lines + ["  ret;", "}"]) + "\n"
    rng = np.random.default_rng(SEED)
    src = rng.integers(0, 256, 16 * len(types), dtype=np.uint8)
    dev = ptxlab.open_device("emu")
    out = dev.empty(src.size)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(ptx, arch="sm_90a"), "k", grid=(1, 1, 1), block=(1, 1, 1),
               args=[dev.to_device(src), out])
    got = dev.to_host(out, np.uint8).reshape(len(types), 16)
    for k, t in enumerate(types):
        n = wid[t] // 8
        assert np.array_equal(got[k, :n], src[16 * k:16 * k + n]), t
