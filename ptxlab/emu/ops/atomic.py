"""Atomic memory operations: atom and red (PTX ISA 9.7.12.x: 9.7.12.3 atom, 9.7.12.4 red).

    atom{.sem}{.scope}{.space}.op{.L2::cache_hint}{.vec}.type d, [a], b{, c}{, cache-policy}
    red{.sem}{.scope}{.space}.op{.L2::cache_hint}{.vec}.type     [a], b{, cache-policy}

Memory-ordering (.relaxed/.acquire/.release/.acq_rel) and scope (.cta/.cluster/.gpu/.sys) qualifiers are accepted: the
emulator performs every access immediately in program order, which satisfies all of them.

``.shared::cluster`` and generic addresses may name a peer CTA's shared memory (cluster.py); the memory identity of a
shared word is (owning CTA, offset), so threads of different CTAs of a cluster hitting one word serialize together.

Several threads of one instruction hitting the same address are performed one after another in increasing wave thread
order (a fixed legal serialization), each seeing the previous thread's result.  Unique addresses are one vectorized
read-modify-write; integer add with collisions uses a segmented prefix sum; other colliding ops run one "round" per
rank within the address group (vectorized over groups).

Floating-point add: f32 on global memory flushes subnormal inputs and results to sign-preserving zero, on shared memory
it keeps them (PTX ISA 9.7.12.3 and the observed hardware behaviour); f64/f16/bf16 add round to nearest even without
flushing (f16/bf16 require .noftz).  NaN results are canonical.
"""
from __future__ import annotations

import numpy as np

from ..core import ir
from ..core.isa import Ctx, Unsupported, inst_type, register
from .floating_point import f32_add, f64_add, round_half, two_sum, _half_vals, _pack2, _unpack2

