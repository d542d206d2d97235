// ptxlab/kernels/blocks/common.cuh -- shared types and tiny helpers for the device building blocks.
//
// Owned by the Stage A (TMA) engineer. Every block header includes this one; it needs no CUDA headers
// (NVRTC compiles it without cuda.h), so the tensor-map parameter type is declared here.
#pragma once

namespace ptxlab {

typedef unsigned int u32;
typedef unsigned long long u64;

// A CUtensorMap stand-in: 128 opaque bytes, 64-B aligned [PTX ISA 5.5.8 "Tensor-map"; CUDA driver API
// cuTensorMapEncodeTiled: "tensorMap must be 64-byte aligned"]. Pass it as `const __grid_constant__ TmaDesc tmap`
// so it stays in the kernel parameter space and its generic address is valid for cp.async.bulk.tensor.
struct alignas(64) TmaDesc { unsigned long long v[16]; };

// Generic -> .shared::cta 32-bit address [PTX ISA 9.7.9 cvta; 5.1.6 "Shared state space"].
__device__ __forceinline__ u32 smem_u32(const void* p) {
    return static_cast<u32>(__cvta_generic_to_shared(p));
}

// Tensor-map operand of cp.async.bulk.tensor: the generic address of the __grid_constant__ parameter
// [PTX ISA 9.7.9.25.5.2 "tensorMap ... generic address of the tensor-map object in .param/.const/.global"].
__device__ __forceinline__ u64 tmap_addr(const TmaDesc* t) {
    return reinterpret_cast<u64>(t);
}

// Warp index, made warp-uniform through a shuffle so the compiler can branch uniformly on it
// [PTX ISA 9.7.8.6 shfl.sync] (CUTLASS canonical_warp_idx_sync).
__device__ __forceinline__ u32 warp_idx_sync() {
    return __shfl_sync(0xffffffffu, threadIdx.x / 32u, 0);
}

// elect.sync: exactly one active lane of the full warp gets true [PTX ISA 9.7.8.12 elect.sync, sm_90+].
// Must be called by all 32 lanes (membermask 0xffffffff).
__device__ __forceinline__ bool elect_one_sync() {
    u32 pred = 0;
    asm volatile(
        "{\n\t.reg .pred P;\n\t"
        "elect.sync _|P, 0xffffffff;\n\t"
        "selp.u32 %0, 1, 0, P;\n\t}"
        : "=r"(pred) :: "memory");
    return pred != 0;
}

// 16-byte vector copy used to dump SMEM images (plain generic-proxy ld.shared / st.global) [PTX ISA 9.7.9 ld/st].
struct alignas(16) U32x4 { u32 x, y, z, w; };

}  // namespace ptxlab
