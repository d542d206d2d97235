"""Emulator reports name the CUDA source line by default, for modules compiled without -lineinfo
(ptxlab/emu/checks/lineinfo.py); the compiled PTX itself is unchanged."""
import numpy as np
import pytest

import ptxlab
from ptxlab.emu.checks import lineinfo
from ptxlab.emu.checks.sitewarn import EmuWarning
from ptxlab.errors import EmuError

OOB = r'''
extern "C" __global__ void oobl(unsigned* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned v = i * 7u + n;
  y[i] = v;                 // line 5: writes past n when the grid is larger than the buffer
}'''

DEADLOCK = r'''
extern "C" __global__ void dll(unsigned* y) {
  if (threadIdx.x < 64) { asm volatile("bar.sync 1, 128;"); }
  else                  { asm volatile("bar.sync 2, 128;"); }
  y[threadIdx.x] = threadIdx.x;
}'''

EARLY = r'''
extern "C" __global__ void earlyl(unsigned* y, unsigned n) {
  __shared__ unsigned s[128];
  if (threadIdx.x >= n) return;
  s[threadIdx.x] = threadIdx.x * 5u;
  __syncthreads();
  y[threadIdx.x] = s[n - 1u - threadIdx.x];
}'''


def test_fault_report_names_cuda_line_without_lineinfo(rng):
    mod = ptxlab.compile(OOB, arch="sm_90a", name="oobl.cu")
    assert "-lineinfo" not in mod.options and ".loc" not in mod.ptx      # the PTX is what NVRTC gives by default
    dev = ptxlab.open_device("emu")
    n = int(rng.integers(100, 200))
    y = dev.empty(4 * n)
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "oobl", grid=(2, 1, 1), block=(128, 1, 1), args=[y, np.uint32(n)])
    e = ei.value
    assert "out-of-bounds global store" in str(e)
    assert e.src_loc is not None and e.src_loc.endswith("oobl.cu:5"), e.src_loc
    assert "source : " in str(e) and "oobl.cu:5" in str(e)


def test_deadlock_report_lines_name_cuda_lines():
    mod = ptxlab.compile(DEADLOCK, arch="sm_90a", name="dll.cu")
    dev = ptxlab.open_device("emu")
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "dll", grid=(1, 1, 1), block=(128, 1, 1), args=[dev.empty(4 * 128)])
    msg = str(ei.value)
    assert "bar.sync 1, 128" in msg and "dll.cu:3]" in msg and "dll.cu:4]" in msg


def test_warning_names_cuda_line_without_lineinfo(rng):
    mod = ptxlab.compile(EARLY, arch="sm_90a", name="earlyl.cu")
    dev = ptxlab.open_device("emu", strict=False)
    n = int(rng.integers(33, 120))
    y = dev.empty(4 * 128)
    with pytest.warns(EmuWarning) as rec:
        dev.launch(mod, "earlyl", grid=(1, 1, 1), block=(128, 1, 1), args=[y, np.uint32(n)])
    assert "earlyl.cu:6]" in str(rec[0].message)
    assert (dev.to_host(y, np.uint32)[:n] == (np.arange(n, dtype=np.uint32) * 5)[::-1]).all()


def test_map_aligns_instructions_of_both_builds():
    mod = ptxlab.compile(OOB, arch="sm_90a", name="oobl.cu")
    li = ptxlab.compile(OOB, arch="sm_90a", name="oobl.cu", options=("-lineinfo",))
    lmap = lineinfo.build_map(mod.ptx, li.ptx)
    lines = mod.ptx.splitlines()
    st = [i for i, ln in enumerate(lines, 1) if "st.global" in ln]
    assert st and all(lmap[i][1] == 5 and lmap[i][0].endswith("oobl.cu") for i in st)
    # instructions only: directives and braces get no line
    assert all(lines[i - 1].strip() and not lines[i - 1].strip().startswith(".loc") for i in lmap)
    # with -lineinfo already present nothing is recompiled: the module's own .loc is used
    assert lineinfo.line_map(li) == {}
