"""Device API on CPU: backend selection, arch rules, PTX param parsing/packing on real NVRTC PTX, and the shared
Device base logic (buffers, copies, tensor maps, launch checks) through a host-memory test double."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.device import open_device
from ptxlab.device.args import Param, pack_params, parse_entry_params
from ptxlab.device.base import Device, DeviceBuffer, parse_arch
from ptxlab.device.cuda import arch_runs_on
from ptxlab.errors import DeviceUnavailable, LaunchError, PtxlabError, TensorMapError
from ptxlab.tensormap import EMU_MAGIC, TensorMap, decode_emu, encode_emu


def _has_gpu() -> bool:
    try:
        open_device("cuda")
    except DeviceUnavailable:
        return False
    return True


HAS_GPU = _has_gpu()


class _NoDriver:
    """Stands in for cuda.bindings.driver on a machine without libcuda (cuInit raises, as the real binding does)."""

    @staticmethod
    def cuInit(flags):
        raise RuntimeError("Failed to dlopen libcuda.so.1")


@pytest.fixture
def no_gpu(monkeypatch):
    """The GPU-less path: the real one on a machine without a GPU, a driver without libcuda on one with a GPU."""
    if HAS_GPU:
        import ptxlab.device.cuda as cuda_mod

        monkeypatch.setattr(cuda_mod, "_driver", lambda: _NoDriver)


# ------------------------------------------------------------------------------------------------ selection
def test_open_cuda_without_gpu_is_clear(no_gpu):
    with pytest.raises(DeviceUnavailable, match=r"cuda backend: .*use open_device\('emu'\)"):
        ptxlab.open_device("cuda")


def test_open_unknown_backend():
    with pytest.raises(DeviceUnavailable, match="unknown backend"):
        open_device("tpu")


def test_open_emu_or_clear_refusal():
    try:
        dev = open_device("emu")
    except DeviceUnavailable as exc:
        assert "emulator backend" in str(exc)
    else:
        assert dev.name == "emu" and isinstance(dev, Device)


def test_auto_without_gpu_picks_emu(no_gpu):
    for arch in (None, "sm_100a", "sm_90a"):
        try:
            dev = open_device("auto", arch=arch)
        except DeviceUnavailable as exc:
            assert "emulator backend" in str(exc)
        else:
            assert dev.name == "emu"


@pytest.mark.parametrize("arch,cc,ok", [
    ("sm_100a", (10, 0), True), ("sm_100a", (9, 0), False), ("sm_100a", (10, 3), False),
    ("sm_90a", (9, 0), True), ("sm_90a", (10, 0), False), ("sm_90", (9, 0), True), ("sm_80", (8, 6), True),
    ("sm_86", (8, 0), False), ("sm_80", (9, 0), False), ("sm_100f", (10, 3), True), ("sm_103f", (10, 0), False),
])
def test_arch_runs_on(arch, cc, ok):
    assert arch_runs_on(arch, *cc) is ok


def test_parse_arch():
    assert parse_arch("sm_100a") == (10, 0, "a")
    assert parse_arch("sm_90") == (9, 0, "")
    assert parse_arch("sm_120f") == (12, 0, "f")
    with pytest.raises(DeviceUnavailable, match="sm_XY"):
        parse_arch("hopper")


# ------------------------------------------------------------------------------------------------ params
SIG_SRC = r"""
struct alignas(64) TMap { unsigned long long opaque[16]; };
struct S3 { float a; double b; int c; };
struct P2 { char c; short s; };
extern "C" __global__ void k_tma(const __grid_constant__ TMap tm, unsigned char* out, unsigned n) { out[n] = ((const unsigned char*)&tm)[n]; }
extern "C" __global__ void k_mix(float* a, int b, double c, char d, S3 s, unsigned long long e, short f, P2 p) {
    a[0] = b + c + d + s.a + s.b + s.c + e + f + p.c + p.s; }
