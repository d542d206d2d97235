"""Every modifier value of every implemented fence / membar / barrier / bar / prefetch / applypriority / discard /
createpolicy / nanosleep / griddepcontrol / cvta / isspacep form runs at least once (the slot-coverage rule of
tools/isa_coverage.py), in one generated raw-PTX kernel (2 warps) checked against a host model:
  bar{.cta}.red / barrier{.cta}.red   .popc the number of threads whose predicate is true, .and / .or of them (PTX
                                      ISA 9.7.13.1); bar.arrive / barrier.arrive by warp 1 releases warp 0's sync;
  cvta / cvta.to / isspacep           an address of each state space goes to generic and back unchanged, and the
                                      generic address is in that space (9.7.9.19-20);
  createpolicy                        the policy is accepted by a load with .L2::cache_hint;
  fences, membar, prefetches, hints,  no effect on the data a thread reads and writes in one coherent memory image
  nanosleep, griddepcontrol           (the emulator's model; ptx_docs/emulator_checks.md): after each instance every
                                      thread copies one fresh word, and all copies are checked.
Fresh data every run (seed printed); the instances (tests/emu/ops/form_sweep.py) are deterministic."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxlab

sys.path.insert(0, str(Path(__file__).resolve().parent))
import form_sweep  # noqa: E402

SEED = int.from_bytes(os.urandom(4), "little")
print(f"test_emu_sync_hint_forms: seed {SEED}")
T = 64
OPS = ["fence", "membar", "prefetch", "prefetchu", "applypriority", "discard", "createpolicy", "bar", "barrier",
       "nanosleep", "griddepcontrol", "cvta", "isspacep", "mapa", "getctarank", "ret"]
SYMBOL = {"const": "cm", "global": "gv", "local": "lm", "shared": "sm", "shared::cta": "sm", "shared::cluster": "sm",
          "param": "pin", "param::entry": "pin"}


class Kernel:
    def __init__(self):
        self.lines, self.checks = [], []       # checks: (row, kind, info)
        self.funcs = []                        # ret forms: one callee each
        self.rows = 0

    def row(self, kind, info=None):
        self.checks.append((self.rows, kind, info))
        self.rows += 1
        return self.rows - 1

    def store(self, reg64):
        r = self.row("value")
        self.lines.append(f"  st.global.b64 [%rd3+{r * T * 8}], {reg64};")
        return r

    def copy_word(self):
        """After an instance: out[row][t] = in[row'][t] (fresh word per row)."""
        r = self.row("copy")
        self.lines.append(f"  ld.global.b64 %rd20, [%rd2+{r * T * 8}]; st.global.b64 [%rd3+{r * T * 8}], %rd20;")

    def emit(self, op, mods):
        name = ".".join((op,) + mods)
        L = self.lines.append
        if op in ("fence", "membar"):
            if "tensormap::generic" in mods and "acquire" in mods:
                L(f"  {name} [%rd1], 128;")
            else:
                L(f"  {name};")
        elif op == "prefetch":
            sp = next((m for m in mods if m in ("global", "local", "const", "param")), "")
            addr = {"": "[%rd1]", "global": "[%rd1]", "local": "[lm]", "const": "[cm]", "param": "[pin]"}[sp]
            L(f"  {name} {addr};")
        elif op == "prefetchu":
            L(f"  {name} [%rd1];")
        elif op in ("applypriority", "discard"):
            L(f"  {name} [%rd5], 128;")                 # a scratch line nothing checks (discard: undefined)
        elif op == "createpolicy":
            if "range" in mods:
                L(f"  {name} %rd21, [%rd1], 64, 128;")
            elif "fractional" in mods:
                L(f"  {name} %rd21, 0.5;")
            else:
                L("  createpolicy.fractional.L2::evict_last.b64 %rd22, 1.0;")
                L(f"  {name} %rd21, %rd22;")
            r = self.row("copy")
            L(f"  ld.global.L2::cache_hint.b64 %rd20, [%rd2+{r * T * 8}], %rd21;")
            L(f"  st.global.b64 [%rd3+{r * T * 8}], %rd20;")
        elif op in ("bar", "barrier") and "cluster" in mods:
            if "arrive" in mods:
                L(f"  {name}; barrier.cluster.wait;")
            else:
                L(f"  barrier.cluster.arrive; {name};")
        elif op in ("bar", "barrier") and "red" in mods:
            r = self.row("red", mods)
            if "popc" in mods:
                L(f"  {name} %r20, 2, %p5;")
                L(f"  cvt.u64.u32 %rd20, %r20; st.global.b64 [%rd3+{r * T * 8}], %rd20;")
            else:
                L(f"  {name} %p6, 2, %p5;")
                L(f"  selp.u64 %rd20, 1, 0, %p6; st.global.b64 [%rd3+{r * T * 8}], %rd20;")
        elif op in ("bar", "barrier") and "warp" in mods:
            L(f"  {name} 0xffffffff;")
        elif op in ("bar", "barrier") and "arrive" in mods:
            aligned = ".aligned" if "aligned" in mods else ""
            L(f"  @%p7 {name} 1, {T};")
            L(f"  @!%p7 {op}{'.cta' if 'cta' in mods else ''}.sync{aligned} 1, {T};")
        elif op in ("bar", "barrier"):
            L(f"  {name} 3;")
        elif op == "nanosleep":
            L(f"  {name} 200;")
        elif op == "griddepcontrol":
            L(f"  {name};")
        elif op == "ret":                                 # a call whose callee returns with this form
            self.funcs.append(name)
            L(f"  call.uni r{len(self.funcs) - 1};")
        elif op in ("mapa", "getctarank"):
            # this CTA's own rank (an implicit 1-CTA cluster): mapa gives an address of this CTA's shared memory
            # (each thread stores its id through it and loads it back through sm); getctarank gives 0
            r = self.row("mapa" if op == "mapa" else "rank")
            size, cl = mods[-1], "shared::cluster" in mods
            L("  mov.u32 %r28, sm; mul.wide.u32 %rd31, %r1, 4; cvt.u64.u32 %rd28, %r28; mov.u32 %r29, %cluster_ctarank;")
            if not cl:
                L("  cvta.shared.u64 %rd28, %rd28;")
            src = "%rd28" if size == "u64" else "%r28"
            if op == "mapa":
                dst = "%rd29" if size == "u64" else "%r30"
                L(f"  {name} {dst}, {src}, %r29;")
                if size == "u32":
                    L("  cvt.u64.u32 %rd29, %r30;")
                L("  add.s64 %rd29, %rd29, %rd31;")
                L(f"  st{'.shared::cluster' if cl else ''}.u32 [%rd29], %r1; bar.sync 0;")
                L("  cvt.u32.u64 %r32, %rd31; add.u32 %r32, %r32, %r28; ld.shared.u32 %r31, [%r32]; bar.sync 0;")
            else:
                L(f"  {name} %r31, {src};")
            L(f"  cvt.u64.u32 %rd30, %r31; st.global.b64 [%rd3+{r * T * 8}], %rd30;")
        elif op in ("cvta", "isspacep"):
            sp = next(m for m in mods if m in SYMBOL)
            size = mods[-1] if op == "cvta" else "u64"
            if size == "u32":
                return False
            r = self.row("roundtrip", sp)
            L(f"  mov.u64 %rd23, {SYMBOL[sp]};")
            L(f"  cvta.{sp}.u64 %rd24, %rd23; cvta.to.{sp}.u64 %rd25, %rd24; isspacep.{sp} %p8, %rd24;")
            L(f"  selp.u64 %rd26, 1, 0, %p8; setp.eq.u64 %p8, %rd25, %rd23; selp.u64 %rd27, 2, 0, %p8;")
            L(f"  or.b64 %rd26, %rd26, %rd27; st.global.b64 [%rd3+{r * T * 8}], %rd26;")
        else:
            raise AssertionError(name)
        self.copy_word()
        return True

    def ptx(self):
        funcs = [f".func r{i}()\n{{\n  {name};\n}}" for i, name in enumerate(self.funcs)]
        head = [".version 8.8", ".target sm_90a", ".address_size 64",
                ".const .align 16 .b8 cm[256];", ".global .align 16 .b8 gv[256];"] + funcs + [
                ".visible .entry k(.param .u64 pin, .param .u64 pout, .param .u64 pscr)", "{",
                "  .reg .b32 %r<40>; .reg .b64 %rd<40>; .reg .pred %p<10>;",
                "  .shared .align 16 .b8 sm[256]; .local .align 16 .b8 lm[256];",
                "  ld.param.u64 %rd10, [pin]; ld.param.u64 %rd11, [pout]; ld.param.u64 %rd5, [pscr];",
                "  mov.u32 %r1, %tid.x; mul.wide.u32 %rd12, %r1, 8;",
                "  add.s64 %rd2, %rd10, %rd12; add.s64 %rd3, %rd11, %rd12; mov.u64 %rd1, %rd10;",
                # p5: this thread's predicate for the barrier reductions (bit 0 of its first input word)
                "  ld.global.b64 %rd13, [%rd2]; and.b64 %rd13, %rd13, 1; setp.ne.u64 %p5, %rd13, 0;",
                "  setp.ge.u32 %p7, %r1, 32;"]
        return "\n".join(head + self.lines + ["  ret;", "}"]) + "\n"


def _kernel():
    inst, miss = form_sweep.all_instances(OPS, lambda m: True)
    k = Kernel()
    skipped = [(op, mods) for op, mods, _ in inst if not k.emit(op, mods)]
    return k, inst, miss, skipped


KERNEL, INSTANCES, MISSING, SKIPPED = _kernel()


def test_instances_cover_every_value() -> None:
    assert not MISSING, MISSING
    assert not SKIPPED, SKIPPED


def test_every_sync_and_hint_form_runs_right() -> None:
    rng = np.random.default_rng(SEED)
    rows = KERNEL.rows
    inp = rng.integers(0, 2**63, (rows, T), dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, (rows, T)).astype(
        np.uint64)
    dev = ptxlab.open_device("emu")
    out = dev.empty(rows * T * 8)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(KERNEL.ptx(), arch="sm_90a"), "k", grid=(1, 1, 1), block=(T, 1, 1),
               args=[dev.to_device(inp), out, dev.empty(4096)])
    got = dev.to_host(out, np.uint64).reshape(rows, T)
    pred = (inp[0] & np.uint64(1)).astype(bool)
    bad = []
    for r, kind, info in KERNEL.checks:
        if kind == "copy":
            want = inp[r]
        elif kind == "mapa":
            want = np.arange(T, dtype=np.uint64)
        elif kind == "rank":
            want = np.zeros(T, np.uint64)
        elif kind == "red":
            v = int(pred.sum()) if "popc" in info else int(pred.all() if "and" in info else pred.any())
            want = np.full(T, v, np.uint64)
        else:                                            # roundtrip: bit 0 isspacep, bit 1 back to the same address
            want = np.full(T, 3, np.uint64)
        if not np.array_equal(got[r], want):
            bad.append(f"row {r} ({kind} {info}): got {got[r][:4]} want {want[:4]}")
    assert not bad, f"seed {SEED}\n" + "\n".join(bad[:10])


def test_cvta_u32_is_refused_by_ptxas_with_64_bit_addresses() -> None:
    """Why the emulator registers cvta .u64 only: a 32-bit generic address needs .address_size 32."""
    ptx = (".version 8.8\n.target sm_90a\n.address_size 64\n.visible .entry k() {\n .reg .b32 %r<3>;\n"
           " .shared .b8 sm[16];\n mov.u32 %r1, sm;\n cvta.shared.u32 %r2, %r1;\n ret;\n}\n")
    with pytest.raises(ptxlab.errors.CompileError):
        ptxlab.compile(ptx, arch="sm_90a")
