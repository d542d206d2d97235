"""CuTe DSL kernel of the project: a 1-CTA tcgen05 GEMM, D (fp32, M x N) = A (fp16, M x K) * B^T (fp16, N x K).

One CTA of 128 threads per 128 x 128 output tile: warp 0 issues the TMA loads of a 2-stage ring and the
``tcgen05.mma.cta_group::1.kind::f16`` instructions (128 x 128 x 16) into a TMEM accumulator; all four warps then
read their 32 lanes back (``tcgen05.ld.32x32b``) and store fp32 to global memory. Inputs are small integers, so the
fp32 result is exact: ``python lab.py exec tests/cute/scripts/gemm_1cta.py SEED M N K`` exits 0 when D is bit-exact.
"""
import sys

import exact
import numpy as np

import cutlass
import cutlass.cute as cute
import cutlass.memory as memory
import cutlass.pipeline as pipeline
import cutlass.utils.blackwell_helpers as sm100
import ptxlab.driver as pd
from cutlass.cute.nvgpu import cpasync, tcgen05
from cutlass.cute.runtime import from_dlpack
from tmem_epilogue import store_fp32_accumulator

TILE = (128, 128, 64)           # CTA tile M, N, K
INST = (128, 128, 16)           # one tcgen05.mma
STAGES = 2
THREADS = 128


@cute.struct
class Shared:
    load_bar: cute.struct.MemRange[cutlass.Int64, STAGES * 2]
    acc_bar: cute.struct.MemRange[cutlass.Int64, 2]
    tmem_addr: cutlass.Int32


@cute.kernel
def gemm_kernel(mma: cute.TiledMma, tma_a: cute.CopyAtom, gA_tma: cute.Tensor, tma_b: cute.CopyAtom,
                gB_tma: cute.Tensor, mD: cute.Tensor, sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    tile_m, tile_n, _ = cute.arch.block_idx()
    coord = (tile_m, tile_n, None)

    alloc = memory.SmemAllocator()
    shared = alloc.allocate(Shared)
    sA = alloc.allocate_tensor(cutlass.Float16, sA_layout.outer, byte_alignment=128, swizzle=sA_layout.inner)
    sB = alloc.allocate_tensor(cutlass.Float16, sB_layout.outer, byte_alignment=128, swizzle=sB_layout.inner)
    tmem = memory.TmemAllocator(shared.tmem_addr.ptr,
                                barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=THREADS))
    tmem.allocate(128)

    stage_bytes = cute.size_in_bytes(cutlass.Float16, cute.select(sA_layout, mode=[0, 1, 2])) + \
        cute.size_in_bytes(cutlass.Float16, cute.select(sB_layout, mode=[0, 1, 2]))
    loads, ready = pipeline.PipelineTmaUmma.create(
        num_stages=STAGES, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread), tx_count=stage_bytes,
        barrier_storage=shared.load_bar.data_ptr()).make_participants()
    acc_empty, acc_full = pipeline.PipelineUmmaAsync.create(
        num_stages=1, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, THREADS),
        barrier_storage=shared.acc_bar.data_ptr()).make_participants()

    gA = cute.local_tile(gA_tma, TILE, coord, proj=(1, None, 1))        # (128, 64, k tiles)
    gB = cute.local_tile(gB_tma, TILE, coord, proj=(None, 1, 1))
    gD = cute.local_tile(mD, TILE, coord, proj=(1, 1, None))            # (128, 128)
    part = mma.get_slice(0)
    tCgA, tCgB, tCgD = part.partition_A(gA), part.partition_B(gB), part.partition_C(gD)
    frA, frB = mma.make_fragment_A(sA), mma.make_fragment_B(sB)
    acc = mma.make_fragment_C(mma.partition_shape_C(TILE[:2]))
    tAsA, tAgA = cpasync.tma_partition(tma_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 3),
                                       cute.group_modes(tCgA, 0, 3))
    tBsB, tBgB = cpasync.tma_partition(tma_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 3),
                                       cute.group_modes(tCgB, 0, 3))
    tmem.wait_for_alloc()
    acc = cute.make_tensor(tmem.retrieve_ptr(cutlass.Float32), acc.layout)

    if warp == 0:
        slot = acc_empty.acquire_and_advance()
        for kt in cutlass.range(cute.size(gA, mode=[2])):
            free = loads.acquire_and_advance()
            cute.copy(tma_a, tAgA[(None, free.count)], tAsA[(None, free.index)], tma_bar_ptr=free.barrier)
            cute.copy(tma_b, tBgB[(None, free.count)], tBsB[(None, free.index)], tma_bar_ptr=free.barrier)
            full = ready.wait_and_advance()
            for kb in cutlass.range_constexpr(cute.size(frA, mode=[2])):
                cute.gemm(mma, acc, frA[(None, None, kb, full.index)], frB[(None, None, kb, full.index)], acc)
                mma.set(tcgen05.Field.ACCUMULATE, True)
            full.release()
        slot.commit()
    tmem.relinquish_alloc_permit()

    done = acc_full.wait_and_advance()
    store_fp32_accumulator(acc, tCgD, tidx)
    done.release()
    pipeline.sync(barrier_id=1)
    tmem.free(acc.iterator)


@cute.jit
def gemm(a: cute.Tensor, b: cute.Tensor, d: cute.Tensor):
    mma = cute.make_tiled_mma(tcgen05.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, INST, tcgen05.CtaGroup.ONE,
                                                   tcgen05.OperandSource.SMEM, cute.nvgpu.OperandMajorMode.K,
                                                   cute.nvgpu.OperandMajorMode.K))
    sA = sm100.make_smem_layout_a(mma, TILE, cutlass.Float16, STAGES)
    sB = sm100.make_smem_layout_b(mma, TILE, cutlass.Float16, STAGES)
    op = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE)
    tma_a, gA = cute.nvgpu.make_tiled_tma_atom_A(op, a, cute.select(sA, mode=[0, 1, 2]), TILE, mma)
    tma_b, gB = cute.nvgpu.make_tiled_tma_atom_B(op, b, cute.select(sB, mode=[0, 1, 2]), TILE, mma)
    grid = cute.ceil_div((*d.layout.shape, 1), TILE[:2])
    gemm_kernel(mma, tma_a, gA, tma_b, gB, d, sA, sB).launch(grid=grid, block=(THREADS, 1, 1))


def main(seed: int, m: int, n: int, k: int) -> int:
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, (m, k)).astype(np.float16)
    B = rng.integers(-3, 4, (n, k)).astype(np.float16)
    a, b, d = pd.tensor(A), pd.tensor(B), pd.empty((m, n), np.float32)
    dyn = lambda t, div: from_dlpack(t, assumed_align=32).mark_layout_dynamic(leading_dim=1) \
        .mark_compact_shape_dynamic(mode=1, divisibility=div)  # noqa: E731
    gemm(dyn(a, k), dyn(b, k), dyn(d, n))
    want = A.astype(np.float64) @ B.astype(np.float64).T
    return exact.report(d.numpy(), want.astype(np.float32), f"gemm {m}x{n}x{k}: fp32 result bit-exact")


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:]] + [1, 128, 128, 128][len(sys.argv) - 1:]
    sys.exit(main(*args[:4]))
