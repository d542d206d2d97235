"""Bulk reductions: cp.reduce.async.bulk (PTX ISA 9.7.9.25.4.2) and cp.reduce.async.bulk.tensor (9.7.9.27.1.3).

Asynchronous like the bulk copies of bulk_copy.py (validated and located at issue, performed by the async engine,
completed through the bulk async-group or the mbarrier's complete-tx): each destination element becomes
``redOp(destination, source)``.  Element rules (9.7.9.25.4.2): integer add wraps; .inc/.dec as in atom
(``cur >= src ? 0 : cur + 1``, ``cur == 0 || cur > src ? src : cur - 1``); .add.f32 rounds to nearest even and, as
the H100 does, keeps subnormals (the ISA's note says "the current implementation" flushes them); .add.noftz.f16/.bf16
keep subnormals, .f64 add is IEEE round-to-nearest with a 0x7ff8... operand giving 0x7ff8... (other NaN cases
refused: unmeasured); .min/.max of .f16/.bf16 return the other operand when one is NaN (canonical NaN when both are).
The tensor form reduces the box of the tensor map (tile mode) into global memory, element type from the map.
"""
from __future__ import annotations

import numpy as np

from ...errors import EmuError
from ..core import ir
from ..core.isa import Ctx, Unsupported, register
from ..core.memory import GLOBAL_BASE
from ..hw.tma import check_bulk_copy, plan_tensor_store
from .atomic import _combine
from .bulk_copy import (_check_rank, _fault_from, _global_ptr, _per_thread, _read_tensor_map, _sel, _submit)
from .floating_point import H_NAN, _half_vals, f32_add, f64_add, minmax_vals
from .mbarrier import complete_tx_on, shared_addresses, shared_targets

_NP = {"b32": np.uint32, "u32": np.uint32, "s32": np.uint32, "b64": np.uint64, "u64": np.uint64,
       "s64": np.uint64, "f32": np.uint32, "f64": np.uint64, "f16": np.uint16, "bf16": np.uint16}
_TMAP = {"UINT32": "u32", "INT32": "s32", "UINT64": "u64", "INT64": "s64", "FLOAT32": "f32", "FLOAT64": "f64",
         "FLOAT16": "f16", "BFLOAT16": "bf16", "FLOAT32_FTZ": "f32"}


_F64_QNAN = np.uint64(0x7FF8000000000000)


def reduce_elems(op: str, ty: str, cur: np.ndarray, src: np.ndarray) -> np.ndarray:
    """New destination elements (storage dtype) of one bulk reduction."""
    if ty == "f32" and op == "add":
        # no flush: the H100 keeps a subnormal destination plus +0 (0x800002ca + 0 -> 0x800002ca; H100 corpus
        # bulk_reduce, 2026-11-27) where the ISA's "current implementation" note says subnormals are flushed
        return f32_add(cur, src, "rn", False).astype(np.uint32)
    if ty == "f64" and op == "add":
        r = f64_add(cur, src, "rn").astype(np.uint64)
        nan = np.isnan(r.view(np.float64))
        if nan.any():
            c, s = np.asarray(cur, np.uint64)[nan], np.asarray(src, np.uint64)[nan]
            measured = ((c == _F64_QNAN) | (s == _F64_QNAN)) & \
                (~np.isnan(c.view(np.float64)) | (c == _F64_QNAN)) & (~np.isnan(s.view(np.float64)) | (s == _F64_QNAN))
            if not measured.all():
                raise EmuError("not implemented: cp.reduce.async.bulk .add.f64 whose result is a NaN other than "
                               "0x7ff8000000000000 + x (the H100 returned 0x7ff8000000000000 for that; created NaNs "
                               "and other payloads are unmeasured: ptx_docs/isa_coverage_notes.md)")
            r[nan] = _F64_QNAN
        return r
    if ty in ("f16", "bf16") and op in ("min", "max"):
        r = minmax_vals(_half_vals(cur, ty), _half_vals(src, ty), op == "max", False)
        import ml_dtypes
        h = r.astype(np.float16 if ty == "f16" else ml_dtypes.bfloat16).view(np.uint16)
        return np.where(np.isnan(r), H_NAN, h).astype(np.uint16)
    return np.asarray(_combine(op, ty, cur, src, None, False)).astype(cur.dtype)


