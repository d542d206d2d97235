// ptxlab wrapper for CUTLASS example 71 (examples/71_blackwell_gemm_with_collective_builder/
// 71_blackwell_gemm_with_collective_builder.cu of the installed nvidia-cutlass wheel, #included unchanged): its
// main() runs ten FP16 GEMM kernels (mainloop / epilogue schedules, stage counts, custom EVT) one after another;
// ptxlab_host (example_main_host.cuh) runs main() and captures the launch of the kernel it is asked for.
#include "71_blackwell_gemm_with_collective_builder.cu"
#include "example_main_host.cuh"
