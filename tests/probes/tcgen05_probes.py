"""CUDA sources of the tcgen05 probe kernels (inline PTX; compiled with ptxlab.compile(src, arch="sm_100a")).

Each builder returns CUDA C++ text; the expected answer is computed by the test from first principles.
"""
from __future__ import annotations

from ptxlab.emu.hw.tcgen05_maps import ldst_num_regs

ALLOC_SLOT = """
  __shared__ uint32_t slot;
  const unsigned warp = threadIdx.x / 32;
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], NCOLS;"
                 :: "r"((uint32_t)__cvta_generic_to_shared(&slot)) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
  }
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t base = slot;
"""

DEALLOC = """
  __syncthreads();
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, NCOLS;" :: "r"(base));
"""


def alloc_only(ncols: int = 32, dealloc: bool = True) -> str:
    """Allocate, report the address, free (or leak when dealloc=False)."""
    body = ALLOC_SLOT + "  if (threadIdx.x == 0) out[0] = base;\n" + (DEALLOC if dealloc else "")
    return ("typedef unsigned int uint32_t;\nextern \"C\" __global__ void k(uint32_t* out) {\n" + body + "}\n").replace(
        "NCOLS", str(ncols))


def _regs(prefix: str, n: int, first: int) -> str:
    return "{" + ", ".join(f"%{first + j}" for j in range(n)) + "}"


def roundtrip(shape: str, num: int, pack: bool, *, wait_ld: bool = True) -> str:
    """4 warps: st (shape, .xnum) a per-thread pattern at lane base 32*(warp%4), wait::st, ld it back, wait::ld."""
    n = ldst_num_regs(shape, num)
    imm = ""
    if shape == "16x32bx2":
        imm = f", {2 * num if pack else num}"
    pk_st = ".unpack::16b" if pack else ""
    pk_ld = ".pack::16b" if pack else ""
    st_ops = ", ".join(f'"r"(r[{j}])' for j in range(n))
    ld_ops = ", ".join(f'"=r"(o[{j}])' for j in range(n))
    st_asm = (f'  asm volatile("tcgen05.st.sync.aligned.{shape}.x{num}{pk_st}.b32 [%0]{imm}, {_regs("", n, 1)};" '
              f':: "r"(taddr), {st_ops} : "memory");\n')
    ld_asm = (f'  asm volatile("tcgen05.ld.sync.aligned.{shape}.x{num}{pk_ld}.b32 {_regs("", n, 0)}, [%{n}]{imm};" '
              f': {ld_ops} : "r"(taddr) : "memory");\n')
    wait = '  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");\n' if wait_ld else ""
    body = (ALLOC_SLOT +
            "  const uint32_t taddr = base + ((32u * (warp % 4)) << 16);\n"
            f"  uint32_t r[{n}], o[{n}];\n"
            f"  for (int j = 0; j < {n}; ++j) r[j] = in[threadIdx.x * {n} + j];\n" + st_asm +
            '  asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");\n' + ld_asm + wait +
            f"  for (int j = 0; j < {n}; ++j) out[threadIdx.x * {n} + j] = o[j];\n" + DEALLOC)
    ncols = 512
    return ("typedef unsigned int uint32_t;\nextern \"C\" __global__ void k(const uint32_t* in, uint32_t* out) {\n" + body +
            "}\n").replace("NCOLS", str(ncols))


def _outs(n: int) -> str:
    return ", ".join('"=r"(o[%d])' % j for j in range(n))


