"""Where the fields of a hardware CUtensorMap image live (ptxlab/tensormap_hw.py, ptx_docs/tensor_maps.md).

Two modes:

* ``python lab.py exec tools/probes/cute_tmap_probe.py dsl [--out F.json]`` (no GPU): builds TMA atoms with the CuTe
  DSL for a table of shapes, strides, boxes, swizzles and data types, launches a kernel that takes each atom, and
  records the 128-byte parameter the DSL's host code encoded (the driver layer keeps the last launch's parameter
  bytes). Each record is decoded with ``tensormap_hw.decode_hw`` and compared with the inputs.
* ``PYTHONPATH=. python3 tools/probes/cute_tmap_probe.py driver [--out F.json]`` (on a GPU): encodes the same kind of
  maps with the GPU driver's ``cuTensorMapEncodeTiled`` (plus L2-promotion / OOB-fill / element-stride variants the
  DSL never sets), decodes each with ``decode_hw`` and reports, per case, whether the decode matches the inputs or
  which bits it refuses -- the check of the DSL-derived layout against the driver.

(No ``from __future__ import annotations`` here: the DSL evaluates the kernel's annotations.)
Prints one line per case and a summary; exit 0 when every case decodes to its inputs (``driver`` mode counts refusals
of the variants separately: they show which bits those options use).
"""
import argparse
import json
import sys

import numpy as np

CASES = [   # (numpy dtype name, rows, cols, leading dim in elements, box rows, box cols, swizzle bits 0..3)
    ("float16", 128, 64, 64, 64, 64, 3), ("float16", 256, 64, 64, 64, 64, 3), ("float16", 128, 128, 128, 64, 64, 3),
    ("float16", 128, 64, 96, 64, 64, 3), ("float16", 128, 64, 64, 32, 64, 3), ("float16", 128, 64, 64, 64, 32, 2),
    ("float16", 128, 64, 64, 64, 16, 1), ("float16", 128, 64, 64, 64, 8, 0), ("float32", 128, 64, 64, 64, 32, 3),
    ("uint8", 128, 128, 128, 64, 128, 3), ("bfloat16", 128, 64, 64, 64, 64, 3), ("float16", 100, 40, 64, 64, 64, 3),
    ("float16", 1000, 2000, 2048, 128, 64, 3), ("float16", 2, 64, 1 << 19, 64, 64, 3),
]
_SWZ = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
_TMA = {"float16": "FLOAT16", "float32": "FLOAT32", "uint8": "UINT8", "bfloat16": "BFLOAT16"}


def _expect(case, addr):
    dt, m, k, ld, bm, bk, sw = case
    size = np.dtype("uint16" if dt == "bfloat16" else dt).itemsize
    return dict(dtype=_TMA[dt], global_address=addr, global_shape=[k, m], global_strides=[ld * size], box=[bk, bm],
                swizzle=_SWZ[sw])


def _compare(spec, want) -> list:
    got = dict(dtype=spec.dtype, global_address=spec.global_address, global_shape=list(spec.global_shape),
               global_strides=list(spec.global_strides), box=list(spec.box), swizzle=spec.swizzle)
    return [f"{k}: {got[k]} != {want[k]}" for k in want if got[k] != want[k]]


