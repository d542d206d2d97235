"""Barrier divergence (ptxlab/emu/checks/synccheck.py): __syncthreads() reached by only part of a CTA."""
import warnings

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.checks.sitewarn import EmuWarning
from ptxlab.errors import EmuError

EARLY_EXIT = r'''
extern "C" __global__ void early(const unsigned* x, unsigned* y, unsigned n) {
  __shared__ unsigned s[256];
  unsigned t = threadIdx.x;
  if (t >= n) return;                      // CTA-divergent exit before the barrier
  s[t] = x[t] * 3u + 1u;
  __syncthreads();
  y[t] = s[n - 1u - t];
}'''

DIVERGENT = r'''
extern "C" __global__ void divg(const unsigned* x, unsigned* y, unsigned split) {
  __shared__ unsigned s[128];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  if (t < split) { asm volatile("bar.sync 0;" ::: "memory"); y[t] = s[127u - t] + 1u; }
  else           { asm volatile("bar.sync 0;" ::: "memory"); y[t] = s[127u - t] + 2u; }
}'''

PARTIAL = r'''
extern "C" __global__ void part(unsigned* y) {
  unsigned t = threadIdx.x;
  if (t < 64u) { __syncthreads(); y[t] = 1u; }
  else { asm volatile("bar.sync 1, 96;" ::: "memory"); y[t] = 2u; }
}'''

UNIFORM = r'''
extern "C" __global__ void uni(const unsigned* x, unsigned* y) {
  __shared__ unsigned s[128];
  unsigned t = threadIdx.x;
  s[t] = x[t] + 5u;
  __syncthreads();
  y[t] = s[127u - t];
}'''


def _launch_early(dev, mod, rng, n):
    xs = rng.integers(1, 2**31, 256, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * 256)
    dev.memset(y, 0xFF)
    dev.launch(mod, "early", grid=(1, 1, 1), block=(256, 1, 1), args=[x, y, np.uint32(n)])
    return xs, dev.to_host(y, np.uint32)


def test_early_exit_before_syncthreads_warns_and_completes_like_hardware(rng):
    mod = ptxlab.compile(EARLY_EXIT, arch="sm_90a", name="early.cu", options=("-lineinfo",))
    dev = ptxlab.open_device("emu", strict=False)
    n = int(rng.integers(70, 150))
    with pytest.warns(EmuWarning) as rec:
        xs, out = _launch_early(dev, mod, rng, n)
    ref = xs[:n] * np.uint32(3) + np.uint32(1)
    assert (out[:n] == ref[::-1]).all() and (out[n:] == 0xFFFFFFFF).all()
    msg = str(rec[0].message)
    assert "synccheck" in msg and "barrier 0" in msg and "bar.sync" in msg and "early.cu:7" in msg
    assert f"arrived: warps 0-{(n - 1) // 32}" in msg and f"({n} threads)" in msg
    assert f"({256 - n} threads) exited at PTX line" in msg and "ret" in msg
    assert "9.7.13.1" in msg and "PTXLAB_EMU_STRICT" in msg
    assert dev.emu_warnings and dev.emu_warnings[0] == msg


def test_early_exit_is_an_error_in_strict_mode(rng, monkeypatch):
    mod = ptxlab.compile(EARLY_EXIT, arch="sm_90a", name="early.cu", options=("-lineinfo",))
    dev = ptxlab.open_device("emu", strict=True)
    with pytest.raises(EmuError) as ei:
        _launch_early(dev, mod, rng, 100)
    msg = str(ei.value)
    assert "completed in block (0, 0, 0) without 156 threads that exited" in msg and "strict" in msg
    monkeypatch.setenv("PTXLAB_EMU_STRICT", "1")
    with pytest.raises(EmuError, match="without 56 threads that exited"):
        _launch_early(ptxlab.open_device("emu"), mod, rng, 200)


def test_whole_cta_reaching_the_barrier_is_silent(rng):
    mod = ptxlab.compile(EARLY_EXIT, arch="sm_90a", name="early.cu")
    dev = ptxlab.open_device("emu", strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmuWarning)
        xs, out = _launch_early(dev, mod, rng, 256)     # nobody exits early
    assert (out == (xs * np.uint32(3) + np.uint32(1))[::-1]).all()
    mod2 = ptxlab.compile(UNIFORM, arch="sm_90a", name="uni.cu")
    xs = rng.integers(1, 2**31, 128, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * 128)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmuWarning)
        dev.launch(mod2, "uni", grid=(3, 1, 1), block=(128, 1, 1), args=[x, y])
    assert (dev.to_host(y, np.uint32) == (xs + np.uint32(5))[::-1]).all() and not dev.emu_warnings


