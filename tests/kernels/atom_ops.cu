// atom_ops.cu — atom/red probe (PTX ISA 9.7.12.3/4), global and shared, colliding addresses.
// Signature: extern "C" __global__ void atom_ops(unsigned* g32, unsigned long long* g64, const unsigned* x,
//                                               unsigned* old32, unsigned long long* old64, unsigned n)
//   Rows 12 (global f32 add) and shared row 5 (red.shared f32) add subnormals only (v & 0x807FFFFF).
//   Launch with blockDim.x = 128 and n = gridDim.x * 128.  Slot s = x[i] % 4.
//   g32[k*4 + s] for 32-bit op k (table OPS32 in tests/emu/test_emu_atom.py), g64[k*4 + s] for 64-bit op k (OPS64);
//   old32[i*NO32 + k] / old64[i*NO64 + k] = value returned by the atom.  Shared-memory ops work on a per-CTA copy
//   initialised from g32[...] of the "shared init" rows and are written to g32 rows of their own after the block.
//   H100 comparison: final memory of order-independent ops (add.u32/and/or/xor/min/max/inc-free sums) must match bit
//   for bit; returned olds (and order-dependent results: exch, cas, inc, dec, float add) depend on the hardware's
//   serialization — check them as "some serialization" (tests/emu/test_emu_atom.py: check_serializable).
#define NO32 20
#define NO64 6
typedef unsigned long long u64;
extern "C" __global__ void atom_ops(unsigned* g32, u64* g64, const unsigned* x, unsigned* old32, u64* old64,
                                    unsigned n) {
  __shared__ unsigned s32[4 * 6];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned t = threadIdx.x;
  if (t < 24) s32[t] = g32[(NO32 + t / 4) * 4 + t % 4];   // shared init rows NO32..NO32+5
  __syncthreads();
  unsigned v = x[i], s = v % 4, r;
  unsigned* o = old32 + (size_t)i * NO32;
  o[0] = atomicAdd(&g32[0 * 4 + s], v);
  o[1] = atomicAnd(&g32[1 * 4 + s], v | 0x00FF00FFu);
  o[2] = atomicOr(&g32[2 * 4 + s], v & 0x01010101u);
  o[3] = atomicXor(&g32[3 * 4 + s], v);
  o[4] = atomicMin(&g32[4 * 4 + s], v);
  o[5] = atomicMax(&g32[5 * 4 + s], v);
  o[6] = (unsigned)atomicMin((int*)&g32[6 * 4 + s], (int)v);
  o[7] = (unsigned)atomicMax((int*)&g32[7 * 4 + s], (int)v);
  o[8] = atomicInc(&g32[8 * 4 + s], v >> 28);
  o[9] = atomicDec(&g32[9 * 4 + s], v >> 28);
  o[10] = atomicExch(&g32[10 * 4 + s], v);
  o[11] = atomicCAS(&g32[11 * 4 + s], (v >> 8) & 3, v);
  o[12] = __float_as_uint(atomicAdd((float*)&g32[12 * 4 + s], __uint_as_float(v & 0x807FFFFFu)));  // global f32: ftz
  asm volatile("atom.relaxed.gpu.global.add.noftz.f16x2 %0, [%1], %2;" : "=r"(r) : "l"(&g32[13 * 4 + s]), "r"(v));
  o[13] = r;
  asm volatile("atom.acq_rel.cta.global.add.noftz.bf16x2 %0, [%1], %2;" : "=r"(r) : "l"(&g32[14 * 4 + s]), "r"(v));
  o[14] = r;
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" :: "l"(&g32[15 * 4 + s]), "r"(v));
  // shared memory (f32 add keeps subnormals)
  o[15] = atomicAdd(&s32[0 * 4 + s], v);
  o[16] = __float_as_uint(atomicAdd((float*)&s32[1 * 4 + s], __uint_as_float(v)));
  o[17] = atomicCAS(&s32[2 * 4 + s], (v >> 8) & 3, v);
  asm volatile("atom.shared.exch.b32 %0, [%1], %2;" : "=r"(r) : "r"((unsigned)__cvta_generic_to_shared(&s32[3 * 4 + s])), "r"(v));
  o[18] = r;
  o[19] = (unsigned)atomicMin((int*)&s32[4 * 4 + s], (int)v);                            // generic address → shared
  asm volatile("red.shared.add.f32 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&s32[5 * 4 + s])), "r"(v & 0x807FFFFFu));
  // 64-bit
  u64 w = ((u64)v << 32) | x[(i * 7 + 3) % n];
  u64* p = old64 + (size_t)i * NO64;
  p[0] = atomicAdd(&g64[0 * 4 + s], w);
  p[1] = (u64)atomicMin((long long*)&g64[1 * 4 + s], (long long)w);
  p[2] = (u64)atomicMax((long long*)&g64[2 * 4 + s], (long long)w);
  p[3] = atomicCAS(&g64[3 * 4 + s], (u64)((v >> 8) & 3), w);
  p[4] = __double_as_longlong(atomicAdd((double*)&g64[4 * 4 + s], __longlong_as_double(w & 0x3FFFFFFFFFFFFFFFull)));
  p[5] = atomicExch(&g64[5 * 4 + s], w);
  __syncthreads();
  if (t < 24) g32[(NO32 + 6 + blockIdx.x * 6 + t / 4) * 4 + t % 4] = s32[t];     // shared results per block
}
