"""Every special register the emulator implements (PTX ISA 10), read in one kernel and checked: the launch geometry
ones exactly (%tid, %ntid, %ctaid, %nctaid, %laneid, %lanemask_*, %dynamic_smem_size), the implementation-defined ones
by the properties the ISA gives (%warpid < %nwarpid, %smid < %nsmid, %clock / %clock_hi the halves of a
non-decreasing %clock64, %globaltimer_lo / _hi the halves of a non-decreasing %globaltimer, %total_smem_size and
%aggr_smem_size at least the static + dynamic shared memory).  The cluster registers: tests/emu/ops/
test_emu_cluster_launch.py.  The others (%pm*, %envreg*, %reserved_smem_offset_*, %current_graph_exec) are refused
when read (test below)."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import EmuError

GEO = ["tid.x", "tid.y", "tid.z", "ntid.x", "ntid.y", "ntid.z", "ctaid.x", "ctaid.y", "ctaid.z", "nctaid.x",
       "nctaid.y", "nctaid.z", "laneid", "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge", "lanemask_gt",
       "dynamic_smem_size", "warpid", "nwarpid", "smid", "nsmid", "total_smem_size", "aggr_smem_size", "clock",
       "clock_hi", "globaltimer_lo", "globaltimer_hi"]
WIDE = ["gridid", "clock64", "globaltimer"]
STATIC = 4 * 24 * 3                         # one shared word per thread of the block
B64 = (4 * len(GEO) + 7) // 8 * 8          # the 64-bit values start 8-byte aligned
REC = B64 + 8 * (len(WIDE) + 2)            # bytes per thread


def _ptx():
    lines = []
    for i, r in enumerate(GEO):
        lines += [f"  mov.u32 %r1, %{r};", f"  st.global.u32 [%rd3+{4 * i}], %r1;"]
    for i, r in enumerate(WIDE):
        lines += [f"  mov.u64 %rd5, %{r};", f"  st.global.u64 [%rd3+{B64 + 8 * i}], %rd5;"]
    # read %clock64 / %globaltimer again after some work: non-decreasing
    # (each thread its own shared word: one word for all threads would be a data race, which racecheck reports)
    lines += ["  mov.u32 %r0, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %ntid.x; mad.lo.u32 %r0, %r2, %r3, %r0;",
              "  shl.b32 %r0, %r0, 2; mov.u32 %r3, sm; add.u32 %r0, %r0, %r3;",
              "  st.shared.u32 [%r0], %r1; ld.shared.u32 %r2, [%r0]; add.u32 %r2, %r2, 1;",
              "  mov.u64 %rd5, %clock64;", f"  st.global.u64 [%rd3+{B64 + 8 * len(WIDE)}], %rd5;",
              "  mov.u64 %rd5, %globaltimer;", f"  st.global.u64 [%rd3+{B64 + 8 * len(WIDE) + 8}], %rd5;"]
    return "\n".join([".version 8.8", ".target sm_90a", ".address_size 64",
                      ".visible .entry k(.param .u64 out)", "{", "  .reg .b32 %r<4>; .reg .b64 %rd<8>;",
                      f"  .shared .align 16 .b8 sm[{STATIC}];",
                      "  ld.param.u64 %rd1, [out];",
                      "  mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %ntid.x; mad.lo.u32 %r1, %r2, %r3, %r1;",
                      "  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %nctaid.x; mov.u32 %r0, %ctaid.y;",
                      "  mad.lo.u32 %r2, %r0, %r3, %r2; mov.u32 %r3, %ntid.y; mov.u32 %r0, %ntid.x;",
                      "  mul.lo.u32 %r3, %r3, %r0; mad.lo.u32 %r1, %r2, %r3, %r1;",
                      f"  mul.wide.u32 %rd2, %r1, {REC}; add.s64 %rd3, %rd1, %rd2;"] + lines + ["  ret;", "}"]) + "\n"


def test_special_registers(rng) -> None:
    ptx = _ptx()
    grid, block = (3, 2, 1), (24, 3, 1)
    dyn = int(rng.integers(1, 64)) * 16
    nthreads = 3 * 2 * 24 * 3
    dev = ptxlab.open_device("emu")
    rec = REC
    out = dev.empty(nthreads * rec)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(ptx, arch="sm_90a"), "k", grid=grid, block=block, args=[out], shared_bytes=dyn)
    raw = dev.to_host(out, np.uint8).reshape(nthreads, rec)
    u32 = raw[:, :4 * len(GEO)].copy().view(np.uint32)
    u64 = raw[:, B64:].copy().view(np.uint64)
    col = {r: u32[:, i].astype(np.int64) for i, r in enumerate(GEO)}
    w = {r: u64[:, i] for i, r in enumerate(WIDE + ["clock64_2", "globaltimer_2"])}
    idx = np.arange(nthreads)
    per_cta = block[0] * block[1]
    cta, lin = idx // per_cta, idx % per_cta
    exp = {"tid.x": lin % block[0], "tid.y": lin // block[0], "tid.z": 0, "ntid.x": block[0], "ntid.y": block[1],
           "ntid.z": 1, "ctaid.x": cta % grid[0], "ctaid.y": cta // grid[0], "ctaid.z": 0, "nctaid.x": grid[0],
           "nctaid.y": grid[1], "nctaid.z": 1, "laneid": lin % 32, "dynamic_smem_size": dyn}
    lane = (lin % 32).astype(np.int64)
    exp.update({"lanemask_eq": 1 << lane, "lanemask_lt": (1 << lane) - 1, "lanemask_le": (2 << lane) - 1,
                "lanemask_gt": 0xFFFFFFFF ^ ((2 << lane) - 1), "lanemask_ge": 0xFFFFFFFF ^ ((1 << lane) - 1)})
    for r, e in exp.items():
        np.testing.assert_array_equal(col[r], np.broadcast_to(e, (nthreads,)), err_msg=r)
    assert (col["warpid"] < col["nwarpid"]).all() and (col["smid"] < col["nsmid"]).all()
    assert (col["total_smem_size"] >= STATIC + dyn).all() and (col["aggr_smem_size"] >= STATIC + dyn).all()
    assert (w["clock64_2"] >= w["clock64"]).all() and (w["globaltimer_2"] >= w["globaltimer"]).all()
    # %clock / %clock_hi and %globaltimer_lo / _hi were read before the 64-bit ones: halves of a value <= them
    c = (col["clock_hi"].astype(np.uint64) << np.uint64(32)) | col["clock"].astype(np.uint64)
    g = (col["globaltimer_hi"].astype(np.uint64) << np.uint64(32)) | col["globaltimer_lo"].astype(np.uint64)
    assert (c <= w["clock64"]).all() and (g <= w["globaltimer"] + np.uint64(2**32)).all()


@pytest.mark.parametrize("reg", ["pm0", "pm3_64", "envreg5", "reserved_smem_offset_begin", "current_graph_exec"])
def test_unimplemented_special_registers_are_refused(reg) -> None:
    ptx = (".version 8.8\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 out) {\n"
           " .reg .b64 %rd<3>;\n ld.param.u64 %rd1, [out];\n"
           f" mov.u64 %rd2, %{reg};\n st.global.u64 [%rd1], %rd2;\n ret;\n}}\n")
    if reg in ("pm0", "envreg5", "reserved_smem_offset_begin"):
        ptx = ptx.replace(".reg .b64 %rd<3>;", ".reg .b64 %rd<3>; .reg .b32 %r<2>;").replace(
            f"mov.u64 %rd2, %{reg};", f"mov.u32 %r1, %{reg}; cvt.u64.u32 %rd2, %r1;")
    dev = ptxlab.open_device("emu")
    with pytest.raises(EmuError, match=f"%{reg}"):
        dev.launch(ptxlab.compile(ptx, arch="sm_90a"), "k", grid=(1, 1, 1), block=(32, 1, 1), args=[dev.empty(8)])
