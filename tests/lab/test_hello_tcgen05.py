"""The "hello tcgen05" walkthrough (ptx_docs/hello_tcgen05.md) runs as documented: its descriptors are the ones
`lab.py desc encode` prints, the kernel's D equals A @ B.T exactly on fresh data, the pre-launch descriptor check
catches an LBO/SBO swap (which without the check gives silently wrong numbers), and a wrong N in the instruction
descriptor is reported naming the B operand and N."""
from __future__ import annotations

import contextlib
import io
import re
import sys

import numpy as np
import pytest

from ptxlab.desc import InstrDesc, SmemDesc
from ptxlab.desc.cli import main as desc_main
from ptxlab.desc.fields import DescError
from ptxlab.desc.layout import check_descriptor, layout_tile, read_tile
from ptxlab.errors import EmuError
from repo_root import REPO

sys.path.insert(0, str(REPO / "ptx_docs" / "hello_tcgen05"))
import hello_tcgen05 as H  # noqa: E402

DOC = (REPO / "ptx_docs" / "hello_tcgen05.md").read_text()


def _desc(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert desc_main(list(argv)) == 0
    return out.getvalue()


def test_descriptors_are_the_documented_lab_py_desc_encode_output():
    smem = _desc("encode", "smem", "--start", "0", "--lbo", "128", "--sbo", "256", "--swizzle", "none")
    idesc = _desc("encode", "idesc", "--kind", "f16", "--m", "128", "--n", "16", "--a", "F16", "--b", "F16", "--d", "F32")
    assert f"smem descriptor = {H.A_DESC:#018x}" in smem and H.B_DESC == H.A_DESC
    assert f"idesc = {H.IDESC:#010x}" in idesc
    assert f"{H.A_DESC:#018x}" in DOC and f"{H.IDESC:#010x}" in DOC


def test_hello_tcgen05_is_exact(rng, capsys):
    seed = int(rng.integers(0, 2**31))
    assert H.run(seed) == 0, capsys.readouterr().out
    assert "== A @ B.T exactly" in capsys.readouterr().out


def test_lbo_sbo_swap_is_caught_before_launch_and_is_silent_without_the_check(rng, capsys):
    seed = int(rng.integers(0, 2**31))
    assert H.run(seed, swap=True) == 2
    out = capsys.readouterr().out
    assert "refused before the launch: A descriptor" in out and "LBO and SBO are swapped" in out, out
    assert H.run(seed, swap=True, check=False) == 1          # the bug the check catches: wrong numbers, no error
    assert "MISMATCH" in capsys.readouterr().out


def test_wrong_n_in_the_instruction_descriptor_names_the_b_operand(rng):
    bad = InstrDesc.encode("f16", 128, 256, a_fmt="F16", b_fmt="F16", d_fmt="F32")
    with pytest.raises(EmuError) as ei:
        H.run(int(rng.integers(0, 2**31)), idesc=bad)
    msg = str(ei.value)
    assert msg.startswith("B operand: SMEM descriptor") and "N=256 from the instruction descriptor" in msg, msg
    assert "LBO 128 B, SBO 256 B" in msg and "hello_tcgen05.cu:" in msg


@pytest.mark.parametrize("bits,major,swizzle,lbo,sbo", [(16, "K", "NONE", 128, 256), (8, "K", "128B", 16, 1024),
                                                         (4, "K", "64B", 16, 512), (16, "MN", "NONE", 512, 128)])
def test_layout_is_the_inverse_of_the_address_walk(rng, bits, major, swizzle, lbo, sbo):
    rows, k = (64, 64 // (bits // 4)) if major == "K" else (32, 16)
    dt = {4: np.uint8, 8: np.uint8, 16: np.uint16}[bits]
    tile = rng.integers(1, 16 if bits == 4 else 2 ** bits, (rows, k)).astype(dt)
    desc = SmemDesc.encode(start_address=0x400, lbo=lbo, sbo=sbo, swizzle=swizzle)
    start, image = layout_tile(tile, desc, major, bits)
    assert start == 0x400
    assert np.array_equal(read_tile(image, start, desc, rows, k, major, bits), tile)
    check_descriptor(desc, tile, image, start, major, bits)
    wrong = SmemDesc.encode(start_address=0x400, lbo=lbo, sbo=sbo + 16, swizzle=swizzle)
    with pytest.raises(DescError, match=r"does not describe the intended"):
        check_descriptor(wrong, tile, image, start, major, bits)
