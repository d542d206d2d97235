// cpasync_forms.cu — every cp.async form of PTX ISA 9.7.9.25.3 (sm_80+): .ca with cp-size 4 / 8 / 16, .cg with 16,
// .shared and .shared::cta, the .L2::64B / 128B / 256B prefetch sizes, .L2::cache_hint with a createpolicy operand,
// src-size (zero fill) for every cp-size, ignore-src.  blockDim.x = 64.
//
// extern "C" __global__ void cpasync_forms(const unsigned char* src, const unsigned* perm, const unsigned* ssz,
//                                          unsigned char* out)
//   Thread t copies from source slot p = perm[t] (a permutation of 0..63) of each region, with src-size
//   ssz[s * 64 + t] (0..cp-size) for sections s = 0..3:
//     group 0: A  .ca 4   .shared::cta .L2::64B                  src[   0 + p*4 ]  → out[   0 + t*4 ]   (256 B)
//              B  .ca 8   .shared      .L2::128B                 src[ 256 + p*8 ]  → out[ 256 + t*8 ]   (512 B)
//     group 1: C  .ca 16  .shared      .L2::cache_hint .L2::256B src[ 768 + p*16]  → out[ 768 + t*16]   (1024 B)
//              D  .cg 16  .shared::cta .L2::cache_hint .L2::128B src[1792 + p*16]  → out[1792 + t*16]   (1024 B)
//     group 2: E  .ca 4   .shared      .L2::cache_hint           src[2816 + p*4 ], ignore-src = (ssz[256+t] & 1)
//                                                                                  → out[2816 + t*4 ]   (256 B)
//   wait_group 2 → A, B written out; wait_group 1 → C, D; wait_all → E.  out is 3072 bytes; bytes past src-size
//   (all 4 bytes of E when ignore-src) are zero.
// (cp.async.mbarrier.arrive's spellings: cpasync_ops.cu cpasync_mbar, noinc = 2..5.)
extern "C" __global__ void cpasync_forms(const unsigned char* src, const unsigned* perm, const unsigned* ssz,
                                         unsigned char* out) {
  __shared__ __align__(16) unsigned char S[3072];
  unsigned t = threadIdx.x, p = perm[t];
  unsigned base = (unsigned)__cvta_generic_to_shared(S);
  unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm volatile("cp.async.ca.shared::cta.global.L2::64B [%0], [%1], 4, %2;"
               :: "r"(base + t * 4), "l"(src + p * 4), "r"(ssz[t]));
  asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 8, %2;"
               :: "r"(base + 256 + t * 8), "l"(src + 256 + p * 8), "r"(ssz[64 + t]));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.ca.shared.global.L2::cache_hint.L2::256B [%0], [%1], 16, %2, %3;"
               :: "r"(base + 768 + t * 16), "l"(src + 768 + p * 16), "r"(ssz[128 + t]), "l"(pol));
  asm volatile("cp.async.cg.shared::cta.global.L2::cache_hint.L2::128B [%0], [%1], 16, %2, %3;"
               :: "r"(base + 1792 + t * 16), "l"(src + 1792 + p * 16), "r"(ssz[192 + t]), "l"(pol));
  asm volatile("cp.async.commit_group;");
  asm volatile("{ .reg .pred q; setp.ne.u32 q, %2, 0;\n"
               "  cp.async.ca.shared.global.L2::cache_hint [%0], [%1], 4, q, %3; }"
               :: "r"(base + 2816 + t * 4), "l"(src + 2816 + p * 4), "r"(ssz[256 + t] & 1u), "l"(pol));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 2;");
  __syncthreads();
  for (unsigned i = t; i < 768; i += 64) out[i] = S[i];
  asm volatile("cp.async.wait_group 1;");
  __syncthreads();
  for (unsigned i = 768 + t; i < 2816; i += 64) out[i] = S[i];
  asm volatile("cp.async.wait_all;");
  __syncthreads();
  for (unsigned i = 2816 + t; i < 3072; i += 64) out[i] = S[i];
}
