// int_ops32.cu — 32-bit (and 16-bit / packed) integer, logic, shift, carry, setp/selp/slct probe
// (PTX ISA 9.7.1 integer arithmetic, 9.7.2 extended precision, 9.7.6 comparison/selection, 9.7.8 logic/shift,
//  9.7.9.7 prmt).  One thread per input quadruple; every op is inline PTX so the instruction under test is exact.
// Signature: extern "C" __global__ void int_ops32(const unsigned* a, const unsigned* b, const unsigned* c,
//                                                 const unsigned* d, unsigned* out, unsigned n)
//   out[k * n + i] = 32-bit result of op k on (x=a[i], y=b[i], z=c[i], v=d[i]); ops are numbered in source order
//   of the R(...)/H(...) lines below (tests/emu/test_emu_int.py parses the names and holds the references).
//   16-bit results (H) are zero-extended; predicates come back as selp 1/0 (p|q pairs as p + 2q).
// Needs sm_90 (u16x2/s16x2 add/min/max).  Launch: block (128,1,1), grid ceil(n/128).
#define R(NAME, INS, ...) { unsigned r; asm volatile(INS : "=r"(r) : __VA_ARGS__); out[(k++) * n + i] = r; }
#define H(NAME, INS, ...) { unsigned short r; asm volatile(INS : "=h"(r) : __VA_ARGS__); out[(k++) * n + i] = r; }
#define PQ(NAME, SETP) R(NAME, "{ .reg .pred p, q, c; setp.ne.u32 c, %3, 0; " SETP " p|q, %1, %2, c; "    \
                         "selp.u32 %0, 1, 0, p; @q add.u32 %0, %0, 2; }", "r"(x), "r"(y), "r"(z & 1u))
#define P1(NAME, SETP) R(NAME, "{ .reg .pred p; " SETP " p, %1, %2; selp.u32 %0, 1, 0, p; }", "r"(x), "r"(y))

