// ptxlab stub of thrust/host_vector.h for NVRTC (host code of the tutorial is parsed, never run).
#pragma once
namespace thrust {
template <class T> struct ptxlab_dptr { T* p; T* get() const { return p; } };
template <class T> struct host_vector {
  T* p = nullptr;
  host_vector() = default;
  explicit host_vector(unsigned long) {}
  template <class V> host_vector(V const&) {}
  T* data() { return p; }
  T const* data() const { return p; }
};
}  // namespace thrust
