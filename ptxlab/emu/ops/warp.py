"""Warp-level data exchange and voting (PTX ISA 9.7.8: shfl.sync 9.7.8.6, vote.sync 9.7.8.5, match.sync 9.7.8.8,
activemask 9.7.8.9, redux.sync 9.7.8.10, elect.sync 9.7.8.12).

Every ``.sync`` op first applies the membermask rule (``ops.warp_sync.warp_sync_ready``): lanes wait (RETRY) until
every non-exited lane named in their membermask executes the instruction.  Then the warp is processed as a
(T/32, 32) matrix.  "Active" lanes are the executing lanes ``m``.
"""
from __future__ import annotations

import numpy as np

from ..core import ir
from ..core.isa import RETRY, Ctx, Unsupported, inst_type, register
from .warp_sync import warp_sync_ready

_LANE_BITS = np.uint32(1) << np.arange(32, dtype=np.uint32)


def _act(st, m):
    return np.ones(st.T, bool) if m is None else m


def _warp_bits(flags: np.ndarray) -> np.ndarray:
    """(T,) bool → (T,) uint32: each thread gets its warp's lane bitmap of ``flags``."""
    w = flags.reshape(-1, 32).astype(np.uint32) @ _LANE_BITS.astype(np.uint64)
    w = w.astype(np.uint32)
    return np.repeat(w, 32)


def _mask_reader(ctx: Ctx, ins: ir.Instr, pos: int):
    if len(ins.args) <= pos:
        raise Unsupported(f"{ins.name}: missing membermask operand ({ins.where()})")
    return ctx.read(ins.args[pos], "b32")


def _bcast(v, T, dt):
    return np.broadcast_to(np.asarray(v).astype(dt, copy=False), (T,))