def mma_f16(M: int, N: int, nk: int, *, wait_commit: bool = True, accumulate_first: bool = False,
            collector: str = "") -> str:
    """One CTA of 128 threads: A (M x 16*nk f16) and B (N x 16*nk) K-major SWIZZLE_NONE copied to SMEM by threads
    (core matrices 8x16 B: SBO = 256 B between 8-row groups, LBO = 128 B between the two K core matrices of a K=16
    slice, next K slice +  (rows/8)*256 B), nk MMAs by thread 0 (enable-input-d = k > 0), commit -> mbarrier,
    everyone waits, then warp w loads rows 32w..32w+31 with 32x32b.x{N} and writes D as float bits.  ``collector``:
    a collector-usage qualifier of the MMA (``.collector::a::discard``, as the CuTe DSL emits; PTX ISA
    9.7.16.10.9.1)."""
    a_bytes = M * 32
    return ("typedef unsigned int uint32_t; typedef unsigned long long uint64_t; typedef unsigned short uint16_t;\n"
            "__device__ uint32_t dlo(uint32_t addr, uint32_t lbo) {\n"
            "  return ((addr & 0x3FFFF) >> 4) | (((lbo & 0x3FFFF) >> 4) << 16);\n}\n"
            "__device__ uint32_t dhi(uint32_t sbo) { return ((sbo & 0x3FFFF) >> 4) | (1u << 14); }\n"
            "extern \"C\" __global__ void k(const uint32_t* A, const uint32_t* B, uint32_t* D) {\n"
            f"  __shared__ __align__(1024) uint32_t sA[{M * 8 * nk}];\n"
            f"  __shared__ __align__(1024) uint32_t sB[{N * 8 * nk}];\n"
            "  __shared__ __align__(8) uint64_t bar;\n"
            + ALLOC_SLOT.replace("NCOLS", "256") +
            f"  const int K = {16 * nk};\n"
            f"  for (int it = 0; it < {M * 8 * nk // 128}; ++it) {{ int i = it * 128 + threadIdx.x;\n"
            "    int r = i / (K / 2), k = 2 * (i % (K / 2)), ks = k / 16, kk = k % 16;\n"
            f"    int off = (ks * {a_bytes} + (r % 8) * 16 + (r / 8) * 256 + (kk / 8) * 128 + (kk % 8) * 2) / 4;\n"
            "    sA[off] = A[i];\n  }\n"
            f"  for (int it = 0; it < {(N * 8 * nk + 127) // 128}; ++it) {{ int i = it * 128 + threadIdx.x;\n"
            f"    if (i >= {N * 8 * nk}) break;\n"
            "    int r = i / (K / 2), k = 2 * (i % (K / 2)), ks = k / 16, kk = k % 16;\n"
            f"    int off = (ks * {N * 32} + (r % 8) * 16 + (r / 8) * 256 + (kk / 8) * 128 + (kk % 8) * 2) / 4;\n"
            "    sB[off] = B[i];\n  }\n"
            "  const uint32_t bar_a = (uint32_t)__cvta_generic_to_shared(&bar);\n"
            "  if (threadIdx.x == 0) asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" :: \"r\"(bar_a));\n"
            "  asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
            "  __syncthreads();\n"
            "  if (threadIdx.x == 0) {\n"
            f"    const uint32_t idesc = (1u << 4) | (({N} >> 3) << 17) | (({M} >> 4) << 24);\n"
            f"    for (int ks = 0; ks < {nk}; ++ks) {{\n"
            f"      uint32_t aa = (uint32_t)__cvta_generic_to_shared(sA) + ks * {a_bytes};\n"
            f"      uint32_t ba = (uint32_t)__cvta_generic_to_shared(sB) + ks * {N * 32};\n"
            f"      uint32_t en = (ks > 0 || {int(accumulate_first)}) ? 1u : 0u;\n"
            "      asm volatile(\"{.reg .pred p; .reg .b64 da, db; setp.ne.b32 p, %6, 0;\\n"
            "mov.b64 da, {%1, %2}; mov.b64 db, {%3, %4};\\n"
            f"tcgen05.mma.cta_group::1.kind::f16{collector} [%0], da, db, %5, p;}}\"\n"
            "                   :: \"r\"(base), \"r\"(dlo(aa, 128)), \"r\"(dhi(256)), \"r\"(dlo(ba, 128)),\n"
            "                      \"r\"(dhi(256)), \"r\"(idesc), \"r\"(en) : \"memory\");\n"
            "    }\n"
            "    asm volatile(\"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\"\n"
            "                 :: \"r\"(bar_a) : \"memory\");\n"
            "  }\n"
            + ("  asm volatile(\"{.reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W;}\"\n"
               "               :: \"r\"(bar_a) : \"memory\");\n" if wait_commit else "  __syncthreads();\n") +
            "  asm volatile(\"tcgen05.fence::after_thread_sync;\" ::: \"memory\");\n"
            f"  uint32_t o[{N}];\n"
            "  const uint32_t taddr = base + ((32u * warp) << 16);\n"
            f"  asm volatile(\"tcgen05.ld.sync.aligned.32x32b.x{N}.b32 {_regs('', N, 0)}, [%{N}];\"\n"
            "               : " + _outs(N) + " : \"r\"(taddr) : \"memory\");\n"
            "  asm volatile(\"tcgen05.wait::ld.sync.aligned;\" ::: \"memory\");\n"
            f"  for (int j = 0; j < {N}; ++j) D[threadIdx.x * {N} + j] = o[j];\n"
            + DEALLOC.replace("NCOLS", "256") + "}\n")


