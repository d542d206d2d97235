"""Integer arithmetic, extended-precision arithmetic, logic and shift instructions.

PTX ISA sections (PTX ISA 9.x numbering): 9.7.1 integer arithmetic (add sub mul mad mul24 mad24 sad div rem abs neg
min max popc clz bfind fns brev bfe bfi szext bmsk dp4a dp2a), 9.7.2 extended precision (add.cc addc sub.cc subc mad.cc
madc), 9.7.8 logic and shift (and or xor not cnot lop3 shf shl shr), 9.7.9.7 prmt.  Comparison/selection lives in
ops/comparison.py, cvt in ops/conversion.py.

Registration: the ``FORMS`` table at the end lists every integer form implemented, in PTX ISA notation; opcodes that
also have floating-point forms (add sub mul mad min max abs neg div) share the opcode with ops/floating_point.py and
the type slot tells them apart.

All ``run`` functions are a handful of whole-array numpy operations; every decision that depends only on the
instruction text (type, width, mode, immediate LUTs) is taken in the builder.
"""
from __future__ import annotations

import numpy as np

from ..core import ir
from ..core.isa import Ctx, Unsupported, imm_value, register
from ..core.types import BITS, DTYPE, SINT, UINT, is_float

# packed SIMD integer types (PTX ISA 9.7.1.1 add.u16x2 ...): element dtype and lane count inside a .b32
_PACKED = {"u16x2": (np.dtype(np.uint16), 2), "s16x2": (np.dtype(np.int16), 2),
           "u8x4": (np.dtype(np.uint8), 4), "s8x4": (np.dtype(np.int8), 4)}
_SCALAR_INT = ("u16", "u32", "u64", "s16", "s32", "s64")
_B = ("b16", "b32", "b64")
_U64 = np.uint64


def _ity(ins: ir.Instr) -> str:
    """The integer instruction type (last type modifier, packed SIMD types included)."""
    for m in reversed(ins.mods):
        if m in _PACKED or m in BITS:
            return m
    raise Unsupported(f"no type modifier on '{ins.text.strip()}' ({ins.where()})")


def _need_int(ins: ir.Instr, ty: str):
    if is_float(ty) or ty == "pred" or ty not in DTYPE and ty not in _PACKED:
        raise Unsupported(f"{ins.name}: type .{ty} is not an integer type for this instruction "
                          f"(floating-point forms belong to the float family)")


def _signed(ty: str) -> bool:
    return ty.startswith("s")


def _width(ty: str) -> int:
    return 32 if ty in _PACKED else BITS[ty]


def _full(x, T, dt):
    """A (T,) array of dtype ``dt`` from an operand value (array or numpy scalar), without copying arrays."""
    x = np.asarray(x)
    if x.dtype != dt:
        x = x.astype(dt) if x.dtype.itemsize != dt.itemsize else x.view(dt)
    if x.shape != (T,):
        x = np.broadcast_to(x, (T,))
    return x


def _lanes(x, T, edt, n):
    """View a (T,) .b32 operand as (T, n) lanes of ``edt`` (lane 0 = least significant). The operand may be a
    strided view (a component of a vector load, a broadcast scalar): made contiguous first (no copy if it is)."""
    return np.ascontiguousarray(_full(x, T, np.dtype(np.uint32))).view(edt).reshape(T, n)


def _pack(lanes):
    return np.ascontiguousarray(lanes).view(np.uint32).reshape(-1)


def _carry_in(st):
    cf = st.side.get("cc")
    return cf if cf is not None else np.zeros(st.T, dtype=bool)


def _set_carry(st, cf, m):
    """CC.CF is per-thread state (PTX ISA 9.7.2): only the executing threads update it."""
    cf = np.asarray(cf, dtype=bool)
    if cf.shape != (st.T,):
        cf = np.broadcast_to(cf, (st.T,))
    if m is None:
        st.side["cc"] = cf.copy()
    else:
        st.side["cc"] = np.where(m, cf, _carry_in(st))


# ---------------------------------------------------------------------------------------------------------------
# add / sub / addc / subc (9.7.1.1, 9.7.1.2, 9.7.2.1-4)
# ---------------------------------------------------------------------------------------------------------------
def _sat_limits(dt):
    ii = np.iinfo(dt)
    return ii.min, ii.max


def build_addsub(ins: ir.Instr, ctx: Ctx):
    ty = _ity(ins)
    _need_int(ins, ty)
    op = ins.opcode
    sub = op in ("sub", "subc")
    cin = op in ("addc", "subc")
    cout = "cc" in ins.mods
    sat = "sat" in ins.mods
    if (cin or cout) and (ty in _PACKED or _width(ty) < 32):
        raise Unsupported(f"{ins.name}: carry-chain forms are .u32/.s32/.u64/.s64 only (PTX ISA 9.7.2)")
    if sat and (cin or cout):
        raise Unsupported(f"{ins.name}: .sat cannot be combined with a carry chain (PTX ISA 9.7.2)")
    if ty in _PACKED:
        edt, n = _PACKED[ty]
        a = ctx.read(ins.args[1], "b32")
        b = ctx.read(ins.args[2], "b32")
        w = ctx.write(ins.args[0], "b32")
        lo, hi = _sat_limits(edt)

        def run(st, m):
            T = st.T
            x = _lanes(a(st), T, edt, n)
            y = _lanes(b(st), T, edt, n)
            if sat:
                r = (x.astype(np.int64) - y) if sub else (x.astype(np.int64) + y)
                r = np.clip(r, lo, hi).astype(edt)
            else:
                r = np.subtract(x, y, dtype=edt) if sub else np.add(x, y, dtype=edt)
            w(st, _pack(r), m)
        return run
    dt = DTYPE[ty]
    bits = _width(ty)
    ut = UINT[bits]
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    w = ctx.write(ins.args[0], ty)
    if sat:
        if bits != 32:
            raise Unsupported(f"{ins.name}: .sat applies to 32-bit (and packed) types only (PTX ISA 9.7.1.1)")
        lo, hi = _sat_limits(dt)

        def run(st, m):
            x = np.asarray(a(st)).astype(np.int64)
            r = x - b(st) if sub else x + b(st)
            w(st, np.clip(r, lo, hi).astype(dt), m)
        return run
    if not (cin or cout):
        if sub:
            return lambda st, m: w(st, np.subtract(a(st), b(st), dtype=dt), m)
        return lambda st, m: w(st, np.add(a(st), b(st), dtype=dt), m)

    def run(st, m):
        # carry/borrow computed on the unsigned view: behaviour is the same for signed types (PTX ISA 9.7.2)
        x = np.asarray(a(st)).view(ut) if np.ndim(a(st)) else np.asarray(a(st)).astype(ut)
        y = np.asarray(b(st)).view(ut) if np.ndim(b(st)) else np.asarray(b(st)).astype(ut)
        if cin:
            c = _carry_in(st)
        if not sub:
            t = np.add(x, y, dtype=ut)
            co = t < x
            if cin:
                r = np.add(t, c.astype(ut), dtype=ut)
                co = co | (r < t)
            else:
                r = t
        else:
            r = np.subtract(x, y, dtype=ut)
            co = x < y                         # borrow-out (PTX: d = a - (b + CC.CF), borrow written to CC.CF)
            if cin:
                co = co | ((x == y) & c)
                r = np.subtract(r, c.astype(ut), dtype=ut)
        w(st, np.asarray(r).view(dt) if np.ndim(r) else np.asarray(r).astype(dt), m)
        if cout:
            _set_carry(st, co, m)
    return run




