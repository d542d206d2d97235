// ptxlab wrapper for CUTLASS example 48 (examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu
// of the installed nvidia-cutlass wheel, #included unchanged): Hopper FP32 (TF32 wgmma) GEMM, warp-specialized,
// 4x2 cluster, persistent tile scheduler over the SM count its args_from_options queries. Host entry:
// example_gemm_host.cuh; extra = {swizzle, SM count}.
#define PTXLAB_OPTIONS options.swizzle = extra[0]; ptxlab::cc_major = 9; ptxlab::sm_count = extra[1];
#include "48_hopper_warp_specialized_gemm.cu"
#include "example_gemm_host.cuh"
