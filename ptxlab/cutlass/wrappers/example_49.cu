// ptxlab wrapper for CUTLASS example 49 (examples/49_hopper_gemm_with_collective_builder/49_collective_builder.cu of
// the installed nvidia-cutlass wheel, #included unchanged): its main() runs seven Hopper FP16 GEMM kernels
// (schedules, stage counts, stream-K, custom EVT) one after another; ptxlab_host (example_main_host.cuh) runs
// main() and captures the launch of the kernel it is asked for.
#include "49_collective_builder.cu"
#include "example_main_host.cuh"
