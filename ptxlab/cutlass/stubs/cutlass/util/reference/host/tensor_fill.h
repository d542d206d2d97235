// ptxlab stub: host fills do nothing (inputs are drawn in Python with the example's distributions).
#pragma once
namespace cutlass { namespace reference { namespace host {
template <class... T> void TensorFillRandomUniform(T const&...) {}
template <class... T> void TensorFill(T const&...) {}
}}}
