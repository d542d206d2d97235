// ptxlab stub of cutlass/util/print_error.hpp (tools/util, host only; not shipped in the wheel's include dir).
#pragma once
#undef CUTE_CHECK_ERROR
#undef CUTE_CHECK_LAST
#define CUTE_CHECK_ERROR(e) (void)(e)
#define CUTE_CHECK_LAST() (void)0
template <class... Ts> double print_matrix_multiply_mollified_relative_error(Ts const&...) { return 0.0; }
// Host runtime API the example's main() names; NVRTC does not declare these.
cudaError_t cudaGetDevice(int*);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp*, int);
const char* cudaGetErrorString(cudaError_t);
template <class T> cudaError_t cudaFuncSetAttribute(T*, cudaFuncAttribute, int);