# ---------------------------------------------------------------------------------------------------------------
# mul / mad / madc (9.7.1.3, 9.7.1.4, 9.7.2.5-6)
# ---------------------------------------------------------------------------------------------------------------
_M32 = _U64(0xFFFFFFFF)


def _mulhi_u64(x, y):
    """High 64 bits of the 128-bit product of two uint64 arrays, with 32-bit halves (no Python ints)."""
    xl, xh = x & _M32, x >> _U64(32)
    yl, yh = y & _M32, y >> _U64(32)
    p0 = xl * yl
    p1 = xl * yh
    p2 = xh * yl
    p3 = xh * yh
    mid = (p0 >> _U64(32)) + (p1 & _M32) + (p2 & _M32)
    return p3 + (p1 >> _U64(32)) + (p2 >> _U64(32)) + (mid >> _U64(32))


def _mulhi(x, y, ty):
    """mul.hi for any scalar integer type (PTX ISA 9.7.1.3: d = t<2n-1..n>)."""
    bits = BITS[ty]
    dt = DTYPE[ty]
    if bits < 64:
        wt = np.int64 if _signed(ty) else np.uint64
        p = np.asarray(x).astype(wt) * np.asarray(y).astype(wt)
        return (p >> wt(bits)).astype(dt)
    ux = np.asarray(x).view(np.uint64) if np.ndim(x) else np.asarray(x).astype(np.uint64)
    uy = np.asarray(y).view(np.uint64) if np.ndim(y) else np.asarray(y).astype(np.uint64)
    h = _mulhi_u64(ux, uy)
    if _signed(ty):  # signed high half = unsigned high half - (x<0 ? y : 0) - (y<0 ? x : 0)  (mod 2^64)
        h = h - np.where(np.asarray(x) < 0, uy, _U64(0)) - np.where(np.asarray(y) < 0, ux, _U64(0))
    return np.asarray(h).view(dt) if np.ndim(h) else np.asarray(h).astype(dt)


def _wide_type(ty):
    return ("s" if _signed(ty) else "u") + str(2 * BITS[ty])


def build_mul(ins: ir.Instr, ctx: Ctx):
    ty = _ity(ins)
    _need_int(ins, ty)
    if ty not in DTYPE or ty.startswith("b"):
        raise Unsupported(f"{ins.name}: mul types are .u16/.u32/.u64/.s16/.s32/.s64 (PTX ISA 9.7.1.3)")
    dt = DTYPE[ty]
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    if "wide" in ins.mods:
        if BITS[ty] == 64:
            raise Unsupported(f"{ins.name}: .wide is for 16- and 32-bit types only (PTX ISA 9.7.1.3)")
        wt = _wide_type(ty)
        wdt = DTYPE[wt]
        w = ctx.write(ins.args[0], wt)
        return lambda st, m: w(st, np.multiply(np.asarray(a(st)).astype(wdt), np.asarray(b(st)).astype(wdt),
                                               dtype=wdt), m)
    w = ctx.write(ins.args[0], ty)
    if "hi" in ins.mods:
        return lambda st, m: w(st, _mulhi(a(st), b(st), ty), m)
    return lambda st, m: w(st, np.multiply(a(st), b(st), dtype=dt), m)




def build_mad(ins: ir.Instr, ctx: Ctx):
    """mad{.lo,.hi,.wide}, mad.hi.sat.s32, mad{.lo,.hi}.cc and madc (PTX ISA 9.7.1.4, 9.7.2.5, 9.7.2.6)."""
    ty = _ity(ins)
    _need_int(ins, ty)
    if ty not in DTYPE or ty.startswith("b"):
        raise Unsupported(f"{ins.name}: mad types are .u16/.u32/.u64/.s16/.s32/.s64 (PTX ISA 9.7.1.4)")
    dt = DTYPE[ty]
    bits = BITS[ty]
    wide = "wide" in ins.mods
    hi = "hi" in ins.mods
    sat = "sat" in ins.mods
    cin = ins.opcode == "madc"
    cout = "cc" in ins.mods
    if sat and not (hi and ty == "s32"):
        raise Unsupported(f"{ins.name}: .sat applies only to mad.hi.s32 (PTX ISA 9.7.1.4)")
    if (cin or cout) and (wide or bits < 32):
        raise Unsupported(f"{ins.name}: mad.cc/madc are {{.hi,.lo}} .u32/.s32/.u64/.s64 only (PTX ISA 9.7.2.5)")
    if wide and bits == 64:
        raise Unsupported(f"{ins.name}: .wide is for 16- and 32-bit types only (PTX ISA 9.7.1.4)")
    ot = _wide_type(ty) if wide else ty
    odt = DTYPE[ot]
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    c = ctx.read(ins.args[3], ot)
    w = ctx.write(ins.args[0], ot)
    if wide:
        return lambda st, m: w(st, np.add(np.multiply(np.asarray(a(st)).astype(odt), np.asarray(b(st)).astype(odt),
                                                      dtype=odt), c(st), dtype=odt), m)
    if sat:
        def run(st, m):
            p = _mulhi(a(st), b(st), ty).astype(np.int64) + c(st)
            w(st, np.clip(p, -2**31, 2**31 - 1).astype(dt), m)
        return run
    if not (cin or cout):
        if hi:
            return lambda st, m: w(st, np.add(_mulhi(a(st), b(st), ty), c(st), dtype=dt), m)
        return lambda st, m: w(st, np.add(np.multiply(a(st), b(st), dtype=dt), c(st), dtype=dt), m)
    ut = UINT[bits]

    def run(st, m):
        p = _mulhi(a(st), b(st), ty) if hi else np.multiply(a(st), b(st), dtype=dt)
        p = np.asarray(p).astype(dt).view(ut) if np.ndim(p) else np.asarray(p).astype(dt).astype(ut)
        y = np.asarray(c(st))
        y = y.view(ut) if y.ndim else y.astype(ut)
        r = np.add(p, y, dtype=ut)
        co = r < p
        if cin:
            r2 = np.add(r, _carry_in(st).astype(ut), dtype=ut)
            co = co | (r2 < r)
            r = r2
        w(st, np.asarray(r).view(dt), m)
        if cout:
            _set_carry(st, co, m)
    return run




