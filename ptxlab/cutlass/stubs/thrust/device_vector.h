// ptxlab stub of thrust/device_vector.h for NVRTC (host code of the tutorial is parsed, never run).
#pragma once
#include <thrust/host_vector.h>
namespace thrust {
template <class T> struct device_vector {
  T* p = nullptr;
  explicit device_vector(unsigned long) {}
  template <class V> device_vector(V const&) {}
  ptxlab_dptr<T> data() { return ptxlab_dptr<T>{p}; }
};
}  // namespace thrust
