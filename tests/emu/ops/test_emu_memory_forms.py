"""Every modifier value of every implemented ld / ldu / st / atom / red form runs at least once (the slot-coverage
rule of tools/isa_coverage.py), in generated raw-PTX kernels checked against a host model written here.

tests/emu/ops/form_sweep.py picks, for each registered form, instances that are legal PTX (ptxlab/emu/core/ptx_isa)
and together hold every value of every slot; this file gives each instance operands at fresh offsets of its state
space and models its effect on host images of the memories:
  ld / ldu   the bytes at the address (global, generic, shared{,::cta,::cluster}, local, const, kernel param,
             function param), zero- or sign-extended into the destination register, which is stored to out[];
  st         the register bytes written to the address (shared and local are copied out at the end; a call
             argument written with st.param is copied out by the callee);
  atom / red global, generic and shared memory: the old value (atom) and the new memory value; integers from random
             bits, floats from small integers (every sum exact); cas with a compare value equal to the old value.
Cache and eviction hints, .weak / .volatile / .relaxed / .acquire / .release / .mmio and scopes do not change what
one thread reads or writes (PTX ISA 8, memory consistency model), so the check is that every value is right.
Fresh random data every run (seed printed); the instances are deterministic."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ptxlab

sys.path.insert(0, str(Path(__file__).resolve().parent))
import form_sweep  # noqa: E402

SEED = int.from_bytes(os.urandom(4), "little")
print(f"test_emu_memory_forms: seed {SEED}")

SPACES = ("global", "shared", "shared::cta", "shared::cluster", "local", "const", "param", "param::entry",
          "param::func")
SIZE = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4, "s32": 4,
        "f32": 4, "f16x2": 4, "bf16x2": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16}
REG = {1: ("%h", 2), 2: ("%h", 2), 4: ("%r", 4), 8: ("%rd", 8), 16: ("%q", 16)}
R = 4096                       # bytes per region
# in[]: [0, R) initial shared memory, [R, 2R) initial local memory, [2R, 3R) load sources and operands,
#       [3R, 3R + 256) the function-parameter blob
SH0, LO0, OPS, FA0 = 0, R, 2 * R, 3 * R
FLOAT = {"f32": (np.float32, 1), "f64": (np.float64, 1), "f16": (np.float16, 1), "bf16": (ml_dtypes.bfloat16, 1),
         "f16x2": (np.float16, 2), "bf16x2": (ml_dtypes.bfloat16, 2)}


def _parts(mods):
    space = next((m for m in mods if m in SPACES), "")
    vec = next((int(m[1:]) for m in mods if m in ("v2", "v4", "v8")), 1)
    ty = next(m for m in reversed(mods) if m in SIZE)
    return space, vec, ty


def ok_ld(mods):
    return True


def ok_st(mods):
    return _parts(mods)[0] not in ("const", "param::entry") and "async" not in mods


def ok_atom(mods):                       # red.async: tests/corpus/kernels_async_store.py
    return _parts(mods)[0] in ("", "global", "shared", "shared::cta", "shared::cluster") and "async" not in mods


class Kernel:
    """The PTX of one sweep kernel and the records of what each instruction does."""

    def __init__(self, target):
        self.target = target
        self.body, self.gbody, self.funcs = [], [], []
        self.nreg = {"%h": 0, "%r": 10, "%rd": 10, "%q": 0}
        self.cur = {"ops": 0, "out": 0, "sh": 0, "lo": 0, "const": 0, "pb": 0, "fa": 0}
        self.recs = []              # what the host model replays
        self.floats = []            # (in offset, float type, count): small integers go there
        self.cas = []               # (compare in offset, target region, target offset, size)

    def reg(self, size):
        p, _ = REG[size]
        self.nreg[p] += 1
        return f"{p}{self.nreg[p]}"

    def alloc(self, region, n, limit=R):
        a = max(n, 4)
        o = -(-self.cur[region] // a) * a
        self.cur[region] = o + n
        assert self.cur[region] <= limit, (region, self.cur[region])
        return o

    @staticmethod
    def addr(space, region, off):
        if space in ("", "global"):
            return f"[{ {'ops': '%rd1', 'out': '%rd2'}[region] }+{off}]"
        return {"shared": "[sm+{}]", "shared::cta": "[sm+{}]", "shared::cluster": "[%r1+{}]", "local": "[lm+{}]",
                "const": "[cm+{}]", "param": "[pb+{}]", "param::entry": "[pb+{}]",
                "param::func": "[fa+{}]"}[space].format(off)

    @staticmethod
    def hint(mods):
        return ", %rd9" if "L2::cache_hint" in mods else ""

    def operands(self, ty, vec):
        """Registers loaded from fresh in[] offsets; returns (register list, in offsets)."""
        sz = SIZE[ty]
        regs, offs = [], []
        for _ in range(vec):
            r, rsz = self.reg(sz), REG[sz][1]
            o = self.alloc("ops", rsz)
            self.body.append(f"  ld.global.b{8 * rsz} {r}, [%rd1+{OPS + o}];")
            regs.append(r)
            offs.append(OPS + o)
            if ty in FLOAT:
                self.floats.append((OPS + o, ty))
        return regs, offs

    @staticmethod
    def group(regs):
        return regs[0] if len(regs) == 1 else "{" + ", ".join(regs) + "}"

    def store_out(self, regs, size, body):
        offs = []
        for r in regs:
            rsz = REG[size][1]
            o = self.alloc("out", rsz)
            body.append(f"  st.global.b{8 * rsz} [%rd2+{o}], {r};")
            offs.append(o)
        return offs

    # ------------------------------------------------------------------------------------------ instructions
    def ld(self, op, mods):
        space, vec, ty = _parts(mods)
        sz = SIZE[ty]
        region = {"": "ops", "global": "ops", "shared": "sh", "shared::cta": "sh", "shared::cluster": "sh",
                  "local": "lo", "const": "const", "param": "pb", "param::entry": "pb", "param::func": "fa"}[space]
        off = self.alloc(region, sz * vec, 256 if region in ("pb", "fa") else R)
        body = self.gbody if space == "param::func" else self.body
        dst = [self.reg(sz) for _ in range(vec)]
        a = self.addr(space, region, OPS + off if region == "ops" else off)
        body.append(f"  {'.'.join((op,) + mods)} {self.group(dst)}, {a}{self.hint(mods)};")
        outs = self.store_out(dst, sz, body)
        self.recs.append(("ld", region, OPS + off if region == "ops" else off, ty, outs))

    def st(self, op, mods):
        space, vec, ty = _parts(mods)
        sz = SIZE[ty]
        regs, ins = self.operands(ty, vec)
        name = ".".join((op,) + mods)
        if space in ("param", "param::func"):       # a call argument, copied to out[] by the callee
            n = sz * vec
            o = self.alloc("out", n)
            k = len(self.funcs)
            self.funcs.append((k, n, o))
            self.body.append(f"  {{ .param .align {max(n, 4)} .b8 a{k}[{n}]; .param .b64 o{k};")
            self.body.append(f"  {name} [a{k}], {self.group(regs)}{self.hint(mods)};")
            self.body.append(f"  st.param.b64 [o{k}], %rd2; call.uni f{k}, (o{k}, a{k}); }}")
            self.recs.append(("st", "out", o, sz, ins))
            return
        region = {"": "out", "global": "out", "local": "lo"}.get(space, "sh")
        off = self.alloc(region, sz * vec)
        self.body.append(f"  {name} {self.addr(space, region, off)}, {self.group(regs)}{self.hint(mods)};")
        self.recs.append(("st", region, off, sz, ins))

    def atom(self, op, mods):
        space, vec, ty = _parts(mods)
        sz = SIZE[ty]
        name = ".".join((op,) + mods)
        aop = next(m for m in mods if m in ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"))
        region = "out" if space in ("", "global") else "sh"
        off = self.alloc(region, sz * vec)
        if ty in FLOAT:                          # the old value: small integers too
            for i in range(vec):
                self.floats.append((SH0 + off + i * sz if region == "sh" else ("out", off + i * sz), ty))
        b, bins = self.operands(ty, vec)
        c, cins = self.operands(ty, 1) if aop == "cas" else ([], [])
        for bi in (bins if aop == "cas" else []):      # cas d, [a], b (compare), c (new value)
            self.cas.append((bi, region, off, sz))
        src = self.group(b) + ("" if not c else ", " + c[0])
        a = self.addr(space, region, off)
        if op == "red":
            self.body.append(f"  {name} {a}, {src}{self.hint(mods)};")
            outs = None
        else:
            d = [self.reg(sz) for _ in range(vec)]
            self.body.append(f"  {name} {self.group(d)}, {a}, {src}{self.hint(mods)};")
            outs = self.store_out(d, sz, self.body)
        self.recs.append(("atom", region, off, ty, aop, cins if aop == "cas" else bins, outs))

    # ------------------------------------------------------------------------------------------ text
    def ptx(self, const: np.ndarray) -> str:
        head = [".version 9.1", f".target {self.target}", ".address_size 64",
                ".const .align 16 .b8 cm[{}] = {{{}}};".format(R, ", ".join(str(int(x)) for x in const))]
        for k, n, o in self.funcs:
            head += [f".func f{k}(.param .b64 fo, .param .align {max(n, 4)} .b8 fa[{n}])", "{",
                     "  .reg .b16 %c<2>; .reg .b64 %o<2>;", "  ld.param.b64 %o0, [fo];"]
            for i in range(n):
                head += [f"  ld.param.b8 %c0, [fa+{i}];", f"  st.global.b8 [%o0+{o + i}], %c0;"]
            head += ["  ret;", "}"]
        regs = "  .reg .b16 %h<{}>; .reg .b32 %r<{}>; .reg .b64 %rd<{}>; .reg .b128 %q<{}>; .reg .pred %p<2>;"
        counts = (self.nreg["%h"] + 1, self.nreg["%r"] + 1, self.nreg["%rd"] + 1, self.nreg["%q"] + 1)
        if self.gbody:
            head += [".func g(.param .b64 go, .param .align 16 .b8 fa[256])", "{", regs.format(*counts),
                     "  ld.param.b64 %rd2, [go];"] + self.gbody + ["  ret;", "}"]
        k = [".visible .entry k(.param .u64 pin, .param .u64 pout, .param .u64 psh, .param .u64 plo, "
             ".param .align 16 .b8 pb[256])", "{", regs.format(*counts),
             f"  .shared .align 16 .b8 sm[{R}];", f"  .local .align 16 .b8 lm[{R}];",
             "  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; ld.param.u64 %rd3, [psh];",
             "  ld.param.u64 %rd4, [plo];",
             "  createpolicy.fractional.L2::evict_last.b64 %rd9, 1.0;",
             "  mov.u32 %r2, sm; mov.u32 %r3, %cluster_ctarank; mapa.shared::cluster.u32 %r1, %r2, %r3;"]
        # copy the initial shared and local images in (and out at the end): plain 16-byte moves
        for i in range(0, R, 16):
            k += [f"  ld.global.b128 %q0, [%rd1+{SH0 + i}]; st.shared.b128 [sm+{i}], %q0;",
                  f"  ld.global.b128 %q0, [%rd1+{LO0 + i}]; st.local.b128 [lm+{i}], %q0;"]
        k += self.body
        if self.gbody:
            k += ["  { .param .align 16 .b8 fa[256]; .param .b64 go; st.param.b64 [go], %rd2;"]
            for i in range(0, 256, 16):
                k += [f"  ld.global.b128 %q0, [%rd1+{FA0 + i}]; st.param.b128 [fa+{i}], %q0;"]
            k += ["  call.uni g, (go, fa); }"]
        for i in range(0, R, 16):
            k += [f"  ld.shared.b128 %q0, [sm+{i}]; st.global.b128 [%rd3+{i}], %q0;",
                  f"  ld.local.b128 %q0, [lm+{i}]; st.global.b128 [%rd4+{i}], %q0;"]
        k += ["  ret;", "}"]
        return "\n".join(head + k) + "\n"


# ---------------------------------------------------------------------------------------------- host model
def _small(rng, ty, n):
    dt, _ = FLOAT[ty]
    return rng.integers(-60, 61, n).astype(dt).view(np.uint8)


def _ext(raw: np.ndarray, ty: str, rsz: int) -> np.ndarray:
    """The register bytes of a loaded element: zero- or sign-extended to the register width."""
    v = int.from_bytes(raw.tobytes(), "little")
    if ty[0] == "s" and v >> (8 * raw.size - 1):
        v -= 1 << (8 * raw.size)
    return np.frombuffer((v % (1 << (8 * rsz))).to_bytes(rsz, "little"), np.uint8)


def _atom(aop, ty, old: np.ndarray, b: np.ndarray) -> np.ndarray:
    """New memory bytes for one element."""
    sz = old.size
    if ty in FLOAT:
        dt, lanes = FLOAT[ty]
        r = old.view(dt).astype(np.float64) + b.view(dt).astype(np.float64)      # exact: small integers
        return r.astype(dt).view(np.uint8)
    bits = 8 * sz
    u = int.from_bytes(old.tobytes(), "little")
    x = int.from_bytes(b.tobytes(), "little")
    sgn = lambda v: v - (1 << bits) if ty[0] == "s" and v >> (bits - 1) else v  # noqa: E731
    r = {"add": lambda: u + x, "and": lambda: u & x, "or": lambda: u | x, "xor": lambda: u ^ x,
         "exch": lambda: x, "cas": lambda: None,
         "min": lambda: min(sgn(u), sgn(x)), "max": lambda: max(sgn(u), sgn(x)),
         "inc": lambda: 0 if u >= x else u + 1, "dec": lambda: x if u == 0 or u > x else u - 1}[aop]()
    return np.frombuffer((r % (1 << bits)).to_bytes(sz, "little"), np.uint8)


def model(kern: Kernel, inp, out0, const, pb):
    out, sh, lo = out0.copy(), inp[SH0:SH0 + R].copy(), inp[LO0:LO0 + R].copy()
    img = {"out": out, "sh": sh, "lo": lo, "ops": inp, "const": const, "pb": pb, "fa": inp[FA0:FA0 + 256]}
    for rec in kern.recs:
        if rec[0] == "ld":
            _, region, off, ty, outs = rec
            sz = SIZE[ty]
            for i, o in enumerate(outs):
                rsz = REG[sz][1]
                out[o:o + rsz] = _ext(img[region][off + i * sz:off + (i + 1) * sz], ty, rsz)
        elif rec[0] == "st":
            _, region, off, sz, ins = rec
            for i, io in enumerate(ins):
                img[region][off + i * sz:off + (i + 1) * sz] = inp[io:io + sz]
        else:
            _, region, off, ty, aop, bins, outs = rec          # (cas: bins = the new values)
            sz = SIZE[ty]
            m = img[region]
            for i, bi in enumerate(bins):
                old = m[off + i * sz:off + (i + 1) * sz].copy()
                b = inp[bi:bi + sz]
                m[off + i * sz:off + (i + 1) * sz] = b if aop == "cas" else _atom(aop, ty, old, b)
                if outs is not None:
                    rsz = REG[sz][1]
                    out[outs[i]:outs[i] + rsz] = _ext(old, "b", rsz)
    return out, sh, lo


def _kernels():
    opmap = {"ld": ("ld", ok_ld), "ldu": ("ld", ok_ld), "st": ("st", ok_st), "atom": ("atom", ok_atom),
             "red": ("atom", ok_atom)}
    ks = {}
    for op, (kind, ok) in opmap.items():
        inst, miss = form_sweep.all_instances([op], ok)
        assert not [m for m in miss if "async" not in m[0]], miss
        for _, mods, target in inst:
            k = ks.setdefault((kind, target), Kernel(target))
            getattr(k, kind)(op, mods)
    return ks


KERNELS = _kernels()


@pytest.mark.parametrize("key", sorted(KERNELS), ids=lambda k: f"{k[0]}-{k[1]}")
def test_every_modifier_value_runs_right(key, rng) -> None:
    kern = KERNELS[key]
    rng = np.random.default_rng([SEED, hash(key) & 0xFFFF])
    inp = rng.integers(0, 256, FA0 + 256, dtype=np.uint8)
    out0 = rng.integers(0, 256, R, dtype=np.uint8)
    const = rng.integers(0, 256, R, dtype=np.uint8)
    pb = rng.integers(0, 256, 256, dtype=np.uint8)
    for where, ty in kern.floats:
        sz = SIZE[ty]
        if isinstance(where, tuple):
            out0[where[1]:where[1] + sz] = _small(rng, ty, FLOAT[ty][1])
        else:
            inp[where:where + sz] = _small(rng, ty, FLOAT[ty][1])
    for ci, region, off, sz in kern.cas:               # compare value = the old value: the swap happens
        src = out0 if region == "out" else inp[SH0:]
        inp[ci:ci + sz] = src[off:off + sz]
    dev = ptxlab.open_device("emu")
    mod = ptxlab.compile(kern.ptx(const), arch=kern.target)
    bufs = [dev.to_device(inp), dev.to_device(out0), dev.empty(R), dev.empty(R)]
    dev.launch(mod, "k", grid=(1, 1, 1), block=(1, 1, 1), args=bufs + [pb.tobytes()])
    want = model(kern, inp, out0, const, pb)
    for name, buf, w in zip(("out", "shared", "local"), bufs[1:], want):
        got = dev.to_host(buf, np.uint8)
        bad = np.flatnonzero(got != w)
        assert bad.size == 0, f"{name}: {bad.size} bytes differ, first at {bad[:8]} ({key}, seed {SEED})"
