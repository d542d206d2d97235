"""Data movement: mov, ld, ld.global.nc, ldu, st, cvta, isspacep, prefetch (PTX ISA 9.7.9)."""
from __future__ import annotations

import numpy as np

from ..core import ir
from ..core.isa import Ctx, Unsupported, inst_type, register
from ..core import memory
from ..core.memory import WIN_BASE, WIN_SHIFT
from ..core.types import BITS, DTYPE, UINT, b128_from_words, b128_words

_SPACES = ("global", "shared", "local", "param", "const")


def _space(ins: ir.Instr, ctx: Ctx) -> str:
    """The state space an ld/st addresses (PTX ISA 9.7.9.8): explicit, else generic; call-parameters live in local."""
    for m in ins.mods:
        base = m.split("::")[0]
        if base in _SPACES:
            if base == "param":
                addr = next((a for a in ins.args if isinstance(a, ir.Addr)), None)
                sp = ctx.symbol_space(addr) if addr is not None else None
                if sp == "local" or (addr is not None and isinstance(addr.base, ir.Reg)):
                    # .param of a call sequence (PTX ISA 5.1.6.2) or a kernel param reached through a register
                    return sp or "param"
            if m == "shared::cluster":
                return m        # distributed shared memory: rank-encoded addresses (cluster.py)
            return base
    return "generic"


def _vec(ins: ir.Instr) -> int:
    """The vector width (.v2 / .v4 / .v8; 1 for a scalar access; not fooled by .volatile)."""
    return next((int(m[1:]) for m in ins.mods if m[:1] == "v" and m[1:].isdigit()), 1)


def build_mov(ins: ir.Instr, ctx: Ctx):
    ty = inst_type(ins)
    d, a = ins.args
    if isinstance(d, ir.Vec) or isinstance(a, ir.Vec):
        return _build_pack(ins, ctx, ty, d, a)
    if isinstance(a, (ir.Sym, ir.Addr)) and not isinstance(a, ir.Addr) or \
            (isinstance(a, ir.Addr) and isinstance(a.base, ir.Sym)):
        # address of a variable (PTX ISA 9.7.9.1: mov of a symbol yields its address in its own state space)
        rd = ctx.read(a, ty)
    else:
        rd = ctx.read(a, ty)
    wr = ctx.write(d, ty)

    def run(st, m):
        wr(st, rd(st), m)
    return run


def _build_pack(ins, ctx, ty, d, a):
    """mov.b64 {lo, hi}, %rd / mov.b64 %rd, {lo, hi}: pack/unpack (PTX ISA 9.7.9.1)."""
    bits = BITS[ty]
    if bits == 128:
        return _build_pack128(ins, ctx, d, a)
    if isinstance(a, ir.Vec):                       # pack
        n = len(a.items)
        eb = bits // n
        rds = ctx.read_vec(a, f"b{eb}")
        wr = ctx.write(d, ty)
        ud = UINT[bits]

        def run(st, m):
            acc = np.zeros(st.T, dtype=ud)
            for k, rd in enumerate(rds):
                acc = acc | (np.asarray(rd(st)).astype(ud) << ud.type(k * eb))
            wr(st, acc, m)
        return run
    n = len(d.items)
    eb = bits // n
    rd = ctx.read(a, ty if ty.startswith("b") else f"b{bits}")
    wrs = ctx.write_vec(d, f"b{eb}")
    ud = UINT[bits]
    mask = ud.type((1 << eb) - 1) if eb < 64 else None

    def run(st, m):
        v = np.asarray(rd(st)).view(ud) if np.asarray(rd(st)).dtype != ud else rd(st)
        for k, w in enumerate(wrs):
            w(st, ((v >> ud.type(k * eb)) & mask).astype(UINT[eb]), m)
    return run


