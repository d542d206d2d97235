"""mma.sync .f64 NaN results (ptxlab/emu/hw/warp_mma_arith.py) against what the H100 corpus showed on 2026-11-27
(tests/fidelity/isa/run_h100.sh, entries mma_sync_f64 and mma_sync_f64_specials): a NaN the products or sums create
-> 0xFFF8000000000000; a 0x7FF8000000000000 operand -> 0x7FF8000000000000; both in one dot product -> the H100's sign
depends on an accumulation order that is not modelled, so the emulator refuses."""
import numpy as np
import pytest

from ptxlab.emu.hw import warp_mma_arith as W

INF, ZERO, QNAN = 0x7FF0000000000000, 0, 0x7FF8000000000000


def _rand(rng, shape):
    return (rng.standard_normal(shape) * 4 + 1e-3).view(np.uint64)


@pytest.mark.parametrize("K", [4, 8, 16])
def test_created_and_propagated_nans(K, rng):
    a, b, c = _rand(rng, (16, K)), _rand(rng, (K, 8)), _rand(rng, (16, 8))
    a[0, 1], b[1, 0] = INF, ZERO                       # row 0 x col 0: Inf x 0
    a[1, 2] = QNAN                                     # row 1: a NaN operand in every column
    c[2, 3] = INF                                      # row 2 x col 3: Inf - Inf
    a[2, 0], b[0, 3] = 0xFFF0000000000000, 0x3FF0000000000000
    d = W.mma_f64(a, b, c)
    assert int(d[0, 0]) == W.F64_NAN_NEW == 0xFFF8000000000000
    assert int(d[2, 3]) == W.F64_NAN_NEW
    assert all(int(x) == W.F64_NAN_IN == QNAN for x in d[1])
    finite = np.ones((16, 8), bool)
    finite[0, 0] = finite[2, 3] = False
    finite[1] = False
    assert not np.isnan(d.view(np.float64)[finite]).any()


def test_both_in_one_dot_product_is_refused(rng):
    a, b, c = _rand(rng, (16, 4)), _rand(rng, (4, 8)), _rand(rng, (16, 8))
    a[5, 0], b[0, 6] = INF, ZERO
    a[5, 3] = QNAN
    with pytest.raises(W.ModelSilent, match="both a NaN operand and an Inf x 0"):
        W.mma_f64(a, b, c)
