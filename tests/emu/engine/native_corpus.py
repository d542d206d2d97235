"""Random PTX kernels for the engine differential test (test_native_differential.py): every instruction form the
native engine translates, on operands that mix special values (NaN, Inf, subnormals, signed zeros, INT_MIN, ...) with
random bits, inside divergent branches and loops.

A kernel reads 16 words per thread into typed registers, runs a random program over them, and stores every register
back, so a difference in any bit of any register shows up in the output.  ``FORMS`` lists the forms as
(opcode text, destination class, source classes); a class is a register file (``r`` b32, ``d`` b64, ``h`` b16,
``f`` f32, ``g`` f64, ``p`` pred) or an immediate of a given type (``i32``, ``i64``, ``i16``, ``f32i``, ``f64i``,
``lut``, ``sh``).
"""
from __future__ import annotations

import struct

import numpy as np

NREG = {"r": 24, "d": 12, "h": 8, "f": 12, "g": 8, "p": 8}
DECL = {"r": ".b32 %r", "d": ".b64 %rd", "h": ".b16 %h", "f": ".f32 %f", "g": ".f64 %fd", "p": ".pred %p"}
PREFIX = {"r": "%r", "d": "%rd", "h": "%h", "f": "%f", "g": "%fd", "p": "%p"}

_INT = [("u16", "h"), ("s16", "h"), ("u32", "r"), ("s32", "r"), ("u64", "d"), ("s64", "d")]
_BIT = [("b16", "h"), ("b32", "r"), ("b64", "d")]
_IMM = {"h": "i16", "r": "i32", "d": "i64", "f": "f32i", "g": "f64i"}
_CMP_I = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
_CMP_F = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")


