// ptxlab wrapper for CUTLASS example 72c (examples/72_blackwell_narrow_precision_gemm/72c_blackwell_mixed_mxfp8_bf16_gemm.cu
// of the installed nvidia-cutlass wheel, #included unchanged); host entry: example_72ac_host.cuh.
#include "72c_blackwell_mixed_mxfp8_bf16_gemm.cu"
#include "example_72ac_host.cuh"
