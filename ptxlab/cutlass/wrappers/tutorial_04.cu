// ptxlab wrapper for CuTe Blackwell tutorial 04 (examples/cute/tutorial/blackwell/04_mma_tma_2sm_sm100.cu of the installed
// nvidia-cutlass wheel, #included unchanged); the host entry is tutorial_host.cuh.
#include "04_mma_tma_2sm_sm100.cu"
#include "tutorial_host.cuh"
