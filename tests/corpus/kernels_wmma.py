"""Corpus entries for WMMA (tests/kernels/wmma.cu: inline-PTX wmma.load / wmma.mma / wmma.store, no <mma.h>, whose
crt/mma.h the H100 host's NVRTC 13.0 lacked on 2026-11-28): a small WMMA GEMM per type / shape / layout (load -> mma
-> store only), mixed C / D types, and the fragment-layout probe.

``wmma_gemm``: each kernel runs twice: *exact* (small dyadic values, every summation order agrees: checks loads,
stores, strides and the k steps bit for bit against numpy) and *full* (random codes with NaN / Inf / subnormals; C
random): on the emulator against its WMMA arithmetic (ptxlab/emu/hw/wmma.py ``mma``: the mma.sync rules for the
instructions ptxas lowers wmma.mma to), on the H100 that hypothesis is what the comparison tests
(ptx_docs/isa_coverage_notes.md "WMMA").

``wmma_mixed``: wmma.mma with C and D of different types (the conversions ptxas emits).

``wmma_layout``: loads matrices whose elements are their own indices and records every fragment element of every
lane; compared bit for bit with the H100's words of 2026-11-28 (the layout the PTX ISA leaves unspecified, which the
emulator now models: ptxlab/emu/hw/wmma.py ``measured``).
"""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np

from corpus import Entry, out_buf
from corpus.kernels_mma import _codes, _exact_vals, _f32_full, _f64_qnan

SRC = "wmma.cu"
LD = 64
# kernel, A/B type, C/D type, (M, N, K), A layout, B layout
GEMM = [("wmma_f16_f32_m16n16k16_rc", "f16", "f32", (16, 16, 16), "row", "col"),
        ("wmma_f16_f32_m16n16k16_cr", "f16", "f32", (16, 16, 16), "col", "row"),
        ("wmma_f16_f16_m16n16k16_rc", "f16", "f16", (16, 16, 16), "row", "col"),
        ("wmma_f16_f32_m32n8k16_rc", "f16", "f32", (32, 8, 16), "row", "col"),
        ("wmma_f16_f16_m8n32k16_rr", "f16", "f16", (8, 32, 16), "row", "row"),
        ("wmma_bf16_f32_m16n16k16_rc", "bf16", "f32", (16, 16, 16), "row", "col"),
        ("wmma_bf16_f32_m32n8k16_cc", "bf16", "f32", (32, 8, 16), "col", "col"),
        ("wmma_tf32_f32_m16n16k8_rc", "tf32", "f32", (16, 16, 8), "row", "col"),
        ("wmma_s8_s32_m16n16k16_rc", "s8", "s32", (16, 16, 16), "row", "col"),
        ("wmma_u8_s32_m8n32k16_rc", "u8", "s32", (8, 32, 16), "row", "col"),
        ("wmma_f64_f64_m8n8k4_rc", "f64", "f64", (8, 8, 4), "row", "col")]
MODES = ("exact", "full")
NP = {"f16": np.uint16, "bf16": np.uint16, "tf32": np.uint32, "f32": np.uint32, "s32": np.uint32, "s8": np.uint8,
      "u8": np.uint8, "f64": np.uint64}


def _vals(rng, shape, t, mode, small=1):
    """Element codes of type t (exact regime: dyadic values every order sums exactly; full: random codes)."""
    if t in ("s8", "u8"):
        return rng.integers(0, 256, shape).astype(np.uint8)
    if t == "s32":
        lim = 1 << (12 if mode == "exact" else 31)
        return rng.integers(-lim, lim, shape).astype(np.int32).view(np.uint32)
    if t == "f64":
        return _exact_vals(rng, shape, small).view(np.uint64) if mode == "exact" else _f64_qnan(rng, shape)
    if mode == "exact":
        v = _exact_vals(rng, shape, small)
        if t in ("f32", "tf32"):
            return v.astype(np.float32).view(np.uint32)
        return _codes(v, t).astype(np.uint16)
    if t in ("f32", "tf32"):
        return _f32_full(rng, shape)
    return rng.integers(0, 1 << 16, shape).astype(np.uint16)