# ---------------------------------------------------------------------------------------------------------------
# mul24 / mad24 (9.7.1.5, 9.7.1.6), sad (9.7.1.7)
# ---------------------------------------------------------------------------------------------------------------
def build_mul24(ins: ir.Instr, ctx: Ctx):
    ty = _ity(ins)
    if ty not in ("u32", "s32"):
        raise Unsupported(f"{ins.name}: mul24/mad24 types are .u32/.s32 (PTX ISA 9.7.1.5)")
    hi = "hi" in ins.mods
    sat = "sat" in ins.mods
    if sat and not (hi and ty == "s32" and ins.opcode == "mad24"):
        raise Unsupported(f"{ins.name}: .sat applies only to mad24.hi.s32 (PTX ISA 9.7.1.6)")
    signed = ty == "s32"
    dt = DTYPE[ty]
    a = ctx.read(ins.args[1], "u32")
    b = ctx.read(ins.args[2], "u32")
    c = ctx.read(ins.args[3], ty) if ins.opcode == "mad24" else None
    w = ctx.write(ins.args[0], ty)
    k24 = np.int64(0xFFFFFF)
    s24 = np.int64(0x800000)

    def f24(x):   # the low 24 bits of the register, sign-extended for .s32
        x = np.asarray(x).astype(np.int64) & k24
        return (x ^ s24) - s24 if signed else x

    def run(st, m):
        t = f24(a(st)) * f24(b(st))              # exact 48-bit product
        t = (t >> np.int64(16)) if hi else t
        r32 = (t & np.int64(0xFFFFFFFF)).astype(np.uint32).view(dt) if np.ndim(t) else \
            np.asarray(t & 0xFFFFFFFF).astype(np.uint32).view(dt)
        if c is not None:
            if sat:
                r = np.clip(r32.astype(np.int64) + c(st), -2**31, 2**31 - 1).astype(dt)
            else:
                r = np.add(r32, c(st), dtype=dt)
        else:
            r = r32
        w(st, r, m)
    return run


def build_sad(ins: ir.Instr, ctx: Ctx):
    """d = c + ((a<b) ? b-a : a-b)  (PTX ISA 9.7.1.7), wrapping in the instruction width."""
    ty = _ity(ins)
    if ty not in _SCALAR_INT:
        raise Unsupported(f"{ins.name}: sad types are .u16/.u32/.u64/.s16/.s32/.s64 (PTX ISA 9.7.1.7)")
    dt = DTYPE[ty]
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    c = ctx.read(ins.args[3], ty)
    w = ctx.write(ins.args[0], ty)

    def run(st, m):
        x, y = a(st), b(st)
        d = np.where(x < y, np.subtract(y, x, dtype=dt), np.subtract(x, y, dtype=dt))
        w(st, np.add(d, c(st), dtype=dt), m)
    return run


# ---------------------------------------------------------------------------------------------------------------
# div / rem (9.7.1.8, 9.7.1.9)
# ---------------------------------------------------------------------------------------------------------------
def build_divrem(ins: ir.Instr, ctx: Ctx):
    """Truncating division (C semantics, remainder has the sign of the dividend).

    Division by zero is 'unspecified, machine-specific' in PTX.  We return all ones (0xFFFF.., i.e. -1 for signed)
    for both div and rem of every width: the 32-bit SASS division sequence ends with
    ``@!P LOP3.LUT Rd, RZ, Rdivisor, RZ, 0x33`` (Rd = ~0 when the divisor is 0).  Confirmed on the H100 for
    div/rem .u32/.s32/.u64/.s64 and div.s16/rem.u16 (all ones for every zero divisor in the corpus: H100 80GB HBM3,
    driver 580.159.04, 2026-11-22, corpus seed 20261122, int_ops32/int_ops64).  INT_MIN / -1 wraps to INT_MIN,
    INT_MIN % -1 = 0.
    """
    ty = _ity(ins)
    if ty not in _SCALAR_INT:
        raise Unsupported(f"{ins.name}: div/rem integer types are .u16/.u32/.u64/.s16/.s32/.s64 (PTX ISA 9.7.1.8)")
    dt = DTYPE[ty]
    bits = BITS[ty]
    ut = UINT[bits]
    rem = ins.opcode == "rem"
    signed = _signed(ty)
    ones = ut.type(np.iinfo(ut).max)
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    w = ctx.write(ins.args[0], ty)

    def uview(x):
        x = np.asarray(x)
        return x.view(ut) if x.ndim else x.astype(dt).astype(ut)

    def run(st, m):
        x, y = np.asarray(a(st)), np.asarray(b(st))
        ux, uy = uview(x), uview(y)
        if signed:
            nx, ny = x < 0, y < 0
            ux = np.where(nx, np.subtract(ut.type(0), ux, dtype=ut), ux)   # |x| as unsigned (|INT_MIN| fits)
            uy = np.where(ny, np.subtract(ut.type(0), uy, dtype=ut), uy)
        zero = uy == 0
        safe = np.where(zero, ut.type(1), uy)
        if rem:
            r = ux % safe
            if signed:
                r = np.where(nx, np.subtract(ut.type(0), r, dtype=ut), r)
        else:
            r = ux // safe
            if signed:
                r = np.where(nx ^ ny, np.subtract(ut.type(0), r, dtype=ut), r)
        r = np.where(zero, ones, r).astype(ut)
        w(st, r.view(dt) if r.ndim else r.astype(dt), m)
    return run




