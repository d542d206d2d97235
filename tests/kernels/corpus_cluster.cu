// Cluster fidelity corpus (tests/corpus/kernels_cluster.py): thread-block clusters, distributed shared memory,
// cluster barriers, remote mbarriers, bulk copies to a peer, atomics on a peer, TMA multicast. sm_90a, bare NVRTC.
struct __align__(64) TmapT { unsigned long long v[16]; };

__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned sreg_rank() {
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r;
}
__device__ __forceinline__ unsigned sreg_nrank() {
  unsigned r; asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r)); return r;
}
__device__ __forceinline__ unsigned cta_linear() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
// cluster.sync(): release/acquire arrive + wait, all threads of every warp
__device__ __forceinline__ void csync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
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
__device__ __forceinline__ void bar_init(unsigned b, unsigned n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(n) : "memory");
}
__device__ __forceinline__ void fence_bar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void bar_wait(unsigned b, unsigned parity) {
  asm volatile("{\n\t.reg .pred p;\n\tWAIT_%=:\n\t"
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n\t@!p bra WAIT_%=;\n\t}"
               :: "r"(b), "r"(parity) : "memory");
}
__device__ __forceinline__ void bar_expect(unsigned b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
}
__device__ __forceinline__ void remote_arrive(unsigned cluster_addr) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(cluster_addr) : "memory");
}

#define SREG(name, v) asm volatile("mov.u32 %0, %%" name ";" : "=r"(v))

