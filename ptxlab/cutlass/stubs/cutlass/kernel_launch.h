// ptxlab stub of cutlass/kernel_launch.h (host launch helpers): cutlass::kernel_launch captures the launch of
// device_kernel<GemmKernel> (grid, block, dynamic SMEM, the Params bytes, PDL) and ends the host code there.
#pragma once
#include "cutlass/cutlass.h"
#include "cutlass/trace.h"
#include "cutlass/device_kernel.h"
#include "ptxlab_capture.cuh"
namespace cutlass {
struct KernelLaunchConfiguration {
  dim3 grid; dim3 block; size_t dynamic_smem;
  CUTLASS_HOST_DEVICE KernelLaunchConfiguration(dim3 g = dim3(1,1,1), dim3 b = dim3(1,1,1), size_t s = 0)
    : grid(g), block(b), dynamic_smem(s) {}
};
template <typename GemmKernel, typename Params>
Status kernel_launch(dim3 const grid_dims, dim3 const block_dims, size_t const smem_size, cudaStream_t,
                     const Params& kernel_params, bool launch_with_pdl) {
  void const* kernel = (void const*) device_kernel<GemmKernel>;   // the .entry ptxlab launches
  (void)kernel;
  if (ptxlab::skip_launch()) return Status::kSuccess;
  ptxlab::capture_pdl = launch_with_pdl;
  ptxlab::capture_launch(grid_dims, block_dims, dim3(1, 1, 1), int(smem_size), kernel_params);
  ptxlab::capture_done();
  return Status::kSuccess;
}
}  // namespace cutlass
