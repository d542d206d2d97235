"""Table-driven bitfield layouts: one table of `Field`s drives encode, decode and pretty-print.

A `Field` knows its bit position, width, meaning, optional enum names and the encode transform
(``stored = (value & pre_mask) >> shift``). Reserved/fixed bits are fields with ``fixed=``;
decode reports a wrong fixed value as an error naming the field and its bits.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from ptxlab.errors import PtxlabError

__all__ = ["DescError", "Field", "BitLayout", "Decoded"]


class DescError(PtxlabError, ValueError):
    """A descriptor (SMEM / instruction / TMEM address) is malformed or illegal; `errors` lists each rule broken."""

    def __init__(self, message: str, errors: Iterable[str] = ()) -> None:
        self.errors = list(errors) or [message]
        super().__init__(message)


@dataclass(frozen=True)
class Field:
    """One bitfield: bits [lo, lo+width), natural value <-> stored code via mask/shift or enum."""

    name: str
    lo: int
    width: int
    meaning: str
    enum: Optional[Mapping[int, str]] = None  # stored code -> name
    shift: int = 0  # encode: stored = (value & pre_mask) >> shift; decode: value = stored << shift
    pre_mask: Optional[int] = None
    fixed: Optional[int] = None  # reserved / constant field: stored code must equal this
    unit: str = ""

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    @property
    def bits(self) -> str:
        hi = self.lo + self.width - 1
        return f"{hi}..{self.lo}" if self.width > 1 else f"{self.lo}"

    @property
    def transform(self) -> str:
        parts = []
        if self.pre_mask is not None:
            parts.append(f"& {self.pre_mask:#x}")
        if self.shift:
            parts.append(f">> {self.shift}")
        return " ".join(parts)

    def code_of(self, value: int | str, where: str) -> int:
        """Natural value (or enum name) -> stored code; raises DescError if it cannot be represented."""
        if isinstance(value, str):
            if self.enum is None:
                raise DescError(f"{where}.{self.name}: got name {value!r} but this field takes an integer")
            names = {v.upper(): k for k, v in self.enum.items()}
            key = value.upper()
            if key not in names:
                raise DescError(
                    f"{where}.{self.name}: {value!r} is not one of {sorted(self.enum.values())} (bits {self.bits})"
                )
            return names[key]
        v = int(value)
        if v < 0:
            raise DescError(f"{where}.{self.name}: value {v} is negative")
        if self.pre_mask is not None and v & ~self.pre_mask:
            raise DescError(
                f"{where}.{self.name}: value {v:#x} does not fit the {self.pre_mask.bit_length()}-bit range "
                f"(must be < {self.pre_mask + 1:#x})"
            )
        if self.shift and v & ((1 << self.shift) - 1):
            raise DescError(
                f"{where}.{self.name}: value {v:#x} must be a multiple of {1 << self.shift} "
                f"(it is stored {self.transform}; bits {self.bits})"
            )
        code = v >> self.shift
        if code > self.mask:
            raise DescError(
                f"{where}.{self.name}: value {v:#x} gives code {code:#x}, which does not fit {self.width} bits "
                f"(bits {self.bits}, stored {self.transform or 'as is'})"
            )
        return code

    def value_of(self, code: int) -> int:
        return code << self.shift

    def describe(self, code: int) -> str:
        if self.enum is not None:
            return self.enum.get(code, f"<invalid code {code}>")
        if self.shift:
            return f"{self.value_of(code)}{self.unit}"
        return f"{code}{self.unit}"


@dataclass
class Decoded:
    """Result of `BitLayout.decode`: raw codes, natural values and the validation errors (empty = legal)."""

    layout: str
    raw: int
    codes: dict[str, int]
    values: dict[str, int]
    errors: list[str] = field(default_factory=list)

    def __getitem__(self, name: str) -> int:
        return self.values[name]

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class BitLayout:
    """An ordered table of fields covering a `nbits`-wide word."""

    name: str
    nbits: int
    fields: tuple[Field, ...]
    source: str

    def __post_init__(self) -> None:
        used = 0
        for f in self.fields:
            m = f.mask << f.lo
            if used & m:
                raise AssertionError(f"{self.name}: field {f.name} overlaps another field")
            if f.lo + f.width > self.nbits:
                raise AssertionError(f"{self.name}: field {f.name} exceeds {self.nbits} bits")
            used |= m
        if used != (1 << self.nbits) - 1:
            raise AssertionError(f"{self.name}: fields do not cover all {self.nbits} bits (mask {used:#x})")

    def get(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}; fields: {[f.name for f in self.fields]}")

    def pack(self, values: Mapping[str, int | str]) -> int:
        """Encode natural values (missing fields: their fixed value or 0). Unknown names raise."""
        known = {f.name for f in self.fields}
        for k in values:
            if k not in known:
                raise DescError(f"{self.name}: unknown field {k!r}; known: {sorted(n for n in known if not n.startswith('_'))}")
        word = 0
        for f in self.fields:
            if f.name in values:
                code = f.code_of(values[f.name], self.name)
            else:
                code = f.fixed if f.fixed is not None else 0
            word |= code << f.lo
        return word

    def unpack(self, word: int) -> Decoded:
        """Split a word into codes/values; fixed-field violations become errors (never exceptions)."""
        if not 0 <= int(word) < (1 << self.nbits):
            raise DescError(f"{self.name}: {word:#x} is not a {self.nbits}-bit value")
        codes: dict[str, int] = {}
        values: dict[str, int] = {}
        errors: list[str] = []
        for f in self.fields:
            code = (int(word) >> f.lo) & f.mask
            codes[f.name] = code
            values[f.name] = f.value_of(code)
            if f.fixed is not None and code != f.fixed:
                errors.append(f"{self.name}.{f.name}: bits {f.bits} must be {f.fixed:#x} ({f.meaning}), got {code:#x}")
            elif f.enum is not None and code not in f.enum:
                errors.append(
                    f"{self.name}.{f.name}: code {code} in bits {f.bits} is not a valid {f.meaning} "
                    f"(valid: {', '.join(f'{k}={v}' for k, v in sorted(f.enum.items()))})"
                )
        return Decoded(self.name, int(word), codes, values, errors)

    def rows(self, word: int) -> list[tuple[str, str, str, str, str]]:
        """(bits, field, code, value, meaning) rows for pretty printing."""
        d = self.unpack(word)
        out = []
        for f in sorted(self.fields, key=lambda f: -f.lo):
            code = d.codes[f.name]
            out.append((f.bits, f.name, f"{code:#x}", f.describe(code), f.meaning))
        return out

    def markdown(self) -> str:
        """Markdown table of this layout (used to generate ptx_docs/descriptors.md)."""
        lines = [f"| bits | field | meaning | encode | enum / fixed |", "|---|---|---|---|---|"]
        for f in self.fields:
            extra = ""
            if f.enum is not None:
                extra = ", ".join(f"{k}={v}" for k, v in sorted(f.enum.items()))
            if f.fixed is not None:
                extra = f"must be {f.fixed:#x}"
            lines.append(f"| {f.bits} | `{f.name}` | {f.meaning} | {f.transform or '-'} | {extra} |")
        return "\n".join(lines)