def _launch_divg(dev, mod, rng, split):
    xs = rng.integers(1, 2**31, 128, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * 128)
    dev.memset(y, 0xFF)
    dev.launch(mod, "divg", grid=(1, 1, 1), block=(128, 1, 1), args=[x, y, np.uint32(split)])
    ref = xs[::-1] + np.where(np.arange(128) < split, 1, 2).astype(np.uint32)
    return ref, dev.to_host(y, np.uint32)


def _check_sides(msg, split):
    assert "divergent barrier" in msg and "2 different barrier instructions" in msg
    lo = f"warps 0-{split // 32 - 1}" if split > 32 else "warp 0"
    assert f"{lo} ({split} threads) at PTX line" in msg
    assert f"({128 - split} threads) at PTX line" in msg and "divg.cu:6" in msg and "divg.cu:7" in msg


def test_divergent_aligned_barrier_between_warps_completes_like_h100_with_a_warning(rng):
    """H100 (tools/probes/barrier_divergence_probe.py div_warps_aligned): whole warps at two different bar.sync 0
    complete the barrier, and it orders the shared-memory exchange; the emulator does the same and warns."""
    mod = ptxlab.compile(DIVERGENT, arch="sm_90a", name="divg.cu", options=("-lineinfo",))
    dev = ptxlab.open_device("emu", strict=False)
    split = int(rng.integers(1, 4)) * 32
    with pytest.warns(EmuWarning) as rec:
        ref, out = _launch_divg(dev, mod, rng, split)
    assert (out == ref).all()
    msg = str(rec[0].message)
    _check_sides(msg, split)
    assert "H100" in msg or "PTXLAB_EMU_STRICT" in msg
    assert "compute-sanitizer" in msg and "9.7.13.1" in msg and dev.emu_warnings == [msg]
    # split = 0 or 128: every thread takes one branch, no divergence, no warning, correct result
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmuWarning)
        ref, out = _launch_divg(ptxlab.open_device("emu", strict=True), mod, rng, 128)
    assert (out == ref).all()


def test_divergent_aligned_barrier_between_warps_is_an_error_in_strict_mode(rng):
    mod = ptxlab.compile(DIVERGENT, arch="sm_90a", name="divg.cu", options=("-lineinfo",))
    split = int(rng.integers(1, 4)) * 32
    with pytest.raises(EmuError) as ei:
        _launch_divg(ptxlab.open_device("emu", strict=True), mod, rng, split)
    msg = str(ei.value)
    _check_sides(msg, split)
    assert "strict mode" in msg and "H100" in msg and "compute-sanitizer" in msg


def test_divergent_aligned_barrier_inside_a_warp_is_an_error_because_the_h100_hangs(rng):
    """H100 (div_lanes_aligned): the lanes of one warp at two different bar.sync instructions never complete."""
    mod = ptxlab.compile(DIVERGENT, arch="sm_90a", name="divg.cu", options=("-lineinfo",))
    split = int(rng.integers(0, 4)) * 32 + int(rng.integers(1, 32))
    with pytest.raises(EmuError) as ei:
        _launch_divg(ptxlab.open_device("emu", strict=False), mod, rng, split)
    msg = str(ei.value)
    assert "divergent barrier" in msg and f"({split} threads) at PTX line" in msg
    assert f"the lanes of warp {split // 32} are split" in msg
    assert "H100 this hangs" in msg and "div_lanes_aligned" in msg


NONALIGNED = DIVERGENT.replace("bar.sync 0;", "barrier.sync 0;").replace("divg(", "divn(")


def test_divergent_non_aligned_barrier_completes_silently(rng):
    """barrier.sync (no .aligned) at different instructions is legal (PTX ISA 9.7.13.1) and completes on the H100,
    split between warps or inside a warp (div_warps_nonaligned, div_lanes_nonaligned)."""
    mod = ptxlab.compile(NONALIGNED, arch="sm_90a", name="divn.cu")
    dev = ptxlab.open_device("emu", strict=True)
    for split in (32 * int(rng.integers(1, 4)), int(rng.integers(1, 128))):
        xs = rng.integers(1, 2**31, 128, dtype=np.uint32)
        x, y = dev.to_device(xs), dev.empty(4 * 128)
        dev.memset(y, 0xFF)
        with warnings.catch_warnings():
            warnings.simplefilter("error", EmuWarning)
            dev.launch(mod, "divn", grid=(2, 1, 1), block=(128, 1, 1), args=[x, y, np.uint32(split)])
        ref = xs[::-1] + np.where(np.arange(128) < split, 1, 2).astype(np.uint32)
        assert (dev.to_host(y, np.uint32) == ref).all()