def _place(mat, layout, dt):
    """A logical matrix (rows x cols) into a 64 x 64 buffer: .row at r * LD + c, .col at c * LD + r."""
    buf = np.zeros((LD, LD), dt)
    r, c = mat.shape
    if layout == "row":
        buf[:r, :c] = mat
    else:
        buf[:c, :r] = mat.T
    return buf


def _gemm_in(rng):
    ins = {}
    for name, at, ct, (M, N, K), la, lb in GEMM:
        for mode in MODES:
            a = _vals(rng, (2 * M, 2 * K), at, mode)
            b = _vals(rng, (2 * K, 2 * N), at, mode)
            c = _vals(rng, (2 * M, 2 * N), ct, mode, small=4)
            key = f"{name}_{mode}"
            ins[f"{key}_a"], ins[f"{key}_b"], ins[f"{key}_c"] = a, b, c
    return ins


def _gemm_run(dev, mod, ins):
    out = {}
    for name, at, ct, (M, N, K), la, lb in GEMM:
        for mode in MODES:
            key = f"{name}_{mode}"
            a = _place(ins[f"{key}_a"], la, NP[at])
            b = _place(ins[f"{key}_b"], lb, NP[at])          # B is K x N: "row" = (k, n) at k * LD + n
            c = _place(ins[f"{key}_c"], "row", NP[ct])
            d = out_buf(dev, c.nbytes)
            dev.launch(mod, name, grid=(1, 1, 1), block=(128, 1, 1),
                       args=[dev.to_device(a), dev.to_device(b), dev.to_device(c), d])
            out[key] = dev.to_host(d, NP[ct]).reshape(LD, LD)[:2 * M, :2 * N].copy()
    return out


def _value(codes, t):
    if t == "f64":
        return codes.view(np.float64)
    if t in ("f32", "tf32"):
        return codes.view(np.float32).astype(np.float64)
    if t in ("s8", "u8", "s32"):
        return codes.view({"s8": np.int8, "u8": np.uint8, "s32": np.int32}[t]).astype(np.int64)
    return codes.view(np.float16 if t == "f16" else ml_dtypes.bfloat16).astype(np.float64)


def _encode(d, t):
    if t == "f64":
        return d.astype(np.float64).view(np.uint64)
    if t == "f32":
        return d.astype(np.float32).view(np.uint32)
    if t == "s32":
        return (d & 0xFFFFFFFF).astype(np.uint32)
    return d.astype(np.float16).view(np.uint16)


def _model(a, b, c, at, ct):
    """The emulator's arithmetic for one M x N x K step (codes in, codes out; ptxlab/emu/hw/wmma.py)."""
    from ptxlab.emu.hw.wmma import mma
    if at == "f64":
        return mma(a, b, c, at, at, ct, ct)
    return mma(a.astype(np.uint32), b.astype(np.uint32), c.astype(np.uint32), at, at, ct, ct).astype(NP[ct])


def _gemm_ref(ins):
    out = {}
    for name, at, ct, (M, N, K), la, lb in GEMM:
        key = f"{name}_exact"
        a, b, c = (ins[f"{key}_{x}"] for x in "abc")
        out[key] = _encode(_value(a, at) @ _value(b, at) + _value(c, ct), ct)
        key = f"{name}_full"
        a, b, c = (ins[f"{key}_{x}"] for x in "abc")
        d = c.copy()
        for tm in range(2):
            for tn in range(2):
                rows, cols = slice(tm * M, tm * M + M), slice(tn * N, tn * N + N)
                acc = c[rows, cols]
                for kk in range(2):
                    ks = slice(kk * K, kk * K + K)
                    acc = _model(a[rows, ks], b[ks, cols], acc, at, ct)
                d[rows, cols] = acc
        out[key] = d
    return out


# ------------------------------------------------------------------------------------------------ layout probe
LAYOUT = ([(f"lay_{m}_{lay}_{t}_{s}", t, m, s, lay) for t, shapes in
           (("f16", ("m16n16k16", "m32n8k16", "m8n32k16")), ("bf16", ("m16n16k16", "m32n8k16", "m8n32k16")),
            ("tf32", ("m16n16k8",)), ("s8", ("m16n16k16", "m32n8k16", "m8n32k16")), ("f64", ("m8n8k4",)))
           for s in shapes for m in ("a", "b") for lay in ("row", "col")] +
          [(f"lay_c_{t}_{s}", t, "c", s, "row") for t, shapes in
           (("f32", ("m16n16k16", "m32n8k16", "m8n32k16", "m16n16k8")), ("f16", ("m16n16k16", "m32n8k16", "m8n32k16")),
            ("s32", ("m16n16k16", "m32n8k16", "m8n32k16")), ("f64", ("m8n8k4",)))
           for s in shapes])