def _forms() -> list:
    F = []
    for ty, c in _INT + _BIT:
        F += [(f"add.{ty}", c, [c, c]), (f"sub.{ty}", c, [c, _IMM[c]])]
    F += [("add.sat.s32", "r", ["r", "r"]), ("sub.sat.s32", "r", ["r", "i32"])]
    for ty, c in _INT:
        F += [(f"mul.lo.{ty}", c, [c, c]), (f"mul.hi.{ty}", c, [c, c]), (f"mad.lo.{ty}", c, [c, c, c]),
              (f"mad.hi.{ty}", c, [c, _IMM[c], c]), (f"div.{ty}", c, [c, c]), (f"rem.{ty}", c, [c, c]),
              (f"min.{ty}", c, [c, c]), (f"max.{ty}", c, [c, _IMM[c]])]
    F += [("mul.wide.u16", "r", ["h", "h"]), ("mul.wide.s16", "r", ["h", "h"]), ("mul.wide.u32", "d", ["r", "r"]),
          ("mul.wide.s32", "d", ["r", "i32"]), ("mad.wide.u32", "d", ["r", "r", "d"]),
          ("mad.wide.s32", "d", ["r", "r", "d"]), ("mad.hi.sat.s32", "r", ["r", "r", "r"]),
          ("min.relu.s32", "r", ["r", "r"]), ("max.relu.s32", "r", ["r", "r"])]
    for ty, c in (("s16", "h"), ("s32", "r"), ("s64", "d")):
        F += [(f"abs.{ty}", c, [c]), (f"neg.{ty}", c, [c])]
    F += [("popc.b32", "r", ["r"]), ("popc.b64", "r", ["d"]), ("clz.b32", "r", ["r"]), ("clz.b64", "r", ["d"]),
          ("bfind.u32", "r", ["r"]), ("bfind.s32", "r", ["r"]), ("bfind.u64", "r", ["d"]), ("bfind.s64", "r", ["d"]),
          ("bfind.shiftamt.u32", "r", ["r"]), ("bfind.shiftamt.s64", "r", ["d"]),
          ("brev.b32", "r", ["r"]), ("brev.b64", "d", ["d"]),
          ("bfe.u32", "r", ["r", "r", "r"]), ("bfe.s32", "r", ["r", "sh", "sh"]), ("bfe.u64", "d", ["d", "r", "r"]),
          ("bfe.s64", "d", ["d", "sh", "sh"]), ("bfi.b32", "r", ["r", "r", "r", "r"]),
          ("bfi.b64", "d", ["d", "d", "sh", "sh"]),
          ("dp4a.u32.u32", "r", ["r", "r", "r"]), ("dp4a.s32.s32", "r", ["r", "r", "r"]),
          ("dp4a.u32.s32", "r", ["r", "r", "r"]), ("dp4a.s32.u32", "r", ["r", "r", "r"]),
          ("dp2a.lo.u32.s32", "r", ["r", "r", "r"]), ("dp2a.hi.s32.s32", "r", ["r", "r", "r"]),
          ("cnot.b32", "r", ["r"]), ("lop3.b32", "r", ["r", "r", "r", "lut"]),
          ("shf.l.clamp.b32", "r", ["r", "r", "r"]), ("shf.r.clamp.b32", "r", ["r", "r", "sh"]),
          ("shf.l.wrap.b32", "r", ["r", "r", "r"]), ("shf.r.wrap.b32", "r", ["r", "r", "r"]),
          ("prmt.b32", "r", ["r", "r", "r"])]
    for ty, c in _BIT + [("pred", "p")]:
        F += [(f"and.{ty}", c, [c, c]), (f"or.{ty}", c, [c, c]), (f"xor.{ty}", c, [c, c]), (f"not.{ty}", c, [c])]
    for ty, c in _BIT + [("u16", "h"), ("s16", "h"), ("u32", "r"), ("s32", "r"), ("u64", "d"), ("s64", "d")]:
        op = "shl" if ty.startswith("b") else "shr"
        F += [(f"{op}.{ty}", c, [c, "r"]), (f"{op}.{ty}", c, [c, "sh"])]
    F += [("shr.b32", "r", ["r", "r"]), ("shl.b64", "d", ["d", "sh"])]
    for ty, c in (("f32", "f"), ("f64", "g")):
        i = _IMM[c]
        F += [(f"add.rn.{ty}", c, [c, c]), (f"sub.rn.{ty}", c, [c, i]), (f"mul.rn.{ty}", c, [c, c]),
              (f"fma.rn.{ty}", c, [c, c, c]), (f"add.{ty}", c, [c, c]), (f"mul.{ty}", c, [i, c]),
              (f"div.rn.{ty}", c, [c, c]), (f"rcp.rn.{ty}", c, [c]), (f"sqrt.rn.{ty}", c, [c]),
              (f"neg.{ty}", c, [c]), (f"abs.{ty}", c, [c]), (f"min.{ty}", c, [c, c]), (f"max.{ty}", c, [c, c]),
              (f"copysign.{ty}", c, [c, c])]
        for t in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
            F.append((f"testp.{t}.{ty}", "p", [c]))
    F += [("add.rn.ftz.f32", "f", ["f", "f"]), ("add.sat.f32", "f", ["f", "f"]), ("sub.ftz.f32", "f", ["f", "f"]),
          ("mul.rn.ftz.f32", "f", ["f", "f"]), ("mul.sat.f32", "f", ["f", "f"]), ("mul.ftz.sat.f32", "f", ["f", "f"]),
          ("fma.rn.ftz.f32", "f", ["f", "f", "f"]), ("fma.rn.sat.f32", "f", ["f", "f", "f"]),
          ("mad.rn.f32", "f", ["f", "f", "f"]), ("mad.f32", "f", ["f", "f", "f"]), ("mad.rn.f64", "g", ["g", "g", "g"]),
          ("div.approx.f32", "f", ["f", "f"]), ("div.full.f32", "f", ["f", "f"]), ("div.approx.ftz.f32", "f", ["f", "f"]),
          ("div.rn.ftz.f32", "f", ["f", "f"]), ("rcp.approx.f32", "f", ["f"]), ("rcp.approx.ftz.f32", "f", ["f"]),
          ("rcp.rn.ftz.f32", "f", ["f"]), ("sqrt.approx.f32", "f", ["f"]), ("sqrt.approx.ftz.f32", "f", ["f"]),
          ("rsqrt.approx.f32", "f", ["f"]), ("rsqrt.approx.ftz.f32", "f", ["f"]), ("neg.ftz.f32", "f", ["f"]),
          ("abs.ftz.f32", "f", ["f"]), ("min.ftz.f32", "f", ["f", "f"]), ("max.NaN.f32", "f", ["f", "f"]),
          ("min.ftz.NaN.f32", "f", ["f", "f"])]
    for ty, c in [("u16", "h"), ("s16", "h"), ("b32", "r"), ("u32", "r"), ("s32", "r"), ("u64", "d"), ("s64", "d"),
                  ("f32", "f"), ("f64", "g")]:
        cmps = _CMP_F if ty.startswith("f") else _CMP_I
        for cmp in cmps:
            F.append((f"setp.{cmp}.{ty}", "p", [c, c]))
        F.append((f"setp.{cmps[2]}.and.{ty}", "pq", [c, _IMM[c], "p"]))
        F.append((f"setp.{cmps[5]}.or.{ty}", "p", [c, c, "p"]))
        F.append((f"setp.{cmps[1]}.xor.{ty}", "pq", [c, c, "p"]))
    F += [("setp.lt.ftz.f32", "p", ["f", "f"]), ("setp.equ.ftz.f32", "pq", ["f", "f"])]
    for ty, c in (("b16", "h"), ("b32", "r"), ("s32", "r"), ("u64", "d"), ("f32", "f"), ("f64", "g")):
        F.append((f"selp.{ty}", c, [c, _IMM[c], "p"]))
    for ty, c in (("b16", "h"), ("b32", "r"), ("u32", "r"), ("b64", "d"), ("f32", "f"), ("f64", "g"),
                  ("pred", "p")):
        F.append((f"mov.{ty}", c, [c]))
    F += [("mov.b32", "r", ["i32"]), ("mov.f32", "f", ["f32i"]), ("mov.u64", "d", ["i64"]),
          ("mov.b32", "r", ["%tid.x"]), ("mov.u32", "r", ["%laneid"]), ("mov.u32", "r", ["%warpid"]),
          ("mov.u32", "r", ["%ctaid.x"]), ("mov.u64", "d", ["%tid.x"]), ("mov.u16", "h", ["%ntid.x"]),
          ("mov.b32", "f", ["r"]), ("mov.b64", "g", ["d"]), ("mov.b32", "r", ["f"]), ("mov.b64", "d", ["g"])]
    return F


