// ptxlab stub of the host reference GETT: the reference is a numpy transcription (ptxlab/cutlass/runners.py).
#pragma once
namespace cutlass { namespace reference { namespace host {
enum class SfStrategy { None = 0, SfDGen = 1 };
template <class EA, class TA, class TSFA, class TB, class TSFB> struct GettBlockScalingMainloopParams {
  TA a; TSFA sfa; TB b; TSFB sfb;
};
template <class ES, class EA, class EC, class TC, class TD, class TSFD = TD, class VS = cute::Int<0>,
          SfStrategy S = SfStrategy::None>
struct GettBlockScalingEpilogueParams { ES alpha; ES beta; TC c; TD d; TSFD sfd; EC norm; };
template <class M, class E> void Gemm3x(M&, E&) {}
}}}
