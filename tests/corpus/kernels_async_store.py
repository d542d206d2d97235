"""Corpus entries for tests/kernels/async_store.cu (sm_90a): st.async for every vector width and type of the PTX ISA
(9.7.9.12), red.async for every op / type (9.7.13.7), both across a 2-CTA cluster with mbarrier complete_tx;
setmaxnreg.inc/dec (9.7.19.5); tensormap.replace of every field (9.7.9.28) in shared memory + tensormap.cp_fenceproxy
(9.7.13.16) and in global memory, checked by loading one box through the rewritten map.  Random values; references
written here from the ISA text (red.async: atom's rules; TMA boxes: element-wise read, zero or NaN fill
(ptxlab.emu.hw.tma.OOB_NAN_BITS, H100-measured), then the PTX 5.5.7 swizzle)."""
from __future__ import annotations

import struct

import numpy as np

from corpus import Entry, out_buf

SRC = "async_store.cu"
NT = 64
# st.async kernels: name -> (numpy dtype, vector width)
STA = {"b32": (np.uint32, 1), "u32": (np.uint32, 1), "s32": (np.int32, 1), "f32": (np.float32, 1),
       "b64": (np.uint64, 1), "u64": (np.uint64, 1), "s64": (np.int64, 1), "f64": (np.float64, 1),
       "v2_b32": (np.uint32, 2), "v2_f32": (np.float32, 2), "v2_b64": (np.uint64, 2), "v2_s64": (np.int64, 2),
       "v2_f64": (np.float64, 2), "v4_b32": (np.uint32, 4), "v4_s32": (np.int32, 4), "v4_f32": (np.float32, 4)}
REDA = {"inc_u32": np.uint32, "dec_u32": np.uint32, "min_u32": np.uint32, "max_u32": np.uint32, "min_s32": np.int32,
        "max_s32": np.int32, "and_b32": np.uint32, "or_b32": np.uint32, "xor_b32": np.uint32, "add_u32": np.uint32,
        "add_s32": np.int32, "add_u64": np.uint64}


def _raw(rng, dt, n):
    """n random values of dt's size as unsigned integers (float bit patterns include NaNs: kept as bits)."""
    return rng.integers(0, 256, n * np.dtype(dt).itemsize, dtype=np.uint8).view(f"u{np.dtype(dt).itemsize}")


# ------------------------------------------------------------------------------------------ st.async / red.async
def _in_async(rng):
    ins = {}
    for name, (dt, vec) in STA.items():
        nbytes = NT * vec * np.dtype(dt).itemsize
        ins[f"sta_{name}_init"] = rng.integers(0, 256, 2 * nbytes, dtype=np.uint8)
        ins[f"sta_{name}_src"] = _raw(rng, dt, 2 * NT * vec)
    for name, dt in REDA.items():
        nbytes = NT * np.dtype(dt).itemsize
        init, src = _raw(rng, dt, 2 * NT), _raw(rng, dt, 2 * NT)
        if name[:3] in ("inc", "dec"):                       # small values so that wrap-around happens
            init = rng.integers(0, 10, 2 * NT).astype(np.uint32)
            src = rng.integers(0, 8, 2 * NT).astype(np.uint32)
        ins[f"reda_{name}_init"], ins[f"reda_{name}_src"] = init.view(np.uint8), src
    ins["maxnreg_src"] = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    return ins


def _run_async(dev, mod, ins):
    out = {}
    for name, (dt, vec) in STA.items():
        nbytes = NT * vec * np.dtype(dt).itemsize
        o = out_buf(dev, 2 * nbytes)
        dev.launch(mod, f"sta_{name}", grid=(2, 1, 1), block=(NT, 1, 1), cluster=(2, 1, 1),
                   args=[dev.to_device(ins[f"sta_{name}_init"]), dev.to_device(ins[f"sta_{name}_src"]), o,
                         np.uint32(nbytes)])
        out[f"sta_{name}"] = dev.to_host(o, np.uint8)
    for name, dt in REDA.items():
        nbytes = NT * np.dtype(dt).itemsize
        o = out_buf(dev, 2 * nbytes)
        dev.launch(mod, f"reda_{name}", grid=(2, 1, 1), block=(NT, 1, 1), cluster=(2, 1, 1),
                   args=[dev.to_device(ins[f"reda_{name}_init"]), dev.to_device(ins[f"reda_{name}_src"]), o,
                         np.uint32(nbytes)])
        out[f"reda_{name}"] = dev.to_host(o, np.uint8)
    o = out_buf(dev, 256 * 4)
    dev.launch(mod, "maxnreg", grid=(1, 1, 1), block=(256, 1, 1), args=[dev.to_device(ins["maxnreg_src"]), o])
    out["maxnreg"] = dev.to_host(o, np.uint32)
    return out


