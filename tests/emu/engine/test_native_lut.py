"""Conversions of 8- and 16-bit registers run natively from a lookup table built by the interpreter's own handler
(engine/native/emit_lut.py): every input value, both engines, bit for bit, and each form really translated."""
from __future__ import annotations

import types

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.engine.native import runner

# thread t converts the bytes / halves of its input word; 16,384 threads see every b8 value and every b16 value
CVTS = [
    ("cvt.rn.f16x2.e2m1x2 %r{o}, %b{i};", "b8"),
    ("cvt.rn.f16x2.e4m3x2 %r{o}, %h{i};", "b16"),
    ("cvt.rn.f16x2.e5m2x2 %r{o}, %h{i};", "b16"),
    ("cvt.rn.relu.f16x2.e4m3x2 %r{o}, %h{i};", "b16"),
    ("cvt.rn.bf16x2.ue8m0x2 %r{o}, %h{i};", "b16"),
    ("cvt.ftz.f32.f16 %f{o}, %h{i};", "b16"),
    ("cvt.f32.f16 %f{o}, %h{i};", "b16"),
    ("cvt.f32.bf16 %f{o}, %h{i};", "b16"),
    ("cvt.f64.f16 %fd{o}, %h{i};", "b16"),
]


def _ptx() -> str:
    body, outs, o = [], [], 0
    for k, (form, src) in enumerate(CVTS):
        i = k % 2
        line = form.format(o=k, i=i)
        body.append(("  @%p0 " if k == 3 else "  ") + line)      # one guarded form: inactive threads keep their value
        dst = line.split()[1].rstrip(",")
        wide = dst.startswith("%fd")
        outs.append(f"  st.global.{'b64' if wide else 'b32'} [%rd3+{o}], {dst};")
        o += 8 if wide else 4
    return "\n".join([
        ".version 8.6", ".target sm_100a", ".address_size 64",
        ".visible .entry k(.param .u64 pin, .param .u64 pout)", "{",
        "  .reg .pred %p<2>; .reg .b8 %b<4>; .reg .b16 %h<2>; .reg .b32 %r<16>; .reg .f32 %f<16>;",
        "  .reg .f64 %fd<16>; .reg .b64 %rd<4>;",
        "  ld.param.u64 %rd0, [pin]; ld.param.u64 %rd1, [pout];",
        "  cvta.to.global.u64 %rd0, %rd0; cvta.to.global.u64 %rd1, %rd1;",
        "  mov.u32 %r15, %ctaid.x; mov.u32 %r14, %ntid.x; mov.u32 %r13, %tid.x; mad.lo.s32 %r12, %r15, %r14, %r13;",
        "  mul.wide.u32 %rd2, %r12, 4; add.s64 %rd2, %rd0, %rd2; ld.global.u32 %r11, [%rd2];",
        f"  mul.wide.u32 %rd3, %r12, {o}; add.s64 %rd3, %rd1, %rd3;",
        "  mov.b32 {%b0, %b1, %b2, %b3}, %r11; mov.b32 {%h0, %h1}, %r11; setp.ne.s32 %p0, %r13, 5;",
        "  mov.b32 %r3, 0x12345678;",
        *body, *outs, "  ret;", "}"]), o


def _run(engine, ptx, data, nbytes):
    dev = ptxlab.open_device("emu", engine=engine)
    x = dev.to_device(data)
    y = dev.empty(nbytes * data.size)
    dev.memset(y, 0xEE)
    mod = types.SimpleNamespace(ptx=ptx, name="lut.ptx")
    dev.launch(mod, "k", grid=(data.size // 256, 1, 1), block=(256, 1, 1), args=[x, y])
    return dev, mod, dev.to_host(y, np.uint8)


def test_narrow_conversions_agree_on_every_input(rng):
    ptx, nbytes = _ptx()
    lo = np.arange(1 << 16, dtype=np.uint32)
    data = (lo[::4] | (rng.permutation(lo)[: lo.size // 4] << np.uint32(16))).astype(np.uint32)
    data = np.concatenate([data, rng.integers(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32)])
    _, _, ref = _run("interp", ptx, data, nbytes)
    dev, mod, got = _run("native", ptx, data, nbytes)
    assert np.array_equal(got, ref), f"engines differ in {int(np.count_nonzero(got != ref))} bytes"
    assert not np.all(ref == 0xEE)
    k = runner.kernel_of(dev.program(mod, "k"))
    cvt = [(e.ins.text.strip(), nat) for e, nat in zip(dev.program(mod, "k").code, k.native) if e.ins.opcode == "cvt"]
    assert len(cvt) == len(CVTS) and all(nat for _, nat in cvt), cvt
    assert k.tables.luts and all(t.dtype == np.uint64 for t in k.tables.luts)


def test_a_handler_that_needs_the_wave_stays_interpreted():
    """The stand-in wave holds only the two registers: a handler reading anything else is not tabulated."""
    from ptxlab.emu.engine.native import emit_lut
    from ptxlab.emu.core import ir
    from ptxlab.emu.engine.native.operands import NotNative

    def needs_special(st, m):
        st.r[1] = st.special("laneid")

    src, dst = ir.Reg(0, "%h0", "b16"), ir.Reg(1, "%r0", "b32")
    with pytest.raises(AttributeError):
        emit_lut.table(needs_special, src, dst, 2)
    e = types.SimpleNamespace(ins=types.SimpleNamespace(opcode="cvt", mods=("f32", "f16"), args=[dst, src]),
                              fn=needs_special)
    with pytest.raises(NotNative):
        emit_lut.emit(types.SimpleNamespace(reg_types=["b16", "b32"]), e, None)
