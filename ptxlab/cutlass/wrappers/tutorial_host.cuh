// ptxlab: the host entry shared by the CuTe Blackwell tutorial wrappers (tutorial_0N.cu #include the example file
// from the wheel, then this). ptxlab_host runs the example's own host function gemm_host_f16xf16_f32_f32_tnt on
// the emulator (NVRTC -default-device makes it device code) with the layouts its main() builds; its launch of
// gemm_device is captured (stubs/cutlass/cluster_launch.hpp) and its TMA descriptors hold CuTe's encode inputs
// (stubs/ptxlab_tma_record.cuh). ptxlab/cutlass/capture.py and runners.py do the rest.
#pragma once
extern "C" __global__ void ptxlab_host(unsigned char* capture, cutlass::half_t const* A, cutlass::half_t const* B,
                                       float const* C, float* D, int Gemm_M, int Gemm_N, int Gemm_K, float alpha,
                                       float beta) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  ptxlab::capture_buf = capture;
  // as main() of the examples
  Layout layout_A = make_layout(make_shape (Gemm_M,   Gemm_K), make_stride(Gemm_K, Int<1>{}));
  Layout layout_B = make_layout(make_shape (Gemm_N,   Gemm_K), make_stride(Gemm_K, Int<1>{}));
  Layout layout_C = make_layout(make_shape (Gemm_M,   Gemm_N), make_stride(Gemm_N, Int<1>{}));
  Layout layout_D = make_layout(make_shape (Gemm_M,   Gemm_N), make_stride(Gemm_N, Int<1>{}));
  gemm_host_f16xf16_f32_f32_tnt(A, layout_A, B, layout_B, C, layout_C, D, layout_D, alpha, beta);
}
