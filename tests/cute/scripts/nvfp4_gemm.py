"""CuTe DSL kernel of the project: a block-scaled NVFP4 GEMM, D (fp32, M x N) = sum_k A*SFA * B*SFB.

A (M x K) and B (N x K) are E2M1, K-major; their UE4M3 scale factors (one per 16 K-values) are stored in the
(32, 4, rest_mn, 4, rest_k) "atom" layout of the gpu-mode problems (ptxlab.scales). One CTA of 128 threads per
128 x 128 tile: warp 0 loads A, B, SFA, SFB of each 256-wide K tile with TMA into a 2-stage ring, copies the scales to
TMEM (``tcgen05.cp.cta_group::1.32x128b.warpx4``) and issues four ``tcgen05.mma...kind::mxf4nvf4.block_scale``;
the epilogue reads the fp32 accumulator back. Scales from {0.5, 1, 2} and K <= 1024 keep every partial sum exactly
representable, so D is compared bit for bit: ``python lab.py exec tests/cute/scripts/nvfp4_gemm.py SEED M N K``.
"""
import sys

import exact
import numpy as np

import cutlass
import cutlass.cute as cute
import cutlass.memory as memory
import cutlass.pipeline as pipeline
import cutlass.utils.blackwell_helpers as sm100
import cutlass.utils.blockscaled_layout as bsl
import ptxlab.driver as pd
from cutlass.cute.nvgpu import cpasync, tcgen05
from cutlass.cute.runtime import make_ptr
from ptxlab import numerics, scales
from tmem_epilogue import store_fp32_accumulator

TILE = (128, 128, 256)
INST_K = 64
SF_VEC = 16
STAGES = 2
THREADS = 128
AB, SF = cutlass.Float4E2M1FN, cutlass.Float8E4M3FN


@cute.struct
class Shared:
    load_bar: cute.struct.MemRange[cutlass.Int64, STAGES * 2]
    acc_bar: cute.struct.MemRange[cutlass.Int64, 2]
    tmem_addr: cutlass.Int32


def _s2t(sf_smem, sf_tmem):
    """tcgen05.cp of one operand's scale factors: (copy, staged SMEM source descriptors, TMEM destination)."""
    cp = tcgen05.make_s2t_copy(cute.make_copy_atom(tcgen05.Cp4x32x128bOp(tcgen05.CtaGroup.ONE), SF),
                               cute.filter_zeros(sf_tmem))
    thr = cp.get_slice(0)
    src = tcgen05.get_s2t_smem_desc_tensor(cp, thr.partition_S(cute.filter_zeros(sf_smem)))
    return cp, src, thr.partition_D(cute.filter_zeros(sf_tmem))