def red_ref(name, cur, src):
    op, dt = name.split("_")[0], REDA[name]
    cur, src = cur.view(dt).copy(), np.asarray(src).view(dt)
    with np.errstate(over="ignore"):
        r = {"add": lambda: cur + src, "min": lambda: np.minimum(cur, src), "max": lambda: np.maximum(cur, src),
             "and": lambda: cur & src, "or": lambda: cur | src, "xor": lambda: cur ^ src,
             "inc": lambda: np.where(cur >= src, 0, cur + 1),
             "dec": lambda: np.where((cur == 0) | (cur > src), src, cur - 1)}[op]()
    return np.asarray(r).astype(dt).view(np.uint8)


def _ref_async(ins):
    out = {}
    for name, (dt, vec) in STA.items():
        src = ins[f"sta_{name}_src"].reshape(2, -1)          # CTA r writes its half into CTA r ^ 1
        out[f"sta_{name}"] = np.concatenate([src[1].view(np.uint8), src[0].view(np.uint8)])
    for name, dt in REDA.items():
        init = ins[f"reda_{name}_init"].reshape(2, -1)
        src = ins[f"reda_{name}_src"].reshape(2, -1)
        out[f"reda_{name}"] = np.concatenate([red_ref(name, init[0], src[1]), red_ref(name, init[1], src[0])])
    t = np.arange(256)
    out["maxnreg"] = (ins["maxnreg_src"].astype(np.uint64) * np.uint64(2654435761)
                      + np.where(t >= 128, 0x9E3779B9, 0x7F4A7C15).astype(np.uint64)).astype(np.uint32)
    return out


# ------------------------------------------------------------------------------------------ tensormap.replace
# (elemtype code (PTX ISA tensormap.replace Table: .elemtype), element bytes, shape W x H, row pitch in bytes, box,
#  coordinates, swizzle code, fill code; the codes are immediates of kernel tmr_*_<case>): every case reaches out of
#  bounds
ELEMTYPE = {7: ("FLOAT32", 4), 6: ("FLOAT16", 2), 0: ("UINT8", 1), 1: ("UINT16", 2)}
SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
CASES = [(7, 40, 20, 192, (16, 8), (32, 16), 2, 1),
         (6, 100, 30, 256, (64, 6), (64, 27), 3, 0),
         (0, 200, 9, 208, (32, 4), (-8, 2), 0, 0),
         # the H100 raised CUDA_ERROR_ILLEGAL_INSTRUCTION in tmr_shared_2 (2026-11-27; cases 0 and 1 ran, in
         # shared::cta and global): cases 3-5 change one thing of case 2 each (x >= 0, 32B swizzle, UINT16)
         (0, 200, 9, 208, (32, 4), (8, 2), 0, 0),
         (0, 200, 9, 208, (32, 4), (-8, 2), 1, 0),
         (1, 100, 9, 208, (16, 4), (-8, 2), 0, 0)]
NAN = {"FLOAT32": 0x7FF77FF7, "FLOAT16": 0x7FF7}      # ptxlab.emu.hw.tma.OOB_NAN_BITS (H100-measured)


def _swz(mode: str, a: int) -> int:
    """PTX ISA 5.5.7: 16-byte chunk c of 128-byte line L -> c ^ (L & m)."""
    if mode == "none":
        return a
    m = {"32B": 1, "64B": 3, "128B": 7}[mode]
    line, off = a >> 7, a & 127
    return (line << 7) | (((off >> 4) ^ (line & m)) << 4) | (off & 15)


