"""Decode once (ptxlab/emu/engine/decode_cache.py): the parsed module comes from the disk cache the second time."""
from __future__ import annotations

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.engine import decode_cache

SRC = r'''
extern "C" __global__ void k(const unsigned* x, unsigned* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * 3u + %d;
}'''


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """Point the decode cache at an empty directory (modules are compiled first, through the usual cache)."""
    def use():
        monkeypatch.setenv("PTXLAB_CACHE", str(tmp_path))
        monkeypatch.setenv(decode_cache.ENV, "1")
        return tmp_path
    return use


def _run(mod, n=200):
    dev = ptxlab.open_device("emu")
    xs = np.random.default_rng().integers(1, 2**32, n, dtype=np.uint32)
    x, y = dev.to_device(xs), dev.empty(4 * n)
    dev.memset(y, 0xFF)
    dev.launch(mod, "k", grid=(2, 1, 1), block=(128, 1, 1), args=[x, y, np.uint32(n)])
    return xs, dev.to_host(y, np.uint32)


def test_second_load_comes_from_the_cache(cache, monkeypatch):
    salt = int(np.random.default_rng().integers(1, 1000))
    mod = ptxlab.compile(SRC % salt, arch="sm_90a", name="dc.cu")
    cache = cache()
    first = decode_cache.parse_cached(mod.ptx, "dc.cu")
    entries = list((cache / "emu-decode").rglob("*.pkl"))
    assert len(entries) == 1
    calls = []
    monkeypatch.setattr(decode_cache, "parse", lambda *a: calls.append(a))
    second = decode_cache.parse_cached(mod.ptx, "dc.cu")
    assert calls == [] and second == first and second is not first
    xs, out = _run(mod)                                  # a device loads through the cache too, and runs it
    assert np.array_equal(out, xs * np.uint32(3) + np.uint32(salt))
    assert calls == []


def test_key_covers_text_name_and_parser():
    a = decode_cache.key_of(".version 8.0", "a.ptx")
    assert a != decode_cache.key_of(".version 8.1", "a.ptx")
    assert a != decode_cache.key_of(".version 8.0", "b.ptx")
    old = decode_cache._digest
    try:
        decode_cache._digest = "0" * 64                    # stands for an edited parser
        assert decode_cache.key_of(".version 8.0", "a.ptx") != a
    finally:
        decode_cache._digest = old


def test_corrupt_entry_is_a_miss_and_is_rewritten(cache):
    mod = ptxlab.compile(SRC % 7, arch="sm_90a", name="dc.cu")
    cache = cache()
    first = decode_cache.parse_cached(mod.ptx, "dc.cu")
    (entry,) = (cache / "emu-decode").rglob("*.pkl")
    entry.write_bytes(b"\x80\x05 not a pickle")
    assert decode_cache.parse_cached(mod.ptx, "dc.cu") == first
    assert decode_cache.load(entry.stem) == first


def test_switch_off(cache, monkeypatch):
    mod = ptxlab.compile(SRC % 9, arch="sm_90a", name="dc.cu")
    cache = cache()
    monkeypatch.setenv(decode_cache.ENV, "0")
    decode_cache.parse_cached(mod.ptx, "dc.cu")
    assert not (cache / "emu-decode").exists()
