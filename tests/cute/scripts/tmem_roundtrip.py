"""CuTe DSL kernel of the project: registers -> TMEM (tcgen05.st.32x32b) -> registers (tcgen05.ld.32x32b).

128 threads own the 128 TMEM lanes; each stores its row of ``cols`` fp32 values from global memory into TMEM, waits
(tcgen05.wait::st), reads the row back (tcgen05.wait::ld) and writes it to a second buffer. Run under
``python lab.py exec tests/cute/scripts/tmem_roundtrip.py SEED COLS [--bug]``; exit 0 when the copy is bit-exact
(``--bug`` allocates too few TMEM columns, for the fault report test).
"""
import sys

import exact
import numpy as np

import cutlass
import cutlass.cute as cute
import cutlass.memory as memory
import ptxlab.driver as pd
from cutlass.cute.nvgpu import tcgen05
from cutlass.cute.runtime import from_dlpack

LANES = 128


@cute.struct
class Storage:
    tmem_addr: cutlass.Int32


@cute.kernel
def roundtrip_kernel(mma: cute.TiledMma, src: cute.Tensor, dst: cute.Tensor, tmem_layout: cute.Layout,
                     cols: cutlass.Constexpr, alloc_cols: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = memory.SmemAllocator()
    storage = smem.allocate(Storage)
    tmem = memory.TmemAllocator(storage.tmem_addr.ptr,
                                barrier_for_retrieve=cutlass.pipeline.NamedBarrier(barrier_id=1, num_threads=LANES))
    tmem.allocate(alloc_cols)
    tmem.wait_for_alloc()
    tTmem = cute.make_tensor(tmem.retrieve_ptr(cutlass.Float32), tmem_layout)

    st = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.St32x32bOp(tcgen05.Repetition(cols)), cutlass.Float32),
                                tTmem)
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition(cols)), cutlass.Float32),
                                tTmem)
    st_thr, ld_thr = st.get_slice(tidx), ld.get_slice(tidx)
    part = mma.get_slice(0)           # global tensors viewed in the accumulator's (MMA, MMA_M, MMA_N) shape
    g_in = st_thr.partition_S(part.partition_C(src))
    r_in = cute.make_rmem_tensor(g_in.shape, cutlass.Float32)
    cute.autovec_copy(g_in, r_in)
    cute.copy(st, r_in, st_thr.partition_D(tTmem))
    cute.arch.fence_view_async_tmem_op("store")
    cute.arch.sync_threads()
    g_out = ld_thr.partition_D(part.partition_C(dst))
    r_out = cute.make_rmem_tensor(g_out.shape, cutlass.Float32)
    cute.copy(ld, ld_thr.partition_S(tTmem), r_out)
    cute.arch.fence_view_async_tmem_op("load")
    cute.autovec_copy(r_out, g_out)
    cute.arch.sync_threads()
    tmem.relinquish_alloc_permit()
    tmem.free(tmem.retrieve_ptr(cutlass.Float32))


@cute.jit
def roundtrip(src: cute.Tensor, dst: cute.Tensor, cols: cutlass.Constexpr, alloc_cols: cutlass.Constexpr):
    # the accumulator layout of a 128 x cols MMA is the TMEM layout of 128 lanes x cols fp32 columns
    mma = cute.make_tiled_mma(tcgen05.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (LANES, cols, 16),
                                                   tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM,
                                                   cute.nvgpu.OperandMajorMode.K, cute.nvgpu.OperandMajorMode.K))
    acc = mma.make_fragment_C(mma.partition_shape_C((LANES, cols)))
    roundtrip_kernel(mma, src, dst, acc.layout, cols, alloc_cols).launch(grid=(1, 1, 1), block=(LANES, 1, 1))


def main(seed: int, cols: int, bug: bool) -> int:
    rng = np.random.default_rng(seed)
    host = rng.standard_normal((LANES, cols)).astype(np.float32)
    src, dst = pd.tensor(host), pd.empty((LANES, cols), np.float32)      # dst: poisoned by the emulator
    # --bug allocates half the columns the copies use: the emulator must stop at the tcgen05.st (the Python line)
    alloc = max(32, cols) // (2 if bug else 1)
    roundtrip(from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16), cols, alloc)
    return exact.report(dst.numpy(), host, f"tmem round trip: {LANES} x {cols} fp32 bit-exact")


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a != "--bug"]
    sys.exit(main(int(argv[0]) if argv else 1, int(argv[1]) if len(argv) > 1 else 32, "--bug" in sys.argv))
