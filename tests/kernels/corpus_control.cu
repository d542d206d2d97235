// corpus_control.cu — fidelity-corpus kernels for control flow and address spaces (tests/corpus/kernels_new.py
// holds the launches and the Python references).  Bare NVRTC, sm_90a.
//
// corpus_divergence(const unsigned* a, unsigned* out, unsigned n): block 128; out[i*6 + k]:
//   0 nested if/else, 1 Collatz steps (per-thread trip count, cap 300), 2 loop with continue/break, 3 switch
//   (with fallthrough), 4/5 written only by threads that did not return early (else stay poisoned).
// corpus_local_array(const unsigned* a, unsigned* out, unsigned n): 32-word local array, data-dependent indices;
//   out[i*3 + 0..2].
// corpus_noinline_call(const unsigned* a, const unsigned* b, unsigned* out, unsigned n): __noinline__ functions
//   (call/ret, pointer-to-local argument, float loop, recursion); out[i*4 + 0..3].
// corpus_grid3d(unsigned* out, unsigned salt): any 3-D grid/block; out[g*5 + 0..4] with g the linear thread id.
// corpus_const_table(const unsigned char* data, const unsigned* a, unsigned* out, unsigned n): __constant__ CRC32
//   table over 16 bytes per thread -> out[i*2], __constant__ float weights -> out[i*2 + 1].
// corpus_generic_ptr(const unsigned* g, unsigned* out, unsigned n): block 128, n = grid*128; loads/stores through
//   one generic pointer that points at shared or global memory per thread; out has 4n words.
typedef unsigned long long u64;

extern "C" __global__ void corpus_divergence(const unsigned* a, unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i];
  unsigned* o = out + (size_t)i * 6;
  unsigned r;
  if (x & 1u) {
    if (x & 2u) r = x * 3u + 1u; else r = x ^ 0xA5A5A5A5u;
  } else {
    if (x & 4u) { r = x >> 3; if (r & 8u) r += 7u; } else r = ~x;
  }
  o[0] = r;
  unsigned v = (x & 0xFFFu) | 1u, steps = 0;
  while (v != 1u && steps < 300u) { v = (v & 1u) ? 3u * v + 1u : v >> 1; ++steps; }
  o[1] = steps;
  unsigned acc = 0, trips = (x >> 27) + 1u;
  for (unsigned j = 0; j < trips; ++j) {
    if (((x >> j) & 3u) == 3u) continue;
    acc = acc * 31u + j + (x >> (j & 15u));
    if ((acc & 0xFFu) == 0x5Au) break;
  }
  o[2] = acc;
  unsigned s, t = x;
  switch ((x >> 4) & 15u) {
    case 0: s = x + 1u; break;
    case 1: s = x - 7u; break;
    case 2: case 3: s = x << 3; break;
    case 5: s = x * x; break;
    case 6: s = __brev(x); break;
    case 7: t = x + 3u;   // fallthrough
    case 8: s = t ^ 0xFFFFu; break;
    case 11: s = x >> 11; break;
    case 12: s = x | 0x80000000u; break;
    case 13: s = 0u - x; break;
    default: s = 0xDEADBEEFu ^ x;
  }
  o[3] = s;
  if ((x & 0x300u) == 0x300u) return;
  o[4] = x + i;
  if (__popc(x) > 16) return;
  o[5] = x ^ i;
}

extern "C" __global__ void corpus_local_array(const unsigned* a, unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i];
  unsigned loc[32];
  for (int j = 0; j < 32; ++j) loc[j] = x * (unsigned)(j + 1) + (x >> j);
  for (int j = 0; j < 8; ++j) loc[(x >> (4 * j)) & 31u] ^= (unsigned)j * 0x9E3779B9u;
  unsigned acc = 0;
  for (int j = 0; j < 16; ++j) {
    unsigned k = (acc + x + (unsigned)j) & 31u;
    acc += loc[k];
    loc[(k * 7u + 3u) & 31u] = acc;
  }
  out[i * 3 + 0] = acc;
  out[i * 3 + 1] = loc[x & 31u];
  out[i * 3 + 2] = loc[(x >> 5) & 31u];
}

__device__ __noinline__ unsigned corpus_mix(unsigned a, unsigned b, unsigned* side) {
  unsigned h = a ^ (b * 0x85EBCA6Bu);
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  *side = h + a;
  return h;
}

__device__ __noinline__ float corpus_poly(float x, int n) {
  float r = 0.0f;
  for (int k = 0; k < n; ++k) r = r * x + (float)(k + 1);
  return r;
}

__device__ __noinline__ unsigned corpus_gcd(unsigned a, unsigned b) { return b == 0u ? a : corpus_gcd(b, a % b); }

