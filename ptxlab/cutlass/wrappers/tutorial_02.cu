// ptxlab wrapper for CuTe Blackwell tutorial 02 (examples/cute/tutorial/blackwell/02_mma_tma_sm100.cu of the
// installed nvidia-cutlass wheel, #included unchanged). ptxlab_host runs the example's own host function
// gemm_host_f16xf16_f32_f32_tnt on the emulator (NVRTC -default-device makes it device code) with the layouts its
// main() builds; its launch of gemm_device is captured (stubs/cutlass/cluster_launch.hpp) and its TMA descriptors
// hold CuTe's encode inputs (ptxlab_tma_record.cuh). ptxlab/cutlass/capture.py does the rest.
#include "02_mma_tma_sm100.cu"

extern "C" __global__ void ptxlab_host(unsigned char* capture, cutlass::half_t const* A, cutlass::half_t const* B,
                                       float const* C, float* D, int Gemm_M, int Gemm_N, int Gemm_K, float alpha,
                                       float beta) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  ptxlab::capture_buf = capture;
  // as main() of the example
  Layout layout_A = make_layout(make_shape (Gemm_M,   Gemm_K), make_stride(Gemm_K, Int<1>{}));
  Layout layout_B = make_layout(make_shape (Gemm_N,   Gemm_K), make_stride(Gemm_K, Int<1>{}));
  Layout layout_C = make_layout(make_shape (Gemm_M,   Gemm_N), make_stride(Gemm_N, Int<1>{}));
  Layout layout_D = make_layout(make_shape (Gemm_M,   Gemm_N), make_stride(Gemm_N, Int<1>{}));
  gemm_host_f16xf16_f32_f32_tnt(A, layout_A, B, layout_B, C, layout_C, D, layout_D, alpha, beta);
}