def mma_nvfp4(N: int, block: str = ".block16") -> str:
    """NVFP4 128 x N x 64 (kind::mxf4nvf4.block_scale.block16, or ``block`` = ".scale_vec::4X", the older spelling
    of the same; UE4M3): A/B packed e2m1 K-major SWIZZLE_NONE
    (SBO 256, LBO 128), SFA/SFB given in the gpu-mode permuted ("blocked") layout, 512 B per 128 rows:
    byte(r, j) = 16*(r%32) + 4*(r/32) + j; each copied to TMEM with tcgen05.cp.32x128b.warpx4 (descriptor NONE,
    SBO 128), then one MMA, commit -> mbarrier, and warp w loads D rows 32w.. with 32x32b.x{N}."""
    nb = (N * 32 + 511) // 512 * 512
    return ("typedef unsigned int uint32_t;\n"
            "__device__ uint32_t dlo(uint32_t addr, uint32_t lbo) {\n"
            "  return ((addr & 0x3FFFF) >> 4) | (((lbo & 0x3FFFF) >> 4) << 16);\n}\n"
            "__device__ uint32_t dhi(uint32_t sbo) { return ((sbo & 0x3FFFF) >> 4) | (1u << 14); }\n"
            "extern \"C\" __global__ void k(const uint32_t* A, const uint32_t* B, const uint32_t* SFA,\n"
            "                               const uint32_t* SFB, uint32_t* D) {\n"
            "  __shared__ __align__(1024) uint32_t sA[1024];\n"
            f"  __shared__ __align__(1024) uint32_t sB[{nb // 4}];\n"
            "  __shared__ __align__(128) uint32_t sSFA[128];\n"
            "  __shared__ __align__(128) uint32_t sSFB[128];\n"
            "  __shared__ __align__(8) unsigned long long bar;\n"
            + ALLOC_SLOT.replace("NCOLS", "256") +
            "  for (int it = 0; it < 8; ++it) { int i = it * 128 + threadIdx.x; int r = i >> 3, w = i & 7;\n"
            "    sA[((r & 7) * 16 + (r >> 3) * 256 + (w & 3) * 4 + (w >> 2) * 128) >> 2] = A[i]; }\n"
            f"  for (int it = 0; it < {(N * 8 + 127) // 128}; ++it) {{ int i = it * 128 + threadIdx.x;\n"
            f"    if (i >= {N * 8}) break; int r = i >> 3, w = i & 7;\n"
            "    sB[((r & 7) * 16 + (r >> 3) * 256 + (w & 3) * 4 + (w >> 2) * 128) >> 2] = B[i]; }\n"
            "  sSFA[threadIdx.x] = SFA[threadIdx.x]; sSFB[threadIdx.x] = SFB[threadIdx.x];\n"
            "  const uint32_t bar_a = (uint32_t)__cvta_generic_to_shared(&bar);\n"
            "  if (threadIdx.x == 0) asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" :: \"r\"(bar_a));\n"
            "  asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
            "  __syncthreads();\n"
            "  if (threadIdx.x == 0) {\n"
            "    const uint32_t sfa_t = base + 16, sfb_t = base + 20;\n"
            f"    const uint32_t idesc = 0x08000480u | ({N >> 3}u << 17);\n"
            "    uint32_t fa = (uint32_t)__cvta_generic_to_shared(sSFA), fb = (uint32_t)__cvta_generic_to_shared(sSFB);\n"
            "    uint32_t aa = (uint32_t)__cvta_generic_to_shared(sA), ba = (uint32_t)__cvta_generic_to_shared(sB);\n"
            "    asm volatile(\"{.reg .b64 d1, d2; mov.b64 d1, {%2, %3}; mov.b64 d2, {%4, %3};\\n"
            "tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], d1;\\n"
            "tcgen05.cp.cta_group::1.32x128b.warpx4 [%1], d2;}\"\n"
            "      :: \"r\"(sfa_t), \"r\"(sfb_t), \"r\"(dlo(fa, 0)), \"r\"(dhi(128)), \"r\"(dlo(fb, 0)) : \"memory\");\n"
            "    asm volatile(\"{.reg .pred p; .reg .b64 da, db; setp.ne.b32 p, %8, 0;\\n"
            "mov.b64 da, {%1, %2}; mov.b64 db, {%3, %4};\\n"
            f"tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale{block} [%0], da, db, %5, [%6], [%7], p;}}\"\n"
            "      :: \"r\"(base), \"r\"(dlo(aa, 128)), \"r\"(dhi(256)), \"r\"(dlo(ba, 128)), \"r\"(dhi(256)),\n"
            "         \"r\"(idesc), \"r\"(sfa_t), \"r\"(sfb_t), \"r\"(0u) : \"memory\");\n"
            "    asm volatile(\"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\"\n"
            "                 :: \"r\"(bar_a) : \"memory\");\n"
            "  }\n"
            "  asm volatile(\"{.reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W;}\"\n"
            "               :: \"r\"(bar_a) : \"memory\");\n"
            "  asm volatile(\"tcgen05.fence::after_thread_sync;\" ::: \"memory\");\n"
            f"  uint32_t o[{N}];\n"
            "  const uint32_t taddr = base + ((32u * warp) << 16);\n"
            f"  asm volatile(\"tcgen05.ld.sync.aligned.32x32b.x{N}.b32 {_regs('', N, 0)}, [%{N}];\"\n"
            "               : " + _outs(N) + " : \"r\"(taddr) : \"memory\");\n"
            "  asm volatile(\"tcgen05.wait::ld.sync.aligned;\" ::: \"memory\");\n"
            f"  for (int j = 0; j < {N}; ++j) D[threadIdx.x * {N} + j] = o[j];\n"
            + DEALLOC.replace("NCOLS", "256") + "}\n")
