// float_f32.cu — f32 arithmetic probe (PTX ISA 9.7.3).  One thread per input triple.
// Signature: extern "C" __global__ void float_f32(const unsigned* a, const unsigned* b, const unsigned* c,
//                                                 unsigned* out, unsigned n)
//   out[i * NOPS + k] = bits of op k applied to (a[i], b[i], c[i]); NOPS = 48 (see table in test_emu_float.py).
#define OP2(k, ins) asm volatile(ins " %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y)); o[k] = r;
#define OP3(k, ins) asm volatile(ins " %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z)); o[k] = r;
#define OP1(k, ins) asm volatile(ins " %0, %1;" : "=r"(r) : "r"(x)); o[k] = r;
extern "C" __global__ void float_f32(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out,
                                     unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], z = c[i], r;
  unsigned* o = out + (size_t)i * 48;
  OP2(0, "add.rn.f32") OP2(1, "add.rz.f32") OP2(2, "add.rm.f32") OP2(3, "add.rp.f32")
  OP2(4, "sub.rn.f32") OP2(5, "sub.rz.f32") OP2(6, "sub.rm.f32") OP2(7, "sub.rp.f32")
  OP2(8, "mul.rn.f32") OP2(9, "mul.rz.f32") OP2(10, "mul.rm.f32") OP2(11, "mul.rp.f32")
  OP3(12, "fma.rn.f32") OP3(13, "fma.rz.f32") OP3(14, "fma.rm.f32") OP3(15, "fma.rp.f32")
  OP2(16, "div.rn.f32") OP2(17, "div.rz.f32") OP2(18, "div.rm.f32") OP2(19, "div.rp.f32")
  OP1(20, "sqrt.rn.f32") OP1(21, "sqrt.rz.f32") OP1(22, "sqrt.rm.f32") OP1(23, "sqrt.rp.f32")
  OP1(24, "rcp.rn.f32") OP1(25, "rcp.rz.f32") OP1(26, "rcp.rm.f32") OP1(27, "rcp.rp.f32")
  OP2(28, "add.rn.ftz.f32") OP2(29, "mul.rn.ftz.f32") OP3(30, "fma.rn.ftz.f32") OP2(31, "div.rn.ftz.f32")
  OP2(32, "add.rn.sat.f32") OP3(33, "fma.rn.sat.f32") OP2(34, "min.f32") OP2(35, "max.f32")
  OP2(36, "min.NaN.f32") OP2(37, "max.NaN.f32") OP2(38, "min.ftz.f32") OP2(39, "max.ftz.f32")
  OP1(40, "neg.f32") OP1(41, "abs.f32") OP1(42, "neg.ftz.f32") OP1(43, "abs.ftz.f32")
  OP2(44, "copysign.f32") OP3(45, "mad.rn.f32") OP1(46, "sqrt.rn.ftz.f32")
  // 47: contracted C expression (NVRTC emits fma.rn.f32 for a*b+c)
  float fr = __uint_as_float(x) * __uint_as_float(y) + __uint_as_float(z);
  o[47] = __float_as_uint(fr);
}
