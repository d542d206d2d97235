// Stages D3 / E1 / E2 verify the production fused GEMV kernel itself: this file only includes it, so the stage's
// source hash (ptxlab.lab.state) covers the production source and graduating D3/E2 graduates exactly that code.
#include "nvfp4_gemv_tcgen05.cu"
