"""The 1sm variant of the fused NVFP4 GEMM for sm_100a (ptxlab/kernels/nvfp4_gemm_tcgen05.cu,
ptxlab/production/gemm.py, ``variant="1sm"``) on the emulator. The default (cluster) variant:
tests/production/test_production_gemm_cluster.py.

Fresh gpu-mode GEMM data every run (all e2m1 codes incl. negatives, SF 0..3; the seed is in every failure message);
c is poisoned (0xFF bytes = fp16 NaN) before the launch. Checks:
  * exact: c == fp16(RNE) of the bit-exact tensor-core model ptxlab.mma.mma over the full K (chained 64-wide
    MMAs, D of chunk i = C of chunk i+1, the kernel's order), bit for bit;
  * gpu-mode: c vs reference_gemm (float64 sums) with rtol = atol = 1e-3 (gpu-mode's check);
  * SASS of both tile configs has UTMALDG, UTCCP, UTCOMMA, UTCBAR, LDTM;
  * the kernel is built from the blocks only (its includes are exactly blocks/*.cuh, no inline asm of its own).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import ptxlab
from ptxlab import gpumode
from ptxlab.kernels import BLOCKS_DIR, read
from ptxlab.production import gemm as G


def fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy % (2**63))


@pytest.fixture(scope="module")
def dev():
    d = ptxlab.open_device("emu")
    yield d
    d.close()


# (m, n, k, l, bn, stages): task shape 128x256x256; ring wraps (K blocks > stages) for both tile widths; L > 1;
# several M and N tiles.
CASES = [
    (128, 256, 256, 1, 256, None),
    (128, 256, 1536, 1, 256, 4),
    (256, 384, 768, 2, 128, 2),
    (128, 512, 768, 3, 256, 2),
]


@pytest.mark.parametrize("m,n,k,l,bn,stages", CASES, ids=[f"{c[0]}x{c[1]}x{c[2]}x{c[3]}_bn{c[4]}_s{c[5]}" for c in CASES])
def test_gemm_exact_vs_model_and_reference(dev, m, n, k, l, bn, stages):
    seed = fresh_seed()
    p = gpumode.generate_gemm(m, n, k, l, seed)
    rep: dict = {}
    c = G.nvfp4_gemm(dev, p, bn=bn, stages=stages, report=rep, variant="1sm")
    tag = f"seed={seed} shape=({m},{n},{k},{l}) bn={bn} stages={rep.get('stages')}"
    assert c.shape == (m, n, l) and c.dtype == np.float16
    assert not np.isnan(c).any(), f"{tag}: {int(np.isnan(c).sum())} outputs still poisoned (NaN)"
    want = G.model_c(p)
    cb, wb = c.view(np.uint16), want.view(np.uint16)
    bad = np.argwhere(cb != wb)
    assert bad.size == 0, (f"{tag}: {len(bad)} outputs differ from the bit-exact model; first (m,n,l)={tuple(bad[0])}: "
                           f"got {c[tuple(bad[0])]!r} want {want[tuple(bad[0])]!r}")
    errs = gpumode.check_close(c, gpumode.reference_gemm(p), rtol=1e-3, atol=1e-3)
    assert not errs, f"{tag}: vs reference_gemm: " + "; ".join(errs)
    assert rep["grid"] == (m // 128, n // bn, l)
    assert rep["tx_bytes"] == G.stage_bytes(bn)


@pytest.mark.parametrize("bn", [128, 256])
def test_sass_has_tcgen05_and_tma(bn):
    from ptxlab.toolchain.sass import require

    counts = require(G.compile_gemm(bn), ["UTMALDG", "UTCCP", "UTCOMMA", "UTCBAR", "LDTM"])
    assert all(v > 0 for v in counts.values()), counts


def test_kernel_built_from_blocks_only():
    src = read(G.KERNEL_FILE)
    incs = re.findall(r'^\s*#\s*include\s+"([^"]+)"', src, re.M)
    assert sorted(incs) == sorted(f"blocks/{b}" for b in G.BLOCKS_USED)
    assert all((BLOCKS_DIR / b).exists() for b in G.BLOCKS_USED)
    code = re.sub(r"//[^\n]*", "", src)
    assert "asm" not in code, "the production GEMM must get all its PTX from the blocks"
    rep = G.blocks_report()
    assert sorted(rep) == sorted(f"blocks/{b}" for b in G.BLOCKS_USED)
    assert all(isinstance(v, list) for v in rep.values())


@pytest.mark.parametrize("m,n,k,bn", [(100, 256, 256, 256), (128, 200, 256, 128), (128, 256, 320, 256),
                                      (128, 384, 256, 256)])
def test_shape_checks(m, n, k, bn):
    with pytest.raises(ValueError):
        G.check_shape(m, n, k, 1, bn)


def test_choose_bn():
    assert G.choose_bn(7168) == 256 and G.choose_bn(384) == 128
    assert all(G.choose_bn(t["n"]) == 256 for t in gpumode.GEMM_TESTS)
    assert G.shared_bytes(256, 4) <= 232448


def test_bounded_wait_build(dev):
    """Hardware bring-up build (-DPTXLAB_WAIT_PROBES): same results with a generous probe limit; with a limit of one
    probe a wait that has to block gives up and the launch ends with a trap instead of hanging."""
    seed = fresh_seed()
    p = gpumode.generate_gemm(128, 256, 768, 1, seed)
    c = G.nvfp4_gemm(dev, p, stages=2, wait_probes=1 << 22, variant="1sm")
    assert not gpumode.check_close(c, gpumode.reference_gemm(p)), f"seed={seed}"
    assert (c.view(np.uint16) == G.model_c(p).view(np.uint16)).all(), f"seed={seed}"
    with pytest.raises(Exception, match="trap"):
        G.nvfp4_gemm(dev, p, stages=2, wait_probes=1, variant="1sm")


def test_refuses_device_without_sm100():
    from ptxlab.errors import DeviceUnavailable

    class NoSm100:
        def arch_supported(self, arch):
            return arch != "sm_100a"

        def describe(self):
            return "fake sm_90 device"

        def __getattr__(self, name):  # nothing else may be touched
            raise AssertionError(f"wrapper used dev.{name} on a device it should refuse")

    p = gpumode.generate_gemm(128, 256, 256, 1, fresh_seed())
    with pytest.raises(DeviceUnavailable, match="sm_100a"):
        G.nvfp4_gemm(NoSm100(), p)


# ------------------------------------------------------------------------------------------------ split-K (opt-in)
# (m, n, k, l, bn, splits): even splits (KB % S == 0) at BN 256 with L = 1 and 2, an uneven split (KB = 3, S = 2) and
# S = 3 of KB = 3 at BN 128 with several N tiles.
SPLIT_CASES = [
    (128, 256, 1024, 1, 256, 2),
    (128, 512, 2048, 2, 256, 4),
    (128, 256, 768, 2, 128, 2),
    (256, 256, 768, 1, 128, 3),
]


@pytest.mark.parametrize("m,n,k,l,bn,splits", SPLIT_CASES,
                         ids=[f"{c[0]}x{c[1]}x{c[2]}x{c[3]}_bn{c[4]}_k{c[5]}" for c in SPLIT_CASES])
def test_split_k_vs_reference_and_reset(dev, m, n, k, l, bn, splits):
    """-DGEMM_SPLITS build, ordered reduction (the default): c (poisoned by the wrapper) == the split-K model bit for
    bit (per-split tensor-core model, fp32 sums in split order; on gpu-mode data that is model_c and reference_gemm
    too); the counters are zero again after the launch, and a second launch on the same workspace gives the same c."""
    seed = fresh_seed()
    p = gpumode.generate_gemm(m, n, k, l, seed)
    tag = f"seed={seed} shape=({m},{n},{k},{l}) bn={bn} splits={splits}"
    ws = G.SplitKWorkspace(dev, m, n, l, bn, splits)
    try:
        rep: dict = {}
        c = G.nvfp4_gemm(dev, p, bn=bn, splits=splits, workspace=ws, report=rep, variant="1sm")
        assert rep["grid"] == (m // 128, n // bn, l * splits) and rep["splits"] == splits, tag
        assert rep["reduce"] == "ordered", tag
        assert rep["workspace_bytes"] == splits * l * m * n * 4 + 4 * l * (m // 128) * (n // bn), tag
        assert not np.isnan(c).any(), f"{tag}: {int(np.isnan(c).sum())} outputs still poisoned (NaN)"
        want = G.model_c_splitk(p, splits)
        assert (c.view(np.uint16) == want.view(np.uint16)).all(), f"{tag}: differs from the ordered split-K model"
        assert (c.view(np.uint16) == gpumode.reference_gemm(p).view(np.uint16)).all(), tag
        assert ws.is_zero(), f"{tag}: counters not reset by the launch"
        c2 = G.nvfp4_gemm(dev, p, bn=bn, splits=splits, workspace=ws, variant="1sm")
        assert (c2.view(np.uint16) == c.view(np.uint16)).all(), f"{tag}: second launch on the same workspace differs"
        assert ws.is_zero(), tag
    finally:
        ws.free()


@pytest.mark.parametrize("ctas_per_wave", [1, 2])
def test_split_k_cta_waves(dev, monkeypatch, ctas_per_wave):
    """The emulator runs the CTAs of a wave in lock step, so by default every split stores its partial before any
    split's counter atomic and "which CTA is last" is never tested. Here waves of 1 CTA (the splits of a tile run one
    after another) and of 2 CTAs make the last-arriver test, the counter wrap and the reset order matter; data with
    rounding fp32 sums (wide UE4M3 scales) make the order of the additions matter: the ordered reduction must still
    give the split-order model's bits, the atomic one (opt-in) stays within gpu-mode's tolerance of it."""
    from ptxlab.emu.engine import machine
    from ptxlab.scales import ref_to_permuted

    monkeypatch.setattr(machine, "WAVE_THREADS", ctas_per_wave * G.THREADS)
    for (m, n, k, l, bn, splits) in [(128, 256, 768, 2, 128, 3), (128, 256, 1024, 1, 256, 4)]:
        seed = fresh_seed()
        p = gpumode.generate_gemm(m, n, k, l, seed)
        rng = np.random.default_rng(seed)
        for name in ("sfa", "sfb"):   # every scale mantissa: the fp32 partial sums round
            ref = rng.integers(0, 0x48, size=getattr(p, name).shape, dtype=np.uint8)
            setattr(p, name, ref)
            setattr(p, f"{name}_permuted", ref_to_permuted(ref))
        want = G.model_c_splitk(p, splits)
        for reduce in ("ordered", "atomic"):
            tag = f"seed={seed} shape=({m},{n},{k},{l}) bn={bn} splits={splits} ctas/wave={ctas_per_wave} {reduce}"
            ws = G.SplitKWorkspace(dev, m, n, l, bn, splits, reduce)
            try:
                c = G.nvfp4_gemm(dev, p, bn=bn, splits=splits, workspace=ws, variant="1sm", reduce=reduce)
                if reduce == "ordered":
                    assert (c.view(np.uint16) == want.view(np.uint16)).all(), f"{tag}: not the split-order bits"
                else:
                    assert not gpumode.check_close(c, want, rtol=1e-3, atol=1e-3), tag
                assert ws.is_zero(), f"{tag}: workspace/counters not reset by the launch"
                c2 = G.nvfp4_gemm(dev, p, bn=bn, splits=splits, workspace=ws, variant="1sm", reduce=reduce)
                if reduce == "ordered":
                    assert (c2.view(np.uint16) == c.view(np.uint16)).all(), f"{tag}: second launch differs"
            finally:
                ws.free()


def test_split_k_own_workspace(dev):
    """splits without a workspace: the wrapper allocates, zeroes and frees one per call."""
    seed = fresh_seed()
    p = gpumode.generate_gemm(128, 256, 512, 1, seed)
    c = G.nvfp4_gemm(dev, p, splits=2, variant="1sm")
    assert not gpumode.check_close(c, gpumode.reference_gemm(p)), f"seed={seed}"


def _ptx_ops(ptx: str) -> set:
    return {ln.split()[0] for ln in ptx.splitlines() if ln.strip() and ln.startswith("\t") and
            not ln.strip().startswith(("//", ".", "{", "}", "$", "@"))}


@pytest.mark.parametrize("bn", [128, 256])
def test_split_k_default_build_unchanged(bn):
    """splits=1 is the default build: compile_gemm(bn, splits=1) is the very module of compile_gemm(bn) (no
    -DGEMM_SPLITS option), its kernel has the 8 parameters of before, and its PTX has none of the split-K
    instructions (red / atom.global / fence.acq_rel / strong ld/st / named bar.sync); an explicit -DGEMM_SPLITS=1
    gives the same PTX. (Byte-identical to the pre-split-K kernel's PTX: checked when split-K was added, see
    ptx_docs/production_gemm.md.) The ordered split build has the arrival protocol and strong loads but no red; the
    atomic one has the reds."""
    import ptxlab
    from ptxlab.kernels import KERNELS_DIR

    mod = G.compile_gemm(bn)
    assert G.compile_gemm(bn, splits=1) is mod
    ptx = mod.ptx
    ops = _ptx_ops(ptx)
    assert not [o for o in ops if o.startswith(("red.", "atom.global", "atom.acq_rel", "fence.acq_rel", "ld.relaxed",
                                                "st.relaxed"))], sorted(ops)
    assert "bar.sync %r" not in ptx and "_param_8" not in ptx
    assert f"{G.KERNEL_NAME}_param_7" in ptx
    opts = (f"-DGEMM_BN={bn}", f"-DGEMM_STAGES={G.DEFAULT_STAGES[bn]}")
    name = f"{G.KERNEL_NAME}.cu"
    a = ptxlab.compile(read(G.KERNEL_FILE), arch="sm_100a", name=name, options=opts, include_dirs=[KERNELS_DIR])
    b = ptxlab.compile(read(G.KERNEL_FILE), arch="sm_100a", name=name, options=opts + ("-DGEMM_SPLITS=1",),
                       include_dirs=[KERNELS_DIR])
    assert a.ptx == b.ptx
    ordered = _ptx_ops(G.compile_gemm(bn, splits=2).ptx)
    atomic = _ptx_ops(G.compile_gemm(bn, splits=2, reduce="atomic").ptx)
    for op in ("atom.acq_rel.gpu.global.inc.u32", "fence.acq_rel.gpu;", "ld.relaxed.gpu.global.v4.b32"):
        assert op in ordered and op in atomic and op not in ops, op
    assert "red.relaxed.gpu.global.add.v4.f32" in atomic and "st.relaxed.gpu.global.v4.b32" in atomic
    assert not [o for o in ordered if o.startswith("red.")] and "add.rn.f32" in ordered and "st.global.v4.b32" in ordered


@pytest.mark.parametrize("bn", [128, 256])
def test_split_k_sass_has_atomics(bn):
    from ptxlab.toolchain.sass import opcodes, require

    counts = require(G.compile_gemm(bn, splits=4, reduce="atomic"), ["REDG", "ATOMG", "MEMBAR", "LDG", "UTCOMMA",
                                                                     "LDTM"])
    assert all(v > 0 for v in counts.values()), counts
    ordered = require(G.compile_gemm(bn, splits=4), ["ATOMG", "MEMBAR", "LDG", "STG", "FADD", "UTCOMMA", "LDTM"])
    assert not any(o.startswith("REDG") for o in ordered), ordered
    assert not any(o.startswith(("REDG", "ATOMG")) for o in opcodes(G.compile_gemm(bn).sass()))


@pytest.mark.parametrize("splits,k,l", [(0, 1024, 1), (-2, 1024, 1), (1.5, 1024, 1), (True, 1024, 1), ("2", 1024, 1),
                                        (5, 1024, 1), (2, 256, 1), (2, 1024, 40000)])
def test_split_k_invalid(splits, k, l):
    with pytest.raises(ValueError, match="splits"):
        G.check_splits(splits, k, l)


def test_split_k_invalid_in_wrapper(dev):
    p = gpumode.generate_gemm(128, 256, 512, 1, 5)
    with pytest.raises(ValueError, match="splits"):
        G.nvfp4_gemm(dev, p, splits=3, variant="1sm")  # K/256 = 2 blocks
    with pytest.raises(ValueError, match="split-K is an option of variant='1sm'"):
        G.nvfp4_gemm(dev, p, splits=2)  # the default (cluster) variant has no split-K
    with pytest.raises(ValueError, match="splits"):
        G.nvfp4_gemm(dev, p, splits=0, variant="1sm")
    with pytest.raises(ValueError, match="splits"):
        G.compile_gemm(256, splits=0)
    ws = G.SplitKWorkspace(dev, 128, 512, 1, 256, 2)
    try:
        with pytest.raises(ValueError, match="workspace"):
            G.nvfp4_gemm(dev, p, splits=2, workspace=ws, variant="1sm")  # workspace of another shape
    finally:
        ws.free()


def test_choose_splits():
    """One wave of <= 148 CTAs: the M = 128 benchmark shapes get 140 / 144 / 140 CTAs at BN 256; shapes whose tiles
    fill the GPU get 1; at least min_k_blocks K blocks per split. The defaults stay splits = 1 (nvfp4_gemm, adapter)."""
    import inspect

    want = {(128, 7168, 16384): 5, (128, 4096, 7168): 9, (128, 7168, 2048): 4}
    for (m, n, k), s in want.items():
        assert G.choose_splits(m, n, k) == s, (m, n, k)
        tiles = (m // 128) * (n // G.choose_bn(n))
        assert tiles * s <= G.B200_SMS and G.check_splits(s, k, 1) == s
    assert G.choose_splits(128, 7168, 2048, min_k_blocks=1) == 5
    assert G.choose_splits(1024, 7168, 16384) == 1 and G.choose_splits(128, 256, 256) == 1
    assert G.choose_splits(128, 256, 256, min_k_blocks=1) == 1
    assert G.choose_splits(128, 7168, 16384, bn=128) == 2
    assert inspect.signature(G.nvfp4_gemm).parameters["splits"].default == 1


def test_split_k_module_mismatch_refused(dev):
    """A module= of another split-K factor (or BN) is refused before launch: a GEMM_SPLITS=4 module on a grid of
    L*2 CTAs never sees a last arrival, so c stayed poisoned and the workspace was left dirty, silently."""
    p = gpumode.generate_gemm(128, 256, 1024, 1, 7)
    ws = G.SplitKWorkspace(dev, 128, 256, 1, 256, 2)
    try:
        with pytest.raises(ValueError, match="has the atomic split-K reduction, this call asks for the ordered"):
            G.nvfp4_gemm(dev, p, splits=2, module=G.compile_gemm(256, splits=2, reduce="atomic"), variant="1sm",
                         workspace=ws)
        with pytest.raises(ValueError, match="not a split-K reduction"):
            G.nvfp4_gemm(dev, p, splits=2, variant="1sm", reduce="tree")
        for mod_s, call_s in [(4, 2), (2, 1), (1, 2)]:
            with pytest.raises(ValueError, match=f"GEMM_SPLITS={mod_s} but this call runs bn=256, splits={call_s}"):
                G.nvfp4_gemm(dev, p, splits=call_s, module=G.compile_gemm(256, splits=mod_s), variant="1sm",
                             workspace=ws if call_s > 1 else None)
        with pytest.raises(ValueError, match="GEMM_BN=128"):
            G.nvfp4_gemm(dev, p, bn=256, module=G.compile_gemm(128), variant="1sm")
        assert ws.is_zero()
    finally:
        ws.free()
