"""tcgen05 instruction handlers (PTX ISA 9.7.16): alloc/dealloc/relinquish, ld/st/wait, cp, shift, mma, commit, fence.

State: ``st.side["tmem"]`` = one :class:`ptxlab.emu.hw.tmem.Tmem` per wave CTA; ``st.side["tcgen05"]`` = per-thread
lists of uncommitted tensor-pipe ops (mma/cp/shift), per-warp uncompleted tcgen05.st ops, and parked allocs.
``.cta_group::2`` (CTA pairs) runs through tcgen05_pairing.py (rules, alloc/dealloc rendezvous) and
tcgen05_mma_pair.py (the pair MMA). The tensor pipe executes in issue order, so mma/cp/shift are computed at issue;
their TMEM cells stay *pending* until the ``tcgen05.commit`` covering them performs its mbarrier arrive (an async
engine op), and any tcgen05.ld of a pending cell is an error. Maps: tcgen05_maps.py; MMA: tcgen05_mma.py.
See ptx_docs/tcgen05.md.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ...errors import EmuError
from ..core import hooks, ir
from ..engine import machine
from ..core.isa import BLOCK_END, Ctx, Unsupported, register
from ..engine.machine import EXITED
from .warp_sync import warp_sync_ready
from ..hw.tcgen05_maps import MapError, cp_map, cp_row_words, ld_pack, ldst_map, shift_down_map, st_unpack
from ..hw.tcgen05_mma import MmaError, spec_from_idesc, run_mma
from ..hw.tcgen05_mma_pair import run_mma_pair
from ..hw.tcgen05_pairing import check_group, pair_peer, rendezvous, wake as pair_wake
from ..hw.tmem import POISON, Tmem, TmemError, split_taddr

_ALLOC_KEY = 0x7C05 << 48  # park keys for blocked tcgen05.alloc: _ALLOC_KEY | cta
_WAIT_MMA = ("wait on its tcgen05.commit mbarrier (mbarrier.try_wait.parity) and then execute "
             "tcgen05.fence::after_thread_sync before reading the result (PTX ISA 9.7.16.6.4)")


# ------------------------------------------------------------------------------------------------ state
class _State:
    def __init__(self, st: Any) -> None:
        self.pipe: dict[int, list[tuple[int, int]]] = {}  # wave thread -> uncommitted mma/cp/shift (cta, op id)
        self.st_ops: dict[int, list[int]] = {}  # wave warp -> tcgen05.st op ids not yet waited
        self.blocked: dict[int, list[tuple]] = {}  # cta -> [(warp mask, ncols, dst writer args)]


def _tmems(st: Any) -> list[Tmem]:
    t = st.side.get("tmem")
    if t is None:
        t = st.side["tmem"] = [Tmem() for _ in range(st.nctas)]
    return t


def _state(st: Any) -> _State:
    s = st.side.get("tcgen05")
    if s is None:
        s = st.side["tcgen05"] = _State(st)
    return s


def _fault(st: Any, ins: ir.Instr, threads: Any, exc: Exception, rule: str = "") -> None:
    msg = exc.message if isinstance(exc, EmuError) else str(exc)
    st.fault(ins, threads, msg, rule)


def _warps(st: Any, m: Optional[np.ndarray]) -> list[np.ndarray]:
    """Wave-thread indices of each warp that has threads in m (exited lanes dropped)."""
    act = np.ones(st.T, bool) if m is None else m
    act = act & (st.status != EXITED)
    out = []
    for g in np.unique(st.gwarp[act]):
        out.append(np.flatnonzero(act & (st.gwarp == g)))
    return out


def _uniform(st: Any, ins: ir.Instr, vals: np.ndarray, idx: np.ndarray, what: str) -> int:
    v = np.asarray(vals)[idx] if np.ndim(vals) else np.full(idx.size, vals)
    if (v != v[0]).any():
        st.fault(ins, idx[v != v[0]], f"{what} differs between the threads of the warp",
                 "rule: .sync.aligned tcgen05 instructions need the same operands in every thread "
                 "(PTX ISA 9.7.16.7.1 / 9.7.16.8)")
    return int(v[0])


def _loc(st: Any, ins: ir.Instr, t: int) -> dict:
    block, thread = st.coords(int(t))
    return dict(kernel=st.kernel, ptx_line=ins.line, ptx_text=ins.text, block=block, thread=thread)


def _cta_group(ins: ir.Instr) -> Optional[int]:
    """1 or 2 from .cta_group::N (None when the instruction has no such qualifier, e.g. ld/st/wait/fence)."""
    cg = ins.mod_startswith("cta_group::")
    if cg is None:
        return None
    if cg not in ("cta_group::1", "cta_group::2"):
        raise Unsupported(f"{ins.opcode}.{ins.mods[0]} with .{cg}: PTX defines .cta_group::1 and ::2 only "
                          f"({ins.where()})")
    return int(cg[-1])


def _group(st: Any, ins: ir.Instr, t: Any, cg: Optional[int]) -> None:
    if cg is not None:
        check_group(st, ins, t, cg)


def _check_taddr(st: Any, ins: ir.Instr, t: int, taddr: int, what: str) -> tuple[int, int]:
    try:
        return split_taddr(taddr, what=what)
    except TmemError as e:
        _fault(st, ins, t, e)
        raise AssertionError  # unreachable


# ------------------------------------------------------------------------------------------------ dispatch
def build(ins: ir.Instr, ctx: Ctx):
    if not ins.mods:
        raise Unsupported(f"bare 'tcgen05' ({ins.where()})")
    op = ins.mods[0]
    _cta_group(ins)
    b = _BUILDERS.get(op)
    if b is None:
        raise Unsupported(f"tcgen05.{op} is not supported by the emulator ({ins.where()})")
    return b(ins, ctx)


# ------------------------------------------------------------------------------------------------ alloc family
def _build_alloc(ins: ir.Instr, ctx: Ctx):
    dst, ncols_op = ins.args
    space = "shared" if any(m.startswith("shared") for m in ins.mods) else "generic"
    addr = ctx.address(dst)
    ncols = ctx.read(ncols_op, "u32")
    cg = _cta_group(ins)

    def run(st, m):
        rc = warp_sync_ready(st, ins, m, 0xFFFFFFFF)
        if rc:
            return rc
        tm, s = _tmems(st), _state(st)
        parked = False
        for idx in _warps(st, m):
            _group(st, ins, idx, cg)
            n = _uniform(st, ins, ncols(st), idx, "tcgen05.alloc nCols")
            a = _uniform(st, ins, addr(st), idx, "tcgen05.alloc destination")
            cta, warp = int(st.cta_of[idx[0]]), int(st.warp[idx[0]])
            if cg == 2:
                if not _alloc_pair(st, ins, idx, cta, warp, n, a, space):
                    parked = True
                continue
            try:
                taddr = tm[cta].try_alloc(n, warp=warp, ptx_line=ins.line, loc=_loc(st, ins, idx[0]))
            except TmemError as e:
                _fault(st, ins, idx, e)
            wm = np.zeros(st.T, bool)
            wm[idx] = True
            if taddr is None:  # blocks until columns are freed (PTX 9.7.16.7.1): park, finish at dealloc
                s.blocked.setdefault(cta, []).append((wm, n, a, space, ins, warp))
                st.park(wm, _ALLOC_KEY | cta)
                parked = True
                continue
            st.store(ins, space, np.full(st.T, a, np.uint64), wm, np.full(st.T, taddr, np.uint32), np.dtype(np.uint32))
        return BLOCK_END if parked else None
    return run


def _wmask(st: Any, idx: np.ndarray) -> np.ndarray:
    wm = np.zeros(st.T, bool)
    wm[idx] = True
    return wm


def _alloc_pair(st: Any, ins: ir.Instr, idx: np.ndarray, cta: int, warp: int, n: int, a: int, space: str) -> bool:
    """tcgen05.alloc.cta_group::2: one warp in each CTA of the pair allocates the same columns in both TMEMs
    (PTX 9.7.16.7.1, Table 46). Returns False if this warp parked to wait for the peer's warp."""
    _rank, peer = pair_peer(st, ins, idx, cta, need_alive=False)
    wm = _wmask(st, idx)
    w = rendezvous(st, ins, "alloc", cta, peer, warp, wm, dict(n=n, a=a, space=space))
    if w is None:
        return False
    if w.payload["n"] != n:
        st.fault(ins, idx, f"[tcgen05:pair-alloc-mismatch] tcgen05.alloc.cta_group::2 of {n} columns meets the peer "
                           f"CTA's alloc of {w.payload['n']} columns (PTX line {w.ins.line})",
                 "the pair allocates collectively (PTX ISA 9.7.16.7.1); the text does not say what unequal nCols "
                 "do, so the emulator requires the same nCols in both warps")
    tms = _tmems(st)
    locs = (_loc(st, ins, idx[0]), _loc(st, w.ins, int(np.flatnonzero(w.wmask)[0])))
    try:
        tms[cta].check_alloc_rules(n, warp=warp, loc=locs[0])
        tms[peer].check_alloc_rules(n, warp=w.warp, loc=locs[1])
    except TmemError as e:
        _fault(st, ins, idx, e)
    starts = sorted(set(tms[cta].free_starts(n)) & set(tms[peer].free_starts(n)))
    if not starts:
        st.fault(ins, idx, f"[tmem:alloc-pair-blocked] tcgen05.alloc.cta_group::2 of {n} columns finds no column range "
                           f"free in both CTAs of the pair ({tms[cta].free_columns()} and {tms[peer].free_columns()} "
                           "columns free)",
                 "a blocking pair allocation (PTX 9.7.16.7.1: alloc blocks until columns are free) is not modelled "
                 "by the emulator: dealloc earlier or allocate less")
    taddr = tms[cta].take(starts[0], n, warp=warp, ptx_line=ins.line)
    tms[peer].take(starts[0], n, warp=w.warp, ptx_line=w.ins.line)
    st.store(ins, space, np.full(st.T, a, np.uint64), wm, np.full(st.T, taddr, np.uint32), np.dtype(np.uint32))
    st.store(w.ins, w.payload["space"], np.full(st.T, w.payload["a"], np.uint64), w.wmask,
             np.full(st.T, taddr, np.uint32), np.dtype(np.uint32))
    pair_wake(st, peer)
    return True


