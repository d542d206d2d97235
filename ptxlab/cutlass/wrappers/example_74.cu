// ptxlab wrapper for CUTLASS example 74 (examples/74_blackwell_gemm_streamk/blackwell_gemm_streamk.cu of the
// installed nvidia-cutlass wheel, #included unchanged): FP16 GEMM with the stream-K tile scheduler; its main() runs
// with the command line Python builds (decomposition mode, splits, cluster shape: example_main_host.cuh).
#include "blackwell_gemm_streamk.cu"
#include "example_main_host.cuh"