def _legal(form) -> bool:
    """Whether the PTX ISA forms registry (ptxlab/emu/core/isa.py) accepts the opcode text: the generator writes
    forms mechanically (``setp.lo.s32``, ``add.b16``), and the ISA gives some of them no meaning."""
    from ptxlab.emu import ops
    from ptxlab.emu.core import isa
    ops.load_families()
    op, *mods = form[0].split(".")
    return isa.match(op, tuple(mods)) is not None


FORMS = [f for f in _forms() if _legal(f)]
# forms the generator writes that the PTX ISA does not define: both engines must refuse them with the same report
ILLEGAL_FORMS = [f for f in _forms() if not _legal(f)]
# packs / unpacks and conversions written out whole (their operands are vectors or two types)
SPECIAL_FORMS = [
    "mov.b64 {DR0, DR1}, DD0;", "mov.b64 DD0, {DR0, DR1};", "mov.b32 {DH0, DH1}, DR0;", "mov.b32 DR0, {DH0, DH1};",
    "cvt.u32.u16 DR0, DH0;", "cvt.s32.s16 DR0, DH0;", "cvt.u64.u32 DD0, DR0;", "cvt.s64.s32 DD0, DR0;",
    "cvt.u32.u64 DR0, DD0;", "cvt.s16.s32 DH0, DR0;", "cvt.u16.u64 DH0, DD0;", "cvt.s64.s16 DD0, DH0;",
    "cvt.u8.u32 DR0, DR1;", "cvt.s8.s32 DR0, DR1;", "cvt.s32.s8 DR0, DR1;", "cvt.sat.u8.s32 DR0, DR1;",
    "cvt.sat.s16.s64 DH0, DD0;", "cvt.sat.u32.s64 DR0, DD0;", "cvt.sat.s32.u64 DR0, DD0;", "cvt.sat.u16.u32 DH0, DR0;",
    "cvt.sat.u64.s64 DD0, DD1;",  # (cvt.sat.s8.s8: ptxas refuses a .sat that cannot clamp; so does the registry)
    "cvta.to.global.u64 DD0, DD1;", "cvta.global.u64 DD0, DD1;",
    # conversions of a 16-bit register: lookup tables filled by the interpreter's handler (engine/native/emit_lut.py)
    "cvt.rn.f16x2.e4m3x2 DR0, DH0;", "cvt.rn.relu.f16x2.e5m2x2 DR0, DH0;", "cvt.rn.bf16x2.ue8m0x2 DR0, DH0;",
    "cvt.rz.f16.bf16 DH0, DH1;", "cvt.rn.bf16.f16 DH0, DH1;",
]