extern "C" __global__ void int_ops32(const unsigned* a, const unsigned* b, const unsigned* c, const unsigned* d,
                                     unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], z = c[i], v = d[i];
  unsigned short hx = (unsigned short)x, hy = (unsigned short)y, hz = (unsigned short)z;
  int k = 0;
  // --- add/sub/mul/mad (9.7.1.1-4)
  R(add_u32, "add.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(sub_s32, "sub.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(add_sat_s32, "add.sat.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(sub_sat_s32, "sub.sat.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(mul_lo_u32, "mul.lo.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(mul_hi_u32, "mul.hi.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(mul_hi_s32, "mul.hi.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(mad_lo_s32, "mad.lo.s32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(mad_hi_u32, "mad.hi.u32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(mad_hi_s32, "mad.hi.s32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(mad_hi_sat_s32, "mad.hi.sat.s32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(mul24_lo_u32, "mul24.lo.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(mul24_lo_s32, "mul24.lo.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(mul24_hi_u32, "mul24.hi.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(mul24_hi_s32, "mul24.hi.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(mad24_lo_s32, "mad24.lo.s32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(mad24_hi_u32, "mad24.hi.u32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(mad24_hi_sat_s32, "mad24.hi.sat.s32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(sad_u32, "sad.u32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(sad_s32, "sad.s32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  // --- carry chains (9.7.2): sums and carry/borrow flags
  R(addc_sum, "{ .reg .u32 t; add.cc.u32 t, %1, %2; addc.u32 %0, %3, %4; }", "r"(x), "r"(y), "r"(z), "r"(v))
  R(addc_cf, "{ .reg .u32 t; add.cc.u32 t, %1, %2; addc.cc.u32 t, %3, %4; addc.u32 %0, 0, 0; }",
    "r"(x), "r"(y), "r"(z), "r"(v))
  R(subc_diff, "{ .reg .u32 t; sub.cc.u32 t, %1, %2; subc.u32 %0, %3, %4; }", "r"(x), "r"(y), "r"(z), "r"(v))
  R(subc_bf, "{ .reg .u32 t; sub.cc.s32 t, %1, %2; subc.cc.s32 t, %3, %4; subc.u32 %0, 0, 0; }",
    "r"(x), "r"(y), "r"(z), "r"(v))
  R(madc_hi, "{ .reg .u32 t; mad.lo.cc.u32 t, %1, %2, %3; madc.hi.u32 %0, %1, %2, %4; }",
    "r"(x), "r"(y), "r"(z), "r"(v))
  R(madc_cf, "{ .reg .u32 t; mad.hi.cc.u32 t, %1, %2, %3; madc.lo.cc.u32 t, %1, %2, %4; addc.u32 %0, 0, 0; }",
    "r"(x), "r"(y), "r"(z), "r"(v))
  // --- div/rem (9.7.1.8-9), division by zero included
  R(div_u32, "div.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(div_s32, "div.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(rem_u32, "rem.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(rem_s32, "rem.s32 %0, %1, %2;", "r"(x), "r"(y))
  // --- abs/neg/min/max (9.7.1.10-13)
  R(abs_s32, "abs.s32 %0, %1;", "r"(x))
  R(neg_s32, "neg.s32 %0, %1;", "r"(x))
  R(min_u32, "min.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(min_s32, "min.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(max_u32, "max.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(max_s32, "max.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(min_relu_s32, "min.relu.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(max_relu_s32, "max.relu.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(min_u16x2, "min.u16x2 %0, %1, %2;", "r"(x), "r"(y))
  R(max_s16x2, "max.s16x2 %0, %1, %2;", "r"(x), "r"(y))
  R(min_relu_s16x2, "min.relu.s16x2 %0, %1, %2;", "r"(x), "r"(y))
  R(add_u16x2, "add.u16x2 %0, %1, %2;", "r"(x), "r"(y))
  R(add_s16x2, "add.s16x2 %0, %1, %2;", "r"(x), "r"(y))
  // --- bit ops (9.7.1.14-22)
  R(popc_b32, "popc.b32 %0, %1;", "r"(x))
  R(clz_b32, "clz.b32 %0, %1;", "r"(x))
  R(bfind_u32, "bfind.u32 %0, %1;", "r"(x))
  R(bfind_s32, "bfind.s32 %0, %1;", "r"(x))
  R(bfind_sa_u32, "bfind.shiftamt.u32 %0, %1;", "r"(x))
  R(bfind_sa_s32, "bfind.shiftamt.s32 %0, %1;", "r"(x))
  R(brev_b32, "brev.b32 %0, %1;", "r"(x))
  R(bfe_u32, "bfe.u32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(bfe_s32, "bfe.s32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(bfi_b32, "bfi.b32 %0, %1, %2, %3, %4;", "r"(x), "r"(y), "r"(z), "r"(v))
  R(fns_b32, "fns.b32 %0, %1, %2, %3;", "r"(x), "r"(y & 31u), "r"(v))
  R(szext_clamp_s32, "szext.clamp.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(szext_wrap_u32, "szext.wrap.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(bmsk_clamp, "bmsk.clamp.b32 %0, %1, %2;", "r"(y), "r"(z))
  R(bmsk_wrap, "bmsk.wrap.b32 %0, %1, %2;", "r"(y), "r"(z))
  R(dp4a_u_u, "dp4a.u32.u32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(dp4a_s_u, "dp4a.s32.u32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(dp2a_lo_s_s, "dp2a.lo.s32.s32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(dp2a_hi_u_s, "dp2a.hi.u32.s32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  // --- logic / shifts (9.7.8)
  R(and_b32, "and.b32 %0, %1, %2;", "r"(x), "r"(y))
  R(or_b32, "or.b32 %0, %1, %2;", "r"(x), "r"(y))
  R(xor_b32, "xor.b32 %0, %1, %2;", "r"(x), "r"(y))
  R(not_b32, "not.b32 %0, %1;", "r"(x))
  R(cnot_b32, "cnot.b32 %0, %1;", "r"(x))
  R(pred_logic, "{ .reg .pred p, q, s; setp.lt.u32 p, %1, %2; setp.lt.u32 q, %2, %3; and.pred s, p, q; "
                "selp.u32 %0, 1, 0, s; or.pred s, p, q; @s add.u32 %0, %0, 2; xor.pred s, p, q; @s add.u32 %0, %0, 4; "
                "not.pred s, p; @s add.u32 %0, %0, 8; @!q add.u32 %0, %0, 16; }", "r"(x), "r"(y), "r"(z))
  R(shl_b32, "shl.b32 %0, %1, %2;", "r"(x), "r"(y))
  R(shr_u32, "shr.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(shr_s32, "shr.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(shr_b32, "shr.b32 %0, %1, %2;", "r"(x), "r"(y))
  R(shf_l_clamp, "shf.l.clamp.b32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(shf_l_wrap, "shf.l.wrap.b32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(shf_r_clamp, "shf.r.clamp.b32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(shf_r_wrap, "shf.r.wrap.b32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(lop3_pred_or, "{ .reg .pred p, q; setp.ne.u32 q, %4, 0; lop3.or.b32 %0|p, %1, %2, %3, 0x96, q; "
                  "@p xor.b32 %0, %0, 0x80000000; }", "r"(x), "r"(y), "r"(z), "r"(v & 1u))
  R(lop3_pred_and, "{ .reg .pred p, q; setp.ne.u32 q, %4, 0; lop3.and.b32 _|p, %1, %2, %3, 0x80, q; "
                   "selp.u32 %0, 1, 0, p; }", "r"(x), "r"(y), "r"(z), "r"(v & 1u))
  // --- prmt (9.7.9.7), all modes
  R(prmt, "prmt.b32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(prmt_f4e, "prmt.b32.f4e %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(prmt_b4e, "prmt.b32.b4e %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(prmt_rc8, "prmt.b32.rc8 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(prmt_ecl, "prmt.b32.ecl %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(prmt_ecr, "prmt.b32.ecr %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  R(prmt_rc16, "prmt.b32.rc16 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  // --- setp / set / selp / slct (9.7.6)
  P1(setp_eq_s32, "setp.eq.s32") P1(setp_ne_s32, "setp.ne.s32") P1(setp_lt_s32, "setp.lt.s32")
  P1(setp_le_s32, "setp.le.s32") P1(setp_gt_s32, "setp.gt.s32") P1(setp_ge_s32, "setp.ge.s32")
  P1(setp_lt_u32, "setp.lt.u32") P1(setp_ge_u32, "setp.ge.u32")
  P1(setp_lo_u32, "setp.lo.u32") P1(setp_ls_u32, "setp.ls.u32") P1(setp_hi_u32, "setp.hi.u32")
  P1(setp_hs_u32, "setp.hs.u32") P1(setp_ne_b32, "setp.ne.b32")
  PQ(setp_lt_and_s32, "setp.lt.and.s32") PQ(setp_hi_or_u32, "setp.hi.or.u32")
  PQ(setp_eq_xor_b32, "setp.eq.xor.b32") R(setp_ge_pq_s32, "{ .reg .pred p, q; setp.ge.s32 p|q, %1, %2; selp.u32 %0, 1, 0, p; @q add.u32 %0, %0, 2; }", "r"(x), "r"(y))
  R(set_lt_u32_s32, "set.lt.u32.s32 %0, %1, %2;", "r"(x), "r"(y))
  R(set_hs_f32_u32, "set.hs.f32.u32 %0, %1, %2;", "r"(x), "r"(y))
  R(selp_b32, "{ .reg .pred p; setp.ne.u32 p, %3, 0; selp.b32 %0, %1, %2, p; }", "r"(x), "r"(y), "r"(z & 1u))
  R(slct_b32_s32, "slct.b32.s32 %0, %1, %2, %3;", "r"(x), "r"(y), "r"(z))
  // --- 16-bit forms (zero-extended)
  H(add_u16, "add.u16 %0, %1, %2;", "h"(hx), "h"(hy))
  H(sub_s16, "sub.s16 %0, %1, %2;", "h"(hx), "h"(hy))
  H(mul_lo_s16, "mul.lo.s16 %0, %1, %2;", "h"(hx), "h"(hy))
  H(mul_hi_u16, "mul.hi.u16 %0, %1, %2;", "h"(hx), "h"(hy))
  H(mul_hi_s16, "mul.hi.s16 %0, %1, %2;", "h"(hx), "h"(hy))
  R(mul_wide_u16, "mul.wide.u16 %0, %1, %2;", "h"(hx), "h"(hy))
  R(mul_wide_s16, "mul.wide.s16 %0, %1, %2;", "h"(hx), "h"(hy))
  H(mad_lo_u16, "mad.lo.u16 %0, %1, %2, %3;", "h"(hx), "h"(hy), "h"(hz))
  H(div_s16, "div.s16 %0, %1, %2;", "h"(hx), "h"(hy))
  H(rem_u16, "rem.u16 %0, %1, %2;", "h"(hx), "h"(hy))
  H(min_s16, "min.s16 %0, %1, %2;", "h"(hx), "h"(hy))
  H(abs_s16, "abs.s16 %0, %1;", "h"(hx))
  H(shl_b16, "shl.b16 %0, %1, %2;", "h"(hx), "r"(y))
  H(shr_s16, "shr.s16 %0, %1, %2;", "h"(hx), "r"(y))
  H(shr_u16, "shr.u16 %0, %1, %2;", "h"(hx), "r"(y))
  H(and_b16, "and.b16 %0, %1, %2;", "h"(hx), "h"(hy))
  H(not_b16, "not.b16 %0, %1;", "h"(hx))
  R(setp_lt_s16, "{ .reg .pred p; setp.lt.s16 p, %1, %2; selp.u32 %0, 1, 0, p; }", "h"(hx), "h"(hy))
}
