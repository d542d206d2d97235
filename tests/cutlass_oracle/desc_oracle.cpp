// CUTLASS/CuTe oracle for ptxlab.desc: encodes tcgen05 SMEM and instruction descriptors with CUTLASS's own
// unions and helpers (UMMA::make_umma_desc, make_instr_desc, make_runtime_instr_desc_block_scaled) and prints
// the bits plus, for every SMEM descriptor, the swizzled byte address CuTe computes for each (row, k) of the
// MMA operand tile.  Host-only build: g++ -std=c++17 -I<cutlass include> -I<cuda include> -I<cuda include>/cccl
//
// Built once per ORACLE_PART (1: K-major SMEM, 2: MN-major SMEM, 3: instruction descriptors) so the three
// translation units compile in parallel; each part prints its share of the records.
//
// Output lines (one record per line, whitespace separated):
//   SMEM <type> <major> <swizzle> <bits> <MN> <K> <order> <kblock> <base> <desc hex> <d0> <d1> <addr...(hex)>
//        addresses are row-major over the uint8 view of the K-slice: K-major (row, byte along K) = MN x 32;
//        MN-major (byte along MN, K row) = MN*bits/8 x (256/bits)
//   IDESC <kind> <a> <b> <d> <scale> <M> <N> <a_major> <b_major> <neg_a> <neg_b> <sfa_id> <sfb_id> <hex>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <utility>

// On the host CuTe cannot convert a generic pointer to a shared-window address; use the pointer value itself
// (the fake "smem" pointers below are small integers that are never dereferenced).
#define CUTE_CVTA_GENERIC_TO_SHARED_ACTIVATED 1
static inline size_t __cvta_generic_to_shared(const void* p) { return (size_t)(uintptr_t)p; }

#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm100.hpp>

using namespace cute;
using UMMA::Major;

template <class Atom, class T, Major Mj, int MN, int K, bool KFirst>
void smem_case(const char* tname, const char* sw, uintptr_t base) {
  constexpr int bits = sizeof_bits_v<T>;
  using Order = std::conditional_t<KFirst, Step<_2, _1>, Step<_1, _2>>;
  auto L = tile_to_shape(Atom{}, make_shape(Int<MN>{}, Int<K>{}), Order{});
  auto t = make_tensor(recast_ptr<T>(make_smem_ptr(reinterpret_cast<uint8_t*>(base))), L);
  constexpr int KMMA = 256 / bits;  // one MMA reads 32 bytes of K
  for (int kb = 0; kb < K / KMMA; ++kb) {
    auto sub = local_tile(t, make_shape(Int<MN>{}, Int<KMMA>{}), make_coord(0, kb));
    UMMA::SmemDescriptor d = UMMA::make_umma_desc<Mj>(sub);
    auto u8 = recast<uint8_t>(sub);
    using Swz = get_swizzle_t<std::decay_t<decltype(u8.data())>>;
    int d0 = int(size<0>(u8)), d1 = int(size<1>(u8));
    printf("SMEM %s %s %s %d %d %d %s %d %lu 0x%016llx %d %d", tname, Mj == Major::K ? "K" : "MN", sw, bits, MN, K,
           KFirst ? "k" : "mn", kb, (unsigned long)base, (unsigned long long)uint64_t(d), d0, d1);
    for (int i = 0; i < d0; ++i)
      for (int j = 0; j < d1; ++j) {
        auto p = raw_pointer_cast(u8.data() + u8.layout()(i, j));
        printf(" %lx", (unsigned long)Swz::apply(reinterpret_cast<uintptr_t>(p)));
      }
    printf("\n");
  }
}

// K-major: all four swizzles, two tilings each (MN=128 atoms along MN first; MN=24 atoms along K first).
template <class T>
void smem_k(const char* n) {
  constexpr int E = 8 / sizeof_bits_v<T> > 0 ? 8 / sizeof_bits_v<T> : 1;  // elements per byte (fp4: 2)
  constexpr int D = sizeof_bits_v<T> >= 8 ? sizeof_bits_v<T> / 8 : 1;    // bytes per element
  constexpr int e64 = 64 * E / D, e128 = 128 * E / D, e256 = 256 * E / D;
  smem_case<UMMA::Layout_K_INTER_Atom<T>, T, Major::K, 128, e64, false>(n, "NONE", 0x4000);
  smem_case<UMMA::Layout_K_INTER_Atom<T>, T, Major::K, 24, e64, true>(n, "NONE", 0x800);
  smem_case<UMMA::Layout_K_SW32_Atom<T>, T, Major::K, 128, e64, false>(n, "32B", 0x2000);
  smem_case<UMMA::Layout_K_SW32_Atom<T>, T, Major::K, 24, e64, true>(n, "32B", 0x300);
  smem_case<UMMA::Layout_K_SW64_Atom<T>, T, Major::K, 128, e128, false>(n, "64B", 0x6000);
  smem_case<UMMA::Layout_K_SW64_Atom<T>, T, Major::K, 24, e128, true>(n, "64B", 0x600);
  smem_case<UMMA::Layout_K_SW128_Atom<T>, T, Major::K, 128, e256, false>(n, "128B", 0x8000);
  smem_case<UMMA::Layout_K_SW128_Atom<T>, T, Major::K, 24, e256, true>(n, "128B", 0x1c00);
}

