// WMMA through the CUDA C++ API (mma.h; PTX ISA 9.7.14.4 wmma.load / wmma.mma / wmma.store), sm_80 / sm_90 forms.
//
// gemm<...>: a small public-style WMMA GEMM (one 16x16-class tile per warp, load -> mma -> store only, like the
// classic WMMA tutorials): 4 warps compute D (2M x 2N) = A (2M x 2K) B (2K x 2N) + C, each warp one M x N tile over
// two k steps.  Every matrix lives in a 64 x 64 buffer with leading dimension LD = 64 elements: A (m, k) at
// m * LD + k (row-major) or k * LD + m (column-major); B (k, n) at n * LD + k (column-major) or k * LD + n; C and D
// (m, n) at m * LD + n.  Offsets and strides are multiples of the fragment sizes (PTX ISA 9.7.14.4.2).
//
// layout<...>: the fragment-layout probe: loads a matrix whose element (r, c) holds the code r * cols + c (8-bit
// types: the low byte, then in a second matrix the high byte) and writes every fragment element x[i] of every lane:
// out[(lane * num_elements + i)] (the element's bits, one 32/64-bit word each).  The emulator refuses these kernels
// (they read fragment elements, whose layout the ISA leaves unspecified); the H100's answers model the layout.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

#define LD 64
template <typename L> struct IsRow { static const bool v = false; };
template <> struct IsRow<wmma::row_major> { static const bool v = true; };

