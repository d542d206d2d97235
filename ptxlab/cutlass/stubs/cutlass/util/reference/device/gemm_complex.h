// ptxlab stub of the device reference GEMM (complex): see gemm.h.
#pragma once
#include <cutlass/gemm_coord.h>
namespace cutlass { namespace reference { namespace device {
template <class... A> void GemmComplex(gemm::GemmCoord, A const&...) {}
}}}
