// mma.sync.aligned for every shape and type an H100 (sm_90a) runs (PTX ISA 9.7.14.5.14), one kernel per variant.
// Each warp computes one problem: it gathers A (M x K, row-major in memory), B (K x N, column-major: element
// (k, n) at n * K + k) and C (M x N row-major) into its fragments with the ISA's per-shape formulas
// (9.7.14.5.1-13, written out below independently of the emulator), runs mma, scatters D (M x N row-major).
// Element codes are stored one per 32-bit word in memory (low bits), whatever their width; the kernel packs them.
#include <cstdint>

// fragment classes: element width EB bits per element, E = 32 / EB elements per 32-bit register
struct Pos { int r, c; };

// A of the m16n8kK shapes with K = 16 * E / 2 ... (half-K: 2 registers, full-K: 4 registers), E elements/register
__device__ Pos a16(int lane, int i, int E, int K, int nreg) {
  int g = lane >> 2, t = lane & 3, reg = i / E;
  Pos p; p.r = g + 8 * (reg & 1); p.c = t * E + (i % E) + (nreg == 4 ? (reg >> 1) * (K / 2) : 0); return p;
}
__device__ Pos b16(int lane, int i, int E, int K, int nreg) {   // B of m16n8kK: (k, n)
  int g = lane >> 2, t = lane & 3, reg = i / E;
  Pos p; p.r = t * E + (i % E) + (nreg == 2 ? reg * (K / 2) : 0); p.c = g; return p;
}
__device__ Pos c16(int lane, int i) { int g = lane >> 2, t = lane & 3; Pos p; p.r = g + 8 * (i >= 2); p.c = t * 2 + (i & 1); return p; }
__device__ Pos c8(int lane, int i) { int g = lane >> 2, t = lane & 3; Pos p; p.r = g; p.c = t * 2 + i; return p; }
// tf32 / f64: one element per register
__device__ Pos atf(int lane, int i, int K) {   // m16n8k4: a0 row g, a1 row g+8; m16n8k8/k16: rows g, g+8 alternate
  int g = lane >> 2, t = lane & 3; Pos p;
  if (K == 4) { p.r = g + 8 * i; p.c = t; } else { p.r = g + 8 * (i & 1); p.c = t + 4 * (i >> 1); }
  return p;
}
__device__ Pos btf(int lane, int i) { int g = lane >> 2, t = lane & 3; Pos p; p.r = t + 4 * i; p.c = g; return p; }

template <int EB, int NA, int NB, int NC, int M, int N, int K, int CB>
struct Frag {
  static constexpr int E = 32 / EB;
  uint32_t a[NA], b[NB], c[NC];
};

__device__ uint32_t getbits(const uint32_t* src, int idx, int EB) { return src[idx] & (EB == 32 ? 0xFFFFFFFFu : ((1u << EB) - 1)); }

// gather A/B/C words for the packed-element classes (EB = 16, 8, 4, 1) of m16n8kK / m8n8kK
template <int EB, int NA, int NB, int NC, int M, int N, int K, int CB>
__device__ void gather(Frag<EB, NA, NB, NC, M, N, K, CB>& f, const uint32_t* A, const uint32_t* B, const uint32_t* C, int lane) {
  const int E = 32 / EB;
  for (int r = 0; r < NA; ++r) f.a[r] = 0;
  for (int r = 0; r < NB; ++r) f.b[r] = 0;
  for (int i = 0; i < NA * E; ++i) {
    Pos p;
    if (M == 16) p = a16(lane, i, E, K, NA); else { p.r = lane >> 2; p.c = (lane & 3) * E + i; }
    f.a[i / E] |= getbits(A, p.r * K + p.c, EB) << ((i % E) * EB);
  }
  for (int i = 0; i < NB * E; ++i) {
    Pos p;
    if (M == 16) p = b16(lane, i, E, K, NB); else { p.r = (lane & 3) * E + i; p.c = lane >> 2; }
    f.b[i / E] |= getbits(B, p.c * K + p.r, EB) << ((i % E) * EB);
  }
  // C: CB = 32 (f32/s32: one per register) or 16 (f16: two per register)
  const int CE = 32 / CB;
  for (int r = 0; r < NC; ++r) f.c[r] = 0;
  for (int i = 0; i < NC * CE; ++i) {
    Pos p = (M == 16) ? c16(lane, i) : c8(lane, i);
    f.c[i / CE] |= getbits(C, p.r * N + p.c, CB) << ((i % CE) * CB);
  }
}

