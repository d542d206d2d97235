"""CUDA sources of the tcgen05 probe kernels (inline PTX; compiled with ptxlab.compile(src, arch="sm_100a")).

Each builder returns CUDA C++ text; the expected answer is computed by the test from first principles.
"""
from __future__ import annotations

from ptxlab.emu.tcgen05_maps import ldst_num_regs

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
