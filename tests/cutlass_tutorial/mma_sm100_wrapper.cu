// ptxlab wrapper: instantiate the kernel of CUTLASS's CuTe Blackwell tutorial 01 (examples/cute/tutorial/blackwell/
// 01_mma_sm100.cu, from the installed nvidia-cutlass wheel) for one concrete configuration, compiled by NVRTC.
//
// The example file is #included unchanged. Its host-only includes (<iostream>, thrust, cutlass/util/print_error.hpp,
// cutlass/cluster_launch.hpp) resolve to the no-op stubs in tests/cutlass_tutorial/stubs (first on the include path):
// NVRTC parses the host code (gemm_host_*, main) but compiles only device code, so declarations suffice.
//
// Configuration (the one gemm_host_f16xf16_f32_f32_tnt builds): A half_t MxK K-major, B half_t NxK K-major,
// C/D float MxN N-major with dynamic (int) extents; SM100_MMA_F16BF16_SS 128x256 K-major/K-major; MMA tiler
// (128, 256, 64); SW128 K-major SMEM atoms; cluster (1,1,1); alpha/beta float.
#ifndef PTXLAB_TUTORIAL_FILE
#define PTXLAB_TUTORIAL_FILE "01_mma_sm100.cu"
#endif
#include PTXLAB_TUTORIAL_FILE

namespace ptxlab_tut {
using TypeA = cutlass::half_t;
using TypeB = cutlass::half_t;
using TypeC = float;
using TypeD = float;

using LayoutMK = decltype(make_layout(make_shape(int{}, int{}), make_stride(int{}, Int<1>{})));  // (M,K):(K,_1)
using TensorA = decltype(make_tensor(make_gmem_ptr(static_cast<TypeA const*>(nullptr)), LayoutMK{}));
using TensorB = decltype(make_tensor(make_gmem_ptr(static_cast<TypeB const*>(nullptr)), LayoutMK{}));
using TensorC = decltype(make_tensor(make_gmem_ptr(static_cast<TypeC const*>(nullptr)), LayoutMK{}));
using TensorD = decltype(make_tensor(make_gmem_ptr(static_cast<TypeD*>(nullptr)), LayoutMK{}));

using TiledMma = decltype(make_tiled_mma(
    SM100_MMA_F16BF16_SS<TypeA, TypeB, TypeC, 128, 256, UMMA::Major::K, UMMA::Major::K>{}));
using MmaTiler = decltype(make_shape(tile_size<0>(TiledMma{}), tile_size<1>(TiledMma{}),
                                     tile_size<2>(TiledMma{}) * Int<4>{}));
using MmaShapeA = decltype(partition_shape_A(TiledMma{}, make_shape(size<0>(MmaTiler{}), size<2>(MmaTiler{}))));
using MmaShapeB = decltype(partition_shape_B(TiledMma{}, make_shape(size<1>(MmaTiler{}), size<2>(MmaTiler{}))));
using SmemLayoutA = decltype(UMMA::tile_to_mma_shape(UMMA::Layout_K_SW128_Atom<TypeA>{}, MmaShapeA{}));
using SmemLayoutB = decltype(UMMA::tile_to_mma_shape(UMMA::Layout_K_SW128_Atom<TypeB>{}, MmaShapeB{}));
using SMEMStorage = SharedStorage<TypeA, TypeB, SmemLayoutA, SmemLayoutB>;
using ClusterShape = decltype(make_shape(Int<1>{}, Int<1>{}, Int<1>{}));
}  // namespace ptxlab_tut

// The kernel itself, instantiated for the configuration above (its PTX .entry is the mangled name of this
// specialization; the test takes it from the module's entry list).
template __global__ void gemm_device<ptxlab_tut::SMEMStorage, ptxlab_tut::TensorA, ptxlab_tut::TensorB,
                                     ptxlab_tut::TensorC, ptxlab_tut::TensorD, ptxlab_tut::MmaTiler,
                                     ptxlab_tut::TiledMma, ptxlab_tut::ClusterShape, float, float>(
    ptxlab_tut::TensorA, ptxlab_tut::TensorB, ptxlab_tut::TensorC, ptxlab_tut::TensorD, ptxlab_tut::MmaTiler,
    ptxlab_tut::TiledMma, ptxlab_tut::ClusterShape, float, float);

// Param/launch facts computed by CuTe itself, for cross-checking the Python-side hand packing:
//   out[0..8)   bytes of a default TiledMma (UMMA::InstrDescriptor idesc_, UMMA::ScaleOut accumulate_)
//   out[8..32)  bytes of TensorA built like gemm_host_f16xf16_f32_f32_tnt does from (ptr, M, K)
//   out[32..36) sizeof(SMEMStorage) (the example's dynamic shared memory bytes)
//   out[36..40) sizeof(TensorA), out[40..44) sizeof(TiledMma)
extern "C" __global__ void ptxlab_tutorial_param_bytes(unsigned char* out, cutlass::half_t const* a, int m, int k) {
  if (threadIdx.x != 0) return;
  ptxlab_tut::TiledMma t{};
  ptxlab_tut::TensorA ta = make_tensor(make_gmem_ptr(a), make_layout(make_shape(m, k), make_stride(k, Int<1>{})));
  unsigned const sizes[3] = {unsigned(sizeof(ptxlab_tut::SMEMStorage)), unsigned(sizeof(ta)), unsigned(sizeof(t))};
  static_assert(sizeof(t) == 8 && sizeof(ta) == 24, "param sizes changed: update build.py packing");
  memcpy(out, &t, sizeof(t));
  memcpy(out + 8, &ta, sizeof(ta));
  memcpy(out + 32, sizes, sizeof(sizes));
}