_SPACES = ("global", "shared", "shared::cta", "shared::cluster")
_SEM = ("relaxed", "acquire", "release", "acq_rel", "sc")
_SCOPE = ("cta", "cluster", "gpu", "sys")
_OPS = ("and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max")
_TYPES = {
    "and": ("b32", "b64"), "or": ("b32", "b64"), "xor": ("b32", "b64"),
    "cas": ("b16", "b32", "b64"), "exch": ("b32", "b64"),
    "add": ("u32", "s32", "u64", "s64", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2"),
    "inc": ("u32",), "dec": ("u32",),
    "min": ("u32", "s32", "u64", "s64"), "max": ("u32", "s32", "u64", "s64"),
}
_DT = {"b16": np.uint16, "b32": np.uint32, "b64": np.uint64, "u32": np.uint32, "s32": np.uint32,
       "u64": np.uint64, "s64": np.uint64, "f32": np.uint32, "f64": np.uint64, "f16": np.uint16,
       "f16x2": np.uint32, "bf16": np.uint16, "bf16x2": np.uint32}


def _parse(ins: ir.Instr):
    space = "generic"
    op = None
    vec = 1
    for mname in ins.mods:
        base = mname.split("::")[0]
        if mname == "shared::cluster":
            space = mname       # a peer CTA's shared memory (rank-encoded address, cluster.py)
        elif base in ("global", "shared"):
            space = base
        elif mname in _OPS and op is None:
            op = mname
        elif mname.startswith("v") and mname[1:].isdigit():
            vec = int(mname[1:])
        elif mname in _SEM or mname in _SCOPE or mname in ("noftz",) or mname.startswith("L2") or \
                mname in _DT or mname in ("level",):
            pass
        else:
            raise Unsupported(f"{ins.name}: modifier .{mname} is not supported by the emulator ({ins.where()})")
    ty = inst_type(ins)
    if op is None:
        raise Unsupported(f"{ins.name}: no atomic operation ({ins.where()})")
    if ty not in _TYPES[op]:
        raise Unsupported(f"{ins.name}: .{op}.{ty} is not supported by the emulator ({ins.where()})")
    if ty in ("f16", "bf16", "f16x2", "bf16x2") and not ins.has("noftz"):
        raise Unsupported(f"{ins.name}: half-precision atomic add requires .noftz (PTX ISA 9.7.12.3)")
    if vec > 1 and (op != "add" or ty not in ("f32", "f16x2", "bf16x2", "f16", "bf16")):
        raise Unsupported(f"{ins.name}: vector atomics are supported for add.f32/f16x2/bf16x2 only")
    return space, op, ty, vec


def _signed(x, ty):
    return x.view(np.int32 if ty == "s32" else np.int64)


def _combine(op, ty, cur, b, c, shared):
    """New memory value for old ``cur`` and operand(s) ``b`` (``c`` for cas); arrays of the storage dtype."""
    if op == "add":
        if ty in ("u32", "s32", "u64", "s64"):
            return cur + b
        if ty == "f32":
            return np.where(shared, f32_add(cur, b, "rn", False), f32_add(cur, b, "rn", True)).astype(np.uint32)
        if ty == "f64":
            return f64_add(cur, b, "rn")
        fmt = "f16" if ty.startswith("f16") else "bf16"

        def hadd(x, y):
            s, e = two_sum(_half_vals(x, fmt), _half_vals(y, fmt))
            return round_half(s, np.sign(e), fmt)
        if ty in ("f16x2", "bf16x2"):
            return _pack2(hadd(_unpack2(cur), _unpack2(b)))
        return hadd(cur, b)
    if op == "and":
        return cur & b
    if op == "or":
        return cur | b
    if op == "xor":
        return cur ^ b
    if op == "exch":
        return np.broadcast_to(b, np.shape(cur)).astype(cur.dtype)
    if op == "cas":
        return np.where(cur == b, c, cur).astype(cur.dtype)
    if op == "inc":
        return np.where(cur >= b, np.uint32(0), cur + np.uint32(1)).astype(np.uint32)
    if op == "dec":
        return np.where((cur == 0) | (cur > b), b, cur - np.uint32(1)).astype(np.uint32)
    if op in ("min", "max"):
        if ty in ("s32", "s64"):
            x, y = _signed(cur, ty), _signed(np.asarray(b, cur.dtype), ty)
            r = np.minimum(x, y) if op == "min" else np.maximum(x, y)
            return r.view(cur.dtype)
        return np.minimum(cur, b) if op == "min" else np.maximum(cur, b)
    raise Unsupported(f"atomic op {op}")


def _build(ins: ir.Instr, ctx: Ctx, is_red: bool):
    space, op, ty, vec = _parse(ins)
    dt = np.dtype(_DT[ty])
    if is_red:
        if op == "cas" or op == "exch":
            raise Unsupported(f"{ins.name}: red has no .{op} (PTX ISA 9.7.12.4)")
        a_op, b_ops, c_op, d_op = ins.args[0], ins.args[1], None, None
    else:
        d_op, a_op, b_ops = ins.args[0], ins.args[1], ins.args[2]
        c_op = ins.args[3] if op == "cas" else None
    if not isinstance(a_op, ir.Addr):
        raise Unsupported(f"{ins.name}: expected an address operand")
    if ctx.symbol_space(a_op) in ("shared", "global") and space == "generic":
        space = ctx.symbol_space(a_op)
    addr = ctx.address(a_op)
    rtype = f"b{dt.itemsize * 8}"
    rbs = ctx.read_vec(b_ops, rtype)
    if len(rbs) != vec:
        raise Unsupported(f"{ins.name}: .v{vec} needs {vec} source registers")
    rc = ctx.read(c_op, rtype) if c_op is not None else None
    wds = ctx.write_vec(d_op, rtype) if d_op is not None else []
    if d_op is not None and len(wds) != vec:
        raise Unsupported(f"{ins.name}: .v{vec} needs {vec} destination registers")
    int_add = op == "add" and ty in ("u32", "s32", "u64", "s64")

    def run(st, m):
        T = st.T
        sel = np.arange(T) if m is None else np.flatnonzero(m)
        if sel.size == 0:
            return None
        a_all = np.broadcast_to(np.asarray(addr(st), dtype=np.uint64), (T,))
        # loads validate bounds and alignment for every lane (full diagnostics from st.load)
        old = st.load(ins, space, a_all, m, dt, vec)
        old = old.reshape(T, vec)[sel]
        b = np.stack([np.broadcast_to(np.asarray(r(st)).astype(dt, copy=False), (T,))[sel] for r in rbs], axis=1)
        c = np.broadcast_to(np.asarray(rc(st)).astype(dt, copy=False), (T,))[sel][:, None] if rc is not None \
            else None
        a = a_all[sel]
        # memory identity: a shared byte is (target CTA, offset) -- the flat offset into the wave's SMEM -- so
        # threads of different CTAs hitting one peer's word (DSMEM) serialize like threads of one CTA
        key = a.astype(np.int64)
        shared = np.zeros(sel.size, bool)
        for sp, s_idx, a_sp in st._space_of(space, a, sel, ins):
            if sp.startswith("shared"):
                _, flat = st._flat(ins, sp, s_idx, a_sp, dt.itemsize * vec, False)
                pos = np.searchsorted(sel, s_idx)
                key[pos] = (np.int64(1) << 62) | flat.astype(np.int64)
                shared[pos] = True
        order = np.argsort(key, kind="stable")             # stable: thread order inside an address group
        ks = key[order]
        first = np.ones(sel.size, bool)
        first[1:] = ks[1:] != ks[:-1]
        gid_sorted = np.cumsum(first) - 1
        ngroups = int(gid_sorted[-1]) + 1
        gid = np.empty(sel.size, np.int64)
        gid[order] = gid_sorted
        sh = shared[:, None]
        if ngroups == sel.size:                              # no collisions
            d = old
            new = _combine(op, ty, old, b, c, sh)
            final_lane = np.arange(sel.size)
        elif int_add:
            bs = b[order]
            cs = np.cumsum(bs, axis=0, dtype=dt)              # wraps modulo 2^n
            starts = np.flatnonzero(first)
            base = np.repeat(cs[starts] - bs[starts], np.diff(np.append(starts, sel.size)), axis=0)
            excl = (cs - bs - base).astype(dt)
            d = np.empty_like(old)
            d[order] = old[order] + excl
            last = np.append(starts[1:], sel.size) - 1
            new = np.empty_like(old)
            new[order[last]] = d[order[last]] + b[order[last]]
            final_lane = order[last]
        else:
            starts = np.flatnonzero(first)
            rank_sorted = np.arange(sel.size) - np.repeat(starts, np.diff(np.append(starts, sel.size)))
            rank = np.empty(sel.size, np.int64)
            rank[order] = rank_sorted
            cur = old[order[starts]].copy()                   # (G, vec) current memory value per group
            gsh = shared[order[starts]][:, None]
            d = np.empty_like(old)
            for k in range(int(rank.max()) + 1):
                lanes = np.flatnonzero(rank == k)
                g = gid[lanes]
                d[lanes] = cur[g]
                cur[g] = _combine(op, ty, cur[g], b[lanes], c[lanes] if c is not None else None, gsh[g])
            new = np.empty_like(old)
            last = np.append(starts[1:], sel.size) - 1
            final_lane = order[last]
            new[final_lane] = cur[gid[final_lane]]
        # write back one value per address group (the last thread's result)
        wmask = np.zeros(T, bool)
        wmask[sel[final_lane]] = True
        vals = np.zeros((T, vec), dt)
        vals[sel[final_lane]] = new[final_lane]
        st.store(ins, space, a_all, wmask, vals if vec > 1 else vals[:, 0], dt, vec)
        if wds:
            full = np.zeros((T, vec), dt)
            full[sel] = d
            for k, w in enumerate(wds):
                w(st, full[:, k], m)
        return None
    return run


def build_atom(ins: ir.Instr, ctx: Ctx):
    """atom (PTX ISA 9.7.12.3)."""
    return _build(ins, ctx, False)


def build_red(ins: ir.Instr, ctx: Ctx):
    """red (PTX ISA 9.7.12.4): atom without a result."""
    if ins.mod_startswith("async") or ins.has("async"):
        raise Unsupported(f"{ins.name}: red.async is not supported by the emulator")
    return _build(ins, ctx, True)


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"asem": ("relaxed", "acquire", "release", "acq_rel"), "rsem": ("relaxed", "release"), "scope": _SCOPE,
        "space": _SPACES, "bitop": ("and", "or", "xor"), "b3264": ("b32", "b64"), "castype": ("b16", "b32", "b64"),
        "addtype": ("u32", "s32", "u64", "f32", "f64"), "half": ("f16", "f16x2", "bf16", "bf16x2"),
        "incdec": ("inc", "dec"), "minmax": ("min", "max"), "mmtype": ("u32", "s32", "u64", "s64"),
        "v24": ("v2", "v4"), "v248": ("v2", "v4", "v8"), "h16": ("f16", "bf16"), "h32": ("f16x2", "bf16x2")}
