// ptxlab stub: host norms (the comparison is done in Python).
#pragma once
namespace cutlass { namespace reference { namespace host {
template <class V> double TensorNorm(V const&) { return 0.0; }
}}}
