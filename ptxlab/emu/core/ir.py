"""The parsed form of a PTX module: operands, instructions, variables, functions (PTX ISA 4, 5, 11)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union


@dataclass(frozen=True)
class Reg:
    """A register operand, resolved to a slot in the register file (scopes already applied)."""
    idx: int
    name: str
    ty: str            # declared type (.b32, .pred, ...)
    neg: bool = False  # '!%p' operand (predicate negation)


@dataclass(frozen=True)
class Special:
    """A special register such as %tid.x (PTX ISA 10)."""
    name: str          # without '%', e.g. 'tid.x'


@dataclass(frozen=True)
class Imm:
    """An immediate.  ``value`` is a python int (integers and the bit patterns of 0f/0d literals) or float."""
    value: Union[int, float]
    kind: str          # 'int' | 'f32bits' | 'f64bits' | 'float'
    text: str


@dataclass(frozen=True)
class Sym:
    """A symbol: variable, function or label name."""
    name: str


@dataclass(frozen=True)
class Sink:
    """The '_' bit bucket operand."""


@dataclass(frozen=True)
class Vec:
    items: tuple


@dataclass(frozen=True)
class Addr:
    """``[base+offset]``; ``base`` is a Reg, a Sym or None (absolute); ``vec`` holds TMA coordinates."""
    base: Optional[Union[Reg, Sym]]
    offset: int
    vec: Optional[Vec] = None


@dataclass(frozen=True)
class Pair:
    """``%p|%q`` destination pair (setp, elect.sync ...)."""
    items: tuple


@dataclass(frozen=True)
class Paren:
    """``(a, b)`` argument list of call."""
    items: tuple


Operand = Union[Reg, Special, Imm, Sym, Sink, Vec, Addr, Pair, Paren]


@dataclass
class Instr:
    opcode: str                 # first component: 'ld'
    mods: tuple                 # remaining dot components: ('global', 'nc', 'v4', 'u32')
    args: list                  # operands
    guard: Optional[Reg]        # '@%p' (Reg.neg for '@!%p')
    line: int                   # 1-based line in the PTX text
    text: str                   # the statement as written
    loc: Optional[tuple] = None  # (file, line) from .loc
    func: str = ""              # enclosing function name
    form: object = None         # the matched handler form (core/forms.Form), set by isa.lookup
    fields: dict = None         # its slot values (slot -> modifier, '' when an optional slot is absent)

    @property
    def name(self) -> str:
        return ".".join((self.opcode,) + self.mods)

    def has(self, *mods: str) -> bool:
        return all(m in self.mods for m in mods)

    def mod_startswith(self, prefix: str) -> Optional[str]:
        for m in self.mods:
            if m.startswith(prefix):
                return m
        return None

    def where(self) -> str:
        s = f"kernel {self.func}, PTX line {self.line}: {self.text.strip()}"
        if self.loc:
            s += f"  [{self.loc[0]}:{self.loc[1]}]"
        return s


@dataclass
class Variable:
    """A .global/.const/.shared/.local/.param variable (PTX ISA 5.1, 5.4)."""
    name: str
    space: str                  # 'global' | 'const' | 'shared' | 'local' | 'param'
    ty: str
    align: int
    size: int                   # bytes (0 for an unsized extern .shared array = dynamic shared memory)
    init: Optional[bytes] = None
    extern: bool = False
    ptr: bool = False           # '.ptr' attribute on a kernel param


@dataclass
class Function:
    name: str
    is_entry: bool
    params: list = field(default_factory=list)      # list[Variable] (space 'param')
    rets: list = field(default_factory=list)        # .func return params
    body: list = field(default_factory=list)        # list[Instr | str] (str = label)
    locals: list = field(default_factory=list)      # function-scope .shared/.local/.param variables
    nregs: int = 0
    reg_types: list = field(default_factory=list)   # declared type per register slot
    reg_names: list = field(default_factory=list)
    directives: dict = field(default_factory=dict)  # .maxntid, .reqntid ...
    line: int = 0
    defined: bool = True


@dataclass
class Module:
    version: str = ""
    target: str = ""
    address_size: int = 64
    globals: list = field(default_factory=list)     # module-scope Variables
    functions: dict = field(default_factory=dict)   # name → Function
    files: dict = field(default_factory=dict)       # .file index → path
    text: str = ""
