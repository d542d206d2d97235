// half_math.cu — the cuda_fp16.h math functions whose inline PTX declares registers without '%' and with no space
// after '.reg' ('{.reg.b16 h, r; mov.b16 h, %rs2; ...}', cuda_fp16.hpp): the LeetCUDA f16 sigmoid / swish / elu /
// gelu kernels stopped on them (ptx_docs/timing_validation.md "Round 2").  blockDim.x = 64, one block per function.
//
// extern "C" __global__ void half_math(const __half* x, unsigned short* y, int n)
//   Function f = blockIdx.x (order: f1 below) of x[f * n + i] for i = threadIdx.x .. n step 64, its __half bits
//   written to y[f * n + i]; blockIdx.x = NFUNC.. : the __half2 forms of the first six on
//   pairs (x[2k], x[2k+1]) of the same rows.
#include <cuda_fp16.h>

__device__ __half f1(int f, __half v) {
  switch (f) {
    case 0: return hexp(v);
    case 1: return hexp2(v);
    case 2: return hexp10(v);
    case 3: return hlog(v);
    case 4: return hlog2(v);
    case 5: return hlog10(v);
    case 6: return hrsqrt(v);
    case 7: return hrcp(v);
    case 8: return hsqrt(v);
    case 9: return hsin(v);
    default: return hcos(v);
  }
}

__device__ __half2 f2(int f, __half2 v) {
  switch (f) {
    case 0: return h2exp(v);
    case 1: return h2exp2(v);
    case 2: return h2exp10(v);
    case 3: return h2log(v);
    case 4: return h2log2(v);
    default: return h2log10(v);
  }
}

extern "C" __global__ void half_math(const __half* x, unsigned short* y, int n) {
  const int NFUNC = 11;
  int f = blockIdx.x;
  if (f < NFUNC) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) y[f * n + i] = __half_as_ushort(f1(f, x[f * n + i]));
  } else {
    int g = f - NFUNC;
    for (int k = threadIdx.x; k < n / 2; k += blockDim.x) {
      __half2 r = f2(g, __halves2half2(x[g * n + 2 * k], x[g * n + 2 * k + 1]));
      y[f * n + 2 * k] = __half_as_ushort(__low2half(r));
      y[f * n + 2 * k + 1] = __half_as_ushort(__high2half(r));
    }
  }
}