def _typed(buf: np.ndarray, ty: str) -> np.ndarray:
    return np.ascontiguousarray(buf).view(_NP[ty])


class _BulkReduce:
    """One cp.reduce.async.bulk: ``size`` bytes of the executing CTA's SMEM reduced into global memory or into a
    (peer) CTA's SMEM (mbarrier completion)."""

    def __init__(self, ins, t, cta, op, ty, dst, src, size, dst_cta=None, mbar=None, bar_cta=None):
        self.ins, self.thread, self.cta, self.op, self.ty = ins, t, cta, op, ty
        self.dst, self.src, self.size, self.dst_cta, self.mbar, self.bar_cta = dst, src, size, dst_cta, mbar, bar_cta
        self.done = False

    def smem_dest(self, st):
        return [(self.dst_cta, self.thread)] if self.dst_cta is not None else []

    def describe(self) -> str:
        where = "global" if self.dst_cta is None else f"shared::cluster (CTA {self.dst_cta})"
        return (f"cp.reduce.async.bulk.{self.op}.{self.ty} {self.size} bytes shared {self.src:#x} -> {where} "
                f"{self.dst:#x} (PTX line {self.ins.line})")

    def complete(self, st) -> None:
        smem = st.smem_of(self.cta)
        n = self.size
        if self.src + n > smem.size:
            st.fault(self.ins, self.thread, f"cp.reduce.async.bulk reads shared [{self.src:#x}, {self.src + n:#x}) "
                     f"past this CTA's {smem.size} bytes")
        src = _typed(smem[self.src:self.src + n].copy(), self.ty)
        if self.dst_cta is None:
            off = self.dst - GLOBAL_BASE
            cur = _typed(st.heap.buf[off:off + n].copy(), self.ty)
            st.heap.buf[off:off + n] = reduce_elems(self.op, self.ty, cur, src).view(np.uint8)
            self.done = True
            return
        dsm = st.smem_of(self.dst_cta)
        if self.dst + n > dsm.size:
            st.fault(self.ins, self.thread, f"cp.reduce.async.bulk writes shared [{self.dst:#x}, {self.dst + n:#x}) "
                     f"past the destination CTA's {dsm.size} bytes")
        cur = _typed(dsm[self.dst:self.dst + n].copy(), self.ty)
        dsm[self.dst:self.dst + n] = reduce_elems(self.op, self.ty, cur, src).view(np.uint8)
        if st.proxy is not None:
            st.proxy.clean(self.dst_cta, lo=self.dst, hi=self.dst + n)
        self.done = True
        complete_tx_on(st, self.ins, self.thread, self.bar_cta, self.mbar, n)


def _op_type(ins):
    op = next(x for x in ins.mods if x in ("add", "min", "max", "inc", "dec", "and", "or", "xor"))
    return op, next((x for x in reversed(ins.mods) if x in _NP), None)


