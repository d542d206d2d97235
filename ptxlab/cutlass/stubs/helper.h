// ptxlab stub of examples/common/helper.h (host-only checks and timer) for ptxlab.cutlass builds.
#pragma once
#include <cutlass/cutlass.h>
#define CUTLASS_CHECK(status)                                                                          \
  {                                                                                                    \
    cutlass::Status ptxlab_error = status;                                                             \
    if (ptxlab_error != cutlass::Status::kSuccess) {                                                   \
      printf("ptxlab: CUTLASS status %d at %s:%d\n", int(ptxlab_error), __FILE__, __LINE__);           \
      asm volatile("trap;");                                                                           \
    }                                                                                                  \
  }
#define CUDA_CHECK(status) (void)(status)
struct GpuTimer { void start() {} void stop() {} float elapsed_millis() { return 0.f; } };
