"""Register identifiers in every legal form (PTX ISA 4.3 "Identifiers": [a-zA-Z]{followsym}* or [_$%]{followsym}+,
followsym = [a-zA-Z0-9_$]; '%' is optional), declared with or without a space after '.reg' (cuda_fp16.hpp writes
'{.reg.b16 h, r; mov.b16 h, %rs2; ...}'), scoped in '{ }' blocks: an inner declaration shadows an outer one until
its block closes.  The PTX is checked by ptxas (ptxlab.compile) before the emulator runs it."""
from __future__ import annotations

import numpy as np

import ptxlab

PTX = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 x) {
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  .reg.b32 a, _b, $c, a1$_Z, %d;
  .reg.pred p;
  ld.param.u64 %rd0, [out];
  ld.param.u32 a, [x];
  mov.u32 %r1, %tid.x;
  add.u32 _b, a, %r1;
  mul.lo.u32 $c, _b, 3;
  xor.b32 a1$_Z, $c, a;
  { .reg.b32 a; .reg .b16 h;
    add.u32 a, a1$_Z, 7;
    cvt.u16.u32 h, a;
    cvt.u32.u16 %d, h;
    { .reg .b32 a;
      mov.u32 a, 5;
      add.u32 %d, %d, a; }
    add.u32 %d, %d, a; }
  setp.lt.u32 p, %r1, 32;
  @p add.u32 %d, %d, a;
  @!p sub.u32 %d, %d, a;
  mul.wide.u32 %rd1, %r1, 4;
  add.s64 %rd2, %rd0, %rd1;
  st.global.u32 [%rd2], %d;
  ret;
}
"""


def test_register_identifier_forms_and_scopes(rng) -> None:
    dev = ptxlab.open_device("emu")
    mod = ptxlab.compile(PTX, arch="sm_90a")
    x = int(rng.integers(1, 2**32, dtype=np.uint64))
    out = dev.empty(64 * 4)
    dev.memset(out, 0xFF)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(64, 1, 1), args=[out, np.uint32(x)])
    got = dev.to_host(out, np.uint32)
    t = np.arange(64, dtype=np.uint64)
    M = 0xFFFFFFFF
    b = (x + t) & M
    c = (b * 3) & M
    z = c ^ x
    inner = (z + 7) & M
    d = (((inner & 0xFFFF) + 5) + inner) & M                 # the inner 'a' until its block closes
    d = np.where(t < 32, (d + x) & M, (d - x) & M)          # the outer 'a' again
    np.testing.assert_array_equal(got, d.astype(np.uint32))

