// ptxlab stub of cutlass/util/device_memory.h: the workspace is ptxlab's buffer (ptxlab::workspace, size recorded).
#pragma once
#include "ptxlab_capture.cuh"
namespace cutlass { namespace device_memory {
template <class T> struct allocation {
  explicit allocation(size_t n = 0) { ptxlab::workspace_bytes = n * sizeof(T); }
  T* get() const { return reinterpret_cast<T*>(ptxlab::workspace); }
};
}}  // namespace cutlass::device_memory
