"""Decode the H100's WMMA fragment layout from the corpus probe ``wmma_layout`` (tests/corpus/kernels_wmma.py).

Usage: ``python tools/wmma_layout_decode.py OUT.npz RESULT.npz [RESULT.npz ...]`` (``isa_cuda.npz`` files of
tests/fidelity/isa/run_h100.sh runs with ``ENTRIES=wmma_layout``).  Every result must give the same words.  Writes,
per fragment ``<matrix>_<type>_<shape>`` (A and B: .row and .col loads must agree), a (32, n) uint16 array: the row-major flat index
(row * cols + col) of the matrix element that fragment element i of lane l holds (element i = bits [i * w, i * w + w)
of the fragment registers, PTX ISA 9.7.14.4.1), checking that every element is held and every word decodes.
"""
from __future__ import annotations

import sys

import numpy as np

from ptxlab.emu.hw import wmma as fw

PREFIX = "wmma_layout::out::"


def parse(name: str) -> tuple:
    """(matrix, layout, type, shape) of a probe kernel name (C is loaded .row)."""
    p = name.split("_")
    return (p[1], "row", p[2], p[3]) if p[1] == "c" else (p[1], p[2], p[3], p[4])


def decode(res) -> dict:
    out = {}
    for key in res:
        name = key[len(PREFIX):]
        if not key.startswith(PREFIX) or name.endswith("_hi"):
            continue
        m, _, t, s = parse(name)
        fr = fw.fragment(m, s, t)
        words = res[key].reshape(-1)
        v = words[:32 * fr.n].reshape(32, fr.n)
        if t in ("s8", "u8"):                       # 8-bit codes: low byte, then the high byte in the _hi matrix
            v = v | (res[key + "_hi"].reshape(-1)[:32 * fr.n].reshape(32, fr.n) << np.uint64(8))
        E = fr.rows * fr.cols
        if v.max() >= E or len(np.unique(v)) != E:
            raise ValueError(f"{name}: the words are not a fragment of all {E} indices")
        key = f"{m}_{t}_{s}"
        if key in out and not np.array_equal(out[key], v):
            raise ValueError(f"{name}: the layout depends on the memory layout (.row / .col)")
        out[key] = v.astype(np.uint16)
    return out


def main(argv: list) -> None:
    maps = [decode(np.load(p)) for p in argv[1:]]
    for other in maps[1:]:
        bad = [k for k in maps[0] if not np.array_equal(maps[0][k], other.get(k))]
        if bad or other.keys() != maps[0].keys():
            raise SystemExit(f"the results disagree: {bad[:4]}")
    np.savez_compressed(argv[0], **maps[0])
    print(f"{len(maps[0])} fragment maps from {len(maps)} results agree -> {argv[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