def _build_pack128(ins, ctx, d, a):
    """mov.b128 %rq, {lo, hi} / mov.b128 {lo, hi}, %rq with .b64 halves (PTX ISA 9.7.9.1, .b128 since PTX 8.3);
    element 0 is the low 64 bits. Halves of other widths (4 x .b32) are refused."""
    vec = a if isinstance(a, ir.Vec) else d
    if len(vec.items) != 2:
        raise Unsupported(f"mov.b128 with {len(vec.items)} vector elements: the emulator supports {{lo, hi}} .b64 "
                          f"halves (PTX ISA 9.7.9.1)")
    if isinstance(a, ir.Vec):                       # pack
        lo, hi = ctx.read_vec(a, "b64")
        wr = ctx.write(d, "b128")

        def run(st, m):
            w = np.empty((st.T, 2), np.uint64)
            w[:, 0] = lo(st)
            w[:, 1] = hi(st)
            wr(st, b128_from_words(w), m)
        return run
    rd = ctx.read(a, "b128")
    wlo, whi = ctx.write_vec(d, "b64")

    def run_unpack(st, m):
        w = b128_words(np.broadcast_to(rd(st), (st.T,)))
        wlo(st, w[:, 0].copy(), m)
        whi(st, w[:, 1].copy(), m)
    return run_unpack


def _access(ins: ir.Instr, ctx: Ctx, addr_op, regs: list, what: str):
    """Common decode of ld/st: (state space, vector width, element dtype, address reader)."""
    ty = inst_type(ins)
    n = _vec(ins)
    if n != len(regs):
        raise Unsupported(f"vector width .v{n} does not match {len(regs)} {what} registers")
    if ty == "b128":
        ops = ins.args[0].items if isinstance(ins.args[0], ir.Vec) else (ins.args[0],) if what == "destination" \
            else ins.args[1].items if isinstance(ins.args[1], ir.Vec) else (ins.args[1],)
        for op in ops:
            if isinstance(op, ir.Reg) and BITS.get(op.ty) != 128:
                raise Unsupported(f"{ins.opcode}.b128 needs .b128 registers, got .{op.ty} {op} (PTX ISA 9.7.9.8)")
    return _space(ins, ctx), n, DTYPE[ty], ctx.address(addr_op)


# .b128 (PTX ISA 9.7.9.8 ld / 9.7.9.10 st: type .b128, PTX 8.3, sm_70+): 16 bytes per element, naturally aligned;
# moved as two little-endian u64 words (the register's bytes are the memory bytes).
def _build_ld_b128(ins, wrs, space, n, addr):
    def run(st, m):
        v = st.load(ins, space, addr(st), m, np.uint64, 2 * n).reshape(st.T, n, 2)
        for k, w in enumerate(wrs):
            w(st, b128_from_words(v[:, k, :]), m)
    return run


def _build_st_b128(ins, rds, space, n, addr):
    def run(st, m):
        words = np.empty((st.T, n, 2), np.uint64)
        for k, r in enumerate(rds):
            words[:, k, :] = b128_words(np.broadcast_to(r(st), (st.T,)))
        st.store(ins, space, addr(st), m, words.reshape(st.T, 2 * n), np.uint64, 2 * n)
    return run


def build_ld(ins: ir.Instr, ctx: Ctx):
    wrs = ctx.write_vec(ins.args[0], inst_type(ins))
    space, n, dt, addr = _access(ins, ctx, ins.args[1], wrs, "destination")
    if inst_type(ins) == "b128":
        return _build_ld_b128(ins, wrs, space, n, addr)
    if n == 1:
        w = wrs[0]

        def run(st, m):
            w(st, st.load(ins, space, addr(st), m, dt, 1), m)
        return run

    def runv(st, m):
        v = st.load(ins, space, addr(st), m, dt, n)
        for k, w in enumerate(wrs):
            w(st, v[:, k], m)
    return runv


def build_st(ins: ir.Instr, ctx: Ctx):
    rds = ctx.read_vec(ins.args[1], inst_type(ins))
    space, n, dt, addr = _access(ins, ctx, ins.args[0], rds, "source")
    if inst_type(ins) == "b128":
        return _build_st_b128(ins, rds, space, n, addr)
    if n == 1:
        rd = rds[0]

        def run(st, m):
            st.store(ins, space, addr(st), m, rd(st), dt, 1)
        return run

    def runv(st, m):
        vals = np.stack([np.broadcast_to(np.asarray(r(st)).astype(dt, copy=False), (st.T,)) for r in rds], axis=1)
        st.store(ins, space, addr(st), m, vals, dt, n)
    return runv


