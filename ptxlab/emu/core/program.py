"""A kernel ready to run: calls inlined (recursive ones called for real: callstack.py), symbols laid out in their
state spaces, instructions decoded once.

Layouts (PTX ISA 5.1): kernel params in the param buffer at their declared alignment; module-scope and
function-scope ``.shared`` variables from shared address 0 upward, then dynamic shared memory (``.extern .shared``
arrays, 1024-B aligned so swizzled TMA/UMMA tiles can start there) -- except that a kernel with a ``.shared`` variable
declared ``.align`` above 1024 gets the GPU's layout (``HW_SMEM_BASE``, below); ``.local`` variables and the ``.param``
variables of call sequences in per-thread local memory; ``.const`` variables in the const bank; ``.global``
variables allocated in the device heap when the module is loaded.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional


from ...errors import EmuError
from . import callstack, evidence, ir, isa
from .memory import GlobalHeap

DYN_SMEM_ALIGN = 1024
# Shared address of the first byte of a CTA's own shared variables on sm_90 / sm_100: ptxas lays them out from 0 of
# the user segment, which the GPU places after a 1 KB reserved region (SASS: ``MOV R, 0x400; LEA R, SR_CgaCtaId, R,
# 0x18``; an H100 gave cvta.to.shared = 0x400 for a ``.align 16384`` buffer and %reserved_smem_offset_cap = 0x400:
# tools/probes/smem_base_probe.py, ptx_docs/fidelity.md).  Alignments up to 1024 hold there; larger ones do
# not, although PTX ISA 5.4.5 (variable alignment) promises them.
HW_SMEM_BASE = 0x400

K_NORMAL, K_BRA, K_EXIT, K_TRAP = 0, 1, 2, 3
_SYSTEM_CALLS = {"vprintf": "vprintf", "__assertfail": "assertfail"}


@dataclass
class Entry:
    """One decoded instruction."""
    fn: Optional[Callable]
    kind: int
    guard: int            # register index of the guard predicate, or -1
    gneg: bool
    target: int           # branch target pc
    ins: ir.Instr
    reads: tuple          # register slots this instruction reads (pending-register checks)


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


class Program:
    def __init__(self, module: ir.Module, kernel: str, heap: GlobalHeap, global_syms: dict, const_bank: bytearray,
                 const_syms: dict):
        if kernel not in module.functions or not module.functions[kernel].is_entry:
            entries = [f.name for f in module.functions.values() if f.is_entry]
            raise EmuError(f"kernel '{kernel}' is not an .entry of this module (entries: {', '.join(entries)})")
        self.module = module
        self.kernel = kernel
        self.heap = heap
        self.fn = module.functions[kernel]
        self.syms: dict[str, tuple[str, int]] = {}   # name → (space, address)
        for name, addr in global_syms.items():
            self.syms[name] = ("global", addr)
        for name, addr in const_syms.items():
            self.syms[name] = ("const", addr)
        self.const_bank = const_bank
        self.reg_types: list[str] = []
        self.reg_names: list[str] = []
        self.local_size = 0
        self.static_smem = 0
        self.has_dynamic_smem = False
        self._layout_params()
        self._layout_shared()
        for i, fname in enumerate(module.functions):   # function symbols (mov %rd, f: a function pointer) get
            self.syms.setdefault(fname, ("code", 0x10000 + 16 * i))   # distinct addresses in no data space
        self.body: list = []
        # real calls (callstack.py): recursive functions (or every function with PTXLAB_EMU_INLINE=0) are emitted
        # once after the kernel body and called through a per-thread call stack; all other calls are inlined
        self.frames: dict = {}          # function name -> callstack.FrameLayout
        self.frame_syms: dict = {}      # unique symbol name -> FrameLayout owning it (frame-relative variable)
        self.call_sites: dict = {}      # pc of a real call -> callstack.CallSite
        self._call_info: dict = {}      # id(instr) -> ("call", CallSite) | ("ret", FrameLayout) | ("raise", msg)
        self._owner = None              # FrameLayout whose body is being emitted (None: the kernel)
        from ... import settings
        if not settings.get("PTXLAB_EMU_INLINE"):
            self.real = {n for n, f in module.functions.items() if f.body and not f.is_entry}
        else:
            self.real = callstack.recursive_functions(module, kernel)
        self._inline(self.fn, reg_base=0, symmap={}, depth=0, suffix="", ret_label=None)
        self._emit_real_functions()
        self.stack_base = _align(self.local_size, 16)
        self._decode()

    # --- layout ------------------------------------------------------------------------------------------------
    def _layout_params(self):
        off = 0
        self.param_layout = []
        for p in self.fn.params:
            a = max(p.align, 1)
            off = _align(off, a)
            self.syms[p.name] = ("param", off)
            self.param_layout.append((p.name, off, p.size))
            off += p.size
        self.param_size = off

    def _layout_shared(self):
        """Static ``.shared`` variables at offsets aligned within the segment, as ptxas lays them out. The segment
        starts at shared address 0, or at ``HW_SMEM_BASE`` where the GPU breaks a declared alignment (a variable
        with ``.align`` > 1024): there the emulator models the GPU, and ``smem_overaligned`` lists such variables
        (name, .align, address) for the device to report (fidelity rule ``smem_align``)."""
        svars = [v for v in list(self.module.globals) + list(self.fn.locals) if v.space == "shared"]
        dyn = [v for v in svars if v.extern or v.size == 0]
        static = [v for v in svars if not (v.extern or v.size == 0)]
        over = [v for v in static if HW_SMEM_BASE % max(v.align, 1)]
        self.smem_base = base = HW_SMEM_BASE if over else 0
        off = 0
        for v in static:
            off = _align(off, max(v.align, 1))
            self.syms[v.name] = ("shared", base + off)
            off += v.size
        self.static_smem = off                   # bytes of static shared memory (the launch limit counts these)
        self.dyn_base = base + (_align(off, DYN_SMEM_ALIGN) if dyn else off)
        for v in dyn:
            self.syms[v.name] = ("shared", self.dyn_base)
        self.has_dynamic_smem = bool(dyn)
        self.smem_overaligned = [(v.name, v.align, self.syms[v.name][1]) for v in over]

    def _local_var(self, v: ir.Variable, name: str):
        if self._owner is not None:     # a variable of a really-called function: in its frame (callstack.py)
            self._owner.add_var(name, v.size, v.align)
            self.frame_syms[name] = self._owner
            self.syms[name] = ("local", -1)
            return
        self.local_size = _align(self.local_size, max(v.align, 1))
        self.syms[name] = ("local", self.local_size)
        self.local_size += max(v.size, 1)

    # --- call inlining -----------------------------------------------------------------------------------------
    def _emit_real_functions(self):
        """Emit each really-called function once (worklist: guarded calls may add functions while emitting)."""
        if not self.real:
            return
        # the kernel body never falls through into the functions that follow it
        self.body.append(ir.Instr("exit", (), [], None, 0, "<end of kernel>", None, self.kernel))
        done = set()
        while True:
            todo = sorted(f for f in self.real if f not in done and f in self.frames)
            if not todo:
                break
            for name in todo:
                done.add(name)
                self._emit_real(name)

    def _frame(self, name: str):
        fr = self.frames.get(name)
        if fr is None:
            fr = self.frames[name] = callstack.FrameLayout(name, start_label=f"$__fn_{name}")
        return fr

    def _emit_real(self, name: str):
        fn = self.module.functions[name]
        frame = self._frame(name)
        prev, self._owner = self._owner, frame
        symmap = {}
        for p in list(fn.params) + list(fn.rets):
            u = f"{p.name}@{name}"
            symmap[p.name] = u
            frame.add_var(u, p.size, p.align)
            self.frame_syms[u] = frame
            self.syms[u] = ("local", -1)
        frame.params = [(f"{p.name}@{name}", p.size) for p in fn.params]
        frame.rets = [(f"{p.name}@{name}", p.size) for p in fn.rets]
        self.body.append(frame.start_label)
        reg_start = len(self.reg_types)
        self._inline(fn, reg_base=reg_start, symmap=symmap, depth=0, suffix=f"@{name}", ret_label=None)
        frame.saved = list(range(reg_start, len(self.reg_types)))
        self._owner = prev

    def frame_offset(self, name: str) -> Optional[int]:
        """Frame-relative offset of a variable of a really-called function, else None (callstack.py)."""
        fr = self.frame_syms.get(name)
        return None if fr is None else fr.offset(name)

    def _inline(self, fn: ir.Function, reg_base: int, symmap: dict, depth: int, suffix: str,
                ret_label: Optional[str]):
        if depth > 64:
            raise EmuError(f"kernel {self.kernel}: calls nested more than 64 deep while inlining '{fn.name}' (the "
                           f"emulator inlines non-recursive calls; recursion uses a real call stack)")
        self.reg_types.extend(fn.reg_types)
        self.reg_names.extend(n + suffix for n in fn.reg_names)
        for v in fn.locals:
            if v.space in ("local", "param"):
                self._local_var(v, v.name + suffix)
                symmap.setdefault(v.name, v.name + suffix)
            elif v.space == "const":
                raise EmuError(f"function-scope .const variable {v.name} is not supported")
            # function-scope .shared were laid out for the kernel (only the kernel's own locals are shared-laid)
            if v.space == "shared" and v.name not in self.syms:
                self.syms[v.name] = ("shared", _align(self.static_smem, max(v.align, 1)))
                self.static_smem = self.syms[v.name][1] + v.size
        ncalls = 0
        for item in fn.body:
            if isinstance(item, str):
                self.body.append(item + suffix)
                continue
            ins = self._remap_ins(item, reg_base, symmap, suffix)
            if ins.opcode == "call":
                ncalls += 1
                if evidence.enabled():
                    evidence._record(ins)
                self._inline_call(ins, item, reg_base, depth, suffix + f"@c{len(self.body)}")
                continue
            if ins.opcode == "ret" and ret_label is not None:
                if evidence.enabled():        # the ret of an inlined call runs as a branch: record the ret
                    evidence._record(ins)
                ins = replace(ins, opcode="bra", mods=("uni",), args=[ir.Sym(ret_label)])
            elif ins.opcode == "ret" and self._owner is not None:
                ins = replace(ins)      # a fresh object: its id keys the ret of a really-called function
                self._call_info[id(ins)] = ("ret", self._owner)
            self.body.append(ins)

    def _inline_call(self, ins: ir.Instr, orig: ir.Instr, reg_base: int, depth: int, suffix: str):
        args = list(ins.args)
        rets = []
        if args and isinstance(args[0], ir.Paren):
            rets = list(args.pop(0).items)
        if not args or not isinstance(args[0], ir.Sym):
            # an indirect call (call %fptr, ..., prototype): raise when executed, so the kernel still loads
            ins = replace(ins)
            self._call_info[id(ins)] = ("raise", "indirect call (through a function pointer) is not supported by "
                                                 "the emulator; call the function directly")
            self.body.append(ins)
            return
        callee_name = args.pop(0).name
        params = list(args.pop(0).items) if args and isinstance(args[0], ir.Paren) else []
        callee = self.module.functions.get(callee_name)
        if callee_name in _SYSTEM_CALLS and (callee is None or not callee.body):
            # CUDA system calls without a PTX body: a pseudo-instruction handled by ops/printf.py
            if ins.guard is not None:
                raise EmuError(f"predicated call is not supported by the emulator ({ins.where()})")
            self.body.append(replace(ins, opcode="ptxlab", mods=(_SYSTEM_CALLS[callee_name],),
                                     args=[ir.Addr(p, 0) for p in params] + [ir.Addr(r, 0) for r in rets]))
            return
        if callee is None or not callee.defined or not callee.body:
            raise EmuError(f"call to '{callee_name}', which has no body in this module (external functions other than "
                           f"vprintf and __assertfail are not supported by the emulator) ({ins.where()})")
        if ins.guard is not None or callee_name in self.real:
            # a real call (recursion, or a predicated call): callstack.py
            if not all(isinstance(a, ir.Sym) for a in params + rets):
                ins = replace(ins)
                self._call_info[id(ins)] = ("raise", "call arguments / return values that are registers or "
                                                     "immediates (not .param variables) are not supported by the "
                                                     "emulator's call stack")
                self.body.append(ins)
                return
            self.real.add(callee_name)
            self._frame(callee_name)
            ins = replace(ins)
            sizes = {v.name: v.size for v in callee.params + callee.rets}
            site = callstack.CallSite(
                pc=-1, caller=self._owner, callee=None,
                actuals=[(a.name, sizes.get(f.name, f.size)) for a, f in zip(params, callee.params)],
                actual_rets=[(a.name, f.size) for a, f in zip(rets, callee.rets)])
            site.callee_name = callee_name
            self._call_info[id(ins)] = ("call", site)
            self.body.append(ins)
            return
        symmap = {}
        for formal, actual in zip(callee.params, params):
            symmap[formal.name] = actual.name
        for formal, actual in zip(callee.rets, rets):
            symmap[formal.name] = actual.name
        end = f"$__ret{suffix}"
        self._inline(callee, reg_base=len(self.reg_types), symmap=symmap, depth=depth + 1, suffix=suffix,
                     ret_label=end)
        self.body.append(end)

    def _remap_op(self, op, reg_base: int, symmap: dict, suffix: str):
        if isinstance(op, ir.Reg):
            return ir.Reg(op.idx + reg_base, op.name, op.ty, op.neg) if reg_base else op
        if isinstance(op, ir.Sym):
            return ir.Sym(symmap[op.name]) if op.name in symmap else op
        if isinstance(op, ir.Addr):
            b = self._remap_op(op.base, reg_base, symmap, suffix) if op.base is not None else None
            v = self._remap_op(op.vec, reg_base, symmap, suffix) if op.vec is not None else None
            return ir.Addr(b, op.offset, v)
        if isinstance(op, (ir.Vec, ir.Pair, ir.Paren)):
            return type(op)(tuple(self._remap_op(x, reg_base, symmap, suffix) for x in op.items))
        return op

    def _remap_ins(self, ins: ir.Instr, reg_base: int, symmap: dict, suffix: str) -> ir.Instr:
        if not reg_base and not symmap and not suffix:
            return ins
        args = [self._remap_op(a, reg_base, symmap, suffix) for a in ins.args]
        if ins.opcode == "bra" and suffix:
            args = [ir.Sym(a.name + suffix) if isinstance(a, ir.Sym) and not a.name.endswith(suffix) else a
                    for a in args]
        guard = self._remap_op(ins.guard, reg_base, symmap, suffix) if ins.guard is not None else None
        return replace(ins, args=args, guard=guard)

    # --- symbols -----------------------------------------------------------------------------------------------
    def symbol_address(self, name: str) -> int:
        if name not in self.syms:
            raise EmuError(f"unknown symbol '{name}' in kernel {self.kernel}")
        if name in self.frame_syms:
            raise EmuError(f"symbol '{name}' is a frame-relative variable of a really-called function (kernel "
                           f"{self.kernel}); read it through Ctx.read/Ctx.address, which add the frame base")
        return self.syms[name][1]

    def symbol_space(self, name: str) -> Optional[str]:
        s = self.syms.get(name)
        return s[0] if s else None

    # --- decoding ----------------------------------------------------------------------------------------------
    def _decode(self):
        labels = {}
        code_ins = []
        for item in self.body:
            if isinstance(item, str):
                labels[item] = len(code_ins)
            else:
                code_ins.append(item)
        self.labels = labels
        ctx = isa.Ctx(self)
        self.code: list[Entry] = []
        leaders = {0}
        for pc, ins in enumerate(code_ins):
            kind, target, fn = K_NORMAL, -1, None
            info = self._call_info.get(id(ins))
            if info is not None:
                if info[0] == "call":
                    site = info[1]
                    site.pc = pc
                    site.callee = self.frames[site.callee_name]
                    site.target = labels[site.callee.start_label]
                    self.call_sites[pc] = site
                    fn = callstack.build_call(self, site, ins)
                    leaders.add(site.target)
                elif info[0] == "ret":
                    fn = callstack.build_ret(self, info[1], ins)
                else:
                    fn = _raiser(ins, info[1])
                leaders.add(pc + 1)
            elif ins.opcode == "bra" or ins.opcode == "brx":
                if ins.opcode == "brx" or not ins.args or not isinstance(ins.args[0], ir.Sym):
                    fn = _raiser(ins, "indirect branch (brx.idx) is not supported by the emulator")
                else:
                    kind = K_BRA
                    if ins.args[0].name not in labels:
                        raise EmuError(f"branch to unknown label {ins.args[0].name} ({ins.where()})")
                    target = labels[ins.args[0].name]
                    leaders.add(target)
                    leaders.add(pc + 1)
            elif ins.opcode in ("ret", "exit"):
                kind = K_EXIT
                leaders.add(pc + 1)
            elif ins.opcode == "trap":
                kind = K_TRAP
                leaders.add(pc + 1)
            else:
                b = isa.lookup(ins)
                if b is None or b is isa.CORE:
                    note = "".join(f"\n  (instruction family {k} failed to load: {v})" for k, v in isa.FAMILY_ERRORS.items())
                    fn = _raiser(ins, isa.not_implemented(ins) + note)
                else:
                    try:
                        fn = b(ins, ctx)
                    except EmuError as e:
                        fn = _raiser(ins, getattr(e, "message", str(e)))
                    except (KeyError, ValueError, IndexError, TypeError, NotImplementedError) as e:
                        fn = _raiser(ins, f"cannot emulate '{ins.name}': {type(e).__name__}: {e}")
            if evidence.enabled():        # which forms the tests execute (ptx_docs/isa_coverage.md)
                if kind == K_NORMAL:
                    fn = evidence.wrap(fn, ins)
                else:
                    evidence._record(ins)
            g = ins.guard
            reads = tuple(sorted({a.idx for a in _regs(ins.args[1:] if _dest_first(ins) else ins.args)} |
                                 ({g.idx} if g is not None else set())))
            self.code.append(Entry(fn, kind, g.idx if g is not None else -1, bool(g.neg) if g else False, target,
                                   ins, reads))
        self.code.append(Entry(None, K_EXIT, -1, False, -1,
                               ir.Instr("exit", (), [], None, 0, "<end of kernel>", None, self.kernel), ()))
        # a block runs from a leader to the next leader or terminator
        n = len(self.code)
        leaders.add(n - 1)
        ends = [0] * n
        nxt = n
        for pc in range(n - 1, -1, -1):
            if self.code[pc].kind != K_NORMAL:
                nxt = pc + 1
            ends[pc] = nxt
            if pc in leaders:
                nxt = pc
        self.block_end = ends
        self.nregs = len(self.reg_types)


_NO_DEST = {"st", "red", "bar", "barrier", "bra", "ret", "exit", "membar", "fence", "prefetch", "prefetchu",
            "cp", "tcgen05", "mbarrier", "griddepcontrol", "trap", "nanosleep", "stmatrix", "multimem", "wgmma",
            "setmaxnreg", "cvta"}


def _dest_first(ins: ir.Instr) -> bool:
    if ins.opcode in _NO_DEST:
        if ins.opcode == "cvta":
            return True
        if ins.opcode == "mbarrier" and ins.mods and ins.mods[0] in ("arrive", "arrive_drop", "test_wait",
                                                                      "try_wait"):
            return True
        if ins.opcode == "tcgen05" and ins.mods and ins.mods[0] == "ld":
            return True
        return False
    return True


def _regs(ops):
    for op in ops:
        if isinstance(op, ir.Reg):
            yield op
        elif isinstance(op, (ir.Vec, ir.Pair, ir.Paren)):
            yield from _regs(op.items)
        elif isinstance(op, ir.Addr):
            if isinstance(op.base, ir.Reg):
                yield op.base
            if op.vec is not None:
                yield from _regs(op.vec.items)


def _raiser(ins: ir.Instr, msg: str):
    def run(st, m):
        st.fault(ins, m, msg + "\n  what to do: rewrite the kernel without it, or implement it in ptxlab/emu/ops/ (one module per instruction family; ptxlab/emu/API.md)")
    run.refuses = msg           # the native engine and the evidence recorder leave a refused instruction alone
    return run