_SH = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16), "m16n16k8": (16, 16, 8),
       "m8n8k4": (8, 8, 4)}


def _layout_in(rng):
    """Index codes (the probe needs no randomness; rng only orders nothing)."""
    return {"idx": np.arange(LD * LD, dtype=np.uint64)}


def _layout_run(dev, mod, ins):
    out = {}
    for name, t, m, s, lay in LAYOUT:
        M, N, K = _SH[s]
        rows, cols = {"a": (M, K), "b": (K, N), "c": (M, N)}[m]
        idx = np.arange(rows * cols, dtype=np.uint64).reshape(rows, cols)
        lo = _place((idx & 0xFF) if t == "s8" else idx, lay, NP[t])
        hi = _place(idx >> 8, lay, NP[t]) if t == "s8" else None
        words = out_buf(dev, 32 * 64 * 8)
        words_hi = out_buf(dev, 32 * 64 * 8)
        dev.launch(mod, name, grid=(1, 1, 1), block=(32, 1, 1),
                   args=[dev.to_device(lo), dev.to_device(hi) if hi is not None else np.uint64(0), words, words_hi])
        out[name] = dev.to_host(words, np.uint64).reshape(32, 64)
        if hi is not None:
            out[f"{name}_hi"] = dev.to_host(words_hi, np.uint64).reshape(32, 64)
    return out


LAYOUT_DATA = Path(__file__).resolve().parents[1] / "fidelity" / "isa" / "data" / "h100_20261128_wmma_layout.npz"
POISON = np.uint64(0xFFFFFFFFFFFFFFFF)


def _layout_ref(ins):
    """The H100's words (tools/wmma_layout_decode.py decoded them; 0xFF poison past the 32 * n written ones)."""
    maps = np.load(LAYOUT_DATA)
    out = {}
    for name, t, m, s, lay in LAYOUT:
        flat = maps[f"{m}_{t}_{s}"].astype(np.uint64).reshape(-1)
        for key, v in ((name, flat & np.uint64(0xFF) if t == "s8" else flat),
                       (f"{name}_hi", flat >> np.uint64(8) if t == "s8" else None)):
            if v is not None:
                words = np.full(32 * 64, POISON)
                words[:v.size] = v
                out[key] = words.reshape(32, 64)
    return out


STORE = [(f"sto_d_{t}_{s}", t, s) for t in ("f32", "s32", "f16") for s in ("m16n16k16", "m32n8k16", "m8n32k16")]


def _store_code(t, n):
    """The code the store probe puts in fragment element n = lane * 8 + i (as the kernel writes it)."""
    return {"f32": np.arange(n, dtype=np.float32).view(np.uint32), "s32": np.arange(n, dtype=np.uint32),
            "f16": (0x1000 + np.arange(n)).astype(np.uint16)}[t]


def _store_in(rng):
    return {"none": np.zeros(1, np.uint32)}


def _store_run(dev, mod, ins):
    out = {}
    for name, t, s in STORE:
        M, N, _ = _SH[s]
        d = out_buf(dev, LD * LD * np.dtype(NP[t]).itemsize)
        dev.launch(mod, name, grid=(1, 1, 1), block=(32, 1, 1), args=[d])
        out[name] = dev.to_host(d, NP[t]).reshape(LD, LD)[:M, :N].copy()
    return out


def _store_ref(ins):
    """The D store as the inverse of the measured C load (what the H100 does: entry note)."""
    maps = np.load(LAYOUT_DATA)
    out = {}
    for name, t, s in STORE:
        M, N, _ = _SH[s]
        flat = maps[f"c_{t}_{s}"].astype(np.int64).reshape(-1)          # (lane, i) -> element index of C
        d = np.zeros(M * N, NP[t])
        d[flat] = _store_code(t, flat.size)
        out[name] = d.reshape(M, N)
    return out


