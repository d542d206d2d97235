// ptxlab: record of CuTe's cuTensorMapEncodeTiled inputs under NVRTC (ptxlab.cutlass).
// CuTe's make_tma_copy_desc (cute/atom/copy_traits_sm90_tma.hpp) computes every input of cuTensorMapEncodeTiled on
// the host and calls the driver inside `#if !defined(__CUDACC_RTC__)`. ptxlab's build generates a copy of that
// header whose NVRTC branch calls ptxlab::record_tma_encode instead: the 128-byte TmaDescriptor then holds the
// encode inputs (layout below) and ptxlab/cutlass/capture.py turns each one into a real tensor map.
//   u32 magic 0x434E4554 ('TENC'), u8 format (CUtensorMapDataType), u8 rank, u8 swizzle bits, u8 swizzle base,
//   u64 global address, u64 dims[5], u64 strides[4] (bytes, dims 1..4), u16 box[5], u8 element strides[5],
//   u8 l2 promotion, u8 oob fill                                                       (= 105 bytes)
#pragma once
#include <cute/numeric/numeric_types.hpp>
namespace ptxlab {
// the CUtensorMapDataType CuTe's TMA::to_CUtensorMapDataType<T>() chooses (cute/arch/copy_sm90_desc.hpp)
template <class T> __device__ constexpr unsigned char tma_format_code() {
  using namespace cute;
  if constexpr (is_same_v<T, int8_t> || is_same_v<T, uint8_t> || is_same_v<T, float_e4m3_t> ||
                is_same_v<T, float_e5m2_t> || is_same_v<T, float_ue8m0_t> ||
                is_same_v<T, type_erased_dynamic_float8_t>) return 0;          // UINT8
  else if constexpr (is_same_v<T, uint16_t>) return 1;
  else if constexpr (is_same_v<T, uint32_t>) return 2;
  else if constexpr (is_same_v<T, int32_t>) return 3;
  else if constexpr (is_same_v<T, uint64_t>) return 4;
  else if constexpr (is_same_v<T, int64_t>) return 5;
  else if constexpr (is_same_v<T, half_t>) return 6;
  else if constexpr (is_same_v<T, float>) return 7;
  else if constexpr (is_same_v<T, double>) return 8;
  else if constexpr (is_same_v<T, bfloat16_t>) return 9;
  else if constexpr (is_same_v<T, tfloat32_t>) return 11;
  else if constexpr (is_same_v<T, float_e2m1_t> || is_same_v<T, type_erased_dynamic_float4_t>) return 13;
  else if constexpr (is_same_v<T, detail::float_e2m1_unpacksmem_t> ||
                     is_same_v<T, detail::type_erased_dynamic_float4_unpacksmem_t>) return 14;
  else if constexpr (is_same_v<T, float_e2m3_t> || is_same_v<T, float_e3m2_t> ||
                     is_same_v<T, type_erased_dynamic_float6_t> || is_same_v<T, detail::float_e2m3_unpacksmem_t> ||
                     is_same_v<T, detail::float_e3m2_unpacksmem_t> ||
                     is_same_v<T, detail::type_erased_dynamic_float6_unpacksmem_t>) return 15;
  else return 255;   // CuTe has no TMA format for T either (static_assert there): capture.py reports it
}

template <class T, class Desc, class Arr64, class Arr32>
__device__ void record_tma_encode(Desc* desc, unsigned rank, void const* gaddr, Arr64 const& shape,
                                  Arr64 const& stride_bytes, Arr32 const& box, Arr32 const& estride,
                                  unsigned swz_bits, unsigned swz_base, unsigned l2, unsigned oob) {
  unsigned char* d = reinterpret_cast<unsigned char*>(desc);
  for (int i = 0; i < 128; ++i) d[i] = 0;
  auto put = [&](int off, unsigned long long v, int n) { for (int i = 0; i < n; ++i) d[off + i] = (unsigned char)(v >> (8 * i)); };
  put(0, 0x434E4554u, 4);
  put(4, tma_format_code<T>(), 1); put(5, rank, 1); put(6, swz_bits, 1); put(7, swz_base, 1);
  put(8, reinterpret_cast<unsigned long long>(gaddr), 8);
  for (int i = 0; i < 5; ++i) put(16 + 8 * i, shape[i], 8);
  // byte strides: CuTe has already converted them (stride * sizeof_bits<T> / 8) before its encode call
  for (int i = 1; i < 5; ++i) put(56 + 8 * (i - 1), stride_bytes[i], 8);
  for (int i = 0; i < 5; ++i) put(88 + 2 * i, box[i], 2);
  for (int i = 0; i < 5; ++i) put(98 + i, estride[i], 1);
  put(103, l2, 1); put(104, oob, 1);
}
}  // namespace ptxlab
