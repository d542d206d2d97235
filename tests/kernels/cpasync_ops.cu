// cpasync_ops.cu — cp.async (sm_80, PTX ISA 9.7.9.25.3) probes.  blockDim.x = 64.
//
// extern "C" __global__ void cpasync_groups(const unsigned char* src, const unsigned* ssz, unsigned char* out)
//   Thread t copies (group 0) 16 bytes src[t*16..] → smem A with src-size ssz[t] (0..16, zero-fill), 8 bytes
//   src[1024 + t*8] → smem B (.ca, size 8, full), and (group 1) 4 bytes src[2048 + t*4] → smem C with
//   ignore-src = (t % 3 == 0).  After wait_group 1: out[0..1023] = A, out[1024..1535] = B; after wait_all:
//   out[1536..1791] = C.   (out is 1792 bytes)
//
// extern "C" __global__ void cpasync_mbar(const unsigned* src, unsigned* out, int noinc)
//   Each thread cp.async's 16 bytes (4 words) src[t*4..] → smem, then cp.async.mbarrier.arrive{.noinc} on a barrier
//   initialised with count = 64 (noinc) or 64 (inc variant, + one regular mbarrier.arrive per thread); waits on
//   phase 0 with try_wait.parity and writes the smem words back to out[t*4..] (shifted by one thread to read
//   another thread's copy).  noinc = 2 / 3: .noinc on .shared::cta / a generic address; 4 / 5: the incrementing
//   form on .shared::cta / a generic address (+ mbarrier.arrive).
extern "C" __global__ void cpasync_groups(const unsigned char* src, const unsigned* ssz, unsigned char* out) {
  __shared__ __align__(16) unsigned char A[1024];
  __shared__ __align__(16) unsigned char B[512];
  __shared__ __align__(16) unsigned char C[256];
  unsigned t = threadIdx.x;
  unsigned a = (unsigned)__cvta_generic_to_shared(A + t * 16);
  unsigned b = (unsigned)__cvta_generic_to_shared(B + t * 8);
  unsigned c = (unsigned)__cvta_generic_to_shared(C + t * 4);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(a), "l"(src + t * 16), "r"(ssz[t]));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(b), "l"(src + 1024 + t * 8));
  asm volatile("cp.async.commit_group;");
  asm volatile("{ .reg .pred p; setp.eq.u32 p, %2, 0; cp.async.ca.shared.global [%0], [%1], 4, p; }"
               :: "r"(c), "l"(src + 2048 + t * 4), "r"(t % 3));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 1;");
  __syncthreads();
  for (unsigned i = t; i < 1024; i += 64) out[i] = A[i];
  for (unsigned i = t; i < 512; i += 64) out[1024 + i] = B[i];
  asm volatile("cp.async.wait_all;");
  __syncthreads();
  for (unsigned i = t; i < 256; i += 64) out[1536 + i] = C[i];
}

extern "C" __global__ void cpasync_mbar(const unsigned* src, unsigned* out, int noinc) {
  __shared__ __align__(16) unsigned D[256];
  __shared__ __align__(8) unsigned long long bar;
  unsigned t = threadIdx.x;
  unsigned mb = (unsigned)__cvta_generic_to_shared(&bar);
  if (t == 0) asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(mb), "r"(64));
  __syncthreads();
  unsigned d = (unsigned)__cvta_generic_to_shared(D + t * 4);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d), "l"(src + t * 4));
  switch (noinc) {          // 1 / 0: the .shared forms; 2..5: the other spellings (cpasync_mbar_forms entry)
    case 1: asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" :: "r"(mb)); break;
    case 2: asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(mb)); break;
    case 3: asm volatile("cp.async.mbarrier.arrive.noinc.b64 [%0];" :: "l"(&bar)); break;
    default:
      if (noinc == 4) asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];" :: "r"(mb));
      else if (noinc == 5) asm volatile("cp.async.mbarrier.arrive.b64 [%0];" :: "l"(&bar));
      else asm volatile("cp.async.mbarrier.arrive.shared.b64 [%0];" :: "r"(mb));
      asm volatile("{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%0]; }" :: "r"(mb));
  }
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" :: "r"(mb));
  unsigned o = (t + 1) % 64;
  for (int k = 0; k < 4; ++k) out[t * 4 + k] = D[o * 4 + k];
}
