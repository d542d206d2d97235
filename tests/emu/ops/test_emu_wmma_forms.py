"""Every registered WMMA form (ptxlab/emu/ops/wmma.py) in raw PTX: for each type / shape, four kernels that together
use every state space of wmma.load and wmma.store (generic, .global, .shared, .shared::cta), both layouts of every
operand, .satfinite and .rn present and absent, s8 and u8: load A, B, C -> mma -> store D, on exact-regime inputs
(small dyadic values, so the result is exact in every summation order) against numpy.  The fragment layout stays
opaque (only wmma instructions touch the fragments), as the emulator requires."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ptxlab
from ptxlab.emu.hw import wmma as fw

SS = ("", "global", "shared", "shared::cta")
REGION = 1024                              # bytes per matrix region: A at 0, B at 1024, C at 2048; D out
FS = ("m16n16k16", "m8n32k16", "m32n8k16")
# (A/B type, C/D type (or "D type/C type"), shapes)
FAMILIES = [("f16", "f16", FS), ("f16", "f32", FS), ("f16", "f16/f32", FS), ("f16", "f32/f16", FS), ("bf16", "f32", FS),
            ("tf32", "f32", ("m16n16k8",)), ("s8", "s32", FS), ("f64", "f64", ("m8n8k4",))]
# the mixed C / D families need only both values of each layout slot (their loads and stores are the others' forms)
CASES = [(at, ct, s, i) for at, ct, shapes in FAMILIES for s in shapes for i in ((0, 3) if "/" in ct else range(4))]
_REG = {"b32": ".b32", "b64": ".f64"}
_NP = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _vec(prefix, n):
    return "{" + ", ".join(f"%{prefix}{j}" for j in range(n)) + "}"


def _stride(fr, layout) -> int:
    """The default stride (the leading dimension), rounded up to a multiple of the fragment size where the PTX ISA's
    alignment rule (9.7.14.4.2) needs it (a .col A of m8n32k16: 8 halves = 16 bytes < 32)."""
    st = fw.default_stride(fr, layout)
    unit = fr.bytes * 8 // fr.bits
    return -(-st // unit) * unit


def _so(fr, layout) -> str:
    """The optional stride operand: absent where the default is aligned."""
    st = _stride(fr, layout)
    return "" if st == fw.default_stride(fr, layout) else f", {st}"


def _addr(ss: str, region: int) -> str:
    """Address operand of a region: generic / .global from the input pointer, .shared from the shared copy."""
    return {"": f"[%rd_gen+{region}]", "global": f"[%rd_glb+{region}]"}.get(ss, f"[sm+{region}]")


def _kernel(name, at, dct, shape, i):
    """(PTX of one kernel, its parameters): the i-th combination of state spaces, layouts and modifiers."""
    dt, ct = (dct.split("/") + [dct])[:2]
    et = "u8" if (at == "s8" and i % 2) else at
    lay = ("row", "col")
    la, lb, lc, ld = lay[i & 1], lay[(i >> 1) & 1], lay[(i + 1) & 1], lay[((i + 1) >> 1) & 1]
    ss_ld, ss_st = SS[i], SS[(i + 1) % 4]
    fa, fb, fc = fw.fragment("a", shape, et), fw.fragment("b", shape, et), fw.fragment("c", shape, ct)
    fd = fw.fragment("d", shape, dt)
    dot = lambda s: f".{s}" if s else ""                                        # noqa: E731
    mods = f"{la}.{lb}.{shape}"
    if at == "f64":
        mods += ".rn" if i % 2 else ""
        types = ".f64.f64.f64.f64"
    elif at == "f16":
        types = f".{dt}.{ct}"
    else:
        types = f".{ct}.{et}.{et}.{ct}" + (".satfinite" if at == "s8" and i >= 2 else "")
    decl = "".join(f"  .reg {_REG[f.reg_type]} %{p}<{f.nregs}>;\n" for p, f in (("a", fa), ("b", fb), ("c", fc),
                                                                                 ("d", fd)))
    body = (f"  wmma.load.a.sync.aligned.{la}.{shape}{dot(ss_ld)}.{et} {_vec('a', fa.nregs)}, {_addr(ss_ld, 0)}"
            f"{_so(fa, la)};\n"
            f"  wmma.load.b.sync.aligned.{lb}.{shape}{dot(ss_ld)}.{et} {_vec('b', fb.nregs)}, {_addr(ss_ld, REGION)}"
            f"{_so(fb, lb)};\n"
            f"  wmma.load.c.sync.aligned.{lc}.{shape}{dot(ss_ld)}.{ct} {_vec('c', fc.nregs)}, "
            f"{_addr(ss_ld, 2 * REGION)}{_so(fc, lc)};\n"
            f"  wmma.mma.sync.aligned.{mods}{types} {_vec('d', fd.nregs)}, {_vec('a', fa.nregs)}, "
            f"{_vec('b', fb.nregs)}, {_vec('c', fc.nregs)};\n")
    st_addr = {"": "[%rd_out]", "global": "[%rd_outg]"}.get(ss_st, f"[sm+{3 * REGION}]")
    body += (f"  wmma.store.d.sync.aligned.{ld}.{shape}{dot(ss_st)}.{dt} {st_addr}, {_vec('d', fd.nregs)}"
             f"{_so(fd, ld)};\n")
    copy_in = f"""  mov.u32 %r0, %tid.x;