def box_ref(g: np.ndarray, case) -> np.ndarray:
    code, w, h, pitch, box, (x0, y0), swz, fill = case
    _, es = ELEMTYPE[code]
    fillb = (np.array([NAN[ELEMTYPE[code][0]]], np.uint32 if es == 4 else np.uint16).view(np.uint8) if fill
             else np.zeros(es, np.uint8))
    dense = np.zeros(box[0] * box[1] * es, np.uint8)
    for r in range(box[1]):
        for c in range(box[0]):
            y, x = y0 + r, x0 + c
            o = (r * box[0] + c) * es
            dense[o:o + es] = g[y * pitch + x * es:y * pitch + (x + 1) * es] if 0 <= x < w and 0 <= y < h else fillb
    out = np.zeros_like(dense)
    for o in range(dense.size):
        out[_swz(SWIZZLE[swz], o)] = dense[o]
    return out


def _in_tmr(i):
    def make(rng):
        c = CASES[i]
        return {f"tmr_g{i}": rng.integers(0, 256, c[2] * c[3], dtype=np.uint8)}
    return make


def _run_tmr(kind, i):
    """Kernel tmr_<kind>_<i> alone (one entry each: an illegal one kills the CUDA context)."""
    def run(dev, mod, ins):
        dummy = dev.empty(64 * 16 * 2)
        orig = dev.tensor_map(dummy, "UINT16", [64, 16, 1], [128, 2048], [8, 8, 1], element_strides=[1, 2, 1],
                              swizzle="32B")
        code, w, h, pitch, box, (x, y), swz, fill = CASES[i]
        g = dev.to_device(ins[f"tmr_g{i}"])
        nbytes = box[0] * box[1] * ELEMTYPE[code][1]
        repl = struct.pack("<QQ9I4x", g.ptr, pitch, w, h, box[0], box[1], 1, 1, x & 0xFFFFFFFF, y & 0xFFFFFFFF,
                           nbytes)
        gmap = dev.to_device(np.frombuffer(orig.raw, np.uint8))
        o = out_buf(dev, nbytes)
        args = ([orig, gmap] if kind == "shared" else [gmap]) + [dev.to_device(np.frombuffer(repl, np.uint8)), o]
        dev.launch(mod, f"tmr_{kind}_{i}", grid=(1, 1, 1), block=(128, 1, 1), args=args)
        return {f"tmr_{kind}_{i}": dev.to_host(o, np.uint8)}
    return run


def _ref_tmr(kind, i):
    def ref(ins):
        return {f"tmr_{kind}_{i}": box_ref(ins[f"tmr_g{i}"], CASES[i])}
    return ref


ENTRIES = [
    Entry("async_store", SRC, _in_async, _run_async, _ref_async,
          note="st.async every vector/type, red.async every op/type (2-CTA cluster, mbarrier complete_tx), "
               "setmaxnreg.inc/dec"),
]
def _tmr_note(kind: str, i: int) -> str:
    code, w, h, pitch, box, xy, swz, fill = CASES[i]
    where = "shared::cta (+ tensormap.cp_fenceproxy)" if kind == "shared" else "global memory"
    return (f"tensormap.replace of every field in {where}, case {i}: {ELEMTYPE[code][0]}, swizzle {SWIZZLE[swz]}, "
            f"box at {xy}; one TMA box load through the rewritten map (OOB zero / NaN fill)")


def _tmr_refused(i: int) -> dict:
    """UINT8 maps (cases 2-4): the H100 raised CUDA_ERROR_ILLEGAL_INSTRUCTION (2026-11-27), the emulator refuses."""
    if ELEMTYPE[CASES[i][0]][0] != "UINT8":
        return {}
    return {"cuda": "CUDA_ERROR_ILLEGAL_INSTRUCTION", "emu": "with .elemtype 0 (.u8)"}


TMR_ENTRIES = [Entry(f"tensormap_replace_{kind}_{i}", SRC, _in_tmr(i), _run_tmr(kind, i), _ref_tmr(kind, i),
                     refused=_tmr_refused(i), note=_tmr_note(kind, i))
               for i in range(len(CASES)) for kind in ("shared", "global")]
ENTRIES += TMR_ENTRIES
