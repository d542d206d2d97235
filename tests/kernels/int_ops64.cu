// int_ops64.cu — 64-bit integer probe (PTX ISA 9.7.1, 9.7.2, 9.7.8) plus the 32→64 .wide forms.
// Signature: extern "C" __global__ void int_ops64(const unsigned long long* a, const unsigned long long* b,
//                                                 const unsigned long long* c, unsigned long long* out, unsigned n)
//   out[k * n + i] = 64-bit result of op k on (x=a[i], y=b[i], z=c[i]) (32-bit results zero-extended); ops are
//   numbered in source order of the Q(...)/W(...) lines (names + refs in tests/emu/test_emu_int.py). Block (128,1,1).
#define Q(NAME, INS, ...) { unsigned long long r; asm volatile(INS : "=l"(r) : __VA_ARGS__); out[(k++) * n + i] = r; }
#define W(NAME, INS, ...) { unsigned r; asm volatile(INS : "=r"(r) : __VA_ARGS__); out[(k++) * n + i] = r; }
extern "C" __global__ void int_ops64(const unsigned long long* a, const unsigned long long* b,
                                     const unsigned long long* c, unsigned long long* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long x = a[i], y = b[i], z = c[i];
  unsigned xl = (unsigned)x, yl = (unsigned)y, zl = (unsigned)z;
  int k = 0;
  Q(add_u64, "add.u64 %0, %1, %2;", "l"(x), "l"(y))
  Q(sub_s64, "sub.s64 %0, %1, %2;", "l"(x), "l"(y))
  Q(mul_lo_u64, "mul.lo.u64 %0, %1, %2;", "l"(x), "l"(y))
  Q(mul_hi_u64, "mul.hi.u64 %0, %1, %2;", "l"(x), "l"(y))
  Q(mul_hi_s64, "mul.hi.s64 %0, %1, %2;", "l"(x), "l"(y))
  Q(mad_lo_s64, "mad.lo.s64 %0, %1, %2, %3;", "l"(x), "l"(y), "l"(z))
  Q(mad_hi_u64, "mad.hi.u64 %0, %1, %2, %3;", "l"(x), "l"(y), "l"(z))
  Q(mad_hi_s64, "mad.hi.s64 %0, %1, %2, %3;", "l"(x), "l"(y), "l"(z))
  Q(mul_wide_u32, "mul.wide.u32 %0, %1, %2;", "r"(xl), "r"(yl))
  Q(mul_wide_s32, "mul.wide.s32 %0, %1, %2;", "r"(xl), "r"(yl))
  Q(mad_wide_s32, "mad.wide.s32 %0, %1, %2, %3;", "r"(xl), "r"(yl), "l"(z))
  Q(mad_wide_u32, "mad.wide.u32 %0, %1, %2, %3;", "r"(xl), "r"(yl), "l"(z))
  Q(addc_sum64, "{ .reg .u64 t; add.cc.u64 t, %1, %2; addc.u64 %0, %3, 0; }", "l"(x), "l"(y), "l"(z))
  Q(subc_bf64, "{ .reg .u64 t; sub.cc.u64 t, %1, %2; subc.u64 %0, %3, 0; }", "l"(x), "l"(y), "l"(z))
  Q(madc_lo64, "{ .reg .u64 t; mad.hi.cc.u64 t, %1, %2, %3; madc.lo.u64 %0, %1, %2, 0; }", "l"(x), "l"(y), "l"(z))
  Q(div_u64, "div.u64 %0, %1, %2;", "l"(x), "l"(y))
  Q(div_s64, "div.s64 %0, %1, %2;", "l"(x), "l"(y))
  Q(rem_u64, "rem.u64 %0, %1, %2;", "l"(x), "l"(y))
  Q(rem_s64, "rem.s64 %0, %1, %2;", "l"(x), "l"(y))
  Q(abs_s64, "abs.s64 %0, %1;", "l"(x))
  Q(neg_s64, "neg.s64 %0, %1;", "l"(x))
  Q(min_s64, "min.s64 %0, %1, %2;", "l"(x), "l"(y))
  Q(max_u64, "max.u64 %0, %1, %2;", "l"(x), "l"(y))
  Q(sad_s64, "sad.s64 %0, %1, %2, %3;", "l"(x), "l"(y), "l"(z))
  W(popc_b64, "popc.b64 %0, %1;", "l"(x))
  W(clz_b64, "clz.b64 %0, %1;", "l"(x))
  W(bfind_u64, "bfind.u64 %0, %1;", "l"(x))
  W(bfind_s64, "bfind.s64 %0, %1;", "l"(x))
  W(bfind_sa_s64, "bfind.shiftamt.s64 %0, %1;", "l"(x))
  Q(brev_b64, "brev.b64 %0, %1;", "l"(x))
  Q(bfe_u64, "bfe.u64 %0, %1, %2, %3;", "l"(x), "r"(yl), "r"(zl))
  Q(bfe_s64, "bfe.s64 %0, %1, %2, %3;", "l"(x), "r"(yl), "r"(zl))
  Q(bfi_b64, "bfi.b64 %0, %1, %2, %3, %4;", "l"(x), "l"(y), "r"(zl), "r"((unsigned)(z >> 32)))
  Q(shl_b64, "shl.b64 %0, %1, %2;", "l"(x), "r"(yl))
  Q(shr_s64, "shr.s64 %0, %1, %2;", "l"(x), "r"(yl))
  Q(shr_u64, "shr.u64 %0, %1, %2;", "l"(x), "r"(yl))
  Q(xor_b64, "xor.b64 %0, %1, %2;", "l"(x), "l"(y))
  Q(not_b64, "not.b64 %0, %1;", "l"(x))
  Q(cnot_b64, "cnot.b64 %0, %1;", "l"(x))
  W(setp_lt_s64, "{ .reg .pred p; setp.lt.s64 p, %1, %2; selp.u32 %0, 1, 0, p; }", "l"(x), "l"(y))
  W(setp_hs_u64, "{ .reg .pred p; setp.hs.u64 p, %1, %2; selp.u32 %0, 1, 0, p; }", "l"(x), "l"(y))
  Q(selp_b64, "{ .reg .pred p; setp.ne.u64 p, %3, 0; selp.b64 %0, %1, %2, p; }", "l"(x), "l"(y), "l"(z & 1))
  Q(cvt_s64_s32, "cvt.s64.s32 %0, %1;", "r"(xl))
  Q(cvt_u64_u32, "cvt.u64.u32 %0, %1;", "r"(xl))
  W(cvt_sat_s32_s64, "cvt.sat.s32.s64 %0, %1;", "l"(x))
  W(cvt_sat_u32_s64, "cvt.sat.u32.s64 %0, %1;", "l"(x))
  W(cvt_u8_s64, "{ .reg .u16 t; cvt.s8.s64 t, %1; cvt.u32.u16 %0, t; }", "l"(x))
  W(cvt_sat_s8_u64, "{ .reg .u16 t; cvt.sat.s8.u64 t, %1; cvt.u32.u16 %0, t; }", "l"(x))
}