def special(text: str, rng) -> str:
    """A SPECIAL_FORMS line with random registers."""
    for c, name in (("R", "r"), ("D", "d"), ("H", "h")):
        for k in range(2):
            text = text.replace(f"D{c}{k}", _reg(name, rng))
    return text

SPECIAL32 = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00001, 0xFFC00001,
             0x00000001, 0x807FFFFF, 0x00800000, 0x3F800000, 0xBF800000, 0x4B000000, 0x00400000, 0x7F7FFFFF, 31, 32,
             33, 64, 255, 256]
SPECIAL64 = [0, 1, (1 << 64) - 1, 1 << 63, (1 << 63) - 1, 0x7FF0000000000000, 0xFFF0000000000000,
             0x7FF8000000000000, 0x7FF0000000000001, 0x0000000000000001, 0x000FFFFFFFFFFFFF, 0x0010000000000000,
             0x3FF0000000000000, 0xBFF0000000000000, 0x8000000000000000, 63, 64, 0x3810000000000000,
             0x47EFFFFFE0000000, 0x36A0000000000000]


def inputs(rng: np.random.Generator, nthreads: int) -> np.ndarray:
    """16 uint32 words per thread: half special values, half random bits."""
    w = rng.integers(0, 2**32, (nthreads, 16), dtype=np.uint64).astype(np.uint32)
    pick = rng.random((nthreads, 16)) < 0.5
    sv = np.array(SPECIAL32, np.uint32)[rng.integers(0, len(SPECIAL32), (nthreads, 16))]
    w = np.where(pick, sv, w)
    s64 = np.array(SPECIAL64, np.uint64)[rng.integers(0, len(SPECIAL64), (nthreads, 4))]
    sel = rng.random((nthreads, 4)) < 0.5
    pairs = w[:, 8:16].copy().view(np.uint64)
    w[:, 8:16] = np.where(sel, s64, pairs).view(np.uint32)
    return w


def _imm(kind: str, rng) -> str:
    if kind in ("i16", "i32", "i64"):
        bits = int(kind[1:])
        v = _pick([0, 1, 3, 7, 31, 32, (1 << bits) - 1, 1 << (bits - 1), int(rng.integers(0, 1 << 16))], rng)
        return str(v) if v < (1 << 31) else hex(v)
    if kind == "f32i":
        return f"0f{_pick(SPECIAL32 + [int(rng.integers(0, 2**32))], rng):08X}"
    if kind == "f64i":
        return f"0d{_pick(SPECIAL64 + [int(rng.integers(0, 2**63))], rng):016X}"
    if kind == "lut":
        return str(int(rng.integers(0, 256)))
    if kind == "sh":
        return str(_pick([0, 1, 5, 16, 31, 32, 33, 63, 64, 65, 200, 255], rng))
    raise KeyError(kind)


def _pick(values: list, rng) -> int:
    return int(values[int(rng.integers(0, len(values)))])


def _reg(c: str, rng) -> str:
    return f"{PREFIX[c]}{int(rng.integers(0, NREG[c]))}"


def _operand(c: str, rng) -> str:
    if c.startswith("%"):
        return c
    if c in NREG:
        if c == "p" and rng.random() < 0.2:
            return "!" + _reg(c, rng)
        return _reg(c, rng)
    return _imm(c, rng)


