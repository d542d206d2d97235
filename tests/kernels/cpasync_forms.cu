// cpasync_forms.cu — every cp.async form of PTX ISA 9.7.9.25.3 (sm_80+): .ca with cp-size 4 / 8 / 16, .cg with 16,
// .shared and .shared::cta, the .L2::64B / 128B / 256B prefetch sizes, .L2::cache_hint with a createpolicy operand,
// src-size (zero fill) for every cp-size, ignore-src; cp.async.mbarrier.arrive{.noinc}{.shared::cta}.b64 on shared
// and generic addresses.  blockDim.x = 64.
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
//
// extern "C" __global__ void cpasync_mbar_forms(const unsigned* src, unsigned* out, int variant)
//   Each thread cp.async.cg's 16 bytes src[t*4..] → smem, then arrives on a barrier (count 64) by
//     variant 0: cp.async.mbarrier.arrive.noinc.shared::cta.b64 [shared address]
//     variant 1: cp.async.mbarrier.arrive.noinc.b64 [generic address]
//     variant 2: cp.async.mbarrier.arrive.shared::cta.b64 [shared] + mbarrier.arrive.shared.b64
//     variant 3: cp.async.mbarrier.arrive.b64 [generic] + mbarrier.arrive.shared.b64
//   waits on phase 0 and writes thread (t + 1) % 64's four words to out[t*4..].
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

extern "C" __global__ void cpasync_mbar_forms(const unsigned* src, unsigned* out, int variant) {
  __shared__ __align__(16) unsigned D[256];
  __shared__ __align__(8) unsigned long long bar;
  unsigned t = threadIdx.x;
  unsigned mb = (unsigned)__cvta_generic_to_shared(&bar);
  if (t == 0) asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(mb), "r"(64));
  __syncthreads();
  unsigned d = (unsigned)__cvta_generic_to_shared(D + t * 4);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d), "l"(src + t * 4));
  if (variant == 0) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(mb));
  } else if (variant == 1) {
    asm volatile("cp.async.mbarrier.arrive.noinc.b64 [%0];" :: "l"(&bar));
  } else {
    if (variant == 2) asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];" :: "r"(mb));
    else asm volatile("cp.async.mbarrier.arrive.b64 [%0];" :: "l"(&bar));
    asm volatile("{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%0]; }" :: "r"(mb));
  }
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" :: "r"(mb));
  unsigned o = (t + 1) % 64;
  for (int k = 0; k < 4; ++k) out[t * 4 + k] = D[o * 4 + k];
}
