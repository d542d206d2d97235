"""SASS tests: tcgen05 and TMA PTX lower to the expected Blackwell/Hopper SASS; ``sass.require`` reports misses."""
from __future__ import annotations

import pytest

import ptxlab
from ptxlab.toolchain import sass
from ptxlab.toolchain.sass import SassCheckError

TCGEN05_KERNEL = r"""
extern "C" __global__ void tc_probe(float* out, unsigned long long adesc, unsigned long long bdesc,
                                    unsigned long long sfa_desc, unsigned long long sfb_desc, unsigned idesc) {
  __shared__ unsigned tmem_slot;
  __shared__ __align__(8) unsigned long long mbar;
  const unsigned slot = (unsigned)__cvta_generic_to_shared(&tmem_slot);
  const unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
  const unsigned warp = threadIdx.x / 32;
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 256;" :: "r"(slot));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
  }
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  asm volatile("tcgen05.fence::before_thread_sync;");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;");
  const unsigned taddr = tmem_slot;
  if (threadIdx.x == 0) {
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" :: "r"(taddr + 128), "l"(sfa_desc));
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" :: "r"(taddr + 132), "l"(sfb_desc));
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
                 "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 [%0], %1, %2, %3, [%5], [%6], p;\n\t}"
                 :: "r"(taddr), "l"(adesc), "l"(bdesc), "r"(idesc), "r"(0u), "r"(taddr + 128), "r"(taddr + 132));
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(bar));
  }
  asm volatile("{\n\t.reg .pred done;\n\tWAIT:\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n\t@!done bra WAIT;\n\t}" :: "r"(bar));
  asm volatile("tcgen05.fence::after_thread_sync;");
  unsigned v;
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];" : "=r"(v) : "r"(taddr + ((warp * 32) << 16)));
  asm volatile("tcgen05.wait::ld.sync.aligned;");
  out[threadIdx.x] = __uint_as_float(v);
  asm volatile("tcgen05.fence::before_thread_sync;");
  __syncthreads();
  if (warp == 0) {
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 256;" :: "r"(taddr));
  }
}
"""

TMA_KERNEL = r"""
struct alignas(64) TmaDesc { unsigned long long words[16]; };
extern "C" __global__ void tma_probe(const __grid_constant__ TmaDesc tmap_desc, float* out, int x0, int y0) {
  __shared__ __align__(128) float tile[16 * 32];
  __shared__ __align__(8) unsigned long long mbar;
  const unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
  const unsigned dst = (unsigned)__cvta_generic_to_shared(tile);
  const unsigned long long tmap = (unsigned long long)&tmap_desc;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar));
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(16 * 32 * 4));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" :: "r"(dst), "l"(tmap), "r"(x0), "r"(y0), "r"(bar) : "memory");
  }
  asm volatile("{\n\t.reg .pred done;\n\tWAIT:\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n\t@!done bra WAIT;\n\t}" :: "r"(bar) : "memory");
  for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x) out[i] = tile[i];
}
"""

TCGEN05_SASS = ["UTCATOMSWS", "UTCCP", "UTCOMMA", "UTCBAR", "LDTM"]


@pytest.fixture(scope="module")
def tc_mod() -> "ptxlab.toolchain.Module":
    with pytest.MonkeyPatch.context() as mp:  # independent of the caller's PTXLAB_DEBUG
        mp.delenv("PTXLAB_DEBUG", raising=False)
        return ptxlab.compile(TCGEN05_KERNEL, arch="sm_100a", name="tc_probe.cu")


@pytest.fixture(scope="module")
def tma_mod() -> "ptxlab.toolchain.Module":
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("PTXLAB_DEBUG", raising=False)
        return ptxlab.compile(TMA_KERNEL, arch="sm_90a", name="tma_probe.cu")


def test_tcgen05_block_scaled_mma_lowers_to_utc_sass(tc_mod) -> None:
    counts = sass.require(tc_mod, TCGEN05_SASS, kernel="tc_probe")
    assert counts["UTCCP"] == 2 and counts["UTCOMMA"] == 1 and counts["LDTM"] >= 1
    ops = sass.opcodes(tc_mod.sass())
    assert "UTCOMMA.4X" in ops  # block16 / scale_vec::4X form
    assert any(op.startswith("UTCCP.T.S.4x32dp128bit") for op in ops)  # 32x128b.warpx4
    assert tc_mod.resources["tc_probe"].registers > 0


def test_tma_load_lowers_to_utmaldg_on_sm90a(tma_mod) -> None:
    counts = sass.require(tma_mod, ["UTMALDG", "SYNCS"], kernel="tma_probe")
    assert counts["UTMALDG"] == 1
    assert "UTMALDG.2D" in sass.opcodes(tma_mod.sass())
    assert tma_mod.resources["tma_probe"].shared_bytes >= 16 * 32 * 4 + 8


def test_require_lists_missing_opcodes(tc_mod, tma_mod) -> None:
    with pytest.raises(SassCheckError) as ei:
        sass.require(tma_mod, ["UTMALDG", "UTCCP", "UTCOMMA"])
    msg = str(ei.value)
    assert "['UTCCP', 'UTCOMMA']" in msg and "tma_probe.cu (sm_90a)" in msg and "UTMALDG" in msg
    with pytest.raises(SassCheckError, match="UTMALDG"):
        sass.require(tc_mod, ["UTCCP", "UTMALDG"])
    # a modifier-qualified name only matches that form, and prefix matches stop at '.'
    assert sass.require(tc_mod, ["UTCOMMA.4X"])["UTCOMMA.4X"] == 1
    with pytest.raises(SassCheckError):
        sass.require(tc_mod, ["UTCOMMA.2X"])
    with pytest.raises(SassCheckError):
        sass.require(tc_mod, ["UTC"])
    with pytest.raises(SassCheckError, match="kernel 'nope' not found"):
        sass.require(tc_mod, ["UTCCP"], kernel="nope")


def test_split_kernels_and_opcodes() -> None:
    mod = ptxlab.compile(
        'extern "C" __global__ void a(float* x) { x[0] = __fsqrt_rn(x[1]); }\n'
        'extern "C" __global__ void b(int* x) { atomicAdd(x, 3); }\n',
        arch="sm_100a",
    )
    parts = sass.split_kernels(mod.sass())
    assert set(parts) == {"a", "b"}
    assert "RED" in " ".join(sass.opcodes(parts["b"])) or "ATOMG" in " ".join(sass.opcodes(parts["b"]))
    assert sass.require(mod, ["EXIT"], kernel="a")["EXIT"] >= 1


def test_tmem_check_debug_switch_inserts_checks(tc_mod, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAB_DEBUG", "tmem_check")
    checked = ptxlab.compile(TCGEN05_KERNEL, arch="sm_100a", name="tc_probe.cu")
    assert "-g-tmem-access-check" in checked.options and "-g-tmem-access-check" not in tc_mod.options
    plain_n, checked_n = len(sass.opcodes(tc_mod.sass())), len(sass.opcodes(checked.sass()))
    assert checked_n > 2 * plain_n  # ptxas inserted run-time TMEM access checks
    sass.require(checked, TCGEN05_SASS)