def dsl_mode() -> list:
    import cutlass
    import cutlass.cute as cute
    import ml_dtypes
    from cutlass.cute.nvgpu import cpasync
    from cutlass.cute.runtime import from_dlpack

    import ptxlab.driver as pd
    from ptxlab.tensormap_hw import decode_hw

    @cute.kernel
    def k(atom: cute.CopyAtom, t: cute.Tensor):
        cpasync.prefetch_descriptor(atom)

    @cute.jit
    def host(a: cute.Tensor, bm: cutlass.Constexpr, bk: cutlass.Constexpr, sw: cutlass.Constexpr):
        lay = cute.make_layout((bm, bk), stride=(bk, 1))
        if cutlass.const_expr(sw > 0):
            lay = cute.make_composed_layout(cute.make_swizzle(sw, 4, 3), 0, lay)
        atom, t = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, lay, (bm, bk))
        k(atom, t).launch(grid=(1, 1, 1), block=(32, 1, 1))

    out = []
    for case in CASES:
        dt, m, kk, ld, bm, bk, sw = case
        npdt = ml_dtypes.bfloat16 if dt == "bfloat16" else np.dtype(dt)
        buf = pd.empty(((m - 1) * ld + kk,), npdt)
        view = pd.EmuTensor(buf.ptr, (m, kk), (ld, 1), npdt, buf.nbytes)
        host(from_dlpack(view, assumed_align=16), bm, bk, sw)
        raw = next(a for a in pd.state().last_launch[1] if len(a) == 128)
        bad = _compare(decode_hw(raw), _expect(case, buf.ptr))
        out.append(dict(case=case, raw=raw[:64].hex(), ok=not bad, diff=bad))
    return out


def driver_mode() -> list:
    import ctypes

    from cuda.bindings import driver as cu

    from ptxlab.errors import TensorMapError
    from ptxlab.tensormap import DTYPE_CODES
    from ptxlab.tensormap_hw import decode_hw

    def ok(r):
        assert r[0] == cu.CUresult.CUDA_SUCCESS, r
        return r[1] if len(r) > 1 else None
    ok(cu.cuInit(0))
    ctx = ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))
    ok(cu.cuCtxSetCurrent(ctx))
    base = int(ok(cu.cuMemAlloc(1 << 30)))
    out = []
    variants = [("plain", 0, 0, 1), ("l2_128B", 2, 0, 1), ("l2_256B", 3, 0, 1), ("oob_nan", 0, 1, 1),
                ("estride_2", 0, 0, 2)]
    for case in CASES:
        dt, m, kk, ld, bm, bk, sw = case
        size = 2 if dt == "bfloat16" else np.dtype(dt).itemsize
        for name, l2, oob, es in variants:
            if name != "plain" and case is not CASES[0]:
                continue
            if oob and dt == "uint8":
                continue
            tmap = cu.cuTensorMapEncodeTiled(
                cu.CUtensorMapDataType(DTYPE_CODES[_TMA[dt]]), 2, base, [cu.cuuint64_t(kk), cu.cuuint64_t(m)],
                [cu.cuuint64_t(ld * size)], [cu.cuuint32_t(bk), cu.cuuint32_t(bm)], [cu.cuuint32_t(1), cu.cuuint32_t(es)],
                cu.CUtensorMapInterleave(0), cu.CUtensorMapSwizzle(sw), cu.CUtensorMapL2promotion(l2),
                cu.CUtensorMapFloatOOBfill(oob))
            raw = ctypes.string_at(ok(tmap).getPtr(), 128)
            try:
                bad = _compare(decode_hw(raw), _expect(case, base))
            except TensorMapError as e:
                bad = [str(e)]
            out.append(dict(case=case, variant=name, raw=raw.hex(), ok=not bad, diff=bad))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("dsl", "driver"))
    ap.add_argument("--out", help="write the records as JSON here")
    args = ap.parse_args(argv)
    recs = dsl_mode() if args.mode == "dsl" else driver_mode()
    for r in recs:
        print(f"{r['case']} {r.get('variant', '')} {'ok' if r['ok'] else 'DIFF ' + '; '.join(r['diff'])}  {r['raw'][:128]}")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(recs, fh, indent=1)
    plain = [r for r in recs if r.get("variant", "plain") == "plain"]
    print(f"{sum(r['ok'] for r in plain)} of {len(plain)} plain cases decode to their inputs"
          + ("" if args.mode == "dsl" else f"; variants: {[(r['variant'], r['ok']) for r in recs if r['variant'] != 'plain']}"))
    return 0 if all(r["ok"] for r in plain) else 1


if __name__ == "__main__":
    sys.exit(main())
