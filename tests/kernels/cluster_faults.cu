// Cluster fault tests (tests/test_emu_cluster_faults.py): every kernel takes a selector `mode`.
struct __align__(64) TmapT { unsigned long long v[16]; };
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned nrank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ void csync() {
  asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
}
__device__ __forceinline__ unsigned mapa(unsigned a, unsigned r) {
  unsigned d; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(r)); return d;
}
__device__ __forceinline__ unsigned ld_dsmem(unsigned a) {
  unsigned v; asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory"); return v;
}
__device__ __forceinline__ void st_dsmem(unsigned a, unsigned v) {
  asm volatile("st.shared::cluster.u32 [%0], %1;" :: "r"(a), "r"(v) : "memory");
}

// mode 0: ld.shared::cluster at a hand-made address of rank n (outside the cluster)
// mode 1: ld.shared::cta of a peer's mapa address
// mode 2: DSMEM load from rank 0 after rank 0 exited (rank 0 skips the final cluster barrier and exits)
// mode 3: rank 1 stores into rank 0's SMEM with no cluster barrier between the store and rank 0's exit
// mode 4: correct: every CTA passes a cluster barrier after its last DSMEM access (no fault)
// mode 5: rank 1 writes rank 0's SMEM, then arrives on rank 0's mbarrier; rank 0 waits, then exits (no fault)
extern "C" __global__ void dsmem_faults(unsigned* out, unsigned mode) {
  __shared__ unsigned buf[64];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned t = threadIdx.x, r = rank(), n = nrank();
  buf[t] = r * 100 + t;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(sa(&bar)), "r"(1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  csync();
  unsigned v = 0;
  if (mode == 0) {
    v = ld_dsmem((n << 24) | (sa(&buf[t]) & 0xFFFFFF));
  } else if (mode == 1) {
    const unsigned a = mapa(sa(&buf[t]), (r + 1) % n);
    asm volatile("ld.shared::cta.u32 %0, [%1];" : "=r"(v) : "r"(a));
  } else if (mode == 2) {
    if (r == 0) asm volatile("exit;" ::: "memory");      // rank 0 leaves right after the barrier
    v = ld_dsmem(mapa(sa(&buf[t]), 0));
  } else if (mode == 3) {
    if (r == 1) st_dsmem(mapa(sa(&buf[t]), 0), 7);
    if (r == 0) { out[t] = buf[t]; return; }
  } else if (mode == 5) {
    if (r == 1) {
      st_dsmem(mapa(sa(&buf[t]), 0), 7 + t);
      asm volatile("barrier.sync 0;" ::: "memory");
      if (t == 0)
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(mapa(sa(&bar), 0)) : "memory");
      return;
    }
    if (r == 0) {
      asm volatile("{\n\t.reg .pred p;\n\tW_%=:\n\tmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], 0;\n\t"
                   "@!p bra W_%=;\n\t}" :: "r"(sa(&bar)) : "memory");
      out[t] = buf[t];
      return;
    }
    return;
  } else {
    v = ld_dsmem(mapa(sa(&buf[t]), (r + 1) % n));
  }
  csync();
  out[blockIdx.x * 64 + t] = v;
}

// mode 0: barrier.cluster.arrive twice; 1: wait without arrive; 2: .aligned by half a warp;
// 3: a thread never arrives (deadlock report names the cluster barrier); 4: correct loop of 5 phases
extern "C" __global__ void cbar_faults(unsigned* out, unsigned mode) {
  __shared__ __align__(8) unsigned long long never;
  const unsigned t = threadIdx.x;
  if (t == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(sa(&never)), "r"(1) : "memory");
  asm volatile("barrier.sync 0;" ::: "memory");
  if (mode == 0) {
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
  } else if (mode == 1) {
    asm volatile("barrier.cluster.wait;" ::: "memory");
  } else if (mode == 2) {
    if (t < 16) asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
    else asm volatile("barrier.cluster.arrive;" ::: "memory");
    asm volatile("barrier.cluster.wait;" ::: "memory");
  } else if (mode == 3) {
    if (rank() == 1 && t == 5) {      // never arrives: waits on an mbarrier nobody completes
      asm volatile("{\n\t.reg .pred p;\n\tW_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n\t"
                   "@!p bra W_%=;\n\t}" :: "r"(sa(&never)) : "memory");
    } else {
      asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
    }
  } else {
    unsigned acc = t;
    for (int i = 0; i < 5; ++i) {
      asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
      acc = acc * 3 + i;
    }
    out[blockIdx.x * blockDim.x + t] = acc;
  }
}

// mode 0: multicast ctaMask names rank 4 of a 4-CTA cluster; 1: ctaMask 0; 2: bulk to a peer with the mbarrier in
// another CTA than the destination; 3: bulk copy "to a peer" whose destination is the executing CTA
extern "C" __global__ void async_faults(const unsigned char* g, unsigned mode, unsigned short mask) {
  __shared__ __align__(128) unsigned char buf[1024];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned t = threadIdx.x, r = rank(), n = nrank();
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(sa(&bar)), "r"(1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  csync();
  if (t == 0 && r == 0) {
    if (mode < 2)
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                   " [%0], [%1], 256, [%2], %3;" :: "r"(sa(buf)), "l"(g), "r"(sa(&bar)), "h"(mask) : "memory");
    else {
      const unsigned d = mode == 2 ? 1 : 0, m = mode == 2 ? 2 % n : 0;    // mode 3: "to a peer" that is itself
      asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 256, [%2];"
                   :: "r"(mapa(sa(buf), d)), "r"(sa(buf)), "r"(mapa(sa(&bar), m)) : "memory");
    }
  }
  csync();
}
