// WMMA through inline PTX (PTX ISA 9.7.14.4: wmma.load 9.7.14.4.3, wmma.store 9.7.14.4.4, wmma.mma 9.7.14.4.5),
// sm_80 / sm_90 forms.  No <mma.h>: the CUDA 13.0 NVRTC of the H100 host lacks the crt/mma.h it includes, and the
// fragments here are the PTX registers themselves (the register counts of the ISA's fragment tables), so the
// kernels compile with any NVRTC and ptxas lowers them exactly as it lowers the mma.h API (the same wmma
// instructions; tests/emu/ops/test_emu_wmma.py::test_ptxas_lowering checks the SASS).  Addresses are generic,
// strides in elements (LD = 64).
//
// gemm kernels: a small public-style WMMA GEMM (one 16x16-class tile per warp, load -> mma -> store only, like the
// classic WMMA tutorials): 4 warps compute D (2M x 2N) = A (2M x 2K) B (2K x 2N) + C, each warp one M x N tile over
// two k steps.  Every matrix lives in a 64 x 64 buffer with leading dimension LD = 64 elements: A (m, k) at
// m * LD + k (row-major) or k * LD + m (column-major); B (k, n) at n * LD + k (column-major) or k * LD + n; C and D
// (m, n) at m * LD + n.  Offsets and strides are multiples of the fragment sizes (PTX ISA 9.7.14.4.2).
//
// lay_* kernels: the fragment-layout probe: loads a matrix whose element (r, c) holds the code r * cols + c (8-bit
// types: the low byte, then in a second matrix the high byte) and writes every fragment element of every lane:
// out[(lane * num_elements + i)] (the element's bits, one 64-bit word each), element i being bits [i * w, i * w + w)
// of the fragment's registers in order (w the element width; what mma.h's fragment.x[i] reads).  The emulator
// refuses these kernels (they read fragment elements, whose layout the ISA leaves unspecified); the H100's answers
// model the layout.
#define LD 64

// ---- wmma.load / wmma.store of N registers: R = .b32 ("r"), F = .f32 ("f"), D = .f64 ("d")
#define LDR1(I, r, p) asm volatile(I " {%0}, [%1], %2;" : "=r"(r[0]) : "l"(p), "r"(LD))
#define LDR2(I, r, p) asm volatile(I " {%0,%1}, [%2], %3;" : "=r"(r[0]), "=r"(r[1]) : "l"(p), "r"(LD))
#define LDR4(I, r, p) \
  asm volatile(I " {%0,%1,%2,%3}, [%4], %5;" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "l"(p), "r"(LD))
#define LDR8(I, r, p)                                                                                             \
  asm volatile(I " {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]),       \
               "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]) : "l"(p), "r"(LD))
#define LDF8(I, r, p)                                                                                             \
  asm volatile(I " {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;" : "=f"(r[0]), "=f"(r[1]), "=f"(r[2]), "=f"(r[3]),       \
               "=f"(r[4]), "=f"(r[5]), "=f"(r[6]), "=f"(r[7]) : "l"(p), "r"(LD))
#define LDD1(I, r, p) asm volatile(I " {%0}, [%1], %2;" : "=d"(r[0]) : "l"(p), "r"(LD))
#define LDD2(I, r, p) asm volatile(I " {%0,%1}, [%2], %3;" : "=d"(r[0]), "=d"(r[1]) : "l"(p), "r"(LD))
#define STR4(I, p, r) \
  asm volatile(I " [%0], {%1,%2,%3,%4}, %5;" :: "l"(p), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(LD) : "memory")
#define STR8(I, p, r)                                                                                             \
  asm volatile(I " [%0], {%1,%2,%3,%4,%5,%6,%7,%8}, %9;" :: "l"(p), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]),   \
               "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7]), "r"(LD) : "memory")
#define STF8(I, p, r)                                                                                             \
  asm volatile(I " [%0], {%1,%2,%3,%4,%5,%6,%7,%8}, %9;" :: "l"(p), "f"(r[0]), "f"(r[1]), "f"(r[2]), "f"(r[3]),   \
               "f"(r[4]), "f"(r[5]), "f"(r[6]), "f"(r[7]), "r"(LD) : "memory")
