"""Errors for PTX rules that hardware is known or reported to tolerate carry a hardware note with the evidence and
where it is documented (ptxlab/emu/checks/hwknown.py); the error itself stays."""
import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

SRC = r'''
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
extern "C" __global__ void quarter(unsigned* out) {
  __shared__ unsigned taddr_s;
  unsigned w = threadIdx.x / 32;
  if (w == 0) asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" :: "r"(sa(&taddr_s)) : "memory");
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  unsigned taddr = taddr_s;
  unsigned x = threadIdx.x * 7u + 1u;
  asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};" :: "r"(taddr + ((w * 32u) << 16)), "r"(x) : "memory");
  asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
  unsigned v;
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];" : "=r"(v) : "r"(taddr) : "memory");
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  out[threadIdx.x] = v;
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  if (w == 0) {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;" :: "r"(taddr) : "memory");
  }
}
extern "C" __global__ void commit32(unsigned* out) {
  __shared__ __align__(8) unsigned long long bar;
  unsigned b = sa(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%0];" :: "r"(b) : "memory");
    asm volatile("{\n\t.reg .pred p;\n\tWAIT_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n\t@!p bra WAIT_%=;\n\t}" :: "r"(b) : "memory");
    out[0] = 1u;
  }
}
'''


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_100a", name="hw.cu")


def test_warp_quarter_error_carries_the_hardware_note(mod):
    dev = ptxlab.open_device("emu")
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "quarter", grid=(1, 1, 1), block=(128, 1, 1), args=[dev.empty(512)])
    msg = str(ei.value)
    assert "[tmem:warp-quarter] tcgen05.ld by warp 1" in msg           # still the PTX-rule error
    assert "hardware note: hardware may tolerate this" in msg and "DeepGEMM" in msg
    assert "9.7.16.8.1" in msg and "ptx_docs/tcgen05.md" in msg and "hw.cu:15" in msg


def test_generic_commit_with_32_bit_shared_address_carries_the_note(mod):
    dev = ptxlab.open_device("emu")
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "commit32", grid=(1, 1, 1), block=(32, 1, 1), args=[dev.empty(512)])
    msg = str(ei.value)
    assert "tcgen05.commit: generic address" in msg and "hardware note:" in msg
    assert "32-bit shared::cta address" in msg and ".shared::cluster" in msg and "ptx_docs/emulator_checks.md" in msg


def test_other_errors_get_no_note():
    from ptxlab.emu.checks import hwknown
    assert hwknown.note_for("tcgen05.commit: generic address 0x7f0000001000 is not in the shared window") is None
    assert hwknown.note_for("out-of-bounds global store of 4 bytes") is None
