// ptxlab: the host entry of the 72a / 72c wrappers (same globals and run<Gemm>() in both examples; see
// example_72b.cu for the scheme). Their 2x4 clusters make GemmUniversalAdapter launch through
// ClusterLauncher::launch_with_fallback_cluster(..., void** kernel_params): the capturing stub copies params_bytes
// bytes (the .entry's parameter size, from Python) of the Params it points at.
#pragma once
extern "C" __global__ void ptxlab_host(unsigned char* capture, void* workspace, unsigned params_bytes, void* A,
                                       void* B, void* SFA, void* SFB, void* C, void* D, int m, int n, int k,
                                       float alpha, float beta, int swizzle) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  ptxlab::capture_buf = capture;
  ptxlab::workspace = workspace;
  ptxlab::params_bytes = params_bytes;
  block_A.ptxlab_bind(A);
  block_B.ptxlab_bind(B);
  block_SFA.ptxlab_bind(SFA);
  block_SFB.ptxlab_bind(SFB);
  block_C.ptxlab_bind(C);
  block_D.ptxlab_bind(D);
  Options options;
  options.m = m;
  options.n = n;
  options.k = k;
  options.alpha = alpha;
  options.beta = beta;
  options.swizzle = swizzle;
  options.iterations = 0;
  run<Gemm>(options);
}
