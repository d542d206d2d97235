"""PTX text → ``ir.Module`` (PTX ISA 4 'Syntax', 5 'State spaces, types and variables', 11 'Directives').

Handles what NVRTC 13.x emits for sm_90a/sm_100a and hand-written PTX: module directives, .entry/.func with params
(alignment, arrays, .ptr), .reg with <N>, variables with alignment and initializers, labels, guards, vector operands,
address expressions, nested { } scopes (inline asm, call sequences) with their own .reg declarations (renamed so
they never clash), .pragma, .file/.loc.
"""
from __future__ import annotations

import re
import struct
from typing import Optional

from ...errors import EmuError
from . import ir
from .types import BITS, TYPE_NAMES

_NOSEMI = (".version", ".target", ".address_size", ".loc", ".file", ".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg",
           ".explicitcluster", ".reqnctapercluster", ".maxclusterrank", ".noreturn", ".blocksareclusters",
           ".abi_preserve", ".abi_preserve_control")
_IDENT = re.compile(r"^[A-Za-z_$%][\w$]*$")
_SPECIAL = re.compile(
    r"^%(tid|ntid|ctaid|nctaid|clusterid|nclusterid|cluster_ctaid|cluster_nctaid)\.[xyz]$|"
    r"^%(laneid|warpid|nwarpid|smid|nsmid|gridid|lanemask_eq|lanemask_le|lanemask_lt|lanemask_ge|lanemask_gt|"
    r"clock|clock64|clock_hi|globaltimer|globaltimer_lo|globaltimer_hi|dynamic_smem_size|total_smem_size|"
    r"aggr_smem_size|cluster_ctarank|cluster_nctarank|is_explicit_cluster|reserved_smem_offset_begin|"
    r"reserved_smem_offset_end|reserved_smem_offset_cap|current_graph_exec|pm[0-7]|pm[0-7]_64|envreg\d+)$")


class ParseError(EmuError):
    pass


def _strip_comments(text: str) -> str:
    # block comments keep their newlines so line numbers stay right
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _statements(text: str):
    """Yield (kind, text, line): kind in 'stmt', 'label', 'open', 'close', 'nosemi'."""
    cur: list[str] = []
    cur_line = 1
    line = 1
    depth = 0          # operand-brace depth inside a statement
    paren = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            s = "".join(cur).strip()
            if s.startswith(_NOSEMI) and depth == 0:
                yield "nosemi", s, cur_line
                cur = []
            else:
                cur.append(" ")
            i += 1
            continue
        if not "".join(cur).strip():
            cur = []
            cur_line = line
            if ch == "{":
                yield "open", "{", line
                i += 1
                continue
            if ch == "}":
                yield "close", "}", line
                i += 1
                continue
        if ch == '"':  # string literal (.file, .pragma)
            j = text.index('"', i + 1)
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if ch == "(":
            paren += 1
        elif ch == ")":
            paren -= 1
        elif ch == "{":
            s = "".join(cur).strip()
            if depth == 0 and paren == 0 and (re.search(r"(^|\s)\.(entry|func)\b", s) or s.startswith(".section")):
                yield "stmt", s, cur_line
                cur = []
                yield "open", "{", line
                i += 1
                continue
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ";" and depth == 0 and paren == 0:
            yield "stmt", "".join(cur).strip(), cur_line
            cur = []
            i += 1
            continue
        elif ch == ":" and depth == 0 and i + 1 < n and text[i + 1] != ":" and (i == 0 or text[i - 1] != ":"):
            s = "".join(cur).strip()
            if _IDENT.match(s):
                yield "label", s, cur_line
                cur = []
                i += 1
                continue
        cur.append(ch)
        i += 1
    if "".join(cur).strip():
        yield "stmt", "".join(cur).strip(), cur_line


