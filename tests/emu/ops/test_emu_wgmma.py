"""wgmma.mma_async accumulators read before wgmma.wait_group (PTX ISA 9.7.15.5.2: the accumulator registers are
undefined until a wait covers the commit group): the fidelity rule ``wgmma_wait`` (ptxlab/emu/checks/fidelity.py).

Hardware evidence: ptxas (sm_90a) guards the first use of the accumulators with WARPGROUP.DEPBAR.LE whether or not the
PTX has wgmma.wait_group, so the value read is the MMA result; the emulator's default warns and continues with it,
strict mode stops.  Every shape of every wgmma kind runs exactly (test_every_shape); the arithmetic and layouts of
every variant are checked by the corpus entry 'wgmma' (tests/corpus/kernels_wgmma.py, run by tests/emu/test_corpus.py,
and on an H100 by tests/fidelity/run_corpus.py)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxlab
from ptxlab.emu.checks.fidelity import EmuFidelityWarning
from ptxlab.errors import EmuError

KDIR = Path(__file__).resolve().parents[2] / "kernels"
sys.path.insert(0, str(KDIR))
import gen_wgmma  # noqa: E402

WAIT = 'asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");'
VARIANT = gen_wgmma.VARIANTS[0]            # wg_f16_f32_n8: m64n8k16, f16 inputs, f32 accumulators


def _src(wait: bool) -> str:
    src = gen_wgmma.HEAD + gen_wgmma.kernel(VARIANT)
    assert WAIT in src
    return src if wait else src.replace(WAIT, "")


def test_generated_corpus_kernels_are_current() -> None:
    assert (KDIR / "wgmma.cu").read_text() == gen_wgmma.source(), "run python tests/kernels/gen_wgmma.py"


@pytest.mark.parametrize("wait", [True, False])
def test_ptxas_guards_the_first_accumulator_use(wait: bool) -> None:
    """Between the HGMMA and the first store of D, the SASS waits on the warpgroup's MMA (WARPGROUP.DEPBAR.LE),
    with or without wgmma.wait_group in the PTX."""
    sass = ptxlab.compile(_src(wait), arch="sm_90a").sass()
    ops = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass)]
    first_mma = next(i for i, o in enumerate(ops) if o.startswith("HGMMA"))
    first_store = next(i for i, o in enumerate(ops) if i > first_mma and o.startswith("STG"))
    assert any(o.startswith("WARPGROUP.DEPBAR.LE") for o in ops[first_mma:first_store]), ops[first_mma:first_store]


def _run(dev, wait: bool, rng):
    a = rng.integers(-4, 5, 64 * 16).astype(np.float16).view(np.uint16).astype(np.uint32)
    b = rng.integers(-4, 5, 8 * 16).astype(np.float16).view(np.uint16).astype(np.uint32)
    c = rng.integers(-64, 65, 64 * 8).astype(np.float32).view(np.uint32)
    out = dev.empty(64 * 8 * 4)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(_src(wait), arch="sm_90a"), VARIANT[0], grid=(1, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(a), dev.to_device(b), dev.to_device(c), out])
    want = (a.view(np.uint32).astype(np.uint16).view(np.float16).astype(np.float64).reshape(64, 16)
            @ b.astype(np.uint16).view(np.float16).astype(np.float64).reshape(8, 16).T
            + c.view(np.float32).reshape(64, 8))
    return dev.to_host(out, np.uint32).view(np.float32).reshape(64, 8), want.astype(np.float32)


def test_read_after_wait_is_silent(rng) -> None:
    dev = ptxlab.open_device("emu", strict="wgmma_wait")
    got, want = _run(dev, True, rng)
    np.testing.assert_array_equal(got, want)
    assert not dev.last_stats.get("fidelity_warnings")


def test_read_before_wait_warns_and_reads_the_mma_result(rng) -> None:
    dev = ptxlab.open_device("emu", strict=())
    with pytest.warns(EmuFidelityWarning, match="wgmma_wait"):
        got, want = _run(dev, False, rng)
    np.testing.assert_array_equal(got, want)
    warns = dev.last_stats["fidelity_warnings"]
    assert warns and all("the emulator continues with the MMA result" in w for w in warns)


def test_read_before_wait_stops_when_strict(rng) -> None:
    dev = ptxlab.open_device("emu", strict="wgmma_wait")
    with pytest.raises(EmuError) as e:
        _run(dev, False, rng)
    msg = str(e.value)
    assert "strict rule 'wgmma_wait'" in msg and "wgmma.wait_group" in msg and "WARPGROUP.DEPBAR" in msg, msg


# ---------------------------------------------------------------------------------------------- every shape
# Each registered wgmma kind runs every N of the ISA (9.7.15.5.1: m64nNk16 / k8 / k32, N = 8..256 by 8; the integer
# kinds N = 8, 16, 24, 32..256 by 16) in one raw-PTX kernel, scale-d false (D = A.B), on small integers whose products
# and sums are exact in any order, so every fragment size is checked bit for bit against numpy.  A and B are laid out
# by the host in the canonical K-major interleaved layout (9.7.15.5.1.2: 8 x 16-byte core matrices, LBO = 128 bytes
# between the two core matrices along K, SBO = 8 rows x K bytes between 8-row groups); B holds 256 rows, each N uses
# the first N.
N_ALL = list(range(8, 257, 8))
N_INT = [8, 16, 24] + list(range(32, 257, 16))
# one per registered form (the D types and the other input types are covered by the corpus entry 'wgmma')
# (FP8 kinds are refused: the H100 accumulates them with reduced precision, test_fp8_is_refused)
KINDS = [("f16", "f16", "f32", N_ALL), ("bf16", "bf16", "f32", N_ALL), ("tf32", "tf32", "f32", N_ALL),
         ("s8", "u8", "s32", N_INT), ("e4m3", "e5m2", "f32", N_ALL), ("e5m2", "e4m3", "f32", N_ALL)]


def _codes(vals: np.ndarray, t: str) -> np.ndarray:
    import ml_dtypes
    if t == "tf32":
        return vals.astype(np.float32).view(np.uint32)
    dt = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
          "e5m2": ml_dtypes.float8_e5m2}[t]
    c = vals.astype(dt)
    return c.view(np.uint16 if c.dtype.itemsize == 2 else np.uint8).astype(np.uint32)


def _kmajor(codes: np.ndarray, eb: int) -> np.ndarray:
    """The shared-memory image of a (rows, K) operand in the K-major interleaved layout."""
    rows, k = codes.shape
    kbytes = k * eb
    img = np.zeros(rows * kbytes, np.uint8)
    raw = codes.astype(np.uint32).view(np.uint8).reshape(rows, k, 4)[:, :, :eb]
    for r in range(rows):
        for kb in range(kbytes):
            img[(r % 8) * 16 + (r // 8) * 8 * kbytes + kb % 16 + (kb // 16) * 128] = raw[r, kb // eb, kb % eb]
    return img


def _sweep_ptx(at, bt, dt, ns) -> str:
    eb = gen_wgmma.EB[at]
    K = gen_wgmma.KK[eb]
    kbytes = K * eb
    sa, sb = 64 * kbytes, 256 * kbytes
    hi = (128 >> 4) << 16 | (8 * kbytes >> 4) << 32            # LBO, SBO fields of the descriptor
    tail = ", 1, 1, 0, 0" if at in ("f16", "bf16") else ("" if at in ("s8", "u8") else ", 1, 1")
    L = [".version 8.4", ".target sm_90a", ".address_size 64",
         ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pd)", "{",
         "  .reg .b32 %r<160>; .reg .b32 %s<12>; .reg .b64 %rd<16>; .reg .pred %p<3>;",
         f"  .shared .align 1024 .b8 sa[{sa}]; .shared .align 1024 .b8 sb[{sb}];",
         "  ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pb]; ld.param.u64 %rd3, [pd];",
         "  mov.u32 %s1, %tid.x;"]
    for buf, src, n in (("sa", "%rd1", sa), ("sb", "%rd2", sb)):       # linear copy of the prepared images
        L += [f"  mov.u32 %s2, %s1; mov.u32 %s3, {buf};", f"$L_{buf}:",
              f"  mul.wide.u32 %rd4, %s2, 4; add.s64 %rd5, {src}, %rd4; ld.global.b32 %s4, [%rd5];",
              "  shl.b32 %s5, %s2, 2; add.u32 %s5, %s5, %s3; st.shared.b32 [%s5], %s4;",
              f"  add.u32 %s2, %s2, 128; setp.lt.u32 %p1, %s2, {n // 4}; @%p1 bra $L_{buf};"]
    L += ["  bar.sync 0;", "  fence.proxy.async.shared::cta;",
          "  mov.u64 %rd6, sa; shr.u64 %rd6, %rd6, 4; and.b64 %rd6, %rd6, 0x3FFF;",
          f"  or.b64 %rd6, %rd6, {hi};",
          "  mov.u64 %rd7, sb; shr.u64 %rd7, %rd7, 4; and.b64 %rd7, %rd7, 0x3FFF;",
          f"  or.b64 %rd7, %rd7, {hi};",
          "  setp.ne.b32 %p2, 0, 0;",
          # thread (w, g, t): rows 16w + g (+8), columns 2t (+1) of each 8-column block
          "  shr.u32 %s6, %s1, 5; and.b32 %s7, %s1, 31; shr.u32 %s8, %s7, 2; and.b32 %s9, %s7, 3;",
          "  mad.lo.u32 %s10, %s6, 16, %s8; shl.b32 %s11, %s9, 1;"]
    base = 0
    for n in ns:
        creg = n // 2
        regs = ", ".join(f"%r{i}" for i in range(creg))
        L += ["  wgmma.fence.sync.aligned;",
              f"  wgmma.mma_async.sync.aligned.m64n{n}k{K}.{dt}.{at}.{bt} {{{regs}}}, %rd6, %rd7, %p2{tail};",
              "  wgmma.commit_group.sync.aligned;", "  wgmma.wait_group.sync.aligned 0;",
              f"  mad.lo.u32 %s2, %s10, {n}, %s11; add.u32 %s2, %s2, {base};",
              "  mul.wide.u32 %rd8, %s2, 4; add.s64 %rd9, %rd3, %rd8;"]
        for i in range(creg):
            e = i % 4
            off = (8 * (e >= 2) * n + 8 * (i // 4) + (e & 1)) * 4
            L.append(f"  st.global.b32 [%rd9+{off}], %r{i};")
        base += 64 * n
    return "\n".join(L + ["  ret;", "}"]) + "\n"


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k[2]}.{k[0]}.{k[1]}")
def test_every_shape(kind, rng) -> None:
    at, bt, dt, ns = kind
    eb = gen_wgmma.EB[at]
    K = gen_wgmma.KK[eb]
    if at in ("s8", "u8"):
        a = rng.integers(-128, 128, (64, K))
        b = rng.integers(0, 256, (256, K))
        ac, bc = (a & 0xFF).astype(np.uint32), b.astype(np.uint32)
    else:
        lim = 2 if eb == 1 else 4                      # |products| <= 16, K terms: every sum exact in f32
        a = rng.integers(-lim, lim + 1, (64, K))
        b = rng.integers(-lim, lim + 1, (256, K))
        ac, bc = _codes(a, at), _codes(b, bt)
    dev = ptxlab.open_device("emu")
    out = dev.empty(64 * sum(ns) * 4)
    dev.memset(out, 0xFF)
    dev.launch(ptxlab.compile(_sweep_ptx(at, bt, dt, ns), arch="sm_90a"), "k", grid=(1, 1, 1), block=(128, 1, 1),
               args=[dev.to_device(_kmajor(ac, eb)), dev.to_device(_kmajor(bc, eb)), out])
    got = dev.to_host(out, np.uint32)
    bad, base = [], 0
    for n in ns:
        ref = a @ b[:n].T
        want = (ref.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32) if dt == "s32" else \
            ref.astype(np.float32).view(np.uint32)
        g = got[base:base + 64 * n].reshape(64, n)
        if not np.array_equal(g, want):
            bad.append(f"m64n{n}k{K}.{dt}.{at}.{bt}: {int((g != want).sum())} of {64 * n} elements differ")
        base += 64 * n
    assert not bad, "\n".join(bad)


