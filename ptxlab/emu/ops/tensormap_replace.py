"""In-kernel tensor-map edits: ``tensormap.replace`` (PTX ISA 9.7.9.28) and ``tensormap.cp_fenceproxy`` (9.7.9.29).

    tensormap.replace.tile.field1{.ss}.b1024.type  [addr], new_val;         field1: .global_address, .rank
    tensormap.replace.tile.field2{.ss}.b1024.type  [addr], ord, new_val;    field2: .box_dim, .global_dim,
                                                                              .global_stride, .element_stride
    tensormap.replace.tile.field3{.ss}.b1024.type  [addr], new_val;         field3: .elemtype, .interleave_layout,
                                                                              .swizzle_mode, .swizzle_atomicity, .fill_mode
    tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst], [src], 128;

The 128-byte object may be an emulator image or a hardware image as the CuTe DSL encodes it; the field edit is
``ptxlab.tensormap_hw.replace_field`` (natural units; fields whose hardware encoding is not decoded accept only the
value the decoder assumes). Each executing thread edits / copies the object at its own address; the emulator has
one memory image, so the proxy fence orders nothing further. NVIDIA's CuTe DSL grouped GEMMs rewrite per-group maps
in shared memory this way and copy them to a global workspace.
"""
from __future__ import annotations

import numpy as np

from ...errors import TensorMapError
from ...tensormap_hw import replace_field
from ..core import ir
from ..core.isa import Ctx, Unsupported, register

_FIELDS1 = ("global_address", "rank")
_FIELDS2 = ("box_dim", "global_dim", "global_stride", "element_stride")
_FIELDS3 = ("elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode")
_WORDS = 16                         # 1024 bits as 16 x .b64 (each 8-byte aligned; the object is 64-byte aligned)


def _space(ins: ir.Instr, allowed=("global", "shared::cta")) -> str:
    got = [m for m in ins.mods if m in allowed]
    return {"global": "global", "shared::cta": "shared"}[got[0]] if got else "generic"


def _threads(st, m):
    return np.arange(st.T) if m is None else np.flatnonzero(m)


def _one(st, t):
    mk = np.zeros(st.T, np.bool_)
    mk[t] = True
    return mk


def build_replace(ins: ir.Instr, ctx: Ctx):
    """tensormap.replace.tile.<field>{.ss}.b1024.<type>."""
    field = next((f for f in _FIELDS1 + _FIELDS2 + _FIELDS3 if ins.has(f)), None)
    if not ins.has("tile") or not ins.has("b1024") or field is None:
        raise Unsupported(f"{ins.name}: not a tensormap.replace.tile.<field>...b1024 form ({ins.where()})")
    vtype = "b64" if ins.has("b64") else "b32" if ins.has("b32") else None
    want = "b64" if field in ("global_address", "global_stride") else "b32"
    if vtype != want:
        raise Unsupported(f"{ins.name}: .{field} takes a .{want} value (PTX ISA 9.7.9.28) ({ins.where()})")
    has_ord = field in _FIELDS2
    if len(ins.args) != (3 if has_ord else 2):
        raise Unsupported(f"{ins.name}: expected {'[addr], ord, new_val' if has_ord else '[addr], new_val'} "
                          f"({ins.where()})")
    if has_ord and not isinstance(ins.args[1], ir.Imm):
        raise Unsupported(f"{ins.name}: ord must be an immediate ({ins.where()})")
    if field in _FIELDS3 and not isinstance(ins.args[-1], ir.Imm):
        raise Unsupported(f"{ins.name}: new_val of .{field} must be an immediate ({ins.where()})")
    space = _space(ins)
    addr = ctx.address(ins.args[0])
    ordv = int(ins.args[1].value) if has_ord else 0
    val = ctx.read(ins.args[-1], "u64" if vtype == "b64" else "u32")

    def run(st, m):
        a = np.broadcast_to(np.asarray(addr(st), np.uint64), (st.T,))
        v = np.broadcast_to(np.asarray(val(st)), (st.T,))
        for t in _threads(st, m):
            mk = _one(st, t)
            words = st.load(ins, space, a, mk, np.uint64, _WORDS)[t]
            try:
                new = replace_field(words.tobytes(), field, ordv, int(v[t]))
            except TensorMapError as e:
                st.fault(ins, t, f"tensormap.replace.{field}: {e}")
            out = np.zeros((st.T, _WORDS), np.uint64)
            out[t] = np.frombuffer(new, np.uint64)
            st.store(ins, space, a, mk, out, np.uint64, _WORDS)
    return run


def build_cp_fenceproxy(ins: ir.Instr, ctx: Ctx):
    """tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.<scope>.sync.aligned [dst], [src], 128."""
    if not (ins.has("global") and ins.has("shared::cta") and ins.has("tensormap::generic")):
        raise Unsupported(f"{ins.name}: only .global.shared::cta.tensormap::generic is defined (PTX ISA 9.7.9.29) "
                          f"({ins.where()})")
    if len(ins.args) != 3 or not isinstance(ins.args[2], ir.Imm) or int(ins.args[2].value) != 128:
        raise Unsupported(f"{ins.name}: expected [dst], [src], 128 ({ins.where()})")
    dst, src = ctx.address(ins.args[0]), ctx.address(ins.args[1])

    def run(st, m):
        d = np.broadcast_to(np.asarray(dst(st), np.uint64), (st.T,))
        s = np.broadcast_to(np.asarray(src(st), np.uint64), (st.T,))
        words = st.load(ins, "shared", s, m, np.uint64, _WORDS)
        st.store(ins, "global", d, m, words, np.uint64, _WORDS)
    return run


__all__ = ["build_replace", "build_cp_fenceproxy"]


# ---------------------------------------------------------------------------------------------------------------
# the forms this family implements (PTX ISA notation, core/forms.py); anything else is refused as not implemented
# ---------------------------------------------------------------------------------------------------------------
SETS = {"field1": _FIELDS1, "field2": _FIELDS2, "field3": _FIELDS3, "ss": ("global", "shared::cta"),
        "type": ("b32", "b64")}
FORMS = register(SETS, [
    # form                                                                    PTX ISA     builder
    # (the generic-address form without .ss and .swizzle_atomicity: no test executes them, so they are refused)
    ("tensormap.replace.tile.field1.ss.b1024.type",                           "9.7.9.28", build_replace),
    ("tensormap.replace.tile.field2.ss.b1024.type",                           "9.7.9.28", build_replace),
    ("tensormap.replace.tile(.elemtype|.interleave_layout|.swizzle_mode|.fill_mode).ss.b1024.b32",
     "9.7.9.28", build_replace),
    ("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned",
     "9.7.9.29", build_cp_fenceproxy),
])
