// ptxlab: the memory of the std:: container stubs (<vector>, <unordered_map>) used by CUTLASS examples' host code,
// which runs as device code on the emulator (ptxlab.cutlass): a bump allocator over one __device__ array, never
// freed (the host code runs once per launch of ptxlab_host). Running out stops the host code with a message.
#pragma once
namespace ptxlab {
__device__ unsigned char arena[1 << 20];
__device__ unsigned long long arena_used = 0;
__device__ inline void* arena_alloc(unsigned long long bytes) {
  unsigned long long n = (bytes + 15) & ~15ull;
  if (arena_used + n > sizeof(arena)) {
    printf("ptxlab: the example's host containers need more than %llu bytes (ptxlab_arena.cuh)\n",
           (unsigned long long)sizeof(arena));
    asm volatile("trap;");
  }
  void* p = arena + arena_used;
  arena_used += n;
  return p;
}
}  // namespace ptxlab
