"""Corpus entries for bulk reductions (tests/kernels/bulk_reduce.cu): cp.reduce.async.bulk into global memory for
every op / type the PTX ISA lists (9.7.9.25.4.2 table), into a peer CTA's shared memory (cluster of 2, mbarrier
completion), and cp.reduce.async.bulk.tensor (2D tile) for every op.  Random values (NaN, Inf, subnormals for the
float types); references: numpy / ml_dtypes, written here from the ISA text (f32 add flushes subnormals, f16/bf16
add.noftz keeps them, min/max of halves: the non-NaN operand)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from corpus import Entry, out_buf

SRC = "bulk_reduce.cu"
NBYTES = 512
NP = {"u32": np.uint32, "s32": np.int32, "u64": np.uint64, "s64": np.int64, "f32": np.float32, "f64": np.float64,
      "f16": np.float16, "bf16": ml_dtypes.bfloat16, "b32": np.uint32, "b64": np.uint64}
GLOBAL = [("add", "u32"), ("add", "s32"), ("add", "u64"), ("add", "f32"), ("add", "f64"), ("add", "f16"),
          ("add", "bf16"), ("min", "u32"), ("min", "s32"), ("min", "u64"), ("min", "s64"), ("max", "u32"),
          ("max", "s32"), ("max", "u64"), ("max", "s64"), ("min", "f16"), ("max", "bf16"), ("inc", "u32"),
          ("dec", "u32"), ("and", "b32"), ("or", "b64"), ("xor", "b32")]
CLUSTER = [("add", "u32"), ("add", "s32"), ("add", "u64"), ("min", "u32"), ("max", "s32"), ("inc", "u32"),
           ("dec", "u32"), ("and", "b32"), ("or", "b32"), ("xor", "b32")]
# tensor reductions: one entry each (an illegal one kills the CUDA context: it must not hide the others).  The H100
# raised CUDA_ERROR_ILLEGAL_INSTRUCTION for .or with an INT64 map (2026-11-27; .and with UINT64 ran): the emulator
# refuses .and/.or/.xor on signed maps (ops/bulk_reduce.py); the other bitwise rows find out which maps the hardware
# takes (ptx_docs/isa_coverage_notes.md).
TENSOR = [("add", "FLOAT32", "f32"), ("min", "INT32", "s32"), ("max", "UINT32", "u32"), ("inc", "UINT32", "u32"),
          ("dec", "UINT32", "u32"), ("and", "UINT64", "u64"), ("or", "INT64", "s64"), ("xor", "UINT32", "u32"),
          ("or", "UINT64", "u64"), ("or", "UINT32", "u32"), ("xor", "UINT64", "u64"), ("and", "UINT32", "u32"),
          ("and", "INT64", "s64"), ("xor", "INT32", "s32")]
SIGNED_BITOP = "on a signed tensor map"                 # the emulator's refusal (ops/bulk_reduce.py)
HW_REFUSED = {("or", "INT64"), ("and", "INT64")}                         # CUDA_ERROR_ILLEGAL_INSTRUCTION on the H100, 2026-11-27
TW, TH, BW, BH = 32, 12, 8, 4          # tensor 32 x 12 elements, box 8 x 4 at (8, 4)


def _bits(rng, ty, n):
    size = np.dtype(NP[ty]).itemsize
    raw = rng.integers(0, 256, n * size, dtype=np.uint8)
    if ty in ("inc", "dec"):
        return raw
    if ty in ("f32", "f64", "f16", "bf16"):
        v = rng.standard_normal(n) * np.exp2(rng.integers(-8, 8, n))
        # f64: no -Inf (Inf - Inf would create a NaN, whose bits the emulator refuses to guess for .add.f64)
        sp = [np.nan, np.inf, 0.0, -0.0, 1e-300, -1e-310] if ty == "f64" else \
            [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-42, 3e-8, 1e-300]
        v[:n // 8] = rng.choice(sp, n // 8)
        return v.astype(NP[ty]).view(np.uint8)
    return raw


def _in(rng):
    ins = {}
    for op, ty in GLOBAL + [(o, t) for o, t in CLUSTER]:
        n = NBYTES // np.dtype(NP[ty]).itemsize
        src, dst = _bits(rng, ty, n), _bits(rng, ty, n)
        if op in ("inc", "dec"):                     # small values so that wrap-around happens
            src = rng.integers(0, 8, n).astype(np.uint32).view(np.uint8)
            dst = rng.integers(0, 10, n).astype(np.uint32).view(np.uint8)
        ins[f"{op}_{ty}_src"], ins[f"{op}_{ty}_dst"] = src, dst
    return ins


def _in_t(op, ty):
    def make(rng):
        n = BW * BH
        g = _bits(rng, ty, TW * TH)
        s = _bits(rng, ty, n)
        if op in ("inc", "dec"):
            g = rng.integers(0, 10, TW * TH).astype(np.uint32).view(np.uint8)
            s = rng.integers(0, 8, n).astype(np.uint32).view(np.uint8)
        return {f"t_{op}_g": g, f"t_{op}_s": s}
    return make


def _run(dev, mod, ins):
    out = {}
    for op, ty in GLOBAL:
        d = dev.to_device(ins[f"{op}_{ty}_dst"].copy())
        dev.launch(mod, f"red_g_{op}_{ty}", grid=(1, 1, 1), block=(128, 1, 1),
                   args=[dev.to_device(ins[f"{op}_{ty}_src"]), d, np.uint32(NBYTES)])
        out[f"g_{op}_{ty}"] = dev.to_host(d, np.uint8)
    for op, ty in CLUSTER:
        o = out_buf(dev, NBYTES)
        dev.launch(mod, f"red_c_{op}_{ty}", grid=(2, 1, 1), block=(128, 1, 1),
                   args=[dev.to_device(ins[f"{op}_{ty}_src"]), dev.to_device(ins[f"{op}_{ty}_dst"]), o,
                         np.uint32(NBYTES)], cluster=(2, 1, 1))
        out[f"c_{op}_{ty}"] = dev.to_host(o, np.uint8)
    return out


def _run_t(op, dt, ty):
    def run(dev, mod, ins):
        es = np.dtype(NP[ty]).itemsize
        g = dev.to_device(ins[f"t_{op}_g"].copy())
        tm = dev.tensor_map(g, dtype=dt, global_shape=[TW, TH], global_strides=[TW * es], box=[BW, BH])
        dev.launch(mod, f"red_t_{op}", grid=(1, 1, 1), block=(128, 1, 1),
                   args=[tm, dev.to_device(ins[f"t_{op}_s"]), np.uint32(BW * BH * es), np.int32(8), np.int32(4)])
        return {f"t_{op}": dev.to_host(g, np.uint8)}
    return run


def reduce_ref(op, ty, cur_b, src_b):
    """Element-wise reference for one reduction on raw bytes."""
    dt = NP[ty]
    cur, src = cur_b.view(dt).copy(), src_b.view(dt).copy()
    with np.errstate(all="ignore"):
        if op == "add" and ty == "f32":
            r = cur + src                    # no flush: the H100 keeps subnormals (2026-11-27)
            r = np.where(np.isnan(r), np.uint32(0x7FFFFFFF).view(np.float32), r)
        elif op == "add" and ty == "f64":
            r = cur + src                    # NaN operands are 0x7ff8...: the H100 returns 0x7ff8...
            r = np.where(np.isnan(r), np.uint64(0x7FF8000000000000).view(np.float64), r)
        elif op == "add" and ty in ("f16", "bf16"):
            r = (cur.astype(np.float32) + src.astype(np.float32)).astype(dt)
            r = np.where(np.isnan(r), np.uint16(0x7FFF).view(dt), r)
        elif op in ("min", "max") and ty in ("f16", "bf16"):
            a, b = cur.astype(np.float64), src.astype(np.float64)
            f = np.fmin if op == "min" else np.fmax
            r = f(a, b)
            eq = (a == b) & (a == 0)
            r = np.where(eq, np.where(np.signbit(a) == (op == "min"), a, b), r)
            r = np.where(np.isnan(r), np.float64(np.nan), r).astype(dt)
            r = np.where(np.isnan(r.astype(np.float64)), np.uint16(0x7FFF).view(dt), r)
        elif op == "add":
            r = cur + src
        elif op in ("min", "max"):
            r = np.minimum(cur, src) if op == "min" else np.maximum(cur, src)
        elif op == "inc":
            r = np.where(cur >= src, 0, cur + 1).astype(dt)
        elif op == "dec":
            r = np.where((cur == 0) | (cur > src), src, cur - 1).astype(dt)
        elif op == "and":
            r = cur & src
        elif op == "or":
            r = cur | src
        else:
            r = cur ^ src
    return np.asarray(r, dt).view(np.uint8)


def _ref(ins):
    out = {}
    for op, ty in GLOBAL:
        out[f"g_{op}_{ty}"] = reduce_ref(op, ty, ins[f"{op}_{ty}_dst"], ins[f"{op}_{ty}_src"])
    for op, ty in CLUSTER:
        out[f"c_{op}_{ty}"] = reduce_ref(op, ty, ins[f"{op}_{ty}_dst"], ins[f"{op}_{ty}_src"])
    return out


def _ref_t(op, ty):
    def ref(ins):
        es = np.dtype(NP[ty]).itemsize
        g = ins[f"t_{op}_g"].reshape(TH, TW * es).copy()
        box = g[4:4 + BH, 8 * es:(8 + BW) * es]
        g[4:4 + BH, 8 * es:(8 + BW) * es] = reduce_ref(op, ty, np.ascontiguousarray(box).reshape(-1),
                                                       ins[f"t_{op}_s"]).reshape(BH, BW * es)
        return {f"t_{op}": g.reshape(-1)}
    return ref


def _refused_t(op, dt, ty):
    out = {}
    if op in ("and", "or", "xor") and ty.startswith("s") and (op, ty) != ("xor", "s32"):
        out["emu"] = SIGNED_BITOP
    if (op, dt) in HW_REFUSED:
        out["cuda"] = "CUDA_ERROR_ILLEGAL_INSTRUCTION"
    return out


ENTRIES = [
    Entry("bulk_reduce", SRC, _in, _run, _ref,
          note="cp.reduce.async.bulk global (every op/type) and shared::cluster (2-CTA cluster)"),
] + [Entry(f"bulk_reduce_t_{op}_{dt.lower()}", SRC, _in_t(op, ty), _run_t(op, dt, ty), _ref_t(op, ty),
           refused=_refused_t(op, dt, ty), note=f"cp.reduce.async.bulk.tensor 2D tile .{op}, {dt} tensor map")
     for op, dt, ty in TENSOR]
