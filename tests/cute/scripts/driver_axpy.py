"""A plain cuda-python driver-API program (no ptxlab import): PTX text -> cuModuleLoadData -> cuLaunchKernel.

Run on a GPU with ``python driver_axpy.py SEED N`` or on the emulator with ``python lab.py exec driver_axpy.py SEED
N [--torch]``; exits 0 when y = a * x + y is bit-exact. ``--torch``: x and y are ``device="cuda"`` torch tensors
(their ``data_ptr()`` is passed to the kernel) instead of ``cuMemAlloc`` buffers. The inputs are random integers and
a random multiple of 1/8, so the fused multiply-add is exact and the expected values are too.
"""
import sys

import numpy as np
from cuda.bindings import driver as cu

PTX = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry axpy(.param .u64 x, .param .u64 y, .param .f32 a, .param .u32 n)
{
  .reg .pred p; .reg .b32 r<4>; .reg .b64 rd<6>; .reg .f32 f<4>;
  ld.param.u64 rd1, [x]; ld.param.u64 rd2, [y]; ld.param.f32 f1, [a]; ld.param.u32 r1, [n];
  mov.u32 r2, %tid.x; mov.u32 r3, %ctaid.x; mad.lo.u32 r2, r3, 128, r2;
  setp.ge.u32 p, r2, r1; @p bra DONE;
  mul.wide.u32 rd3, r2, 4; add.u64 rd4, rd1, rd3; add.u64 rd5, rd2, rd3;
  ld.global.f32 f2, [rd4]; ld.global.f32 f3, [rd5]; fma.rn.f32 f3, f1, f2, f3; st.global.f32 [rd5], f3;
DONE: ret;
}
"""


def check(result):
    err, *rest = result
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver call failed: {err.name}")
    return rest[0] if len(rest) == 1 else rest


def main(seed: int, n: int, use_torch: bool = False) -> int:
    rng = np.random.default_rng(seed)
    x = rng.integers(-4096, 4096, n).astype(np.float32)
    y = rng.integers(-4096, 4096, n).astype(np.float32)
    a = np.float32(rng.integers(-64, 64) / 8)
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    ctx = check(cu.cuCtxCreate(None, 0, dev))
    mod = check(cu.cuModuleLoadData(PTX.encode() + b"\0"))
    fn = check(cu.cuModuleGetFunction(mod, b"axpy"))
    if use_torch:
        import torch
        tx, ty = (torch.tensor(v, device="cuda") for v in (x, y))
        dx, dy = tx.data_ptr(), ty.data_ptr()
    else:
        dx, dy = check(cu.cuMemAlloc(4 * n)), check(cu.cuMemAlloc(4 * n))
        check(cu.cuMemcpyHtoD(dx, x.ctypes.data, 4 * n))
        check(cu.cuMemcpyHtoD(dy, y.ctypes.data, 4 * n))
    params = [np.array([int(dx)], np.uint64), np.array([int(dy)], np.uint64), np.array([a], np.float32),
              np.array([n], np.uint32)]
    ptrs = np.array([p.ctypes.data for p in params], np.uint64)
    check(cu.cuLaunchKernel(fn, (n + 127) // 128, 1, 1, 128, 1, 1, 0, 0, ptrs.ctypes.data, 0))
    check(cu.cuCtxSynchronize())
    out = np.full(n, np.nan, np.float32)
    if use_torch:
        out = ty.cpu().numpy()
    else:
        check(cu.cuMemcpyDtoH(out.ctypes.data, dy, 4 * n))
        check(cu.cuMemFree(dx))
        check(cu.cuMemFree(dy))
    want = a * x + y
    check(cu.cuCtxDestroy(ctx))
    if not np.array_equal(out.view(np.uint32), want.view(np.uint32)):
        print(f"MISMATCH in {int((out != want).sum())} of {n} values")
        return 1
    print(f"axpy n={n}: bit-exact")
    return 0


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a != "--torch"]
    sys.exit(main(int(argv[0]) if argv else 1, int(argv[1]) if len(argv) > 1 else 1000, "--torch" in sys.argv))