MIXED = [("wmma_mixed_d16_c32", "f16", "f32"), ("wmma_mixed_d32_c16", "f32", "f16")]      # kernel, D type, C type


def _finite_f16(rng, shape):
    """Random finite f16 codes (every exponent, subnormals; no Inf / NaN: a NaN f16 D is refused, its code unknown)."""
    x = rng.integers(0, 1 << 16, shape).astype(np.uint16)
    return np.where((x & 0x7C00) == 0x7C00, x & 0x83FF, x).astype(np.uint16)


def _mixed_in(rng):
    ins = {}
    for name, dt, ct in MIXED:
        for mode in MODES:
            key = f"{name}_{mode}"
            if mode == "exact":
                ins[f"{key}_a"], ins[f"{key}_b"] = (_vals(rng, (16, 16), "f16", mode) for _ in range(2))
                ins[f"{key}_c"] = _vals(rng, (16, 16), ct, mode, small=4)
            else:
                ins[f"{key}_a"], ins[f"{key}_b"] = (_finite_f16(rng, (16, 16)) for _ in range(2))
                ins[f"{key}_c"] = (_finite_f16(rng, (16, 16)) if ct == "f16" else
                                   (rng.standard_normal((16, 16)) * 64).astype(np.float32).view(np.uint32))
    return ins


def _mixed_ref(ins):
    from ptxlab.emu.hw.wmma import mma
    out = {}
    for name, dt, ct in MIXED:
        key = f"{name}_exact"
        a, b, c = (ins[f"{key}_{x}"] for x in "abc")
        out[key] = _encode(_value(a, "f16") @ _value(b, "f16") + _value(c, ct), dt)
        key = f"{name}_full"
        a, b, c = (ins[f"{key}_{x}"].astype(np.uint32) for x in "abc")
        out[key] = mma(a, b, c, "f16", "f16", dt, ct).astype(NP[dt])
    return out


def _mixed_run(dev, mod, ins):
    out = {}
    for name, dt, ct in MIXED:
        for mode in MODES:
            key = f"{name}_{mode}"
            a, b = _place(ins[f"{key}_a"], "row", np.uint16), _place(ins[f"{key}_b"], "col", np.uint16)
            c = _place(ins[f"{key}_c"], "row", NP[ct])
            d = out_buf(dev, LD * LD * np.dtype(NP[dt]).itemsize)
            dev.launch(mod, name, grid=(1, 1, 1), block=(32, 1, 1),
                       args=[dev.to_device(a), dev.to_device(b), dev.to_device(c), d])
            out[key] = dev.to_host(d, NP[dt]).reshape(LD, LD)[:16, :16].copy()
    return out


NOTE = ("WMMA GEMM (2x2 warps, two k steps, load -> mma -> store): exact regime vs numpy, full range vs the "
        "emulator's WMMA arithmetic (UNCONFIRMED on the H100)")
ENTRIES = [
    Entry("wmma_gemm", SRC, _gemm_in, _gemm_run, _gemm_ref, note=NOTE),
    Entry("wmma_mixed", SRC, _mixed_in, _mixed_run, _mixed_ref,
          note="wmma.mma m16n16k16 with f16 D and f32 C, and f32 D with f16 C (exact; full range without NaN / Inf): "
               "vs the emulator's reading of the SASS (f16 C widened exactly; f32 result rounded to f16 by F2FP), "
               "UNCONFIRMED on the H100"),
    Entry("wmma_store_layout", SRC, _store_in, _store_run, _store_ref,
          note="every lane writes its D fragment elements' own (lane, i) codes and stores .row (f32 / s32 / f16, "
               "m16n16k16 / m32n8k16 / m8n32k16): the D store is the inverse of the measured C load (H100, "
               "2026-11-28, two runs bit-exact; isa_coverage_notes.md 'WMMA')"),
    Entry("wmma_layout", SRC, _layout_in, _layout_run, _layout_ref,
          note="every fragment element of every lane for index-coded matrices (f16 / bf16 / tf32 / s8 / f64 A and B, "
               "row and col; f32 / f16 / s32 / f64 C): vs the H100's layout measured on 2026-11-28 "
               "(tests/fidelity/isa/data/h100_20261128_wmma_layout.npz; isa_coverage_notes.md 'WMMA')"),
]
