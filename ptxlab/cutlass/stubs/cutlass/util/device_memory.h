// ptxlab stub of cutlass/util/device_memory.h (tools/util, host only) for ptxlab.cutlass builds.
// * device_memory::allocation (the GEMM workspace) is ptxlab's workspace buffer (ptxlab::workspace, size recorded).
// * DeviceAllocation (the examples' block_A, block_B, ...): each reset(n) takes the next buffer of the list Python
//   passed to ptxlab_host (ptxlab::bind_allocations), in the order the example's initialize() allocates them, and
//   stops the host code if the example asks for more bytes than that buffer has (the list repeats, see below). No constructor or destructor with
//   code: the examples declare them as globals, which NVRTC makes __device__ variables.
#pragma once
#include <cutlass/cutlass.h>
#include <cutlass/numeric_size.h>
#include "ptxlab_capture.cuh"
namespace ptxlab {
__device__ unsigned long long const* alloc_list = nullptr;   // (address, bytes) pairs
__device__ unsigned alloc_count = 0;
__device__ unsigned alloc_next = 0;
__device__ inline void bind_allocations(unsigned long long const* list, unsigned n) {
  alloc_list = list; alloc_count = n; alloc_next = 0;
}
// the list repeats: an example whose main() runs several kernels one after another (each with its own
// allocations, the earlier launches passed over: ptxlab::launch_skip) gets the same buffers in each
__device__ inline void* next_allocation(unsigned long long bytes) {
  if (alloc_count == 0) {
    printf("ptxlab: the example allocates a DeviceAllocation, ptxlab_host was given no buffers\n");
    asm volatile("trap;");
  }
  unsigned i = alloc_next++ % alloc_count;
  if (bytes > alloc_list[2 * i + 1]) {
    printf("ptxlab: DeviceAllocation #%u asks for %llu bytes, its buffer has %llu\n", i, bytes, alloc_list[2 * i + 1]);
    asm volatile("trap;");
  }
  return reinterpret_cast<void*>(alloc_list[2 * i]);
}
}  // namespace ptxlab
namespace cutlass {
namespace device_memory {
template <class T> struct allocation {
  explicit allocation(size_t n = 0) { ptxlab::workspace_bytes = n * sizeof(T); }
  T* get() const { return reinterpret_cast<T*>(ptxlab::workspace); }
};
// host <-> device copies: "host" data of the example's host code lives in emulator memory too
template <class T> void copy_to_device(T* dst, T const* src, size_t count = 1) {
  memcpy(dst, src, count * sizeof_bits<T>::value / 8);
}
template <class T> void copy_to_host(T* dst, T const* src, size_t count = 1) { copy_to_device(dst, src, count); }
template <class T> void copy_device_to_device(T* dst, T const* src, size_t count = 1) { copy_to_device(dst, src, count); }
}  // namespace device_memory
template <class T> class DeviceAllocation {
 public:
  T* ptxlab_ptr;
  size_t capacity;
  static size_t bytes(size_t n) { return n * sizeof_bits<T>::value / 8; }
  T* get() const { return ptxlab_ptr; }
  void reset() { ptxlab_ptr = nullptr; capacity = 0; }
  void reset(size_t n) { ptxlab_ptr = static_cast<T*>(ptxlab::next_allocation(bytes(n))); capacity = n; }
  size_t size() const { return capacity; }
  size_t bytes() const { return bytes(capacity); }
  void copy_from_host(T const* p) const { device_memory::copy_to_device(ptxlab_ptr, p, capacity); }
  void copy_from_host(T const* p, size_t n) const { device_memory::copy_to_device(ptxlab_ptr, p, n); }
  void copy_from_device(T const* p) const { device_memory::copy_to_device(ptxlab_ptr, p, capacity); }
  void copy_from_device(T const* p, size_t n) const { device_memory::copy_to_device(ptxlab_ptr, p, n); }
  void copy_to_host(T* p) const { device_memory::copy_to_host(p, ptxlab_ptr, capacity); }
  void copy_to_host(T* p, size_t n) const { device_memory::copy_to_host(p, ptxlab_ptr, n); }
};
}  // namespace cutlass
