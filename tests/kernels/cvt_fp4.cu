// cvt_fp4.cu — Blackwell narrow-format cvt probe (PTX ISA 9.7.9.21): e2m1x2 / e2m3x2 / e3m2x2 / ue8m0x2 / tf32.
// Needs sm_100a.  Signature: extern "C" __global__ void cvt_fp4(const unsigned* fa, const unsigned* fb,
//                                               const unsigned* hv, unsigned* out, unsigned n)
//   x = fa[i], y = fb[i] (f32 bits), h = hv[i] & 0xffff; out[k * n + i] = zero-extended result bits of op k (source
//   order of the R32/R16/R8 lines; references in tests/emu/test_emu_cvt.py).  e2m1x2.f32: a -> UPPER nibble.
#define O(NAME, T, CON, INS, ...) { T r; asm volatile(INS : CON(r) : __VA_ARGS__); out[(k++) * n + i] = r; }
#define R32(NAME, INS, ...) O(NAME, unsigned, "=r", INS, __VA_ARGS__)
#define R16(NAME, INS, ...) O(NAME, unsigned short, "=h", INS, __VA_ARGS__)
#define R8(NAME, INS, ...) O(NAME, unsigned short, "=h", "{ .reg .b8 t; " INS " cvt.u16.u8 %0, t; }", __VA_ARGS__)
extern "C" __global__ void cvt_fp4(const unsigned* fa, const unsigned* fb, const unsigned* hv, unsigned* out,
                                   unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = fa[i], y = fb[i];
  unsigned short h = (unsigned short)hv[i];
  int k = 0;
  R8(e2m1x2_f32, "cvt.rn.satfinite.e2m1x2.f32 t, %1, %2;", "r"(x), "r"(y))
  R8(e2m1x2_f32_relu, "cvt.rn.satfinite.relu.e2m1x2.f32 t, %1, %2;", "r"(x), "r"(y))
  R32(f16x2_e2m1x2, "{ .reg .b8 t; cvt.u8.u16 t, %1; cvt.rn.f16x2.e2m1x2 %0, t; }", "h"(h))
  R16(e2m3x2_f32, "cvt.rn.satfinite.e2m3x2.f32 %0, %1, %2;", "r"(x), "r"(y))
  R16(e3m2x2_f32, "cvt.rn.satfinite.e3m2x2.f32 %0, %1, %2;", "r"(x), "r"(y))
  R32(f16x2_e2m3x2, "cvt.rn.f16x2.e2m3x2 %0, %1;", "h"((unsigned short)(h & 0x3f3f)))
  R32(f16x2_e3m2x2, "cvt.rn.f16x2.e3m2x2 %0, %1;", "h"((unsigned short)(h & 0x3f3f)))
  R16(ue8m0x2_f32_rz, "cvt.rz.satfinite.ue8m0x2.f32 %0, %1, %2;", "r"(x), "r"(y))
  R16(ue8m0x2_f32_rp, "cvt.rp.satfinite.ue8m0x2.f32 %0, %1, %2;", "r"(x), "r"(y))
  R32(bf16x2_ue8m0x2, "cvt.rn.bf16x2.ue8m0x2 %0, %1;", "h"(h))
  R32(tf32_f32_rn_satfinite, "cvt.rn.satfinite.tf32.f32 %0, %1;", "r"(x))
  R32(tf32_f32_rz_satfinite, "cvt.rz.satfinite.tf32.f32 %0, %1;", "r"(x))
}