# ---------------------------------------------------------------------------------------------------------------
# abs / neg / min / max (9.7.1.10 - 9.7.1.13)
# ---------------------------------------------------------------------------------------------------------------
def build_absneg(ins: ir.Instr, ctx: Ctx):
    ty = _ity(ins)
    _need_int(ins, ty)
    if ty in _PACKED:
        if ins.opcode != "neg" or ty != "s8x4":
            raise Unsupported(f"{ins.name}: only neg.s8x4 exists among packed abs/neg (PTX ISA 9.7.1.11)")
        a = ctx.read(ins.args[1], "b32")
        w = ctx.write(ins.args[0], "b32")
        return lambda st, m: w(st, _pack(np.negative(_lanes(a(st), st.T, np.dtype(np.int8), 4))), m)
    if not _signed(ty):
        raise Unsupported(f"{ins.name}: integer abs/neg are for signed types only (PTX ISA 9.7.1.10)")
    dt = DTYPE[ty]
    a = ctx.read(ins.args[1], ty)
    w = ctx.write(ins.args[0], ty)
    if ins.opcode == "abs":   # |INT_MIN| wraps to INT_MIN
        return lambda st, m: w(st, np.where(np.asarray(a(st)) < 0, np.negative(a(st), dtype=dt), a(st)), m)
    return lambda st, m: w(st, np.negative(a(st), dtype=dt), m)




def build_minmax(ins: ir.Instr, ctx: Ctx):
    ty = _ity(ins)
    _need_int(ins, ty)
    f = np.minimum if ins.opcode == "min" else np.maximum
    relu = "relu" in ins.mods
    if relu and ty not in ("s32", "s16x2", "s8x4"):
        raise Unsupported(f"{ins.name}: .relu applies to .s32/.s16x2/.s8x4 only (PTX ISA 9.7.1.12)")
    if ty in _PACKED:
        edt, n = _PACKED[ty]
        a = ctx.read(ins.args[1], "b32")
        b = ctx.read(ins.args[2], "b32")
        w = ctx.write(ins.args[0], "b32")

        def run(st, m):
            r = f(_lanes(a(st), st.T, edt, n), _lanes(b(st), st.T, edt, n))
            if relu:
                r = np.maximum(r, edt.type(0))
            w(st, _pack(r), m)
        return run
    dt = DTYPE[ty]
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    w = ctx.write(ins.args[0], ty)
    if relu:
        return lambda st, m: w(st, np.maximum(f(a(st), b(st)), dt.type(0)), m)
    return lambda st, m: w(st, f(a(st), b(st)), m)





# ---------------------------------------------------------------------------------------------------------------
# popc / clz / bfind / brev / fns (9.7.1.14 - 9.7.1.18)
# ---------------------------------------------------------------------------------------------------------------
def _msb32(x):
    """Index of the most significant set bit of uint32 values (-1 for 0), exact via float64 frexp."""
    _, e = np.frexp(np.asarray(x, dtype=np.uint32).astype(np.float64))
    return e.astype(np.int64) - 1


def _msb(x, bits):
    x = np.asarray(x)
    if bits <= 32:
        return _msb32(x.astype(np.uint32))
    u = x.view(np.uint64) if x.ndim else x.astype(np.uint64)
    hi = (u >> _U64(32)).astype(np.uint32)
    lo = (u & _M32).astype(np.uint32)
    return np.where(hi != 0, 32 + _msb32(hi), _msb32(lo))


def build_bitcount(ins: ir.Instr, ctx: Ctx):
    ty = _ity(ins)
    op = ins.opcode
    ok = ("b32", "b64") if op != "bfind" else ("u32", "u64", "s32", "s64")
    if ty not in ok:
        raise Unsupported(f"{ins.name}: {op} types are {ok} (PTX ISA 9.7.1.14-16)")
    bits = BITS[ty]
    ut = UINT[bits]
    a = ctx.read(ins.args[1], ty)
    w = ctx.write(ins.args[0], "u32")
    if op == "popc":
        return lambda st, m: w(st, np.bitwise_count(np.asarray(a(st)).astype(ut)).astype(np.uint32), m)
    if op == "clz":
        return lambda st, m: w(st, (bits - 1 - _msb(a(st), bits)).astype(np.uint32), m)
    signed = _signed(ty)
    shiftamt = "shiftamt" in ins.mods

    def run(st, m):
        x = np.asarray(a(st))
        if signed:   # negative inputs: find the most significant 0 (PTX ISA 9.7.1.16)
            x = np.where(x < 0, np.invert(x), x)
        p = _msb(x.astype(DTYPE[ty]).view(ut) if x.ndim else x.astype(ut), bits)
        if shiftamt:
            p = np.where(p < 0, p, bits - 1 - p)
        w(st, (p & 0xFFFFFFFF).astype(np.uint32), m)
    return run


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


def build_brev(ins: ir.Instr, ctx: Ctx):
    ty = _ity(ins)
    if ty not in ("b32", "b64"):
        raise Unsupported(f"{ins.name}: brev types are .b32/.b64 (PTX ISA 9.7.1.18)")
    bits = BITS[ty]
    ut = UINT[bits]
    nb = bits // 8
    a = ctx.read(ins.args[1], ty)
    w = ctx.write(ins.args[0], ty)

    def run(st, m):
        x = np.ascontiguousarray(_full(a(st), st.T, ut))
        by = _REV8[x.view(np.uint8).reshape(st.T, nb)][:, ::-1]
        w(st, np.ascontiguousarray(by).view(ut).reshape(st.T), m)
    return run


