"""WMMA on the emulator (ptxlab/emu/ops/wmma.py): a public-style WMMA GEMM (load -> mma -> store in a k loop, one
16x16 tile per warp) bit-exact against the emulator's arithmetic step by step; a kernel reading fragment elements on
the H100's measured layout; the refusals that keep the layouts not measured unobservable (checks/wmma_fragments.py);
the alignment rule of PTX ISA 9.7.14.4.2."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.hw.warp_mma_arith import mma_float

LAYOUT = Path(__file__).resolve().parents[2] / "fidelity" / "isa" / "data" / "h100_20261128_wmma_layout.npz"
GEMM = r"""
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;
// C (M x N, row-major) = A (M x K, row-major) * B (K x N, column-major) + C; a 2-D grid of 16x16 warp tiles
extern "C" __global__ void wmma_gemm(const half* A, const half* B, float* C, int M, int N, int K) {
  int warp_m = (blockIdx.x * blockDim.x + threadIdx.x) / 32, warp_n = blockIdx.y * blockDim.y + threadIdx.y;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  int row = warp_m * 16, col = warp_n * 16;
  if (row >= M || col >= N) return;
  wmma::load_matrix_sync(acc, C + row * N + col, N, wmma::mem_row_major);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + row * K + k, K);
    wmma::load_matrix_sync(b, B + col * K + k, K);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(C + row * N + col, acc, N, wmma::mem_row_major);
}
// reads fragment elements: the layout the PTX ISA leaves unspecified, modelled as the H100's where measured
extern "C" __global__ void wmma_scale(const half* A, const half* B, float* C, int bias_col) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(a, A, 16);
  wmma::load_matrix_sync(b, B, 16);
  wmma::mma_sync(acc, a, b, acc);
  for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = acc.x[i] * (float)(1 + i + 8 * (threadIdx.x & 31));
  wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
}
// the same on layouts the H100 probe did not measure: .u8 A, a C loaded .col
extern "C" __global__ void wmma_scale_u8(const unsigned char* A, const unsigned char* B, int* C) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, unsigned char, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, unsigned char, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
  wmma::fill_fragment(acc, 0);
  wmma::load_matrix_sync(a, A, 16);
  wmma::load_matrix_sync(b, B, 16);
  for (int i = 0; i < a.num_elements; ++i) a.x[i] = a.x[i] + 1;
  wmma::mma_sync(acc, a, b, acc);
  wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
}
extern "C" __global__ void wmma_scale_ccol(float* C) {
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(acc, C, 16, wmma::mem_col_major);
  for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = acc.x[i] * 2.0f;
  wmma::store_matrix_sync(C, acc, 16, wmma::mem_col_major);
}
extern "C" __global__ void wmma_misaligned(const half* A, const half* B, float* C) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(a, A + 8, 16);            // 16 bytes past a 32-byte boundary
  wmma::load_matrix_sync(b, B, 16);
  wmma::mma_sync(acc, a, b, acc);
  wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
}
"""


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(GEMM, arch="sm_90a", name="wmma_gemm.cu")


def _f16(rng, shape):
    """Random finite f16 codes of mixed magnitudes (no NaN / Inf), nonzero."""
    v = (rng.standard_normal(shape) * np.exp2(rng.integers(-6, 6, shape))).astype(np.float16)
    v[v == 0] = np.float16(1.0)
    return v.view(np.uint16)


def test_wmma_gemm_is_bit_exact(mod, rng):
    M, N, K = 32, 48, 64
    a, b = _f16(rng, (M, K)), _f16(rng, (N, K))         # B column-major: b[n, k]
    c = (rng.standard_normal((M, N)) * 4).astype(np.float32)
    dev = ptxlab.open_device("emu")
    dc = dev.to_device(c)
    dev.launch(mod, "wmma_gemm", grid=(1, N // 16, 1), block=(32 * (M // 16), 1, 1),
               args=[dev.to_device(a), dev.to_device(b), dc, np.int32(M), np.int32(N), np.int32(K)])
    got = dev.to_host(dc, np.uint32).reshape(M, N)
    want = c.view(np.uint32).copy()
    for k in range(0, K, 16):                           # one mma per k step, the accumulator rounded in between
        want = mma_float(a[:, k:k + 16].astype(np.uint32), b[:, k:k + 16].T.astype(np.uint32), want,
                         "f16", "f16", "f32")
    np.testing.assert_array_equal(got, want)
    av, bv = a.view(np.float16).astype(np.float64), b.view(np.float16).astype(np.float64).T
    bound = (np.abs(av) @ np.abs(bv) + np.abs(c)) * 2.0 ** -19     # a few truncations of 2**-24 per k step
    assert np.all(np.abs(got.view(np.float32) - (av @ bv + c)) <= bound)


def test_reading_fragment_elements_runs_on_the_measured_layout(mod, rng):
    """acc.x[i] *= 1 + i + 8 * lane after an mma (f16 A .row, B .col, f32 accumulator: layouts the H100 probe
    measured): each element scaled by its own (lane, i) slot of the H100's C fragment."""
    a, b = _f16(rng, (16, 16)), _f16(rng, (16, 16))     # B column-major: b[n, k]
    dev = ptxlab.open_device("emu")
    out = dev.to_device(np.full(256, 0xFFFFFFFF, np.uint32))
    dev.launch(mod, "wmma_scale", grid=(1, 1, 1), block=(32, 1, 1),
               args=[dev.to_device(a), dev.to_device(b), out, np.int32(0)])
    d = mma_float(a.astype(np.uint32), b.T.astype(np.uint32), np.zeros((16, 16), np.uint32), "f16", "f16", "f32")
    flat = np.load(LAYOUT)["c_f32_m16n16k16"].astype(np.int64)           # (32 lanes, 8 elements) -> element index
    scale = np.zeros(256, np.float32)
    scale[flat] = 1 + np.arange(8)[None, :] + 8 * np.arange(32)[:, None]
    want = (d.view(np.float32) * scale.reshape(16, 16)).view(np.uint32)
    np.testing.assert_array_equal(dev.to_host(out, np.uint32).reshape(16, 16), want)