def instruction(rng, form=None) -> str:
    if form is None and rng.random() < 0.08:
        return special(SPECIAL_FORMS[int(rng.integers(0, len(SPECIAL_FORMS)))], rng)
    op, dst, srcs = form if form is not None else FORMS[int(rng.integers(0, len(FORMS)))]
    d = f"{_reg('p', rng)}|{_reg('p', rng)}" if dst == "pq" else _reg(dst, rng)
    ops = [_operand(s, rng) for s in srcs]
    guard = f"@{'!' if rng.random() < 0.5 else ''}{_reg('p', rng)} " if rng.random() < 0.15 else ""
    return f"{guard}{op} {d}, {', '.join(ops)};"


def kernel(rng, n_ins: int = 60, forms=None, raw: tuple = ()) -> str:
    """PTX of one random kernel ``k(in, out, n)``: 16 input words, the program (``raw`` lines after it), every
    register stored."""
    lines = [".version 8.0", ".target sm_90a", ".address_size 64", "",
             ".visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 n)", "{"]
    lines += [f"  .reg {DECL[c]}<{NREG[c]}>;" for c in NREG]
    lines += ["  .reg .b64 %base<4>;", "  .reg .b32 %t<4>;", "  .shared .align 16 .b8 sbuf[2048];",
              "  .local .align 16 .b8 lbuf[64];",
              "  ld.param.u64 %base0, [pin];", "  ld.param.u64 %base1, [pout];", "  cvta.to.global.u64 %base0, %base0;",
              "  cvta.to.global.u64 %base1, %base1;", "  mov.u32 %t0, %ctaid.x;", "  mov.u32 %t1, %ntid.x;",
              "  mov.u32 %t2, %tid.x;", "  mad.lo.s32 %t3, %t0, %t1, %t2;", "  mul.wide.u32 %base2, %t3, 64;",
              "  add.s64 %base3, %base0, %base2;"]
    # each register file filled from the thread's 64 input bytes: (type, bytes per element, elements, first)
    for c, ty, eb, n, first in (("r", "u32", 4, 16, 0), ("d", "u64", 8, 8, 0), ("h", "u16", 2, 32, 0),
                                ("f", "f32", 4, 16, 5), ("g", "f64", 8, 8, 3)):
        lines += [f"  ld.global.{ty} {PREFIX[c]}{k}, [%base3+{eb * ((k + first) % n)}];" for k in range(NREG[c])]
    for k in range(NREG["p"]):
        lines.append(f"  setp.{'lt' if k % 2 else 'ge'}.u32 %p{k}, %r{k}, %r{k + 8};")
    body = _body(rng, n_ins, forms)
    lines += ["  " + x if not x.endswith(":") else x for x in body + list(raw)]
    lines += _epilogue()
    lines.append("}")
    return "\n".join(lines) + "\n"


def _body(rng, n_ins, forms) -> list:
    out = []
    nlab = 0
    i = 0
    while i < n_ins:
        r = rng.random()
        if forms is None and r < 0.06:            # an if/else diamond on a (divergent) predicate
            nlab += 1
            p = _reg("p", rng)
            a = [instruction(rng) for _ in range(int(rng.integers(1, 4)))]
            b = [instruction(rng) for _ in range(int(rng.integers(1, 4)))]
            out += [f"@{p} bra L_else{nlab};", *a, f"bra.uni L_end{nlab};", f"L_else{nlab}:", *b, f"L_end{nlab}:"]
            i += len(a) + len(b)
        elif forms is None and r < 0.09:          # a loop of 1..4 iterations (per-thread trip count)
            nlab += 1
            cnt = f"%t{int(rng.integers(0, 2))}"
            body = [instruction(rng) for _ in range(int(rng.integers(1, 4)))]
            out += [f"and.b32 {cnt}, {_reg('r', rng)}, 3;", f"L_loop{nlab}:", *body,
                    f"sub.s32 {cnt}, {cnt}, 1;", f"setp.ge.s32 %p7, {cnt}, 0;", f"@%p7 bra L_loop{nlab};"]
            i += len(body)
        elif forms is None and r < 0.13:          # shared / local / generic memory round trips
            out += _memory(rng)
            i += 2
        else:
            form = None if forms is None else forms[i % len(forms)]
            out.append(instruction(rng, form))
            i += 1
    return out