// ---- 1. every cluster special register (plus ctaid) per thread: 16 words
__device__ __forceinline__ void write_sregs(unsigned* out) {
  unsigned v[16];
  SREG("cluster_ctaid.x", v[0]); SREG("cluster_ctaid.y", v[1]); SREG("cluster_ctaid.z", v[2]);
  SREG("cluster_nctaid.x", v[3]); SREG("cluster_nctaid.y", v[4]); SREG("cluster_nctaid.z", v[5]);
  SREG("clusterid.x", v[6]); SREG("clusterid.y", v[7]); SREG("clusterid.z", v[8]);
  SREG("nclusterid.x", v[9]); SREG("nclusterid.y", v[10]); SREG("nclusterid.z", v[11]);
  SREG("cluster_ctarank", v[12]); SREG("cluster_nctarank", v[13]);
  unsigned e;
  asm volatile("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(e));
  v[14] = e;
  v[15] = cta_linear();
  unsigned* o = out + (cta_linear() * blockDim.x + threadIdx.x) * 16;
  for (int i = 0; i < 16; ++i) o[i] = v[i];
}
extern "C" __global__ void cl_sregs(unsigned* out) { write_sregs(out); }
// compile-time cluster shape (.reqnctapercluster 2, 2, 1; .explicitcluster): launched without cluster=
extern "C" __global__ void __cluster_dims__(2, 2, 1) cl_sregs_fixed(unsigned* out) { write_sregs(out); }

// ---- 2. DSMEM ring: pull (ld.shared::cluster, generic ld through mapa.u64), push (st.shared::cluster),
//         getctarank / isspacep; 128 threads, 6 words per thread
extern "C" __global__ void cl_ring(const unsigned* in, unsigned* out, unsigned k) {
  __shared__ unsigned buf[128];
  __shared__ unsigned recv[128];
  const unsigned t = threadIdx.x, r = sreg_rank(), n = sreg_nrank(), cta = cta_linear();
  buf[t] = in[cta * 128 + t];
  recv[t] = 0xA5A5A5A5u;
  csync();
  const unsigned a1 = mapa(sa(&buf[t ^ 5]), (r + k) % n);
  const unsigned v1 = ld_dsmem(a1);
  unsigned long long g;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(g) : "l"(&buf[(t * 7) & 127]), "r"((r + n - 1) % n));
  const unsigned v2 = *(volatile unsigned*)g;
  st_dsmem(mapa(sa(&recv[t]), (r + 1) % n), buf[t] + r * 0x01000193u);
  unsigned rk, pc, pl;
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(rk) : "r"(a1));
  asm volatile("{ .reg .pred p; isspacep.shared::cta p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(pc) : "l"(g));
  asm volatile("{ .reg .pred p; isspacep.shared::cluster p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(pl) : "l"(g));
  csync();
  unsigned* o = out + (cta * 128 + t) * 6;
  o[0] = v1; o[1] = v2; o[2] = recv[t]; o[3] = rk; o[4] = pc; o[5] = pl;
}

// ---- 3. remote mbarrier producer/consumer: rank 0's warp 0 writes each consumer's slot (st.shared::cluster) and
//         arrives on the consumer's `full` barrier; consumers wait, read, and arrive on the producer's `empty`.
extern "C" __global__ void cl_prodcons(const unsigned* in, unsigned* out, unsigned rounds) {
  __shared__ unsigned slot[32];
  __shared__ __align__(8) unsigned long long full, empty;
  const unsigned t = threadIdx.x, r = sreg_rank(), n = sreg_nrank(), cta = cta_linear();
  const unsigned cl = cta / n;
  if (t == 0) {
    bar_init(sa(&full), 32);
    bar_init(sa(&empty), 32 * (n - 1));
    fence_bar_init();
  }
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  if (t < 32) {
    if (r == 0) {
      for (unsigned i = 0; i < rounds; ++i) {
        if (i > 0) bar_wait(sa(&empty), (i - 1) & 1);
        for (unsigned c = 1; c < n; ++c) {
          const unsigned v = in[((cl * rounds + i) * n + c) * 32 + t] ^ (i * 0x9E3779B9u);
          st_dsmem(mapa(sa(&slot[t]), c), v);
          remote_arrive(mapa(sa(&full), c));
        }
      }
    } else {
      for (unsigned i = 0; i < rounds; ++i) {
        bar_wait(sa(&full), i & 1);
        const unsigned v = slot[t];
        out[(cta * rounds + i) * 32 + t] = v + r;
        remote_arrive(mapa(sa(&empty), 0));
      }
    }
  }
  csync();
}

// ---- 4. cluster barrier phases reused in a loop (aligned and unaligned forms, one relaxed setup phase)
extern "C" __global__ void cl_barrier_loop(const unsigned* in, unsigned* out, unsigned iters) {
  __shared__ unsigned slot[2][64];
  const unsigned t = threadIdx.x, r = sreg_rank(), n = sreg_nrank(), cta = cta_linear();
  unsigned acc = in[cta * 64 + t];
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  for (unsigned it = 0; it < iters; ++it) {
    st_dsmem(mapa(sa(&slot[it & 1][t]), (r + 1) % n), acc);
    if (it == 3) asm volatile("fence.acq_rel.cluster;" ::: "memory");
    if (it & 1) {
      asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
    } else {
      asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
    }
    const unsigned v = slot[it & 1][t];
    out[(cta * (iters + 1) + it) * 64 + t] = v;
    acc = acc * 1664525u + v + it;
  }
  out[(cta * (iters + 1) + iters) * 64 + t] = acc;
}

// ---- 5. bulk copy SMEM -> peer SMEM (cp.async.bulk.shared::cluster.shared::cta), complete_tx on the peer's barrier
extern "C" __global__ void cl_bulk_peer(const unsigned* in, const unsigned* sizes, unsigned* out) {
  __shared__ __align__(128) unsigned src[256];
  __shared__ __align__(128) unsigned dst[256];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned t = threadIdx.x, r = sreg_rank(), n = sreg_nrank(), cta = cta_linear();
  if (t == 0) { bar_init(sa(&bar), 1); fence_bar_init(); }
  for (unsigned i = t; i < 256; i += blockDim.x) { src[i] = in[cta * 256 + i]; dst[i] = 0xA5A5A5A5u ^ i; }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (t == 0) bar_expect(sa(&bar), sizes[(cta / n) * n + (r + n - 1) % n]);
  csync();
  if (t == 0) {
    const unsigned peer = (r + 1) % n;
    asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(mapa(sa(dst), peer)), "r"(sa(src)), "r"(sizes[cta]), "r"(mapa(sa(&bar), peer)) : "memory");
  }
  bar_wait(sa(&bar), 0);
  for (unsigned i = t; i < 256; i += blockDim.x) out[cta * 256 + i] = dst[i];
  csync();
}

