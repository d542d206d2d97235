"""cp.reduce.async.bulk .add element rules against the H100 corpus run of 2026-11-27 (tests/fidelity/isa/run_h100.sh,
entry bulk_reduce): .add.f32 keeps subnormals (0x800002ca + 0 -> 0x800002ca, where the ISA's note would flush), .add.f64
returns 0x7ff8000000000000 for a 0x7ff8... operand, and refuses the NaN cases nobody measured."""
import numpy as np
import pytest

from ptxlab.errors import EmuError
from ptxlab.emu.ops.bulk_reduce import reduce_elems


def test_f32_add_keeps_subnormals(rng):
    sub = (rng.integers(1, 0x7FFFFF, 64, dtype=np.uint32) | np.uint32(0x80000000) * rng.integers(0, 2, 64,
                                                                                                  dtype=np.uint32))
    zero = np.zeros(64, np.uint32)
    assert (reduce_elems("add", "f32", sub, zero) == sub).all()          # the H100's 0x800002ca + 0 case, generalised
    a, b = sub[:32], sub[32:]
    want = (a.view(np.float32) + b.view(np.float32)).view(np.uint32)      # IEEE sum of two subnormals, no flush
    assert (reduce_elems("add", "f32", a, b) == want).all()


def test_f64_add_nan_rules(rng):
    q = np.uint64(0x7FF8000000000000)
    x = rng.standard_normal(16).view(np.uint64)
    cur = x.copy()
    cur[::3] = q
    r = reduce_elems("add", "f64", cur, x[::-1].copy())
    assert (r[::3] == q).all()
    assert not np.isnan(np.delete(r, np.s_[::3]).view(np.float64)).any()
    inf, ninf = np.uint64(0x7FF0000000000000), np.uint64(0xFFF0000000000000)
    with pytest.raises(EmuError, match="not implemented: cp.reduce.async.bulk .add.f64"):
        reduce_elems("add", "f64", np.array([inf], np.uint64), np.array([ninf], np.uint64))     # created NaN
    with pytest.raises(EmuError, match="not implemented"):
        reduce_elems("add", "f64", np.array([0x7FF4000000000000], np.uint64), x[:1].copy())      # other payload