extern "C" __global__ void corpus_noinline_call(const unsigned* a, const unsigned* b, unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], side = 0, r;
  if (x & 1u) r = corpus_mix(x, y, &side); else r = corpus_mix(y, x, &side);
  out[i * 4 + 0] = r;
  out[i * 4 + 1] = side;
  float fx = (float)((int)(x & 15u) - 8) * 0.25f;
  out[i * 4 + 2] = __float_as_uint(corpus_poly(fx, (int)(y & 7u)));
  out[i * 4 + 3] = corpus_gcd(x & 0xFFFFFu, y & 0xFFFFFu);
}

extern "C" __global__ void corpus_grid3d(unsigned* out, unsigned salt) {
  unsigned bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned g = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  unsigned* o = out + (size_t)g * 5;
  o[0] = threadIdx.x | (threadIdx.y << 8) | (threadIdx.z << 16) | (lane << 24);
  o[1] = blockIdx.x | (blockIdx.y << 8) | (blockIdx.z << 16);
  o[2] = blockDim.x | (blockDim.y << 8) | (blockDim.z << 16);
  o[3] = gridDim.x | (gridDim.y << 8) | (gridDim.z << 16);
  o[4] = (g * 2654435761u) ^ salt;
}

__constant__ unsigned kCrc32[256] = {
  0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu, 0xe963a535u, 0x9e6495a3u,
  0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u, 0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u,
  0x1db71064u, 0x6ab020f2u, 0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
  0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u, 0xfa0f3d63u, 0x8d080df5u,
  0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u, 0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu,
  0x35b5a8fau, 0x42b2986cu, 0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
  0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u, 0xcfba9599u, 0xb8bda50fu,
  0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u, 0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du,
  0x76dc4190u, 0x01db7106u, 0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
  0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du, 0x91646c97u, 0xe6635c01u,
  0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu, 0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u,
  0x65b0d9c6u, 0x12b7e950u, 0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
  0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u, 0xa4d1c46du, 0xd3d6f4fbu,
  0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u, 0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u,
  0x5005713cu, 0x270241aau, 0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
  0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u, 0xb7bd5c3bu, 0xc0ba6cadu,
  0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au, 0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u,
  0xe3630b12u, 0x94643b84u, 0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
  0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu, 0x196c3671u, 0x6e6b06e7u,
  0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu, 0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u,
  0xd6d6a3e8u, 0xa1d1937eu, 0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
  0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u, 0x316e8eefu, 0x4669be79u,
  0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u, 0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu,
  0xc5ba3bbeu, 0xb2bd0b28u, 0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
  0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu, 0x72076785u, 0x05005713u,
  0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u, 0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u,
  0x86d3d2d4u, 0xf1d4e242u, 0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
  0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u, 0x616bffd3u, 0x166ccf45u,
  0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u, 0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu,
  0xaed16a4au, 0xd9d65adcu, 0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
  0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u, 0x54de5729u, 0x23d967bfu,
  0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u, 0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du};
__constant__ float kW[8] = {0.5f, -1.25f, 3.0f, 0.0078125f, -96.0f, 1024.5f, -0.375f, 7.0f};

extern "C" __global__ void corpus_const_table(const unsigned char* data, const unsigned* a, unsigned* out,
                                              unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned c = 0xFFFFFFFFu;
  for (int j = 0; j < 16; ++j) c = kCrc32[(c ^ data[i * 16 + j]) & 0xFFu] ^ (c >> 8);
  out[i * 2] = ~c;
  unsigned x = a[i];
  float s = 0.0f;
  for (int j = 0; j < 4; ++j) s += kW[(x >> (3 * j)) & 7u];
  out[i * 2 + 1] = __float_as_uint(s);
}

extern "C" __global__ void corpus_generic_ptr(const unsigned* g, unsigned* out, unsigned n) {
  __shared__ unsigned sm[128];
  unsigned t = threadIdx.x, i = blockIdx.x * 128 + t;
  unsigned x = g[i];
  sm[t] = x * 3u + 1u;
  __syncthreads();
  const unsigned* p = (x & 1u) ? &sm[(t + 5u) & 127u] : &g[(i + 9u) % n];
  unsigned v = *(const volatile unsigned*)p;
  unsigned sp, gp;
  asm volatile("{ .reg .pred q; isspacep.shared q, %1; selp.u32 %0, 1, 0, q; }" : "=r"(sp) : "l"(p));
  asm volatile("{ .reg .pred q; isspacep.global q, %1; selp.u32 %0, 1, 0, q; }" : "=r"(gp) : "l"(p));
  __syncthreads();
  unsigned* q = (x & 2u) ? &sm[t ^ 1u] : out + 2 * n + i;
  *(volatile unsigned*)q = v + t;
  __syncthreads();
  out[i] = v;
  out[n + i] = sp | (gp << 1);
  out[3 * n + i] = sm[t];
}
