// ptxlab: the host entry of the wrappers that run a CUTLASS example's own main() (71, 49: several kernels one after
// another). ptxlab_host gives main() the command line Python built (argc NUL-terminated strings in `args`:
// stubs/cutlass/util/command_line.h parses them), the device it asks about (compute capability, SM count:
// stubs/ptxlab_prelude.cuh), the buffers its DeviceAllocations take (stubs/cutlass/util/device_memory.h, the same
// list for every kernel) and the number of launches to pass over: launch number `skip` (0-based) is captured and
// ends the host code (stubs/ptxlab_capture.cuh); the ones before it return success without running, so main()
// goes on to its next kernel exactly as it would after a verified run.
#pragma once
extern "C" __global__ void ptxlab_host(unsigned char* capture, void* workspace, unsigned params_bytes,
                                       unsigned long long const* allocs, unsigned nallocs, char const* args, int argc,
                                       unsigned skip, int cc, int sm_count) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  ptxlab::capture_buf = capture;
  ptxlab::workspace = workspace;
  ptxlab::params_bytes = params_bytes;
  ptxlab::bind_allocations(allocs, nallocs);
  ptxlab::launch_skip = skip;
  ptxlab::cc_major = cc / 10;
  ptxlab::cc_minor = cc % 10;
  ptxlab::sm_count = sm_count;
  char const* argv[16];
  if (argc > 16) asm volatile("trap;");
  for (int i = 0; i < argc; ++i) {
    argv[i] = args;
    while (*args) ++args;
    ++args;
  }
  ptxlab_example_main_unused(argc, argv);
}
