// float_approx.cu — .approx f32 ops and testp (PTX ISA 9.7.3.12-22, 9.7.3.16).
// Signature: extern "C" __global__ void float_approx(const unsigned* a, unsigned* out, unsigned n)
//   out[i*16 + k]: 0 rcp.approx, 1 sqrt.approx, 2 rsqrt.approx, 3 ex2.approx, 4 lg2.approx, 5 sin.approx,
//   6 cos.approx, 7 tanh.approx (all .f32); 8..13 testp.{finite,infinite,number,notanumber,normal,subnormal}.f32
//   as 0/1; 14 rcp.approx.ftz.f32; 15 ex2.approx.ftz.f32.
#define OP1(k, ins) asm volatile(ins " %0, %1;" : "=r"(r) : "r"(x)); o[k] = r;
#define TP(k, ins) asm volatile("{ .reg .pred p; " ins " p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "r"(x)); o[k] = r;
extern "C" __global__ void float_approx(const unsigned* a, unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], r;
  unsigned* o = out + (size_t)i * 16;
  OP1(0, "rcp.approx.f32") OP1(1, "sqrt.approx.f32") OP1(2, "rsqrt.approx.f32") OP1(3, "ex2.approx.f32")
  OP1(4, "lg2.approx.f32") OP1(5, "sin.approx.f32") OP1(6, "cos.approx.f32") OP1(7, "tanh.approx.f32")
  TP(8, "testp.finite.f32") TP(9, "testp.infinite.f32") TP(10, "testp.number.f32") TP(11, "testp.notanumber.f32")
  TP(12, "testp.normal.f32") TP(13, "testp.subnormal.f32")
  OP1(14, "rcp.approx.ftz.f32") OP1(15, "ex2.approx.ftz.f32")
}