def build_fns(ins: ir.Instr, ctx: Ctx):
    """Find the n-th set bit (PTX ISA 9.7.1.17); base > 31 is undefined in PTX: we treat it as 'not found'.
    offset = INT_MIN gives 0 as on the H100 (see below), not the ISA's 0xffffffff."""
    mk = ctx.read(ins.args[1], "b32")
    base = ctx.read(ins.args[2], "u32")
    off = ctx.read(ins.args[3], "s32")
    w = ctx.write(ins.args[0], "b32")
    pos = np.arange(32, dtype=np.int64)

    def run(st, m):
        T = st.T
        msk = _full(mk(st), T, np.dtype(np.uint32))
        bs = _full(base(st), T, np.dtype(np.uint32)).astype(np.int64)[:, None]
        o = _full(off(st), T, np.dtype(np.int32)).astype(np.int64)
        bitm = ((msk[:, None] >> pos.astype(np.uint32)) & 1).astype(bool)
        fwd = bitm & (pos >= bs)
        bwd = bitm & (pos <= bs)
        cf = np.cumsum(fwd, axis=1)                        # set bits at or above base, counted upwards
        cb = np.cumsum(bwd[:, ::-1], axis=1)[:, ::-1]      # set bits at or below base, counted downwards
        k = np.abs(o)[:, None]
        hit = np.where(o[:, None] > 0, fwd & (cf == k), bwd & (cb == k))
        found = hit.any(axis=1)
        idx = np.where(o[:, None] > 0, np.argmax(hit, axis=1)[:, None], (31 - np.argmax(hit[:, ::-1], axis=1))[:, None])
        idx = idx[:, 0]
        r = np.where(found, idx, -1)
        zero = o == 0
        b0 = bs[:, 0]
        r = np.where(zero, np.where((b0 < 32) & ((msk >> np.minimum(b0, 31).astype(np.uint32)) & 1 == 1), b0, -1), r)
        # offset = INT_MIN (|offset| = 2^31 set bits can never be found, PTX ISA: 0xffffffff): the H100 returns 0.
        # ptxas expands fns into SASS that negates a negative offset (INT_MIN stays INT_MIN), compares popc < count
        # *signed* (never true), and bit-reverses the found index from 31 (unsigned binary search ends at 31 -> 0).
        # Measured: H100 80GB HBM3, driver 580.159.04, 2026-11-22, corpus seed 20261122 (int_ops32 fns_b32, 4 inputs
        # with offset 0x80000000, any mask/base <= 31: all 0).
        r = np.where(o == -2**31, 0, r)
        r = np.where(b0 > 31, -1, r)
        w(st, (r & 0xFFFFFFFF).astype(np.uint32), m)
    return run


# ---------------------------------------------------------------------------------------------------------------
# bfe / bfi / szext / bmsk (9.7.1.19 - 9.7.1.22)
# ---------------------------------------------------------------------------------------------------------------
def _shl_safe(x, s, ut, bits):
    """x << s with s >= bits giving 0 (numpy shifts are undefined there)."""
    s = np.asarray(s).astype(ut)
    return np.where(s >= bits, ut.type(0), np.left_shift(x, np.minimum(s, bits - 1).astype(ut), dtype=ut))


def _mask_k(k, ut, bits):
    """(1 << k) - 1 for 0 <= k <= bits."""
    allones = ut.type(np.iinfo(ut).max)
    k = np.asarray(k)
    return np.where(k >= bits, allones, np.subtract(_shl_safe(ut.type(1), k, ut, bits), ut.type(1), dtype=ut))


# pos/len operand bits that bfe/bfi use.  PTX ISA 9.7.1.19/20 says pos and len are taken mod 256 (bits 0..7) for
# both widths.  That is what the H100 does for .b32/.u32/.s32, but for the 64-bit forms (which ptxas expands into a
# shift sequence: there is no 64-bit BFE/BFI unit) it uses the *full* 32-bit pos and len as unsigned values: e.g.
# bfe.u64 with pos=0, len=0x2e31d returns all of a (mod-256 rule: the low 29 bits), bfe.s64 with len=0x80000000 gives
# a[63] replicated, bfi.b64 with len=0x100 inserts the whole field.  Measured: H100 80GB HBM3, driver 580.159.04,
# 2026-11-22, corpus seed 20261122 (int_ops64 rows bfe_u64/bfe_s64/bfi_b64: all 256 inputs match this model;
# the sign-bit index min(pos+len-1, 63) is computed without 32-bit wrap-around, which the same data confirm).
_BF_FIELD_MASK = {32: 0xFF, 64: 0xFFFFFFFF}


def build_bfe(ins: ir.Instr, ctx: Ctx):
    ty = _ity(ins)
    if ty not in ("u32", "u64", "s32", "s64"):
        raise Unsupported(f"{ins.name}: bfe types are .u32/.u64/.s32/.s64 (PTX ISA 9.7.1.19)")
    bits = BITS[ty]
    ut = UINT[bits]
    dt = DTYPE[ty]
    signed = _signed(ty)
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], "u32")
    c = ctx.read(ins.args[3], "u32")
    w = ctx.write(ins.args[0], ty)

    fmask = _BF_FIELD_MASK[bits]

    def run(st, m):
        x = _full(a(st), st.T, ut)
        pos = (np.asarray(b(st)).astype(np.int64) & fmask)
        ln = (np.asarray(c(st)).astype(np.int64) & fmask)
        k = np.minimum(ln, np.maximum(bits - pos, 0))        # field bits that come from a
        pc = np.minimum(pos, bits - 1).astype(ut)
        msk = _mask_k(k, ut, bits)
        r = (x >> pc) & msk
        if signed:
            sb = (x >> np.minimum(pos + ln - 1, bits - 1).clip(0).astype(ut)) & ut.type(1)
            sb = sb.astype(bool) & (ln > 0)
            r = np.where(sb, r | ~msk, r)
        w(st, r.view(dt), m)
    return run


def build_bfi(ins: ir.Instr, ctx: Ctx):
    ty = _ity(ins)
    if ty not in ("b32", "b64"):
        raise Unsupported(f"{ins.name}: bfi types are .b32/.b64 (PTX ISA 9.7.1.20)")
    bits = BITS[ty]
    ut = UINT[bits]
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    c = ctx.read(ins.args[3], "u32")
    d = ctx.read(ins.args[4], "u32")
    w = ctx.write(ins.args[0], ty)

    fmask = _BF_FIELD_MASK[bits]

    def run(st, m):
        x = _full(a(st), st.T, ut)
        y = _full(b(st), st.T, ut)
        pos = (np.asarray(c(st)).astype(np.int64) & fmask)
        ln = (np.asarray(d(st)).astype(np.int64) & fmask)
        k = np.minimum(ln, np.maximum(bits - pos, 0))
        pc = np.minimum(pos, bits - 1).astype(ut)
        msk = _mask_k(k, ut, bits) << pc
        w(st, (y & ~msk) | ((x << pc) & msk), m)
    return run