def _memory(rng) -> list:
    k = int(rng.integers(0, 6))
    r, r2, d = _reg("r", rng), _reg("r", rng), _reg("d", rng)
    off = 8 * int(rng.integers(0, 8))
    slot = ["mov.u32 %t2, %tid.x;", "and.b32 %t2, %t2, 127;", "shl.b32 %t2, %t2, 4;", "mov.u32 %t3, sbuf;",
            "add.u32 %t2, %t2, %t3;"]     # this thread's 16 bytes of shared memory
    if k == 0:      # vector store, then scalar loads
        return slot + [f"st.shared.v2.u32 [%t2], {{{r}, {r2}}};", f"ld.shared.u32 {r2}, [%t2+4];",
                       f"ld.shared.s16 {_reg('r', rng)}, [%t2+2];"]
    if k == 1:      # local memory
        return [f"st.local.u64 [lbuf+{off}], {d};", f"ld.local.u32 {r}, [lbuf+{off + 4}];",
                f"st.local.v4.b32 [lbuf+32], {{{r}, {r2}, {r}, {r2}}};", f"ld.local.v2.u64 {{{d}, {_reg('d', rng)}}}, [lbuf+32];"]
    if k == 2:      # generic address of shared memory
        return ["mov.u64 %base2, sbuf;", "cvta.shared.u64 %base2, %base2;", "mov.u32 %t2, %tid.x;",
                "and.b32 %t2, %t2, 127;", "mul.wide.u32 %rd0, %t2, 16;", "add.s64 %base2, %base2, %rd0;", f"st.u32 [%base2+8], {r};",
                f"ld.u8 {r2}, [%base2+9];", f"ld.s8 {_reg('r', rng)}, [%base2+10];"]
    if k == 3:      # parameters, read-only
        return [f"ld.param.u32 {r}, [n];", f"ld.param.u64 {d}, [pout];"]
    if k == 4:      # global: this thread's output row, written again at the end
        return [f"st.global.f32 [%base3+{4 * int(rng.integers(0, 16))}], {_reg('f', rng)};",
                f"ld.global.v2.u32 {{{r}, {r2}}}, [%base3+{off}];", f"ld.global.nc.s16 {_reg('h', rng)}, [%base3+6];"]
    return slot + [f"@{_reg('p', rng)} st.shared.f64 [%t2], {_reg('g', rng)};",
                   f"ld.shared.v2.f32 {{{_reg('f', rng)}, {_reg('f', rng)}}}, [%t2];"]


OUT_WORDS = NREG["r"] + 2 * NREG["d"] + NREG["h"] + NREG["f"] + 2 * NREG["g"] + NREG["p"]


def _epilogue() -> list:
    lines = ["  mov.u32 %t0, %ctaid.x;", "  mov.u32 %t1, %ntid.x;", "  mov.u32 %t2, %tid.x;",
             "  mad.lo.s32 %t3, %t0, %t1, %t2;", f"  mul.wide.u32 %base2, %t3, {4 * OUT_WORDS};",
             "  add.s64 %base2, %base1, %base2;"]
    o = 0
    for c, st in (("r", "u32"), ("d", "u64"), ("h", "u16"), ("f", "f32"), ("g", "f64")):
        w = {"u32": 4, "u64": 8, "u16": 2, "f32": 4, "f64": 8}[st]
        for k in range(NREG[c]):
            lines.append(f"  st.global.{st} [%base2+{o}], {PREFIX[c]}{k};")
            o += w if st != "u16" else 4
    for k in range(NREG["p"]):
        lines.append(f"  selp.u32 %t0, 1, 0, %p{k};")
        lines.append(f"  st.global.u32 [%base2+{o}], %t0;")
        o += 4
    assert o == 4 * OUT_WORDS
    return lines


def as_f32_hex(words) -> list:
    return [struct.unpack("<f", struct.pack("<I", int(w)))[0] for w in words]
