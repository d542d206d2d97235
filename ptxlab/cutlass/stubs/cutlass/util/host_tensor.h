// ptxlab stub of cutlass/util/host_tensor.h for ptxlab.cutlass: the example's global HostTensors become handles to
// device buffers that ptxlab allocated and filled (ptxlab_bind); host-side allocation, fill and copies do nothing
// (the inputs are drawn and the references computed in Python, ptxlab/cutlass/runners.py).
#pragma once
#include <cutlass/cutlass.h>
#include <cutlass/layout/vector.h>
#include <cutlass/tensor_view.h>
#include <cutlass/util/device_memory.h>
namespace cutlass {
template <class Element, class Layout> struct HostTensor {
  Element* ptxlab_dev;
  alignas(16) unsigned char ptxlab_scalar[sizeof(Element) < 16 ? 16 : sizeof(Element)];  // trivially initialized
  void ptxlab_bind(void* p) { ptxlab_dev = static_cast<Element*>(p); }
  template <class C> void reset(C const&, bool = true) {}
  Element* device_data() const { return ptxlab_dev; }
  Element* host_data() const { return nullptr; }
  TensorView<Element, Layout> host_view() const { return TensorView<Element, Layout>(); }
  template <class C> Element& at(C const&) { return *reinterpret_cast<Element*>(ptxlab_scalar); }
  void sync_device() {}
  void sync_host() {}
};
}  // namespace cutlass