// MN-major (8/16/32-bit types): two MMA K-slices, MN spans two swizzle atoms (and one, for 8-bit SW128).
template <class T>
void smem_mn(const char* n) {
  constexpr int B = sizeof_bits_v<T> / 8;
  constexpr int K2 = 2 * (32 / B);
  smem_case<UMMA::Layout_MN_INTER_Atom<T>, T, Major::MN, 64 / B, K2, false>(n, "NONE", 0x1000);
  smem_case<UMMA::Layout_MN_INTER_Atom<T>, T, Major::MN, 48 / B, K2, true>(n, "NONE", 0x800);
  smem_case<UMMA::Layout_MN_SW32_Atom<T>, T, Major::MN, 64 / B, K2, false>(n, "32B", 0x2000);
  smem_case<UMMA::Layout_MN_SW32_Atom<T>, T, Major::MN, 96 / B, K2, true>(n, "32B", 0x100);
  smem_case<UMMA::Layout_MN_SW64_Atom<T>, T, Major::MN, 128 / B, K2, false>(n, "64B", 0x4000);
  smem_case<UMMA::Layout_MN_SW64_Atom<T>, T, Major::MN, 192 / B, K2, true>(n, "64B", 0x200);
  smem_case<UMMA::Layout_MN_SW128_Atom<T>, T, Major::MN, 256 / B, K2, false>(n, "128B", 0x8000);
  smem_case<UMMA::Layout_MN_SW128_Atom<T>, T, Major::MN, 128 / B, K2, true>(n, "128B", 0x400);
  smem_case<UMMA::Layout_MN_SW128_32B_Atom<T>, T, Major::MN, 256 / B, K2, false>(n, "128B_BASE32B", 0x8000);
  smem_case<UMMA::Layout_MN_SW128_32B_Atom<T>, T, Major::MN, 256 / B, K2, true>(n, "128B_BASE32B", 0x2000);
}

template <class A, class B, class C, int M, int N, Major am, Major bm, UMMA::ScaleIn na, UMMA::ScaleIn nb>
void idesc_one(const char* kind, const char* an, const char* bn, const char* cn) {
  UMMA::InstrDescriptor d = UMMA::make_instr_desc<A, B, C, M, N, am, bm, na, nb>();
  printf("IDESC %s %s %s %s - %d %d %s %s %d %d 0 0 0x%08x\n", kind, an, bn, cn, M, N, am == Major::K ? "K" : "MN",
         bm == Major::K ? "K" : "MN", int(na), int(nb), uint32_t(d));
}

template <class A, class B, class C, int M, Major am = Major::K, Major bm = Major::K,
          UMMA::ScaleIn na = UMMA::ScaleIn::One, UMMA::ScaleIn nb = UMMA::ScaleIn::One, int... Ns>
void idesc_sweep(const char* kind, const char* an, const char* bn, const char* cn, std::integer_sequence<int, Ns...>) {
  (idesc_one<A, B, C, M, Ns, am, bm, na, nb>(kind, an, bn, cn), ...);
}

template <class A, class B, class SF, int M, int N, Major am, Major bm, UMMA::ScaleIn na, UMMA::ScaleIn nb>
void bs_one(const char* kind, const char* an, const char* bn, const char* sn, uint32_t sfa_id, uint32_t sfb_id) {
  uint64_t r = UMMA::make_runtime_instr_desc_block_scaled<A, B, float, SF, M, N, am, bm, na, nb>(sfa_id << 30,
                                                                                                 sfb_id << 30);
  printf("IDESC %s %s %s F32 %s %d %d %s %s %d %d %u %u 0x%08x\n", kind, an, bn, sn, M, N,
         am == Major::K ? "K" : "MN", bm == Major::K ? "K" : "MN", int(na), int(nb), sfa_id, sfb_id,
         uint32_t(r >> 32));
}

template <class A, class B, class SF, int M, Major am = Major::K, Major bm = Major::K,
          UMMA::ScaleIn na = UMMA::ScaleIn::One, UMMA::ScaleIn nb = UMMA::ScaleIn::One, int... Ns>
void bs_sweep(const char* kind, const char* an, const char* bn, const char* sn, uint32_t ia, uint32_t ib,
              std::integer_sequence<int, Ns...>) {
  (bs_one<A, B, SF, M, Ns, am, bm, na, nb>(kind, an, bn, sn, ia, ib), ...);
}

