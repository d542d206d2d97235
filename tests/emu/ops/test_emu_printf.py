"""Device printf (vprintf) and assert (__assertfail) on the emulator."""
import numpy as np
import pytest

import ptxlab
from ptxlab.emu.ops.printf import format_printf
from ptxlab.errors import EmuError

SRC = r'''
extern "C" __global__ void pr(const int* x, int n) {
  int v = x[threadIdx.x];
  if (threadIdx.x < n)
    printf("t=%d v=%d h=%x f=%.3f s=%s c=%c u=%llu\n", threadIdx.x, v, v, 0.5f * v, "ok", 65 + threadIdx.x,
           (unsigned long long)v * 3ull);
  assert(v != 12345);
}'''


@pytest.fixture(scope="module")
def mod():
    return ptxlab.compile(SRC, arch="sm_90a", name="pr.cu")


def test_printf_formats_each_thread_in_order(mod, rng, capsys):
    dev = ptxlab.open_device("emu")
    x = rng.integers(1, 10000, 32, dtype=np.int32)
    n = int(rng.integers(3, 9))
    dev.launch(mod, "pr", grid=1, block=32, args=[dev.to_device(x), np.int32(n)])
    lines = capsys.readouterr().out.splitlines()
    want = [f"t={t} v={int(x[t])} h={int(x[t]):x} f={0.5 * float(x[t]):.3f} s=ok c={chr(65 + t)} u={3 * int(x[t])}"
            for t in range(n)]
    assert lines == want


def test_assert_failure_is_reported_with_message_and_location(mod, rng):
    dev = ptxlab.open_device("emu")
    x = rng.integers(1, 10000, 32, dtype=np.int32)
    bad = int(rng.integers(0, 32))
    x[bad] = 12345
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "pr", grid=1, block=32, args=[dev.to_device(x), np.int32(0)])
    msg = str(ei.value)
    assert "device-side assert failed: v != 12345" in msg and "pr.cu:" in msg
    assert f"thread : ({bad}, 0, 0)" in msg


def test_format_printf_packing_rules():
    import struct
    raw = struct.pack("<i4xdQ", -7, 2.25, 0xDEADBEEF)   # int at 0, double aligned at 8, u64 at 16
    assert format_printf("%d %5.2f %llx|%%", raw, str) == "-7  2.25 deadbeef|%"
