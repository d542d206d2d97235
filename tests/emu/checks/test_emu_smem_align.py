"""Fidelity rule ``smem_align`` (ptxlab/emu/checks/fidelity.py, ptx_docs/fidelity.md): sm_90 / sm_100 put a CTA's
static ``.shared`` variables from shared address 0x400 (H100: tools/probes/smem_base_probe.py), so a declared
``.align`` above 1024 does not hold there although PTX ISA 5.4.5 promises it.  The kernel below switches a 4 KB
buffer at ``buf + 0x4000`` by XOR-ing its shared address with 0x1000, as YHs' SGEMM does: with ``buf`` at a multiple
of 16 KB the writers' and the readers' addresses agree (out = in); at 0x400 the GPU's readers of threads >= 192 land
on 0x4000.. (zeros written first), and the emulator must compute that, warn, and raise when strict."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.checks.fidelity import EmuFidelityWarning
from ptxlab.errors import EmuError

THREADS = 256


def _ptx(align: int) -> str:
    zero = "\n".join(f"  st.shared.v4.b32 [%r5+{4096 * j}], {{%r4, %r4, %r4, %r4}};" for j in range(6))
    return f"""
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
  .reg .b32 %r<16>; .reg .b64 %rd<16>; .reg .pred %p;
  .shared .align {align} .b8 buf[24576];
  .shared .align 4 .b8 tail[16];
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r0, %tid.x;
  mov.u64 %rd3, buf; cvta.shared.u64 %rd3, %rd3; cvta.to.shared.u64 %rd4, %rd3; cvt.u32.u64 %r1, %rd4;
  mov.u64 %rd5, tail; cvta.shared.u64 %rd5, %rd5; cvta.to.shared.u64 %rd5, %rd5; cvt.u32.u64 %r2, %rd5;
  shl.b32 %r3, %r0, 4;
  mov.b32 %r4, 0;
  add.u32 %r5, %r1, %r3;
{zero}
  bar.sync 0;
  cvt.u64.u32 %rd6, %r3; add.u64 %rd7, %rd1, %rd6;
  ld.global.v4.b32 {{%r6, %r7, %r8, %r9}}, [%rd7];
  add.u32 %r10, %r1, 16384;
  xor.b32 %r11, %r10, 4096; add.u32 %r11, %r11, %r3;
  st.shared.v4.b32 [%r11], {{%r6, %r7, %r8, %r9}};
  bar.sync 0;
  add.u32 %r12, %r10, %r3; xor.b32 %r12, %r12, 4096;
  ld.shared.v4.b32 {{%r6, %r7, %r8, %r9}}, [%r12];
  add.u64 %rd8, %rd2, %rd6;
  st.global.v4.b32 [%rd8+16], {{%r6, %r7, %r8, %r9}};
  setp.eq.u32 %p, %r0, 0;
  @%p st.global.v2.b32 [%rd2], {{%r1, %r2}};
  ret;
}}
"""


def _run(dev, align: int, rng):
    x = rng.integers(1, 2**32, size=(THREADS, 4), dtype=np.uint64).astype(np.uint32)
    pin, pout = dev.to_device(x), dev.empty(16 + x.nbytes)
    dev.memset(pout, 0xEE)
    dev.launch(ptxlab.compile(_ptx(align), arch="sm_90a"), "k", grid=1, block=THREADS, args=[pin, pout])
    raw = dev.to_host(pout, np.uint32)
    return x, raw[:2], raw[4:].reshape(THREADS, 4)


def _gpu_model(x: np.ndarray, base: int) -> np.ndarray:
    """The kernel on a byte image of shared memory with ``buf`` at ``base`` (zeros, then the XOR-ed stores)."""
    mem = np.zeros(0x8000 // 4, np.uint32)
    b = base + 0x4000
    for t in range(THREADS):
        w = ((b ^ 0x1000) + 16 * t) // 4
        mem[w:w + 4] = x[t]
    return np.stack([mem[((b + 16 * t) ^ 0x1000) // 4:][:4] for t in range(THREADS)])


def test_overaligned_shared_gets_the_gpu_layout_and_a_warning():
    dev, rng = ptxlab.open_device("emu"), np.random.default_rng()
    with pytest.warns(EmuFidelityWarning, match=r"\[smem_align\].*declares \.align 16384, but the GPU puts it at "
                                                r"shared address 0x400"):
        x, addrs, out = _run(dev, 16384, rng)
    assert [int(a) for a in addrs] == [0x400, 0x400 + 24576]
    want = _gpu_model(x, 0x400)
    np.testing.assert_array_equal(out, want)
    assert (out[:192] == x[:192]).all() and not out[192:].any()    # threads >= 192 read the zeroed 0x4000..


def test_alignment_up_to_1024_keeps_the_layout_from_0(recwarn):
    dev, rng = ptxlab.open_device("emu"), np.random.default_rng()
    x, addrs, out = _run(dev, 1024, rng)
    assert [int(a) for a in addrs] == [0, 24576]
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(_gpu_model(x, 0), x)
    assert not [w for w in recwarn if issubclass(w.category, EmuFidelityWarning)]


def test_strict_smem_align_raises():
    dev, rng = ptxlab.open_device("emu"), np.random.default_rng()
    with dev.strict_rules("smem_align"), pytest.raises(EmuError, match=r"(?s)kernel k: .shared variable buf declares "
                                                                        r"\.align 16384.*strict rule 'smem_align'"):
        _run(dev, 16384, rng)