// ---- 6. atomics on a peer's SMEM: atom.shared::cluster.add (olds), red.shared::cluster.add/xor/max, generic
//         atomicMin through mapa.u64, red.shared::cluster.add.f32 of integer-valued floats (exact in any order)
extern "C" __global__ void cl_atomics(const unsigned* in, const unsigned* init, unsigned* olds, unsigned* fin) {
  __shared__ unsigned ctr[32], ctr2[16], x[16], mx[8], mn[8];
  __shared__ float f[8];
  const unsigned t = threadIdx.x, r = sreg_rank(), n = sreg_nrank(), cta = cta_linear();
  const unsigned* ii = init + cta * 88;
  if (t < 32) ctr[t] = ii[t];
  if (t < 16) { ctr2[t] = ii[32 + t]; x[t] = ii[48 + t]; }
  if (t < 8) { mx[t] = ii[64 + t]; mn[t] = ii[72 + t]; f[t] = (float)(ii[80 + t] & 0xFFFF); }
  csync();
  const unsigned v = in[cta * blockDim.x + t];
  unsigned old;
  asm volatile("atom.shared::cluster.add.u32 %0, [%1], %2;" : "=r"(old) : "r"(mapa(sa(&ctr[t % 32]), t % n)), "r"(v)
               : "memory");
  olds[cta * blockDim.x + t] = old;
  asm volatile("red.shared::cluster.add.u32 [%0], %1;" :: "r"(mapa(sa(&ctr2[t % 16]), (r + 1) % n)), "r"(v >> 3)
               : "memory");
  asm volatile("red.relaxed.cluster.shared::cluster.xor.b32 [%0], %1;" :: "r"(mapa(sa(&x[t % 16]), (r + t) % n)),
               "r"(v * 2654435761u) : "memory");
  asm volatile("red.shared::cluster.max.u32 [%0], %1;" :: "r"(mapa(sa(&mx[t % 8]), (t / 8) % n)), "r"(v)
               : "memory");
  unsigned long long g;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(g) : "l"(&mn[t % 8]), "r"((r + 2) % n));
  atomicMin((unsigned*)g, v ^ 0x5bd1e995u);
  asm volatile("red.shared::cluster.add.f32 [%0], %1;" :: "r"(mapa(sa(&f[t % 8]), (r + n - 1) % n)),
               "f"((float)(v & 0x3FF)) : "memory");
  csync();
  unsigned* o = fin + cta * 88;
  if (t < 32) o[t] = ctr[t];
  if (t < 16) { o[32 + t] = ctr2[t]; o[48 + t] = x[t]; }
  if (t < 8) { o[64 + t] = mx[t]; o[72 + t] = mn[t]; o[80 + t] = __float_as_uint(f[t]); }
}

// ---- 7. TMA multicast of 2-D tiles: rank r loads box (xs[r], ys[r]) with ctaMask masks[r]; it lands at
//         r * box_bytes in every masked CTA and completes tx on each one's barrier (expect[rank] bytes)
extern "C" __global__ void cl_tma_multicast(const __grid_constant__ TmapT tm, const int* xs, const int* ys,
                                            const unsigned* masks, const unsigned* expect, unsigned box_bytes,
                                            unsigned char* out) {
  __shared__ __align__(1024) unsigned char buf[4096];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned t = threadIdx.x, r = sreg_rank(), n = sreg_nrank(), cta = cta_linear();
  const unsigned base = (cta / n) * n;
  if (t == 0) { bar_init(sa(&bar), 1); fence_bar_init(); }
  for (unsigned i = t; i < 4096; i += blockDim.x) buf[i] = (unsigned char)(0xA5 ^ i);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (t == 0) bar_expect(sa(&bar), expect[cta]);
  csync();
  if (t == 0) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;"
                 :: "r"(sa(buf) + r * box_bytes), "l"((unsigned long long)&tm), "r"(xs[base + r]), "r"(ys[base + r]),
                    "r"(sa(&bar)), "h"((unsigned short)masks[base + r]) : "memory");
  }
  bar_wait(sa(&bar), 0);
  for (unsigned i = t; i < n * box_bytes; i += blockDim.x) out[cta * 4096 + i] = buf[i];
  csync();
}