@cute.kernel
def nvfp4_kernel(mma: cute.TiledMma, tma_a: cute.CopyAtom, tA: cute.Tensor, tma_b: cute.CopyAtom, tB: cute.Tensor,
                 tma_sfa: cute.CopyAtom, tSFA: cute.Tensor, tma_sfb: cute.CopyAtom, tSFB: cute.Tensor,
                 mD: cute.Tensor, la: cute.ComposedLayout, lb: cute.ComposedLayout, lsfa: cute.Layout,
                 lsfb: cute.Layout, stage_bytes: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    bm, bn, _ = cute.arch.block_idx()

    alloc = memory.SmemAllocator()
    shared = alloc.allocate(Shared)
    sA = alloc.allocate_tensor(AB, la.outer, byte_alignment=128, swizzle=la.inner)
    sB = alloc.allocate_tensor(AB, lb.outer, byte_alignment=128, swizzle=lb.inner)
    sSFA = alloc.allocate_tensor(SF, lsfa, byte_alignment=128)
    sSFB = alloc.allocate_tensor(SF, lsfb, byte_alignment=128)
    tmem = memory.TmemAllocator(shared.tmem_addr.ptr,
                                barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=THREADS))
    tmem.allocate(512)

    loads, ready = pipeline.PipelineTmaUmma.create(
        num_stages=STAGES, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread), tx_count=stage_bytes,
        barrier_storage=shared.load_bar.data_ptr()).make_participants()
    acc_empty, acc_full = pipeline.PipelineUmmaAsync.create(
        num_stages=1, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, THREADS),
        barrier_storage=shared.acc_bar.data_ptr()).make_participants()

    tile_mk, tile_nk = cute.slice_(TILE, (None, 0, None)), cute.slice_(TILE, (0, None, None))
    part = mma.get_slice(0)
    gA = part.partition_A(cute.local_tile(tA, tile_mk, (bm, None, 0)))
    gB = part.partition_B(cute.local_tile(tB, tile_nk, (bn, None, 0)))
    gSFA = part.partition_A(cute.local_tile(tSFA, tile_mk, (bm, None, 0)))
    gSFB = part.partition_B(cute.local_tile(tSFB, tile_nk, (bn, None, 0)))
    gD = part.partition_C(cute.local_tile(mD, cute.slice_(TILE, (None, None, 0)), (bm, bn, 0)))

    def tma(atom, s, g):
        return cpasync.tma_partition(atom, 0, cute.make_layout(1), cute.group_modes(s, 0, 3),
                                     cute.group_modes(g, 0, 3))
    sA_t, gA_t = tma(tma_a, sA, gA)
    sB_t, gB_t = tma(tma_b, sB, gB)
    sSFA_t, gSFA_t = tma(tma_sfa, sSFA, gSFA)
    sSFB_t, gSFB_t = tma(tma_sfb, sSFB, gSFB)
    sSFA_t, gSFA_t, sSFB_t, gSFB_t = (cute.filter_zeros(x) for x in (sSFA_t, gSFA_t, sSFB_t, gSFB_t))

    frA, frB = mma.make_fragment_A(sA), mma.make_fragment_B(sB)
    acc = mma.make_fragment_C(mma.partition_shape_C(TILE[:2]))
    tmem.wait_for_alloc()
    base = tmem.retrieve_ptr(cutlass.Float32)
    acc = cute.make_tensor(base, acc.layout)
    col = tcgen05.find_tmem_tensor_col_offset(acc)
    tSFA_tmem = cute.make_tensor(cute.recast_ptr(base + col, dtype=SF),
                                 bsl.make_tmem_layout_sfa(mma, TILE, SF_VEC, cute.slice_(lsfa, (None, None, None, 0))))
    col = col + tcgen05.find_tmem_tensor_col_offset(tSFA_tmem)
    tSFB_tmem = cute.make_tensor(cute.recast_ptr(base + col, dtype=SF),
                                 bsl.make_tmem_layout_sfb(mma, TILE, SF_VEC, cute.slice_(lsfb, (None, None, None, 0))))
    cp_a, cp_a_src, cp_a_dst = _s2t(sSFA, tSFA_tmem)
    cp_b, cp_b_src, cp_b_dst = _s2t(sSFB, tSFB_tmem)

    if warp == 0:
        slot = acc_empty.acquire_and_advance()
        mma.set(tcgen05.Field.ACCUMULATE, False)
        for kt in cutlass.range(cute.size(gA_t, mode=[1])):
            free = loads.acquire_and_advance()
            for atom, g, s in ((tma_a, gA_t, sA_t), (tma_b, gB_t, sB_t), (tma_sfa, gSFA_t, sSFA_t),
                               (tma_sfb, gSFB_t, sSFB_t)):
                cute.copy(atom, g[(None, free.count)], s[(None, free.index)], tma_bar_ptr=free.barrier)
            full = ready.wait_and_advance()
            cute.copy(cp_a, cp_a_src[(None, None, None, None, full.index)], cp_a_dst)
            cute.copy(cp_b, cp_b_src[(None, None, None, None, full.index)], cp_b_dst)
            for kb in cutlass.range(cute.size(frA, mode=[2]), unroll_full=True):
                mma.set(tcgen05.Field.SFA, tSFA_tmem[(None, None, kb)].iterator)
                mma.set(tcgen05.Field.SFB, tSFB_tmem[(None, None, kb)].iterator)
                cute.gemm(mma, acc, frA[(None, None, kb, full.index)], frB[(None, None, kb, full.index)], acc)
                mma.set(tcgen05.Field.ACCUMULATE, True)
            full.release()
        slot.commit()
    tmem.relinquish_alloc_permit()

    done = acc_full.wait_and_advance()
    store_fp32_accumulator(acc, gD, tidx)
    done.release()
    pipeline.sync(barrier_id=1)
    tmem.free(base)


