"""tcgen05.mma instruction descriptor (32-bit), PTX ISA 9.7.16.4.2 Tables 42 (f16/tf32/f8f6f4/i8) and 43/44
(mxf8f6f4, mxf4, mxf4nvf4); CUTLASS `UMMA::InstrDescriptor` / `InstrDescriptorBlockScaled`.

One `BitLayout` per kind drives encode / decode / pretty; `validate_idesc` adds the per-kind rules
(legal formats, Table 39 shapes, transpose, scale type, SF IDs).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ptxlab.desc.fields import BitLayout, DescError, Decoded, Field

__all__ = ["KINDS", "BLOCK_SCALED", "IDESC_LAYOUTS", "InstrDesc", "IdescInfo", "decode_idesc", "validate_idesc"]

KINDS = ("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")
BLOCK_SCALED = ("mxf8f6f4", "mxf4", "mxf4nvf4")

_F8F6F4 = {0: "E4M3", 1: "E5M2", 3: "E2M3", 4: "E3M2", 5: "E2M1"}
AB_FORMATS: dict[str, dict[int, str]] = {
    "f16": {0: "F16", 1: "BF16"},
    "tf32": {2: "TF32"},
    "f8f6f4": _F8F6F4,
    "i8": {0: "U8", 1: "S8"},
    "mxf8f6f4": _F8F6F4,
    "mxf4": {1: "E2M1"},
    "mxf4nvf4": {1: "E2M1"},
}
D_FORMATS = {0: "F16", 1: "F32", 2: "S32"}
SCALE_FORMATS = {0: "UE4M3", 1: "UE8M0"}
MAJOR = {0: "K", 1: "MN"}
MAX_SHIFT = {0: "none", 1: "8", 2: "16", 3: "32"}
# MMA K (dense) per kind, PTX ISA 9.7.16.2.1 Table 39; sparse doubles it.
K_DENSE = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}

T42 = "PTX ISA 9.7.16.4.2 Table 42"
T4344 = "PTX ISA 9.7.16.4.2 Tables 43/44"
T39 = "PTX ISA 9.7.16.2.1 Table 39"


def _dense_layout(kind: str) -> BitLayout:
    ab = AB_FORMATS[kind]
    return BitLayout(
        name="idesc",
        nbits=32,
        source=f"{T42}; CUTLASS UMMA::InstrDescriptor",
        fields=(
            Field("sparse_id2", 0, 2, "sparsity selector (metadata id2)"),
            Field("sparse", 2, 1, "sparsity flag (0 dense, 1 sparse)"),
            Field("saturate", 3, 1, "saturate (kind::i8 only)"),
            Field("d_fmt", 4, 2, "D (accumulator) type", enum=D_FORMATS),
            Field("_rsv6", 6, 1, "reserved", fixed=0),
            Field("a_fmt", 7, 3, f"A type for kind::{kind}", enum=ab),
            Field("b_fmt", 10, 3, f"B type for kind::{kind}", enum=ab),
            Field("negate_a", 13, 1, "negate A"),
            Field("negate_b", 14, 1, "negate B"),
            Field("a_major", 15, 1, "transpose A (0 = K-major, 1 = M-major)", enum=MAJOR),
            Field("b_major", 16, 1, "transpose B (0 = K-major, 1 = N-major)", enum=MAJOR),
            Field("n", 17, 6, "N, stored N >> 3", shift=3),
            Field("_rsv23", 23, 1, "reserved", fixed=0),
            Field("m", 24, 5, "M, stored M >> 4", shift=4),
            Field("_rsv29", 29, 1, "reserved", fixed=0),
            Field("max_shift", 30, 2, "maximum shift for .ws B reuse", enum=MAX_SHIFT),
        ),
    )


def _block_layout(kind: str) -> BitLayout:
    ab = AB_FORMATS[kind]
    b_fields: tuple[Field, ...]
    if kind == "mxf8f6f4":
        b_fields = (Field("b_fmt", 10, 3, f"B type for kind::{kind}", enum=ab),)
    else:  # Table 44: B type is 2 bits, bit 12 reserved
        b_fields = (Field("b_fmt", 10, 2, f"B type for kind::{kind}", enum=ab),
                    Field("_rsv12", 12, 1, "reserved", fixed=0))
    return BitLayout(
        name="idesc",
        nbits=32,
        source=f"{T4344}; CUTLASS UMMA::InstrDescriptorBlockScaled",
        fields=(
            Field("sparse_id2", 0, 2, "sparsity selector (reserved when dense)"),
            Field("sparse", 2, 1, "sparsity flag (0 dense, 1 sparse)"),
            Field("_rsv3", 3, 1, "reserved", fixed=0),
            Field("sfb_id", 4, 2, "SFB ID (byte / half-word select in the SF TMEM word)"),
            Field("_rsv6", 6, 1, "reserved", fixed=0),
            Field("a_fmt", 7, 3, f"A type for kind::{kind}", enum=ab),
            *b_fields,
            Field("negate_a", 13, 1, "negate A"),
            Field("negate_b", 14, 1, "negate B"),
            Field("a_major", 15, 1, "transpose A (0 = K-major, 1 = M-major)", enum=MAJOR),
            Field("b_major", 16, 1, "transpose B (0 = K-major, 1 = N-major)", enum=MAJOR),
            Field("n", 17, 6, "N, stored N >> 3", shift=3),
            Field("scale_fmt", 23, 1, "scale factor type (SFA and SFB)", enum=SCALE_FORMATS),
            Field("_rsv24", 24, 3, "reserved (M is in bits 28..27)", fixed=0),
            Field("m", 27, 2, "M, stored M >> 7", shift=7),
            Field("sfa_id", 29, 2, "SFA ID (byte / half-word select in the SF TMEM word)"),
            Field("k_size", 31, 1, "K size: 0 = K64 dense/K128 sparse; 1 = K96 dense (sm_103a)"),
        ),
    )


IDESC_LAYOUTS: dict[str, BitLayout] = {
    k: (_block_layout(k) if k in BLOCK_SCALED else _dense_layout(k)) for k in KINDS
}

_DEFAULTS: dict[str, dict[str, str]] = {
    "f16": dict(a_fmt="F16", b_fmt="F16", d_fmt="F32"),
    "tf32": dict(a_fmt="TF32", b_fmt="TF32", d_fmt="F32"),
    "f8f6f4": dict(a_fmt="E4M3", b_fmt="E4M3", d_fmt="F32"),
    "i8": dict(a_fmt="S8", b_fmt="S8", d_fmt="S32"),
    "mxf8f6f4": dict(a_fmt="E4M3", b_fmt="E4M3", scale_fmt="UE8M0"),
    "mxf4": dict(a_fmt="E2M1", b_fmt="E2M1", scale_fmt="UE8M0"),
    "mxf4nvf4": dict(a_fmt="E2M1", b_fmt="E2M1", scale_fmt="UE4M3"),
}


def _kind(kind: str) -> str:
    k = kind.lower().replace("kind::", "")
    if k not in KINDS:
        raise DescError(f"idesc: unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    return k


@dataclass
class IdescInfo:
    """Decoded instruction descriptor with every implied property; `errors` empty = legal."""

    kind: str
    raw: int
    m: int
    n: int
    k: int
    a_fmt: str
    b_fmt: str
    d_fmt: str
    scale_fmt: Optional[str]
    negate_a: int
    negate_b: int
    a_major: str
    b_major: str
    sfa_id: int
    sfb_id: int
    sparse: int
    sparse_id2: int
    saturate: int
    max_shift: int
    k_size: int
    errors: list[str] = field(default_factory=list)

    @property
    def k_size_value(self) -> int:
        """MMA K (alias of `k`)."""
        return self.k

    @property
    def shape(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"


def _fmt_errors(kind: str, d: Decoded) -> list[str]:
    table = T4344 if kind in BLOCK_SCALED else T42
    out = []
    for e in d.errors:
        e2 = e + (f" ({table})" if f"kind::{kind}" in e else f" for kind::{kind} ({table})")
        if kind in ("mxf4", "mxf4nvf4") and (e.startswith("idesc.a_fmt") or e.startswith("idesc.b_fmt")
                                              or e.startswith("idesc._rsv12")):
            e2 += "; E2M1 is code 1 under mxf4/mxf4nvf4 (5 is the f8f6f4/mxf8f6f4 code)"
        if e.startswith("idesc._rsv24"):
            e2 += ("; M is stored as M>>7 in bits 28..27 for block-scaled kinds (CUTLASS writes M>>4 into 28..24, "
                   "bit-identical only for M=128/256): bits 26..24 set means an illegal M or M>>7 written at bit 24")
        out.append(e2)
    return out


def _shape_errors(kind: str, m: int, n: int, sparse: int, cta_group: int, ws: bool) -> list[str]:
    errs: list[str] = []
    tag = f"for kind::{kind} cta_group::{cta_group}{' .ws' if ws else ''} ({T39})"
    if ws:
        if kind in BLOCK_SCALED:
            return [f"idesc: .ws is invalid {tag}"]
        if cta_group != 1:
            return [f"idesc: .ws with cta_group::2 is invalid {tag}"]
        if m not in (32, 64, 128):
            errs.append(f"idesc.m: M={m} must be 32, 64 or 128 {tag}")
        legal_n = (64, 128) if sparse else (64, 128, 256)
        if n not in legal_n:
            errs.append(f"idesc.n: N={n} must be one of {legal_n} {tag}")
        return errs
    if cta_group == 1:
        legal_m = (128,) if kind in BLOCK_SCALED else (64, 128)
        step = 8
    elif cta_group == 2:
        legal_m = (128, 256)
        step = 16
    else:
        return [f"idesc: cta_group must be 1 or 2, got {cta_group}"]
    if m not in legal_m:
        hint = ""
        if kind not in BLOCK_SCALED and m in (16, 32) and (m // 16) in (1, 2):
            hint = " (M=16/32 here usually means M>>7 was written where M>>4 belongs)"
        errs.append(f"idesc.m: M={m} must be one of {legal_m} {tag}{hint}")
    if not (n % step == 0 and step <= n <= 256):
        errs.append(f"idesc.n: N={n} must be a multiple of {step} in [{step},256] {tag}")
    return errs


def validate_idesc(kind: str, idesc: int, *, cta_group: int = 1, ws: bool = False, block: Optional[int] = None,
                   arch: str = "sm_100a") -> list[str]:
    """All broken rules of `idesc` for this kind (empty = legal). `block` = scale vector size 16/32 if known."""
    return decode_idesc(kind, idesc, cta_group=cta_group, ws=ws, block=block, arch=arch, strict=False).errors


def decode_idesc(kind: str, idesc: int, *, cta_group: int = 1, ws: bool = False, block: Optional[int] = None,
                 arch: str = "sm_100a", strict: bool = True) -> IdescInfo:
    """Decode + validate. strict=True raises DescError listing every broken rule."""
    kind = _kind(kind)
    lay = IDESC_LAYOUTS[kind]
    d = lay.unpack(idesc)
    c, v = d.codes, d.values
    bs = kind in BLOCK_SCALED
    errs = _fmt_errors(kind, d)
    ab = AB_FORMATS[kind]
    a_fmt = ab.get(c["a_fmt"], f"invalid({c['a_fmt']})")
    b_fmt = ab.get(c["b_fmt"], f"invalid({c['b_fmt']})")
    d_fmt = "F32" if bs else D_FORMATS.get(c["d_fmt"], f"invalid({c['d_fmt']})")
    scale = SCALE_FORMATS[c["scale_fmt"]] if bs else None
    sparse = c["sparse"]
    k_size = c.get("k_size", 0)
    k = K_DENSE[kind] * (2 if sparse else 1)
    if bs and k_size:
        k = 96
    m, n = v["m"], v["n"]
    T = T4344 if bs else T42
    where = f"for kind::{kind} ({T})"

    # formats / D type
    if kind == "f16":
        if d_fmt not in ("F16", "F32"):
            errs.append(f"idesc.d_fmt: D type {d_fmt} is not F16/F32 {where}")
        if a_fmt != b_fmt:
            errs.append(f"idesc.b_fmt: A ({a_fmt}) and B ({b_fmt}) must be the same type {where}")
        if d_fmt == "F16" and "BF16" in (a_fmt, b_fmt):
            errs.append(f"idesc.d_fmt: F16 D requires F16 inputs, BF16 needs F32 D ({T39})")
    elif kind == "tf32" and d_fmt != "F32":
        errs.append(f"idesc.d_fmt: D type {d_fmt} must be F32 {where}")
    elif kind == "f8f6f4" and d_fmt not in ("F16", "F32"):
        errs.append(f"idesc.d_fmt: D type {d_fmt} must be F16 or F32 {where}")
    elif kind == "i8" and d_fmt != "S32":
        errs.append(f"idesc.d_fmt: D type {d_fmt} must be S32 {where}")
    if not bs:
        if c["saturate"] and kind != "i8":
            errs.append(f"idesc.saturate: saturate is only valid for kind::i8, not kind::{kind} ({T42})")
        if c["max_shift"] and not ws:
            errs.append(f"idesc.max_shift: max_shift={MAX_SHIFT[c['max_shift']]} is only valid with .ws ({T42})")
    if kind == "i8" and (c["negate_a"] or c["negate_b"]):
        errs.append(f"idesc.negate_a/negate_b: negate is not supported for kind::i8 ({T42})")
    # transpose
    for op in ("a", "b"):
        if c[f"{op}_major"]:
            fmt = a_fmt if op == "a" else b_fmt
            if kind in ("mxf4", "mxf4nvf4"):
                errs.append(f"idesc.{op}_major: transpose (MN-major) is illegal for kind::{kind}; "
                            f"operands must be K-major ({T4344}; PTX ISA 9.7.16.10 Table 51)")
            elif kind in ("f8f6f4", "mxf8f6f4") and fmt not in ("E4M3", "E5M2"):
                errs.append(f"idesc.{op}_major: MN-major is only valid for 8-bit types, not {fmt} "
                            f"(CUTLASS UMMA::InstrDescriptor a_major_ comment)")
    # sparsity
    if not sparse and c["sparse_id2"]:
        errs.append(f"idesc.sparse_id2: must be 0 for a dense MMA (sparse=0), got {c['sparse_id2']} ({T})")
    # block-scaled rules
    if bs:
        if kind in ("mxf8f6f4", "mxf4") and scale != "UE8M0":
            errs.append(f"idesc.scale_fmt: kind::{kind} only takes UE8M0 scales, got {scale} "
                        f"(PTX ISA 9.7.16.10.7 Table 57)")
        if block is not None and block not in (16, 32):
            errs.append(f"idesc: block (scale vector size) must be 16 or 32, got {block}")
        if kind == "mxf8f6f4" and block not in (None, 32):
            errs.append(f"idesc: kind::mxf8f6f4 only supports block32 (scale_vec::1X) (Table 57)")
        if kind == "mxf4" and block not in (None, 32):
            errs.append(f"idesc: kind::mxf4 only supports block32 (scale_vec::2X) (Table 57)")
        if kind == "mxf4nvf4" and scale == "UE4M3" and block not in (None, 16):
            errs.append(f"idesc.scale_fmt: UE4M3 scales need block16 (scale_vec::4X) under kind::mxf4nvf4 (Table 57)")
        eff_block = block
        if eff_block is None:
            eff_block = 16 if (kind == "mxf4nvf4" and scale == "UE4M3") else 32
        for sf in ("sfa_id", "sfb_id"):
            sid = c[sf]
            if kind == "mxf8f6f4":
                continue  # 1X: any byte 0..3
            if eff_block == 16 and sid != 0:
                errs.append(f"idesc.{sf}: SF ID {sid} must be 0 with block16 (scale_vec::4X) "
                            f"(PTX ISA 9.7.16.10.7.3)")
            elif eff_block == 32 and sid not in (0, 2):
                errs.append(f"idesc.{sf}: SF ID {sid} must be 0 or 2 with block32 (scale_vec::2X) "
                            f"(PTX ISA 9.7.16.10.7.3)")
        if k_size:
            if kind not in ("mxf4", "mxf4nvf4") or sparse:
                errs.append(f"idesc.k_size: K96 (k_size=1) is only valid for dense kind::mxf4/mxf4nvf4 ({T4344})")
            if arch != "sm_103a":
                errs.append(f"idesc.k_size: K96 (k_size=1) is sm_103a only, target is {arch} ({T4344})")
    errs += _shape_errors(kind, m, n, sparse, cta_group, ws)
    info = IdescInfo(
        kind=kind, raw=int(idesc), m=m, n=n, k=k, a_fmt=a_fmt, b_fmt=b_fmt, d_fmt=d_fmt, scale_fmt=scale,
        negate_a=c["negate_a"], negate_b=c["negate_b"], a_major=MAJOR[c["a_major"]], b_major=MAJOR[c["b_major"]],
        sfa_id=c.get("sfa_id", 0), sfb_id=c.get("sfb_id", 0), sparse=sparse, sparse_id2=c["sparse_id2"],
        saturate=c.get("saturate", 0), max_shift=c.get("max_shift", 0), k_size=k_size, errors=errs,
    )
    if strict and errs:
        raise DescError(f"invalid kind::{kind} instruction descriptor {int(idesc):#010x}: " + "; ".join(errs), errs)
    return info


def _major_name(x: str | int) -> str | int:
    if isinstance(x, str):
        u = x.upper()
        return "MN" if u in ("MN", "M", "N", "T", "TRANSPOSE") else u
    return x


class InstrDesc:
    """Encode / decode / validate / pretty-print the 32-bit tcgen05.mma instruction descriptor."""

    layouts = IDESC_LAYOUTS

    @staticmethod
    def encode(kind: str, m: int, n: int, *, a_fmt: str | int | None = None, b_fmt: str | int | None = None,
               d_fmt: str | int | None = None, scale_fmt: str | int | None = None, a_major: str | int = "K",
               b_major: str | int = "K", negate_a: int = 0, negate_b: int = 0, sparse: int = 0, sparse_id2: int = 0,
               saturate: int = 0, max_shift: str | int = 0, sfa_id: int = 0, sfb_id: int = 0, k_size: int = 0,
               cta_group: int = 1, ws: bool = False, block: Optional[int] = None, arch: str = "sm_100a",
               check: bool = True) -> int:
        """Build idesc from named fields (format names or codes; M, N as numbers). Validates unless check=False."""
        kind = _kind(kind)
        dflt = _DEFAULTS[kind]
        shape_errs = _shape_errors(kind, int(m), int(n), int(sparse), cta_group, ws) if check else []
        if shape_errs:
            raise DescError(f"cannot encode kind::{kind} idesc: " + "; ".join(shape_errs), shape_errs)
        vals: dict[str, int | str] = dict(
            m=m, n=n, a_fmt=a_fmt if a_fmt is not None else dflt["a_fmt"],
            b_fmt=b_fmt if b_fmt is not None else dflt["b_fmt"], a_major=_major_name(a_major),
            b_major=_major_name(b_major), negate_a=negate_a, negate_b=negate_b, sparse=sparse,
            sparse_id2=sparse_id2,
        )
        if kind in BLOCK_SCALED:
            vals.update(scale_fmt=scale_fmt if scale_fmt is not None else dflt["scale_fmt"], sfa_id=sfa_id,
                        sfb_id=sfb_id, k_size=k_size)
            for name, val in (("d_fmt", d_fmt), ("saturate", saturate), ("max_shift", max_shift)):
                if val not in (None, 0, "F32"):
                    raise DescError(f"idesc.{name}: kind::{kind} has no {name} field ({T4344}); D is always F32")
        else:
            vals.update(d_fmt=d_fmt if d_fmt is not None else dflt["d_fmt"], saturate=saturate,
                        max_shift=str(max_shift) if isinstance(max_shift, int) and max_shift in (8, 16, 32)
                        else max_shift)
            for name, val in (("scale_fmt", scale_fmt), ("sfa_id", sfa_id), ("sfb_id", sfb_id), ("k_size", k_size)):
                if val not in (None, 0):
                    raise DescError(f"idesc.{name}: kind::{kind} has no {name} field ({T42})")
        word = IDESC_LAYOUTS[kind].pack(vals)
        if check:
            decode_idesc(kind, word, cta_group=cta_group, ws=ws, block=block, arch=arch, strict=True)
        return word

    @staticmethod
    def decode(kind: str, idesc: int, **kw: object) -> IdescInfo:
        """Decode without raising; `.errors` lists broken rules."""
        return decode_idesc(kind, idesc, strict=False, **kw)  # type: ignore[arg-type]

    @staticmethod
    def validate(kind: str, idesc: int, **kw: object) -> list[str]:
        return validate_idesc(kind, idesc, **kw)  # type: ignore[arg-type]

    @staticmethod
    def pretty(kind: str, idesc: int, **kw: object) -> str:
        kind = _kind(kind)
        info = InstrDesc.decode(kind, idesc, **kw)
        lines = [f"kind::{kind} instruction descriptor {int(idesc):#010x}: MMA {info.shape}, "
                 f"A {info.a_fmt} ({info.a_major}-major) x B {info.b_fmt} ({info.b_major}-major) -> D {info.d_fmt}"
                 + (f", scales {info.scale_fmt}" if info.scale_fmt else "")]
        for bits, name, code, value, meaning in IDESC_LAYOUTS[kind].rows(idesc):
            if name.startswith("_"):
                continue
            lines.append(f"  [{bits:>6}] {name:<10} = {value:<8} (code {code}) {meaning}")
        for e in info.errors:
            lines.append(f"  ERROR: {e}")
        return "\n".join(lines)