template <int EB, int NA, int NB, int NC, int M, int N, int K, int CB>
__device__ void scatter(const uint32_t* d, uint32_t* D, int lane) {
  const int CE = 32 / CB;
  for (int i = 0; i < NC * CE; ++i) {
    Pos p = (M == 16) ? c16(lane, i) : c8(lane, i);
    D[p.r * N + p.c] = (d[i / CE] >> ((i % CE) * CB)) & (CB == 32 ? 0xFFFFFFFFu : 0xFFFFu);
  }
}

#define ASM_A1 "{%4}"
#define KERNEL(name, EB, NA, NB, NC, M, N, K, CB, ASM, ...)                                              \
extern "C" __global__ void name(const uint32_t* A, const uint32_t* B, const uint32_t* C, uint32_t* D) { \
  int w = threadIdx.x >> 5, lane = threadIdx.x & 31;                                                    \
  A += w * M * K; B += w * K * N; C += w * M * N; D += w * M * N;                                        \
  Frag<EB, NA, NB, NC, M, N, K, CB> f; gather(f, A, B, C, lane);                                         \
  uint32_t d[NC];                                                                                        \
  asm volatile(ASM : __VA_ARGS__);                                                                      \
  scatter<EB, NA, NB, NC, M, N, K, CB>(d, D, lane);                                                      \
}

// operand lists by register counts (D, A, B, C)
#define O_D4 "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
#define O_D2 "=r"(d[0]), "=r"(d[1])
#define I_A4 "r"(f.a[0]), "r"(f.a[1]), "r"(f.a[2]), "r"(f.a[3])
#define I_A2 "r"(f.a[0]), "r"(f.a[1])
#define I_A1 "r"(f.a[0])
#define I_B2 "r"(f.b[0]), "r"(f.b[1])
#define I_B1 "r"(f.b[0])
#define I_C4 "r"(f.c[0]), "r"(f.c[1]), "r"(f.c[2]), "r"(f.c[3])
#define I_C2 "r"(f.c[0]), "r"(f.c[1])

// D4 A4 B2 C4: {0-3}, {4-7}, {8,9}, {10-13}
#define S_4422(op) op " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
// D4 A2 B1 C4
#define S_4214(op) op " {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
// D2 A4 B2 C2 (f16 accumulators, A4 B2)
#define S_2422(op) op " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
// D2 A2 B1 C2
#define S_2212(op) op " {%0,%1}, {%2,%3}, {%4}, {%5,%6};"
// D2 A1 B1 C2 (m8n8kK integer)
#define S_2112(op) op " {%0,%1}, {%2}, {%3}, {%4,%5};"

