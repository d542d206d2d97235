// ptxlab wrapper for CUTLASS example 70 (examples/70_blackwell_gemm/70_blackwell_fp16_gemm.cu of the installed
// nvidia-cutlass wheel, #included unchanged): FP16 x FP16 -> F32 GEMM, 2-SM 256x128 MMA tiles, 2x2 cluster, CLC
// tile scheduler. Host entry: example_gemm_host.cuh.
#define PTXLAB_OPTIONS options.swizzle = extra[0];
#include "70_blackwell_fp16_gemm.cu"
#include "example_gemm_host.cuh"
