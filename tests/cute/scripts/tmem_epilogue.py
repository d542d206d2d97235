"""The epilogue shared by the project's CuTe DSL GEMM kernels (called inside their @cute.kernel, traced there)."""
import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import tcgen05


def store_fp32_accumulator(acc, gD, tidx):
    """TMEM accumulator -> registers (tcgen05.ld.32x32b.x32, then tcgen05.wait::ld) -> global fp32 (each thread one
    TMEM lane, i.e. one row of the 128-row tile)."""
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), cutlass.Float32),
                                acc)
    thr = ld.get_slice(tidx)
    dst = thr.partition_D(gD)
    regs = cute.make_rmem_tensor(dst.shape, cutlass.Float32)
    cute.copy(ld, thr.partition_S(acc), regs)
    cute.arch.fence_view_async_tmem_op("load")
    cute.autovec_copy(regs, dst)
