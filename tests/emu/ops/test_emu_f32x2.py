"""Packed .f32x2 add/sub/mul/fma (PTX ISA 9.7.3, sm_100+): each half equals the .f32 operation on that half, and
.rn results equal IEEE float32 arithmetic (numpy) on random normal inputs."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab

SRC = r"""
extern "C" __global__ void x2(const unsigned long long* a, const unsigned long long* b, const unsigned long long* c,
                              unsigned long long* out, unsigned* ref) {
    int i = threadIdx.x;
    unsigned long long d0, d1, d2, d3, d4;
    asm("mul.rn.f32x2 %0, %1, %2;" : "=l"(d0) : "l"(a[i]), "l"(b[i]));
    asm("add.f32x2 %0, %1, %2;" : "=l"(d1) : "l"(a[i]), "l"(b[i]));
    asm("sub.rz.f32x2 %0, %1, %2;" : "=l"(d2) : "l"(a[i]), "l"(b[i]));
    asm("fma.rn.f32x2 %0, %1, %2, %3;" : "=l"(d3) : "l"(a[i]), "l"(b[i]), "l"(c[i]));
    asm("mul.rm.ftz.f32x2 %0, %1, %2;" : "=l"(d4) : "l"(a[i]), "l"(b[i]));
    out[5 * i] = d0; out[5 * i + 1] = d1; out[5 * i + 2] = d2; out[5 * i + 3] = d3; out[5 * i + 4] = d4;
    for (int h = 0; h < 2; ++h) {      // the same operations on each .f32 half
        unsigned x = (unsigned)(a[i] >> (32 * h)), y = (unsigned)(b[i] >> (32 * h)), z = (unsigned)(c[i] >> (32 * h));
        unsigned r0, r1, r2, r3, r4;
        asm("mul.rn.f32 %0, %1, %2;" : "=r"(r0) : "r"(x), "r"(y));
        asm("add.f32 %0, %1, %2;" : "=r"(r1) : "r"(x), "r"(y));
        asm("sub.rz.f32 %0, %1, %2;" : "=r"(r2) : "r"(x), "r"(y));
        asm("fma.rn.f32 %0, %1, %2, %3;" : "=r"(r3) : "r"(x), "r"(y), "r"(z));
        asm("mul.rm.ftz.f32 %0, %1, %2;" : "=r"(r4) : "r"(x), "r"(y));
        unsigned* o = ref + 10 * i + 5 * h;
        o[0] = r0; o[1] = r1; o[2] = r2; o[3] = r3; o[4] = r4;
    }
}
"""


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_100a")


def test_f32x2_halves_are_f32_operations(mod, rng):
    n = 64
    f = lambda: (rng.standard_normal(2 * n) * 2.0 ** rng.integers(-20, 20, 2 * n)).astype(np.float32)  # noqa: E731
    av, bv, cv = f(), f(), f()
    av[:4] = [0.0, -0.0, np.inf, np.float32(1e-40)]        # zero, signed zero, inf, a subnormal (ftz flushes it)
    dev = ptxlab.open_device("emu")
    a, b, c = (dev.to_device(x.view(np.uint64)) for x in (av, bv, cv))
    out, ref = dev.empty(8 * 5 * n), dev.empty(4 * 10 * n)
    dev.memset(out, 0xAB)
    dev.memset(ref, 0xCD)
    dev.launch(mod, "x2", grid=1, block=n, args=[a, b, c, out, ref])
    got = dev.to_host(out, np.uint64).reshape(n, 5)
    want = dev.to_host(ref, np.uint32).reshape(n, 2, 5)
    halves = np.stack([(got & 0xFFFFFFFF).astype(np.uint32), (got >> 32).astype(np.uint32)], axis=1)
    np.testing.assert_array_equal(halves, want)
    with np.errstate(all="ignore"):                        # .rn columns against IEEE float32 (numpy)
        np.testing.assert_array_equal(halves[:, :, 0].reshape(-1).view(np.float32)[8:], (av * bv)[8:])
        np.testing.assert_array_equal(halves[:, :, 1].reshape(-1).view(np.float32)[8:], (av + bv)[8:])


def test_f32x2_rejects_undefined_modifiers():
    """.sat is not defined for .f32x2 (ptxas rejects it, so the PTX goes to the emulator directly): refused."""
    from types import SimpleNamespace

    from ptxlab.errors import EmuError
    ptx = """.version 8.8
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b64 rd<3>;
  ld.param.u64 rd1, [p];
  mul.sat.f32x2 rd2, rd1, rd1;
  st.global.u64 [rd1], rd2;
  ret;
}
"""
    dev = ptxlab.open_device("emu")
    buf = dev.empty(8)
    with pytest.raises(EmuError, match=r"not implemented: mul\.sat\.f32x2"):
        dev.launch(SimpleNamespace(ptx=ptx, name="k.ptx"), "k", grid=1, block=1, args=[buf])
