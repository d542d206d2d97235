// float_f64.cu — f64 arithmetic probe (PTX ISA 9.7.3).  One thread per input triple.
// Signature: extern "C" __global__ void float_f64(const unsigned long long* a, const unsigned long long* b,
//                                                 const unsigned long long* c, unsigned long long* out, unsigned n)
//   out[i * 32 + k] = bits of op k (table F64_OPS in test_emu_float.py) applied to (a[i], b[i], c[i]).
typedef unsigned long long u64;
#define OP2(k, ins) asm volatile(ins " %0, %1, %2;" : "=l"(r) : "l"(x), "l"(y)); o[k] = r;
#define OP3(k, ins) asm volatile(ins " %0, %1, %2, %3;" : "=l"(r) : "l"(x), "l"(y), "l"(z)); o[k] = r;
#define OP1(k, ins) asm volatile(ins " %0, %1;" : "=l"(r) : "l"(x)); o[k] = r;
extern "C" __global__ void float_f64(const u64* a, const u64* b, const u64* c, u64* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  u64 x = a[i], y = b[i], z = c[i], r;
  u64* o = out + (size_t)i * 32;
  OP2(0, "add.rn.f64") OP2(1, "add.rz.f64") OP2(2, "add.rm.f64") OP2(3, "add.rp.f64")
  OP2(4, "sub.rn.f64") OP2(5, "mul.rn.f64") OP2(6, "mul.rz.f64") OP2(7, "mul.rm.f64") OP2(8, "mul.rp.f64")
  OP3(9, "fma.rn.f64") OP3(10, "fma.rz.f64") OP3(11, "fma.rm.f64") OP3(12, "fma.rp.f64")
  OP2(13, "div.rn.f64") OP2(14, "div.rz.f64") OP2(15, "div.rm.f64") OP2(16, "div.rp.f64")
  OP1(17, "sqrt.rn.f64") OP1(18, "sqrt.rz.f64") OP1(19, "sqrt.rm.f64") OP1(20, "sqrt.rp.f64")
  OP1(21, "rcp.rn.f64") OP2(22, "min.f64") OP2(23, "max.f64") OP1(24, "neg.f64") OP1(25, "abs.f64")
  OP2(26, "copysign.f64") OP3(27, "mad.rn.f64") OP2(28, "add.f64") OP2(29, "mul.f64")
  OP2(30, "sub.rm.f64")
  double dr = __longlong_as_double(x) * __longlong_as_double(y) + __longlong_as_double(z);  // fma.rn.f64
  o[31] = __double_as_longlong(dr);
}
