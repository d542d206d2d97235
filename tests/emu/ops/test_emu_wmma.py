"""WMMA on the emulator (ptxlab/emu/ops/wmma.py): a public-style WMMA GEMM (load -> mma -> store in a k loop, one
16x16 tile per warp) bit-exact against the emulator's arithmetic step by step; the refusals that keep the
unspecified fragment layout unobservable (checks/wmma_fragments.py); the alignment rule of PTX ISA 9.7.14.4.2."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.hw.warp_mma_arith import mma_float

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
// reads fragment elements: the result depends on the layout, which the PTX ISA leaves unspecified
extern "C" __global__ void wmma_scale(const half* A, const half* B, float* C, int bias_col) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(a, A, 16);
  wmma::load_matrix_sync(b, B, 16);
  wmma::mma_sync(acc, a, b, acc);
  for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = acc.x[i] * 2.0f;
  wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
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


def test_reading_fragment_elements_is_refused(mod):
    dev = ptxlab.open_device("emu")
    out = dev.empty(16 * 16 * 4)
    z = dev.to_device(np.zeros(256, np.uint16))
    with pytest.raises(ptxlab.errors.EmuError, match="accesses WMMA fragment elements") as ei:
        dev.launch(mod, "wmma_scale", grid=(1, 1, 1), block=(32, 1, 1), args=[z, z, out, np.int32(0)])
    assert "reads or writes a WMMA fragment register" in str(ei.value) and "unspecified" in str(ei.value)


def test_misaligned_fragment_address_faults(mod):
    dev = ptxlab.open_device("emu")
    z = dev.to_device(np.zeros(512, np.uint16))
    with pytest.raises(ptxlab.errors.EmuError, match="not a multiple of the fragment size 32 bytes"):
        dev.launch(mod, "wmma_misaligned", grid=(1, 1, 1), block=(32, 1, 1), args=[z, z, dev.empty(1024)])