def test_partial_barrier_deadlock_names_the_missing_warps():
    mod = ptxlab.compile(PARTIAL, arch="sm_90a", name="part.cu", options=("-lineinfo",))
    dev = ptxlab.open_device("emu")
    y = dev.empty(4 * 128)
    with pytest.raises(EmuError) as ei:
        dev.launch(mod, "part", grid=(1, 1, 1), block=(128, 1, 1), args=[y])
    msg = str(ei.value)
    assert "deadlock" in msg and "barrier divergence (synccheck): block (0, 0, 0) barrier 0" in msg
    assert "warps 0-1 (64 threads) wait at PTX line" in msg and "part.cu:4" in msg
    assert "warps 2-3 (64 threads) of the CTA never arrive there" in msg


COUNTED = r'''
extern "C" __global__ void counted(const unsigned* x, unsigned* y, unsigned nthreads) {
  __shared__ unsigned s[128];
  unsigned t = threadIdx.x;
  if (t >= nthreads) return;
  s[t] = x[t] ^ 0x5A5A5A5Au;
  asm volatile("bar.sync 1, 64;" ::: "memory");
  y[t] = s[t ^ 32u] + t;
}'''


def _launch_counted(dev, mod, rng, nthreads):
    xs = rng.integers(1, 2**31, 128, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * 128)
    dev.memset(y, 0xFF)
    dev.launch(mod, "counted", grid=(1, 1, 1), block=(128, 1, 1), args=[x, y, np.uint32(nthreads)])
    t = np.arange(128, dtype=np.uint32)
    ref = np.where(t < nthreads, (xs[t ^ 32] ^ np.uint32(0x5A5A5A5A)) + t, np.uint32(0xFFFFFFFF))
    return ref, dev.to_host(y, np.uint32)


def test_counted_barrier_with_exactly_its_count_is_silent(rng):
    mod = ptxlab.compile(COUNTED, arch="sm_90a", name="counted.cu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmuWarning)
        ref, out = _launch_counted(ptxlab.open_device("emu", strict=True), mod, rng, 64)
    assert (out == ref).all()


def test_counted_barrier_reached_by_more_threads_warns_and_strict_raises(rng):
    """H100: one bar.sync 1, 64 reached by 128 threads completes (count_more_once); a loop of them hung
    (count_more). The emulator releases them, warns; strict raises."""
    mod = ptxlab.compile(COUNTED, arch="sm_90a", name="counted.cu", options=("-lineinfo",))
    dev = ptxlab.open_device("emu", strict=False)
    with pytest.warns(EmuWarning) as rec:
        ref, out = _launch_counted(dev, mod, rng, 128)
    assert (out == ref).all()
    msg = str(rec[0].message)
    assert "barrier 1 with thread count 64" in msg and "with 128 arrivals, more than its count" in msg
    assert "counted.cu:7" in msg and "count_more" in msg and "H100" in msg
    with pytest.raises(EmuError, match="with 128 arrivals, more than its count[\\s\\S]*strict mode"):
        _launch_counted(ptxlab.open_device("emu", strict=True), mod, rng, 128)


def test_counted_barrier_reached_by_fewer_threads_deadlocks_naming_the_count(rng):
    """Exited threads do not count toward an explicit count: the H100 hangs (count_fewer_exit), the emulator
    reports a deadlock with the barrier's count and arrivals."""
    mod = ptxlab.compile(COUNTED, arch="sm_90a", name="counted.cu", options=("-lineinfo",))
    with pytest.raises(EmuError) as ei:
        _launch_counted(ptxlab.open_device("emu"), mod, rng, 32)
    msg = str(ei.value)
    assert "deadlock" in msg and "block (0, 0, 0) barrier 1 expects 64 threads, 32 arrived" in msg
    assert "warp 0 (32 threads) wait at PTX line" in msg and "counted.cu:7" in msg and "count_fewer_exit" in msg