template <typename TE, typename TF, typename TC, int M, int N, int K, typename LA, typename LB>
__device__ void gemm(const TE* A, const TE* B, const TC* C, TC* D) {
  int w = threadIdx.x >> 5, tm = w >> 1, tn = w & 1;
  wmma::fragment<wmma::matrix_a, M, N, K, TF, LA> a;
  wmma::fragment<wmma::matrix_b, M, N, K, TF, LB> b;
  wmma::fragment<wmma::accumulator, M, N, K, TC> c;
  wmma::load_matrix_sync(c, C + tm * M * LD + tn * N, LD, wmma::mem_row_major);
  for (int kk = 0; kk < 2; ++kk) {
    const TE* pa = IsRow<LA>::v ? A + tm * M * LD + kk * K : A + kk * K * LD + tm * M;
    const TE* pb = IsRow<LB>::v ? B + kk * K * LD + tn * N : B + tn * N * LD + kk * K;
    wmma::load_matrix_sync(a, pa, LD);
    wmma::load_matrix_sync(b, pb, LD);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(D + tm * M * LD + tn * N, c, LD, wmma::mem_row_major);
}

#define GEMM(name, TE, TF, TC, M, N, K, LA, LB)                                                                  \
  extern "C" __global__ void name(const TE* A, const TE* B, const TC* C, TC* D) {                               \
    gemm<TE, TF, TC, M, N, K, wmma::LA, wmma::LB>(A, B, C, D);                                                  \
  }
GEMM(wmma_f16_f32_m16n16k16_rc, half, half, float, 16, 16, 16, row_major, col_major)
GEMM(wmma_f16_f32_m16n16k16_cr, half, half, float, 16, 16, 16, col_major, row_major)
GEMM(wmma_f16_f16_m16n16k16_rc, half, half, half, 16, 16, 16, row_major, col_major)
GEMM(wmma_f16_f32_m32n8k16_rc, half, half, float, 32, 8, 16, row_major, col_major)
GEMM(wmma_f16_f16_m8n32k16_rr, half, half, half, 8, 32, 16, row_major, row_major)
GEMM(wmma_bf16_f32_m16n16k16_rc, __nv_bfloat16, __nv_bfloat16, float, 16, 16, 16, row_major, col_major)
GEMM(wmma_bf16_f32_m32n8k16_cc, __nv_bfloat16, __nv_bfloat16, float, 32, 8, 16, col_major, col_major)
GEMM(wmma_tf32_f32_m16n16k8_rc, float, wmma::precision::tf32, float, 16, 16, 8, row_major, col_major)
GEMM(wmma_s8_s32_m16n16k16_rc, signed char, signed char, int, 16, 16, 16, row_major, col_major)
GEMM(wmma_u8_s32_m8n32k16_rc, unsigned char, unsigned char, int, 8, 32, 16, row_major, col_major)
GEMM(wmma_f64_f64_m8n8k4_rc, double, double, double, 8, 8, 4, row_major, col_major)

// ---- layout probe
template <typename T> __device__ unsigned long long bits(T x) { return 0; }
template <> __device__ unsigned long long bits<half>(half x) { return __half_as_ushort(x); }
template <> __device__ unsigned long long bits<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
template <> __device__ unsigned long long bits<float>(float x) { return __float_as_uint(x); }
template <> __device__ unsigned long long bits<int>(int x) { return (unsigned)x; }
template <> __device__ unsigned long long bits<signed char>(signed char x) { return (unsigned char)x; }
template <> __device__ unsigned long long bits<unsigned char>(unsigned char x) { return x; }
template <> __device__ unsigned long long bits<double>(double x) { return __double_as_longlong(x); }

template <typename Frag, typename TE>
__device__ void dump(const Frag& f, unsigned long long* out) {
  int lane = threadIdx.x & 31;
  for (int i = 0; i < f.num_elements; ++i) out[lane * f.num_elements + i] = bits(f.x[i]);
}

template <typename Use, typename TE, typename TF, int M, int N, int K, typename L>
__device__ void layout_ab(const TE* P, const TE* P_hi, unsigned long long* out, unsigned long long* out_hi) {
  wmma::fragment<Use, M, N, K, TF, L> f;
  wmma::load_matrix_sync(f, P, LD);
  dump<decltype(f), TE>(f, out);
  if (P_hi) { wmma::load_matrix_sync(f, P_hi, LD); dump<decltype(f), TE>(f, out_hi); }
}

template <typename TC, int M, int N, int K>
__device__ void layout_c(const TC* P, unsigned long long* out) {
  wmma::fragment<wmma::accumulator, M, N, K, TC> f;
  wmma::load_matrix_sync(f, P, LD, wmma::mem_row_major);
  dump<decltype(f), TC>(f, out);
}

#define LAY_AB(name, USE, TE, TF, M, N, K, L)                                                                    \
  extern "C" __global__ void name(const TE* P, const TE* P_hi, unsigned long long* out, unsigned long long* hi) { \
    layout_ab<wmma::USE, TE, TF, M, N, K, wmma::L>(P, P_hi, out, hi);                                            \
  }
#define LAY_C(name, TC, M, N, K)                                                                                 \
  extern "C" __global__ void name(const TC* P, const TC* P_hi, unsigned long long* out, unsigned long long* hi) { \
    layout_c<TC, M, N, K>(P, out);                                                                               \
  }
#define LAY_SHAPE(tag, TE, TF, M, N, K)                                                                          \
  LAY_AB(lay_a_row_##tag, matrix_a, TE, TF, M, N, K, row_major) LAY_AB(lay_a_col_##tag, matrix_a, TE, TF, M, N, K, col_major) \
  LAY_AB(lay_b_row_##tag, matrix_b, TE, TF, M, N, K, row_major) LAY_AB(lay_b_col_##tag, matrix_b, TE, TF, M, N, K, col_major)
LAY_SHAPE(f16_m16n16k16, half, half, 16, 16, 16)
LAY_SHAPE(f16_m32n8k16, half, half, 32, 8, 16)
LAY_SHAPE(f16_m8n32k16, half, half, 8, 32, 16)
LAY_SHAPE(bf16_m16n16k16, __nv_bfloat16, __nv_bfloat16, 16, 16, 16)
LAY_SHAPE(bf16_m32n8k16, __nv_bfloat16, __nv_bfloat16, 32, 8, 16)
LAY_SHAPE(bf16_m8n32k16, __nv_bfloat16, __nv_bfloat16, 8, 32, 16)
LAY_SHAPE(tf32_m16n16k8, float, wmma::precision::tf32, 16, 16, 8)
LAY_SHAPE(s8_m16n16k16, signed char, signed char, 16, 16, 16)
LAY_SHAPE(s8_m32n8k16, signed char, signed char, 32, 8, 16)
LAY_SHAPE(s8_m8n32k16, signed char, signed char, 8, 32, 16)
LAY_SHAPE(f64_m8n8k4, double, double, 8, 8, 4)
LAY_C(lay_c_f32_m16n16k16, float, 16, 16, 16) LAY_C(lay_c_f32_m32n8k16, float, 32, 8, 16)
LAY_C(lay_c_f32_m8n32k16, float, 8, 32, 16) LAY_C(lay_c_f32_m16n16k8, float, 16, 16, 8)
LAY_C(lay_c_f16_m16n16k16, half, 16, 16, 16) LAY_C(lay_c_f16_m32n8k16, half, 32, 8, 16)
LAY_C(lay_c_f16_m8n32k16, half, 8, 32, 16)
LAY_C(lay_c_s32_m16n16k16, int, 16, 16, 16) LAY_C(lay_c_s32_m32n8k16, int, 32, 8, 16)
LAY_C(lay_c_s32_m8n32k16, int, 8, 32, 16) LAY_C(lay_c_f64_m8n8k4, double, 8, 8, 4)

// ---- mixed accumulator types (probe: the emulator refuses them until an H100 run decides where the conversion
// happens): one warp, D (16 x 16) = A (16 x 16, row-major) B (16 x 16, column-major) + C with C and D of different
// types; matrices as in gemm (LD = 64).
template <typename TD, typename TC>
__device__ void mixed(const half* A, const half* B, const TC* C, TD* D) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, TC> c;
  wmma::fragment<wmma::accumulator, 16, 16, 16, TD> d;
  wmma::load_matrix_sync(a, A, LD);
  wmma::load_matrix_sync(b, B, LD);
  wmma::load_matrix_sync(c, C, LD, wmma::mem_row_major);
  wmma::mma_sync(d, a, b, c);
  wmma::store_matrix_sync(D, d, LD, wmma::mem_row_major);
}
extern "C" __global__ void wmma_mixed_d16_c32(const half* A, const half* B, const float* C, half* D) {
  mixed<half, float>(A, B, C, D);
}
extern "C" __global__ void wmma_mixed_d32_c16(const half* A, const half* B, const half* C, float* D) {
  mixed<float, half>(A, B, C, D);
}
