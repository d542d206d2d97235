// corpus_sync.cu — fidelity-corpus kernels for block/warp synchronisation, cp.async pipelines and atomics
// (tests/corpus/kernels_new.py holds the launches and the references).  Bare NVRTC, sm_90a.
//
// corpus_reduce(const unsigned* a, const unsigned* f, unsigned* out): block 256.  Per block b: out[b*4 + 0] tree
//   sum (u32, shared memory + __syncthreads), [1] tree sum of the f32 words f (fixed pairwise order), [2] sum of the
//   per-warp shuffle sums.  Per thread i (after 4*gridDim.x words): [0] shfl.down running sum (lanes past 31 read
//   their own value), [1] shfl.xor max, [2] shfl.xor f32 butterfly sum.
// corpus_named_barrier(const unsigned* a, unsigned* out): block 128.  Warps 0-1 produce into shared memory and
//   bar.arrive 1,128; warps 2-3 bar.sync 1,128, exchange through bar.sync 2,64 (only those 64 threads).
// corpus_cpasync_pipeline(const unsigned* src, unsigned* out, unsigned ntiles): block 64; double-buffered
//   cp.async.cg 16-byte copies of 1 KiB tiles, commit/wait_group 1; out[(b*64 + t)*2 + 0..1].
// corpus_vote_loop(const unsigned* a, unsigned* out): block 64.  Warp-uniform loop on vote.any with per-lane trip
//   counts, ballot/popc, vote.all, and a ballot/shfl over the sub-warp mask of a divergent branch; out[i*4 + 0..3]
//   ([3] only for lanes with x & 32).
// corpus_atomics_hist(const unsigned* a, unsigned* hist, unsigned* ctr, unsigned* ticket, unsigned* slot,
//   unsigned* gmax, unsigned c0, unsigned n): block 128.  hist[0..63] += x>>16 at bin (x>>5)&63 (global atomics),
//   hist[64..95] += shared-memory histogram of x&31; gmax[x&3] = max; ticket[i] = atomicAdd(ctr, 1) (starts at
//   c0), slot[ticket - c0] = i.  Tickets/slots depend on the serialization; hist/gmax/ctr do not.
// corpus_dyn_smem(const unsigned* in, unsigned* out, unsigned w, unsigned h): dynamic shared memory (extern
//   __shared__, size from the launch: 16*17 words), block (16, 8), grid (w/16, h/16): padded-tile transpose,
//   out[x*h + y] = in[y*w + x] ^ ((x % 16) << 16).
// corpus_scan_partial(const unsigned* a, unsigned* out): block 80 (the third warp has 16 lanes): shfl.up inclusive
//   scan and redux.sync.add with the partial-warp membermask, __syncwarp; out[i*3 + 0..2] = scan, mask, warp sum.
extern "C" __global__ void corpus_reduce(const unsigned* a, const unsigned* f, unsigned* out) {
  __shared__ unsigned su[256];
  __shared__ float sf[256];
  __shared__ unsigned wsum[8];
  unsigned t = threadIdx.x, i = blockIdx.x * 256 + t;
  unsigned x = a[i];
  float y = __uint_as_float(f[i]);
  su[t] = x;
  sf[t] = y;
  __syncthreads();
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (t < s) { su[t] += su[t + s]; sf[t] += sf[t + s]; }
    __syncthreads();
  }
  unsigned w = x;
  for (int o = 16; o > 0; o >>= 1) w += __shfl_down_sync(0xffffffffu, w, o);
  unsigned m = x;
  for (int o = 1; o < 32; o <<= 1) { unsigned u = __shfl_xor_sync(0xffffffffu, m, o); m = u > m ? u : m; }
  float fw = y;
  for (int o = 16; o > 0; o >>= 1) fw += __shfl_xor_sync(0xffffffffu, fw, o);
  if ((t & 31u) == 0) wsum[t >> 5] = w;
  __syncthreads();
  if (t == 0) {
    unsigned tot = 0;
    for (int k = 0; k < 8; ++k) tot += wsum[k];
    out[blockIdx.x * 4 + 0] = su[0];
    out[blockIdx.x * 4 + 1] = __float_as_uint(sf[0]);
    out[blockIdx.x * 4 + 2] = tot;
  }
  unsigned* o = out + gridDim.x * 4 + (size_t)i * 3;
  o[0] = w;
  o[1] = m;
  o[2] = __float_as_uint(fw);
}

