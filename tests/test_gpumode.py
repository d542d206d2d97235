"""gpu-mode generators, references and check_close (gpu-mode/reference-kernels @ f83cb92)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from ptxlab import gpumode as gm
from ptxlab.scales import permuted_bytes, permuted_to_ref


@pytest.fixture
def seed() -> int:
    s = int.from_bytes(os.urandom(4), "little")
    print(f"generator seed = {s}")
    return s


def e2m1(c: int) -> float:
    """Bit formula, independent of ptxlab.numerics."""
    e, m = (c >> 1) & 3, c & 1
    mag = m * 0.5 if e == 0 else (1 + m / 2) * 2.0 ** (e - 1)
    return -mag if c & 8 else mag


def ue4m3(c: int) -> float:
    assert c < 0x7F
    e, m = c >> 3, c & 7
    return m / 8 * 2.0**-6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)


def elem(x: np.ndarray, r: int, k: int, l: int) -> float:
    byte = int(x[r, k // 2, l])
    return e2m1(byte & 15 if k % 2 == 0 else byte >> 4)


def slow_dot(p: gm.NvFp4Problem, m: int, n: int, l: int) -> float:
    total = 0.0
    for k in range(p.k):
        total += (elem(p.a, m, k, l) * ue4m3(int(p.sfa[m, k // 16, l]))
                  * elem(p.b, n, k, l) * ue4m3(int(p.sfb[n, k // 16, l])))
    return total  # exact: dyadic terms of bounded size


def check_layout(p: gm.NvFp4Problem, nb: int) -> None:
    m, k, l = p.m, p.k, p.l
    rm, rk = -(-m // 128), -(-(k // 16) // 4)
    rn = -(-nb // 128)
    assert p.a.shape == (m, k // 2, l) and p.a.dtype == np.uint8
    assert p.a.strides == (k // 2, 1, m * k // 2)
    assert p.b.shape == (nb, k // 2, l) and p.b.strides == (k // 2, 1, nb * k // 2)
    assert p.sfa.shape == (m, k // 16, l) and p.sfa.strides == (k // 16, 1, m * k // 16)
    assert p.sfb.shape == (nb, k // 16, l) and p.sfb.strides == (k // 16, 1, nb * k // 16)
    assert p.sfa_permuted.shape == (32, 4, rm, 4, rk, l)
    assert p.sfa_permuted.strides == (16, 4, rk * 512, 1, 512, rm * rk * 512)
    assert p.sfb_permuted.shape == (32, 4, rn, 4, rk, l)
    assert p.c.shape == (m, p.n, l) and p.c.dtype == np.float16
    assert p.c.strides == (2 * p.n, 2, 2 * m * p.n)
    assert np.array_equal(permuted_to_ref(p.sfa_permuted, m, k // 16), p.sfa)
    assert np.array_equal(permuted_to_ref(p.sfb_permuted, nb, k // 16), p.sfb)


def test_gemv_generator(seed: int) -> None:
    p = gm.generate_gemv(m=200, k=320, l=2, seed=seed)  # M, K/16 not multiples of 128, 4: padding present
    assert (p.m, p.n, p.k, p.l) == (200, 1, 320, 2)
    check_layout(p, nb=128)
    for x in (p.a, p.b):
        assert set(np.unique(x).tolist()) == {0, 1, 2, 3}  # randint(0, 4): low nibble only
    for sf in (p.sfa, p.sfb, p.sfa_permuted, p.sfb_permuted):
        assert set(np.unique(sf).tolist()) == {0x00, 0x38, 0x40}  # UE4M3 of {0, 1, 2}
    # padding of the permuted tensor is random too (gpu-mode's rand_int_tensor), not zero
    mem = permuted_bytes(p.sfa_permuted)
    assert mem.size > p.sfa.size and np.count_nonzero(mem) > np.count_nonzero(p.sfa)
    q = gm.generate_gemv(m=200, k=320, l=2, seed=seed)
    for x, y in zip(p.as_tuple(), q.as_tuple()):
        assert np.array_equal(x, y)
    r = gm.generate_gemv(m=200, k=320, l=2, seed=seed + 1)
    assert not np.array_equal(p.a, r.a)


def test_gemm_generator(seed: int) -> None:
    p = gm.generate_gemm(m=128, n=136, k=512, l=1, seed=seed)
    check_layout(p, nb=136)
    assert len(np.unique(p.a)) == 256 and len(np.unique(p.b)) == 256  # int8 randint(-128, 128) bits
    for sf in (p.sfa, p.sfb):
        assert set(np.unique(sf).tolist()) == {0x00, 0x38, 0x40, 0x44}  # {0, 1, 2, 3}
    assert np.all(np.isfinite(p.c)) and np.std(p.c.astype(np.float64)) > 0.5


def test_reference_gemm_vs_loop(seed: int) -> None:
    p = gm.generate_gemm(m=5, n=3, k=96, l=2, seed=seed)
    p.c[...] = np.nan  # poison: the reference must not read c
    c = gm.reference_gemm(p)
    assert c.shape == (5, 3, 2) and c.dtype == np.float16
    for m in range(5):
        for n in range(3):
            for l in range(2):
                want = np.float16(slow_dot(p, m, n, l))
                assert c[m, n, l] == want, (m, n, l, c[m, n, l], want)


def test_reference_gemv_vs_loop(seed: int) -> None:
    p = gm.generate_gemv(m=6, k=128, l=2, seed=seed)
    p.b[1:] = 0xFF  # poison rows other than 0: they must not matter
    c = gm.reference_gemv(p)
    assert c.shape == (6, 1, 2)
    for m in range(6):
        for l in range(2):
            assert c[m, 0, l] == np.float16(slow_dot(p, m, 0, l))
    with pytest.raises(ValueError):
        gm.reference_gemv(gm.generate_gemm(m=4, n=2, k=64, l=1, seed=seed))


def test_check_close_semantics() -> None:
    ref = np.array([[1.0, 100.0], [np.nan, np.inf]], dtype=np.float16)
    assert gm.check_close(ref.copy(), ref) == []
    out = ref.copy()
    out[0, 1] = 100.0 + 0.0625  # |diff| 0.0625 <= 1e-3 + 1e-3 * 100: within tolerance
    assert gm.check_close(out, ref) == []
    hundred = np.full(3, 100.0, np.float16)
    assert gm.check_close(hundred + np.float16(0.125), hundred)[0] == "Number of mismatched elements: 3"  # > 0.101
    out[0, 0] = 1.0 + 2**-6  # 0.0156 > 0.002
    out[1, 0] = 3.0  # NaN mismatch
    out[1, 1] = -np.inf  # inf mismatch
    msgs = gm.check_close(out, ref)
    assert msgs[0] == "Number of mismatched elements: 3"
    assert msgs[1].startswith("ERROR AT (0, 0):") and len(msgs) == 4
    assert gm.check_close(out[:1], ref) == ["SIZE MISMATCH"]
    big = np.zeros(20, np.float16)
    msgs = gm.check_close(big + 1, big, max_print=5)
    assert msgs[-1] == "... and 15 more mismatched elements." and len(msgs) == 7


def test_task_lists() -> None:
    assert len(gm.GEMV_TESTS) == 10 and len(gm.GEMV_BENCHMARKS) == 3
    assert len(gm.GEMM_TESTS) == 10 and len(gm.GEMM_BENCHMARKS) == 3
    for t in gm.GEMV_TESTS + gm.GEMV_BENCHMARKS:
        assert set(t) == {"m", "k", "l", "seed"} and t["k"] % 64 == 0 and t["seed"] == 1111
    for t in gm.GEMM_TESTS + gm.GEMM_BENCHMARKS:
        assert set(t) == {"m", "n", "k", "l", "seed"} and t["k"] % 256 == 0 and t["l"] == 1
    assert {(t["m"], t["k"], t["l"]) for t in gm.GEMV_BENCHMARKS} == {(7168, 16384, 1), (4096, 7168, 8), (7168, 2048, 4)}
    with pytest.raises(ValueError):
        gm.generate_gemm(m=4, n=4, k=40, l=1, seed=0)


def test_torch_round_trip(seed: int) -> None:
    torch = pytest.importorskip("torch", reason="no torch: the optional extra .[torch] is not installed")
    for p in (gm.generate_gemv(m=130, k=128, l=2, seed=seed), gm.generate_gemm(m=64, n=40, k=256, l=2, seed=seed)):
        t = gm.to_torch(p)
        assert [x.dtype for x in t] == [torch.float4_e2m1fn_x2] * 2 + [torch.float8_e4m3fn] * 4 + [torch.float16]
        for x, y in zip(t, p.as_tuple()):
            assert tuple(x.shape) == y.shape
            assert tuple(s * x.element_size() for s in x.stride()) == y.strides
        assert torch.equal(t[2].float(), torch.from_numpy(np.vectorize(ue4m3)(p.sfa)).float())
        q = gm.from_torch(t)
        assert (q.m, q.n, q.k, q.l) == (p.m, p.n, p.k, p.l)
        for x, y in zip(q.as_tuple(), p.as_tuple()):
            assert np.array_equal(x, y) and x.strides == y.strides