def build_shfl(ins: ir.Instr, ctx: Ctx):
    """shfl.sync.mode.b32 d[|p], a, b, c, membermask (PTX ISA 9.7.8.6):
        lane = laneid; bval = b[4:0]; cval = c[4:0]; segmask = c[12:8]
        maxLane = (lane & segmask) | (cval & ~segmask); minLane = lane & segmask
        up:   j = lane - bval; pval = (j >= maxLane)
        down: j = lane + bval; pval = (j <= maxLane)
        bfly: j = lane ^ bval; pval = (j <= maxLane)
        idx:  j = minLane | (bval & ~segmask); pval = (j <= maxLane)
        if !pval: j = lane;  d = a[j]; p = pval
    A source lane that is exited or not executing gives an undefined value on hardware; the emulator returns that
    lane's current register value (documented in ptx_docs/emulator_approximations.md)."""
    if "sync" not in ins.mods:
        raise Unsupported(f"{ins.name}: shfl without .sync is not supported on sm_70+ (PTX ISA 9.7.8.6)")
    mode = next((x for x in ins.mods if x in ("up", "down", "bfly", "idx")), None)
    if mode is None or inst_type(ins) != "b32":
        raise Unsupported(f"{ins.name}: expected shfl.sync.{{up,down,bfly,idx}}.b32")
    d = ins.args[0]
    dd, dp = (d.items[0], d.items[1]) if isinstance(d, ir.Pair) else (d, None)
    wd = ctx.write(dd, "b32")
    wp = ctx.write(dp, "pred") if dp is not None else None
    ra = ctx.read(ins.args[1], "b32")
    rb = ctx.read(ins.args[2], "b32")
    rc = ctx.read(ins.args[3], "b32")
    rmask = _mask_reader(ctx, ins, 4)

    def run(st, m):
        mv = rmask(st)
        if warp_sync_ready(st, ins, m, mv) is not None:
            return RETRY
        T = st.T
        lane = st.lane.astype(np.int64)
        b = _bcast(rb(st), T, np.uint32).astype(np.int64) & 31
        c = _bcast(rc(st), T, np.uint32).astype(np.int64)
        cval = c & 31
        seg = (c >> 8) & 31
        max_lane = (lane & seg) | (cval & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j = lane - b
            pval = j >= max_lane
        elif mode == "down":
            j = lane + b
            pval = j <= max_lane
        elif mode == "bfly":
            j = lane ^ b
            pval = j <= max_lane
        else:
            j = min_lane | (b & ~seg & 31)
            pval = j <= max_lane
        j = np.where(pval, j, lane)
        a = _bcast(ra(st), T, np.uint32)
        src = (np.arange(T, dtype=np.int64) - lane) + j
        wd(st, a[src], m)
        if wp is not None:
            wp(st, pval, m)
    return run


def build_vote(ins: ir.Instr, ctx: Ctx):
    """vote.sync.{all,any,uni}.pred d, {!}a, membermask; vote.sync.ballot.b32 d, {!}a, membermask (9.7.8.5)."""
    if "sync" not in ins.mods:
        raise Unsupported(f"{ins.name}: vote without .sync is not supported on sm_70+ (PTX ISA 9.7.8.5)")
    mode = next((x for x in ins.mods if x in ("all", "any", "uni", "ballot")), None)
    if mode is None:
        raise Unsupported(f"{ins.name}: unknown vote mode")
    rp = ctx.read(ins.args[1], "pred")
    rmask = _mask_reader(ctx, ins, 2)
    w = ctx.write(ins.args[0], "b32" if mode == "ballot" else "pred")

    def run(st, m):
        mv = rmask(st)
        if warp_sync_ready(st, ins, m, mv) is not None:
            return RETRY
        T = st.T
        act = _act(st, m)
        mask = _bcast(mv, T, np.uint32)
        p = _bcast(rp(st), T, np.bool_)
        grp = _warp_bits(act) & mask                  # active lanes of this thread's membermask
        yes = _warp_bits(p & act) & mask
        if mode == "ballot":
            w(st, yes, m)
        elif mode == "any":
            w(st, yes != 0, m)
        elif mode == "all":
            w(st, yes == grp, m)
        else:
            w(st, (yes == grp) | (yes == 0), m)
    return run


def build_activemask(ins: ir.Instr, ctx: Ctx):
    """activemask.b32 d (9.7.8.9): lanes of the warp executing this instruction together."""
    w = ctx.write(ins.args[0], "b32")

    def run(st, m):
        w(st, _warp_bits(_act(st, m)), m)
    return run


def _same_matrix(vals: np.ndarray) -> np.ndarray:
    """(T,) → (T, 32) bool: eq[t, l] = value of lane l of t's warp == value of t."""
    v = vals.reshape(-1, 32)
    return (v[:, :, None] == v[:, None, :]).reshape(-1, 32)


def _bits_of(flags_t32: np.ndarray) -> np.ndarray:
    return (flags_t32.astype(np.uint64) @ _LANE_BITS.astype(np.uint64)).astype(np.uint32)


def _members(st, act, mask):
    """(T, 32) bool: lane l is active and in thread t's membermask."""
    inmask = ((mask[:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(bool)
    return inmask & np.repeat(act.reshape(-1, 32), 32, axis=0)


def _sync_members(st, ins: ir.Instr, m, rmask):
    """The .sync preamble of match/redux: None while the membermask's lanes have not all arrived (the caller returns
    RETRY), else the (T, 32) member matrix of :func:`_members`."""
    mv = rmask(st)
    if warp_sync_ready(st, ins, m, mv) is not None:
        return None
    return _members(st, _act(st, m), _bcast(mv, st.T, np.uint32))


def build_match(ins: ir.Instr, ctx: Ctx):
    """match.any.sync.b32/b64 d, a, membermask; match.all.sync.b32/b64 d[|p], a, membermask (9.7.8.8)."""
    mode = next((x for x in ins.mods if x in ("any", "all")), None)
    ty = inst_type(ins)
    if mode is None or "sync" not in ins.mods or ty not in ("b32", "b64"):
        raise Unsupported(f"{ins.name}: expected match.{{any,all}}.sync.{{b32,b64}}")
    d = ins.args[0]
    dd, dp = (d.items[0], d.items[1]) if isinstance(d, ir.Pair) else (d, None)
    if dp is not None and mode == "any":
        raise Unsupported(f"{ins.name}: match.any has no predicate destination")
    wd = ctx.write(dd, "b32")
    wp = ctx.write(dp, "pred") if dp is not None else None
    ra = ctx.read(ins.args[1], ty)
    rmask = _mask_reader(ctx, ins, 2)
    dt = np.uint32 if ty == "b32" else np.uint64

    def run(st, m):
        mem = _sync_members(st, ins, m, rmask)
        if mem is None:
            return RETRY
        eq = _same_matrix(_bcast(ra(st), st.T, dt)) & mem
        if mode == "any":
            wd(st, _bits_of(eq), m)
            return None
        allsame = (eq == mem).all(axis=1)
        wd(st, np.where(allsame, _bits_of(mem), np.uint32(0)), m)
        if wp is not None:
            wp(st, allsame, m)
    return run


def build_redux(ins: ir.Instr, ctx: Ctx):
    """redux.sync.op.type d, a, membermask (9.7.8.10): add/min/max .u32/.s32, and/or/xor .b32; min/max{.abs}{.NaN}.f32
    (sm_100a).  The reduction covers the active lanes of the membermask; add wraps modulo 2^32."""
    if "sync" not in ins.mods:
        raise Unsupported(f"{ins.name}: redux requires .sync")
    op = next((x for x in ins.mods if x in ("add", "min", "max", "and", "or", "xor")), None)
    ty = inst_type(ins)
    if op is None:
        raise Unsupported(f"{ins.name}: unknown redux operation")
    rmask = _mask_reader(ctx, ins, 2)
    w = ctx.write(ins.args[0], ty)
    if ty == "f32":
        if op not in ("min", "max"):
            raise Unsupported(f"{ins.name}: only min/max are defined for redux .f32")
        from .floating_point import F32_NAN
        use_abs, nanp = ins.has("abs"), ins.has("NaN")
        ra = ctx.read(ins.args[1], "b32")

        def runf(st, m):
            mem = _sync_members(st, ins, m, rmask)
            if mem is None:
                return RETRY
            bits = _bcast(ra(st), st.T, np.uint32)
            if use_abs:
                bits = bits & np.uint32(0x7FFFFFFF)
            # monotone integer key of the f32 bits (-0 < +0): two's complement of sign-magnitude
            key = bits.view(np.int32)
            key = np.where(key < 0, key ^ np.int32(0x7FFFFFFF), key).reshape(-1, 32)
            kk = np.repeat(key, 32, axis=0)
            nan = np.repeat(((bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)).reshape(-1, 32), 32, axis=0)
            valid = mem & ~nan
            fill = np.iinfo(np.int32).max if op == "min" else np.iinfo(np.int32).min
            kv = np.where(valid, kk, fill)
            r = kv.min(axis=1) if op == "min" else kv.max(axis=1)
            r = np.where(r < 0, r ^ np.int32(0x7FFFFFFF), r).astype(np.int32).view(np.uint32)
            none = ~valid.any(axis=1)
            if nanp:
                none |= (mem & nan).any(axis=1)
            w(st, np.where(none, F32_NAN, r), m)
        return runf
    if ty not in ("u32", "s32", "b32"):
        raise Unsupported(f"{ins.name}: redux type .{ty} is not supported")
    signed = ty == "s32"
    ra = ctx.read(ins.args[1], "u32")

    def run(st, m):
        mem = _sync_members(st, ins, m, rmask)
        if mem is None:
            return RETRY
        v = _bcast(ra(st), st.T, np.uint32).reshape(-1, 32)
        vv = np.repeat(v, 32, axis=0)
        if op == "add":
            r = np.where(mem, vv.astype(np.uint64), 0).sum(axis=1).astype(np.uint32)
        elif op in ("and", "or", "xor"):
            ident = np.uint32(0xFFFFFFFF) if op == "and" else np.uint32(0)
            f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
            r = f.reduce(np.where(mem, vv, ident), axis=1)
        else:
            x = vv.view(np.int32) if signed else vv
            info = np.iinfo(x.dtype)
            if op == "min":
                r = np.where(mem, x, info.max).min(axis=1)
            else:
                r = np.where(mem, x, info.min).max(axis=1)
            r = r.astype(x.dtype).view(np.uint32)
        w(st, r, m)
    return run


def build_elect(ins: ir.Instr, ctx: Ctx):
    """elect.sync d|p, membermask (9.7.8.12): the lowest active lane of membermask is the leader; d = its laneid for
    every executing thread, p = true on the leader only."""
    if "sync" not in ins.mods:
        raise Unsupported(f"{ins.name}: elect requires .sync")
    d = ins.args[0]
    dd, dp = (d.items[0], d.items[1]) if isinstance(d, ir.Pair) else (d, None)
    wd = ctx.write(dd, "b32")
    wp = ctx.write(dp, "pred") if dp is not None else None
    rmask = _mask_reader(ctx, ins, 1)

    def run(st, m):
        mv = rmask(st)
        if warp_sync_ready(st, ins, m, mv) is not None:
            return RETRY
        T = st.T
        act = _act(st, m)
        grp = _warp_bits(act) & _bcast(mv, T, np.uint32)
        low = grp & (~grp + np.uint32(1))                   # lowest set bit
        leader = np.where(grp == 0, 0, np.log2(np.maximum(low, 1)).astype(np.uint32)).astype(np.uint32)
        wd(st, leader, m)
        if wp is not None:
            wp(st, (grp != 0) & (leader == st.lane), m)
    return run


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"shflmode": ("up", "down", "bfly", "idx"), "vmode": ("all", "any", "uni"), "ms": ("b32", "b64"),
        "rop": ("add", "min", "max"), "rty": ("u32", "s32"), "bop": ("and", "or", "xor"), "fop": ("min", "max")}
FORMS = register(SETS, [
    # form                                     PTX ISA      builder
    ("shfl.sync.shflmode.b32",                "9.7.9.6",   build_shfl),
    ("vote.sync.vmode.pred",                  "9.7.13.9",  build_vote),
    ("vote.sync.ballot.b32",                  "9.7.13.9",  build_vote),
    ("match.any.sync.ms",                     "9.7.13.10", build_match),
    ("match.all.sync.b32",                     "9.7.13.10", build_match),
    ("activemask.b32",                        "9.7.13.11", build_activemask),
    ("redux.sync.rop.rty",                    "9.7.13.12", build_redux),
    ("redux.sync.bop.b32",                    "9.7.13.12", build_redux),
    ("redux.sync.fop{.abs}{.NaN}.f32",        "9.7.13.12", build_redux),
    ("elect.sync",                            "9.7.13.14", build_elect),
])
