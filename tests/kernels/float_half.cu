// float_half.cu — f16/bf16 scalar and packed arithmetic probe (PTX ISA 9.7.4).
// Signature: extern "C" __global__ void float_half(const unsigned* a, const unsigned* b, const unsigned* c,
//                                                  unsigned* out, unsigned n)
//   Each input word is a packed pair (lo, hi).  out[i * 40 + k] = op k (table HALF_OPS in test_emu_float.py):
//   packed ops write the packed result; scalar ops act on the low halves and write the 16-bit result zero-extended.
#define P2(k, ins) asm volatile(ins " %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y)); o[k] = r;
#define P3(k, ins) asm volatile(ins " %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z)); o[k] = r;
#define P1(k, ins) asm volatile(ins " %0, %1;" : "=r"(r) : "r"(x)); o[k] = r;
#define S2(k, ins) asm volatile(ins " %0, %1, %2;" : "=h"(h) : "h"(xs), "h"(ys)); o[k] = h;
#define S3(k, ins) asm volatile(ins " %0, %1, %2, %3;" : "=h"(h) : "h"(xs), "h"(ys), "h"(zs)); o[k] = h;
#define S1(k, ins) asm volatile(ins " %0, %1;" : "=h"(h) : "h"(xs)); o[k] = h;
extern "C" __global__ void float_half(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out,
                                      unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], z = c[i], r;
  unsigned short xs = x & 0xFFFF, ys = y & 0xFFFF, zs = z & 0xFFFF, h;
  unsigned* o = out + (size_t)i * 40;
  P2(0, "add.rn.f16x2") P2(1, "sub.rn.f16x2") P2(2, "mul.rn.f16x2") P3(3, "fma.rn.f16x2")
  P3(4, "fma.rn.relu.f16x2") P2(5, "min.f16x2") P2(6, "max.f16x2") P1(7, "neg.f16x2") P1(8, "abs.f16x2")
  P2(9, "add.rn.bf16x2") P2(10, "sub.rn.bf16x2") P2(11, "mul.rn.bf16x2") P3(12, "fma.rn.bf16x2")
  P3(13, "fma.rn.relu.bf16x2") P2(14, "min.bf16x2") P2(15, "max.bf16x2") P1(16, "neg.bf16x2") P1(17, "abs.bf16x2")
  S2(18, "add.rn.f16") S2(19, "sub.rn.f16") S2(20, "mul.rn.f16") S3(21, "fma.rn.f16") S3(22, "fma.rn.relu.f16")
  S2(23, "min.f16") S2(24, "max.f16") S1(25, "neg.f16") S1(26, "abs.f16")
  S2(27, "add.rn.bf16") S2(28, "sub.rn.bf16") S2(29, "mul.rn.bf16") S3(30, "fma.rn.bf16") S3(31, "fma.rn.relu.bf16")
  S2(32, "min.bf16") S2(33, "max.bf16") S1(34, "neg.bf16") S1(35, "abs.bf16")
  P2(36, "min.NaN.f16x2") P2(37, "max.NaN.bf16x2") P2(38, "add.rn.sat.f16x2") P3(39, "fma.rn.sat.f16x2")
}