def _dealloc_pair(st: Any, ins: ir.Instr, idx: np.ndarray, cta: int, warp: int, n: int, a: int) -> bool:
    """tcgen05.dealloc.cta_group::2: both warps of the pair free the same allocation (PTX 9.7.16.7.1)."""
    _rank, peer = pair_peer(st, ins, idx, cta, need_alive=False)
    w = rendezvous(st, ins, "dealloc", cta, peer, warp, _wmask(st, idx), dict(n=n, a=a))
    if w is None:
        return False
    if (w.payload["n"], w.payload["a"]) != (n, a):
        st.fault(ins, idx, f"[tcgen05:pair-dealloc-mismatch] tcgen05.dealloc.cta_group::2 of {a:#010x}/{n} columns "
                           f"meets the peer CTA's dealloc of {w.payload['a']:#010x}/{w.payload['n']} columns "
                           f"(PTX line {w.ins.line})",
                 "the pair deallocates collectively (PTX ISA 9.7.16.7.1): both warps pass the address and nCols of "
                 "the same .cta_group::2 allocation")
    tms = _tmems(st)
    for c, wp, ii, tt in ((cta, warp, ins, int(idx[0])), (peer, w.warp, w.ins, int(np.flatnonzero(w.wmask)[0]))):
        try:
            tms[c].dealloc(a, n, warp=wp, loc=_loc(st, ii, tt))
        except TmemError as e:
            _fault(st, ins, idx, e)
    pair_wake(st, peer)
    return True


