"""4-bit operands of kind::f8f6f4 / mxf8f6f4 in the padded SMEM format (PTX 9.7.16.10.4.3, .b4x16_p64 units as TMA's
16U4_ALIGN16B writes them): 16 values packed low nibble first in the first 8 bytes of each 16-byte unit, the other
8 bytes ignored (ptx_docs/tcgen05.md; end to end: CUTLASS example 72c in tests/cutlass)."""
from __future__ import annotations

import numpy as np
import pytest

from ptxlab.emu.hw.tcgen05_mma import MmaError, operand_codes_from_bytes
from ptxlab.numerics import pack_fp4


@pytest.mark.parametrize("kind", ["f8f6f4", "mxf8f6f4"])
def test_padded_units_decode_low_nibble_first_and_ignore_the_gap(rng, kind):
    rows = int(rng.integers(1, 9))
    codes = rng.integers(0, 16, size=(rows, 32)).astype(np.uint8)
    units = np.empty((rows, 2, 16), np.uint8)
    units[..., :8] = pack_fp4(codes).reshape(rows, 2, 8)          # element 2i in the low nibble of byte i
    units[..., 8:] = rng.integers(0, 256, size=(rows, 2, 8))      # padding: whatever TMA left there
    got = operand_codes_from_bytes(units.reshape(rows, 32), "e2m1", kind)
    assert got.shape == (rows, 32) and np.array_equal(got, codes)


def test_packed_kinds_are_unchanged(rng):
    b = rng.integers(0, 256, size=(4, 32)).astype(np.uint8)
    got = operand_codes_from_bytes(b, "e2m1", "mxf4nvf4")
    assert got.shape == (4, 64)
    assert np.array_equal(got[:, 0::2], b & 0xF) and np.array_equal(got[:, 1::2], b >> 4)


def test_six_bit_padded_operands_are_still_refused(rng):
    with pytest.raises(MmaError, match="6-bit"):
        operand_codes_from_bytes(rng.integers(0, 256, size=(2, 32)).astype(np.uint8), "e2m3", "f8f6f4")
