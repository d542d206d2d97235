"""TMA and bulk copies for the emulator: cp.async.bulk.tensor (PTX ISA 9.7.9.25.5.2), cp.async.bulk (9.7.9.25.4.1),
cp.async.bulk.commit_group / wait_group (9.7.9.25.1.1 bulk async-groups), cp.async.bulk.prefetch{.tensor} and
fence.proxy.tensormap (accepted, no effect) and fence.proxy.async (the generic→async proxy SMEM check, proxy.py).

Copies are asynchronous: the instruction validates its operands (faults are located at the issuing thread) and submits
an op to ``st.engine``; the engine completes ops in issue order only when no thread can run (API.md), so a kernel that
reads a TMA destination without waiting on the mbarrier sees the 0xA5-style poison, not the data. Completion of a
load writes shared memory (layout: ptxlab.emu.hw.tma) and then performs complete-tx on the mbarrier with the byte
count of hw.tma.complete_tx_bytes (the full box, OOB included: measured on an H100, ptx_docs/tma.md).

Clusters (cluster.py, ptx_docs/clusters.md): ``.shared::cluster`` destination and mbarrier operands may name any CTA of
the cluster (rank in bits 31..24).  ``.multicast::cluster`` with a 16-bit ctaMask writes the same bytes at the same
offset (dstMem's offset) in every CTA whose rank bit is set, and performs complete_tx on the mbarrier at mbar's offset
in each of them; with ``.cta_group::2`` the barrier of destination rank r is in the CTA of the pair {r & ~1, r | 1}
whose parity is the mbar operand's rank parity (CUTLASS's 2-SM loads name the even CTA's barrier).
``cp.async.bulk.shared::cluster.shared::cta`` copies the executing CTA's SMEM to a peer's SMEM with complete_tx on the
peer's barrier (which must be in the destination CTA).  The bulk async-groups are tracked per thread.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...errors import EmuError, TensorMapError
from ...tensormap_hw import decode_any
from ..core import ir
from ..engine import machine
from ..checks import exitcheck  # noqa: F401  (registers the copies-in-flight-at-exit check)
from ..core.isa import Ctx, Unsupported, register
from ..core.memory import GLOBAL_BASE, PARAM_WIN, WIN_SHIFT, WINDOWS
from ..hw import cluster as cl
from .mbarrier import complete_tx_on, shared_addresses, shared_targets, table_of
from ..hw.tma import check_bulk_copy, heap_rows, plan_tensor_load, plan_tensor_store, validate_load

__all__ = ["bulk_groups"]


# ------------------------------------------------------------------------------------------------ helpers
def _sel(st, m) -> np.ndarray:
    return np.arange(st.T)[st.status == machine.RUN] if m is None else np.flatnonzero(m)


def _per_thread(st, reader: Callable, dtype=np.uint64) -> np.ndarray:
    return np.broadcast_to(np.asarray(reader(st), dtype=dtype), (st.T,))


def _global_ptr(st, ins, t: int, addr: int, nbytes: int, what: str) -> int:
    """Validate a global byte range [addr, addr+nbytes) against the heap; returns addr."""
    if (addr >> WIN_SHIFT) != (GLOBAL_BASE >> WIN_SHIFT):
        st.fault(ins, t, f"{what}: {addr:#x} is not a global address", "pass a global pointer (cvta.to.global)")
    off = np.array([addr - GLOBAL_BASE], dtype=np.int64)
    if st.heap.check(off, nbytes) is not None:
        st.fault(ins, t, f"{what}: global range {addr:#x}+{nbytes} is outside every allocation",
                 st.heap.nearest(int(off[0])))
    return addr


class _Groups:
    """Bulk async-groups of one thread (9.7.9.25.1.1): ops not yet committed, then committed groups in order."""

    def __init__(self) -> None:
        self.open: list = []
        self.committed: list[list] = []


def bulk_groups(st, t: int) -> _Groups:
    """The bulk async-group state of wave thread ``t``."""
    d = st.side.setdefault("bulk_group", {})
    g = d.get(t)
    if g is None:
        g = d[t] = _Groups()
    return g


def _read_tensor_map(st, ins, t: int, addr: int):
    """Decode the 128-byte tensor map at ``addr`` (param-space, generic param/global window): an emulator image, or
    a hardware image as the CuTe DSL encodes it (ptxlab/tensormap_hw.py)."""
    win = addr >> WIN_SHIFT
    if win in WINDOWS:
        space = "generic"
    else:
        space = "param"
    if addr % 64:
        st.fault(ins, t, f"tensor map address {addr:#x} is not 64-byte aligned",
                 "CUtensorMap objects must be 64-byte aligned (cuTensorMapEncodeTiled); pass the kernel parameter "
                 "declared 'const __grid_constant__ CUtensorMap'")
    # kernel parameters are read-only during a launch: a map there decodes the same for every thread (cached)
    cache = st.side.setdefault("param_tensor_maps", {}) \
        if space == "param" or win == PARAM_WIN >> WIN_SHIFT else None
    if cache is not None and addr in cache:
        return cache[addr]
    m = np.zeros(st.T, np.bool_)
    m[t] = True
    # a CUtensorMap is 128 bytes with 64-byte alignment (alignas(64) in cuda.h; CuTe's NVRTC TmaDescriptor too):
    # the 64-byte rule was checked above, so the read is not held to the 128-byte natural-alignment rule.
    raw = st.load(ins, space, np.uint64(addr), m, np.uint8, 128, align=64)[t]
    try:
        spec = decode_any(bytes(raw))
        if cache is not None:
            cache[addr] = spec
        return spec
    except TensorMapError as exc:
        st.fault(ins, t, "cp.async.bulk.tensor: the tensor-map operand is not a valid tensor map",
                 f"{exc}; build it with dev.tensor_map on the emu device and pass it by value (__grid_constant__)")


def _fault_from(st, ins, t: int, exc: EmuError):
    st.fault(ins, t, exc.message)


# ------------------------------------------------------------------------------------------------ async ops
class _TensorLoad:
    """A TMA load into one CTA, or (multicast) into several: ``targets`` = [(dst CTA, mbarrier CTA)] (wave CTAs)."""

    def __init__(self, ins, t, cta, spec, coords, dst, mbar, targets=None):
        self.ins, self.thread, self.cta, self.spec, self.coords, self.dst, self.mbar = \
            ins, t, cta, spec, coords, dst, mbar
        self.targets = targets if targets is not None else [(cta, cta)]
        self.done = False

    def smem_dest(self, st):
        """[(cta, issuing thread)] whose shared memory this op writes (exitcheck.py)."""
        return [(self.cta, self.thread)]

    def describe(self) -> str:
        to = "" if self.targets == [(self.cta, self.cta)] else \
            f" in wave CTAs {[d for d, _ in self.targets]}"
        return (f"cp.async.bulk.tensor.{self.spec.rank}d load box {list(self.spec.box)} at {list(self.coords)} -> "
                f"shared {self.dst:#x}, mbarrier {self.mbar:#x}{to} (PTX line {self.ins.line})")

    def complete(self, st) -> None:
        heap = st.heap
        try:
            # the one-gather row reader is the fast path; the timing recorder (ptxlab/timing/trace.py) watches
            # heap.read_bytes and turns the gather off while it records, so every TMA byte is charged
            rows = heap_rows(heap.buf, GLOBAL_BASE) if getattr(heap, "gather_rows", True) else None
            plan = plan_tensor_load(self.spec, self.coords, self.dst, heap.read_bytes, rows)
        except EmuError as exc:
            _fault_from(st, self.ins, self.thread, exc)
        for dcta, _ in self.targets:
            _land(st, self, dcta, plan.smem_addrs, plan.values, self.dst, self.dst + plan.box_bytes, "TMA load")
        self.done = True
        for _, bcta in self.targets:
            complete_tx_on(st, self.ins, self.thread, bcta, self.mbar, plan.tx_bytes)


def _land(st, op, dcta: int, addrs, values, lo: int, hi: int, what: str) -> None:
    """Write an async copy's bytes into wave CTA ``dcta``'s SMEM (checks: bounds, live mbarriers, peer alive)."""
    if dcta != op.cta:
        cl.check_alive(st, op.ins, op.thread, dcta, f"{what} into the shared memory")
    smem = st.smem_of(dcta)
    top = int(addrs.max()) if isinstance(addrs, np.ndarray) and addrs.size else hi - 1
    if top >= smem.size:
        st.fault(op.ins, op.thread, f"{what} writes shared bytes up to {top:#x}, past the CTA's {smem.size} bytes of "
                 f"shared memory", f"[{lo:#x}, {hi:#x}); enlarge shared_bytes or move the stage")
    clob = table_of(st, dcta).overlapping(lo, hi)
    if clob:
        st.fault(op.ins, op.thread, f"{what} into shared [{lo:#x}, {hi:#x}) overwrites the live mbarrier at "
                 f"{clob[0].addr:#x}", "place mbarriers outside the TMA stage buffers")
    if isinstance(addrs, np.ndarray):
        smem[addrs] = values
    else:
        smem[lo:hi] = values
    if st.proxy is not None:    # async-proxy write: these bytes need no proxy fence (mbarrier complete_tx)
        if isinstance(addrs, np.ndarray):
            st.proxy.clean(dcta, addrs)
        else:
            st.proxy.clean(dcta, lo=lo, hi=hi)


class _TensorStore:
    def __init__(self, ins, t, cta, spec, coords, src, plan=None):
        self.ins, self.thread, self.cta, self.spec, self.coords, self.src = ins, t, cta, spec, coords, src
        self.plan = plan
        self.done = False

    def describe(self) -> str:
        return (f"cp.async.bulk.tensor.{self.spec.rank}d store shared {self.src:#x} -> box at {list(self.coords)} "
                f"(PTX line {self.ins.line})")

    def complete(self, st) -> None:
        plan = self.plan
        if plan is None:
            try:
                plan = plan_tensor_store(self.spec, self.coords, self.src)
            except EmuError as exc:
                _fault_from(st, self.ins, self.thread, exc)
        smem = st.smem_of(self.cta)
        if plan.smem_addrs.size:
            if int(plan.smem_addrs.max()) >= smem.size:
                st.fault(self.ins, self.thread, "TMA store reads past this CTA's shared memory",
                         f"source {self.src:#x}, {smem.size} bytes of shared memory")
            off = plan.gmem_addrs - GLOBAL_BASE
            if st.heap.check(off, 1) is not None:
                st.fault(self.ins, self.thread, "TMA store writes outside every global allocation",
                         "the tensor map's extent is not inside one allocation")
            st.heap.buf[off] = smem[plan.smem_addrs]
            st.heap.mark(off, 1)          # global initcheck: these bytes are written now (checks/initcheck.py)
        self.done = True


class _BulkCopy:
    def __init__(self, ins, t, cta, direction, dst, src, size, mbar=None, byte_mask=None, targets=None):
        self.ins, self.thread, self.cta, self.direction = ins, t, cta, direction
        self.dst, self.src, self.size, self.mbar, self.byte_mask = dst, src, size, mbar, byte_mask
        self.targets = targets if targets is not None else [(cta, cta)]   # [(dst CTA, mbarrier CTA)]
        self.done = False

    def smem_dest(self, st):
        """[(cta, issuing thread)] whose shared memory this op writes (exitcheck.py)."""
        return [(self.cta, self.thread)] if self.direction == "global->shared" else []

    def describe(self) -> str:
        return (f"cp.async.bulk {self.direction} {self.size} bytes {self.src:#x} -> {self.dst:#x} "
                f"(PTX line {self.ins.line})")

    def complete(self, st) -> None:
        smem = st.smem_of(self.cta)
        n = self.size
        if self.direction in ("global->shared", "shared::cta->shared::cluster"):
            if self.direction == "global->shared":
                data = st.heap.read_bytes(self.src, n)
            else:
                if self.src + n > smem.size:
                    st.fault(self.ins, self.thread, f"cp.async.bulk reads shared [{self.src:#x}, {self.src + n:#x}) "
                             f"past this CTA's {smem.size} bytes")
                data = smem[self.src:self.src + n].copy()
            for dcta, _ in self.targets:
                _land(st, self, dcta, None, data, self.dst, self.dst + n, "cp.async.bulk")
            self.done = True
            for _, bcta in self.targets:
                complete_tx_on(st, self.ins, self.thread, bcta, self.mbar, n)
            return
        if self.src + n > smem.size:
            st.fault(self.ins, self.thread, f"cp.async.bulk reads shared [{self.src:#x}, {self.src + n:#x}) past "
                     f"this CTA's {smem.size} bytes")
        data = smem[self.src:self.src + n].copy()
        off = self.dst - GLOBAL_BASE
        if self.byte_mask is None:
            st.heap.buf[off:off + n] = data
            st.heap.mark_range(off, n)    # global initcheck (checks/initcheck.py)
        else:   # .cp_mask: bit i of byteMask copies byte i of every 16-byte chunk (9.7.9.25.4.1)
            keep = np.array([(self.byte_mask >> i) & 1 for i in range(16)], bool)
            keep = np.tile(keep, n // 16)
            tgt = st.heap.buf[off:off + n]
            tgt[keep] = data[keep]
            st.heap.mark(off + np.flatnonzero(keep), 1)
        self.done = True


def _submit(st, t: int, op, group: bool) -> None:
    st.engine.submit(op)
    if group:
        bulk_groups(st, t).open.append(op)


# ------------------------------------------------------------------------------------------------ builders
_STATE_SPACES = ("global", "shared::cta", "shared::cluster", "shared")


def _spaces(ins) -> tuple:
    """(.dst, .src) state spaces of a cp.async.bulk{.tensor}: the first and second state-space modifiers, wherever
    they stand among the others.  The PTX ISA syntax (cp.async.bulk 9.7.9.25.4.1, cp.async.bulk.tensor 9.7.9.25.5.2)
    writes ``.dim.dst.src{.load_mode}.completion_mechanism{.multicast}{.cta_group}...``, but CuTe's SM100 2-SM loads
    (cute/arch/copy_sm100_tma.hpp) write ``.2d.cta_group::2.shared::cluster.global.mbarrier::...`` and ptxas accepts
    it: the modifiers are distinct keywords, so only the relative order of .dst before .src carries meaning."""
    sp = [m for m in ins.mods if m in _STATE_SPACES]
    return (sp[0] if sp else "", sp[1] if len(sp) > 1 else "")


def _multicast(ins) -> bool:
    """.multicast::cluster{::16b} (16-bit ctaMask); the ::32b form (sm_107f+) is refused."""
    mc = [m for m in ins.mods if m.startswith("multicast::cluster")]
    if any(m.endswith("::32b") for m in mc):
        raise Unsupported(f".multicast::cluster::32b (32-bit ctaMask, sm_107f+) is not emulated ({ins.where()})")
    return bool(mc)


def _dst_targets(st, ins, addrs, sel, dst_space: str, what: str):
    """Destination (CTA, offset) per thread: .shared::cta must be the executing CTA (9.7.9.25.4.1: "the destination
    address has to be in the shared memory of the executing CTA"), .shared::cluster may name any CTA."""
    if dst_space == "shared::cta":
        return st.cta_of[sel].astype(np.int64), shared_addresses(st, ins, addrs, sel, "shared", what)
    return shared_targets(st, ins, addrs, sel, "shared", what)


def _multicast_targets(st, ins, t: int, mask_val: int, bar_rank: int, pair: bool) -> list:
    """[(dst CTA, mbarrier CTA)] of a .multicast::cluster copy by thread ``t`` with ``ctaMask`` (bit i = rank i)."""
    n = cl.size(st)
    out = []
    for d in cl.mask_ctas(st, ins, t, mask_val):
        r = d % n
        br = (r & ~1) | (bar_rank & 1) if pair else r
        if br >= n:
            st.fault(ins, t, f".cta_group::2 multicast: the mbarrier of destination rank {r} would be in rank {br}, "
                     f"outside the cluster of {n}", "cta_group::2 needs CTA pairs (an even cluster size)")
        out.append((d, d - r + br))
    return out


def build_tensor(ins: ir.Instr, ctx: Ctx):
    """cp.async.bulk.tensor.{1..5}d loads (.shared::{cluster,cta}.global ... mbarrier) and stores (.global.shared::cta)."""
    dim = next((m for m in ins.mods if m in ("1d", "2d", "3d", "4d", "5d")), None)
    if dim is None:
        raise Unsupported(f"cp.async.bulk.tensor without .1d-.5d ({ins.where()})")
    rank = int(dim[0])
    for mode in ins.mods:
        if mode.startswith("im2col") or mode.startswith("tile::"):
            raise Unsupported(f"cp.async.bulk.tensor load mode .{mode} is not emulated (only .tile); "
                              f"({ins.where()})")
    dst_space, src_space = _spaces(ins)
    store = dst_space == "global"
    if store:
        if src_space != "shared::cta" or not ins.has("bulk_group"):
            raise Unsupported(f"TMA store form not recognised (want .global.shared::cta.bulk_group) ({ins.where()})")
        tm_op, src_op = ins.args[0], ins.args[1]
    else:
        if dst_space not in ("shared::cluster", "shared::cta") or src_space != "global":
            raise Unsupported(f"cp.async.bulk.tensor direction .{dst_space}.{src_space} is not supported "
                              f"({ins.where()})")
        if not ins.has("mbarrier::complete_tx::bytes"):
            raise Unsupported(f"TMA load without .mbarrier::complete_tx::bytes ({ins.where()})")
        dst_op, tm_op, mbar_op = ins.args[0], ins.args[1], ins.args[2]
    if not isinstance(tm_op, ir.Addr) or tm_op.vec is None or len(tm_op.vec.items) != rank:
        raise Unsupported(f"cp.async.bulk.tensor.{dim}: expected [tensorMap, {{{rank} coordinates}}] ({ins.where()})")
    rd_tm = ctx.address(ir.Addr(tm_op.base, tm_op.offset))
    rd_coords = [ctx.read(x, "s32") for x in tm_op.vec.items]
    multicast = _multicast(ins)
    pair = ins.has("cta_group::2")
    rest = ins.args[2:] if store else ins.args[3:]
    rd_mask = ctx.read(rest[0], "u16") if multicast else None

    if store:
        rd_src = ctx.address(src_op)

        def run_store(st, m):
            sel = _sel(st, m)
            srcs = shared_addresses(st, ins, rd_src(st), sel, "shared", "TMA store source")
            tms = _per_thread(st, rd_tm)
            cs = [_per_thread(st, r, np.int32) for r in rd_coords]
            for i, t in enumerate(sel):
                spec = _read_tensor_map(st, ins, t, int(tms[t]))
                _check_rank(st, ins, t, spec, rank)
                coords = [int(c[t]) for c in cs]
                plan = None
                if st.proxy is not None:   # the async proxy reads the source: it must be fenced (proxy.py)
                    try:
                        plan = plan_tensor_store(spec, coords, int(srcs[i]))
                    except EmuError:
                        plan = None        # reported with its own message when the store completes
                    if plan is not None:
                        st.proxy.check_read(st, ins, int(t), int(st.cta_of[t]), "TMA store cp.async.bulk.tensor "
                                            "source", addrs=plan.smem_addrs)
                op = _TensorStore(ins, int(t), int(st.cta_of[t]), spec, coords, int(srcs[i]), plan)
                _submit(st, int(t), op, group=True)
        return run_store

    rd_dst = ctx.address(dst_op)
    rd_bar = ctx.address(mbar_op)

    def run_load(st, m):
        sel = _sel(st, m)
        dctas, dsts = _dst_targets(st, ins, rd_dst(st), sel, dst_space, "TMA destination")
        bctas, bars = shared_targets(st, ins, rd_bar(st), sel, "shared", "TMA mbarrier")
        tms = _per_thread(st, rd_tm)
        cs = [_per_thread(st, r, np.int32) for r in rd_coords]
        masks = _per_thread(st, rd_mask, np.uint16) if rd_mask else None
        for i, t in enumerate(sel):
            cta = int(st.cta_of[t])
            if masks is not None:
                targets = _multicast_targets(st, ins, int(t), int(masks[t]), int(cl.rank_of(st, bctas[i])), pair)
            else:
                targets = [(int(dctas[i]), int(bctas[i]))]
            spec = _read_tensor_map(st, ins, t, int(tms[t]))
            _check_rank(st, ins, t, spec, rank)
            for _, bc in targets:
                if bc == cta and table_of(st, cta).find(int(bars[i])) is None:
                    st.fault(ins, t, f"TMA load signals mbarrier at shared {int(bars[i]):#x}, which is not "
                             "initialized",
                             "mbarrier.init it (and fence.mbarrier_init / __syncthreads) before issuing the copy")
            coords = [int(c[t]) for c in cs]
            # issue-time validation (alignment, coordinates, unsupported features) with the issuing thread located
            try:
                validate_load(spec, coords, int(dsts[i]))
            except EmuError as exc:
                _fault_from(st, ins, int(t), exc)
            st.engine.submit(_TensorLoad(ins, int(t), cta, spec, coords, int(dsts[i]), int(bars[i]), targets))
    return run_load


def _check_rank(st, ins, t, spec, rank: int) -> None:
    if spec.rank != rank:
        st.fault(ins, t, f"cp.async.bulk.tensor.{rank}d used with a rank-{spec.rank} tensor map",
                 "the .dim qualifier must equal the tensor map rank (PTX ISA 9.7.9.25.5.2)")


def build_bulk(ins: ir.Instr, ctx: Ctx):
    """Non-tensor cp.async.bulk: global -> shared::{cta,cluster} (mbarrier), shared::cta -> global (bulk_group)."""
    dst_space, src_space = _spaces(ins)
    if not src_space:
        raise Unsupported(f"cp.async.bulk form not recognised ({ins.where()})")
    rd_dst, rd_src = ctx.address(ins.args[0]), ctx.address(ins.args[1])
    rd_size = ctx.read(ins.args[2], "u32")
    if dst_space in ("shared::cta", "shared::cluster") and src_space == "global":
        if not ins.has("mbarrier::complete_tx::bytes"):
            raise Unsupported(f"cp.async.bulk global->shared needs .mbarrier::complete_tx::bytes ({ins.where()})")
        rd_bar = ctx.address(ins.args[3])
        multicast = _multicast(ins)
        pair = ins.has("cta_group::2")
        rd_mask = ctx.read(ins.args[4], "u16") if multicast else None

        def run_g2s(st, m):
            sel = _sel(st, m)
            dctas, dsts = _dst_targets(st, ins, rd_dst(st), sel, dst_space, "cp.async.bulk destination")
            bctas, bars = shared_targets(st, ins, rd_bar(st), sel, "shared", "cp.async.bulk mbarrier")
            srcs, sizes = _per_thread(st, rd_src), _per_thread(st, rd_size, np.uint32)
            masks = _per_thread(st, rd_mask, np.uint16) if rd_mask else None
            for i, t in enumerate(sel):
                cta = int(st.cta_of[t])
                if masks is not None:
                    targets = _multicast_targets(st, ins, int(t), int(masks[t]), int(cl.rank_of(st, bctas[i])), pair)
                else:
                    targets = [(int(dctas[i]), int(bctas[i]))]
                try:
                    n = check_bulk_copy(int(dsts[i]), int(srcs[t]), int(sizes[t]), direction="global->shared")
                except EmuError as exc:
                    _fault_from(st, ins, int(t), exc)
                _global_ptr(st, ins, int(t), int(srcs[t]), n, "cp.async.bulk source")
                for _, bc in targets:
                    if bc == cta and table_of(st, cta).find(int(bars[i])) is None:
                        st.fault(ins, t, f"cp.async.bulk signals mbarrier at shared {int(bars[i]):#x}, which is not "
                                 "initialized", "mbarrier.init it before issuing the copy")
                st.engine.submit(_BulkCopy(ins, int(t), cta, "global->shared", int(dsts[i]), int(srcs[t]), n,
                                           mbar=int(bars[i]), targets=targets))
        return run_g2s
    if dst_space == "global" and src_space == "shared::cta":
        if not ins.has("bulk_group"):
            raise Unsupported(f"cp.async.bulk shared->global needs .bulk_group ({ins.where()})")
        rest = ins.args[3:]
        rd_bm = ctx.read(rest[-1], "u16") if ins.has("cp_mask") else None

        def run_s2g(st, m):
            sel = _sel(st, m)
            srcs = shared_addresses(st, ins, rd_src(st), sel, "shared", "cp.async.bulk source")
            dsts, sizes = _per_thread(st, rd_dst), _per_thread(st, rd_size, np.uint32)
            bms = _per_thread(st, rd_bm, np.uint16) if rd_bm else None
            for i, t in enumerate(sel):
                try:
                    n = check_bulk_copy(int(dsts[t]), int(srcs[i]), int(sizes[t]), direction="shared->global")
                except EmuError as exc:
                    _fault_from(st, ins, int(t), exc)
                _global_ptr(st, ins, int(t), int(dsts[t]), n, "cp.async.bulk destination")
                if st.proxy is not None and st.proxy.dirty[st.cta_of[t]]:
                    what = "cp.async.bulk shared::cta -> global source"
                    if bms is None:
                        st.proxy.check_read(st, ins, int(t), int(st.cta_of[t]), what, lo=int(srcs[i]),
                                            hi=int(srcs[i]) + n)
                    else:   # .cp_mask: the async proxy reads only the bytes the mask selects
                        keep = np.flatnonzero([(int(bms[t]) >> k) & 1 for k in range(16)])
                        addrs = (int(srcs[i]) + np.arange(0, n, 16)[:, None] + keep[None, :]).ravel()
                        st.proxy.check_read(st, ins, int(t), int(st.cta_of[t]), what + " (.cp_mask bytes)",
                                            addrs=addrs)
                op = _BulkCopy(ins, int(t), int(st.cta_of[t]), "shared->global", int(dsts[t]), int(srcs[i]), n,
                               byte_mask=int(bms[t]) if bms is not None else None)
                _submit(st, int(t), op, group=True)
        return run_s2g
    if dst_space == "shared::cluster" and src_space == "shared::cta":
        return _build_s2cluster(ins, ctx, rd_dst, rd_src, rd_size)
    raise Unsupported(f"cp.async.bulk direction .{dst_space}.{src_space} is not supported ({ins.where()})")


def _build_s2cluster(ins, ctx, rd_dst, rd_src, rd_size):
    """cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dstMem], [srcMem], size, [mbar]
    (9.7.9.25.4.1): the executing CTA's SMEM to (usually) a peer's SMEM; complete_tx on the mbarrier in the
    destination CTA (the text puts mbar in the same CTA as dstMem: a barrier elsewhere is reported)."""
    if not ins.has("mbarrier::complete_tx::bytes") or len(ins.args) < 4:
        raise Unsupported(f"cp.async.bulk.shared::cluster.shared::cta needs .mbarrier::complete_tx::bytes and an "
                          f"mbarrier operand ({ins.where()})")
    rd_bar = ctx.address(ins.args[3])

    def run_s2c(st, m):
        sel = _sel(st, m)
        dctas, dsts = shared_targets(st, ins, rd_dst(st), sel, "shared", "cp.async.bulk destination")
        bctas, bars = shared_targets(st, ins, rd_bar(st), sel, "shared", "cp.async.bulk mbarrier")
        srcs = shared_addresses(st, ins, rd_src(st), sel, "shared", "cp.async.bulk source")
        sizes = _per_thread(st, rd_size, np.uint32)
        for i, t in enumerate(sel):
            cta = int(st.cta_of[t])
            if int(dctas[i]) == cta:
                st.fault(ins, int(t), "cp.async.bulk.shared::cluster.shared::cta: dstMem is in the executing CTA",
                         "rule: \"the destination has to be in the shared memory of a different CTA within the "
                         "cluster\" (PTX ISA 9.7.9.25.4.1); use a plain copy for the executing CTA's own SMEM")
            if int(bctas[i]) != int(dctas[i]):
                st.fault(ins, int(t), f"cp.async.bulk.shared::cluster.shared::cta: the mbarrier is in CTA rank "
                         f"{int(cl.rank_of(st, bctas[i]))} but dstMem in rank {int(cl.rank_of(st, dctas[i]))}",
                         "the PTX ISA (9.7.9.25.4.1) does not say that complete_tx may reach a barrier outside the "
                         "destination CTA; the emulator refuses it (ptx_docs/clusters.md): mapa both addresses to "
                         "the same rank")
            try:
                n = check_bulk_copy(int(dsts[i]), int(srcs[i]), int(sizes[t]), direction="shared::cta->shared::cluster")
            except EmuError as exc:
                _fault_from(st, ins, int(t), exc)
            if st.proxy is not None and st.proxy.dirty[cta]:   # the async proxy reads the source SMEM
                st.proxy.check_read(st, ins, int(t), cta, "cp.async.bulk shared::cta -> shared::cluster source",
                                    lo=int(srcs[i]), hi=int(srcs[i]) + n)
            if int(dctas[i]) == cta and table_of(st, cta).find(int(bars[i])) is None:
                st.fault(ins, t, f"cp.async.bulk signals mbarrier at shared {int(bars[i]):#x}, which is not "
                         "initialized", "mbarrier.init it before issuing the copy")
            st.engine.submit(_BulkCopy(ins, int(t), cta, "shared::cta->shared::cluster", int(dsts[i]), int(srcs[i]),
                                       n, mbar=int(bars[i]), targets=[(int(dctas[i]), int(bctas[i]))]))
    return run_s2c


def build_commit(ins: ir.Instr, ctx: Ctx):
    """Close this thread's open bulk async-group (9.7.9.25.1.1)."""
    def run(st, m):
        for t in _sel(st, m):
            g = bulk_groups(st, int(t))
            g.committed.append(g.open)
            g.open = []
        return None
    return run


def build_wait_group(ins: ir.Instr, ctx: Ctx):
    """Wait until at most N of this thread's committed bulk groups are pending (.read: treated as full completion)."""
    n_op = ins.args[0]
    if not isinstance(n_op, ir.Imm):
        raise Unsupported(f"cp.async.bulk.wait_group needs an immediate group count ({ins.where()})")
    keep = int(n_op.value)

    def run(st, m):
        for t in _sel(st, m):
            g = bulk_groups(st, int(t))
            old = g.committed[:len(g.committed) - keep] if keep else g.committed
            ops = [op for grp in old for op in grp]
            if any(not op.done for op in ops):
                st.engine.drain(st, until=lambda _op: all(o.done for o in ops))
            if any(not op.done for op in ops):
                st.fault(ins, int(t), "cp.async.bulk.wait_group: a committed bulk copy never completed",
                         "internal emulator error: the async engine lost an operation")
            g.committed = g.committed[len(old):]
        return None
    return run


def build_fence_proxy_async(ins: ir.Instr, ctx: Ctx):
    """fence.proxy.async{.shared::cta,.shared::cluster,.global} (PTX ISA 9.7.13.4): orders the executing thread's
    generic-proxy SMEM writes (and, cumulatively, those published to it by a CTA barrier) before later async-proxy
    reads; see proxy.py.  The .global form has nothing to clean (global memory is not shadowed)."""
    if any(m.startswith("global") for m in ins.mods[2:]):
        return lambda st, m: None

    def run(st, m):
        if st.proxy is not None:
            st.proxy.fence(st, m)
        return None
    return run


def build_noop(ins: ir.Instr, ctx: Ctx):
    """L2 prefetches and the tensormap proxy fence: accepted, no effect (one coherent memory image)."""
    def run(st, m):
        return None
    return run


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"dim": ("1d", "2d", "3d", "4d", "5d"), "scope": ("cta", "cluster", "gpu", "sys"),
        "cta_group": ("cta_group::1", "cta_group::2"), "dst": ("shared::cta", "shared::cluster"),
        "asyncsp": ("global", "shared::cta", "shared::cluster")}