def build_szext(ins: ir.Instr, ctx: Ctx):
    ty = _ity(ins)
    clamp = "clamp" in ins.mods
    if ty not in ("u32", "s32") or not (clamp or "wrap" in ins.mods):
        raise Unsupported(f"{ins.name}: szext is szext.{{clamp,wrap}}.{{u32,s32}} (PTX ISA 9.7.1.21)")
    a = ctx.read(ins.args[1], "u32")
    b = ctx.read(ins.args[2], "u32")
    w = ctx.write(ins.args[0], "u32")
    signed = ty == "s32"
    u32 = np.dtype(np.uint32)

    def run(st, m):
        x = _full(a(st), st.T, u32)
        n = _full(b(st), st.T, u32)
        b1 = n & np.uint32(0x1F)
        too = (n >= 32) if clamp else np.zeros(st.T, bool)
        mask = np.where(too, np.uint32(0), np.uint32(0xFFFFFFFF) << b1)
        if signed:
            sp = (b1 - np.uint32(1)) & np.uint32(0x1F)
            sbit = ((x >> sp) & np.uint32(1)).astype(bool) & (b1 != 0) & ~too
        else:
            sbit = np.zeros(st.T, bool)
        w(st, (x & ~mask) | np.where(sbit, mask, np.uint32(0)), m)
    return run


def build_bmsk(ins: ir.Instr, ctx: Ctx):
    clamp = "clamp" in ins.mods
    if not (clamp or "wrap" in ins.mods):
        raise Unsupported(f"{ins.name}: bmsk is bmsk.{{clamp,wrap}}.b32 (PTX ISA 9.7.1.22)")
    a = ctx.read(ins.args[1], "u32")
    b = ctx.read(ins.args[2], "u32")
    w = ctx.write(ins.args[0], "b32")
    u32 = np.dtype(np.uint32)
    ut = u32

    def run(st, m):
        x = _full(a(st), st.T, u32).astype(np.int64)
        y = _full(b(st), st.T, u32).astype(np.int64)
        a1 = x & 0x1F
        b1 = y & 0x1F
        s = a1 + b1
        mask0 = _shl_safe(ut.type(0xFFFFFFFF), a1, ut, 32)
        mask1 = _shl_safe(ut.type(0xFFFFFFFF), s, ut, 32)
        zero1 = s >= 32
        if clamp:
            mask0 = np.where(x >= 32, ut.type(0), mask0)
            zero1 = zero1 | (x >= 32) | (y >= 32)
        mask1 = np.where(zero1, ut.type(0), np.where(b1 == 0, ut.type(0xFFFFFFFF), mask1))
        w(st, mask0 & ~mask1, m)
    return run


# ---------------------------------------------------------------------------------------------------------------
# dp4a / dp2a (9.7.1.23, 9.7.1.24)
# ---------------------------------------------------------------------------------------------------------------
def build_dp(ins: ir.Instr, ctx: Ctx):
    tys = [x for x in ins.mods if x in ("u32", "s32")]
    if len(tys) != 2:
        raise Unsupported(f"{ins.name}: needs .atype.btype (PTX ISA 9.7.1.23)")
    at, bt = tys
    ct = "u32" if at == bt == "u32" else "s32"
    a = ctx.read(ins.args[1], "b32")
    b = ctx.read(ins.args[2], "b32")
    c = ctx.read(ins.args[3], ct)
    w = ctx.write(ins.args[0], ct)
    two = ins.opcode == "dp2a"
    sel = 2 if "hi" in ins.mods else 0
    if two and not ("hi" in ins.mods or "lo" in ins.mods):
        raise Unsupported(f"{ins.name}: dp2a needs .lo or .hi (PTX ISA 9.7.1.24)")
    ea = (np.int16 if at == "s32" else np.uint16) if two else (np.int8 if at == "s32" else np.uint8)
    eb = np.int8 if bt == "s32" else np.uint8

    def run(st, m):
        T = st.T
        va = _lanes(a(st), T, np.dtype(ea), 2 if two else 4).astype(np.int64)
        vb = _lanes(b(st), T, np.dtype(eb), 4).astype(np.int64)
        if two:
            vb = vb[:, sel:sel + 2]
        s = (va * vb).sum(axis=1) + np.asarray(c(st)).astype(np.int64)
        w(st, (s & 0xFFFFFFFF).astype(np.uint32).view(DTYPE[ct]), m)
    return run


# ---------------------------------------------------------------------------------------------------------------
# logic: and or xor not cnot lop3 (9.7.8.1 - 9.7.8.6)
# ---------------------------------------------------------------------------------------------------------------
def _logic_type(ins):
    ty = _ity(ins)
    if ty != "pred" and (is_float(ty) or ty not in BITS):
        raise Unsupported(f"{ins.name}: logic ops take .pred/.b16/.b32/.b64 (PTX ISA 9.7.8)")
    if ty != "pred":   # untyped: operate on the same-size bit type
        ty = "b" + str(BITS[ty])
    return ty


def build_logic(ins: ir.Instr, ctx: Ctx):
    ty = _logic_type(ins)
    f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[ins.opcode]
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], ty)
    w = ctx.write(ins.args[0], ty)
    return lambda st, m: w(st, f(a(st), b(st)), m)


def build_not(ins: ir.Instr, ctx: Ctx):
    ty = _logic_type(ins)
    a = ctx.read(ins.args[1], ty)
    w = ctx.write(ins.args[0], ty)
    if ins.opcode == "cnot":
        if ty == "pred":
            raise Unsupported("cnot takes .b16/.b32/.b64 (PTX ISA 9.7.8.5)")
        dt = DTYPE[ty]
        return lambda st, m: w(st, (np.asarray(a(st)) == 0).astype(dt), m)
    return lambda st, m: w(st, np.invert(a(st)), m)