extern "C" __global__ void k_none() {}
extern "C" __global__ void k_arr(float4 v, const float* __restrict__ x, float* y) { y[0] = v.x + v.w + x[0]; }
__global__ void k_mangled(int* p, float q) { p[0] = (int)q; }
"""


@pytest.fixture(scope="module")
def sig_ptx() -> str:
    return ptxlab.compile(SIG_SRC, arch="sm_100a", name="sigs.cu").ptx


def test_parse_real_nvrtc_ptx(sig_ptx):
    assert parse_entry_params(sig_ptx, "k_tma") == [Param("k_tma_param_0", 128, 64), Param("k_tma_param_1", 8, 8),
                                                    Param("k_tma_param_2", 4, 4)]
    sizes = [(p.size, p.align) for p in parse_entry_params(sig_ptx, "k_mix")]
    assert sizes == [(8, 8), (4, 4), (8, 8), (1, 1), (24, 8), (8, 8), (2, 2), (4, 2)]
    assert parse_entry_params(sig_ptx, "k_none") == []
    assert [(p.size, p.align) for p in parse_entry_params(sig_ptx, "k_arr")] == [(16, 16), (8, 8), (8, 8)]
    mangled = [k for k in ptxlab.compile(SIG_SRC, arch="sm_100a", name="sigs.cu").kernels if "k_mangled" in k][0]
    assert [(p.size, p.align) for p in parse_entry_params(sig_ptx, mangled)] == [(8, 8), (4, 4)]


def test_parse_handwritten_forms():
    ptx = """
    // comment .entry fake(
    .visible .entry h1(
        .param .u64 .ptr .align 1 h1_param_0,   // pointer with pointee alignment
        .param .u64 .ptr.global.align 16 h1_param_1,
        .param .align 4 .b8 h1_param_2[12],
        .param .b32 h1_param_3[3],
        .param .f32 h1_param_4
    )
    { ret; }
    .entry h2
    { ret; }
    """
    assert parse_entry_params(ptx, "h1") == [Param("h1_param_0", 8, 8), Param("h1_param_1", 8, 8),
                                             Param("h1_param_2", 12, 4), Param("h1_param_3", 12, 4),
                                             Param("h1_param_4", 4, 4)]
    assert parse_entry_params(ptx, "h2") == []
    with pytest.raises(LaunchError, match=r"'nope' is not an \.entry.*h1"):
        parse_entry_params(ptx, "nope")
    with pytest.raises(LaunchError, match="parameter 0"):
        parse_entry_params(".entry bad(.param .q33 bad_param_0) {}", "bad")


def test_pack_values_and_offsets(sig_ptx, rng):
    layout = parse_entry_params(sig_ptx, "k_mix")
    dev = HostDevice()
    buf = dev.empty(64)
    b, c, d = np.int32(rng.integers(-2**31, 0)), np.float64(rng.standard_normal()), np.int8(rng.integers(-128, -1))
    s = rng.integers(1, 256, 24, dtype=np.uint8).tobytes()
    e, f = np.uint64(rng.integers(1, 2**63)), np.int16(rng.integers(-2**15, 0))
    p = rng.integers(1, 256, 4, dtype=np.uint8).tobytes()
    packed, offs = pack_params(layout, [buf, b, c, d, s, e, f, p], "k_mix")
    assert offs == [0, 8, 16, 24, 32, 56, 64, 66]
    assert len(packed) == 70
    assert packed[0:8] == buf.ptr.to_bytes(8, "little")
    assert packed[8:12] == b.tobytes() and packed[12:16] == bytes(4)
    assert packed[16:24] == c.tobytes() and packed[24:25] == d.tobytes()
    assert packed[32:56] == s and packed[56:64] == e.tobytes() and packed[64:66] == f.tobytes()
    assert packed[66:70] == p


def test_pack_tensor_map_by_value(sig_ptx, rng):
    dev = HostDevice()
    g = dev.to_device(rng.integers(1, 256, 4096, dtype=np.uint8))
    tm = dev.tensor_map(g, np.uint8, [64, 64], [64], [64, 8], swizzle="64B")
    packed, offs = pack_params(parse_entry_params(sig_ptx, "k_tma"), [tm, g, np.uint32(5)], "k_tma")
    assert offs == [0, 128, 136] and packed[:128] == tm.raw and decode_emu(packed[:128]) == tm.spec


def test_pack_errors_name_kernel_and_index(sig_ptx):
    layout = parse_entry_params(sig_ptx, "k_tma")
    dev = HostDevice()
    g = dev.empty(16)
    with pytest.raises(LaunchError, match=r"'k_tma' takes 3 parameters .* but 2 arguments"):
        pack_params(layout, [b"\0" * 128, g], "k_tma")
    with pytest.raises(LaunchError, match=r"'k_tma' parameter 2 \(k_tma_param_2\) is 4 bytes .* 8 bytes"):
        pack_params(layout, [b"\0" * 128, g, np.uint64(1)], "k_tma")
    with pytest.raises(LaunchError, match=r"'k_tma' argument 2: plain Python int .* np.uint32"):
        pack_params(layout, [b"\0" * 128, g, 7], "k_tma")
    with pytest.raises(LaunchError, match=r"argument 1: unsupported type ndarray.*to_device"):
        pack_params(layout, [b"\0" * 128, np.zeros(4), np.uint32(1)], "k_tma")
    with pytest.raises(LaunchError, match=r"parameter 0 \(k_tma_param_0\) is 128 bytes"):
        pack_params(layout, [g, g, np.uint32(1)], "k_tma")


# ------------------------------------------------------------------------------------------------ base logic
class HostDevice(Device):
    """Test double: host bytearray memory; _launch records what reached the backend."""

    name = "host-test"

    def __init__(self) -> None:
        super().__init__()
        self.mem: dict[int, bytearray] = {}
        self.next = 0x7000_0000
        self.launched: list = []

    def arch_supported(self, arch: str) -> bool:
        return parse_arch(arch)[:2] == (10, 0)

    def _find(self, ptr: int) -> tuple[bytearray, int]:
        for base, m in self.mem.items():
            if base <= ptr < base + len(m):
                return m, ptr - base
        raise AssertionError(f"bad address 0x{ptr:x}")

    def _alloc(self, nbytes: int) -> int:
        ptr, self.next = self.next, self.next + ((nbytes + 255) // 256 + 1) * 256
        self.mem[ptr] = bytearray(nbytes)
        return ptr

    def _free(self, ptr: int) -> None:
        del self.mem[ptr]

    def _write(self, ptr: int, data: bytes) -> None:
        m, o = self._find(ptr)
        m[o:o + len(data)] = data

    def _read(self, ptr: int, nbytes: int) -> bytes:
        m, o = self._find(ptr)
        return bytes(m[o:o + nbytes])

    def _memset(self, ptr: int, value: int, nbytes: int) -> None:
        m, o = self._find(ptr)
        m[o:o + nbytes] = bytes([value]) * nbytes

    def _launch(self, module, kernel, grid, block, params, offsets, layout, shared_bytes) -> None:
        self.launched.append((kernel, grid, block, params, offsets, shared_bytes))

    def _encode_tensor_map(self, spec) -> bytes:
        return encode_emu(spec)


class FakeModule:
    def __init__(self, ptx: str, arch: str = "sm_100a") -> None:
        self.ptx, self.arch, self.cubin = ptx, arch, b""

    @property
    def kernels(self) -> list[str]:
        import re
        return re.findall(r"\.entry\s+(\w+)", self.ptx)


def test_memory_round_trip_and_poison(rng):
    dev = HostDevice()
    a = rng.standard_normal((7, 5)).astype(np.float32)
    buf = dev.to_device(a)
    assert isinstance(buf, DeviceBuffer) and buf.nbytes == a.nbytes and buf.device is dev
    assert np.array_equal(dev.to_host(buf, np.float32, (7, 5)), a)
    dev.memset(buf, 0xFF, 8)
    got = dev.to_host(buf, np.uint8)
    assert np.all(got[:8] == 0xFF) and np.array_equal(got[8:], a.view(np.uint8).reshape(-1)[8:])
    y = dev.empty(int(rng.integers(1, 100)))
    dev.memset(y, 0xA5)
    assert np.all(dev.to_host(y) == 0xA5)
    dev.write(buf, np.float32([1.5]), offset=4)
    assert dev.to_host(buf, np.float32)[1] == 1.5
    with pytest.raises(PtxlabError, match="needs 160 bytes but buffer"):
        dev.to_host(buf, np.float64, (20,))
    with pytest.raises(PtxlabError, match="not a byte"):
        dev.memset(y, 256)
    dev.free(buf)
    with pytest.raises(PtxlabError, match="already freed"):
        dev.to_host(buf)
    with pytest.raises(PtxlabError, match="belongs to another device"):
        HostDevice().to_host(y)
    assert dev.empty(0).nbytes == 0


def test_tensor_map_checks(rng):
    dev = HostDevice()
    g = dev.to_device(rng.integers(1, 256, 64 * 32, dtype=np.uint8))
    tm = dev.tensor_map(g, np.uint8, [64, 32], [64], [64, 16], swizzle="64B")
    assert isinstance(tm, TensorMap) and tm.raw[:8] == EMU_MAGIC and tm.spec.global_address == g.ptr
    with pytest.raises(TensorMapError, match="past the end"):
        dev.tensor_map(g, np.uint8, [64, 33], [64], [64, 16])
    with pytest.raises(TensorMapError, match="swizzle span"):
        dev.tensor_map(g, np.uint8, [64, 32], [64], [128, 16], swizzle="64B")
    with pytest.raises(TensorMapError, match="16-byte aligned"):
        dev.tensor_map(g, np.uint8, [32, 16], [64], [32, 16], offset=8)
    with pytest.raises(TensorMapError, match="interleave='16B' is not supported by ptxlab devices"):
        dev.tensor_map(g, np.uint8, [16, 4, 4], [16, 64], [16, 4, 4], interleave="16B")


def test_launch_checks_and_packing(rng):
    dev = HostDevice()
    ptx = ".visible .entry k(.param .u64 k_param_0, .param .align 64 .b8 k_param_1[128], .param .u32 k_param_2) {}"
    mod = FakeModule(ptx)
    out = dev.empty(64)
    g = dev.to_device(rng.integers(1, 256, 1024, dtype=np.uint8))
    tm = dev.tensor_map(g, np.uint8, [32, 32], [32], [32, 8])
    n = np.uint32(rng.integers(1, 2**32))
    dev.launch(mod, "k", grid=(2, 3), block=128, args=[out, tm, n], shared_bytes=1000)
    kernel, grid, block, params, offsets, smem = dev.launched[-1]
    assert (kernel, grid, block, offsets, smem) == ("k", (2, 3, 1), (128, 1, 1), [0, 64, 192], 1000)
    assert params[64:192] == tm.raw and params[192:196] == n.tobytes()
    bad = [
        (dict(kernel="missing"), LaunchError, r"not in the module"),
        (dict(block=(1025,)), LaunchError, r"block .* dim 0"),
        (dict(block=(32, 32, 2)), LaunchError, r"2048 threads"),
        (dict(grid=(1, 65536)), LaunchError, r"grid .* dim 1"),
        (dict(grid=0), LaunchError, r"grid .* dim 0"),
        (dict(shared_bytes=300000), LaunchError, r"shared_bytes 300000"),
        (dict(args=[out, tm]), LaunchError, r"takes 3 parameters"),
        (dict(args=[out, TensorMap(tm.spec, encode_emu(tm.spec)[:127] + b"\1"), n]), LaunchError, r"not made by"),
    ]
    for kw, exc, msg in bad:
        call = dict(kernel="k", grid=1, block=32, args=[out, tm, n], shared_bytes=0)
        call.update(kw)
        with pytest.raises(exc, match=msg):
            dev.launch(mod, call["kernel"], call["grid"], call["block"], call["args"], call["shared_bytes"])
    with pytest.raises(DeviceUnavailable, match=r"compiled for sm_90a cannot run"):
        dev.launch(FakeModule(ptx, "sm_90a"), "k", 1, 32, [out, tm, n])
    dev.free(out)
    with pytest.raises(PtxlabError, match="already freed"):
        dev.launch(mod, "k", 1, 32, [out, tm, n])
