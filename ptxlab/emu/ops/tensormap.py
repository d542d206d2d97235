"""tensormap.replace (PTX ISA 9.7.9.28) and tensormap.cp_fenceproxy (9.7.13.16) on the emulator's tensor maps.

The emulator's 128-byte tensor map image (ptxlab/tensormap.py, ptx_docs/tensor_maps.md) stands for the opaque
CUtensorMap; tensormap.replace rewrites one field of it in global or shared::cta memory and renews its checksum (the
map is validated when a TMA instruction uses it, as on hardware, so intermediate states of a sequence of replaces may
be inconsistent).  Field encodings: .global_address the byte address (b64), .rank new_val + 1, .global_dim[ord] the
extent, .global_stride[ord] the byte stride of dimension ord + 1 (b64, CUTLASS copy_sm90_desc.hpp passes bytes),
.box_dim[ord] / .element_stride[ord] the value, .elemtype / .interleave_layout / .swizzle_mode / .fill_mode the codes
of the ISA's Table 33 (.swizzle_mode 4 = 96B, sm_103a, and .swizzle_atomicity are refused).
tensormap.cp_fenceproxy copies 128 bytes from shared::cta to global memory (the proxy fence has nothing to order here).
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

from ..core import ir
from ..core.isa import Ctx, Unsupported, register

from .bulk_copy import _per_thread, _sel

_ELEMTYPE = ["UINT8", "UINT16", "UINT32", "INT32", "UINT64", "INT64", "FLOAT16", "FLOAT32", "FLOAT32_FTZ",
             "FLOAT64", "BFLOAT16", "TFLOAT32", "TFLOAT32_FTZ", "16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B"]
_SWIZZLE = ["none", "32B", "64B", "128B"]
_INTERLEAVE = ["none", "16B", "32B"]
_FILL = ["none", "nan"]
# (byte offset, struct format) of each field in the image; per-ordinal fields: base offset and element size
_FIELD = {"global_address": (16, "<Q"), "rank": (11, "<B"), "elemtype": (10, "<B"), "interleave_layout": (12, "<B"),
          "swizzle_mode": (13, "<B"), "fill_mode": (15, "<B"), "global_dim": (24, "<Q"), "global_stride": (64, "<Q"),
          "box_dim": (96, "<H"), "element_stride": (106, "<B")}


def _code(field: str, v: int) -> int:
    from ...tensormap import DTYPE_CODES, INTERLEAVE_CODES, OOB_FILL_CODES, SWIZZLE_CODES
    table = {"elemtype": (_ELEMTYPE, DTYPE_CODES), "swizzle_mode": (_SWIZZLE, SWIZZLE_CODES),
             "interleave_layout": (_INTERLEAVE, INTERLEAVE_CODES), "fill_mode": (_FILL, OOB_FILL_CODES)}[field]
    names, codes = table
    if not 0 <= v < len(names):
        raise ValueError(f".{field} value {v} is not in the PTX ISA's Table 33 (or not emulated)")
    return codes[names[v]]


def replace_field(raw: bytes, field: str, ordinal: int, value: int) -> bytes:
    """The 128-byte image with ``field`` (element ``ordinal`` of the per-dimension fields) set to ``value``."""
    buf = bytearray(raw)
    off, fmt = _FIELD[field]
    if field in ("global_dim", "global_stride", "box_dim", "element_stride"):
        limit = 4 if field == "global_stride" else 5
        if not 0 <= ordinal < limit:
            raise ValueError(f".{field} ordinal {ordinal} out of range 0..{limit - 1}")
        off += ordinal * struct.calcsize(fmt)
    if field == "rank":
        value += 1                       # the field is zero-based (PTX ISA 9.7.9.28)
    elif field in ("elemtype", "swizzle_mode", "interleave_layout", "fill_mode"):
        value = _code(field, value)
    struct.pack_into(fmt, buf, off, value & ((1 << (8 * struct.calcsize(fmt))) - 1))
    struct.pack_into("<I", buf, 124, zlib.crc32(bytes(buf[:124])))
    return bytes(buf)


def _store128(st, ins, space, addr, mask, data):
    """Store (T, 128) bytes at 64-byte aligned addresses (a CUtensorMap is 64-byte aligned: two 64-byte halves)."""
    words = np.ascontiguousarray(np.broadcast_to(data, (st.T, 128))).view(np.uint64)
    a = np.broadcast_to(np.asarray(addr, np.uint64), (st.T,))
    st.store(ins, space, a, mask, words[:, :8], np.uint64, 8)
    st.store(ins, space, a + np.uint64(64), mask, words[:, 8:], np.uint64, 8)


def build_replace(ins: ir.Instr, ctx: Ctx):
    """tensormap.replace.tile.<field>{.global|.shared::cta}.b1024.<b32|b64> [addr]{, ord}, new_val."""
    field = next(x for x in ins.mods if x in _FIELD)
    space = "global" if ins.has("global") else ("shared" if ins.has("shared::cta") else "generic")
    addr = ctx.address(ins.args[0])
    has_ord = field in ("global_dim", "global_stride", "box_dim", "element_stride")
    if has_ord and not isinstance(ins.args[1], ir.Imm):
        raise Unsupported(f"{ins.name}: ord must be an immediate (PTX ISA 9.7.9.28) ({ins.where()})")
    ordinal = int(ins.args[1].value) if has_ord else 0
    if field in ("elemtype", "interleave_layout", "swizzle_mode", "fill_mode"):
        # ptxas: "Integer constant expression expected" (and a range check) for these fields' new_val
        v = ins.args[-1]
        if not isinstance(v, ir.Imm):
            raise Unsupported(f"{ins.name}: new_val of .{field} must be an immediate (ptxas rule) ({ins.where()})")
        try:
            _code(field, int(v.value))
        except ValueError as e:
            raise Unsupported(f"{ins.name}: {e} ({ins.where()})") from None
    rd_val = ctx.read(ins.args[-1], "b64" if field in ("global_address", "global_stride") else "b32")

    def run(st, m):
        sel = _sel(st, m)
        a = _per_thread(st, addr)
        v = _per_thread(st, rd_val)
        one = np.zeros(st.T, bool)
        for t in sel:
            one[:] = False
            one[t] = True
            raw = st.load(ins, space, np.uint64(int(a[t])), one, np.uint8, 128, align=64)[t]
            try:
                new = replace_field(bytes(raw), field, ordinal, int(v[t]))
            except ValueError as e:
                st.fault(ins, int(t), f"tensormap.replace: {e}")
            _store128(st, ins, space, np.uint64(int(a[t])), one, np.frombuffer(new, np.uint8))
    return run


def build_cp_fenceproxy(ins: ir.Instr, ctx: Ctx):
    """tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.<scope>.sync.aligned [dst], [src], 128:
    copy the tensor map from shared::cta to global memory (9.7.13.16)."""
    rd_dst, rd_src = ctx.address(ins.args[0]), ctx.address(ins.args[1])
    if not isinstance(ins.args[2], ir.Imm) or int(ins.args[2].value) != 128:
        raise Unsupported(f"{ins.name}: size must be the immediate 128 (PTX ISA 9.7.13.16) ({ins.where()})")

    def run(st, m):
        sel = _sel(st, m)
        d, s = _per_thread(st, rd_dst), _per_thread(st, rd_src)
        mask = np.zeros(st.T, bool)
        mask[sel] = True
        data = st.load(ins, "shared", s, mask, np.uint8, 128, align=64)
        _store128(st, ins, "global", d, mask, data)
    return run


SETS = {"field1": ("global_address", "rank"), "field2": ("box_dim", "global_dim", "global_stride", "element_stride"),
        "field3": ("elemtype", "interleave_layout", "swizzle_mode", "fill_mode"), "ss": ("global", "shared::cta"),
        "type": ("b32", "b64"), "scope": ("cta", "cluster", "gpu", "sys")}
FORMS = register(SETS, [
    # form                                                                           PTX ISA     builder
    ("tensormap.replace.tile.field1(.global|.shared::cta).b1024.type",                               "9.7.9.28", build_replace),
    ("tensormap.replace.tile.field2(.global|.shared::cta).b1024.type",                               "9.7.9.28", build_replace),
    ("tensormap.replace.tile.field3(.global|.shared::cta).b1024.b32",                               "9.7.9.28", build_replace),
    ("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned",
     "9.7.13.16", build_cp_fenceproxy),
])

