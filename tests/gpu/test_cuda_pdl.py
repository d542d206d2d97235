"""Programmatic dependent launch on the cuda backend: dev.launch(..., pdl=True) sets
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (cuLaunchKernelEx); the dependent's griddepcontrol.wait
orders its reads after the primary grid's writes, and ld/st .b128 run on the GPU as on the emulator."""
from __future__ import annotations

import numpy as np

import ptxlab

SRC = r'''
extern "C" __global__ void primary(unsigned* buf, unsigned salt) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[i] = 3 * i + salt;
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
extern "C" __global__ void dependent(const unsigned* buf, unsigned* out) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    // 128-bit copy of 4 words through a .b128 register (ld.global.b128 / st.global.b128)
    if ((i & 3) == 0)
        asm volatile("{\n\t.reg .b128 q;\n\tld.global.b128 q, [%1];\n\tst.global.b128 [%0], q;\n\t}"
                     :: "l"(out + i), "l"(buf + i) : "memory");
}
'''


def test_pdl_launch_orders_dependent_after_primary(cuda_dev) -> None:
    mod = ptxlab.compile(SRC, arch=f"sm_{cuda_dev.cc[0]}{cuda_dev.cc[1]}", name="pdl.cu")
    for dev in (cuda_dev, ptxlab.open_device("emu")):
        n = 8 * 128
        salt = int(np.random.default_rng().integers(1, 1 << 20))
        buf, out = dev.empty(4 * n), dev.empty(4 * n)
        dev.memset(out, 0xFF)
        dev.launch(mod, "primary", grid=8, block=128, args=[buf, np.uint32(salt)])
        dev.launch(mod, "dependent", grid=8, block=128, args=[buf, out], pdl=True)
        np.testing.assert_array_equal(dev.to_host(out, np.uint32), 3 * np.arange(n, dtype=np.uint32) + salt)