@pytest.mark.parametrize("kernel, args", [
    ("wmma_scale_u8", lambda dev: [dev.to_device(np.ones(256, np.uint8))] * 2 + [dev.empty(1024)]),
    ("wmma_scale_ccol", lambda dev: [dev.to_device(np.ones(256, np.float32))])])
def test_fragment_elements_of_unmeasured_layouts_are_refused(mod, kernel, args):
    dev = ptxlab.open_device("emu")
    with pytest.raises(ptxlab.errors.EmuError, match="accesses WMMA fragment elements") as ei:
        dev.launch(mod, kernel, grid=(1, 1, 1), block=(32, 1, 1), args=args(dev))
    assert "reads or writes a WMMA fragment register" in str(ei.value) and "not .u8, not C .col" in str(ei.value)


def test_misaligned_fragment_address_faults(mod):
    dev = ptxlab.open_device("emu")
    z = dev.to_device(np.zeros(512, np.uint16))
    with pytest.raises(ptxlab.errors.EmuError, match="not a multiple of the fragment size 32 bytes"):
        dev.launch(mod, "wmma_misaligned", grid=(1, 1, 1), block=(32, 1, 1), args=[z, z, dev.empty(1024)])


# (kernel of tests/kernels/wmma.cu, the tensor instructions ptxas emits for it on sm_90a, in order): the lowering
# ptxlab/emu/hw/wmma.py ``mma`` models (two k steps x two 16 x 8 blocks per GEMM kernel)
LOWERING = {
    "wmma_f16_f32_m16n16k16_rc": ["HMMA.16816.F32"] * 4,
    "wmma_f16_f16_m16n16k16_rc": ["HMMA.16816.F16"] * 4,
    "wmma_f16_f16_m8n32k16_rr": ["HMMA.16816.F16"] * 4,
    "wmma_bf16_f32_m32n8k16_cc": ["HMMA.16816.F32.BF16"] * 4,
    "wmma_tf32_f32_m16n16k8_rc": ["HMMA.1684.F32.TF32"] * 8,          # two chained k4 MMAs per k8 step
    "wmma_s8_s32_m16n16k16_rc": ["IMMA.16816.S8.S8"] * 4,
    "wmma_u8_s32_m8n32k16_rc": ["IMMA.16816.U8.U8"] * 4,
    "wmma_f64_f64_m8n8k4_rc": ["DMMA.8"] * 2,                          # DMMA.8x8x4 (the pattern stops at the x)
    "wmma_mixed_d32_c16": ["HADD2.F32"] * 8 + ["HMMA.16816.F32"] * 2,   # f16 C widened exactly first
    "wmma_mixed_d16_c32": ["HMMA.16816.F32"] * 2 + ["F2FP.F16.F32.PACK_AB"] * 4,   # f32 result rounded to f16
}


