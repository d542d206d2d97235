"""Corpus entries for warp-level MMA and matrix load/store (tests/kernels/mma_sync.cu): mma.sync for every shape and
type an H100 runs, ldmatrix / stmatrix / movmatrix.

Every kernel runs two problems per launch (one warp each; m8n8k4 .f16 four per warp): problem 0 in the *exact
regime* (small dyadic values: every correct summation order gives the same result, so the output checks the
fragment layouts bit for bit against a plain numpy reference), problem 1 *full range* (random codes with NaN, Inf,
subnormals; C random): its emulator-side reference is the tensor-core model the emulator uses
(ptxlab/emu/hw/warp_mma_arith.py, the B200 window rule applied to Hopper as a hypothesis; for FP8 m16n8k32 and m8n8k4
with f32 C/D the H100's lowerings, ptxlab/emu/hw/warp_mma_sm90.py), and the H100 comparison of
tests/fidelity/run_corpus.py is what decides it (ptx_docs/isa_coverage_notes.md).  Integer and b1 kinds are
exact: both problems against numpy.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from corpus import Entry, out_buf

SRC = "mma_sync.cu"
WARPS = 2

# kernel name, shape (M, N, K), element class, atype, btype, dtype
F16 = [("mma_m16n8k16_f32_f16", (16, 8, 16), "f16", "f16", "f32"), ("mma_m16n8k16_f16_f16", (16, 8, 16), "f16", "f16", "f16"),
       ("mma_m16n8k8_f32_f16", (16, 8, 8), "f16", "f16", "f32"), ("mma_m16n8k8_f16_f16", (16, 8, 8), "f16", "f16", "f16"),
       ("mma_m16n8k16_bf16", (16, 8, 16), "bf16", "bf16", "f32"), ("mma_m16n8k8_bf16", (16, 8, 8), "bf16", "bf16", "f32")]
FP8 = [(f"mma_m16n8k32_{a}_{b}", (16, 8, 32), a, b, "f32") for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2")]
INT = [(f"mma_{sh}_{a}_{b}{s}", shp, a, b, bool(s))
       for sh, shp, t in (("m16n8k32", (16, 8, 32), "8"), ("m16n8k16", (16, 8, 16), "8"), ("m8n8k16", (8, 8, 16), "8"),
                          ("m16n8k64", (16, 8, 64), "4"), ("m16n8k32", (16, 8, 32), "4"), ("m8n8k32", (8, 8, 32), "4"))
       for a in (f"u{t}", f"s{t}") for b in (f"u{t}", f"s{t}") for s in ("", "_sat")]
B1 = [(f"mma_{sh}_{op}", shp, op) for sh, shp in (("m16n8k256", (16, 8, 256)), ("m16n8k128", (16, 8, 128)),
                                                   ("m8n8k128", (8, 8, 128))) for op in ("xor", "and")]
F64 = [(8, 4), (16, 4), (16, 8), (16, 16)]
M884 = [(al, bl, f) for f in (0, 1) for al in (0, 1) for bl in (0, 1)]
M884_F16 = [x for x in M884 if not x[2]]          # f16 C/D: agree with the H100
M884_F32 = [x for x in M884 if x[2]]              # f32 C/D: the H100's fma-chain lowering (hw/warp_mma_sm90.py)
FMT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def _codes(vals, fmt):
    dt = FMT[fmt]
    v = np.asarray(vals, np.float64).astype(dt)
    return v.view(np.uint8 if np.dtype(dt).itemsize == 1 else np.uint16).astype(np.uint32)


def _exact_vals(rng, shape, small=4):
    """Dyadic values k / 4 with |k| <= 4 * small: products and sums exact in every format used."""
    return rng.integers(-4 * small, 4 * small + 1, shape) / 4.0


def _full_codes(rng, shape, fmt):
    bits = {"f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "tf32": 32}[fmt]
    return rng.integers(0, 1 << bits, shape, dtype=np.uint64).astype(np.uint32)


def _f32_full(rng, shape):
    x = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
    e = rng.integers(110, 140, shape).astype(np.uint32)          # mostly moderate exponents: real sums
    mid = rng.random(shape) < 0.8
    x = np.where(mid, (x & np.uint32(0x807FFFFF)) | (e << np.uint32(23)), x)
    return x


def _launch(dev, mod, kname, a, b, c, nwarps, dtype=np.uint32, extra=()):
    out = out_buf(dev, c.size * np.dtype(dtype).itemsize)
    dev.launch(mod, kname, grid=(1, 1, 1), block=(32 * nwarps, 1, 1),
               args=[dev.to_device(np.ascontiguousarray(a)), dev.to_device(np.ascontiguousarray(b)),
                     dev.to_device(np.ascontiguousarray(c)), out] + list(extra))
    return dev.to_host(out, dtype).reshape(c.shape)


def _model(a, b, c, at, bt, dt, m884=False):
    """The emulator's rule for one full-range problem: the H100's lowerings for FP8 and m8n8k4
    (hw/warp_mma_sm90.py), the tensor-core window model otherwise."""
    from ptxlab.emu.hw.warp_mma_arith import mma_float
    from ptxlab.emu.hw.warp_mma_sm90 import mma_fp8_sm90, mma_m8n8k4_f16_sm90, mma_m8n8k4_f32_sm90
    if at in ("e4m3", "e5m2"):
        return mma_fp8_sm90(a, b, c, at, bt)
    if m884:
        return mma_m8n8k4_f32_sm90(a, b, c) if dt == "f32" else mma_m8n8k4_f16_sm90(a, b, c)
    return mma_float(a, b, c, at, bt, dt)


# ------------------------------------------------------------------------------------------------ f16 / bf16 / fp8 / tf32
def _float_in(specs, tf32=False):
    def make(rng):
        ins = {}
        for name, (M, N, K), at, bt, dt in specs:
            a = np.zeros((WARPS, M, K), np.uint32)
            b = np.zeros((WARPS, N, K), np.uint32)                # B stored (n, k): column-major K x N
            c = np.zeros((WARPS, M, N), np.uint32)
            small = 2 if at in ("e4m3", "e5m2") else 4
            a[0] = _codes(_exact_vals(rng, (M, K), small), at)
            b[0] = _codes(_exact_vals(rng, (N, K), small), bt)
            cv = _exact_vals(rng, (M, N), 8)
            c[0] = (cv.astype(np.float32).view(np.uint32) if dt == "f32" else _codes(cv, "f16"))
            a[1], b[1] = _full_codes(rng, (M, K), at), _full_codes(rng, (N, K), bt)
            c[1] = _f32_full(rng, (M, N)) if dt == "f32" else _full_codes(rng, (M, N), "f16")
            ins[f"{name}_a"], ins[f"{name}_b"], ins[f"{name}_c"] = a, b, c
        return ins
    return make


def _run_each(specs):
    """A run function launching every kernel of a spec table on its A, B, C inputs."""
    def run(dev, mod, ins):
        return {name: _launch(dev, mod, name, ins[f"{name}_a"], ins[f"{name}_b"], ins[f"{name}_c"], WARPS)
                for name, *_ in specs}
    return run


def _exact_float(a, b, c, at, bt, dt):
    def val(x, fmt):
        return x.astype(np.uint16 if np.dtype(FMT[fmt]).itemsize == 2 else np.uint8).view(FMT[fmt]).astype(np.float64)
    cv = c.view(np.float32).astype(np.float64) if dt == "f32" else val(c, "f16")
    d = val(a, at) @ val(b, bt).T + cv
    return d.astype(np.float32).view(np.uint32) if dt == "f32" else _codes(d, "f16")


def _float_ref(specs):
    def ref(ins):
        out = {}
        for name, (M, N, K), at, bt, dt in specs:
            a, b, c = ins[f"{name}_a"], ins[f"{name}_b"], ins[f"{name}_c"]
            d = np.empty((WARPS, M, N), np.uint32)
            d[0] = _exact_float(a[0], b[0], c[0], at, bt, dt)
            d[1] = _model(a[1], b[1].T, c[1], at, bt, dt)
            out[name] = d
        return out
    return ref


def _tf32_in(rng):
    ins = {}
    for K in (4, 8):
        a = np.zeros((WARPS, 16, K), np.uint32)
        b = np.zeros((WARPS, 8, K), np.uint32)
        c = np.zeros((WARPS, 16, 8), np.uint32)
        low = rng.integers(0, 1 << 13, (16, K), dtype=np.uint64).astype(np.uint32)   # ignored bits (tf32)
        a[0] = _exact_vals(rng, (16, K)).astype(np.float32).view(np.uint32) | low
        b[0] = _exact_vals(rng, (8, K)).astype(np.float32).view(np.uint32)
        c[0] = _exact_vals(rng, (16, 8), 8).astype(np.float32).view(np.uint32)
        a[1], b[1], c[1] = _f32_full(rng, (16, K)), _f32_full(rng, (8, K)), _f32_full(rng, (16, 8))
        ins[f"k{K}_a"], ins[f"k{K}_b"], ins[f"k{K}_c"] = a, b, c
    return ins


def _tf32_run(dev, mod, ins):
    return {f"k{K}": _launch(dev, mod, "mma_tf32", ins[f"k{K}_a"], ins[f"k{K}_b"], ins[f"k{K}_c"], WARPS,
                             extra=[np.int32(K)]) for K in (4, 8)}


def _tf32_ref(ins):
    out = {}
    for K in (4, 8):
        a, b, c = ins[f"k{K}_a"], ins[f"k{K}_b"], ins[f"k{K}_c"]
        d = np.empty((WARPS, 16, 8), np.uint32)
        at = (a[0] & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
        d[0] = (at @ b[0].view(np.float32).astype(np.float64).T + c[0].view(np.float32)).astype(np.float32).view(np.uint32)
        d[1] = _model(a[1], b[1].T, c[1], "tf32", "tf32", "f32")
        out[f"k{K}"] = d
    return out


# ------------------------------------------------------------------------------------------------ integer / b1
def _signed(x, bits):
    x = x.astype(np.int64)
    return np.where(x >= 1 << (bits - 1), x - (1 << bits), x)


def _int_in(rng):
    ins = {}
    for name, (M, N, K), at, bt, sat in INT:
        bits = int(at[1:])
        a = rng.integers(0, 1 << bits, (WARPS, M, K)).astype(np.uint32)
        b = rng.integers(0, 1 << bits, (WARPS, N, K)).astype(np.uint32)
        c = rng.integers(0, 1 << 32, (WARPS, M, N), dtype=np.uint64).astype(np.uint32)
        c[0] = rng.integers(-1000, 1000, (M, N)).astype(np.int32).view(np.uint32)
        c[1, 0, :2] = [0x7FFFFFF0, 0x80000008]                  # saturation / wrap near the ends
        ins[f"{name}_a"], ins[f"{name}_b"], ins[f"{name}_c"] = a, b, c
    return ins


def _int_ref(ins):
    out = {}
    for name, (M, N, K), at, bt, sat in INT:
        bits = int(at[1:])
        a, b, c = ins[f"{name}_a"].astype(np.int64), ins[f"{name}_b"].astype(np.int64), ins[f"{name}_c"]
        av = _signed(a, bits) if at[0] == "s" else a
        bv = _signed(b, bits) if bt[0] == "s" else b
        tot = np.einsum("wmk,wnk->wmn", av, bv) + c.view(np.int32).astype(np.int64)
        if sat:
            tot = np.clip(tot, -2 ** 31, 2 ** 31 - 1)
        out[name] = (tot & 0xFFFFFFFF).astype(np.uint32)
    return out


def _b1_in(rng):
    ins = {}
    for name, (M, N, K), op in B1:
        ins[f"{name}_a"] = rng.integers(0, 2, (WARPS, M, K)).astype(np.uint32)
        ins[f"{name}_b"] = rng.integers(0, 2, (WARPS, N, K)).astype(np.uint32)
        ins[f"{name}_c"] = rng.integers(0, 1 << 32, (WARPS, M, N), dtype=np.uint64).astype(np.uint32)
    return ins


def _b1_ref(ins):
    out = {}
    for name, (M, N, K), op in B1:
        a, b, c = ins[f"{name}_a"].astype(np.int64), ins[f"{name}_b"].astype(np.int64), ins[f"{name}_c"]
        x = (a[:, :, None, :] ^ b[:, None, :, :]) if op == "xor" else (a[:, :, None, :] & b[:, None, :, :])
        out[name] = ((x.sum(-1) + c.view(np.int32).astype(np.int64)) & 0xFFFFFFFF).astype(np.uint32)
    return out


# ------------------------------------------------------------------------------------------------ f64
def _f64_full(rng, shape):
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-30, 30, shape))
    x = x.astype(np.float64).view(np.uint64)
    # no NaN operands: a NaN operand together with an Inf x 0 in one dot product is refused (mma_f64); NaN operands
    # have their own entry (_f64_qnan)
    sp = np.array([0x7FF0000000000000, 0xFFF0000000000000, 0, 0x8000000000000000, 1], np.uint64)
    k = rng.random(shape) < 0.08
    return np.where(k, rng.choice(sp, shape), x)


def _f64_qnan(rng, shape):
    """Finite values with a few 0x7FF8000000000000 operands and no Inf: NaNs only propagated, never created."""
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-30, 30, shape))).astype(np.float64).view(np.uint64)
    return np.where(rng.random(shape) < 0.05, np.uint64(0x7FF8000000000000), x)


def _f64_specials(rng, shape):
    """Mostly ±Inf, ±0 and small values (many Inf x 0 and Inf - Inf: created NaNs on every shape), a few 0x7FF8 NaNs."""
    sp = np.array([0x7FF0000000000000, 0xFFF0000000000000, 0, 0x8000000000000000, 0x3FF8000000000000,
                   0xC000000000000000], np.uint64)
    x = rng.choice(sp, shape)
    return np.where(rng.random(shape) < 0.03, np.uint64(0x7FF8000000000000), x)


def _f64_payloads(rng, shape):
    """Finite values with NaN operands other than 0x7FF8000000000000 (negative, payload, signalling)."""
    nans = np.array([0xFFF8000000000000, 0x7FF8000000000001, 0x7FF4000000000000, 0xFFF0000000000001], np.uint64)
    return np.where(rng.random(shape) < 0.1, rng.choice(nans, shape), _f64_full(rng, shape))


def _f64_in(full=_f64_full):
    """Inputs of every f64 shape: problem 0 exact, problem 1 from ``full``."""
    def make(rng):
        ins = {}
        for M, K in F64:
            a = np.zeros((WARPS, M, K), np.uint64)
            b = np.zeros((WARPS, 8, K), np.uint64)
            c = np.zeros((WARPS, M, 8), np.uint64)
            a[0], b[0] = _exact_vals(rng, (M, K)).view(np.uint64), _exact_vals(rng, (8, K)).view(np.uint64)
            c[0] = _exact_vals(rng, (M, 8), 8).view(np.uint64)
            a[1], b[1], c[1] = full(rng, (M, K)), full(rng, (8, K)), full(rng, (M, 8))
            ins[f"m{M}k{K}_a"], ins[f"m{M}k{K}_b"], ins[f"m{M}k{K}_c"] = a, b, c
        return ins
    return make


def _f64_run(dev, mod, ins):
    return {f"m{M}k{K}": _launch(dev, mod, "mma_f64", ins[f"m{M}k{K}_a"], ins[f"m{M}k{K}_b"], ins[f"m{M}k{K}_c"],
                                 WARPS, np.uint64, extra=[np.int32(M), np.int32(K)]) for M, K in F64}


def _f64_ref(ins):
    from ptxlab.emu.hw.warp_mma_arith import mma_f64
    out = {}
    for M, K in F64:
        a, b, c = ins[f"m{M}k{K}_a"], ins[f"m{M}k{K}_b"], ins[f"m{M}k{K}_c"]
        d = np.empty((WARPS, M, 8), np.uint64)
        d[0] = (a[0].view(np.float64) @ b[0].view(np.float64).T + c[0].view(np.float64)).view(np.uint64)
        d[1] = mma_f64(a[1], b[1].T, c[1])
        out[f"m{M}k{K}"] = d
    return out


# ------------------------------------------------------------------------------------------------ m8n8k4 .f16
def _m884_in(forms):
    """Inputs of the m8n8k4 .f16 kernels ``forms`` ((alayout, blayout, f32 C/D) triples)."""
    def make(rng):
        ins = {}
        for al, bl, f in forms:
            a = _codes(_exact_vals(rng, (WARPS * 4, 8, 4)), "f16")
            b = _codes(_exact_vals(rng, (WARPS * 4, 8, 4)), "f16")       # (problem, n, k)
            cv = _exact_vals(rng, (WARPS * 4, 8, 8), 8)
            c = cv.astype(np.float32).view(np.uint32) if f else _codes(cv, "f16")
            a[4:] = _full_codes(rng, (4, 8, 4), "f16")                     # warp 1: full range
            b[4:] = _full_codes(rng, (4, 8, 4), "f16")
            c[4:] = _f32_full(rng, (4, 8, 8)) if f else _full_codes(rng, (4, 8, 8), "f16")
            k = f"a{al}b{bl}f{f}"
            ins[f"{k}_a"], ins[f"{k}_b"], ins[f"{k}_c"] = a, b, c
        return ins
    return make


def _m884_run(forms):
    def run(dev, mod, ins):
        out = {}
        for al, bl, f in forms:
            k = f"a{al}b{bl}f{f}"
            out[k] = _launch(dev, mod, f"mma_m8n8k4_{al}_{bl}_{f}", ins[f"{k}_a"], ins[f"{k}_b"], ins[f"{k}_c"],
                             WARPS)
        return out
    return run


def _m884_ref(forms):
    def ref(ins):
        out = {}
        for al, bl, f in forms:
            k = f"a{al}b{bl}f{f}"
            a, b, c = ins[f"{k}_a"], ins[f"{k}_b"], ins[f"{k}_c"]
            dt = "f32" if f else "f16"
            d = np.empty_like(c)
            for p in range(WARPS * 4):
                d[p] = (_exact_float(a[p], b[p], c[p], "f16", "f16", dt) if p < 4 else
                        _model(a[p], b[p].T, c[p], "f16", "f16", dt, m884=True))
            out[k] = d
        return out
    return ref


def _m884_rounding_in(rng):
    """m8n8k4 .row.col.f16 (f16 C / D) problems that tell the window rule (one rounding to f16 of a 25-bit window
    sum) from the SASS's f32 tree (C + the k 0-1 pair, then + the k 2-3 pair, each rounded to f32, then to f16; the
    H100 follows the tree: 232 of 512 words differ from the window rule, runs of 2026-11-28):
    B = 1, so each D element is C + the four A values of its row.  Problems 0-3: A rows put half an f16 ulp of 1
    (2**-11) and a quarter f32 ulp (2**-24) in different pairs, C = +-1, +-2, 1.5 ... (the f32 additions meet exact
    ties).  Problems 4-7 (added 2026-11-28, after that run): rows that, over these C values, tell the SASS's pair order from
    every other f32 addition tree of (C, p0..p3) (all 104; searched over rows of 0, +-2**-10, +-2**-11, +-2**-23,
    +-2**-24), each row negated together with its C values or not."""
    h, q = 2.0 ** -11, 2.0 ** -24
    rows = [[h, q, 0, 0], [0, 0, h, q], [h, 0, q, 0], [q, 0, h, 0], [h, 0, 0, q], [0, q, h, 0], [h, q, h, q],
            [q, h, 0, q]]
    t, e = 2.0 ** -10, 2.0 ** -23
    order = [[h, -q, q, q], [q, q, 0, h], [-h, q, -q, -q], [-t, e, -q, -e], [-t, e, -e, -e], [-t, e, -e, -q],
             [q, q, -h, -t], [q, q, -t, -h]]
    cols = [1.0, -1.0, 2.0, 1.5, -1.5, 1.0 + 2.0 ** -10, 4.0, -2.0]
    a = np.zeros((WARPS * 4, 8, 4))
    c = np.zeros((WARPS * 4, 8, 8))
    for p in range(WARPS * 4):
        sign = np.where(rng.random((8, 1)) < 0.5, -1.0, 1.0)
        c[p] = np.array(cols)[rng.permutation(8)][None, :] * (sign if p >= 4 else np.where(rng.random((8, 1)) < 0.5,
                                                                                            -1.0, 1.0))
        a[p] = np.array(order if p >= 4 else rows)[rng.permutation(8)] * (sign if p >= 4 else 1.0)
    k = "a0b1f0"
    return {f"{k}_a": _codes(a, "f16"), f"{k}_b": _codes(np.ones((WARPS * 4, 8, 4)), "f16"), f"{k}_c": _codes(c, "f16")}


def _m884_rounding_ref(ins):
    k = "a0b1f0"
    a, b, c = ins[f"{k}_a"], ins[f"{k}_b"], ins[f"{k}_c"]
    return {k: np.stack([_model(a[p], b[p].T, c[p], "f16", "f16", "f16", m884=True) for p in range(WARPS * 4)])}


M884_MIXED = [("c16_d32", 0)]                  # kernel suffix, C is f32 (ptxas refuses f16 D with f32 C)


def _m884_mixed_in(rng):
    """Inputs of m8n8k4 .row.col.f32.f16.f16.f16: problems 0-3 exact regime, 4-7 full-range A / B with
    C of moderate exponents (the f16 / f32 conversion points show in the last bits)."""
    ins = {}
    for k, cf in M884_MIXED:
        a = _codes(_exact_vals(rng, (WARPS * 4, 8, 4)), "f16")
        b = _codes(_exact_vals(rng, (WARPS * 4, 8, 4)), "f16")
        cv = _exact_vals(rng, (WARPS * 4, 8, 8), 8)
        c = cv.astype(np.float32).view(np.uint32) if cf else _codes(cv, "f16")
        a[4:] = _full_codes(rng, (4, 8, 4), "f16")
        b[4:] = _full_codes(rng, (4, 8, 4), "f16")
        c[4:] = _f32_full(rng, (4, 8, 8)) if cf else _full_codes(rng, (4, 8, 8), "f16")
        ins[f"{k}_a"], ins[f"{k}_b"], ins[f"{k}_c"] = a, b, c
    return ins


def _m884_mixed_run(dev, mod, ins):
    return {k: _launch(dev, mod, f"mma_m8n8k4_{k}", ins[f"{k}_a"], ins[f"{k}_b"], ins[f"{k}_c"], WARPS)
            for k, _ in M884_MIXED}


def _m884_mixed_ref(ins):
    from ptxlab.emu.hw.warp_mma_sm90 import mma_m8n8k4_f32_sm90
    out = {}
    for k, _ in M884_MIXED:
        a, b, c = ins[f"{k}_a"], ins[f"{k}_b"], ins[f"{k}_c"]
        d = np.empty_like(c)
        for p in range(WARPS * 4):
            if p < 4:
                cv = c[p].astype(np.uint16).view(np.float16).astype(np.float64)
                d[p] = _exact_float(a[p], b[p], cv.astype(np.float32).view(np.uint32), "f16", "f16", "f32")
            else:
                d[p] = mma_m8n8k4_f32_sm90(a[p], b[p].T, c[p], "f16")
        out[k] = d
    return out


# ------------------------------------------------------------------------------------------------ ldmatrix family
LDST = [(n, t) for n in (1, 2, 4) for t in (0, 1)]


def _ld_in(rng):
    return {"src": rng.integers(0, 1 << 16, 4 * 64).astype(np.uint16),
            "rowidx": rng.permutation(32).astype(np.int32)}


def _ld_run(dev, mod, ins):
    out = {}
    for n, t in LDST:
        regs, dst = out_buf(dev, 32 * 5 * 4), out_buf(dev, 4 * 64 * 2)
        dev.launch(mod, f"ldmatrix_x{n}_t{t}", grid=(1, 1, 1), block=(32, 1, 1),
                   args=[dev.to_device(ins["src"]), dev.to_device(ins["rowidx"]), regs, dst])
        out[f"x{n}t{t}_regs"] = dev.to_host(regs, np.uint32).reshape(32, 5)
        out[f"x{n}t{t}_st"] = dev.to_host(dst, np.uint16)
    return out


def _ld_ref(ins):
    src, rowidx = ins["src"].reshape(32, 8), ins["rowidx"]
    out = {}
    lane = np.arange(32)
    for n, t in LDST:
        regs = np.zeros((32, 5), np.uint32)
        for j in range(n):
            mat = src[rowidx[8 * j:8 * j + 8]]                        # matrix j: its 8 rows as addressed
            if t:
                mat = mat.T
            lo = mat[lane // 4, 2 * (lane % 4)].astype(np.uint32)
            hi = mat[lane // 4, 2 * (lane % 4) + 1].astype(np.uint32)
            regs[:, j] = lo | (hi << 16)
        m0 = np.zeros((8, 8), np.uint32)
        m0[lane // 4, 2 * (lane % 4)] = regs[:, 0] & 0xFFFF
        m0[lane // 4, 2 * (lane % 4) + 1] = regs[:, 0] >> 16
        mt = m0.T
        regs[:, 4] = mt[lane // 4, 2 * (lane % 4)] | (mt[lane // 4, 2 * (lane % 4) + 1] << 16)
        st = np.full((32, 8), 0xFFFF, np.uint16)
        for j in range(n):                                            # stmatrix writes the same rows back
            st[rowidx[8 * j:8 * j + 8]] = src[rowidx[8 * j:8 * j + 8]]
        out[f"x{n}t{t}_regs"] = regs
        out[f"x{n}t{t}_st"] = st.reshape(-1)
    return out


NOTE = ("problem 0 exact regime (layouts, bit for bit vs numpy); problem 1 full range: emulator side vs the "
        "tensor-core model (hw/warp_mma_arith.py), the H100 decides the arithmetic")
ENTRIES = [
    Entry("mma_sync_f16", SRC, _float_in(F16), _run_each(F16), _float_ref(F16), note="f16/bf16 m16n8k8/k16; " + NOTE),
    Entry("mma_sync_fp8", SRC, _float_in(FP8), _run_each(FP8), _float_ref(FP8),
          note="e4m3/e5m2 m16n8k32; full range vs the H100's lowering (f16 MMAs over k % 4 < 2, then k % 4 >= 2, "
          "then add.rn C: hw/warp_mma_sm90.py, fitted to the 2026-11-28 run, seed 20261127)"),
    Entry("mma_sync_tf32", SRC, _tf32_in, _tf32_run, _tf32_ref, note="tf32 m16n8k4/k8 (low 13 bits set); " + NOTE),
    Entry("mma_sync_int", SRC, _int_in, _run_each(INT), _int_ref, note="u8/s8/u4/s4, every shape, .satfinite: exact"),
    Entry("mma_sync_b1", SRC, _b1_in, _run_each(B1), _b1_ref, note="b1 .xor/.and.popc, every shape: exact"),
    Entry("mma_sync_f64", SRC, _f64_in(), _f64_run, _f64_ref,
          note="f64 m8n8k4, m16n8k4/k8/k16; full range vs sequential IEEE fma (UNCONFIRMED order)"),
    Entry("mma_sync_f64_qnan", SRC, _f64_in(_f64_qnan), _f64_run, _f64_ref,
          note="f64, every shape: finite values and 0x7FF8... operands (propagated NaN; 0x7FF8... on the H100)"),
    Entry("mma_sync_f64_specials", SRC, _f64_in(_f64_specials), _f64_run, _f64_ref,
          refused={"emu": "both a NaN operand and an Inf x 0 / Inf - Inf"},
          note="f64, every shape: Inf x 0 and Inf - Inf with a few NaN operands. H100 2026-11-27: a created NaN alone "
               "gives 0xFFF8..., a NaN operand alone 0x7FF8..., both in one dot product either, by an accumulation "
               "order not modelled: the emulator refuses that case (this entry has it on every shape)"),
    Entry("mma_sync_f64_nan_payload", SRC, _f64_in(_f64_payloads), _f64_run, _f64_ref,
          refused={"emu": "only 0x7ff8000000000000 has been measured"},
          note="f64 with NaN operands other than 0x7FF8...: the emulator refuses them; the H100 side is recorded"),
    Entry("mma_sync_m8n8k4", SRC, _m884_in(M884_F16), _m884_run(M884_F16), _m884_ref(M884_F16),
          note="m8n8k4 .f16 with f16 C/D, 4 problems/warp; full range vs the H100's lowering (an f32 tree per element, "
               "rounded once to f16: hw/warp_mma_sm90.py, H100 runs of 2026-11-28 05:05 UTC)"),
    Entry("mma_sync_m8n8k4_f32", SRC, _m884_in(M884_F32), _m884_run(M884_F32), _m884_ref(M884_F32),
          note="m8n8k4 .f16 with f32 C/D; full range vs the H100's lowering (an fma.rn.f32 chain in k order, "
          "then add.rn C: hw/warp_mma_sm90.py, fitted to the 2026-11-28 run, seed 20261127)"),
    Entry("mma_sync_m8n8k4_rounding", SRC, _m884_rounding_in, _m884_run([(0, 1, 0)]), _m884_rounding_ref,
          note="m8n8k4 f16 C / D on double-rounding cases (the f32 tree + F2FP of the SASS; the one-window rule "
               "missed 232 of 512 words: the H100 followed the tree on 3 seeds, 2026-11-28 05:05 UTC); problems 4-7 "
               "tell the SASS's pair order from every other f32 tree (PROBE: not yet run on the H100)"),
    Entry("mma_sync_m8n8k4_mixed", SRC, _m884_mixed_in, _m884_mixed_run, _m884_mixed_ref,
          note="m8n8k4 .row.col.f32.f16.f16.f16 (f16 C): the f32 lowering after widening C exactly (its SASS: "
               "HADD2.F32, FFMA chain, FADD); bit-exact on the H100, 3 seeds, 2026-11-28 05:05 UTC"),
    Entry("ldmatrix_stmatrix", SRC, _ld_in, _ld_run, _ld_ref,
          note="ldmatrix/stmatrix .m8n8 x1/x2/x4 {.trans} .b16, movmatrix; permuted row addresses"),
]