def _retry_blocked(st: Any, cta: int) -> None:
    s, tm = _state(st), _tmems(st)[cta]
    still = []
    for (wm, n, a, space, ins, warp) in s.blocked.get(cta, []):
        taddr = tm.try_alloc(n, warp=warp, ptx_line=ins.line)
        if taddr is None:
            still.append((wm, n, a, space, ins, warp))
            continue
        st.store(ins, space, np.full(st.T, a, np.uint64), wm, np.full(st.T, taddr, np.uint32), np.dtype(np.uint32))
    s.blocked[cta] = still
    st.wake(_ALLOC_KEY | cta)  # wake every warp parked on this CTA's allocs; the still-blocked ones park again
    for (wm, *_rest) in still:
        st.park(wm, _ALLOC_KEY | cta)


def _build_dealloc(ins: ir.Instr, ctx: Ctx):
    taddr_op, ncols_op = ins.args
    taddr = ctx.read(taddr_op, "u32")
    ncols = ctx.read(ncols_op, "u32")
    cg = _cta_group(ins)

    def run(st, m):
        rc = warp_sync_ready(st, ins, m, 0xFFFFFFFF)
        if rc:
            return rc
        tm = _tmems(st)
        parked = False
        for idx in _warps(st, m):
            _group(st, ins, idx, cg)
            n = _uniform(st, ins, ncols(st), idx, "tcgen05.dealloc nCols")
            a = _uniform(st, ins, taddr(st), idx, "tcgen05.dealloc address")
            cta = int(st.cta_of[idx[0]])
            if cg == 2:
                if not _dealloc_pair(st, ins, idx, cta, int(st.warp[idx[0]]), n, a):
                    parked = True
                continue
            try:
                tm[cta].dealloc(a, n, warp=int(st.warp[idx[0]]), loc=_loc(st, ins, idx[0]))
            except TmemError as e:
                _fault(st, ins, idx, e)
            if _state(st).blocked.get(cta):
                _retry_blocked(st, cta)
        return BLOCK_END if parked else None
    return run


def _build_relinquish(ins: ir.Instr, ctx: Ctx):
    cg = _cta_group(ins)

    def run(st, m):
        rc = warp_sync_ready(st, ins, m, 0xFFFFFFFF)
        if rc:
            return rc
        tm = _tmems(st)
        for idx in _warps(st, m):
            _group(st, ins, idx, cg)
            if cg == 2:   # each CTA relinquishes its own permit (PTX 9.7.16.7.1: "the CTA of the executing thread")
                pair_peer(st, ins, idx, int(st.cta_of[idx[0]]), need_alive=False)
            tm[int(st.cta_of[idx[0]])].relinquish(warp=int(st.warp[idx[0]]))
        return None
    return run


def _wave_end(st: Any) -> None:
    tms = st.side.get("tmem")
    if tms is None:
        return
    for cta, tm in enumerate(tms):
        t = int(np.flatnonzero(st.cta_of == cta)[0])
        tm.check_exit(kernel=st.kernel, block=st.coords(t)[0])


def _explain(st: Any) -> Optional[str]:
    s = st.side.get("tcgen05")
    if s is None or not any(s.blocked.values()):
        return None
    lines = []
    for cta, lst in s.blocked.items():
        for (_wm, n, _a, _sp, ins, warp) in lst:
            lines.append("  " + _tmems(st)[cta].deadlock_error(n, warp).message + f" (PTX line {ins.line})")
    return "\n".join(lines)


hooks.WAVE_END_HOOKS.append(_wave_end)
hooks.DEADLOCK_EXPLAINERS.append(_explain)


