"""Emulator diagnostics: every fault is one clear report naming kernel, PTX line, CUDA line, block and thread."""
import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

OOB = r'''
extern "C" __global__ void oob(unsigned* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = i * 7u;            // writes past n when the grid is larger than the buffer
}'''

DEADLOCK = r'''
extern "C" __global__ void dl(unsigned* y) {
  if (threadIdx.x < 64) { asm volatile("bar.sync 1, 128;"); }
  else                  { asm volatile("bar.sync 2, 128;"); }
  y[threadIdx.x] = threadIdx.x;
}'''

SPIN = r'''
extern "C" __global__ void spin(volatile unsigned* flag, unsigned* y) {
  while (flag[0] == 0u) { }
  y[threadIdx.x] = 1u;
}'''

MISALIGNED = r'''
extern "C" __global__ void mis(const unsigned char* x, unsigned* y, unsigned off) {
  y[threadIdx.x] = *(const unsigned*)(x + off + 4u * threadIdx.x);
}'''


@pytest.fixture(scope="module")
def dev():
    return ptxlab.open_device("emu")


def test_out_of_bounds_store_names_line_thread_and_allocation(dev, rng):
    mod = ptxlab.compile(OOB, arch="sm_90a", name="oob.cu", options=("-lineinfo",))
    n = int(rng.integers(100, 200))
    y = dev.empty(4 * n)
    dev.memset(y, 0xFF)
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "oob", grid=(2, 1, 1), block=(128, 1, 1), args=[y, np.uint32(n)])
    msg = str(ei.value)
    assert "out-of-bounds global store of 4 bytes" in msg
    assert "kernel : oob" in msg and "ptx    : line" in msg and "st.global" in msg
    assert "oob.cu:4" in msg                        # the CUDA source line, from .loc
    # the first faulting thread is global index n (4-byte elements, buffer of n elements)
    blk, thr = divmod(n, 128)
    assert f"block  : ({blk}, 0, 0)" in msg and f"thread : ({thr}, 0, 0)" in msg
    assert "bytes past the end of" in msg
    # the same kernel on a big enough buffer runs clean and writes every element
    y2 = dev.empty(4 * 256)
    dev.memset(y2, 0xFF)
    dev.launch(mod, "oob", grid=(2, 1, 1), block=(128, 1, 1), args=[y2, np.uint32(256)])
    assert (dev.to_host(y2, np.uint32) == np.arange(256, dtype=np.uint32) * 7).all()


def test_misaligned_load_reports_rule(dev, rng):
    mod = ptxlab.compile(MISALIGNED, arch="sm_90a", name="mis.cu")
    x = dev.to_device(rng.integers(1, 255, 4096, dtype=np.uint8))
    y = dev.empty(4 * 32)
    dev.launch(mod, "mis", grid=(1, 1, 1), block=(32, 1, 1), args=[x, y, np.uint32(8)])   # aligned: fine
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "mis", grid=(1, 1, 1), block=(32, 1, 1), args=[x, y, np.uint32(2)])
    assert "misaligned 4-byte load" in str(ei.value) and "naturally aligned" in str(ei.value)


def test_barrier_deadlock_report_names_waiting_warps(dev):
    mod = ptxlab.compile(DEADLOCK, arch="sm_90a", name="dl.cu")
    y = dev.empty(4 * 128)
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "dl", grid=(1, 1, 1), block=(128, 1, 1), args=[y])
    msg = str(ei.value)
    assert msg.count("deadlock") >= 1
    assert "warp 0: 32 threads waiting at a CTA barrier" in msg and "bar.sync 1, 128" in msg
    assert "warp 3: 32 threads waiting at a CTA barrier" in msg and "bar.sync 2, 128" in msg


def test_runaway_loop_hits_the_watchdog(dev):
    mod = ptxlab.compile(SPIN, arch="sm_90a", name="spin.cu")
    small = ptxlab.open_device("emu", budget=200_000)
    flag = small.to_device(np.zeros(4, np.uint32))
    y = small.empty(4 * 32)
    with pytest.raises(EmuError) as ei:
        small.launch(mod, "spin", grid=(1, 1, 1), block=(32, 1, 1), args=[flag, y])
    msg = str(ei.value)
    assert "instruction budget exceeded" in msg and "PTXLAB_EMU_BUDGET" in msg and "ld.volatile.global" in msg
    flag2 = small.to_device(np.ones(4, np.uint32))
    small.memset(y, 0)
    small.launch(mod, "spin", grid=(1, 1, 1), block=(32, 1, 1), args=[flag2, y])
    assert (small.to_host(y, np.uint32) == 1).all()


def test_unimplemented_instruction_names_line(dev):
    src = r'''extern "C" __global__ void u(unsigned* y) { unsigned r;
      asm volatile("{ .reg .b16 h; mov.b16 h, 0x3C00; ex2.approx.f16 h, h; }"); r = threadIdx.x; y[threadIdx.x] = r; }'''
    mod = ptxlab.compile(src, arch="sm_90a", name="u.cu")
    y = dev.empty(4 * 32)
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "u", grid=(1, 1, 1), block=(32, 1, 1), args=[y])
    assert "ex2.approx.f16" in str(ei.value) and "not implemented" in str(ei.value)


