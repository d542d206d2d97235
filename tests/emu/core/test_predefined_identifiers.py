"""Predefined identifiers (PTX ISA 4.5.1): WARP_SZ is the warp size (32) wherever an immediate operand may stand
(NVIDIA's reduction sample compiles to PTX that uses it)."""
from __future__ import annotations

import numpy as np

import ptxlab

PTX = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 x) {
  .reg .b32 %r<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd0, [out];
  ld.param.u32 %r0, [x];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, WARP_SZ;
  rem.u32 %r3, %r0, WARP_SZ;
  mad.lo.u32 %r4, %r1, WARP_SZ, %r3;
  mul.wide.u32 %rd1, %r1, 16;
  add.s64 %rd2, %rd0, %rd1;
  st.global.v2.u32 [%rd2], {%r2, %r3};
  st.global.u32 [%rd2+8], %r4;
  ret;
}
"""


def test_warp_sz_is_32(rng) -> None:
    dev = ptxlab.open_device("emu")
    mod = ptxlab.compile(PTX, arch="sm_90a")
    x = int(rng.integers(1, 2**32, dtype=np.uint64))
    out = dev.empty(64 * 16)
    dev.memset(out, 0xFF)
    dev.launch(mod, "k", grid=(1, 1, 1), block=(64, 1, 1), args=[out, np.uint32(x)])
    got = dev.to_host(out, np.uint32).reshape(64, 4)
    t = np.arange(64, dtype=np.uint32)
    np.testing.assert_array_equal(got[:, 0], 32)
    np.testing.assert_array_equal(got[:, 1], x % 32)
    np.testing.assert_array_equal(got[:, 2], t * 32 + x % 32)
