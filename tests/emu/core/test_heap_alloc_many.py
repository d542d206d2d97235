"""``GlobalHeap.alloc_many`` (a module's ``.global`` variables in one step) must leave the heap exactly as the
sequential ``alloc`` + ``write_bytes`` calls do: addresses, bytes, written flags, ``full`` flags, top, array size."""
from __future__ import annotations

import numpy as np
import pytest

from ptxlab.emu.core.memory import GlobalHeap


def _items(rng, n):
    out = []
    for k in range(n):
        size = int(rng.choice([0, 1, 3, 8, 200, 1000, 5000]))
        init = rng.integers(0, 256, size, dtype=np.uint8).tobytes() if rng.random() < 0.7 else bytes(size)
        out.append((max(size, 1), f"v{k}", init))
    return out


def _state(h: GlobalHeap):
    return (h.buf.size, h.top, list(h._starts), list(h._ends), [(a.start, a.size, a.label, a.serial, a.full)
                                                               for a in h._items], h.buf.tobytes(),
            None if h.written is None else h.written.tobytes())


def _heap(track, gap):
    h = GlobalHeap(capacity=4096)
    if track:
        h.track_writes()
    ptrs = [h.alloc(n) for n in (300, 5000, 64)]
    if gap:
        h.free(ptrs[1])                  # a freed gap that later requests may take
    return h


@pytest.mark.parametrize("track", [False, True])
@pytest.mark.parametrize("gap", [False, True])
def test_alloc_many_is_the_sequential_calls(rng, track, gap):
    items = _items(rng, 300)
    seq, batch = _heap(track, gap), _heap(track, gap)
    want = []
    for n, label, init in items:
        p = seq.alloc(n, label)
        seq.write_bytes(p, np.frombuffer(init, dtype=np.uint8))
        want.append(p)
    got = batch.alloc_many(items)
    assert got == want
    assert _state(batch) == _state(seq)
