// ptxlab stub: device fills do nothing (inputs are drawn in Python with the example's distributions).
#pragma once
namespace cutlass { namespace reference { namespace device {
template <class... T> void BlockFillRandomUniform(T const&...) {}
template <class... T> void BlockFillRandomGaussian(T const&...) {}
template <class... T> void BlockFillSequential(T const&...) {}
template <class... T> void TensorFillRandomUniform(T const&...) {}
template <class... T> void TensorFillRandomGaussian(T const&...) {}
}}}