// ---- f16 / bf16
KERNEL(mma_m16n8k16_f32_f16, 16, 4, 2, 4, 16, 8, 16, 32, S_4422("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), O_D4 : I_A4, I_B2, I_C4)
KERNEL(mma_m16n8k16_f16_f16, 16, 4, 2, 2, 16, 8, 16, 16, S_2422("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"), O_D2 : I_A4, I_B2, I_C2)
KERNEL(mma_m16n8k8_f32_f16, 16, 2, 1, 4, 16, 8, 8, 32, S_4214("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"), O_D4 : I_A2, I_B1, I_C4)
KERNEL(mma_m16n8k8_f16_f16, 16, 2, 1, 2, 16, 8, 8, 16, S_2212("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16"), O_D2 : I_A2, I_B1, I_C2)
KERNEL(mma_m16n8k16_bf16, 16, 4, 2, 4, 16, 8, 16, 32, S_4422("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), O_D4 : I_A4, I_B2, I_C4)
KERNEL(mma_m16n8k8_bf16, 16, 2, 1, 4, 16, 8, 8, 32, S_4214("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32"), O_D4 : I_A2, I_B1, I_C4)
// ---- fp8 (sm_89+)
KERNEL(mma_m16n8k32_e4m3_e4m3, 8, 4, 2, 4, 16, 8, 32, 32, S_4422("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"), O_D4 : I_A4, I_B2, I_C4)
KERNEL(mma_m16n8k32_e4m3_e5m2, 8, 4, 2, 4, 16, 8, 32, 32, S_4422("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32"), O_D4 : I_A4, I_B2, I_C4)
KERNEL(mma_m16n8k32_e5m2_e4m3, 8, 4, 2, 4, 16, 8, 32, 32, S_4422("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32"), O_D4 : I_A4, I_B2, I_C4)
KERNEL(mma_m16n8k32_e5m2_e5m2, 8, 4, 2, 4, 16, 8, 32, 32, S_4422("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"), O_D4 : I_A4, I_B2, I_C4)
// ---- integer: u8/s8 (m16n8k32, m16n8k16, m8n8k16), u4/s4 (m16n8k64, m16n8k32, m8n8k32), with and without .satfinite
#define INT4(sh, EB, NA, NB, NC, M, K, S, ta, tb)                                                                          \
KERNEL(mma_##sh##_##ta##_##tb, EB, NA, NB, NC, M, 8, K, 32, S("mma.sync.aligned." #sh ".row.col.s32." #ta "." #tb ".s32"), \
       O_D##NC : I_A##NA, I_B##NB, I_C##NC)                                                                              \
KERNEL(mma_##sh##_##ta##_##tb##_sat, EB, NA, NB, NC, M, 8, K, 32,                                                      \
       S("mma.sync.aligned." #sh ".row.col.satfinite.s32." #ta "." #tb ".s32"), O_D##NC : I_A##NA, I_B##NB, I_C##NC)
#define INTS(sh, EB, NA, NB, NC, M, K, S, u, s) \
  INT4(sh, EB, NA, NB, NC, M, K, S, u, u) INT4(sh, EB, NA, NB, NC, M, K, S, u, s) \
  INT4(sh, EB, NA, NB, NC, M, K, S, s, u) INT4(sh, EB, NA, NB, NC, M, K, S, s, s)
INTS(m16n8k32, 8, 4, 2, 4, 16, 32, S_4422, u8, s8)
INTS(m16n8k16, 8, 2, 1, 4, 16, 16, S_4214, u8, s8)
INTS(m8n8k16, 8, 1, 1, 2, 8, 16, S_2112, u8, s8)
INTS(m16n8k64, 4, 4, 2, 4, 16, 64, S_4422, u4, s4)
INTS(m16n8k32, 4, 2, 1, 4, 16, 32, S_4214, u4, s4)
INTS(m8n8k32, 4, 1, 1, 2, 8, 32, S_2112, u4, s4)
// ---- b1 popc
KERNEL(mma_m16n8k256_xor, 1, 4, 2, 4, 16, 8, 256, 32, S_4422("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc"), O_D4 : I_A4, I_B2, I_C4)
KERNEL(mma_m16n8k256_and, 1, 4, 2, 4, 16, 8, 256, 32, S_4422("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc"), O_D4 : I_A4, I_B2, I_C4)
KERNEL(mma_m16n8k128_xor, 1, 2, 1, 4, 16, 8, 128, 32, S_4214("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.xor.popc"), O_D4 : I_A2, I_B1, I_C4)
KERNEL(mma_m16n8k128_and, 1, 2, 1, 4, 16, 8, 128, 32, S_4214("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc"), O_D4 : I_A2, I_B1, I_C4)
KERNEL(mma_m8n8k128_xor, 1, 1, 1, 2, 8, 8, 128, 32, S_2112("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc"), O_D2 : I_A1, I_B1, I_C2)
KERNEL(mma_m8n8k128_and, 1, 1, 1, 2, 8, 8, 128, 32, S_2112("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc"), O_D2 : I_A1, I_B1, I_C2)

// ---- tf32: one element per register, 16x8 accumulators
extern "C" __global__ void mma_tf32(const uint32_t* A, const uint32_t* B, const uint32_t* C, uint32_t* D, int K) {
  int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  A += w * 16 * K; B += w * K * 8; C += w * 128; D += w * 128;
  uint32_t a[4], b[2], c[4], d[4];
  int na = K == 4 ? 2 : 4, nb = K == 4 ? 1 : 2;
  for (int i = 0; i < na; ++i) { Pos p = atf(lane, i, K); a[i] = A[p.r * K + p.c]; }
  for (int i = 0; i < nb; ++i) { Pos p = btf(lane, i); b[i] = B[p.c * K + p.r]; }
  for (int i = 0; i < 4; ++i) { Pos p = c16(lane, i); c[i] = C[p.r * 8 + p.c]; }
  if (K == 4)
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(b[0]),
                   "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  else
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),
                   "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  for (int i = 0; i < 4; ++i) { Pos p = c16(lane, i); D[p.r * 8 + p.c] = d[i]; }
}

// ---- f64: m8n8k4 (8x8 accumulators), m16n8k4 / k8 / k16 (16x8)
extern "C" __global__ void mma_f64(const double* A, const double* B, const double* C, double* D, int M, int K) {
  int w = threadIdx.x >> 5, lane = threadIdx.x & 31, N = 8;
  A += w * M * K; B += w * K * N; C += w * M * N; D += w * M * N;
  double a[8], b[4], c[4], d[4];
  int g = lane >> 2, t = lane & 3;
  if (M == 8) {
    a[0] = A[g * K + t]; b[0] = B[g * K + t];
    for (int i = 0; i < 2; ++i) { Pos p = c8(lane, i); c[i] = C[p.r * N + p.c]; }
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
                 : "=d"(d[0]), "=d"(d[1]) : "d"(a[0]), "d"(b[0]), "d"(c[0]), "d"(c[1]));
    for (int i = 0; i < 2; ++i) { Pos p = c8(lane, i); D[p.r * N + p.c] = d[i]; }
    return;
  }
  int na = K == 4 ? 2 : (K == 8 ? 4 : 8), nb = K / 4;
  for (int i = 0; i < na; ++i) { Pos p = atf(lane, i, K); a[i] = A[p.r * K + p.c]; }
  for (int i = 0; i < nb; ++i) { Pos p = btf(lane, i); b[i] = B[p.c * K + p.r]; }
  for (int i = 0; i < 4; ++i) { Pos p = c16(lane, i); c[i] = C[p.r * N + p.c]; }
  if (K == 4)
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(b[0]),
                   "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
  else if (K == 8)
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]),
                   "d"(b[0]), "d"(b[1]), "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
                 "{%12,%13,%14,%15}, {%16,%17,%18,%19};"
                 : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]),
                   "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]),
                   "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
  for (int i = 0; i < 4; ++i) { Pos p = c16(lane, i); D[p.r * N + p.c] = d[i]; }
}

// ---- m8n8k4 .f16: four 8x8x4 problems per warp (quad pairs: lanes 0-3 with 16-19, 4-7 with 20-23, ...)
// A row-major (ALAY 0) or column-major (1), B row-major (BLAY 0) or column-major (1); in memory every problem's A is
// 8x4 row-major, B 4x8 with (k, n) at n * 4 + k, C/D 8x8 row-major.
template <int ALAY, int BLAY, int F32>
__device__ void m884(const uint32_t* A, const uint32_t* B, const uint32_t* C, uint32_t* D) {
  int w = threadIdx.x >> 5, lane = threadIdx.x & 31, qp = (lane >> 2) & 3, hi = lane >= 16;
  int prob = w * 4 + qp;
  A += prob * 32; B += prob * 32; C += prob * 64; D += prob * 64;
  uint32_t a[2] = {0, 0}, b[2] = {0, 0}, c[8], d[8];
  for (int i = 0; i < 4; ++i) {
    int r = ALAY == 0 ? (lane & 3) + 4 * hi : (i & 3) + 4 * hi, k = ALAY == 0 ? i : (lane & 3);
    a[i >> 1] |= (A[r * 4 + k] & 0xFFFF) << (16 * (i & 1));
    int kb = BLAY == 0 ? (lane & 3) : i, n = BLAY == 0 ? i + 4 * hi : (lane & 3) + 4 * hi;
    b[i >> 1] |= (B[n * 4 + kb] & 0xFFFF) << (16 * (i & 1));
  }
  for (int i = 0; i < 8; ++i) {
    int r, col;
    if (F32) { r = (lane & 1) + (i & 2) + 4 * hi; col = (i & 4) + (lane & 2) + (i & 1); }
    else { r = (lane & 3) + 4 * hi; col = i; }
    if (F32) c[i] = C[r * 8 + col];
    else { if (!(i & 1)) c[i >> 1] = 0; c[i >> 1] |= (C[r * 8 + col] & 0xFFFF) << (16 * (i & 1)); }
  }
#define M884(al, bl)                                                                                                   \
  if (F32)                                                                                                             \
    asm volatile("mma.sync.aligned.m8n8k4." al "." bl ".f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, " \
                 "{%12,%13,%14,%15,%16,%17,%18,%19};"                                                                    \
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7])       \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]),   \
                   "r"(c[5]), "r"(c[6]), "r"(c[7]));                                                                    \
  else                                                                                                                 \
    asm volatile("mma.sync.aligned.m8n8k4." al "." bl ".f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};" \
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                                       \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  if (ALAY == 0 && BLAY == 0) { M884("row", "row") }
  else if (ALAY == 0) { M884("row", "col") }
  else if (BLAY == 0) { M884("col", "row") }
  else { M884("col", "col") }
  for (int i = 0; i < 8; ++i) {
    int r, col;
    if (F32) { r = (lane & 1) + (i & 2) + 4 * hi; col = (i & 4) + (lane & 2) + (i & 1); D[r * 8 + col] = d[i]; }
    else { r = (lane & 3) + 4 * hi; col = i; D[r * 8 + col] = (d[i >> 1] >> (16 * (i & 1))) & 0xFFFF; }
  }
}
#define K884(al, bl, f)                                                                                              \
extern "C" __global__ void mma_m8n8k4_##al##_##bl##_##f(const uint32_t* A, const uint32_t* B, const uint32_t* C, \
                                                         uint32_t* D) { m884<al, bl, f>(A, B, C, D); }