def test_ptxas_lowering():
    import re
    from pathlib import Path
    src = (Path(__file__).resolve().parents[2] / "kernels" / "wmma.cu").read_text()
    assert "#include" not in src        # inline PTX only: compiles with an NVRTC whose include tree lacks crt/mma.h
    sass = ptxlab.compile(src, arch="sm_90a", name="wmma.cu").sass()
    parts = re.split(r"\n\.text\.(\w+):", sass)
    bodies = dict(zip(parts[1::2], parts[2::2]))
    for fn, want in LOWERING.items():
        ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", bodies[fn])
        got = [o for o in ops if o.startswith(("HMMA", "IMMA", "DMMA", "F2FP", "HADD2.F32"))]
        assert got == want, (fn, got)


def test_tf32_is_two_chained_k4_windows(rng):
    """One wmma.mma m16n16k8 tf32 = k 0-3, then k 4-7 onto it (HMMA.1684 twice): a small product next to 2**20 in
    the first half is lost when that half's sum is rounded to the f32 accumulator (ulp 2**-3), before the second half
    cancels the 2**20; one window over all 8 products keeps it (units of 2**-5)."""
    from ptxlab.emu.hw.wmma import mma
    a = np.zeros((16, 8), np.float32)
    b = np.zeros((8, 16), np.float32)
    a[0, 0], b[0, 0] = 1024.0, 1024.0              # 2**20 (k = 0, first half)
    a[0, 4], b[4, 0] = 1.0, 2.0 ** -3 + 2.0 ** -4   # 0.1875 (k = 4, second half)
    a[0, 5], b[5, 0] = -1024.0, 1024.0              # -2**20 (k = 5, second half): cancels the first
    c = np.zeros((16, 16), np.uint32)
    chained = mma(a.view(np.uint32), b.view(np.uint32), c, "tf32", "tf32", "f32", "f32").view(np.float32)[0, 0]
    one = mma_float(a.view(np.uint32), b.view(np.uint32), c, "tf32", "tf32", "f32").view(np.float32)[0, 0]
    assert chained == np.float32(0.1875) and one == np.float32(0.1875)     # nothing lost: both agree
    a[0, 4], b[4, 0] = 1.0, 2.0 ** -5 + 2.0 ** -6   # 0.046875: below the 2**(20-25) unit in both windows ...
    a[0, 1], b[1, 0] = 1.0, 2.0 ** -5 + 2.0 ** -6   # ... and the same in the first half
    chained = mma(a.view(np.uint32), b.view(np.uint32), c, "tf32", "tf32", "f32", "f32").view(np.float32)[0, 0]
    one = mma_float(a.view(np.uint32), b.view(np.uint32), c, "tf32", "tf32", "f32").view(np.float32)[0, 0]
    assert (chained, one) == (np.float32(0.03125), np.float32(0.0625))