#define STD2(I, p, r) asm volatile(I " [%0], {%1,%2}, %3;" :: "l"(p), "d"(r[0]), "d"(r[1]), "r"(LD) : "memory")

// ---- wmma.mma with the accumulator as D and C (in-out operands): MMA_<C kind><C regs>_<A regs>_<B regs>
#define C8(k, c) k(c[0]), k(c[1]), k(c[2]), k(c[3]), k(c[4]), k(c[5]), k(c[6]), k(c[7])
#define C4(k, c) k(c[0]), k(c[1]), k(c[2]), k(c[3])
#define IN(x) "r"(x)
#define ACC_F(x) "+f"(x)
#define ACC_R(x) "+r"(x)
#define D8 "{%0,%1,%2,%3,%4,%5,%6,%7}"
#define D4 "{%0,%1,%2,%3}"
#define MMA_F8_8_8(I, c, a, b) asm volatile(I " " D8 ", {%8,%9,%10,%11,%12,%13,%14,%15}, "                     \
  "{%16,%17,%18,%19,%20,%21,%22,%23}, " D8 ";" : C8(ACC_F, c) : C8(IN, a), C8(IN, b))
#define MMA_R4_8_8(I, c, a, b) asm volatile(I " " D4 ", {%4,%5,%6,%7,%8,%9,%10,%11}, "                          \
  "{%12,%13,%14,%15,%16,%17,%18,%19}, " D4 ";" : C4(ACC_R, c) : C8(IN, a), C8(IN, b))
#define MMA_F8_4_4(I, c, a, b) asm volatile(I " " D8 ", {%8,%9,%10,%11}, {%12,%13,%14,%15}, " D8 ";"           \
  : C8(ACC_F, c) : C4(IN, a), C4(IN, b))
#define MMA_F8_8_2(I, c, a, b) asm volatile(I " " D8 ", {%8,%9,%10,%11,%12,%13,%14,%15}, {%16,%17}, " D8 ";"   \
  : C8(ACC_F, c) : C8(IN, a), "r"(b[0]), "r"(b[1]))
#define MMA_R8_2_2(I, c, a, b) asm volatile(I " " D8 ", {%8,%9}, {%10,%11}, " D8 ";"                             \
  : C8(ACC_R, c) : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]))
#define MMA_R8_1_4(I, c, a, b) asm volatile(I " " D8 ", {%8}, {%9,%10,%11,%12}, " D8 ";"                         \
  : C8(ACC_R, c) : "r"(a[0]), C4(IN, b))
#define MMA_D2_1_1(I, c, a, b) asm volatile(I " {%0,%1}, {%2}, {%3}, {%0,%1};"                                   \
  : "+d"(c[0]), "+d"(c[1]) : "d"(a[0]), "d"(b[0]))

// GEMM(name, element type, C/D type, A/B register type and kind (R / D), counts A B, C register type, kind and
// count, shape, A layout, B layout, A/B PTX type, C/D PTX type, wmma.mma type suffix)
#define GEMM(name, TE, TC, TR, AK, NA, NB, TAcc, CK, NC, SH, M, N, K, LA, LB, AT, CT, MT)                         \
  extern "C" __global__ void name(const TE* A, const TE* B, const TC* C, TC* D) {                               \
    int w = threadIdx.x >> 5, tm = w >> 1, tn = w & 1;                                                          \
    TR a[NA], b[NB];                                                                                            \
    TAcc c[NC];                                                                                                 \
    LD##CK##NC("wmma.load.c.sync.aligned.row." #SH "." #CT, c, C + tm * M * LD + tn * N);                       \
    for (int kk = 0; kk < 2; ++kk) {                                                                            \
      const TE* pa = IS_ROW_##LA ? A + tm * M * LD + kk * K : A + kk * K * LD + tm * M;                         \
      const TE* pb = IS_ROW_##LB ? B + kk * K * LD + tn * N : B + tn * N * LD + kk * K;                         \
      LD##AK##NA("wmma.load.a.sync.aligned." #LA "." #SH "." #AT, a, pa);                                       \
      LD##AK##NB("wmma.load.b.sync.aligned." #LB "." #SH "." #AT, b, pb);                                       \
      MMA_##CK##NC##_##NA##_##NB("wmma.mma.sync.aligned." #LA "." #LB "." #SH MT, c, a, b);                     \
    }                                                                                                           \
    ST##CK##NC("wmma.store.d.sync.aligned.row." #SH "." #CT, D + tm * M * LD + tn * N, c);                      \
  }