FORMS = register(SETS, [
    # form                                                                   PTX ISA     builder
    ("atom{.asem}{.scope}{.space}.bitop{.L2::cache_hint}.b3264",            "9.7.13.5", build_atom),
    ("atom{.asem}{.scope}{.space}.exch{.L2::cache_hint}.b3264",             "9.7.13.5", build_atom),
    ("atom{.asem}{.scope}{.space}.cas.castype",                             "9.7.13.5", build_atom),
    ("atom{.asem}{.scope}{.space}.add{.L2::cache_hint}.addtype",            "9.7.13.5", build_atom),
    ("atom{.asem}{.scope}{.space}.add.noftz{.L2::cache_hint}.half",         "9.7.13.5", build_atom),
    ("atom{.asem}{.scope}{.space}.incdec{.L2::cache_hint}.u32",             "9.7.13.5", build_atom),
    ("atom{.asem}{.scope}{.space}.minmax{.L2::cache_hint}.mmtype",          "9.7.13.5", build_atom),
    ("atom{.asem}{.scope}{.global}.add{.L2::cache_hint}.v24.f32",           "9.7.13.5", build_atom),
    ("atom{.asem}{.scope}{.global}.add.noftz{.L2::cache_hint}.v248.h16",    "9.7.13.5", build_atom),
    ("atom{.asem}{.scope}{.global}.add.noftz{.L2::cache_hint}.v24.h32",     "9.7.13.5", build_atom),
    ("red{.rsem}{.scope}{.space}.bitop{.L2::cache_hint}.b3264",             "9.7.13.6", build_red),
    ("red{.rsem}{.scope}{.space}.add{.L2::cache_hint}.addtype",             "9.7.13.6", build_red),
    ("red{.rsem}{.scope}{.space}.add.noftz{.L2::cache_hint}.half",          "9.7.13.6", build_red),
    ("red{.rsem}{.scope}{.space}.incdec{.L2::cache_hint}.u32",              "9.7.13.6", build_red),
    ("red{.rsem}{.scope}{.space}.minmax{.L2::cache_hint}.mmtype",           "9.7.13.6", build_red),
    ("red{.rsem}{.scope}{.global}.add{.L2::cache_hint}.v24.f32",            "9.7.13.6", build_red),
    ("red{.rsem}{.scope}{.global}.add.noftz{.L2::cache_hint}.v248.h16",     "9.7.13.6", build_red),
    ("red{.rsem}{.scope}{.global}.add.noftz{.L2::cache_hint}.v24.h32",      "9.7.13.6", build_red),
])