def build_cvta(ins: ir.Instr, ctx: Ctx):
    """cvta{.to}.space.size d, a  (PTX ISA 9.7.9.19): convert between generic and state-space addresses."""
    to = "to" in ins.mods
    # .shared::cta and .shared::cluster share one generic window (cluster.py), .param::entry is .param
    space = next(m.split("::")[0] for m in ins.mods if m.split("::")[0] in _SPACES)
    ty = inst_type(ins)
    base = np.uint64(WIN_BASE[space]) if space != "global" else np.uint64(0)
    rd = ctx.read(ins.args[1], ty)
    wr = ctx.write(ins.args[0], ty)
    if space == "global":
        def run(st, m):
            wr(st, rd(st), m)
        return run
    dt = DTYPE[ty]
    if to:
        def run_to(st, m):
            wr(st, (np.asarray(rd(st)).astype(np.uint64) - base).astype(dt), m)
        return run_to

    def run_from(st, m):
        wr(st, (np.asarray(rd(st)).astype(np.uint64) + base).astype(dt), m)
    return run_from


def build_isspacep(ins: ir.Instr, ctx: Ctx):
    """isspacep.space p, a (PTX ISA 9.7.9.18).  .shared (= .shared::cta) is true only for the executing CTA's
    shared memory; .shared::cluster for the shared memory of any CTA of the cluster (rank encoding: cluster.py)."""
    space = ins.mods[0].split("::")[0]
    rd = ctx.read(ins.args[1], "u64")
    wr = ctx.write(ins.args[0], "pred")
    w = np.int64(WIN_BASE[space] >> WIN_SHIFT)
    if space == "shared":
        from ..hw import cluster as cl
        whole = ins.mods[0] == "shared::cluster"

        def run_shared(st, m):
            a = np.broadcast_to(np.asarray(rd(st)).astype(np.uint64), (st.T,))
            inwin = (a >> np.uint64(WIN_SHIFT)).astype(np.int64) == w
            off = (a - np.uint64(memory.SHARED_WIN)).astype(np.int64)
            hi = off >> cl.RANK_SHIFT
            n = cl.size(st)
            ok = inwin & (hi < n)
            if not whole:    # the executing CTA only: its own rank in bits 31..24
                ok &= hi == cl.rank_of(st, st.cta_of)
            wr(st, ok, m)
        return run_shared

    def run(st, m):
        wr(st, (np.asarray(rd(st)) >> np.uint64(WIN_SHIFT)).astype(np.int64) == w, m)
    return run


