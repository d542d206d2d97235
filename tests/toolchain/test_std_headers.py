"""Kernels pasted with `#include <cstdint>`, `<cassert>`, `<cstddef>`, `<climits>`, `<cfloat>`, `<cstdio>`,
`<cstring>` (and their C spellings) compile under ptxlab's NVRTC (ptxlab/toolchain/stdshim.py) and run on the
emulator: std:: and global names, limit macros, offsetof, printf, assert, memcpy."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.errors import CompileError, EmuError
from ptxlab.toolchain import stdshim

PASTED = r'''
#include <cstdint>
#include <cassert>
#include <cstddef>
#include <climits>
#include <cfloat>
#include <cstdio>
#include <cstring>
#include <stdint.h>
#include <stddef.h>
#include <limits.h>
#include <assert.h>

struct Rec { std::uint8_t tag; std::uint32_t a; std::int64_t b; };

extern "C" __global__ void pasted(const std::uint32_t* x, std::uint64_t* y, std::size_t n, std::uint32_t salt) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  assert(x[i % n] != 0xDEADBEEFu);
  if (i >= n) return;
  Rec r;
  std::memset(&r, 0, sizeof r);
  uint32_t v = x[i] ^ salt;
  std::memcpy(&r.a, &v, sizeof v);
  r.b = static_cast<std::int64_t>(static_cast<std::int16_t>(v & 0xFFFFu)) - INT16_MAX;
  y[i] = (static_cast<std::uint64_t>(r.a) << 32) ^ static_cast<std::uint64_t>(r.b);
  if (i == 0) {
    std::ptrdiff_t off = offsetof(Rec, b);
    y[n + 0] = static_cast<std::uint64_t>(off);
    y[n + 1] = UINT32_MAX;
    y[n + 2] = static_cast<std::uint64_t>(INT32_MIN);
    y[n + 3] = CHAR_BIT * sizeof(std::int64_t) + INT_MAX;
    float fm = FLT_MAX;
    std::uint32_t fb;
    std::memcpy(&fb, &fm, 4);
    y[n + 4] = fb;
    y[n + 5] = sizeof(std::uintptr_t) + sizeof(std::nullptr_t);
    std::printf("pasted kernel: n=%d salt=%u\n", static_cast<int>(n), salt);
  }
}
'''


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(PASTED, arch="sm_100a", name="pasted.cu")


def test_pasted_kernel_runs_on_the_emulator(mod, rng, capsys) -> None:
    dev = ptxlab.open_device("emu")
    n = int(rng.integers(40, 200))
    x = rng.integers(1, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    x[x == 0xDEADBEEF] = 1
    salt = int(rng.integers(0, 1 << 32))
    y = dev.empty(8 * (n + 6))
    dev.memset(y, 0xAB)
    dev.launch(mod, "pasted", grid=(n + 63) // 64, block=64, args=[dev.to_device(x), y, np.uint64(n), np.uint32(salt)])
    got = dev.to_host(y, np.uint64, shape=(n + 6,))
    v = x ^ np.uint32(salt)
    b = (v & 0xFFFF).astype(np.uint16).view(np.int16).astype(np.int64) - 32767
    want = (v.astype(np.uint64) << np.uint64(32)) ^ b.view(np.uint64)
    assert np.array_equal(got[:n], want)
    fmax_bits = int(np.array([np.finfo(np.float32).max], np.float32).view(np.uint32)[0])
    assert [int(g) for g in got[n:]] == [8, 0xFFFFFFFF, (-(2**31)) % 2**64, 64 + 2**31 - 1, fmax_bits, 16]
    assert capsys.readouterr().out.splitlines() == [f"pasted kernel: n={n} salt={salt}"]


def test_assert_from_cassert_fires(mod, rng) -> None:
    dev = ptxlab.open_device("emu")
    x = rng.integers(1, 1 << 31, 64, dtype=np.uint64).astype(np.uint32)
    bad = int(rng.integers(0, 64))
    x[bad] = 0xDEADBEEF
    with pytest.raises(EmuError, match=r"device-side assert failed: x\[i % n\] != 0xDEADBEEFu"):
        dev.launch(mod, "pasted", grid=1, block=64, args=[dev.to_device(x), dev.empty(8 * 70), np.uint64(64),
                                                          np.uint32(0)])


@pytest.mark.parametrize("header", sorted(stdshim.SHIMS))
def test_each_wrapped_header_compiles_alone(header: str) -> None:
    src = f"#include <{header}>\n" + 'extern "C" __global__ void k(unsigned* p) { p[0] = 1u; }\n'
    ptxlab.compile(src, arch="sm_90a", name=f"hdr_{header.replace('.', '_')}.cu")


def test_unwrapped_std_header_still_a_clear_compile_error() -> None:
    with pytest.raises(CompileError, match=r"cannot open source file \"vector\""):
        ptxlab.compile("#include <vector>\n__global__ void k() {}\n", arch="sm_90a", name="vec.cu")


def test_a_users_own_header_wins(tmp_path) -> None:
    """The wrappers come last on the include path: a caller's own <cstdint> is the one used."""
    (tmp_path / "cstdint").write_text("#define MY_OWN_CSTDINT 1\ntypedef unsigned my_u32;\n")
    src = '#include <cstdint>\nextern "C" __global__ void k(my_u32* p) { p[0] = MY_OWN_CSTDINT; }\n'
    mod = ptxlab.compile(src, arch="sm_90a", name="own.cu", include_dirs=[tmp_path])
    assert "k" in mod.kernels


def test_cache_key_counts_the_wrappers_only_where_used(monkeypatch) -> None:
    from ptxlab import debug
    from ptxlab.toolchain.compiler import _key_options, build_options

    opts = build_options("sm_100a", False, (), (), debug.current())
    assert opts[-1] == f"-I{stdshim.shim_dir()}"
    plain, shim = _key_options(opts, False, "__global__ void k() {}")
    assert shim == "" and not any("stdshim" in o for o in plain)
    _, shim = _key_options(opts, False, "#include <cstdint>\n__global__ void k() {}")
    assert shim == stdshim.shim_digest()


def test_wrappers_without_a_writable_cache_dir(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("PTXLAB_CACHE", str(blocker / "cache"))          # cannot be created: a file is in the way
    d = stdshim.shim_dir()
    assert d.is_dir() and (d / "cstdint").read_text() == stdshim.SHIMS["cstdint"]