def split_top(s: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside of (), [], {}."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def parse_int(tok: str) -> int:
    t = tok.strip()
    neg = t.startswith("-")
    if neg or t.startswith("+"):
        t = t[1:]
    t = t.rstrip("Uu")
    if t.lower().startswith("0x"):
        v = int(t, 16)
    elif t.lower().startswith("0b"):
        v = int(t, 2)
    elif len(t) > 1 and t.startswith("0") and t.isdigit():
        v = int(t, 8)
    else:
        v = int(t)
    return -v if neg else v


_INT_RE = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[Uu]?$")
_F32_RE = re.compile(r"^[+-]?0[fF][0-9a-fA-F]{8}$")
_F64_RE = re.compile(r"^[+-]?0[dD][0-9a-fA-F]{16}$")
_FLT_RE = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")


def parse_imm(tok: str) -> Optional[ir.Imm]:
    t = tok.strip()
    if _F32_RE.match(t):
        neg = t.startswith("-")
        bits = int(t.lstrip("+-")[2:], 16) ^ (0x80000000 if neg else 0)
        return ir.Imm(bits, "f32bits", tok)
    if _F64_RE.match(t):
        neg = t.startswith("-")
        bits = int(t.lstrip("+-")[2:], 16) ^ ((1 << 63) if neg else 0)
        return ir.Imm(bits, "f64bits", tok)
    if _INT_RE.match(t):
        return ir.Imm(parse_int(t), "int", tok)
    if _FLT_RE.match(t):
        return ir.Imm(float(t), "float", tok)
    return None


class _Scopes:
    """Register name scopes of one function; every declaration gets a fresh slot."""

    def __init__(self, fn: ir.Function):
        self.fn = fn
        self.stack: list[dict] = [{}]

    def push(self):
        self.stack.append({})

    def pop(self):
        self.stack.pop()

    def declare(self, name: str, ty: str):
        idx = self.fn.nregs
        self.fn.nregs += 1
        self.fn.reg_types.append(ty)
        self.fn.reg_names.append(name)
        self.stack[-1][name] = idx

    def lookup(self, name: str) -> Optional[int]:
        for d in reversed(self.stack):
            if name in d:
                return d[name]
        return None


class Parser:
    def __init__(self, text: str, name: str = "<ptx>"):
        self.text = text
        self.name = name
        self.mod = ir.Module(text=text)
        self.fn: Optional[ir.Function] = None
        self.scopes: Optional[_Scopes] = None
        self.loc: Optional[tuple] = None
        self.fn_depth = 0
        self.skip_depth = 0  # inside a .section { } block
        self.label_scopes: list = []   # per open { } block: (body index at open, {label: unique name})
        self._nlabel = 0

    def error(self, line: int, msg: str) -> ParseError:
        src = self.text.splitlines()[line - 1].strip() if 0 < line <= len(self.text.splitlines()) else ""
        return ParseError(f"PTX parse error in {self.name} line {line}: {msg}\n    {src}")

    def parse(self) -> ir.Module:
        pending_header = None
        for kind, s, line in _statements(_strip_comments(self.text)):
            if self.skip_depth:
                if kind == "open":
                    self.skip_depth += 1
                elif kind == "close":
                    self.skip_depth -= 1
                continue
            if kind == "nosemi":
                self._nosemi(s, line)
            elif kind == "open":
                if pending_header is not None:
                    self._begin_function(pending_header, line)
                    pending_header = None
                elif self.fn is None:
                    raise self.error(line, "unexpected '{' at module scope")
                else:
                    self.fn_depth += 1
                    self.scopes.push()
                    self.label_scopes.append((len(self.fn.body), {}))
            elif kind == "close":
                if self.fn is None:
                    raise self.error(line, "unexpected '}'")
                if self.fn_depth == 0:
                    self.fn = None
                    self.scopes = None
                else:
                    self.fn_depth -= 1
                    self.scopes.pop()
                    self._close_label_scope()
            elif kind == "label":
                if self.fn is None:
                    raise self.error(line, f"label {s} outside a function")
                if self.fn_depth > 0:
                    # labels are local to their { } block (PTX ISA 4.4 / 11.1): two inline-asm blocks may both
                    # declare 'WAIT:'; give each a unique name, resolved when the block closes
                    self._nlabel += 1
                    uniq = f"{s}%b{self._nlabel}"
                    self.label_scopes[-1][1][s] = uniq
                    s = uniq
                self.fn.body.append(s)
            else:
                if s.startswith(".section"):
                    self.skip_depth = 1
                    continue
                if self.fn is None and re.search(r"(^|\s)\.(entry|func)\b", s):
                    fn = self._header(s, line)
                    if fn.defined:
                        pending_header = fn
                    continue
                self._statement(s, line)
        for fn in self.mod.functions.values():
            for ins in fn.body:
                if not isinstance(ins, str) and ins.loc is not None and isinstance(ins.loc[0], int):
                    ins.loc = (self.mod.files.get(ins.loc[0], f"file{ins.loc[0]}"), ins.loc[1])
        return self.mod

    # --- module / function structure -------------------------------------------------------------------------
    def _nosemi(self, s: str, line: int):
        parts = s.split()
        if parts[0] in (".version", ".target", ".address_size"):
            self._statement(s, line)
            return
        if parts[0] == ".loc":
            if len(parts) >= 3:
                self.loc = (int(parts[1]), int(parts[2]))  # file index resolved after parsing (.file may follow)
        elif parts[0] == ".file":
            m = re.match(r"\.file\s+(\d+)\s+\"([^\"]*)\"", s)
            if m:
                self.mod.files[int(m.group(1))] = m.group(2)
        elif self.fn is not None:
            self.fn.directives[parts[0][1:]] = [parse_int(x) for x in " ".join(parts[1:]).split(",") if x.strip()]

    def _header(self, s: str, line: int) -> ir.Function:
        m = re.search(r"\.(entry|func)\s*(\((?P<rets>[^)]*)\))?\s*(?P<name>[A-Za-z_$][\w$]*)\s*(\((?P<params>.*)\))?"
                      r"(?P<tail>[^()]*)$", s, re.S)
        if not m:
            raise self.error(line, "cannot parse function header")
        fn = ir.Function(name=m.group("name"), is_entry=m.group(1) == "entry", line=line)
        fn.defined = not s.lstrip().startswith(".extern")
        for part in split_top(m.group("params") or ""):
            fn.params.append(self._param_decl(part, line))
        for part in split_top(m.group("rets") or ""):
            fn.rets.append(self._param_decl(part, line))
        tail = (m.group("tail") or "").strip()
        for d in re.finditer(r"\.(maxntid|reqntid|minnctapersm|maxnreg|reqnctapercluster)\s+([\d,\s]+)", tail):
            fn.directives[d.group(1)] = [int(x) for x in d.group(2).split(",") if x.strip()]
        if fn.defined or fn.name not in self.mod.functions:
            self.mod.functions[fn.name] = fn
        return fn

    def _close_label_scope(self):
        start, names = self.label_scopes.pop()
        if not names:
            return
        for ins in self.fn.body[start:]:
            if not isinstance(ins, str):
                ins.args = [_rename_syms(a, names) for a in ins.args]

    def _begin_function(self, fn: ir.Function, line: int):
        self.label_scopes = []
        self.fn = fn
        self.scopes = _Scopes(fn)
        self.fn_depth = 0

    def _param_decl(self, s: str, line: int) -> ir.Variable:
        return self._var_decl(s, "param", line)

    def _var_decl(self, s: str, space: str, line: int) -> ir.Variable:
        decl, _, init_s = s.replace("\n", " ").partition("=")
        m = re.match(r"^(?P<attrs>.*?)(?P<name>[A-Za-z_$%][\w$]*)\s*(?P<dims>(\[\s*\w*\s*\]\s*)*)$", decl.strip())
        if not m:
            raise self.error(line, f"cannot parse declaration '{s}'")
        attrs = m.group("attrs").split()
        align, ty, ptr, extern = 0, "b8", False, False
        for i, a in enumerate(attrs):
            if a == ".align" and i + 1 < len(attrs):
                if not ptr:  # '.ptr .align N' is the pointee's alignment (PTX ISA 5.1.6.4), not the param's own
                    align = parse_int(attrs[i + 1])
            elif a == ".ptr":
                ptr = True
            elif a == ".extern":
                extern = True
            elif a.startswith(".") and a[1:] in TYPE_NAMES:
                ty = a[1:]
        esize = max(1, BITS.get(ty, 8) // 8)
        count = 1
        for d in re.findall(r"\[\s*(\w*)\s*\]", m.group("dims") or ""):
            count *= parse_int(d) if d else 0
        init = None
        if init_s.strip():
            init = self._initializer(init_s, ty, esize, count, line)
            if count == 0:
                count = len(init) // esize
        return ir.Variable(name=m.group("name"), space=space, ty=ty, align=align or esize, size=esize * count,
                           init=init, extern=extern, ptr=ptr)

    def _initializer(self, s: str, ty: str, esize: int, count: int, line: int) -> bytes:
        vals = [v.strip() for v in s.replace("{", " ").replace("}", " ").split(",") if v.strip()]
        out = bytearray()
        for v in vals:
            imm = parse_imm(v)
            if imm is None:
                raise self.error(line, f"unsupported initializer '{v}' (only numeric literals are supported)")
            if imm.kind == "float":
                out += struct.pack("<d" if esize == 8 else "<f", imm.value) if esize in (4, 8) else b""
            else:
                out += (int(imm.value) & ((1 << (8 * esize)) - 1)).to_bytes(esize, "little")
        if count and len(out) < esize * count:
            out += bytes(esize * count - len(out))
        return bytes(out)

    # --- statements --------------------------------------------------------------------------------------------
    def _statement(self, s: str, line: int):
        head = s.split(None, 1)[0]
        if head.startswith("."):
            # a directive ends at its name: '.reg.b16 h;' is '.reg .b16 h;' (cuda_fp16.hpp's inline PTX writes it
            # so; PTX ISA 4.3 / 5.1: white space between a directive and its modifiers is optional)
            head = re.match(r"^\.[A-Za-z_$][\w$]*", head).group(0) if re.match(r"^\.[A-Za-z_$]", head) else head
        if head in (".version",):
            self.mod.version = s.split()[1]
            return
        if head == ".target":
            self.mod.target = s.split(None, 1)[1]
            return
        if head == ".address_size":
            self.mod.address_size = int(s.split()[1])
            return
        if head == ".pragma":
            return
        if head == ".reg":
            if self.fn is None:
                raise self.error(line, ".reg at module scope")
            self._reg_decl(s, line)
            return
        if head in (".global", ".const", ".shared", ".local", ".param", ".extern", ".visible", ".weak", ".common",
                    ".tex", ".surf", ".sampler"):
            self._var_statement(s, line)
            return
        if head.startswith("."):
            if self.fn is not None:
                self.fn.directives[head[1:]] = s.split()[1:]
            return
        if self.fn is None:
            raise self.error(line, f"instruction outside a function: {s}")
        self.fn.body.append(self._instr(s, line))

    def _var_statement(self, s: str, line: int):
        space_m = re.search(r"\.(global|const|shared|local|param)\b", s)
        if not space_m:
            if ".func" in s or ".entry" in s:
                self._header(s, line)
                return
            raise self.error(line, f"unsupported declaration: {s}")
        space = space_m.group(1)
        extern = ".extern" in s.split(space_m.group(0))[0] or s.startswith(".extern")
        body = s[space_m.end():]
        # several names may share one declaration: '.reg'-like lists are rare for variables; handle a list anyway
        prefix_m = re.match(r"^((\s*\.[\w:]+(\s+\d+)?)*)\s*(.*)$", body, re.S)
        prefix, names = prefix_m.group(1), prefix_m.group(4)
        for part in split_top(names) if "=" not in names else [names]:
            var = self._var_decl(prefix + " " + part, space, line)
            var.extern = var.extern or extern
            if self.fn is None:
                self.mod.globals.append(var)
            else:
                if self.fn_depth > 0 and var.space in ("param", "local"):
                    # block-scoped (call-sequence '.param .b64 param0;' repeats per call): unique name per block
                    self._nlabel += 1
                    uniq = f"{var.name}%v{self._nlabel}"
                    self.label_scopes[-1][1][var.name] = uniq
                    var.name = uniq
                self.fn.locals.append(var)

    def _reg_decl(self, s: str, line: int):
        body = s[len(".reg"):].strip()
        m = re.match(r"^((?:\.\w+\s*)+)(.*)$", body, re.S)
        if not m:
            raise self.error(line, f"cannot parse register declaration: {s}")
        types = [t for t in re.findall(r"\.(\w+)", m.group(1)) if t in TYPE_NAMES]
        if not types:
            raise self.error(line, f"register declaration without a type: {s}")
        ty = types[-1]
        if re.search(r"\.v\d", m.group(1)):
            raise self.error(line, "vector register declarations (.reg .vN) are not supported; "
                                   "declare scalar registers")
        for part in split_top(m.group(2)):
            rm = re.match(r"^([%\w$]+)\s*<\s*(\d+)\s*>$", part)
            if rm:
                for k in range(int(rm.group(2))):
                    self.scopes.declare(f"{rm.group(1)}{k}", ty)
            else:
                self.scopes.declare(part.strip(), ty)

    def _instr(self, s: str, line: int) -> ir.Instr:
        guard = None
        if s.startswith("@"):
            g, s = s.split(None, 1)
            neg = g.startswith("@!")
            gname = g[2:] if neg else g[1:]
            guard = self._reg(gname, line, neg=neg)
        # the opcode ends at white space or at the first operand's '{' / '[' ('tcgen05.ld...b32{%r1},[%r2]' is legal)
        m = re.match(r"^([^\s{\[]+)\s*(.*)$", s, re.S)
        parts = [m.group(1)] + ([m.group(2)] if m.group(2).strip() else [])
        opfull = parts[0]
        comps = opfull.split(".")
        opcode, mods = comps[0], tuple(c for c in comps[1:] if c)
        args = [self._operand(a, line) for a in split_top(parts[1])] if len(parts) > 1 else []
        return ir.Instr(opcode=opcode, mods=mods, args=args, guard=guard, line=line, text=s, loc=self.loc,
                        func=self.fn.name)

    def _reg(self, name: str, line: int, neg: bool = False) -> ir.Reg:
        idx = self.scopes.lookup(name)
        if idx is None:
            raise self.error(line, f"undeclared register {name}")
        return ir.Reg(idx, name, self.fn.reg_types[idx], neg)

    def _operand(self, a: str, line: int):
        a = a.strip()
        if a == "_":
            return ir.Sink()
        if a.startswith("["):
            if not a.endswith("]"):
                raise self.error(line, f"bad address operand {a}")
            return self._address(a[1:-1].strip(), line)
        if a.startswith("{"):
            inner = a[1:-1]
            return ir.Vec(tuple(self._operand(x, line) for x in split_top(inner)))
        if a.startswith("("):
            inner = a[1:-1]
            return ir.Paren(tuple(self._operand(x, line) for x in split_top(inner)))
        if "|" in a:
            return ir.Pair(tuple(self._operand(x, line) for x in a.split("|")))
        if a.startswith("!"):
            return self._reg(a[1:].strip(), line, neg=True)
        imm = parse_imm(a)
        if imm is not None:
            return imm
        if a == "WARP_SZ":      # the predefined integer constant (PTX ISA 4.5.1): 32 on every target
            return ir.Imm(32, "int", "WARP_SZ")
        if self.scopes.lookup(a) is not None:
            return self._reg(a, line)
        if _SPECIAL.match(a):
            return ir.Special(a[1:])
        if a.startswith("-") and self.scopes.lookup(a[1:].strip()) is not None:
            raise self.error(line, f"negated register operand '{a}' is not PTX")
        if re.match(r"^[A-Za-z_$][\w$]*$", a):
            return ir.Sym(a)
        m = re.match(r"^([A-Za-z_$][\w$]*)\s*\+\s*(\S+)$", a)
        if m:  # 'sym+imm' as a plain operand (mov.u64 %rd, sym+8)
            return ir.Addr(ir.Sym(m.group(1)), parse_int(m.group(2)))
        if a.startswith("%"):
            raise self.error(line, f"undeclared register or unknown special register {a}")
        raise self.error(line, f"cannot parse operand '{a}'")

    def _address(self, a: str, line: int) -> ir.Addr:
        parts = split_top(a)
        vec = None
        if len(parts) == 2 and parts[1].startswith("{"):
            vec = self._operand(parts[1], line)
            a = parts[0]
        elif len(parts) != 1:
            raise self.error(line, f"unsupported address expression [{a}]")
        m = re.match(r"^([%\w$.]+)?\s*(?:([+-])\s*(\S+))?$", a.strip())
        if not m:
            raise self.error(line, f"unsupported address expression [{a}]")
        base_s, sign, off_s = m.group(1), m.group(2), m.group(3)
        offset = 0
        if off_s:
            offset = parse_int(off_s) * (-1 if sign == "-" else 1)
        base = None
        if base_s is not None:
            imm = parse_imm(base_s)
            if imm is not None and imm.kind == "int":
                offset += int(imm.value)
            elif self.scopes.lookup(base_s) is not None:
                base = self._reg(base_s, line)
            else:
                base = ir.Sym(base_s)
        return ir.Addr(base, offset, vec)


def _rename_syms(op, names: dict):
    """Replace block-local symbol names (labels, call-sequence .param variables) in an operand tree."""
    if isinstance(op, ir.Sym):
        return ir.Sym(names[op.name]) if op.name in names else op
    if isinstance(op, ir.Addr) and isinstance(op.base, ir.Sym) and op.base.name in names:
        return ir.Addr(ir.Sym(names[op.base.name]), op.offset, op.vec)
    if isinstance(op, (ir.Vec, ir.Paren, ir.Pair)):
        return type(op)(tuple(_rename_syms(x, names) for x in op.items))
    return op


def parse(text: str, name: str = "<ptx>") -> ir.Module:
    return Parser(text.replace("\x00", ""), name).parse()
