// ptxlab wrapper for CuTe Blackwell tutorial 03 (examples/cute/tutorial/blackwell/03_mma_tma_multicast_sm100.cu of the installed
// nvidia-cutlass wheel, #included unchanged); the host entry is tutorial_host.cuh.
#include "03_mma_tma_multicast_sm100.cu"
#include "tutorial_host.cuh"