#define IS_ROW_row 1
#define IS_ROW_col 0
GEMM(wmma_f16_f32_m16n16k16_rc, unsigned short, float, unsigned, R, 8, 8, float, F, 8, m16n16k16, 16, 16, 16, row,
     col, f16, f32, ".f32.f32")
GEMM(wmma_f16_f32_m16n16k16_cr, unsigned short, float, unsigned, R, 8, 8, float, F, 8, m16n16k16, 16, 16, 16, col,
     row, f16, f32, ".f32.f32")
GEMM(wmma_f16_f16_m16n16k16_rc, unsigned short, unsigned short, unsigned, R, 8, 8, unsigned, R, 4, m16n16k16, 16,
     16, 16, row, col, f16, f16, ".f16.f16")
GEMM(wmma_f16_f32_m32n8k16_rc, unsigned short, float, unsigned, R, 8, 8, float, F, 8, m32n8k16, 32, 8, 16, row,
     col, f16, f32, ".f32.f32")
GEMM(wmma_f16_f16_m8n32k16_rr, unsigned short, unsigned short, unsigned, R, 8, 8, unsigned, R, 4, m8n32k16, 8, 32,
     16, row, row, f16, f16, ".f16.f16")
GEMM(wmma_bf16_f32_m16n16k16_rc, unsigned short, float, unsigned, R, 4, 4, float, F, 8, m16n16k16, 16, 16, 16, row,
     col, bf16, f32, ".f32.bf16.bf16.f32")
GEMM(wmma_bf16_f32_m32n8k16_cc, unsigned short, float, unsigned, R, 8, 2, float, F, 8, m32n8k16, 32, 8, 16, col,
     col, bf16, f32, ".f32.bf16.bf16.f32")
GEMM(wmma_tf32_f32_m16n16k8_rc, float, float, unsigned, R, 4, 4, float, F, 8, m16n16k8, 16, 16, 8, row, col, tf32,
     f32, ".f32.tf32.tf32.f32")
GEMM(wmma_s8_s32_m16n16k16_rc, signed char, int, unsigned, R, 2, 2, unsigned, R, 8, m16n16k16, 16, 16, 16, row, col,
     s8, s32, ".s32.s8.s8.s32")
GEMM(wmma_u8_s32_m8n32k16_rc, unsigned char, int, unsigned, R, 1, 4, unsigned, R, 8, m8n32k16, 8, 32, 16, row, col,
     u8, s32, ".s32.u8.u8.s32")
GEMM(wmma_f64_f64_m8n8k4_rc, double, double, double, D, 1, 1, double, D, 2, m8n8k4, 8, 8, 4, row, col, f64, f64,
     ".rn.f64.f64.f64.f64")

// ---- layout probe: LAY(name, element type, register kind and count, element bits, wmma.load instruction)
#define LAY(name, TE, K, NR, EB, I)                                                                              \
  extern "C" __global__ void name(const TE* P, const TE* P_hi, unsigned long long* out, unsigned long long* hi) { \
    LAY_BODY(K, NR, EB, I, P, out);                                                                             \
    if (P_hi) { LAY_BODY(K, NR, EB, I, P_hi, hi); }                                                             \
  }
#define LAY_BODY(K, NR, EB, I, P, out)                                                                          \
  do {                                                                                                          \
    LAY_REGS_##K r[NR];                                                                                         \
    LD##K##NR(I, r, P);                                                                                         \
    dump<NR, EB>(r, out);                                                                                       \
  } while (0)
#define LAY_REGS_R unsigned
#define LAY_REGS_D double