$L_in:
  setp.ge.u32 %p0, %r0, {3 * REGION // 16};
  @%p0 bra $L_go;
  mul.wide.u32 %rd0, %r0, 16;
  add.s64 %rd1, %rd_glb, %rd0;
  ld.global.v4.u32 {{%r1, %r2, %r3, %r4}}, [%rd1];
  mov.u64 %rd2, sm;
  add.s64 %rd3, %rd2, %rd0;
  st.shared.v4.u32 [%rd3], {{%r1, %r2, %r3, %r4}};
  add.u32 %r0, %r0, 32;
  bra $L_in;
$L_go:
  bar.warp.sync -1;
""" if ss_ld.startswith("shared") else ""
    copy_out = f"""  bar.warp.sync -1;
  mov.u32 %r0, %tid.x;
$L_out:
  setp.ge.u32 %p0, %r0, {REGION // 16};
  @%p0 bra $L_end;
  mul.wide.u32 %rd0, %r0, 16;
  mov.u64 %rd2, sm;
  add.s64 %rd3, %rd2, %rd0;
  ld.shared.v4.u32 {{%r1, %r2, %r3, %r4}}, [%rd3+{3 * REGION}];
  add.s64 %rd1, %rd_outg, %rd0;
  st.global.v4.u32 [%rd1+{REGION}], {{%r1, %r2, %r3, %r4}};
  add.u32 %r0, %r0, 32;
  bra $L_out;
$L_end:
""" if ss_st.startswith("shared") else ""
    ptx = f""".visible .entry {name}(.param .u64 p_in, .param .u64 p_out) {{
  .reg .b32 %r<5>; .reg .b64 %rd<4>; .reg .pred %p<1>;
  .reg .b64 %rd_gen; .reg .b64 %rd_glb; .reg .b64 %rd_out; .reg .b64 %rd_outg;
{decl}  .shared .align 128 .b8 sm[{4 * REGION}];
  ld.param.u64 %rd_gen, [p_in];
  ld.param.u64 %rd_out, [p_out];
  cvta.to.global.u64 %rd_glb, %rd_gen;
  cvta.to.global.u64 %rd_outg, %rd_out;
{copy_in}{body}{copy_out}  ret;
}}
"""
    return ptx, dict(et=et, la=la, lb=lb, lc=lc, ld=ld, shared_out=ss_st.startswith("shared"), fa=fa, fb=fb, fc=fc,
                     fd=fd, dt=dt, ct=ct)


@pytest.fixture(scope="module")
def module():
    texts, params = [], {}
    for at, ct, shape, i in CASES:
        name = f"k_{at}_{ct.replace('/', '_')}_{shape}_{i}"
        ptx, p = _kernel(name, at, ct, shape, i)
        texts.append(ptx)
        params[name] = p
    src = ".version 8.0\n.target sm_90a\n.address_size 64\n" + "\n".join(texts)
    return ptxlab.compile(src, arch="sm_90a", name="wmma_forms.ptx"), params


def _exact(rng, shape, t):
    if t in ("s8", "u8"):
        return rng.integers(0, 256, shape).astype(np.uint8)
    if t == "s32":
        return rng.integers(-4096, 4096, shape).astype(np.int32).view(np.uint32)
    v = rng.integers(-4, 5, shape) / 4.0
    v[v == 0] = 0.25
    if t == "f64":
        return v.view(np.uint64)
    if t in ("f32", "tf32"):
        return v.astype(np.float32).view(np.uint32)
    return v.astype(np.float16 if t == "f16" else ml_dtypes.bfloat16).view(np.uint16)


def _val(x, t):
    view = {"s8": np.int8, "u8": np.uint8, "s32": np.int32, "f64": np.float64, "f32": np.float32,
            "tf32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[t]
    return x.view(view).astype(np.float64)


def _put(buf, off, mat, fr, layout):
    """A matrix into the byte buffer at ``off``: .row element (r, c) at r * stride + c, .col at c * stride + r."""
    m = mat if layout == "row" else mat.T
    st = _stride(fr, layout)
    full = np.zeros((m.shape[0], st), m.dtype)
    full[:, :m.shape[1]] = m
    raw = full.view(np.uint8).reshape(-1)
    buf[off:off + raw.size] = raw


@pytest.mark.parametrize("case", CASES, ids=[f"{a}_{c.replace('/', '_')}_{s}_{i}" for a, c, s, i in CASES])
def test_every_form(module, case, rng):
    mod, params = module
    at, ct, shape, i = case
    name = f"k_{at}_{ct.replace('/', '_')}_{shape}_{i}"
    p = params[name]
    fa, fb, fc, fd, ct, dt = p["fa"], p["fb"], p["fc"], p["fd"], p["ct"], p["dt"]
    a = _exact(rng, (fa.rows, fa.cols), p["et"])
    b = _exact(rng, (fb.rows, fb.cols), p["et"])
    c = _exact(rng, (fc.rows, fc.cols), ct)
    buf = np.zeros(3 * REGION, np.uint8)
    _put(buf, 0, a, fa, p["la"])
    _put(buf, REGION, b, fb, p["lb"])
    _put(buf, 2 * REGION, c, fc, p["lc"])
    dev = ptxlab.open_device("emu")
    out = dev.empty(2 * REGION)
    dev.memset(out, 0xFF)
    dev.launch(mod, name, grid=(1, 1, 1), block=(32, 1, 1), args=[dev.to_device(buf), out])
    lead = fd.rows if p["ld"] == "row" else fd.cols
    st = _stride(fd, p["ld"])
    raw = dev.to_host(out, np.uint8)[REGION if p["shared_out"] else 0:][:lead * st * fd.bits // 8]
    got = raw.view(_NP[fd.bits]).reshape(lead, st)[:, :fd.cols if p["ld"] == "row" else fd.rows]
    got = got if p["ld"] == "row" else got.T
    d = _val(a, p["et"]) @ _val(b, p["et"]) + _val(c, ct)
    if dt == "s32":
        want = d.astype(np.int64).astype(np.int32).view(np.uint32)
    else:
        want = d.astype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[dt]).view(_NP[fd.bits])
    np.testing.assert_array_equal(got, want)