def build_reduce(ins: ir.Instr, ctx: Ctx):
    """cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.redOp.type [dst], [src], size{, policy}
    and cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.redOp.type [dst], [src], size,
    [mbar]."""
    op, ty = _op_type(ins)
    rd_dst, rd_src = ctx.address(ins.args[0]), ctx.address(ins.args[1])
    rd_size = ctx.read(ins.args[2], "u32")
    to_global = ins.has("bulk_group")
    rd_bar = None if to_global else ctx.address(ins.args[3])

    def run(st, m):
        sel = _sel(st, m)
        srcs = shared_addresses(st, ins, rd_src(st), sel, "shared", "cp.reduce.async.bulk source")
        sizes = _per_thread(st, rd_size, np.uint32)
        if to_global:
            dsts = _per_thread(st, rd_dst)
        else:
            dctas, dsts = shared_targets(st, ins, rd_dst(st), sel, "shared", "cp.reduce.async.bulk destination")
            bctas, bars = shared_targets(st, ins, rd_bar(st), sel, "shared", "cp.reduce.async.bulk mbarrier")
        for i, t in enumerate(sel):
            t = int(t)
            cta = int(st.cta_of[t])
            d = int(dsts[t] if to_global else dsts[i])
            try:
                n = check_bulk_copy(d, int(srcs[i]), int(sizes[t]), direction="reduce")
            except EmuError as exc:
                _fault_from(st, ins, t, exc)
            if st.proxy is not None and st.proxy.dirty[cta]:
                st.proxy.check_read(st, ins, t, cta, "cp.reduce.async.bulk source", lo=int(srcs[i]),
                                    hi=int(srcs[i]) + n)
            if to_global:
                _global_ptr(st, ins, t, d, n, "cp.reduce.async.bulk destination")
                _submit(st, t, _BulkReduce(ins, t, cta, op, ty, d, int(srcs[i]), n), group=True)
            else:
                if int(bctas[i]) != int(dctas[i]):
                    st.fault(ins, t, "cp.reduce.async.bulk: the mbarrier is not in the destination CTA",
                             "the complete-tx goes to the mbarrier of the CTA whose shared memory is reduced "
                             "(PTX ISA 9.7.9.25.4.2)")
                st.engine.submit(_BulkReduce(ins, t, cta, op, ty, d, int(srcs[i]), n, dst_cta=int(dctas[i]),
                                             mbar=int(bars[i]), bar_cta=int(bctas[i])))
    return run


class _TensorReduce:
    def __init__(self, ins, t, cta, spec, coords, src, op, ty):
        self.ins, self.thread, self.cta, self.spec, self.coords, self.src, self.op, self.ty = \
            ins, t, cta, spec, coords, src, op, ty
        self.done = False

    def smem_dest(self, st):
        return []

    def describe(self) -> str:
        return (f"cp.reduce.async.bulk.tensor.{self.spec.rank}d.{self.op} shared {self.src:#x} -> box at "
                f"{list(self.coords)} (PTX line {self.ins.line})")

    def complete(self, st) -> None:
        try:
            plan = plan_tensor_store(self.spec, self.coords, self.src)
        except EmuError as exc:
            _fault_from(st, self.ins, self.thread, exc)
        smem = st.smem_of(self.cta)
        eb = np.dtype(_NP[self.ty]).itemsize
        if plan.smem_addrs.size:
            s = plan.smem_addrs.reshape(-1, eb)
            g = (plan.gmem_addrs - GLOBAL_BASE).reshape(-1, eb)
            if st.heap.check(g.ravel(), 1) is not None:
                st.fault(self.ins, self.thread, "TMA reduce writes outside every global allocation")
            src = _typed(smem[s].reshape(-1), self.ty)
            cur = _typed(st.heap.buf[g].reshape(-1), self.ty)
            st.heap.buf[g.ravel()] = reduce_elems(self.op, self.ty, cur, src).view(np.uint8)
        self.done = True


# element types per tensor reduction op (PTX ISA 9.7.9.27.1.3).  .and/.or/.xor are given for .b32/.b64: the emulator
# takes the unsigned maps only, since the H100 raised CUDA_ERROR_ILLEGAL_INSTRUCTION for .or on an INT64 map
# (tests/corpus/kernels_bulk_reduce.py, 2026-11-27; .and on UINT64 ran).
_BITOPS = ("and", "or", "xor")
_TENSOR_OK = {"add": ("u32", "s32", "u64", "f32", "f64", "f16", "bf16"),
              "min": ("u32", "s32", "u64", "s64", "f16", "bf16"), "max": ("u32", "s32", "u64", "s64", "f16", "bf16"),
              "inc": ("u32",), "dec": ("u32",), **{b: ("u32", "u64") for b in _BITOPS}}
# a signed map with a bitwise op (PTX ISA names .b32/.b64): the H100 runs .xor on an INT32 map (same bits as UINT32;
# corpus bulk_reduce_t_xor_int32, 2026-11-27) and raises CUDA_ERROR_ILLEGAL_INSTRUCTION for .and / .or on INT64
# maps; the other signed combinations are unmeasured and refused
_TENSOR_OK["xor"] = ("u32", "u64", "s32")