@cute.jit
def nvfp4_gemm(a_ptr: cute.Pointer, b_ptr: cute.Pointer, sfa_ptr: cute.Pointer, sfb_ptr: cute.Pointer,
               d_ptr: cute.Pointer, m: cutlass.Constexpr, n: cutlass.Constexpr, k: cutlass.Constexpr):
    a = cute.make_tensor(a_ptr, cute.make_layout((m, k, 1), stride=(k, 1, m * k)))
    b = cute.make_tensor(b_ptr, cute.make_layout((n, k, 1), stride=(k, 1, n * k)))
    d = cute.make_tensor(d_ptr, cute.make_layout((m, n, 1), stride=(n, 1, m * n)))
    sfa = cute.make_tensor(sfa_ptr, bsl.tile_atom_to_shape_SF(a.shape, SF_VEC))
    sfb = cute.make_tensor(sfb_ptr, bsl.tile_atom_to_shape_SF(b.shape, SF_VEC))
    mma = cute.make_tiled_mma(tcgen05.MmaMXF4NVF4Op(SF, (TILE[0], TILE[1], INST_K), tcgen05.CtaGroup.ONE,
                                                    tcgen05.OperandSource.SMEM))
    la = sm100.make_smem_layout_a(mma, TILE, AB, STAGES)
    lb = sm100.make_smem_layout_b(mma, TILE, AB, STAGES)
    lsfa = bsl.make_smem_layout_sfa(mma, TILE, SF_VEC, STAGES)
    lsfb = bsl.make_smem_layout_sfb(mma, TILE, SF_VEC, STAGES)
    one = lambda lay: cute.slice_(lay, (None, None, None, 0))  # noqa: E731
    op = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE)
    cl = cute.tiled_divide(cute.make_layout((1, 1, 1)), (mma.thr_id.shape,)).shape
    tma_a, tA = cute.nvgpu.make_tiled_tma_atom_A(op, a, one(la), TILE, mma, cl)
    tma_b, tB = cute.nvgpu.make_tiled_tma_atom_B(op, b, one(lb), TILE, mma, cl)
    tma_sfa, tSFA = cute.nvgpu.make_tiled_tma_atom_A(op, sfa, one(lsfa), TILE, mma, cl, internal_type=cutlass.Int16)
    tma_sfb, tSFB = cute.nvgpu.make_tiled_tma_atom_B(op, sfb, one(lsfb), TILE, mma, cl, internal_type=cutlass.Int16)
    stage_bytes = cute.size_in_bytes(AB, one(la)) + cute.size_in_bytes(AB, one(lb)) + \
        cute.size_in_bytes(SF, one(lsfa)) + cute.size_in_bytes(SF, one(lsfb))
    nvfp4_kernel(mma, tma_a, tA, tma_b, tB, tma_sfa, tSFA, tma_sfb, tSFB, d, la, lb, lsfa, lsfb,
                 stage_bytes).launch(grid=(m // TILE[0], n // TILE[1], 1), block=(THREADS, 1, 1), cluster=(1, 1, 1))


def main(seed: int, m: int, n: int, k: int) -> int:
    rng = np.random.default_rng(seed)
    a_codes, b_codes = rng.integers(0, 16, (m, k)).astype(np.uint8), rng.integers(0, 16, (n, k)).astype(np.uint8)
    pick = np.array([numerics.encode_ue4m3(v)[()] for v in (0.5, 1.0, 2.0)], np.uint8)
    sfa_ref = pick[rng.integers(0, 3, (m, k // SF_VEC, 1))]
    sfb_ref = pick[rng.integers(0, 3, (n, k // SF_VEC, 1))]
    a = pd.tensor(numerics.pack_fp4(a_codes))
    b = pd.tensor(numerics.pack_fp4(b_codes))
    sfa = pd.tensor(scales.permuted_bytes(scales.ref_to_permuted(sfa_ref)))
    sfb = pd.tensor(scales.permuted_bytes(scales.ref_to_permuted(sfb_ref)))
    d = pd.empty((m, n), np.float32)
    ptr = lambda dt, t: make_ptr(dt, t.data_ptr(), cute.AddressSpace.gmem, assumed_align=32)  # noqa: E731
    nvfp4_gemm(ptr(AB, a), ptr(AB, b), ptr(SF, sfa), ptr(SF, sfb), ptr(cutlass.Float32, d), m, n, k)
    deq = lambda c, s: numerics.E2M1_VALUES[c].astype(np.float64) * \
        np.repeat(numerics.decode_ue4m3(s[:, :, 0]).astype(np.float64), SF_VEC, axis=1)  # noqa: E731
    want = deq(a_codes, sfa_ref) @ deq(b_codes, sfb_ref).T
    return exact.report(d.numpy(), want.astype(np.float32), f"nvfp4 gemm {m}x{n}x{k}: fp32 result bit-exact")


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:]] + [1, 128, 128, 256][len(sys.argv) - 1:]
    sys.exit(main(*args[:4]))