template <int NR, int EB>
__device__ void dump(const unsigned* r, unsigned long long* out) {
  const int per = 32 / EB, n = NR * per, lane = threadIdx.x & 31;
  for (int i = 0; i < n; ++i)
    out[lane * n + i] = (r[i / per] >> (EB * (i % per))) & (unsigned)((1ull << EB) - 1ull);
}
template <int NR, int EB>
__device__ void dump(const double* r, unsigned long long* out) {
  const int lane = threadIdx.x & 31;
  for (int i = 0; i < NR; ++i) out[lane * NR + i] = __double_as_longlong(r[i]);
}

#define LAY_AB(tag, TE, SH, AT, NA, NB, EB)                                                                      \
  LAY(lay_a_row_##tag, TE, R, NA, EB, "wmma.load.a.sync.aligned.row." #SH "." #AT)                              \
  LAY(lay_a_col_##tag, TE, R, NA, EB, "wmma.load.a.sync.aligned.col." #SH "." #AT)                              \
  LAY(lay_b_row_##tag, TE, R, NB, EB, "wmma.load.b.sync.aligned.row." #SH "." #AT)                              \
  LAY(lay_b_col_##tag, TE, R, NB, EB, "wmma.load.b.sync.aligned.col." #SH "." #AT)
LAY_AB(f16_m16n16k16, unsigned short, m16n16k16, f16, 8, 8, 16)
LAY_AB(f16_m32n8k16, unsigned short, m32n8k16, f16, 8, 8, 16)
LAY_AB(f16_m8n32k16, unsigned short, m8n32k16, f16, 8, 8, 16)
LAY_AB(bf16_m16n16k16, unsigned short, m16n16k16, bf16, 4, 4, 16)
LAY_AB(bf16_m32n8k16, unsigned short, m32n8k16, bf16, 8, 2, 16)
LAY_AB(bf16_m8n32k16, unsigned short, m8n32k16, bf16, 2, 8, 16)
LAY_AB(tf32_m16n16k8, float, m16n16k8, tf32, 4, 4, 32)
LAY_AB(s8_m16n16k16, signed char, m16n16k16, s8, 2, 2, 8)
LAY_AB(s8_m32n8k16, signed char, m32n8k16, s8, 4, 1, 8)
LAY_AB(s8_m8n32k16, signed char, m8n32k16, s8, 1, 4, 8)
LAY(lay_a_row_f64_m8n8k4, double, D, 1, 64, "wmma.load.a.sync.aligned.row.m8n8k4.f64")
LAY(lay_a_col_f64_m8n8k4, double, D, 1, 64, "wmma.load.a.sync.aligned.col.m8n8k4.f64")
LAY(lay_b_row_f64_m8n8k4, double, D, 1, 64, "wmma.load.b.sync.aligned.row.m8n8k4.f64")
LAY(lay_b_col_f64_m8n8k4, double, D, 1, 64, "wmma.load.b.sync.aligned.col.m8n8k4.f64")
#define LAY_C(tag, TC, K, NR, EB, SH, CT) LAY(lay_c_##tag, TC, K, NR, EB, "wmma.load.c.sync.aligned.row." #SH "." #CT)
LAY_C(f32_m16n16k16, float, R, 8, 32, m16n16k16, f32) LAY_C(f32_m32n8k16, float, R, 8, 32, m32n8k16, f32)
LAY_C(f32_m8n32k16, float, R, 8, 32, m8n32k16, f32) LAY_C(f32_m16n16k8, float, R, 8, 32, m16n16k8, f32)
LAY_C(f16_m16n16k16, unsigned short, R, 4, 16, m16n16k16, f16) LAY_C(f16_m32n8k16, unsigned short, R, 4, 16, m32n8k16, f16)
LAY_C(f16_m8n32k16, unsigned short, R, 4, 16, m8n32k16, f16)
LAY_C(s32_m16n16k16, int, R, 8, 32, m16n16k16, s32) LAY_C(s32_m32n8k16, int, R, 8, 32, m32n8k16, s32)
LAY_C(s32_m8n32k16, int, R, 8, 32, m8n32k16, s32) LAY_C(f64_m8n8k4, double, D, 2, 64, m8n8k4, f64)

// ---- mixed accumulator types: one warp, D (16 x 16) = A (16 x 16, row-major) B (16 x 16, column-major) + C with C
// and D of different types; matrices as in gemm (LD = 64).
extern "C" __global__ void wmma_mixed_d16_c32(const unsigned short* A, const unsigned short* B, const float* C,
                                              unsigned short* D) {
  unsigned a[8], b[8], d[4];
  float c[8];
  LDR8("wmma.load.a.sync.aligned.row.m16n16k16.f16", a, A);
  LDR8("wmma.load.b.sync.aligned.col.m16n16k16.f16", b, B);
  LDF8("wmma.load.c.sync.aligned.row.m16n16k16.f32", c, C);
  asm volatile("wmma.mma.sync.aligned.row.col.m16n16k16.f16.f32 " D4 ", {%4,%5,%6,%7,%8,%9,%10,%11}, "
               "{%12,%13,%14,%15,%16,%17,%18,%19}, {%20,%21,%22,%23,%24,%25,%26,%27};"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : C8(IN, a), C8(IN, b), C8("f", c));
  STR4("wmma.store.d.sync.aligned.row.m16n16k16.f16", D, d);
}
extern "C" __global__ void wmma_mixed_d32_c16(const unsigned short* A, const unsigned short* B,
                                              const unsigned short* C, float* D) {
  unsigned a[8], b[8], c[4];
  float d[8];
  LDR8("wmma.load.a.sync.aligned.row.m16n16k16.f16", a, A);
  LDR8("wmma.load.b.sync.aligned.col.m16n16k16.f16", b, B);
  LDR4("wmma.load.c.sync.aligned.row.m16n16k16.f16", c, C);
  asm volatile("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f16 " D8 ", {%8,%9,%10,%11,%12,%13,%14,%15}, "
               "{%16,%17,%18,%19,%20,%21,%22,%23}, {%24,%25,%26,%27};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7])
               : C8(IN, a), C8(IN, b), C4(IN, c));
  STF8("wmma.store.d.sync.aligned.row.m16n16k16.f32", D, d);
}

// ---- store probe: every lane sets fragment element i of D to the code lane * n + i (f32: that value; f16: the
// code 0x1000 + lane * 8 + i, a normal f16; s32: that integer) and stores it .row: where each (lane, i) lands in
// memory is the H100's D-store layout (wmma.store.d, 9.7.14.4.4), which the load probe above cannot show.
#define STO_F32(SH)                                                                                               \
  extern "C" __global__ void sto_d_f32_##SH(float* D) {                                                         \
    float d[8];                                                                                                 \
    const int lane = threadIdx.x & 31;                                                                          \
    for (int i = 0; i < 8; ++i) d[i] = (float)(lane * 8 + i);                                                   \
    STF8("wmma.store.d.sync.aligned.row." #SH ".f32", D, d);                                                    \
  }
#define STO_S32(SH)                                                                                               \
  extern "C" __global__ void sto_d_s32_##SH(int* D) {                                                           \
    unsigned d[8];                                                                                              \
    const int lane = threadIdx.x & 31;                                                                          \
    for (int i = 0; i < 8; ++i) d[i] = (unsigned)(lane * 8 + i);                                                \
    STR8("wmma.store.d.sync.aligned.row." #SH ".s32", D, d);                                                    \
  }
#define STO_F16(SH)                                                                                               \
  extern "C" __global__ void sto_d_f16_##SH(unsigned short* D) {                                                \
    unsigned d[4];                                                                                              \
    const unsigned lane = threadIdx.x & 31;                                                                     \
    for (int j = 0; j < 4; ++j)                                                                                 \
      d[j] = (0x1000u + lane * 8 + 2 * j) | ((0x1000u + lane * 8 + 2 * j + 1) << 16);                           \
    STR4("wmma.store.d.sync.aligned.row." #SH ".f16", D, d);                                                    \
  }
STO_F32(m16n16k16) STO_F32(m32n8k16) STO_F32(m8n32k16)
STO_S32(m16n16k16) STO_S32(m32n8k16) STO_S32(m8n32k16)
STO_F16(m16n16k16) STO_F16(m32n8k16) STO_F16(m8n32k16)