def build_tensor_reduce(ins: ir.Instr, ctx: Ctx):
    """cp.reduce.async.bulk.tensor.{1..5}d.global.shared::cta.redOp{.tile}.bulk_group [tensorMap, coords], [src]."""
    dim = next(m for m in ins.mods if m in ("1d", "2d", "3d", "4d", "5d"))
    rank = int(dim[0])
    op, _ = _op_type(ins)
    tm_op, src_op = ins.args[0], ins.args[1]
    if not isinstance(tm_op, ir.Addr) or tm_op.vec is None or len(tm_op.vec.items) != rank:
        raise Unsupported(f"{ins.name}: expected [tensorMap, {{{rank} coordinates}}] ({ins.where()})")
    rd_tm = ctx.address(ir.Addr(tm_op.base, tm_op.offset))
    rd_coords = [ctx.read(x, "s32") for x in tm_op.vec.items]
    rd_src = ctx.address(src_op)

    def run(st, m):
        sel = _sel(st, m)
        srcs = shared_addresses(st, ins, rd_src(st), sel, "shared", "TMA reduce source")
        tms = _per_thread(st, rd_tm)
        cs = [_per_thread(st, r, np.int32) for r in rd_coords]
        for i, t in enumerate(sel):
            t = int(t)
            spec = _read_tensor_map(st, ins, t, int(tms[t]))
            _check_rank(st, ins, t, spec, rank)
            ty = _TMAP.get(spec.dtype)
            ok = _TENSOR_OK[op]
            if ty not in ok:
                signed = op in _BITOPS and ty in ("s32", "s64")
                st.fault(ins, t, f"cp.reduce.async.bulk.tensor .{op} with a {spec.dtype} tensor map" +
                         (" (a bitwise reduction on a signed tensor map: refused)" if signed else ""),
                         f"PTX ISA 9.7.9.27.1.3: .{op} takes {', '.join(ok)} elements" +
                         ("; .and/.or/.xor name .b32/.b64; the H100 raised CUDA_ERROR_ILLEGAL_INSTRUCTION for "
                          ".and / .or with an INT64 map and ran .xor with an INT32 one; other signed maps are "
                          "unmeasured (ptx_docs/isa_coverage_notes.md): use a UINT32 / UINT64 map"
                          if signed else ""))
            coords = [int(c[t]) for c in cs]
            _submit(st, t, _TensorReduce(ins, t, int(st.cta_of[t]), spec, coords, int(srcs[i]), op, ty), group=True)
    return run


SETS = {"dim": ("1d", "2d", "3d", "4d", "5d"), "redop": ("add", "min", "max", "inc", "dec", "and", "or", "xor"),
        "bitop": ("and", "or", "xor"), "mm": ("min", "max"), "incdec": ("inc", "dec"),
        "cadd": ("u32", "s32", "u64"), "cmm": ("u32", "s32"), "gadd": ("u32", "s32", "u64", "f32", "f64"),
        "gmm": ("u32", "s32", "u64", "s64", "f16", "bf16"), "gbit": ("b32", "b64"), "half": ("f16", "bf16")}
_C = "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"
_G = "cp.reduce.async.bulk.global.shared::cta.bulk_group"
FORMS = register(SETS, [
    # form                                                       PTX ISA          builder
    (f"{_C}.add.cadd",                                          "9.7.9.25.4.2", build_reduce),
    (f"{_C}.mm.cmm",                                            "9.7.9.25.4.2", build_reduce),
    (f"{_C}.incdec.u32",                                        "9.7.9.25.4.2", build_reduce),
    (f"{_C}.bitop.b32",                                         "9.7.9.25.4.2", build_reduce),
    (f"{_G}.add.gadd",                                          "9.7.9.25.4.2", build_reduce),
    (f"{_G}.add.noftz.half",                                    "9.7.9.25.4.2", build_reduce),
    (f"{_G}.mm.gmm",                                            "9.7.9.25.4.2", build_reduce),
    (f"{_G}.incdec.u32",                                        "9.7.9.25.4.2", build_reduce),
    (f"{_G}.bitop.gbit",                                        "9.7.9.25.4.2", build_reduce),
    ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.redop.tile.bulk_group",
     "9.7.9.27.1.3", build_tensor_reduce),
])
