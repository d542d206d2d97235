"""speed.py's rescaling of a corpus GEMM (benchmarks/timing_corpus/speed.py; issue 21 item 6 times a 4096^3 one)."""
from __future__ import annotations

import sys

import pytest
from repo_root import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from timing_corpus import manifest, problems, speed  # noqa: E402


@pytest.mark.parametrize("name", ["leetcuda-sgemm/sgemm_t_8x8_sliced_k_f32x4_bcf_dbuf_kernel", "yzhai-sgemm/mysgemm_v7",
                                  "cudasamples-misc/MatrixMulCUDA<16>"])
def test_rescaled_gemm_covers_the_bigger_problem(name) -> None:
    k = manifest.BY_NAME[name]
    big = speed.rescaled(k, 4 * manifest.SIZE)
    p = big.params
    assert (p["M"], p["N"], p["K"]) == (4096, 4096, 4096)
    assert {n: v for n, v in p.items() if n not in "MNK"} == {n: v for n, v in k.params.items() if n not in "MNK"}
    # the grid covers the output exactly as at the manifest's size: 16x the CTAs, the same block
    assert big.block == k.block and big.grid[2] == k.grid[2] == 1
    assert big.grid[0] * big.grid[1] == 16 * k.grid[0] * k.grid[1]
    assert problems.make(big.problem[0], **p).scalars["lda"] == 4096


def test_rescaled_refuses_what_it_cannot_scale() -> None:
    with pytest.raises(ValueError, match="gemm-family"):
        speed.rescaled(manifest.BY_NAME["liu-reduce/reduce0"], 4096)
    with pytest.raises(ValueError, match="multiple"):
        speed.rescaled(manifest.BY_NAME["yzhai-sgemm/mysgemm_v7"], 1500)
