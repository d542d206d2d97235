// warp_ops.cu — warp-level ops probe (PTX ISA 9.7.8).  blockDim.x must be a multiple of 32, n = total threads.
// Signature: extern "C" __global__ void warp_ops(const unsigned* a, const unsigned* ctl, unsigned* out, unsigned n)
//   ctl[0..7]: shfl up b, up c, down b, down c, bfly b, bfly c, idx c, match.all mask-and value.
//   out[i*28 + k], k = 0..27: see WARP_OPS in tests/emu/test_emu_warp.py.  Lanes that skip a divergent section leave
//   the poisoned output word untouched.
#define SHFL(k, mode, b, c, msk) asm volatile("{ .reg .pred p; shfl.sync." mode ".b32 %0|p, %2, %3, %4, %5; selp.u32 %1, 1, 0, p; }" \
    : "=r"(r), "=r"(q) : "r"(x), "r"(b), "r"(c), "r"(msk)); o[k] = r; o[k + 1] = q;
extern "C" __global__ void warp_ops(const unsigned* a, const unsigned* ctl, unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = a[i], r, q;
  const unsigned full = 0xFFFFFFFFu;
  unsigned* o = out + (size_t)i * 28;
  SHFL(0, "up", ctl[0], ctl[1], full)
  SHFL(2, "down", ctl[2], ctl[3], full)
  SHFL(4, "bfly", ctl[4], ctl[5], full)
  unsigned bi = x >> 8;
  SHFL(6, "idx", bi, ctl[6], full)
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, %2; }" : "=r"(r) : "r"(x & 1), "r"(full)); o[8] = r;
  asm volatile("{ .reg .pred p, d; setp.ne.u32 p, %1, 0; vote.sync.all.pred d, p, %2; selp.u32 %0, 1, 0, d; }" : "=r"(r) : "r"(x & 1), "r"(full)); o[9] = r;
  asm volatile("{ .reg .pred p, d; setp.ne.u32 p, %1, 0; vote.sync.any.pred d, !p, %2; selp.u32 %0, 1, 0, d; }" : "=r"(r) : "r"(x & 1), "r"(full)); o[10] = r;
  asm volatile("{ .reg .pred p, d; setp.ne.u32 p, %1, 0; vote.sync.uni.pred d, p, %2; selp.u32 %0, 1, 0, d; }" : "=r"(r) : "r"(x & 1), "r"(full)); o[11] = r;
  asm volatile("match.any.sync.b32 %0, %1, %2;" : "=r"(r) : "r"(x & 3), "r"(full)); o[12] = r;
  asm volatile("{ .reg .pred p; match.all.sync.b32 %0|p, %2, %3; selp.u32 %1, 1, 0, p; }" : "=r"(r), "=r"(q) : "r"(x & ctl[7]), "r"(full)); o[13] = r; o[14] = q;
  asm volatile("redux.sync.add.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(full)); o[15] = r;
  asm volatile("redux.sync.min.s32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(full)); o[16] = r;
  asm volatile("redux.sync.max.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(full)); o[17] = r;
  asm volatile("redux.sync.and.b32 %0, %1, %2;" : "=r"(r) : "r"(x | 0x0F0F0F0Fu), "r"(full)); o[18] = r;
  asm volatile("redux.sync.or.b32 %0, %1, %2;" : "=r"(r) : "r"(x & 0x10101010u), "r"(full)); o[19] = r;
  asm volatile("redux.sync.xor.b32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(full)); o[20] = r;
  unsigned long long x64 = ((unsigned long long)(x & 1) << 40) | ((x >> 1) & 1);
  asm volatile("match.any.sync.b64 %0, %1, %2;" : "=r"(r) : "l"(x64), "r"(full)); o[21] = r;
  unsigned m4 = __ballot_sync(full, x & 4);
  if (x & 4) {
    asm volatile("activemask.b32 %0;" : "=r"(r)); o[22] = r;
    asm volatile("{ .reg .pred p; elect.sync %0|p, %2; selp.u32 %1, 1, 0, p; }" : "=r"(r), "=r"(q) : "r"(m4)); o[23] = r; o[24] = q;
    asm volatile("redux.sync.add.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(m4)); o[25] = r;
    unsigned src = __ffs(m4 >> 16) ? 15 + __ffs(m4 >> 16) : __ffs(m4) - 1;   // lowest member lane >= 16, else lowest
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 31, %3;" : "=r"(r) : "r"(x), "r"(src), "r"(m4)); o[26] = r;
    asm volatile("vote.sync.ballot.b32 %0, 1, %1;" : "=r"(r) : "r"(m4)); o[27] = r;
  }
}

// warp_redux_f32 (sm_100a): out[i*4 + k] = redux.sync.{min, max, min.abs, max.NaN}.f32 of a[i] over the full warp.
// Signature: extern "C" __global__ void warp_redux_f32(const unsigned* a, unsigned* out)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define RF(k, ins) asm volatile(ins " %0, %1, 0xffffffff;" : "=r"(r) : "r"(x)); o[k] = r;
extern "C" __global__ void warp_redux_f32(const unsigned* a, unsigned* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x, x = a[i], r;
  unsigned* o = out + (size_t)i * 4;
  RF(0, "redux.sync.min.f32") RF(1, "redux.sync.max.f32") RF(2, "redux.sync.min.abs.f32") RF(3, "redux.sync.max.NaN.f32")
}
#endif