FORMS = register(SETS, [
    # form                                                                                        PTX ISA
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{.multicast::cluster}",
     "9.7.9.25.4.1", build_bulk),
    ("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes",   "9.7.9.25.4.1", build_bulk),
    ("cp.async.bulk.global.shared::cta.bulk_group{.cp_mask}",   "9.7.9.25.4.1", build_bulk),
    ("cp.async.bulk.tensor(.2d|.3d|.4d).shared::cluster.global{.tile}.mbarrier::complete_tx::bytes"
     "{.multicast::cluster}{.cta_group::2}{.L2::cache_hint}",                     "9.7.9.27.1.2", build_tensor),
    ("cp.async.bulk.tensor(.2d|.3d|.4d).shared::cta.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint",
     "9.7.9.27.1.2", build_tensor),
    ("cp.async.bulk.tensor(.2d|.3d|.4d).global.shared::cta{.tile}.bulk_group{.L2::cache_hint}",
     "9.7.9.27.1.2", build_tensor),
    ("cp.async.bulk.prefetch.tensor(.2d|.3d|.4d).L2.global.tile.L2::cache_hint", "9.7.9.27.1.4", build_noop),
    ("cp.async.bulk.commit_group",                                               "9.7.9.27.2.1", build_commit),
    ("cp.async.bulk.wait_group{.read}",                                          "9.7.9.27.2.2", build_wait_group),
    ("fence.proxy.async{.asyncsp}",                                              "9.7.13.4", build_fence_proxy_async),
    ("fence.proxy.tensormap::generic.release.scope",                            "9.7.13.4", build_noop),
    ("fence.proxy.tensormap::generic.acquire.scope",                            "9.7.13.4", build_noop),
])
