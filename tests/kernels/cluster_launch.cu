// Cluster launch tests (tests/test_emu_cluster_launch.py): special registers, compile-time cluster directives,
// mapa / getctarank / isspacep.shared::cluster.
#define SREG(name, v) asm volatile("mov.u32 %0, %%" name ";" : "=r"(v))

extern "C" __global__ void cluster_sregs(unsigned *out, unsigned seed) {
  unsigned v[19];
  SREG("cluster_ctaid.x", v[0]); SREG("cluster_ctaid.y", v[1]); SREG("cluster_ctaid.z", v[2]);
  SREG("cluster_nctaid.x", v[3]); SREG("cluster_nctaid.y", v[4]); SREG("cluster_nctaid.z", v[5]);
  SREG("clusterid.x", v[6]); SREG("clusterid.y", v[7]); SREG("clusterid.z", v[8]);
  SREG("nclusterid.x", v[9]); SREG("nclusterid.y", v[10]); SREG("nclusterid.z", v[11]);
  SREG("cluster_ctarank", v[12]); SREG("cluster_nctarank", v[13]);
  unsigned e;
  asm volatile("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(e));
  v[14] = e;
  v[15] = blockIdx.x; v[16] = blockIdx.y; v[17] = blockIdx.z; v[18] = seed ^ threadIdx.x;
  unsigned cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned t = threadIdx.x;
  for (int i = 0; i < 19; ++i) out[(cta * blockDim.x + t) * 19 + i] = v[i];
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_fixed(unsigned *out) {
  unsigned r;
  SREG("cluster_ctarank", r);
  out[blockIdx.x] = r;
}

extern "C" __global__ void __cluster_dims__() cluster_explicit(unsigned *out) {
  unsigned r;
  SREG("cluster_nctarank", r);
  out[blockIdx.x] = r;
}

extern "C" __global__ void __launch_bounds__(64, 1, 4) cluster_max4(unsigned *out) {
  unsigned r;
  SREG("cluster_nctarank", r);
  out[blockIdx.x] = r;
}

// mapa / getctarank round trip and isspacep on every rank: out[cta][t] = {getctarank(mapa(buf, r)),
// isspacep.shared::cta(mapa generic), isspacep.shared::cluster(mapa generic), getctarank(generic)} for r = t % n
extern "C" __global__ void cluster_mapa(unsigned *out, unsigned *bad_rank) {
  __shared__ unsigned buf[64];
  unsigned n, me;
  SREG("cluster_nctarank", n);
  SREG("cluster_ctarank", me);
  unsigned r = (bad_rank[0] != 0xFFFFFFFFu) ? bad_rank[0] : threadIdx.x % n;
  unsigned sa = (unsigned)__cvta_generic_to_shared(&buf[threadIdx.x]);
  unsigned ca, rk, pc, pl, rg;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ca) : "r"(sa), "r"(r));
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(rk) : "r"(ca));
  unsigned long long g;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(g) : "l"(&buf[threadIdx.x]), "r"(r));
  asm volatile("{ .reg .pred p; isspacep.shared::cta p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(pc) : "l"(g));
  asm volatile("{ .reg .pred p; isspacep.shared::cluster p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(pl) : "l"(g));
  asm volatile("getctarank.u64 %0, %1;" : "=r"(rg) : "l"(g));
  unsigned own;
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(own) : "r"(sa));
  unsigned cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned *o = out + (cta * blockDim.x + threadIdx.x) * 5;
  o[0] = rk; o[1] = pc; o[2] = pl; o[3] = rg; o[4] = own;
}
