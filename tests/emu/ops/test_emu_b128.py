"""ld/st .b128 (PTX ISA 9.7.9.8 / 9.7.9.10, type .b128: PTX 8.3, sm_70+) and mov.b128 pack/unpack (9.7.9.1) on the
emulator: shared, global and generic addresses, byte-exact; misalignment is reported."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

SRC = r'''
typedef unsigned long long u64;
__device__ __forceinline__ void ld_g(const void* p, u64& lo, u64& hi) {
    asm volatile("{\n\t.reg .b128 q;\n\tld.global.b128 q, [%2];\n\tmov.b128 {%0, %1}, q;\n\t}"
                 : "=l"(lo), "=l"(hi) : "l"(p) : "memory");
}
__device__ __forceinline__ void st_s(unsigned a, u64 lo, u64 hi) {
    asm volatile("{\n\t.reg .b128 q;\n\tmov.b128 q, {%1, %2};\n\tst.shared.b128 [%0], q;\n\t}"
                 :: "r"(a), "l"(lo), "l"(hi) : "memory");
}
// shared -> generic: ld.shared.b128 into a b128 register, stored with a generic st.b128 (no unpacking)
__device__ __forceinline__ void copy_s_to_generic(void* dst, unsigned a) {
    asm volatile("{\n\t.reg .b128 q;\n\tld.shared::cta.b128 q, [%1];\n\tst.b128 [%0], q;\n\t}"
                 :: "l"(dst), "r"(a) : "memory");
}
// generic load -> global store
__device__ __forceinline__ void copy_generic_to_g(void* dst, const void* src) {
    asm volatile("{\n\t.reg .b128 q;\n\tld.b128 q, [%1];\n\tst.global.b128 [%0], q;\n\t}"
                 :: "l"(dst), "l"(src) : "memory");
}
extern "C" __global__ void roundtrip(const u64* in, u64* mid, u64* out, unsigned n, unsigned rot) {
    __shared__ __align__(16) u64 s[2 * 256];
    unsigned t = threadIdx.x;
    unsigned base = (unsigned)__cvta_generic_to_shared(s);
    if (t < n) {
        u64 lo, hi;
        ld_g(in + 2 * t, lo, hi);
        st_s(base + 16 * ((t + rot) % n), lo, hi);
    }
    __syncthreads();
    if (t < n) copy_s_to_generic(mid + 2 * t, base + 16 * t);
    __syncthreads();
    if (t < n) copy_generic_to_g(out + 2 * t, mid + 2 * t);
}
extern "C" __global__ void misaligned(const u64* in, u64* out) {
    u64 lo, hi;
    ld_g((const char*)in + 8, lo, hi);
    out[0] = lo ^ hi;
}
'''


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_90a", name="b128.cu")


def test_b128_in_ptx(mod) -> None:
    for op in ("ld.global.b128", "st.shared.b128", "ld.shared::cta.b128", "st.b128", "ld.b128", "st.global.b128",
               "mov.b128"):
        assert op in mod.ptx, op


def test_b128_roundtrip_is_byte_exact(mod, rng) -> None:
    dev = ptxlab.open_device("emu")
    n = int(rng.integers(33, 97))
    rot = int(rng.integers(1, n))
    data = rng.integers(0, 2**63, size=2 * n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, 2 * n).astype(
        np.uint64)
    x = dev.to_device(data)
    mid, out = dev.empty(16 * n), dev.empty(16 * n)
    dev.memset(mid, 0xEE)
    dev.memset(out, 0xEE)
    dev.launch(mod, "roundtrip", grid=1, block=128, args=[x, mid, out, np.uint32(n), np.uint32(rot)])
    want = data.reshape(n, 2)[(np.arange(n) - rot) % n].reshape(-1)   # shared slot (t+rot)%n holds element t
    np.testing.assert_array_equal(dev.to_host(mid, np.uint64), want)
    np.testing.assert_array_equal(dev.to_host(out, np.uint64), want)


def test_b128_misaligned_is_reported(mod) -> None:
    dev = ptxlab.open_device("emu")
    x = dev.to_device(np.arange(8, dtype=np.uint64))
    y = dev.empty(8)
    with pytest.raises(EmuError, match="misaligned 16-byte load"):
        dev.launch(mod, "misaligned", grid=1, block=1, args=[x, y])