extern "C" __global__ void corpus_named_barrier(const unsigned* a, unsigned* out) {
  __shared__ unsigned buf[64];
  __shared__ unsigned buf2[64];
  unsigned t = threadIdx.x, w = t >> 5;
  const unsigned* ab = a + blockIdx.x * 128;
  unsigned* ob = out + blockIdx.x * 128;
  if (w < 2) {
    buf[t] = ab[t] * 2654435761u;
    asm volatile("bar.arrive 1, 128;" ::: "memory");
    ob[t] = ab[t] ^ 0x5555u;
  } else {
    asm volatile("bar.sync 1, 128;" ::: "memory");
    unsigned u = t - 64;
    buf2[u] = buf[63 - u] + u;
    asm volatile("bar.sync 2, 64;" ::: "memory");
    ob[t] = buf2[u ^ 1u] + ab[t];
  }
}

extern "C" __global__ void corpus_cpasync_pipeline(const unsigned* src, unsigned* out, unsigned ntiles) {
  __shared__ __align__(16) unsigned buf[2][256];
  unsigned t = threadIdx.x;
  const unsigned* base = src + (size_t)blockIdx.x * ntiles * 256;
  unsigned acc0 = 0, acc1 = 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
               :: "r"((unsigned)__cvta_generic_to_shared(&buf[0][t * 4])), "l"(base + t * 4) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  for (unsigned k = 0; k < ntiles; ++k) {
    if (k + 1 < ntiles)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                   :: "r"((unsigned)__cvta_generic_to_shared(&buf[(k + 1) & 1][t * 4])),
                      "l"(base + (k + 1) * 256 + t * 4) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 1;" ::: "memory");
    __syncthreads();
    const unsigned* b = buf[k & 1];
    acc0 += b[t * 4] * (k + 1) + b[(t * 4 + 7 * k + 1) & 255u];
    acc1 ^= b[255 - t] + k;
    __syncthreads();
  }
  out[(blockIdx.x * 64 + t) * 2 + 0] = acc0;
  out[(blockIdx.x * 64 + t) * 2 + 1] = acc1;
}

extern "C" __global__ void corpus_vote_loop(const unsigned* a, unsigned* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = a[i], cnt = x & 15u, iters = 0, acc = 0;
  while (__any_sync(0xffffffffu, cnt > 0)) {
    unsigned b = __ballot_sync(0xffffffffu, cnt > 0);
    if (cnt > 0) { acc += (unsigned)__popc(b) * (iters + 1); --cnt; }
    ++iters;
  }
  out[i * 4 + 0] = acc;
  out[i * 4 + 1] = iters;
  out[i * 4 + 2] = __all_sync(0xffffffffu, x & 16u) | (__any_sync(0xffffffffu, x & 0x80000000u) << 1);
  unsigned m = __ballot_sync(0xffffffffu, x & 32u);
  if (x & 32u) {
    unsigned b = __ballot_sync(m, x & 64u);
    unsigned v = __shfl_sync(m, x, __ffs(m) - 1);
    out[i * 4 + 3] = b ^ v;
  }
}

extern "C" __global__ void corpus_atomics_hist(const unsigned* a, unsigned* hist, unsigned* ctr, unsigned* ticket,
                                               unsigned* slot, unsigned* gmax, unsigned c0, unsigned n) {
  __shared__ unsigned sh[32];
  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 32) sh[t] = 0;
  __syncthreads();
  unsigned x = a[i];
  atomicAdd(&sh[x & 31u], 1u);
  atomicAdd(&hist[(x >> 5) & 63u], x >> 16);
  atomicMax(&gmax[x & 3u], x);
  unsigned tk = atomicAdd(ctr, 1u);
  ticket[i] = tk;
  if (tk - c0 < n) slot[tk - c0] = i;
  __syncthreads();
  if (t < 32) atomicAdd(&hist[64 + t], sh[t]);
}

extern "C" __global__ void corpus_dyn_smem(const unsigned* in, unsigned* out, unsigned w, unsigned h) {
  extern __shared__ unsigned tile[];
  unsigned bx = blockIdx.x * 16, by = blockIdx.y * 16, tx = threadIdx.x, ty = threadIdx.y;
  for (unsigned r = ty; r < 16; r += 8) tile[r * 17 + tx] = in[(by + r) * w + bx + tx];
  __syncthreads();
  for (unsigned r = ty; r < 16; r += 8) out[(bx + r) * h + by + tx] = tile[tx * 17 + r] ^ (r << 16);
}

extern "C" __global__ void corpus_scan_partial(const unsigned* a, unsigned* out) {
  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t, lane = t & 31u;
  unsigned left = blockDim.x - (t & ~31u);
  unsigned mask = left >= 32u ? 0xffffffffu : ((1u << left) - 1u);
  unsigned x = a[i], v = x;
  for (unsigned o = 1; o < 32; o <<= 1) {
    unsigned u = __shfl_up_sync(mask, v, o);
    if (lane >= o) v += u;
  }
  __syncwarp(mask);
  out[i * 3 + 0] = v;
  out[i * 3 + 1] = mask;
  out[i * 3 + 2] = __reduce_add_sync(mask, x);
}
