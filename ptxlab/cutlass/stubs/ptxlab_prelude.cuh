// ptxlab: pre-included in NVRTC builds of CUTLASS examples (ptxlab/cutlass/build.py, NVRTC -include).
// 1. std:: type traits for CUTLASS headers that expect a host <type_traits>; 2. the CUDA runtime calls an example's
// host code makes around its launch, as no-ops (the host code runs as device code on the emulator; see capture.py).
// Some CUTLASS headers (packed_stride.hpp, sm100_simt_builder.inl, sm90 epilogues, linear_combination_bias_elementwise.h)
// name std:: type traits that only a host <type_traits> provides; under NVRTC they come from libcu++ (cuda::std).
#pragma once
#include <cuda/std/type_traits>
#include <cuda/std/cstdint>
namespace std {
using ::cuda::std::conditional_t;
using ::cuda::std::enable_if_t;
using ::cuda::std::is_integral_v;
using ::cuda::std::is_pointer_v;
using ::cuda::std::is_same_v;
using ::cuda::std::is_const_v;
using ::cuda::std::remove_cv_t;
using ::cuda::std::remove_reference_t;
using ::cuda::std::decay_t;
using ::cuda::std::void_t;
using ::cuda::std::is_void_v;
using ::cuda::std::is_base_of_v;
using ::cuda::std::is_unsigned_v;
using ::cuda::std::is_signed_v;
using ::cuda::std::is_floating_point_v;
}  // namespace std

// 2. runtime calls of the examples' host code (the captured launch ends it before anything after the launch runs);
// the device the example asks about is the one ptxlab_host describes (compute capability and SM count from Python)
namespace ptxlab {
__device__ int cc_major = 10;
__device__ int cc_minor = 0;
__device__ int sm_count = 148;
}  // namespace ptxlab
inline cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
  p->major = ptxlab::cc_major;
  p->minor = ptxlab::cc_minor;
  p->multiProcessorCount = ptxlab::sm_count;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int) {
  if (a != cudaDevAttrMultiProcessorCount) { printf("ptxlab: cudaDeviceGetAttribute(%d) is not modelled\n", int(a)); asm volatile("trap;"); }
  *v = ptxlab::sm_count;
  return cudaSuccess;
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline const char* cudaGetErrorString(cudaError_t) { return ""; }
inline cudaError_t cudaFuncSetAttribute(const void*, cudaFuncAttribute, int) { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline void exit(int) { asm volatile("trap;"); }
