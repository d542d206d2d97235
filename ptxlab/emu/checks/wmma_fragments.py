"""Static check of a kernel's WMMA fragment registers (PTX ISA 9.7.14.4.1: "the layout of the fragments held by
different threads" is unspecified).

Where the emulator's fragment layout (ptxlab/emu/hw/wmma.py) is the H100's measured one (the caller's ``modelled``
says so for every wmma instruction of the kernel) anything goes.  Otherwise it runs a kernel only where no
instruction could observe the layout: the registers of every wmma.load / wmma.mma / wmma.store vector operand, closed
over register-to-register ``mov``, may be read or written only by those wmma instructions and ``mov`` — plus
``mov`` of one immediate value (``wmma::fill_fragment``: every element the same).  The A / B operands of wmma.mma
must come from wmma.load of the same matrix, layout, shape and type (the fragment layout may depend on them); C may
also come from a fill or a previous wmma.mma.  Anything else -- an element-wise ``mul``, a ``cvt`` of a fragment
element, a ``st`` of a fragment register, two fill values -- is reported, and the wmma instructions of the kernel
refuse to run (``problems``).  Evidence that would lift this for .u8 and C / D .col: those forms in the probe entry
``wmma_layout`` (tests/corpus/kernels_wmma.py) on an H100 (ptx_docs/isa_coverage_notes.md "WMMA").
"""
from __future__ import annotations

from ..core import ir


def _vec_regs(op) -> tuple:
    items = op.items if isinstance(op, ir.Vec) else (op,)
    return tuple(x.idx for x in items if isinstance(x, ir.Reg))


def _regs(op) -> set:
    """Register slots an operand names (addresses and vectors included)."""
    if isinstance(op, ir.Reg):
        return {op.idx}
    if isinstance(op, (ir.Vec, ir.Pair, ir.Paren)):
        return set().union(*(_regs(x) for x in op.items)) if op.items else set()
    if isinstance(op, ir.Addr):
        return (_regs(op.base) if op.base is not None else set()) | (_regs(op.vec) if op.vec is not None else set())
    return set()


SHAPES = ("m16n16k16", "m8n32k16", "m32n8k16", "m16n16k8", "m8n8k4")
TYPES = ("f16", "f32", "bf16", "tf32", "s8", "u8", "s32", "f64")


_FRAGMENT_ARGS = {"load": (0,), "store": (1,), "mma": (0, 1, 2, 3)}     # operand positions holding fragments


def _tag(ins: ir.Instr) -> tuple:
    """(matrix, layout, shape, type) a wmma.load gives its fragment."""
    m = ins.mods
    return (m[1], next(x for x in m if x in ("row", "col")), next(x for x in m if x in SHAPES), m[-1])


def problems(body: list, modelled=None) -> list:
    """Every instruction of ``body`` (a Program's inlined instructions) that could observe the fragment layout, as
    'PTX line N: <statement>: why' strings (empty: the kernel's wmma instructions may run).  ``modelled(ins)``: whether
    the emulator holds a wmma instruction's fragments in the H100's measured layout; a kernel whose wmma instructions
    all are may access fragment elements."""
    code = [x for x in body if isinstance(x, ir.Instr)]
    wmma = [i for i in code if i.opcode == "wmma"]
    if not wmma or (modelled is not None and all(modelled(i) for i in wmma)):
        return []
    frag: set = set()
    for i in wmma:
        for j in _FRAGMENT_ARGS.get(i.mods[0], ()):
            frag.update(_vec_regs(i.args[j]))
    moves = [i for i in code if i.opcode == "mov" and len(i.args) == 2 and isinstance(i.args[0], ir.Reg)]
    move_ids = {id(i) for i in moves}
    changed = True
    while changed:                         # close over register moves, both directions
        changed = False
        for i in moves:
            d, s = i.args
            if isinstance(s, ir.Reg) and ((d.idx in frag) != (s.idx in frag)):
                frag.update((d.idx, s.idx))
                changed = True
    out = []
    fills = set()
    for i in code:
        if i.opcode == "wmma":
            continue
        if id(i) in move_ids and i.args[0].idx in frag:
            s = i.args[1]
            if isinstance(s, ir.Imm):
                fills.add(s.value)
                continue
            if isinstance(s, ir.Reg):
                continue
        touched = set().union(*(_regs(a) for a in i.args)) if i.args else set()
        if touched & frag:
            out.append(f"PTX line {i.line}: {i.text.strip()}: reads or writes a WMMA fragment register")
    if len(fills) > 1:
        out.append(f"fragments filled with {len(fills)} different immediates ({sorted(map(str, fills))[:4]}): "
                   "which element gets which value depends on the layout")
    out += _operand_origins(code, wmma, frag)
    return out


def _operand_origins(code: list, wmma: list, frag: set) -> list:
    """wmma.mma A / B registers must hold fragments loaded with the mma's own layout, shape and type."""
    src: dict = {}                          # register -> set of origin tags
    for i in code:
        if i.opcode == "wmma" and i.mods[0] == "load":
            for r in _vec_regs(i.args[0]):
                src.setdefault(r, set()).add(_tag(i))
        elif i.opcode == "wmma" and i.mods[0] == "mma":
            for r in _vec_regs(i.args[0]):
                src.setdefault(r, set()).add(("c", "mma"))
    for _ in range(4):                      # mov chains (loop-carried accumulators)
        for i in code:
            if (i.opcode == "mov" and len(i.args) == 2 and isinstance(i.args[0], ir.Reg)
                    and isinstance(i.args[1], ir.Reg) and i.args[0].idx in frag):
                src.setdefault(i.args[0].idx, set()).update(src.get(i.args[1].idx, ()))
    out = []
    for i in wmma:
        if i.mods[0] != "mma":
            continue
        lays = [x for x in i.mods if x in ("row", "col")]
        shape = next(x for x in i.mods if x in SHAPES)
        types = [x for x in i.mods if x in TYPES]
        ab_type = "f16" if len(types) == 2 else types[1]
        for which, op, lay in (("a", i.args[1], lays[0]), ("b", i.args[2], lays[1])):
            want = (which, lay, shape, ab_type)
            got = set().union(*(src.get(r, {("?",)}) for r in _vec_regs(op)))
            if got != {want}:
                out.append(f"PTX line {i.line}: {i.text.strip()}: operand {which.upper()} is not (only) a "
                           f"wmma.load.{which}.{lay}.{shape}.{ab_type} fragment")
    return out
