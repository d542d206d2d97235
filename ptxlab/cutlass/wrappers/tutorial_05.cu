// ptxlab wrapper for CuTe Blackwell tutorial 05 (examples/cute/tutorial/blackwell/05_mma_tma_epi_sm100.cu of the installed
// nvidia-cutlass wheel, #included unchanged); the host entry is tutorial_host.cuh.
#include "05_mma_tma_epi_sm100.cu"
#include "tutorial_host.cuh"