# 2-input functions of (b, c) indexed by their 4-bit truth table t, bit (2*b + c)
_F2 = {
    0x0: None, 0xF: "ones",
    0x8: lambda b, c, nb, nc: b & c, 0x4: lambda b, c, nb, nc: b & nc, 0x2: lambda b, c, nb, nc: nb & c,
    0x1: lambda b, c, nb, nc: ~(b | c), 0xC: lambda b, c, nb, nc: b, 0xA: lambda b, c, nb, nc: c,
    0x3: lambda b, c, nb, nc: nb, 0x5: lambda b, c, nb, nc: nc, 0x6: lambda b, c, nb, nc: b ^ c,
    0x9: lambda b, c, nb, nc: ~(b ^ c), 0xE: lambda b, c, nb, nc: b | c, 0x7: lambda b, c, nb, nc: ~(b & c),
    0xD: lambda b, c, nb, nc: b | nc, 0xB: lambda b, c, nb, nc: nb | c,
}


def _lop3_fn(lut: int):
    """F(a, b, c) for an immLut (PTX ISA 9.7.8.6: ta=0xF0, tb=0xCC, tc=0xAA), via Shannon expansion on a."""
    hi, lo = (lut >> 4) & 0xF, lut & 0xF          # a=1 half, a=0 half; bit index within half = 2*b + c

    def g(t, b, c, allones):
        f = _F2[t]
        if f is None:
            return None
        if f == "ones":
            return allones
        return f(b, c, ~b, ~c)

    def fn(a, b, c, allones):
        fh = g(hi, b, c, allones)
        fl = g(lo, b, c, allones)
        if hi == lo:
            return fh if fh is not None else allones & 0
        parts = []
        if fh is not None:
            parts.append(a & fh)
        if fl is not None:
            parts.append(~a & fl)
        if not parts:
            return allones & 0
        return parts[0] | parts[1] if len(parts) == 2 else parts[0]
    return fn


def build_lop3(ins: ir.Instr, ctx: Ctx):
    """lop3.b32 d, a, b, c, immLut  and  lop3.{or,and}.b32 d|p, a, b, c, immLut, q  (PTX ISA 9.7.8.6)."""
    if not isinstance(ins.args[4], ir.Imm):
        raise Unsupported(f"{ins.name}: immLut must be an integer constant (PTX ISA 9.7.8.6)")
    lut = int(ins.args[4].value) & 0xFF
    fn = _lop3_fn(lut)
    a = ctx.read(ins.args[1], "b32")
    b = ctx.read(ins.args[2], "b32")
    c = ctx.read(ins.args[3], "b32")
    boolop = "or" if "or" in ins.mods else ("and" if "and" in ins.mods else None)
    d = ins.args[0]
    allones = np.uint32(0xFFFFFFFF)
    if boolop is None:
        w = ctx.write(d, "b32")
        return lambda st, m: w(st, np.asarray(fn(np.asarray(a(st)), np.asarray(b(st)), np.asarray(c(st)), allones),
                                              dtype=np.uint32), m)
    if not isinstance(d, ir.Pair):
        raise Unsupported(f"{ins.name}: lop3.{boolop} needs a d|p destination (PTX ISA 9.7.8.6)")
    wd = ctx.write(d.items[0], "b32")
    wp = ctx.write(d.items[1], "pred")
    q = ctx.read(ins.args[5], "pred")
    comb = np.logical_or if boolop == "or" else np.logical_and

    def run(st, m):
        r = np.asarray(fn(np.asarray(a(st)), np.asarray(b(st)), np.asarray(c(st)), allones), dtype=np.uint32)
        wd(st, r, m)
        wp(st, comb(r != 0, q(st)), m)
    return run


# ---------------------------------------------------------------------------------------------------------------
# shifts: shf shl shr (9.7.8.7 - 9.7.8.9)
# ---------------------------------------------------------------------------------------------------------------
def build_shf(ins: ir.Instr, ctx: Ctx):
    left = "l" in ins.mods
    if not (left or "r" in ins.mods) or not ("clamp" in ins.mods or "wrap" in ins.mods):
        raise Unsupported(f"{ins.name}: funnel shift is shf.{{l,r}}.{{clamp,wrap}}.b32 (PTX ISA 9.7.8.7)")
    clamp = "clamp" in ins.mods
    a = ctx.read(ins.args[1], "b32")
    b = ctx.read(ins.args[2], "b32")
    c = ctx.read(ins.args[3], "u32")
    w = ctx.write(ins.args[0], "b32")

    def run(st, m):
        v = (np.asarray(b(st)).astype(np.uint64) << _U64(32)) | np.asarray(a(st)).astype(np.uint64)
        s = np.asarray(c(st))
        n = (np.minimum(s, 32) if clamp else (s & 31)).astype(np.uint64)
        r = ((v << n) >> _U64(32)) if left else (v >> n)
        w(st, (r & _M32).astype(np.uint32), m)
    return run


def build_shift(ins: ir.Instr, ctx: Ctx):
    """Shift amounts greater than the register width clamp to the width (PTX ISA 9.7.8.8/9)."""
    ty = _ity(ins)
    if is_float(ty) or ty == "pred" or ty not in BITS or BITS[ty] < 16:
        raise Unsupported(f"{ins.name}: shift types are 16/32/64-bit integer types (PTX ISA 9.7.8.8)")
    left = ins.opcode == "shl"
    if left:
        ty = "b" + str(BITS[ty])
    dt = DTYPE[ty]
    bits = BITS[ty]
    a = ctx.read(ins.args[1], ty)
    b = ctx.read(ins.args[2], "u32")
    w = ctx.write(ins.args[0], ty)
    signed = _signed(ty)
    top = dt.type(bits - 1)

    def run(st, m):
        x = np.asarray(a(st))
        s = np.asarray(b(st))
        sc = np.minimum(s, bits - 1).astype(dt)
        if left:
            r = np.where(s >= bits, dt.type(0), np.left_shift(x, sc, dtype=dt))
        elif signed:
            r = np.right_shift(x, np.minimum(sc, top), dtype=dt)   # >= width: sign fill
        else:
            r = np.where(s >= bits, dt.type(0), np.right_shift(x, sc, dtype=dt))
        w(st, r, m)
    return run


# ---------------------------------------------------------------------------------------------------------------
# prmt (9.7.9.7)
# ---------------------------------------------------------------------------------------------------------------
# byte sources for d.b0..d.b3 per selector c[1:0], from the PTX ISA mode table (listed there as b3 b2 b1 b0)
_PRMT_MODES = {
    "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
    "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
    "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
    "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
    "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
    "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
}
_NIB = np.array([0, 4, 8, 12], dtype=np.uint32)