def build_hint(ins: ir.Instr, ctx: Ctx):
    """Cache hints have no architectural effect (PTX ISA 9.7.9.15-17); createpolicy yields an opaque policy."""
    if ins.opcode == "createpolicy":
        wr = ctx.write(ins.args[0], "b64")

        def run_pol(st, m):
            wr(st, np.uint64(0x1000000000000000), m)
        return run_pol

    def run(st, m):
        return None
    return run


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
_LDT = ("b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f32", "f64")
SETS = {"movtype": ("pred", "b16", "b32", "b64", "b128", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64"),
        "ldss": ("const", "global", "local", "param::entry", "param::func", "param", "shared", "shared::cta",
                 "shared::cluster"),
        "stss": ("global", "local", "param", "param::func", "shared", "shared::cta", "shared::cluster"),
        "ldcop": ("ca", "cg", "cs", "lu", "cv"), "stcop": ("wb", "cg", "cs", "wt"), "nccop": ("ca", "cg", "cs"),
        "L1evict": ("L1::evict_normal", "L1::evict_unchanged", "L1::evict_first", "L1::evict_last",
                    "L1::no_allocate"),
        "L2evict": ("L2::evict_normal", "L2::evict_first", "L2::evict_last"),
        "prefetch_size": ("L2::64B", "L2::128B", "L2::256B"), "vec": ("v2", "v4", "v8"), "ldtype": _LDT,
        # .relaxed / .acquire / .release spaces; .volatile also .local (PTX ISA 9.1; NVRTC emits it)
        "vss": ("global", "shared", "shared::cta", "shared::cluster"),
        "volss": ("global", "shared", "shared::cta", "shared::cluster", "local"),
        # the 256-bit accesses (sm_100), which the level-2 eviction priorities require
        "wide": ("v8.b32", "v8.u32", "v8.s32", "v8.f32", "v4.b64", "v4.u64", "v4.s64", "v4.f64"),
        "scope": ("cta", "cluster", "gpu", "sys"), "lduvec": ("v2", "v4"),
        "space": ("const", "global", "local", "shared", "shared::cta", "shared::cluster", "param", "param::entry"),
        "pfspace": ("global", "local"), "pflevel": ("L1", "L2"),
        "size": ("u64",),     # cvta .u32 needs .address_size 32 (ptxas), which the emulator does not run
        "pfevict": ("L2::evict_last", "L2::evict_normal"), "tmspace": ("const", "param"),
        "primary": ("L2::evict_last", "L2::evict_normal", "L2::evict_first", "L2::evict_unchanged"),
        "secondary": ("L2::evict_first", "L2::evict_unchanged")}
FORMS = register(SETS, [
    # form                                                                               PTX ISA     builder
    ("mov.movtype",                                                                     "9.7.9.3", build_mov),
    ("ld{.weak}{.ldss}{.ldcop}{.L2::cache_hint}{.prefetch_size}{.vec}.ldtype",          "9.7.9.8", build_ld),
    ("ld{.weak}{.global}.L1evict{.L2evict}{.L2::cache_hint}{.prefetch_size}{.vec}.ldtype", "9.7.9.8", build_ld),
    ("ld{.weak}{.global}.L2evict{.L2::cache_hint}{.prefetch_size}.wide",                "9.7.9.8", build_ld),
    ("ld.volatile{.volss}{.L2evict}{.prefetch_size}{.vec}.ldtype",                      "9.7.9.8", build_ld),
    ("ld.relaxed.scope{.vss}{.L1evict}{.L2evict}{.L2::cache_hint}{.prefetch_size}{.vec}.ldtype",
     "9.7.9.8", build_ld),
    ("ld.acquire.scope{.vss}{.L1evict}{.L2evict}{.L2::cache_hint}{.prefetch_size}{.vec}.ldtype",
     "9.7.9.8", build_ld),
    ("ld.mmio.relaxed.sys{.global}.ldtype",                                             "9.7.9.8", build_ld),
    ("ld.global{.nccop}.nc{.L2::cache_hint}{.prefetch_size}{.vec}.ldtype",              "9.7.9.9", build_ld),
    ("ld.global.nc{.L1evict}{.L2evict}{.L2::cache_hint}{.prefetch_size}{.vec}.ldtype",  "9.7.9.9", build_ld),
    ("ldu{.global}{.lduvec}.ldtype",                                                    "9.7.9.10", build_ld),
    ("st{.weak}{.stss}{.stcop}{.L2::cache_hint}{.vec}.ldtype",                          "9.7.9.11", build_st),
    ("st{.weak}{.global}.L1evict{.L2evict}{.L2::cache_hint}{.vec}.ldtype",              "9.7.9.11", build_st),
    ("st{.weak}{.global}.L2evict{.L2::cache_hint}.wide",                                "9.7.9.11", build_st),
    ("st.volatile{.volss}{.vec}.ldtype",                                                "9.7.9.11", build_st),
    ("st.relaxed.scope{.vss}{.L1evict}{.L2evict}{.L2::cache_hint}{.vec}.ldtype",        "9.7.9.11", build_st),
    ("st.release.scope{.vss}{.L1evict}{.L2evict}{.L2::cache_hint}{.vec}.ldtype",        "9.7.9.11", build_st),
    ("st.mmio.relaxed.sys{.global}.ldtype",                                             "9.7.9.11", build_st),
    ("prefetch{.pfspace}.pflevel",                                                      "9.7.9.15", build_hint),
    ("prefetch.global.pfevict",                                                         "9.7.9.15", build_hint),
    ("prefetchu.L1",                                                                    "9.7.9.15", build_hint),
    ("prefetch{.tmspace}.tensormap",                                                    "9.7.9.15", build_hint),
    ("applypriority{.global}.L2::evict_normal",                                         "9.7.9.16", build_hint),
    ("discard{.global}.L2",                                                             "9.7.9.17", build_hint),
    ("createpolicy.range{.global}.primary{.secondary}.b64",                             "9.7.9.18", build_hint),
    ("createpolicy.fractional.primary{.secondary}.b64",                                 "9.7.9.18", build_hint),
    ("createpolicy.cvt.L2.b64",                                                         "9.7.9.18", build_hint),
    ("isspacep.space",                                                                  "9.7.9.19", build_isspacep),
    ("cvta.space.size",                                                                 "9.7.9.20", build_cvta),
    ("cvta.to.space.size",                                                              "9.7.9.20", build_cvta),
])
