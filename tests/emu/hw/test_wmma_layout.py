"""The WMMA fragment layouts the emulator models (ptxlab/emu/hw/wmma.py ``measured``) are the H100's, decoded from the
probe ``wmma_layout`` (tests/fidelity/isa/data/README.md); where a WMMA fragment is the mma.sync one of PTX ISA
9.7.14.5 (one 16 x 8 block, or two side by side), the H100 uses exactly the ISA's mma.sync fragment layout."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptxlab.emu.hw import wmma as fw

DATA = Path(__file__).resolve().parents[2] / "fidelity" / "isa" / "data" / "h100_20261128_wmma_layout.npz"
LANE = np.arange(32)[:, None]
G, T = LANE >> 2, LANE & 3                  # groupID, threadID_in_group (PTX ISA 9.7.14.5)


def _mma_sync(kind: str, i: np.ndarray) -> tuple:
    """(row, col) of element i of the mma.sync fragment (PTX ISA 9.7.14.5.8 m16n8k16 .f16 / .bf16 and .s8, 9.7.14.5.7
    m16n8k8 .tf32, 9.7.14.5.6 m8n8k4 .f64; C of m16n8)."""
    return {"a16": (G + 8 * ((i >> 1) & 1), 2 * T + (i & 1) + 8 * (i >> 2)),
            "b16": (2 * T + (i & 1) + 8 * (i >> 1), G + 0 * i),
            "a8": (G + 8 * (i >> 2), 4 * T + (i & 3)),
            "b8": (4 * T + i, G + 0 * i),
            "a32": (G + 8 * (i & 1), T + 4 * (i >> 1)),
            "b32": (T + 4 * i, G + 0 * i),
            "c": (G + 8 * (i >> 1), 2 * T + (i & 1)),
            "a64": (G + 0 * i, T + 0 * i),
            "b64": (T + 0 * i, G + 0 * i),
            "c64": (G + 0 * i, 2 * T + i)}[kind]


# WMMA fragment -> (mma.sync fragment, its elements per 16 x 8 block, blocks side by side along N, copies)
COINCIDE = {("a", "f16", "m16n16k16"): ("a16", 8, 1, 2), ("b", "f16", "m16n16k16"): ("b16", 4, 2, 2),
            ("a", "bf16", "m16n16k16"): ("a16", 8, 1, 1), ("b", "bf16", "m16n16k16"): ("b16", 4, 2, 1),
            ("a", "s8", "m16n16k16"): ("a8", 8, 1, 1), ("b", "s8", "m16n16k16"): ("b8", 4, 2, 1),
            ("a", "tf32", "m16n16k8"): ("a32", 4, 1, 1), ("b", "tf32", "m16n16k8"): ("b32", 2, 2, 1),
            ("a", "f64", "m8n8k4"): ("a64", 1, 1, 1), ("b", "f64", "m8n8k4"): ("b64", 1, 1, 1),
            ("c", "f64", "m8n8k4"): ("c64", 2, 1, 1),
            **{("c", t, s): ("c", 4, 2, 1) for t in ("f32", "f16", "s32") for s in ("m16n16k16", "m16n16k8")
               if (t, s) != ("f16", "m16n16k8") and (t, s) != ("s32", "m16n16k8")}}


def test_the_emulator_holds_the_vendored_h100_layouts():
    data = np.load(DATA)
    assert len(data.files) == 33
    for key in data.files:
        m, t, s = key.split("_")
        fr = fw.fragment(m, s, t)
        np.testing.assert_array_equal(fw.measured(fr), data[key].astype(np.int64), err_msg=key)
        r, c = fw.element_index(fr)
        assert np.array_equal(r * fr.cols + c, data[key]) and np.bincount(data[key].ravel()).min() >= 1
    assert fw.measured(fw.fragment("a", "m16n16k16", "u8")) is None        # not measured: stays refused


@pytest.mark.parametrize("frag", sorted(COINCIDE))
def test_layout_is_the_mma_sync_fragment(frag):
    m, t, s = frag
    kind, per, blocks, copies = COINCIDE[frag]
    fr = fw.fragment(m, s, t)
    i = np.arange(fr.n)[None, :] % (per * blocks)
    r, c = _mma_sync(kind, i % per)
    c = c + 8 * (i // per)                   # the second 16 x 8 block sits 8 columns to the right
    assert fr.n == per * blocks * copies
    flat = np.load(DATA)["_".join(frag)].astype(np.int64)
    np.testing.assert_array_equal(flat, np.broadcast_to(r * fr.cols + c, flat.shape))
