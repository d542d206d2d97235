"""The default production GEMM, the cluster variant (ptxlab/kernels/nvfp4_gemm_cluster.cu,
ptxlab/production/gemm_cluster.py), on the emulator.

Fresh random data every run (the seed is in every failure message); c is poisoned (0xFF bytes = fp16 NaN) before the
launch. Checks:
  * exact: c == fp16(RNE) of the bit-exact tensor-core model ptxlab.mma.mma over the full K (every CTA chains its
    64-wide MMAs over the whole K, as the model does), bit for bit; on gpu-mode data also == reference_gemm (its sums
    are exact in fp32); on data with the full UE4M3 scale range (fp32 rounding inside the MMA chain) against the
    model only;
  * every tile width (BN 32/64/128/256), cluster size (1..16, the non-portable 16 included), the SFB-sharing cases
    (BN < 128 with the P = 128/BN tiles of one SF block in one cluster, and split over clusters), warm-up K blocks
    (0, fewer than K blocks, all of them), rings that wrap (2 stages), L > 1, M > 128;
  * split-K over the cluster (2, 4 and 8 splits, with and without multicast, uneven K splits): c == the split
    model (model_c_splitk: the fp32 partials added in split order), also on wide-scale data whose partials round;
  * SASS: multicast TMA loads, multicast commit, TMA stores, cluster barrier; the kernel is built from blocks only.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import ptxlab
from ptxlab import gpumode
from ptxlab.kernels import BLOCKS_DIR, read
from ptxlab.production import gemm as G
from ptxlab.production import gemm_cluster as GC
from ptxlab.production import plan_gemm as P
from ptxlab.scales import ref_to_permuted


def fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy % (2**63))


@pytest.fixture(scope="module")
def dev():
    d = ptxlab.open_device("emu")
    yield d
    d.close()


def wide_scales(p: gpumode.NvFp4Problem, seed: int) -> gpumode.NvFp4Problem:
    """The problem with UE4M3 scale codes 0..0x47 (subnormals and normals up to 3.75, every mantissa): the exact sums
    need more than fp32's 24 bits, so the MMA chain rounds (unlike gpu-mode data), and c stays far from fp16's max."""
    rng = np.random.default_rng(seed)
    for name in ("sfa", "sfb"):
        ref = rng.integers(0, 0x48, size=getattr(p, name).shape, dtype=np.uint8)
        setattr(p, name, ref)
        setattr(p, f"{name}_permuted", ref_to_permuted(ref))
    return p


def exact_sums(p: gpumode.NvFp4Problem) -> np.ndarray:
    """float64 sums (L, M, N) of the dequantised products (exact: each product has <= 12 significant bits)."""
    from ptxlab.numerics import decode_fp4x2, decode_ue4m3

    def deq(x, sf):
        v = decode_fp4x2(x.transpose(2, 0, 1)).astype(np.float64)
        return v * np.repeat(decode_ue4m3(sf.transpose(2, 0, 1)).astype(np.float64), 16, axis=2)

    return np.matmul(deq(p.a, p.sfa), deq(p.b, p.sfb).transpose(0, 2, 1))


CASES = [  # (m, n, k, l, config or None (the plan's), data)
    (128, 256, 256, 1, None, "gpumode"),                                       # the plan's config: 32 / 8, warm 1
    (128, 512, 1024, 1, {"bn": 64, "cluster": 4, "stages": 2, "warm": 2}, "gpumode"),   # ring wraps after warm-up
    (256, 256, 768, 2, {"bn": 32, "cluster": 2, "stages": 2, "warm": 0}, "gpumode"),    # SFB block over 2 clusters
    (128, 1024, 512, 1, {"bn": 64, "cluster": 16, "stages": 3, "warm": 2}, "gpumode"),  # non-portable 16-CTA cluster
    (128, 512, 512, 1, {"bn": 128, "cluster": 2, "stages": 2, "warm": 1}, "gpumode"),
    (256, 512, 512, 1, {"bn": 256, "cluster": 2, "stages": 2, "warm": 1}, "gpumode"),
    (128, 256, 768, 1, {"bn": 64, "cluster": 1, "stages": 2, "warm": 0}, "gpumode"),    # no cluster
    (128, 128, 512, 1, {"bn": 32, "cluster": 4, "stages": 2, "warm": 2}, "wide"),       # warm-up = every K block
    (128, 512, 7168, 1, None, "gpumode"),                         # the plan's split-K: BN 128, (1, 4, 4) clusters
    (128, 512, 1280, 2, {"bn": 128, "cluster": 2, "splits": 4, "stages": 2, "warm": 1}, "wide"),   # 5 K blocks over 4 splits
    (256, 256, 1024, 1, {"bn": 64, "cluster": 1, "splits": 2, "warm": 0}, "wide"),      # split-K, no multicast
    (256, 256, 1024, 1, {"bn": 64, "cluster": 2, "splits": 2, "warm": 1, "exchange": "barrier"}, "wide"),  # opt-in
    (128, 1024, 2048, 1, {"bn": 256, "cluster": 2, "splits": 8, "stages": 2, "warm": 2}, "gpumode"),  # 16-CTA (1, 2, 8)
]


@pytest.mark.parametrize("m,n,k,l,config,data", CASES,
                         ids=[f"{c[0]}x{c[1]}x{c[2]}x{c[3]}_{c[4] and '_'.join(f'{k}{v}' for k, v in c[4].items())}_"
                              f"{c[5]}" for c in CASES])
def test_cluster_exact_vs_model(dev, m, n, k, l, config, data) -> None:
    seed = fresh_seed()
    p = gpumode.generate_gemm(m, n, k, l, seed)
    if data == "wide":
        p = wide_scales(p, seed)
    rep: dict = {}
    c = G.nvfp4_gemm(dev, p, config=config, report=rep)
    want = {**P.choose_cluster_config(m, n, k, l, bn=(config or {}).get("bn"), splits=(config or {}).get("splits")),
            **(config or {})}
    assert (rep["bn"], rep["cluster_size"], rep["stages"], rep["splits"]) == (want["bn"], want["cluster"],
                                                                           want["stages"], want["splits"])
    assert rep["warm"] == (want["warm"] if want["cluster"] > 1 else 0)
    tag = f"seed={seed} shape=({m},{n},{k},{l}) config={config} data={data}"
    assert not np.isnan(c).any(), f"{tag}: outputs left poisoned"
    model = G.model_c_splitk(p, want["splits"]) if want["splits"] > 1 else G.model_c(p)
    bad = np.argwhere(c.view(np.uint16) != model.view(np.uint16))
    assert bad.size == 0, f"{tag}: {len(bad)} mismatches vs the tensor-core model, first at {tuple(bad[0])}"
    if data == "gpumode":
        assert (c.view(np.uint16) == gpumode.reference_gemm(p).view(np.uint16)).all(), tag
    else:  # the exact sums need more than fp32's 24 bits (so the MMA chain rounds), and nothing overflows fp16
        exact = exact_sums(p)
        assert (exact.astype(np.float32).astype(np.float64) != exact).any() and np.isfinite(model).all(), tag


def test_cluster_sass_has_multicast_and_tma_store() -> None:
    from ptxlab.toolchain.sass import require

    counts = require(GC.compile_cluster(64, 8, 4), ["UTMALDG.3D.MULTICAST", "UTMALDG.2D.MULTICAST", "UTMASTG",
                                                    "UTCBAR", "UTCCP", "UTCOMMA", "LDTM", "UCGABAR_ARV"])
    assert counts["UTCOMMA"] >= 4, counts
    single = require(GC.compile_cluster(64, 1, 4), ["UTMALDG", "UTMASTG", "UTCOMMA"])
    assert not [o for o in single if "MULTICAST" in o or o.startswith("UCGABAR")], "cluster 1 must not multicast"
    split = require(GC.compile_cluster(128, 4, 6, splits=2), ["UTMALDG.3D.MULTICAST", "UTMASTG", "UCGABAR_ARV",
                                                               "STG.E.128", "LDG.E.128.STRONG.GPU"])
    assert split["LDG.E.128.STRONG.GPU"] >= 16, split   # the peer's 64 columns of a row, loaded before any add


def test_cluster_kernel_built_from_blocks_only() -> None:
    src = read(P.CLUSTER_KERNEL_FILE)
    inc = re.findall(r'#include\s+"([^"]+)"', src)
    assert inc == [f"blocks/{b}" for b in GC.BLOCKS_USED]
    assert all((BLOCKS_DIR / b).exists() for b in GC.BLOCKS_USED)
    assert "asm" not in re.sub(r"//.*", "", src)


def test_cluster_refusals(dev) -> None:
    p = gpumode.generate_gemm(128, 256, 512, 1, fresh_seed())
    with pytest.raises(ValueError, match="split-K"):
        G.nvfp4_gemm(dev, p, splits=2)
    with pytest.raises(ValueError, match="cluster size"):
        G.nvfp4_gemm(dev, p, config={"bn": 64, "cluster": 8})          # 4 N tiles
    with pytest.raises(ValueError, match="this launch needs"):
        G.nvfp4_gemm(dev, p, config={"bn": 64, "cluster": 2}, module=GC.compile_cluster(64, 4, 8))
    with pytest.raises(ValueError, match="one round of the ring"):
        G.nvfp4_gemm(dev, p, config={"bn": 64, "cluster": 2, "stages": 2, "warm": 3})
    with pytest.raises(ValueError, match="config= applies"):
        G.nvfp4_gemm(dev, p, variant="1sm", config={"bn": 64})
    with pytest.raises(ValueError, match="splits=3 must be one of"):
        G.nvfp4_gemm(dev, p, config={"bn": 128, "cluster": 1, "splits": 3})
    with pytest.raises(ValueError, match="this launch needs"):
        G.nvfp4_gemm(dev, p, config={"bn": 128, "cluster": 1, "splits": 2}, module=GC.compile_cluster(128, 1, 6))


def test_cluster_bounded_wait_build(dev) -> None:
    """PTXLAB_WAIT_PROBES: a generous limit gives the exact result, a limit of 1 probe traps (hardware bring-up)."""
    seed = fresh_seed()
    p = gpumode.generate_gemm(128, 256, 512, 1, seed)
    cfg = {"bn": 64, "cluster": 2, "stages": 2, "warm": 1}
    c = G.nvfp4_gemm(dev, p, config=cfg, wait_probes=1 << 22)
    assert (c.view(np.uint16) == G.model_c(p).view(np.uint16)).all(), f"seed={seed}"
    with pytest.raises(ptxlab.PtxlabError):
        G.nvfp4_gemm(dev, p, config=cfg, wait_probes=1)
    # split-K's signalled exchange: its acquire.cluster wait is bounded too (blocks/mbarrier.cuh)
    split = {"bn": 64, "cluster": 1, "splits": 2, "warm": 0}
    c = G.nvfp4_gemm(dev, p, config=split, wait_probes=1 << 22)
    assert (c.view(np.uint16) == G.model_c_splitk(p, 2).view(np.uint16)).all(), f"seed={seed}"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,l", [(b["m"], b["n"], b["k"], b["l"]) for b in gpumode.GEMM_BENCHMARKS]
                         + [(256, 7168, 2048, 1), (128, 1536, 7168, 1)])
def test_cluster_maps_accepted_by_driver_and_equal_ptxlab(m, n, k, l):
    """On any GPU with tensor maps (an H100 too): the exported adapter's five cluster-kernel maps (A / SFA slices of
    the multicast box, B, SFB, and the fp16 output map with SWIZZLE_64B and 256-B L2 promotion) are accepted by the
    real driver's cuTensorMapEncodeTiled and equal the 128 bytes ptxlab's cuda device encodes for the same
    parameters."""
    from ptxlab.production import export

    import importlib.util
    import sys
    import tempfile
    from pathlib import Path

    dev = ptxlab.open_device("cuda")
    if dev.cc < (9, 0):
        pytest.skip(f"no GPU: tensor maps need compute capability >= 9.0, got {dev.cc}")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "submission_gemm_cluster_gpu.py"
        path.write_text(export.render("nvfp4_gemm"))
        spec = importlib.util.spec_from_file_location("submission_gemm_cluster_gpu", path)
        sub = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = sub
        spec.loader.exec_module(sub)
    plan = sub.launch_plan(m, n, k, l)
    prm = sub.cluster_tensor_map_params(m, n, k, l, plan["bn"], plan["cluster_size"])
    sizes = {"a": l * m * k // 2, "b": l * n * k // 2, "c": 2 * l * m * n}
    try:
        for name, p in prm.items():
            nbytes = sizes.get(name) or p["global_shape"][0] * p["global_shape"][1]
            buf = dev.empty(nbytes)
            try:
                raw = sub.encode_tensor_map(buf.ptr, p)  # raises if the driver rejects the map
                assert len(raw) == 128 and any(raw)
                assert dev.tensor_map(buf, **p).raw == raw, f"{name}: adapter map != ptxlab cuda map for {p}"
            finally:
                dev.free(buf)
    finally:
        dev.close()