using N8 = std::integer_sequence<int, 8, 24, 64, 120, 128, 200, 256>;
using N16 = std::integer_sequence<int, 16, 48, 128, 240, 256>;
using One = std::integral_constant<UMMA::ScaleIn, UMMA::ScaleIn::One>;
constexpr auto Neg = UMMA::ScaleIn::Neg;
constexpr auto Pos = UMMA::ScaleIn::One;

#ifndef ORACLE_PART
#error "compile with -DORACLE_PART=1, 2 or 3"
#endif

int main() {
#if ORACLE_PART == 1
  smem_k<float_e2m1_t>("e2m1");
  smem_k<float_e4m3_t>("e4m3");
  smem_k<half_t>("f16");
  smem_k<tfloat32_t>("tf32");
#elif ORACLE_PART == 2
  smem_mn<float_e4m3_t>("e4m3");
  smem_mn<half_t>("f16");
  smem_mn<tfloat32_t>("tf32");
#else

  using detail::float_e2m1_unpacksmem_t;
  using detail::float_e2m3_unpacksmem_t;
  using detail::float_e3m2_unpacksmem_t;
  // kind::f16
  idesc_sweep<half_t, half_t, float, 64>("f16", "F16", "F16", "F32", N8{});
  idesc_sweep<bfloat16_t, bfloat16_t, float, 128, Major::MN, Major::K>("f16", "BF16", "BF16", "F32", N8{});
  idesc_sweep<half_t, half_t, half_t, 128, Major::K, Major::MN, Neg, Pos>("f16", "F16", "F16", "F16", N8{});
  idesc_sweep<bfloat16_t, bfloat16_t, float, 256, Major::MN, Major::MN, Pos, Neg>("f16", "BF16", "BF16", "F32", N16{});
  // kind::tf32
  idesc_sweep<tfloat32_t, tfloat32_t, float, 128>("tf32", "TF32", "TF32", "F32", N8{});
  idesc_sweep<tfloat32_t, tfloat32_t, float, 64, Major::MN, Major::MN>("tf32", "TF32", "TF32", "F32", N8{});
  // kind::f8f6f4
  idesc_sweep<float_e4m3_t, float_e5m2_t, float, 128, Major::MN, Major::K>("f8f6f4", "E4M3", "E5M2", "F32", N8{});
  idesc_sweep<float_e2m1_unpacksmem_t, float_e2m3_unpacksmem_t, half_t, 64>("f8f6f4", "E2M1", "E2M3", "F16", N8{});
  idesc_sweep<float_e3m2_unpacksmem_t, float_e4m3_t, float, 256>("f8f6f4", "E3M2", "E4M3", "F32", N16{});
  // kind::i8
  idesc_sweep<int8_t, int8_t, int32_t, 128>("i8", "S8", "S8", "S32", N8{});
  idesc_sweep<uint8_t, int8_t, int32_t, 64, Major::MN, Major::MN>("i8", "U8", "S8", "S32", N8{});
  // kind::mxf8f6f4 (UE8M0, block32 = 1X: SF IDs 0..3)
  bs_sweep<float_e4m3_t, float_e4m3_t, float_ue8m0_t, 128>("mxf8f6f4", "E4M3", "E4M3", "UE8M0", 0, 0, N8{});
  bs_sweep<float_e5m2_t, float_e2m1_unpacksmem_t, float_ue8m0_t, 128, Major::MN, Major::K, Neg, Pos>(
      "mxf8f6f4", "E5M2", "E2M1", "UE8M0", 3, 1, N8{});
  bs_sweep<float_e2m3_unpacksmem_t, float_e3m2_unpacksmem_t, float_ue8m0_t, 256>("mxf8f6f4", "E2M3", "E3M2", "UE8M0",
                                                                                 2, 3, N16{});
  // kind::mxf4 (UE8M0, block32 = 2X: SF IDs 0/2)
  bs_sweep<float_e2m1_t, float_e2m1_t, float_ue8m0_t, 128>("mxf4", "E2M1", "E2M1", "UE8M0", 0, 2, N8{});
  bs_sweep<float_e2m1_t, float_e2m1_t, float_ue8m0_t, 256, Major::K, Major::K, Pos, Neg>("mxf4", "E2M1", "E2M1",
                                                                                        "UE8M0", 2, 0, N16{});
  // kind::mxf4nvf4 (UE4M3 -> block16, SF IDs 0; UE8M0 block32 -> 0/2)
  bs_sweep<float_e2m1_t, float_e2m1_t, float_ue4m3_t, 128>("mxf4nvf4", "E2M1", "E2M1", "UE4M3", 0, 0, N8{});
  bs_sweep<float_e2m1_t, float_e2m1_t, float_ue4m3_t, 256, Major::K, Major::K, Neg, Neg>("mxf4nvf4", "E2M1", "E2M1",
                                                                                        "UE4M3", 0, 0, N16{});
  bs_sweep<float_e2m1_t, float_e2m1_t, float_ue8m0_t, 128>("mxf4nvf4", "E2M1", "E2M1", "UE8M0", 2, 2, N8{});
#endif
  return 0;
}