K884(0, 0, 0) K884(0, 1, 0) K884(1, 0, 0) K884(1, 1, 0) K884(0, 0, 1) K884(0, 1, 1) K884(1, 0, 1) K884(1, 1, 1)

// m8n8k4 accumulator element i of a lane: (row, col), f32 or f16 C/D (PTX ISA 9.7.14.5.1)
__device__ Pos c884(int lane, int i, int f32) {
  int hi = lane >= 16;
  if (f32) return Pos{(lane & 1) + (i & 2) + 4 * hi, (i & 4) + (lane & 2) + (i & 1)};
  return Pos{(lane & 3) + 4 * hi, i};
}
// ---- m8n8k4 .row.col.f32.f16.f16.f16 (f16 C, f32 D; ptxas refuses f16 D with f32 C); memory as m884.
extern "C" __global__ void mma_m8n8k4_c16_d32(const uint32_t* A, const uint32_t* B, const uint32_t* C, uint32_t* D) {
  int w = threadIdx.x >> 5, lane = threadIdx.x & 31, qp = (lane >> 2) & 3, hi = lane >= 16;
  int prob = w * 4 + qp;
  A += prob * 32; B += prob * 32; C += prob * 64; D += prob * 64;
  uint32_t a[2] = {0, 0}, b[2] = {0, 0}, c[4] = {0, 0, 0, 0}, d[8];
  for (int i = 0; i < 4; ++i) {
    a[i >> 1] |= (A[((lane & 3) + 4 * hi) * 4 + i] & 0xFFFF) << (16 * (i & 1));
    b[i >> 1] |= (B[((lane & 3) + 4 * hi) * 4 + i] & 0xFFFF) << (16 * (i & 1));
  }
  for (int i = 0; i < 8; ++i) { Pos p = c884(lane, i, 0); c[i >> 1] |= (C[p.r * 8 + p.c] & 0xFFFF) << (16 * (i & 1)); }
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, "
               "{%12,%13,%14,%15};"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  for (int i = 0; i < 8; ++i) { Pos p = c884(lane, i, 1); D[p.r * 8 + p.c] = d[i]; }
}

