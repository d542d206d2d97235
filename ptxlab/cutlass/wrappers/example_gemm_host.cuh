// ptxlab: the host entry of the wrappers of CUTLASS 3.x GEMM examples whose main() calls run<Gemm>(options) on
// global DeviceAllocations (70, 74, 48): ptxlab_host hands the example the buffers Python allocated and filled
// (stubs/cutlass/util/device_memory.h: each DeviceAllocation::reset takes the next one, in the order of the
// example's initialize()), sets the Options fields main() would parse, and runs the example's own run<Gemm>():
// initialize(), args_from_options(), can_implement, initialize(), run(); the launch is captured and ends the host
// code (stubs/cutlass/kernel_launch.h, stubs/cutlass/cluster_launch.hpp). PTXLAB_OPTIONS, if defined, sets
// example-specific options from the int array `extra`.
#pragma once
extern "C" __global__ void ptxlab_host(unsigned char* capture, void* workspace, unsigned params_bytes,
                                       unsigned long long const* allocs, unsigned nallocs, int m, int n, int k,
                                       float alpha, float beta, int const* extra) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  ptxlab::capture_buf = capture;
  ptxlab::workspace = workspace;
  ptxlab::params_bytes = params_bytes;
  ptxlab::bind_allocations(allocs, nallocs);
  Options options;                 // the example's options, as main() would parse them
  options.m = m;
  options.n = n;
  options.k = k;
  options.alpha = alpha;
  options.beta = beta;
  options.iterations = 0;
#ifdef PTXLAB_OPTIONS
  PTXLAB_OPTIONS
#endif
  (void)extra;
  run<Gemm>(options);
}