// ---- 8. non-tensor bulk multicast: rank r copies chunk r (bytes[r] at goff[r]) to r * 1024 in every masked CTA
extern "C" __global__ void cl_bulk_multicast(const unsigned char* g, const unsigned* goff, const unsigned* bytes,
                                             const unsigned* masks, const unsigned* expect, unsigned char* out) {
  __shared__ __align__(128) unsigned char buf[4096];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned t = threadIdx.x, r = sreg_rank(), n = sreg_nrank(), cta = cta_linear();
  const unsigned base = (cta / n) * n;
  if (t == 0) { bar_init(sa(&bar), 1); fence_bar_init(); }
  for (unsigned i = t; i < 4096; i += blockDim.x) buf[i] = (unsigned char)(0x5A ^ (i * 7));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (t == 0) bar_expect(sa(&bar), expect[cta]);
  csync();
  if (t == 0) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1], %2, [%3], %4;"
                 :: "r"(sa(buf) + r * 1024), "l"(g + goff[base + r]), "r"(bytes[base + r]), "r"(sa(&bar)),
                    "h"((unsigned short)masks[base + r]) : "memory");
  }
  bar_wait(sa(&bar), 0);
  for (unsigned i = t; i < 4096; i += blockDim.x) out[cta * 4096 + i] = buf[i];
  csync();
}

// ---- 9. the shared address encoding: bits 31..24 of a .shared::cta / shared::cluster address are the cluster rank
//         (what CUTLASS's Sm100MmaPeerBitMask relies on); 8 words per thread
extern "C" __global__ void cl_addr(unsigned* out) {
  __shared__ unsigned a[64];
  const unsigned t = threadIdx.x, r = sreg_rank(), n = sreg_nrank(), cta = cta_linear();
  a[t % 64] = t;
  const unsigned x = sa(&a[t % 64]), q = t % n;
  const unsigned m = mapa(x, q), back = mapa(m, r);
  unsigned rk;
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(rk) : "r"(x));
  unsigned long long g, c;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(g) : "l"(&a[t % 64]), "r"(q));
  asm volatile("cvta.to.shared::cluster.u64 %0, %1;" : "=l"(c) : "l"(g));
  const unsigned cs = (unsigned)c;
  unsigned* o = out + (cta * blockDim.x + t) * 8;
  o[0] = x >> 24; o[1] = m >> 24; o[2] = (m & 0xFFFFFFu) == (x & 0xFFFFFFu); o[3] = rk;
  o[4] = back >> 24; o[5] = back == x; o[6] = cs >> 24; o[7] = (cs & 0xFFFFFFu) == (x & 0xFFFFFFu);
  csync();
}

// ---- 10. expect_tx / complete_tx / arrive on a peer's mbarrier (.shared::cluster): rank r's warp 0 stores 32 words
//          into peer (r+1)'s buffer, announces tx bytes, completes them and arrives; the peer waits and reads
extern "C" __global__ void cl_remote_tx(const unsigned* in, const unsigned* tx, unsigned* out) {
  __shared__ unsigned buf[32];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned t = threadIdx.x, r = sreg_rank(), n = sreg_nrank(), cta = cta_linear();
  if (t == 0) { bar_init(sa(&bar), 1); fence_bar_init(); }
  buf[t % 32] = 0xA5A5A5A5u;
  csync();
  const unsigned p = (r + 1) % n, pbar = mapa(sa(&bar), p);
  if (t < 32) {
    if (t == 0)
      asm volatile("mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" :: "r"(pbar), "r"(tx[cta])
                   : "memory");
    __syncwarp();
    st_dsmem(mapa(sa(&buf[t]), p), in[cta * 32 + t]);
    __syncwarp();
    if (t == 0) {
      asm volatile("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" :: "r"(pbar), "r"(tx[cta])
                   : "memory");
      remote_arrive(pbar);
    }
  }
  bar_wait(sa(&bar), 0);
  if (t < 32) out[cta * 32 + t] = buf[t];
  csync();
}
