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
  // kernel_params[0] points at the kernel's Params; its size (ptxlab::params_bytes) comes from the .entry's parameter
  // layout, which Python passes to ptxlab_host (the stub has no Params type here)
  static Status launch(dim3 grid, dim3 cluster, dim3 block, size_t smem, cudaStream_t, void const*,
                       void** kernel_params, bool pdl = false) {
    return ptxlab_capture(grid, cluster, block, smem, kernel_params, pdl);
  }
  static Status launch_with_fallback_cluster(dim3 grid, dim3 cluster, dim3 fallback, dim3 block, size_t smem,
                                             cudaStream_t, void const*, void** kernel_params, bool pdl = false) {
    // a preferred cluster shape with a different fallback (dynamic clusters) is not modelled; when both agree (or
    // there is no fallback) the launch is a plain cluster launch
    bool same = fallback.x == cluster.x && fallback.y == cluster.y && fallback.z == cluster.z;
    if (fallback.x * fallback.y * fallback.z > 1 && !same) {
      printf("ptxlab: a preferred cluster shape with a different fallback (dynamic clusters) is not captured\n");
      asm volatile("trap;");
    }
    return ptxlab_capture(grid, cluster, block, smem, kernel_params, pdl);
  }
  static Status ptxlab_capture(dim3 grid, dim3 cluster, dim3 block, size_t smem, void** kernel_params, bool pdl) {
    if (ptxlab::skip_launch()) return Status::kSuccess;
    ptxlab::capture_pdl = pdl;
    ptxlab::capture_launch_raw(grid, block, cluster, int(smem), kernel_params[0], ptxlab::params_bytes);
    ptxlab::capture_done();
    return Status::kSuccess;
  }
};
}  // namespace cutlass
