// ptxlab wrapper for CuTe Blackwell tutorial 02 (examples/cute/tutorial/blackwell/02_mma_tma_sm100.cu of the installed
// nvidia-cutlass wheel, #included unchanged); the host entry is tutorial_host.cuh.
#include "02_mma_tma_sm100.cu"
#include "tutorial_host.cuh"
