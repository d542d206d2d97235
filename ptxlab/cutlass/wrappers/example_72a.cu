// ptxlab wrapper for CUTLASS example 72a (examples/72_blackwell_narrow_precision_gemm/72a_blackwell_nvfp4_bf16_gemm.cu
// of the installed nvidia-cutlass wheel, #included unchanged); host entry: example_72ac_host.cuh.
#include "72a_blackwell_nvfp4_bf16_gemm.cu"
#include "example_72ac_host.cuh"