# ------------------------------------------------------------------------------------------------ ld / st / wait
def _ldst_parse(ins: ir.Instr) -> tuple[str, int, bool]:
    shape = next((m for m in ins.mods if m in ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")), None)
    num = ins.mod_startswith("x")
    if shape is None or num is None or not num[1:].isdigit():
        raise Unsupported(f"tcgen05.{ins.mods[0]}: cannot find .shape and .num ({ins.where()})")
    pack = ins.has("pack::16b") or ins.has("unpack::16b")
    return shape, int(num[1:]), pack


def _access(st: Any, ins: ir.Instr, idx: np.ndarray, taddr_v: Any, imm: Optional[int], shape: str, num: int,
            pack: bool, what: str) -> tuple[Tmem, np.ndarray, np.ndarray, int]:
    a = _uniform(st, ins, taddr_v, idx, f"{what} address")
    lane0, col0 = _check_taddr(st, ins, int(idx[0]), a, f"{what} address")
    try:
        mp = ldst_map(shape, num, pack16=pack, imm=imm)
    except MapError as e:
        _fault(st, ins, idx, e)
    lanes, cols = lane0 + mp.lane, col0 + mp.col
    cta, warp = int(st.cta_of[idx[0]]), int(st.warp[idx[0]])
    tm = _tmems(st)[cta]
    loc = _loc(st, ins, idx[0])
    try:
        if lanes.max() >= 128 or cols.max() >= 512:
            raise TmemError("address", f"{what} at lane {lane0}, column {col0} runs past TMEM (lane "
                            f"{int(lanes.max())}, column {int(cols.max())}); TMEM is 128 x 512", **loc)
        Tmem.check_warp_lanes(warp, lanes, what=what, loc=loc)
        tm.check_allocated(cols, what=what, loc=loc)
    except TmemError as e:
        _fault(st, ins, idx, e)
    lanes_t = lanes[st.lane[idx].astype(np.int64)]
    cols_t = cols[st.lane[idx].astype(np.int64)]
    return tm, lanes_t, cols_t, warp


def _build_ld(ins: ir.Instr, ctx: Ctx):
    shape, num, pack = _ldst_parse(ins)
    dst, addr_op = ins.args[0], ins.args[1]
    imm = int(ins.args[2].value) if shape == "16x32bx2" else None
    if not isinstance(dst, ir.Vec):
        dst = ir.Vec((dst,))
    taddr = ctx.address(addr_op)
    writers = ctx.write_vec(dst, "b32")
    slots = [x.idx for x in dst.items if isinstance(x, ir.Reg)]

    def run(st, m):
        rc = warp_sync_ready(st, ins, m, 0xFFFFFFFF)
        if rc:
            return rc
        vals = np.zeros((len(writers), st.T), np.uint32)
        act = np.zeros(st.T, bool)
        tv = taddr(st)
        for idx in _warps(st, m):
            tm, lanes, cols, _w = _access(st, ins, idx, tv, imm, shape, num, pack, "tcgen05.ld")
            try:
                tm.check_read_ready(lanes.ravel(), cols.ravel(), reader=f"tcgen05.ld at PTX line {ins.line}",
                                    pipe=False, loc=_loc(st, ins, idx[0]))
            except TmemError as e:
                _fault(st, ins, idx, e)
            regs = ld_pack(tm.read(lanes, cols), pack)  # (n, R)
            if regs.shape[1] != len(writers):
                st.fault(ins, idx, f"tcgen05.ld.{shape}.x{num} needs {regs.shape[1]} destination registers, "
                                   f"got {len(writers)}", "PTX ISA Table 49")
            vals[:, idx] = regs.T
            act[idx] = True
        for k, w in enumerate(writers):
            w(st, vals[k], act)
        st.set_pending(slots, act, f"tcgen05.ld at PTX line {ins.line}")
        return None
    return run


def _build_st(ins: ir.Instr, ctx: Ctx):
    shape, num, pack = _ldst_parse(ins)
    addr_op = ins.args[0]
    imm = int(ins.args[1].value) if shape == "16x32bx2" else None
    src = ins.args[-1]
    if not isinstance(src, ir.Vec):
        src = ir.Vec((src,))
    taddr = ctx.address(addr_op)
    readers = ctx.read_vec(src, "b32")

    def run(st, m):
        rc = warp_sync_ready(st, ins, m, 0xFFFFFFFF)
        if rc:
            return rc
        s = _state(st)
        tv = taddr(st)
        allv = np.stack([np.broadcast_to(np.asarray(r(st)).astype(np.uint32), (st.T,)) for r in readers])
        for idx in _warps(st, m):
            tm, lanes, cols, _w = _access(st, ins, idx, tv, imm, shape, num, pack, "tcgen05.st")
            if lanes.shape[1] != len(readers):
                st.fault(ins, idx, f"tcgen05.st.{shape}.x{num} needs {lanes.shape[1]} source registers, "
                                   f"got {len(readers)}", "PTX ISA Table 50")
            words = st_unpack(allv[:, idx].T, pack)
            try:
                op = tm.begin_async_write("st", lanes.ravel(), cols.ravel(), ptx_line=ins.line,
                                          issuer=f"warp {int(st.warp[idx[0]])}",
                                          wait_hint="execute tcgen05.wait::st in the storing warp first "
                                                    "(PTX ISA 9.7.16.8.5)", loc=_loc(st, ins, idx[0]))
            except TmemError as e:
                _fault(st, ins, idx, e)
            tm.write(lanes, cols, words)
            s.st_ops.setdefault(int(st.gwarp[idx[0]]), []).append((int(st.cta_of[idx[0]]), op))
        return None
    return run


def _build_wait(ins: ir.Instr, ctx: Ctx):
    kind = ins.mods[0]  # wait::ld | wait::st

    def run(st, m):
        rc = warp_sync_ready(st, ins, m, 0xFFFFFFFF)
        if rc:
            return rc
        if kind == "wait::ld":
            st.clear_pending(m, "tcgen05.ld")
            return None
        s, tms = _state(st), _tmems(st)
        for idx in _warps(st, m):
            for cta, op in s.st_ops.pop(int(st.gwarp[idx[0]]), []):
                tms[cta].complete(op)
        return None
    if kind not in ("wait::ld", "wait::st"):
        raise Unsupported(f"tcgen05.{kind} ({ins.where()})")
    return run


def _build_fence(ins: ir.Instr, ctx: Ctx):
    if ins.mods[0] not in ("fence::before_thread_sync", "fence::after_thread_sync"):
        raise Unsupported(f"tcgen05.{ins.mods[0]} ({ins.where()})")
    # Ordering only: mma/cp/shift results become visible at commit completion (see module docstring).
    return lambda st, m: None


# ------------------------------------------------------------------------------------------------ cp / shift
def _whose(st: Any, t: int, cta: int) -> str:
    """'' for the issuing thread's own CTA, else which peer CTA's SMEM/TMEM an operation of thread t touches."""
    if cta == int(st.cta_of[t]):
        return ""
    first = int(cta) * int(st.tpc)
    return f" in the peer CTA's shared memory (block {st.coords(first)[0]}, %cluster_ctarank {st.cluster_rank(cta)})"


def _issue_ctas(st: Any, ins: ir.Instr, t: int, cg: Optional[int]) -> tuple[int, ...]:
    """The CTAs a single-thread op of thread t works on: its own, or (.cta_group::2) its own and its peer's,
    even CTA first (Table 46: the peer must be active)."""
    cta = int(st.cta_of[t])
    if cg != 2:
        return (cta,)
    rank, peer = pair_peer(st, ins, t, cta)
    return (cta, peer) if rank % 2 == 0 else (peer, cta)


def _build_cp(ins: ir.Instr, ctx: Ctx):
    shape = next((m for m in ins.mods if m in ("128x256b", "128x128b", "4x256b", "64x128b", "32x128b")), None)
    mc = next((m for m in ins.mods if m.startswith("warpx")), None)
    dec = ".".join(m for m in ins.mods if m.startswith("b8x16") or m.startswith("b4x16") or m.startswith("b6x16"))
    try:
        cmap = cp_map(shape or "?", mc, decompress=dec or None)
    except MapError as e:
        raise Unsupported(f"{e} ({ins.where()})") from None
    taddr = ctx.address(ins.args[0])
    desc = ctx.read(ins.args[1], "b64")
    cg = _cta_group(ins)

    def run(st, m):
        tv, dv = taddr(st), desc(st)
        for t in (np.flatnonzero(m) if m is not None else np.flatnonzero(st.status != EXITED)):
            _group(st, ins, t, cg)
            a = int(np.asarray(tv)[t]) if np.ndim(tv) else int(tv)
            d = int(np.asarray(dv)[t]) if np.ndim(dv) else int(dv)
            # .cta_group::2: "copied into the Tensor Memory of both the current and the peer CTAs" (9.7.16.9.2); each
            # CTA's own SMEM at the same descriptor is the source (CUTLASS SM100_UTCCP_*_2cta copies per-CTA SFA rows)
            for cta in _issue_ctas(st, ins, int(t), cg):
                _cp_one(st, ins, int(t), cta, a, d)
        return None

    def _cp_one(st, ins, t, cta, a, d):
        from ptxlab.desc.fields import DescError
        from ptxlab.desc.smem import smem_operand_addresses

        tms, s = _tmems(st), _state(st)
        lane0, col0 = _check_taddr(st, ins, t, a, "tcgen05.cp address")
        smem = st.smem_of(cta)
        try:
            addr = smem_operand_addresses(d, cmap.rows, cmap.row_bytes, major="K")
        except DescError as e:
            _fault(st, ins, t, e, "rule: tcgen05.cp reads its source through a K-major canonical SMEM "
                                  "descriptor (PTX ISA 9.7.16.9.2, 9.7.16.4.1)")
        if addr.max() >= smem.size:
            st.fault(ins, t, f"tcgen05.cp source reaches shared byte {int(addr.max())}, beyond the CTA's "
                             f"{smem.size} B", f"descriptor {d:#018x}: check start address / SBO / LBO")
        if st.proxy is not None:   # the source is read by the async proxy: it must be fenced (proxy.py)
            st.proxy.check_read(st, ins, int(t), cta, f"tcgen05.cp.{shape} source{_whose(st, t, cta)}", addrs=addr)
        words = cp_row_words(smem[addr])  # (rows, ncols)
        lanes = lane0 + cmap.lanes  # (rows, copies)
        cols = col0 + np.arange(cmap.ncols)
        L = np.broadcast_to(lanes[:, :, None], lanes.shape + (cmap.ncols,))
        C = np.broadcast_to(cols[None, None, :], L.shape)
        W = np.broadcast_to(words[:, None, :], L.shape)
        tm = tms[cta]
        loc = _loc(st, ins, t)
        try:
            if L.max() >= 128 or C.max() >= 512:
                raise TmemError("address", f"tcgen05.cp.{shape} at lane {lane0}, column {col0} runs past TMEM",
                                **loc)
            tm.check_allocated(cols, what="tcgen05.cp", loc=loc)
            op = tm.begin_async_write("cp", L.ravel(), C.ravel(), ptx_line=ins.line, issuer=f"thread {t}",
                                      wait_hint=_WAIT_MMA, loc=loc)
        except TmemError as e:
            _fault(st, ins, t, e)
        tm.write(L, C, W)
        s.pipe.setdefault(int(t), []).append((cta, op))
    return run


def _build_shift(ins: ir.Instr, ctx: Ctx):
    if not ins.has("down"):
        raise Unsupported(f"tcgen05.shift without .down ({ins.where()})")
    taddr = ctx.address(ins.args[0])
    cg = _cta_group(ins)

    def run(st, m):
        tv = taddr(st)
        for t in (np.flatnonzero(m) if m is not None else np.flatnonzero(st.status != EXITED)):
            _group(st, ins, t, cg)
            a = int(np.asarray(tv)[t]) if np.ndim(tv) else int(tv)
            # .cta_group::2: "performed in the Tensor Memory of both the current and the peer CTAs" (9.7.16.9.3)
            for cta in _issue_ctas(st, ins, int(t), cg):
                _shift_one(st, ins, int(t), cta, a)
        return None
    return run


def _shift_one(st: Any, ins: ir.Instr, t: int, cta: int, a: int) -> None:
    lane0, col0 = _check_taddr(st, ins, t, a, "tcgen05.shift address")
    tm = _tmems(st)[cta]
    loc = _loc(st, ins, t)
    try:
        src, dst = shift_down_map(lane0)
        cols = col0 + np.arange(8)
        tm.check_allocated(cols, what="tcgen05.shift", loc=loc)
        sl, sc = np.meshgrid(lane0 + src, cols, indexing="ij")
        dl = sl + 1
        vals, wr = tm.read(sl, sc), tm.written[sl, sc].copy()
        op = tm.begin_async_write("shift", np.concatenate([dl.ravel(), np.full(8, lane0)]),
                                  np.concatenate([sc.ravel(), cols]), ptx_line=ins.line,
                                  issuer=f"thread {t}", wait_hint=_WAIT_MMA, loc=loc)
    except (TmemError, MapError) as e:
        _fault(st, ins, t, e)
    tm.data[dl, sc] = vals
    tm.written[dl, sc] = wr
    tm.data[lane0, cols] = POISON  # not stated by PTX 9.7.16.9.3: treat as undefined
    tm.written[lane0, cols] = False
    _state(st).pipe.setdefault(t, []).append((cta, op))


# ------------------------------------------------------------------------------------------------ mma
def _mma_kind_block(ins: ir.Instr) -> tuple[str, Optional[int]]:
    kind = ins.mod_startswith("kind::")
    if kind is None:
        raise Unsupported(f"tcgen05.mma without .kind ({ins.where()})")
    kind = kind[6:]
    for bad in ("ws", "sp", "ashift"):
        if ins.has(bad):
            raise Unsupported(f"tcgen05.mma.{bad} is not supported by the emulator ({ins.where()})")
    col = ins.mod_startswith("collector::")
    if col is not None and col != "collector::a::discard":
        raise Unsupported(f"tcgen05.mma .{col} (collector buffer reuse) is not supported ({ins.where()})")
    block = None
    if ins.has("block_scale"):
        sv = {"block16": 16, "block32": 32, "scale_vec::4X": 16, "scale_vec::2X": 32, "scale_vec::1X": 32}
        given = [sv[x] for x in ins.mods if x in sv]
        if given:
            block = given[0]
            if kind == "mxf8f6f4" and ins.has("scale_vec::2X") or kind != "mxf8f6f4" and ins.has("scale_vec::1X"):
                raise Unsupported(f"{ins.name}: scale vector size not valid for kind::{kind} (PTX Table 56)")
        elif kind == "mxf4":
            block = 32  # default .block32 for kind::mxf4 (9.7.16.10.9)
        elif kind == "mxf8f6f4":
            block = 32
        else:
            raise Unsupported(f"kind::{kind} must state .block16/.block32 or .scale_vec::NX (PTX 9.7.16.10.9) "
                              f"({ins.where()})")
    return kind, block


def _build_mma(ins: ir.Instr, ctx: Ctx):
    kind, block = _mma_kind_block(ins)
    args = list(ins.args)
    d_addr = ctx.address(args[0])
    a_tmem = isinstance(args[1], ir.Addr)
    a_rd = ctx.address(args[1]) if a_tmem else ctx.read(args[1], "b64")
    b_rd = ctx.read(args[2], "b64")
    idesc_rd = ctx.read(args[3], "b32")
    rest = args[4:]
    sfa_rd = sfb_rd = dol_rds = None
    if block is not None:
        if len(rest) != 3:
            raise Unsupported(f"{ins.name}: expected [scale-A-tmem], [scale-B-tmem], enable-input-d ({ins.where()})")
        sfa_rd, sfb_rd = ctx.address(rest[0]), ctx.address(rest[1])
        en_rd = ctx.read(rest[2], "pred")
    else:
        if rest and isinstance(rest[0], ir.Vec):
            dol_rds = ctx.read_vec(rest[0], "b32")
            rest = rest[1:]
        if len(rest) != 1:
            raise Unsupported(f"{ins.name}: scale-input-d is not supported; expected enable-input-d as the last "
                              f"operand ({ins.where()})")
        en_rd = ctx.read(rest[0], "pred")
    cache: dict[int, Any] = {}
    cg = _cta_group(ins)

    def val(rd, st, t):
        v = rd(st)
        return int(np.asarray(v)[t]) if np.ndim(v) else int(v)

    def run(st, m):
        for t in (np.flatnonzero(m) if m is not None else np.flatnonzero(st.status != EXITED)):
            t = int(t)
            _group(st, ins, t, cg)
            idesc = val(idesc_rd, st, t) & 0xFFFFFFFF
            try:
                spec = cache.get(idesc) or cache.setdefault(
                    idesc, spec_from_idesc(kind, idesc, block=block, cta_group=cg or 1))
                spec.validate()
            except MmaError as e:
                _fault(st, ins, t, e, "rule: instruction descriptor, PTX ISA 9.7.16.4.2 Tables 42-44 / Table 39")
            ctas = _mma_ctas(st, ins, t, cg)
            kw: dict[str, Any] = {"d_taddr": _check_taddr(st, ins, t, val(d_addr, st, t), "tcgen05.mma D address")}
            if a_tmem:
                kw["a_taddr"] = _check_taddr(st, ins, t, val(a_rd, st, t), "tcgen05.mma A address")
            else:
                kw["a_desc"] = val(a_rd, st, t)
            if block is not None:
                for nm, rd, sid in (("sfa_taddr", sfa_rd, spec.sfa_id), ("sfb_taddr", sfb_rd, spec.sfb_id)):
                    raw = val(rd, st, t) & 0xFFFFFFFF
                    hi = raw >> 30
                    if hi and hi != sid:
                        st.fault(ins, t, f"scale-factor TMEM address {raw:#010x} has bits 30-31 = {hi} but the "
                                         f"idesc SF ID is {sid}",
                                 "CUTLASS keeps the SF ID in bits 30-31 of the SF address and copies it into idesc; "
                                 "other values are not modelled (ptx_docs/tcgen05.md)")
                    kw[nm] = _check_taddr(st, ins, t, raw & 0x3FFFFFFF, f"tcgen05.mma {nm[:3]} address")
            if dol_rds is not None:
                kw["disable_output_lane"] = [val(r, st, t) for r in dol_rds]
            kw["enable_input_d"] = bool(val(en_rd, st, t))
            kw["b_desc"] = val(b_rd, st, t)
            _mma_issue(st, ins, t, spec, ctas, kw)
        return None
    return run


def _mma_ctas(st: Any, ins: ir.Instr, t: int, cg: Optional[int]) -> tuple[int, ...]:
    """(own CTA,) or, for .cta_group::2, (even CTA, odd CTA) of the issuing thread's pair."""
    cta = int(st.cta_of[t])
    if cg != 2:
        return (cta,)
    rank, peer = pair_peer(st, ins, t, cta)
    if rank % 2:
        st.fault(ins, t, f"[tcgen05:pair-mma-odd-issuer] tcgen05.mma.cta_group::2 issued from the odd CTA of the pair "
                         f"(%cluster_ctarank {rank})",
                 "not modelled: PTX ISA 9.7.16.5 Table 46 lets one thread of either CTA issue, but which CTA's TMEM "
                 "then receives rows 0..M/2-1 is shown only in Figure 205; CUTLASS (SM100_MMA_*_2x1SM_*) and the "
                 "emulator issue from the even CTA: guard the MMA issue with (%cluster_ctarank & 1) == 0")
    return (cta, peer)


def _mma_issue(st: Any, ins: ir.Instr, t: int, spec: Any, ctas: tuple[int, ...], kw: dict) -> None:
    """Run the MMA (one CTA or a pair), check TMEM rules in every CTA it touches, then write D as pending."""
    from ptxlab.desc.fields import DescError

    tms, s = _tmems(st), _state(st)
    if st.proxy is not None:   # A/B operands are read by the async proxy: they must be fenced (proxy.py)
        chk = (lambda v, what, addr: st.proxy.check_read(st, ins, t, ctas[v],
                                                        f"tcgen05.mma operand {what}{_whose(st, t, ctas[v])}",
                                                        addrs=addr))
        kw["on_smem_read"] = chk if len(ctas) == 2 else (lambda what, addr: chk(0, what, addr))
    try:
        if len(ctas) == 2:
            results = run_mma_pair(spec, [st.smem_of(c) for c in ctas], [tms[c].data for c in ctas], **kw)
        else:
            results = [run_mma(spec, st.smem_of(ctas[0]), tms[ctas[0]].data, **kw)]
    except (MmaError, ValueError, NotImplementedError) as e:
        rule = "rule: SMEM matrix descriptor, PTX ISA 9.7.16.4.1" if isinstance(e, DescError) else ""
        _fault(st, ins, t, e, rule)
    loc = _loc(st, ins, t)
    pair = " (peer CTA of the pair)" if len(ctas) == 2 else ""
    ops = []
    for v, (cta, res) in enumerate(zip(ctas, results)):
        tm = tms[cta]
        sfx = pair if cta != int(st.cta_of[t]) else ""
        try:
            for what, ll, cc in res.tmem_reads:
                tm.check_allocated(cc, what=f"tcgen05.mma {what}{sfx}", loc=loc)
                tm.check_read_ready(ll, cc, reader=f"tcgen05.mma {what}{sfx}", pipe=True, loc=loc)
                tm.check_initialized(ll, cc, reader=f"tcgen05.mma {what}{sfx}", loc=loc)
            tm.check_allocated(res.cols, what=f"tcgen05.mma D{sfx}", loc=loc)
        except TmemError as e:
            _fault(st, ins, t, e)
    for cta, res in zip(ctas, results):
        tm = tms[cta]
        L, C = np.meshgrid(res.lanes[res.lane_mask], res.cols, indexing="ij")
        try:
            op = tm.begin_async_write("mma", L.ravel(), C.ravel(), ptx_line=ins.line,
                                      issuer=f"thread {st.coords(t)[1]}"
                                      + (f" of block {st.coords(t)[0]}" if pair else ""),
                                      wait_hint=_WAIT_MMA, loc=loc)
        except TmemError as e:
            _fault(st, ins, t, e)
        tm.write(L, C, res.d[res.lane_mask])
        ops.append((cta, op))
    s.pipe.setdefault(t, []).extend(ops)


# ------------------------------------------------------------------------------------------------ commit
class _CommitOp:
    """Async-engine op: completes the committed pipe ops, then one arrive on each target mbarrier (PTX 9.7.16.12.1)."""

    def __init__(self, targets: list[tuple[int, int]], ops: list[tuple[int, int]], ins: ir.Instr, thread: int) -> None:
        self.targets, self.ops, self.ins, self.thread = targets, ops, ins, thread

    def describe(self) -> str:
        tg = ", ".join(f"CTA {c} mbarrier shared {b:#x}" for c, b in self.targets)
        return f"tcgen05.commit at PTX line {self.ins.line} ({tg}; {len(self.ops)} op(s))"

    def complete(self, st: Any) -> None:
        tms = _tmems(st)
        for cta, op in self.ops:
            tms[cta].complete(op)
        for cta, bar in self.targets:
            _mbarrier_arrive(st, cta, bar, self.ins, self.thread)


def _mbarrier_arrive(st: Any, cta: int, addr: int, ins: ir.Instr, t: int) -> None:
    """One arrive (count 1) on the mbarrier at shared ``addr`` of CTA ``cta`` (any CTA of the cluster)."""
    from .mbarrier import remote_arrive

    try:
        remote_arrive(st, ins, t, cta, addr, 1)
    except EmuError as e:
        _fault(st, ins, t, e, "rule: tcgen05.commit performs mbarrier.arrive on an initialized mbarrier "
                              "(PTX ISA 9.7.16.12.1)")


def _multicast_targets(st: Any, ins: ir.Instr, t: int, addr: int, mask: int) -> list[tuple[int, int]]:
    """.multicast::cluster: the same shared offset in every CTA whose %cluster_ctarank bit is set in ctaMask."""
    from ..hw.cta_pair import cta_of_rank, nrank_of

    cta = int(st.cta_of[t])
    n = nrank_of(st, cta)
    mask &= 0xFFFF
    if not mask:
        st.fault(ins, t, "tcgen05.commit .multicast::cluster with ctaMask = 0 signals no mbarrier",
                 "PTX ISA 9.7.16.12.1: each set bit of the 16-bit ctaMask names a destination %cluster_ctarank")
    out = []
    for r in range(16):
        if mask >> r & 1:
            c = cta_of_rank(st, cta, r) if r < n else None
            if c is None:
                st.fault(ins, t, f"tcgen05.commit .multicast::cluster ctaMask {mask:#06x} names %cluster_ctarank {r}, "
                                 f"but the cluster has {n} CTA(s)",
                         "PTX ISA 9.7.16.12.1: bit i of ctaMask is the CTA of %cluster_ctarank i in this cluster")
            out.append((int(c), addr))
    return out


def _build_commit(ins: ir.Instr, ctx: Ctx):
    if not ins.has("mbarrier::arrive::one"):
        raise Unsupported(f"tcgen05.commit needs .mbarrier::arrive::one ({ins.where()})")
    bar = ctx.address(ins.args[0])
    generic = not any(m.startswith("shared") for m in ins.mods)
    multicast = ins.has("multicast::cluster")
    if multicast and len(ins.args) != 2:
        raise Unsupported(f"tcgen05.commit .multicast::cluster needs the ctaMask operand ({ins.where()})")
    mask_rd = ctx.read(ins.args[1], "b16") if multicast else None
    cg = _cta_group(ins)

    def run(st, m):
        from .mbarrier import shared_targets

        s = _state(st)
        sel = np.flatnonzero(m) if m is not None else np.flatnonzero(st.status == machine.RUN)
        # the mbar operand is a .shared::cluster address (9.7.16.12.1): it may name a peer CTA's barrier
        bctas, addrs = shared_targets(st, ins, bar(st), sel, "generic" if generic else "shared", "tcgen05.commit")
        mv = mask_rd(st) if mask_rd is not None else None
        for t, bc, a in zip(sel, bctas, addrs):
            t = int(t)
            _group(st, ins, t, cg)
            if cg == 2:   # Table 46: the peer CTA must be active when a pair op is issued
                pair_peer(st, ins, t, int(st.cta_of[t]))
            if mv is not None:
                targets = _multicast_targets(st, ins, t, int(a), int(np.asarray(mv)[t]) if np.ndim(mv) else int(mv))
            else:
                targets = [(int(bc), int(a))]
            ops = s.pipe.pop(t, [])
            st.engine.submit(_CommitOp(targets, ops, ins, t))
        return None
    return run


_BUILDERS = {
    "alloc": _build_alloc,
    "dealloc": _build_dealloc,
    "relinquish_alloc_permit": _build_relinquish,
    "ld": _build_ld,
    "st": _build_st,
    "wait::ld": _build_wait,
    "wait::st": _build_wait,
    "fence::before_thread_sync": _build_fence,
    "fence::after_thread_sync": _build_fence,
    "cp": _build_cp,
    "shift": _build_shift,
    "mma": _build_mma,
    "commit": _build_commit,
}


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"cta_group": ("cta_group::1", "cta_group::2"),
        "shape1": ("16x64b", "16x128b", "16x256b", "32x32b"),
        "num": ("x1", "x2", "x4", "x8", "x16", "x32", "x64", "x128"),
        "cpshape": ("128x256b", "4x256b", "128x128b"), "warpx2": ("warpx2::02_13", "warpx2::01_23"),
        "decomp": ("b8x16.b6x16_p32", "b8x16.b4x16_p64"), "wait": ("wait::ld", "wait::st"),
        "kind": ("kind::f16", "kind::tf32", "kind::f8f6f4", "kind::i8"),
        "bskind": ("kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4"),
        "scale_vec": ("scale_vec::1X", "scale_vec::2X", "scale_vec::4X", "block16", "block32"),
        "fence": ("fence::before_thread_sync", "fence::after_thread_sync")}
FORMS = register(SETS, [
    # form                                                                         PTX ISA         builder
    ("tcgen05.alloc.cta_group.sync.aligned.shared::cta.b32",                    "9.7.16.7.1",   build),
    ("tcgen05.dealloc.cta_group.sync.aligned.b32",                                "9.7.16.7.1",   build),
    ("tcgen05.relinquish_alloc_permit.cta_group.sync.aligned",                    "9.7.16.7.1",   build),
    ("tcgen05.ld.sync.aligned.shape1.num{.pack::16b}.b32",                        "9.7.16.8.3",   build),
    ("tcgen05.ld.sync.aligned.16x32bx2(.x2|.x4){.pack::16b}.b32",                      "9.7.16.8.3",   build),
    ("tcgen05.st.sync.aligned.shape1(.x1|.x2|.x4|.x8|.x32|.x64){.unpack::16b}.b32", "9.7.16.8.4", build),
    ("tcgen05.st.sync.aligned.16x32bx2(.x2|.x4){.unpack::16b}.b32",                    "9.7.16.8.4",   build),
    ("tcgen05.wait.sync.aligned",                                                 "9.7.16.8.5",   build),
    ("tcgen05.cp.cta_group::2.128x256b",                                     "9.7.16.9.2",   build),
    ("tcgen05.cp.cta_group.32x128b.warpx4",                              "9.7.16.9.2",   build),
    ("tcgen05.shift.cta_group::2.down",                                              "9.7.16.9.3",   build),
    ("tcgen05.mma.cta_group.kind::f16{.collector::a::discard}",                    "9.7.16.10.9.1", build),
    ("tcgen05.mma.cta_group(.kind::mxf8f6f4|.kind::mxf4nvf4).block_scale{.block16}{.collector::a::discard}",
     "9.7.16.10.9.1", build),
    # .scale_vec::4X: the older spelling of .block16 for kind::mxf4nvf4 (the CuTe DSL 4.3)
    ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X",         "9.7.16.10.9.1", build),
    ("tcgen05.fence",                                                             "9.7.16.11.1",  build),
    ("tcgen05.commit.cta_group.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64",
     "9.7.16.12.1", build),
])