// ---- ldmatrix / stmatrix / movmatrix (.m8n8 .b16): matrices of 8 rows x 8 halves, row r of matrix j at
// rowaddr[j*8 + r] (a permuted row order, so the row addresses matter). ldmatrix -> each lane writes its registers;
// stmatrix stores those registers back (to a second buffer); movmatrix transposes register 0.
template <int NUM, int TRANS>
__device__ void ldst(const uint16_t* src, const int* rowidx, uint32_t* regs_out, uint16_t* dst) {
  __shared__ __align__(16) uint16_t s_in[4 * 8 * 8];
  __shared__ __align__(16) uint16_t s_out[4 * 8 * 8];
  int lane = threadIdx.x & 31;
  for (int i = lane; i < 4 * 64; i += 32) { s_in[i] = src[i]; s_out[i] = 0xFFFF; }
  __syncwarp();
  uint32_t r[4] = {0, 0, 0, 0};
  const uint16_t* p = s_in + 8 * rowidx[lane];
  uint32_t sa = (uint32_t)__cvta_generic_to_shared(p);
  if (NUM == 1 && TRANS == 0) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(sa));
  if (NUM == 2 && TRANS == 0) asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(sa));
  if (NUM == 4 && TRANS == 0) asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(sa));
  if (NUM == 1 && TRANS == 1) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(sa));
  if (NUM == 2 && TRANS == 1) asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(sa));
  if (NUM == 4 && TRANS == 1) asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(sa));
  for (int j = 0; j < 4; ++j) regs_out[lane * 5 + j] = r[j];
  uint32_t mv;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(mv) : "r"(r[0]));
  regs_out[lane * 5 + 4] = mv;
  uint16_t* q = s_out + 8 * rowidx[lane];
  uint32_t so = (uint32_t)__cvta_generic_to_shared(q);
  if (NUM == 1 && TRANS == 0) asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(so), "r"(r[0]) : "memory");
  if (NUM == 2 && TRANS == 0) asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1,%2};" :: "r"(so), "r"(r[0]), "r"(r[1]) : "memory");
  if (NUM == 4 && TRANS == 0) asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};" :: "r"(so), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  if (NUM == 1 && TRANS == 1) asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(so), "r"(r[0]) : "memory");
  if (NUM == 2 && TRANS == 1) asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1,%2};" :: "r"(so), "r"(r[0]), "r"(r[1]) : "memory");
  if (NUM == 4 && TRANS == 1) asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};" :: "r"(so), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  __syncwarp();
  for (int i = lane; i < 4 * 64; i += 32) dst[i] = s_out[i];
}
#define LDST(n, t) \
extern "C" __global__ void ldmatrix_x##n##_t##t(const uint16_t* src, const int* rowidx, uint32_t* regs, uint16_t* dst) { ldst<n, t>(src, rowidx, regs, dst); }
LDST(1, 0) LDST(2, 0) LDST(4, 0) LDST(1, 1) LDST(2, 1) LDST(4, 1)
