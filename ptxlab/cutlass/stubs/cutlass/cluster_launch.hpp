// ptxlab stub of cutlass/cluster_launch.hpp for NVRTC builds of CUTLASS examples (ptxlab.cutlass).
// The example's host code runs on the emulator as device code (NVRTC -default-device); its kernel launch is
// *captured* instead of performed: grid, block, cluster, dynamic shared memory and the bytes of every kernel
// argument go to ptxlab::capture_buf (ptxlab_capture.cuh), and Python launches the kernel with them.
#pragma once
#include <cutlass/cutlass.h>
#include "ptxlab_capture.cuh"
namespace cutlass {
struct ClusterLaunchParams { dim3 grid_dims; dim3 block_dims; dim3 cluster_dims; int smem_size_in_bytes; };
template <class... Args> Status launch_kernel_on_cluster(ClusterLaunchParams const& p, void const*, Args&&... args) {
  ptxlab::capture_launch(p.grid_dims, p.block_dims, p.cluster_dims, p.smem_size_in_bytes, args...);
  return Status::kSuccess;
}
// GemmUniversalAdapter's cluster launches: kernel_params[0] points at the kernel's Params (one argument).
struct ClusterLauncher {
  static Status launch(dim3, dim3, dim3, size_t, cudaStream_t, void const*, void**, bool = false) {
    printf("ptxlab: ClusterLauncher::launch needs the Params type: not captured\n");
    asm volatile("trap;");
    return Status::kErrorInternal;
  }
  static Status launch_with_fallback_cluster(dim3, dim3, dim3, dim3, size_t, cudaStream_t, void const*, void**,
                                             bool = false) {
    printf("ptxlab: ClusterLauncher::launch_with_fallback_cluster is not captured (dynamic cluster shapes)\n");
    asm volatile("trap;");
    return Status::kErrorInternal;
  }
};
}  // namespace cutlass
