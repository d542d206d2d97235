"""CUDA backend on a real GPU: 2-D TMA loads with every basic swizzle vs an independent swizzle model, scalar
param packing vs the driver's own param info, >48 KB dynamic SMEM, arch refusal, and a faulting kernel named."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ptxlab
from ptxlab.device.args import pack_params

# 2-D TMA tile load into 1024-B aligned dynamic SMEM, bounded mbarrier wait, SMEM written back byte for byte.
# out[0 .. nbytes) = SMEM image; out[nbytes .. +4) = status (1 = landed, 2 = mbarrier wait timed out).
TMA_SRC = r"""
struct alignas(64) TmaDesc { unsigned long long opaque[16]; };

extern "C" __global__ void tma_2d_roundtrip(const __grid_constant__ TmaDesc tmap, unsigned char* out,
                                            int c0, int c1, unsigned nbytes) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long bar;
    unsigned raw_addr = (unsigned)__cvta_generic_to_shared(smem_raw);
    unsigned dst = (raw_addr + 1023u) & ~1023u;
    unsigned char* smem = smem_raw + (dst - raw_addr);
    unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar_addr), "r"(nbytes) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
            :: "r"(dst), "l"((unsigned long long)&tmap), "r"(c0), "r"(c1), "r"(bar_addr) : "memory");
    }
    unsigned done = 0;
    for (unsigned spin = 0; spin < (1u << 22) && !done; ++spin) {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
            : "=r"(done) : "r"(bar_addr), "r"(0u) : "memory");
    }
    for (unsigned i = threadIdx.x; i < nbytes; i += blockDim.x) out[i] = smem[i];
    if (threadIdx.x == 0) *(unsigned*)(out + nbytes) = done ? 1u : 2u;
}
"""

# Scalar-parameter packing across types, plus a by-value 24-byte struct passed as raw bytes.
ARGS_SRC = r"""
struct S3 { float a; double b; int c; };
extern "C" __global__ void args_mix(double* out, unsigned char u8, short s16, unsigned u32, float f32,
                                    double f64, S3 s, unsigned long long u64, int neg) {
    out[0] = u8; out[1] = s16; out[2] = u32; out[3] = f32; out[4] = f64;
    out[5] = s.a; out[6] = s.b; out[7] = s.c; out[8] = (double)u64; out[9] = neg;
}
"""

# Dynamic shared memory above 48 KB (needs the opt-in attribute): fill it from global, copy it back reversed.
SMEM_SRC = r"""
extern "C" __global__ void smem_reverse(const unsigned char* in, unsigned char* out, unsigned n) {
    extern __shared__ unsigned char s[];
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) s[i] = in[i];
    __syncthreads();
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) out[i] = s[n - 1 - i];
}
"""

TRAP_SRC = r"""
extern "C" __global__ void boom_kernel(int* p) { if (threadIdx.x == 3) __trap(); p[threadIdx.x] = 1; }
"""


@pytest.fixture(scope="module")
def dev(cuda_dev):
    return cuda_dev


@pytest.fixture(scope="module")
def arch(dev) -> str:
    return f"sm_{dev.cc[0]}{dev.cc[1]}a"


# ------------------------------------------------------------------------- independent swizzle model (ptx_facts §9)
_SWZ_MASK = {"none": 0, "32B": 1, "64B": 3, "128B": 7}


def expected_smem(gmem: np.ndarray, pitch: int, shape: tuple[int, int], elem: int, box: tuple[int, int],
                  coords: tuple[int, int], swizzle: str) -> np.ndarray:
    """SMEM image of a 2-D box load: dense box (dim 0 innermost, OOB = 0), then 16-B chunk c of 128-B line L -> c ^ (L & m)."""
    w_bytes, rows = box[0] * elem, box[1]
    dense = np.zeros((rows, w_bytes), np.uint8)
    for r in range(rows):
        y = coords[1] + r
        for e in range(box[0]):
            x = coords[0] + e
            if 0 <= y < shape[1] and 0 <= x < shape[0]:
                dense[r, e * elem:(e + 1) * elem] = gmem[y * pitch + x * elem: y * pitch + (x + 1) * elem]
    flat = dense.reshape(-1)
    out = np.empty_like(flat)
    m = _SWZ_MASK[swizzle]
    for chunk in range(flat.size // 16):
        line, c = chunk // 8, chunk % 8
        dst = line * 8 + (c ^ (line & m))
        out[dst * 16:(dst + 1) * 16] = flat[chunk * 16:(chunk + 1) * 16]
    return out


# (swizzle, dtype, elem bytes, global shape [inner, outer] in elements, pitch bytes, box, coords)
CASES = [
    ("128B", np.uint8, 1, (256, 100), 320, (128, 32), (64, 16)),
    ("64B", np.uint8, 1, (256, 100), 320, (64, 24), (32, 8)),
    ("32B", np.uint8, 1, (256, 100), 320, (32, 40), (224, 0)),
    ("none", np.uint8, 1, (256, 100), 320, (96, 20), (16, 3)),
    ("128B", np.uint16, 2, (128, 50), 320, (64, 16), (32, 5)),
    ("128B", np.uint8, 1, (256, 100), 320, (128, 32), (128, 84)),   # 16 rows past the end: zero fill
    ("64B", np.uint8, 1, (256, 100), 320, (64, 16), (-32, 2)),      # 32 B left of the start: zero fill
    # packed e2m1 view: dims/box/coords in 4-bit values, same bytes as the uint8 geometry (K-major NVFP4 operand tile)
    ("128B", "16U4_ALIGN8B", 1, (256, 100), 320, (128, 32), (64, 16)),
]


@pytest.mark.parametrize("swizzle,dtype,elem,shape,pitch,box,coords", CASES,
                         ids=[f"{c[0]}-{c[1] if isinstance(c[1], str) else np.dtype(c[1]).name}-box{c[5][0]}x{c[5][1]}-at{c[6][0]},{c[6][1]}" for c in CASES])
def test_tma_2d_swizzle_image(dev, arch, rng, swizzle, dtype, elem, shape, pitch, box, coords):
    mod = ptxlab.compile(TMA_SRC, arch=arch, name="tma_2d.cu")
    host = rng.integers(1, 256, size=pitch * shape[1], dtype=np.uint8)   # non-zero: zero fill is visible
    g = dev.to_device(host)
    nbytes = box[0] * elem * box[1]
    out = dev.empty(nbytes + 16)
    dev.memset(out, 0xFF)
    pack = 2 if dtype == "16U4_ALIGN8B" else 1      # 4-bit values per model element (model works in bytes)
    if pack == 2 and dev.cc < (10, 0):
        with pytest.raises(ptxlab.TensorMapError, match="compute capability 10"):
            dev.tensor_map(g, dtype=dtype, global_shape=[shape[0] * 2, shape[1]], global_strides=[pitch],
                           box=[box[0] * 2, box[1]], swizzle=swizzle)
        pytest.skip("no GPU: 16U4_ALIGN8B needs compute capability 10.x (refused cleanly here)")
    tmap = dev.tensor_map(g, dtype=dtype, global_shape=[shape[0] * pack, shape[1]], global_strides=[pitch],
                          box=[box[0] * pack, box[1]], swizzle=swizzle)
    assert tmap.spec.box_bytes == nbytes and len(tmap.raw) == 128
    dev.launch(mod, "tma_2d_roundtrip", grid=(1, 1, 1), block=(128, 1, 1),
               args=[tmap, out, np.int32(coords[0] * pack), np.int32(coords[1]), np.uint32(nbytes)],
               shared_bytes=nbytes + 1024)
    got = dev.to_host(out)
    status = int(got[nbytes:nbytes + 4].view(np.uint32)[0])
    assert status == 1, f"mbarrier wait timed out (status {status}): TMA delivered fewer than {nbytes} tx bytes"
    want = expected_smem(host, pitch, shape, elem, box, coords, swizzle)
    bad = np.flatnonzero(got[:nbytes] != want)
    assert bad.size == 0, f"{bad.size} bytes differ, first at {bad[:8]}"
    assert np.all(got[nbytes + 4:] == 0xFF)
    dev.free(g)
    dev.free(out)


def test_param_layout_matches_driver_and_values_arrive(dev, arch, rng):
    from cuda.bindings import driver

    mod = ptxlab.compile(ARGS_SRC, arch=arch, name="args_mix.cu")
    layout = dev.param_layout(mod, "args_mix")
    _, offsets = pack_params(layout, [b"\0" * p.size for p in layout], "args_mix")
    _, func = dev._function(mod, "args_mix")
    if hasattr(driver, "cuFuncGetParamInfo"):
        for i, (p, off) in enumerate(zip(layout, offsets)):
            err, d_off, d_size = driver.cuFuncGetParamInfo(func, i)
            assert err == driver.CUresult.CUDA_SUCCESS
            assert (int(d_off), int(d_size)) == (off, p.size), f"param {i} {p}"
    vals = dict(u8=int(rng.integers(1, 256)), s16=int(rng.integers(-30000, -1)), u32=int(rng.integers(1, 2**32)),
                f32=float(np.float32(rng.uniform(-9, 9))), f64=float(rng.uniform(-1e9, 1e9)),
                a=float(np.float32(rng.uniform(-5, 5))), b=float(rng.uniform(-5, 5)), c=int(rng.integers(-100, 100)),
                u64=int(rng.integers(1, 2**52)), neg=int(rng.integers(-2**31, -1)))
    s3 = np.zeros(1, dtype=np.dtype([("a", "<f4"), ("b", "<f8"), ("c", "<i4")], align=True))
    s3[0] = (vals["a"], vals["b"], vals["c"])
    assert s3.itemsize == 24
    out = dev.empty(10 * 8)
    dev.memset(out, 0xFF)
    dev.launch(mod, "args_mix", 1, 1, [out, np.uint8(vals["u8"]), np.int16(vals["s16"]), np.uint32(vals["u32"]),
                                       np.float32(vals["f32"]), np.float64(vals["f64"]), s3.tobytes(),
                                       np.uint64(vals["u64"]), np.int32(vals["neg"])])
    got = dev.to_host(out, np.float64)
    want = [vals[k] for k in ("u8", "s16", "u32", "f32", "f64", "a", "b", "c", "u64", "neg")]
    assert got.tolist() == want


def test_dynamic_smem_above_48k(dev, arch, rng):
    mod = ptxlab.compile(SMEM_SRC, arch=arch, name="smem.cu")
    n = 100 * 1024
    host = rng.integers(1, 256, size=n, dtype=np.uint8)
    a, b = dev.to_device(host), dev.empty(n)
    dev.memset(b, 0)
    dev.launch(mod, "smem_reverse", 1, 256, [a, b, np.uint32(n)], shared_bytes=n)
    assert np.array_equal(dev.to_host(b), host[::-1])


def test_refuses_arch_gpu_cannot_run(dev):
    other = "sm_100a" if dev.cc != (10, 0) else "sm_90a"
    mod = ptxlab.compile(SMEM_SRC, arch=other, name="smem_other.cu")
    b = dev.empty(16)
    with pytest.raises(ptxlab.DeviceUnavailable, match=other):
        dev.launch(mod, "smem_reverse", 1, 32, [b, b, np.uint32(16)])
    with pytest.raises(ptxlab.DeviceUnavailable, match=other):
        ptxlab.open_device("cuda", arch=other)
    try:
        auto = ptxlab.open_device("auto", arch=other)
    except ptxlab.DeviceUnavailable as exc:      # emulator backend not present yet
        assert "emulator" in str(exc)
    else:
        assert auto.name == "emu"


def test_faulting_kernel_is_named(arch):
    # A trap poisons the CUDA context, so run it in a fresh process.
    code = textwrap.dedent(f"""
        import numpy as np, ptxlab
        TRAP_SRC = {TRAP_SRC!r}
        dev = ptxlab.open_device("cuda")
        mod = ptxlab.compile(TRAP_SRC, arch={arch!r}, name="trap.cu")
        p = dev.empty(256)
        try:
            dev.launch(mod, "boom_kernel", 1, 32, [p])
        except ptxlab.LaunchError as exc:
            print("LAUNCHERROR:", exc)
    """)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root, env=env)
    assert "LAUNCHERROR:" in res.stdout and "boom_kernel" in res.stdout, res.stdout + res.stderr
