// ptxlab: capture of a kernel launch made by a CUTLASS example's host code run as device code (ptxlab.cutlass).
// Buffer layout (little endian, read by ptxlab/cutlass/capture.py):
//   u32 magic 0x4C435850 ('PXCL'), u32 nargs, u32 grid[3], u32 block[3], u32 cluster[3], u32 smem_bytes,
//   u32 pdl, u32 0, u64 workspace bytes the host code asked for,
//   then per argument: u32 size, u32 align, size bytes, zero padding to a multiple of 8.
#pragma once
namespace ptxlab {
__device__ unsigned char* capture_buf = nullptr;
__device__ unsigned capture_off = 0;
__device__ void* workspace = nullptr;          // the example's workspace allocation (cutlass/util/device_memory.h)
__device__ unsigned long long workspace_bytes = 0;
__device__ bool capture_pdl = false;           // the launch asked for programmatic dependent launch
__device__ unsigned params_bytes = 0;          // size of the kernel's one Params argument (ClusterLauncher captures)
__device__ unsigned launch_skip = 0;           // launches to pass over (not captured) before the one captured

// true when this launch is passed over: the stub returns success without launching, and the host code goes on
// (e.g. to the next of the kernels an example's main() runs one after another)
__device__ inline bool skip_launch() {
  if (launch_skip == 0) return false;
  --launch_skip;
  return true;
}

__device__ inline void capture_u32(unsigned v) {
  for (int i = 0; i < 4; ++i) capture_buf[capture_off + i] = (unsigned char)(v >> (8 * i));
  capture_off += 4;
}
template <class T> __device__ void capture_arg(T const& a) {
  capture_u32((unsigned)sizeof(T));
  capture_u32((unsigned)alignof(T));
  unsigned char const* p = reinterpret_cast<unsigned char const*>(&a);
  for (unsigned i = 0; i < sizeof(T); ++i) capture_buf[capture_off + i] = p[i];
  capture_off += ((unsigned)sizeof(T) + 7u) & ~7u;
}
template <class... A> __device__ void capture_launch(dim3 g, dim3 b, dim3 c, int smem, A const&... a) {
  if (capture_buf == nullptr) return;
  capture_off = 0;
  capture_u32(0x4C435850u);
  capture_u32((unsigned)sizeof...(A));
  capture_u32(g.x); capture_u32(g.y); capture_u32(g.z);
  capture_u32(b.x); capture_u32(b.y); capture_u32(b.z);
  capture_u32(c.x); capture_u32(c.y); capture_u32(c.z);
  capture_u32((unsigned)smem);
  capture_u32(capture_pdl ? 1u : 0u);
  capture_u32(0u);
  capture_u32((unsigned)workspace_bytes);
  capture_u32((unsigned)(workspace_bytes >> 32));
  (capture_arg(a), ...);
}
// one argument given as raw bytes (ClusterLauncher's void** kernel_params)
__device__ inline void capture_launch_raw(dim3 g, dim3 b, dim3 c, int smem, void const* p, unsigned n) {
  if (capture_buf == nullptr) return;
  capture_off = 0;
  capture_u32(0x4C435850u);
  capture_u32(1u);
  capture_u32(g.x); capture_u32(g.y); capture_u32(g.z);
  capture_u32(b.x); capture_u32(b.y); capture_u32(b.z);
  capture_u32(c.x); capture_u32(c.y); capture_u32(c.z);
  capture_u32((unsigned)smem);
  capture_u32(capture_pdl ? 1u : 0u);
  capture_u32(0u);
  capture_u32((unsigned)workspace_bytes);
  capture_u32((unsigned)(workspace_bytes >> 32));
  capture_u32(n);
  capture_u32(64u);
  for (unsigned i = 0; i < n; ++i) capture_buf[capture_off + i] = static_cast<unsigned char const*>(p)[i];
  capture_off += (n + 7u) & ~7u;
}
// after the captured launch the host code has nothing left that ptxlab needs: end the thread
__device__ inline void capture_done() { asm volatile("exit;"); __builtin_unreachable(); }
}  // namespace ptxlab