def build_prmt(ins: ir.Instr, ctx: Ctx):
    mode = next((x for x in ins.mods if x in _PRMT_MODES), None)
    extra = [x for x in ins.mods if x not in _PRMT_MODES and x != "b32"]
    if extra:
        raise Unsupported(f"{ins.name}: unknown prmt mode {extra} (PTX ISA 9.7.9.7)")
    a = ctx.read(ins.args[1], "b32")
    b = ctx.read(ins.args[2], "b32")
    c = ctx.read(ins.args[3], "b32")
    w = ctx.write(ins.args[0], "b32")
    table = np.array(_PRMT_MODES[mode], dtype=np.int64) if mode else None
    u32 = np.dtype(np.uint32)

    def run(st, m):
        T = st.T
        src = np.empty((T, 2), dtype=np.uint32)
        src[:, 0] = a(st)
        src[:, 1] = b(st)
        by = src.view(np.uint8)                      # (T, 8): bytes b0..b7 of {b, a}
        cc = _full(c(st), T, u32)
        if table is None:
            ctl = (cc[:, None] >> _NIB) & np.uint32(0xF)
            r = np.take_along_axis(by, (ctl & np.uint32(7)).astype(np.intp), axis=1)
            sign = (r.view(np.int8) >> 7).view(np.uint8)     # msb=1: replicate the byte's sign
            r = np.where(ctl >= 8, sign, r)
        else:
            r = np.take_along_axis(by, table[(cc & np.uint32(3)).astype(np.intp)], axis=1)
        w(st, np.ascontiguousarray(r, dtype=np.uint8).view(np.uint32).reshape(T), m)
    return run


# keep imm_value importable from here for tests that build immediates
__all__ = ["imm_value", "SINT"]


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"itype": _SCALAR_INT, "atype": ("u16", "u32", "u64", "s16", "s32", "s64", "u16x2", "s16x2"),
        "cctype": ("u32", "s32", "u64", "s64"), "hilo": ("hi", "lo"), "wtype": ("u16", "u32", "s16", "s32"),
        "i32": ("u32", "s32"), "sint": ("s16", "s32", "s64"), "mmatype": ("u16", "u32", "u64", "u16x2", "s16", "s64"),
        "relutype": ("s16x2", "s32"), "b3264": ("b32", "b64"), "bftype": ("u32", "u64", "s32", "s64"),
        "clampwrap": ("clamp", "wrap"), "lgtype": ("pred", "b16", "b32", "b64"), "cntype": ("b16", "b32", "b64"),
        "lr": ("l", "r"), "boolop": ("or", "and"), "shrtype": ("b16", "b32", "b64") + _SCALAR_INT,
        "prmtmode": tuple(_PRMT_MODES)}
FORMS = register(SETS, [
    # form                                  PTX ISA    builder
    ("add.atype",                           "9.7.1.1", build_addsub),
    ("add.sat.s32",                         "9.7.1.1", build_addsub),
    ("sub.itype",                           "9.7.1.2", build_addsub),
    ("sub.sat.s32",                         "9.7.1.2", build_addsub),
    ("mul.hilo.itype",                      "9.7.1.3", build_mul),
    ("mul.wide.wtype",                      "9.7.1.3", build_mul),
    ("mad.hilo.itype",                      "9.7.1.4", build_mad),
    ("mad.wide.wtype",                      "9.7.1.4", build_mad),
    ("mad.hi.sat.s32",                      "9.7.1.4", build_mad),
    ("mul24.hilo.i32",                      "9.7.1.5", build_mul24),
    ("mad24.hilo.i32",                      "9.7.1.6", build_mul24),
    ("mad24.hi.sat.s32",                    "9.7.1.6", build_mul24),
    ("sad.itype",                           "9.7.1.7", build_sad),
    ("div.itype",                           "9.7.1.8", build_divrem),
    ("rem.itype",                           "9.7.1.9", build_divrem),
    ("abs.sint",                            "9.7.1.10", build_absneg),
    ("neg.sint",                            "9.7.1.11", build_absneg),
    ("min.mmatype",                         "9.7.1.12", build_minmax),
    ("min{.relu}.relutype",                 "9.7.1.12", build_minmax),
    ("max.mmatype",                         "9.7.1.13", build_minmax),
    ("max{.relu}.relutype",                 "9.7.1.13", build_minmax),
    ("popc.b3264",                          "9.7.1.14", build_bitcount),
    ("clz.b3264",                           "9.7.1.15", build_bitcount),
    ("bfind{.shiftamt}.bftype",             "9.7.1.16", build_bitcount),
    ("fns.b32",                             "9.7.1.17", build_fns),
    ("brev.b3264",                          "9.7.1.18", build_brev),
    ("bfe.bftype",                          "9.7.1.19", build_bfe),
    ("bfi.b3264",                           "9.7.1.20", build_bfi),
    ("szext.clampwrap.i32",                 "9.7.1.21", build_szext),
    ("bmsk.clampwrap.b32",                  "9.7.1.22", build_bmsk),
    ("dp4a.i32.i32",                        "9.7.1.23", build_dp),
    ("dp2a.hilo.i32.i32",                   "9.7.1.24", build_dp),
    ("add.cc.cctype",                       "9.7.2.1", build_addsub),
    ("addc{.cc}.cctype",                    "9.7.2.2", build_addsub),
    ("sub.cc.cctype",                       "9.7.2.3", build_addsub),
    ("subc{.cc}.cctype",                    "9.7.2.4", build_addsub),
    ("mad.hilo.cc.cctype",                  "9.7.2.5", build_mad),
    ("madc.hilo{.cc}.cctype",               "9.7.2.6", build_mad),
    ("and.lgtype",                          "9.7.8.1", build_logic),
    ("or.lgtype",                           "9.7.8.2", build_logic),
    ("xor.lgtype",                          "9.7.8.3", build_logic),
    ("not.lgtype",                          "9.7.8.4", build_not),
    ("cnot.cntype",                         "9.7.8.5", build_not),
    ("lop3.b32",                            "9.7.8.6", build_lop3),
    ("lop3.boolop.b32",                     "9.7.8.6", build_lop3),
    ("shf.lr.clampwrap.b32",                "9.7.8.7", build_shf),
    ("shl.cntype",                          "9.7.8.8", build_shift),
    ("shr.shrtype",                         "9.7.8.9", build_shift),
    ("prmt.b32{.prmtmode}",                 "9.7.9.7", build_prmt),
])
