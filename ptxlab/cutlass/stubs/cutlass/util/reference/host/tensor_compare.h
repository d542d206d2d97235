// ptxlab stub: host comparisons (the comparison is done in Python).
#pragma once
namespace cutlass { namespace reference { namespace host {
template <class A, class B> bool TensorEquals(A const&, B const&) { return false; }
}}}