def test_pointer_param_after_u32_is_8_byte_aligned(dev, rng):
    """'.param .u64 .ptr .align 1 p' declares the pointee's alignment; the param itself is 8-byte aligned."""
    ptx = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry pp(.param .u32 pp_param_0, .param .u64 .ptr .align 1 pp_param_1)
{
  .reg .b32 %r<4>; .reg .b64 %rd<5>;
  ld.param.u32 %r1, [pp_param_0];
  ld.param.u64 %rd1, [pp_param_1];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r2, %tid.x;
  add.s32 %r3, %r1, %r2;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r3;
  ret;
}
"""
    mod = ptxlab.compile(ptx, arch="sm_90a", name="pp.ptx")
    n = int(rng.integers(1, 1 << 30))
    y = dev.empty(4 * 32)
    dev.memset(y, 0xFF)
    dev.launch(mod, "pp", grid=1, block=32, args=[np.uint32(n), y])
    assert (dev.to_host(y, np.uint32) == n + np.arange(32, dtype=np.uint32)).all()


def test_labels_are_local_to_their_block(dev, rng):
    """Two inline-asm blocks may declare the same label (PTX labels are block-scoped): each branch goes to its own."""
    src = r'''extern "C" __global__ void lab(const unsigned* x, unsigned* y) {
      unsigned a = x[threadIdx.x], r1, r2;
      asm volatile("{ .reg .pred p; mov.u32 %0, 0;\n L: add.u32 %0, %0, 1; setp.lt.u32 p, %0, %1; @p bra L; }"
                   : "=r"(r1) : "r"(a & 7u));
      asm volatile("{ .reg .pred p; mov.u32 %0, 100;\n L: add.u32 %0, %0, 3; setp.lt.u32 p, %0, %1; @p bra L; }"
                   : "=r"(r2) : "r"(100u + (a >> 3)));
      y[threadIdx.x] = r1 * 1000u + r2; }'''
    mod = ptxlab.compile(src, arch="sm_90a", name="lab.cu")
    x = rng.integers(1, 200, 64, dtype=np.uint32)
    y = dev.empty(4 * 64)
    dev.memset(y, 0xFF)
    dev.launch(mod, "lab", grid=1, block=64, args=[dev.to_device(x), y])
    xi = x.astype(np.int64)
    r1 = np.maximum(xi & 7, 1)                                  # do-while: at least one increment
    n2 = np.maximum(-(-(xi >> 3) // 3), 1)                      # ceil((a>>3)/3) steps of 3, at least one
    assert (dev.to_host(y, np.uint32) == r1 * 1000 + 100 + 3 * n2).all()


def test_operands_may_follow_the_opcode_without_a_blank(dev, rng):
    """CuTe writes 'ld.global.b32{%r1},[%r2]'-style operands with no blank after the opcode."""
    src = r'''extern "C" __global__ void nb(const unsigned* x, unsigned* y) {
      unsigned v, w; asm volatile("ld.global.v2.u32{%0,%1},[%2];" : "=r"(v), "=r"(w) : "l"(x + 2 * threadIdx.x));
      asm volatile("st.global.u32[%0],%1;" :: "l"(y + threadIdx.x), "r"(v ^ w)); }'''
    mod = ptxlab.compile(src, arch="sm_90a", name="nb.cu")
    x = rng.integers(1, 1 << 31, 64, dtype=np.uint32)
    y = dev.empty(4 * 32)
    dev.memset(y, 0xFF)
    dev.launch(mod, "nb", grid=1, block=32, args=[dev.to_device(x), y])
    assert (dev.to_host(y, np.uint32) == (x[0::2] ^ x[1::2])).all()


INIT = r'''
extern "C" __global__ void ini(unsigned* y, unsigned skip) {
  __shared__ unsigned s[128];
  if (threadIdx.x != skip) s[threadIdx.x] = threadIdx.x * 3u + 1u;
  __syncthreads();
  y[threadIdx.x] = s[127 - threadIdx.x];
}'''


def test_initcheck_reports_read_of_never_written_shared_memory(rng):
    mod = ptxlab.compile(INIT, arch="sm_90a", name="ini.cu")
    chk = ptxlab.open_device("emu", initcheck=True)
    y = chk.empty(4 * 128)
    chk.launch(mod, "ini", grid=1, block=128, args=[y, np.uint32(1000)])       # every slot written: clean
    assert (chk.to_host(y, np.uint32) == (127 - np.arange(128)) * 3 + 1).all()
    skip = int(rng.integers(0, 128))
    with pytest.raises(EmuError) as ei:
        chk.launch(mod, "ini", grid=1, block=128, args=[y, np.uint32(skip)])
    msg = str(ei.value)
    assert "read of never-written shared memory" in msg and f"thread : ({127 - skip}, 0, 0)" in msg
    plain = ptxlab.open_device("emu")                                            # off by default: no report
    plain.launch(mod, "ini", grid=1, block=128, args=[plain.empty(4 * 128), np.uint32(skip)])
